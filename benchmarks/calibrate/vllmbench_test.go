package calibrate

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

func readBench(t *testing.T, name string) *VLLMBench {
	t.Helper()
	f, err := os.Open("testdata/vllm-bench/" + name)
	require.NoError(t, err)
	defer f.Close()
	b, err := ParseVLLMBench(name, f)
	require.NoError(t, err)
	return b
}

// blisEngine is the engine of BLIS's measured runs: Llama-3.1-8B on one
// H100, 2,048 tokens a step, 4,096 a request, 7,463 KV blocks.
func blisEngine(t *testing.T) serving.LLMConfig {
	roof, ok := serving.RooflineFor("H100-80GB")
	require.True(t, ok)
	return serving.LLMConfig{Engine: serving.Engine{Model: serving.Llama3_8B(), GPU: roof, TP: 1}, MaxNumBatchedTokens: 2048, MaxModelLen: 4096, KVBlocks: 7463}
}

// The workloads as BLIS's dataset states them (PROVENANCE.md).
var (
	longIn   = &serving.TokenDist{Kind: serving.Normal, Mean: 2048, StdDev: 1974, Min: 2, Max: 3500}
	longOut  = &serving.TokenDist{Kind: serving.Normal, Mean: 28, StdDev: 60, Min: 6, Max: 200}
	chatIn   = &serving.TokenDist{Kind: serving.Normal, Mean: 284 + 70, StdDev: 35, Min: 284 + 2, Max: 284 + 200}
	chatOut  = &serving.TokenDist{Kind: serving.Normal, Mean: 215, StdDev: 80, Min: 1, Max: 512}
	chatPref = 284
)

// predict is the exact model's mean TTFT, ITL and E2E over five seeds of
// a benchmark's requests.
func predict(t *testing.T, cfg serving.LLMConfig, b *VLLMBench, in, out *serving.TokenDist, prefix int) (ttft, itl, e2e float64) {
	for seed := uint64(1); seed <= 5; seed++ {
		reqs, _, err := b.Requests(in, out, prefix, seed)
		require.NoError(t, err)
		r, err := serving.SimulateLLM(cfg, reqs)
		require.NoError(t, err)
		ttft += serving.Mean(r.TTFTMs) / 5
		e2e += serving.Mean(r.E2EMs) / 5
		itl += serving.ITLMean(reqs, r) / 5
	}
	return
}

// Against measured vLLM: with the H100's published-peak defaults the
// exact model is pessimistic, 57% on the chat run's TTFT, 35% on its ITL
// and E2E. Calibrated on the long-prompt run (its TTFT fixes the compute
// rate, its ITL the kernel time), it predicts the other run, which it
// never saw, within 10% on mean TTFT, ITL and E2E (BLIS's dataset: PROVENANCE.md).
func TestCalibrationPredictsAMeasuredRunItDidNotSee(t *testing.T) {
	long, chat := readBench(t, "llama-3.1-8b-h100-long-prompts.json"), readBench(t, "llama-3.1-8b-h100-prefix284.json")
	cfg := blisEngine(t)
	dTTFT, dITL, dE2E := predict(t, cfg, chat, chatIn, chatOut, chatPref)
	t.Logf("defaults on the chat run: TTFT %.2f ITL %.3f E2E %.0f ms (measured %.2f %.3f 1491)", dTTFT, dITL, dE2E, chat.MeanTTFTMs, chat.MeanITLMs)
	require.Greater(t, dITL, 1.3*chat.MeanITLMs)
	require.Greater(t, dTTFT, 1.3*chat.MeanTTFTMs)

	reqs, _, err := long.Requests(longIn, longOut, 0, 1)
	require.NoError(t, err)
	fit, err := serving.CalibrateLLM(cfg, reqs, serving.LLMMeasured{TTFTMeanMs: long.MeanTTFTMs, ITLMeanMs: long.MeanITLMs})
	require.NoError(t, err)
	t.Logf("fitted on the long-prompt run: %.4g TFLOPS, %.4g us a kernel, %.5g GB/s", fit.Roofline.TFLOPS, fit.Roofline.KernelUS, fit.Roofline.GBps)
	cal := cfg
	cal.Engine.GPU = fit.Roofline
	ttft, itl, e2e := predict(t, cal, chat, chatIn, chatOut, chatPref)
	t.Logf("calibrated on the chat run: TTFT %.2f ITL %.3f E2E %.0f ms (measured %.2f %.3f 1491)", ttft, itl, e2e, chat.MeanTTFTMs, chat.MeanITLMs)
	require.InEpsilon(t, chat.MeanTTFTMs, ttft, 0.10)
	require.InEpsilon(t, chat.MeanITLMs, itl, 0.10)
	require.InEpsilon(t, 1491.0742633333334, e2e, 0.10) // mean_e2el_ms of the file
}

func TestParseVLLMBench(t *testing.T) {
	b := readBench(t, "llama-3.1-8b-h100-long-prompts.json")
	require.Equal(t, 10.0, b.RequestRate)
	require.Equal(t, 300, b.Completed)
	require.EqualValues(t, 545758, b.TotalInput)
	require.Nil(t, b.InputLens)
	// Without lengths or distributions: the mean lengths, said.
	reqs, notes, err := b.Requests(nil, nil, 0, 1)
	require.NoError(t, err)
	require.Len(t, reqs, 300)
	require.Equal(t, 1819, reqs[0].Input) // 545,758 / 300
	require.Contains(t, notes[0], "of the mean lengths, 1819 prompt and 43 output tokens")
	// Poisson at 10 a second: 300 arrivals over about 30 s.
	require.InDelta(t, 30000, reqs[299].ArrivalMs, 5000)

	for _, c := range []struct{ body, want string }{
		{`{"completed": 3}`, "f.json: request_rate: missing"},
		{`{"request_rate": -1}`, `f.json:1: request_rate: "-1" is not a positive rate or "inf"`},
		{`{"request_rate": "inf", "completed": 0, "total_input_tokens": 1, "total_output_tokens": 1, "mean_ttft_ms": 1, "mean_itl_ms": 1}`, "completed: 0: no request completed"},
		{"{\"request_rate\": 2,\n \"completed\": 2, \"total_input_tokens\": 10, \"total_output_tokens\": 10,\n \"mean_ttft_ms\": \"x\", \"mean_itl_ms\": 1}", `f.json:3: mean_ttft_ms: "\"x\"" is not a number`},
		{`{"request_rate": 2, "completed": 2, "total_input_tokens": 10, "total_output_tokens": 10, "mean_ttft_ms": 5, "mean_itl_ms": 1, "input_lens": [5, 5], "output_lens": [5]}`, "output_lens: 1 lengths beside 2 input_lens"},
		{`[1, 2]`, "not a vLLM benchmark result (JSON object)"},
	} {
		_, err := ParseVLLMBench("f.json", strings.NewReader(c.body))
		require.ErrorContains(t, err, c.want)
	}
	// "inf": every request at once; a closed loop is refused.
	b, err = ParseVLLMBench("f.json", strings.NewReader(`{"request_rate": "inf", "completed": 2, "total_input_tokens": 10, "total_output_tokens": 10, "mean_ttft_ms": 5, "mean_itl_ms": 1, "input_lens": [4, 6, 9], "output_lens": [5, 5, 0]}`))
	require.NoError(t, err)
	require.True(t, math.IsInf(b.RequestRate, 1))
	reqs, _, err = b.Requests(nil, nil, 0, 1)
	require.NoError(t, err)
	require.Equal(t, []serving.LLMRequest{{Input: 4, Output: 5}, {Input: 6, Output: 5}}, reqs)
	b.MaxConcurrency = 8
	_, _, err = b.Requests(nil, nil, 0, 1)
	require.ErrorContains(t, err, "max_concurrency 8: a closed loop")
}

// Gamma gaps of shape k have mean 1/rate and coefficient of variation
// 1/sqrt(k) (vLLM's burstiness).
func TestGammaGaps(t *testing.T) {
	for _, k := range []float64{0.5, 1, 4} {
		b := &VLLMBench{RequestRate: 5, Burstiness: k, Completed: 20000, TotalInput: 20000, TotalOutput: 20000}
		reqs, _, err := b.Requests(nil, nil, 0, 3)
		require.NoError(t, err)
		var s, s2 float64
		prev := 0.0
		for _, r := range reqs {
			g := r.ArrivalMs - prev
			prev = r.ArrivalMs
			s += g
			s2 += g * g
		}
		n := float64(len(reqs))
		mean := s / n
		cv := math.Sqrt(s2/n-mean*mean) / mean
		require.InEpsilon(t, 200, mean, 0.03, "k %g", k)
		require.InEpsilon(t, 1/math.Sqrt(k), cv, 0.04, "k %g", k)
	}
}

func FuzzParseVLLMBench(f *testing.F) {
	for _, n := range []string{"llama-3.1-8b-h100-long-prompts.json", "llama-3.1-8b-h100-prefix284.json"} {
		b, _ := os.ReadFile("testdata/vllm-bench/" + n)
		f.Add(b)
	}
	f.Add([]byte(`{"request_rate": "inf", "completed": 2, "total_input_tokens": 10, "total_output_tokens": 10, "mean_ttft_ms": 5, "mean_itl_ms": 1, "input_lens": [4, 6], "output_lens": [5, 5]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseVLLMBench("f.json", strings.NewReader(string(data)))
		if err != nil {
			return
		}
		if !(b.RequestRate > 0) || b.Completed < 1 || !(b.MeanTTFTMs > 0) || !(b.MeanITLMs > 0) {
			t.Fatalf("accepted %+v", b)
		}
	})
}
