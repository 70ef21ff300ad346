package serving

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

type blisCase struct {
	Name     string  `json:"name"`
	Model    string  `json:"model"`
	TP       int     `json:"tp"`
	Rate     float64 `json:"rate"`
	KVBlocks int64   `json:"kv_blocks"`
	Requests int     `json:"requests"`
	Trace    string  `json:"trace"`
	// BLIS's figures.
	TTFTMean    float64 `json:"ttft_mean_ms"`
	TTFTP95     float64 `json:"ttft_p95_ms"`
	TPOTMean    float64 `json:"tpot_mean_ms"`
	TPOTP95     float64 `json:"tpot_p95_ms"`
	Preemptions int     `json:"preemptions"`
	// BLIS's figures with its default latency model, trained-physics.
	Trained blisFigures `json:"trained_physics"`
}

type blisFigures struct {
	TTFTMean    float64 `json:"ttft_mean_ms"`
	TTFTP95     float64 `json:"ttft_p95_ms"`
	TPOTMean    float64 `json:"tpot_mean_ms"`
	TPOTP95     float64 `json:"tpot_p95_ms"`
	Preemptions int     `json:"preemptions"`
}

func readBLIS(t *testing.T) []blisCase {
	data, err := os.ReadFile("testdata/blis/blis-h100.json")
	require.NoError(t, err)
	var doc struct {
		Cases []blisCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Cases, 6)
	return doc.Cases
}

func readTrace(t *testing.T, name string) []LLMRequest {
	f, err := os.Open(filepath.Join("testdata/blis", name))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"arrival_us", "input_tokens", "output_tokens"}, rows[0])
	var out []LLMRequest
	for _, r := range rows[1:] {
		a, err1 := strconv.ParseFloat(r[0], 64)
		in, err2 := strconv.Atoi(r[1])
		o, err3 := strconv.Atoi(r[2])
		require.NoError(t, err1)
		require.NoError(t, err2)
		require.NoError(t, err3)
		out = append(out, LLMRequest{ArrivalMs: a / 1e3, Input: in, Output: o})
	}
	return out
}

// blisH100 is BLIS's H100 as its hardware_config.json gives it: 989.5
// TFLOP/s peak at a model FLOPs utilisation of 0.45 for prefill and
// 0.30 for decode, 3.35 TB/s, no kernel time.
func blisH100() Roofline {
	return Roofline{Name: "H100 (BLIS)", TFLOPS: 989.5 * 0.45, DecodeTFLOPS: 989.5 * 0.30, GBps: 3350, MemoryGiB: 80}
}

// blisShape is a Llama model as BLIS's roofline counts it: two MLP
// matrices of hidden x intermediate (its mlpMatrixCount), where Llama's
// gated MLP has three (gate, up, down). A gated MLP two thirds as wide
// has BLIS's count of weights and FLOPs.
func blisShape(m Transformer) Transformer {
	m.Intermediate = (2*m.Intermediate + 1) / 3
	return m
}

// The side-by-side with BLIS (testdata/blis/PROVENANCE.md): Llama-3-8B on
// one H100 at 8, 30 and 50 requests a second and Llama-3-70B on four
// (TP4) at 3, 9 and 16, the same 500 requests each. Configured with
// BLIS's assumptions (its H100 figures and MFUs, its single-crossover
// step roofline, its count of the MLP's weights, no all-reduce time),
// gpuplan's engine is within 10% of BLIS on mean and p95 TTFT and TPOT
// (it is within 2%: the two schedulers agree step for step).
//
// gpuplan's own step model disagrees by design, and the log shows by how
// much: it prices each kernel (a fixed 24 us, and the larger of bytes and
// FLOPs per kernel, not per step), reads all three MLP matrices and the
// output head (Llama-3-8B's decode step reads 15.0 GB, BLIS counts 10.2
// GB), and takes the H200-measured efficiencies (0.917 of the published
// bandwidth) rather than BLIS's MFUs.
func TestLLMAgainstBLIS(t *testing.T) {
	for _, c := range readBLIS(t) {
		reqs := readTrace(t, c.Trace)
		require.Len(t, reqs, c.Requests, c.Name)
		model := Llama3_8B()
		if c.Model == "llama-3.1-70b" {
			model = Llama3_70B()
		}
		cfg := LLMConfig{Engine: Engine{Model: blisShape(model), GPU: blisH100(), TP: c.TP, StepModel: WholeStep},
			MaxNumBatchedTokens: 2048, MaxNumSeqs: 256, KVBlocks: c.KVBlocks}
		r, err := SimulateLLM(cfg, reqs)
		require.NoError(t, err, c.Name)
		require.Equal(t, c.Preemptions, r.Preemptions, c.Name)
		got := [4]float64{Mean(r.TTFTMs), InterpQuantile(r.TTFTMs, 0.95), Mean(r.TPOTMs), InterpQuantile(r.TPOTMs, 0.95)}
		want := [4]float64{c.TTFTMean, c.TTFTP95, c.TPOTMean, c.TPOTP95}
		for i, what := range []string{"mean TTFT", "p95 TTFT", "mean TPOT", "p95 TPOT"} {
			require.InEpsilon(t, want[i], got[i], 0.10, "%s %s: gpuplan %.2f ms, BLIS %.2f ms", c.Name, what, got[i], want[i])
		}
		def := LLMConfig{Engine: Engine{Model: model, GPU: h100(t), TP: c.TP}, MaxNumBatchedTokens: 2048, MaxNumSeqs: 256, KVBlocks: c.KVBlocks}
		d, err := SimulateLLM(def, reqs)
		require.NoError(t, err, c.Name)
		t.Logf("%-7s BLIS TTFT %7.2f / p95 %7.2f  TPOT %6.2f / p95 %6.2f | as BLIS %7.2f / %7.2f  %6.2f / %6.2f | gpuplan's own %7.2f / %7.2f  %6.2f / %6.2f",
			c.Name, want[0], want[1], want[2], want[3], got[0], got[1], got[2], got[3],
			Mean(d.TTFTMs), InterpQuantile(d.TTFTMs, 0.95), Mean(d.TPOTMs), InterpQuantile(d.TPOTMs, 0.95))
	}
}

// WholeStep by hand: one decode of Llama-3-8B as BLIS counts it (MLP
// 4096 x 9557 x 3 = 117,436,416 weights a layer, BLIS's 2 x 4096 x
// 14,336 = 117,440,512 within 0.004%) over a context of 1,000 tokens on
// BLIS's H100: bytes are the layers' weights, 32 x 159,379,456 x 2 B =
// 10,200,285,184 B, the cache, 1,000 x 131,072 B, and a hidden vector a
// layer, 32 x 4096 x 2 B: 10,331,619,328 B at 3.35 TB/s, 3.0841 ms; its
// FLOPs (2 x 32 x 159,379,456 and attention's 4 x 4096 x 999 a layer,
// 1.07e10) at 296.85 TFLOP/s take 0.036 ms: the step is the bytes. No
// head, no kernel time: BLIS's own roofline's figure for this step.
func TestWholeStepByHand(t *testing.T) {
	e := Engine{Model: blisShape(Llama3_8B()), GPU: blisH100(), TP: 1, StepModel: WholeStep}
	require.InEpsilon(t, 3.0841e-3, e.StepTime(Step{Decode: []int{1000}}), 0.0001)
	// TP splits all of it: a quarter on four GPUs (no all-reduce given).
	e.TP = 4
	require.InEpsilon(t, 3.0841e-3/4, e.StepTime(Step{Decode: []int{1000}}), 0.0001)
}

// blisTrained is BLIS's default latency model, trained-physics, with the
// coefficients of its defaults.yaml at the recorded commit (Apache-2.0;
// testdata/blis/PROVENANCE.md): betas [0.152128, 0, 1.36252915,
// 0.752037, 32.09546717, 4.41684444, 126.024825, (481.86: MoE only), 0,
// 1.94710771] are, in order, prefill compute, decode compute, weights,
// TP all-reduce, us a layer, us a sequence, us a step, and (9th, 10th)
// prefill and decode KV bytes; alphas [15563.2, 777.3, 45.9] us are the
// API server's time before queueing, after the last token, and a token.
func blisTrained(c LLMConfig) LLMConfig {
	c.Engine.StepModel = Fitted
	c.Engine.Fit = StepFit{PrefillCompute: 0.152128, DecodeCompute: 0, Weights: 1.36252915, AllReduce: 0.752037,
		PerLayerUS: 32.09546717, PerSeqUS: 4.41684444, PerStepUS: 126.024825, PrefillKV: 0, DecodeKV: 1.94710771}
	c.RequestOverheadMs, c.FinishOverheadMs, c.TokenOverheadMs = 15.563199579, 0.7773455, 0.045907545
	return c
}

// blisPeakH100 is BLIS's H100 at its published peaks (trained-physics
// corrects the roofline terms at these, not at MFUs).
func blisPeakH100() Roofline {
	return Roofline{Name: "H100 (BLIS)", TFLOPS: 989.5, GBps: 3350, PeakTFLOPS: 989.5, PeakGBps: 3350, MemoryGiB: 80}
}

// The side-by-side with BLIS's default latency model (trained-physics:
// roofline terms with fitted corrections, and API-server overheads), on
// the same requests as TestLLMAgainstBLIS. Given the same step time
// (StepModel Fitted with BLIS's coefficients, LLMConfig's request and
// token overheads with its alphas), gpuplan's engine is within 10% of
// BLIS on mean and p95 TTFT and TPOT in all six cases: the scheduling,
// batching and queueing agree. Its own defaults disagree by design, and
// the log says by how much (see the README's table): BLIS charges each
// request 15.6 ms of API-server time before it queues (gpuplan models
// the engine only), and its fitted corrections (weights read at 1.36 x
// the roofline's time, 32 us a layer) stand where gpuplan has a kernel
// time and per-kernel roofline fitted to a measured H200.
func TestLLMAgainstBLISTrainedPhysics(t *testing.T) {
	for _, c := range readBLIS(t) {
		reqs := readTrace(t, c.Trace)
		model := Llama3_8B()
		if c.Model == "llama-3.1-70b" {
			model = Llama3_70B()
		}
		base := LLMConfig{Engine: Engine{Model: model, GPU: blisPeakH100(), TP: c.TP},
			MaxNumBatchedTokens: 2048, MaxNumSeqs: 256, KVBlocks: c.KVBlocks}
		r, err := SimulateLLM(blisTrained(base), reqs)
		require.NoError(t, err, c.Name)
		b := c.Trained
		require.Equal(t, b.Preemptions, r.Preemptions, c.Name)
		got := [4]float64{Mean(r.TTFTMs), InterpQuantile(r.TTFTMs, 0.95), Mean(r.TPOTMs), InterpQuantile(r.TPOTMs, 0.95)}
		want := [4]float64{b.TTFTMean, b.TTFTP95, b.TPOTMean, b.TPOTP95}
		for i, what := range []string{"mean TTFT", "p95 TTFT", "mean TPOT", "p95 TPOT"} {
			require.InEpsilon(t, want[i], got[i], 0.10, "%s %s: gpuplan %.2f ms, BLIS %.2f ms", c.Name, what, got[i], want[i])
		}
		def := LLMConfig{Engine: Engine{Model: model, GPU: h100(t), TP: c.TP}, MaxNumBatchedTokens: 2048, MaxNumSeqs: 256, KVBlocks: c.KVBlocks}
		d, err := SimulateLLM(def, reqs)
		require.NoError(t, err, c.Name)
		t.Logf("%-7s BLIS default TTFT %6.2f / p95 %6.2f  TPOT %6.2f / p95 %6.2f | gpuplan fitted as BLIS %6.2f / %6.2f  %6.2f / %6.2f | gpuplan's own %6.2f / %6.2f  %6.2f / %6.2f",
			c.Name, want[0], want[1], want[2], want[3], got[0], got[1], got[2], got[3],
			Mean(d.TTFTMs), InterpQuantile(d.TTFTMs, 0.95), Mean(d.TPOTMs), InterpQuantile(d.TPOTMs, 0.95))
	}
}

// Fitted by hand, against BLIS's own StepTime. One decode of Llama-3-8B
// over 999 cached tokens on BLIS's H100 (3,350 GB/s) with its trained
// coefficients: the cache read and written, 1,000 x 131,072 B at 3,350
// B/us = 39.126 us x 1.94710771 = 76.18 us; the weights, 32 x (4096 x
// (8192 + 2048) + 3 x 4096 x 14,336) x 2 B = 13,958,643,712 B, 4,166.76
// us x 1.36252915 = 5,677.33 us; 32 layers x 32.0955 us = 1,027.05 us;
// one sequence 4.42 us; the step 126.02 us: 6,911.01 us. BLIS's
// TrainedPhysicsModel.StepTime at the recorded commit gives 6,911 us for
// this batch, and 8,817 us for a mixed one (a whole prompt of 512, the
// last 300 of a prompt of 500, and decodes at 400, 700 and 1,200 cached
// tokens); for Llama-3-70B on 4 GPUs 16,666 and 21,797 us (it truncates
// to whole microseconds; a ten-line Go program against BLIS's package,
// run once, in PROVENANCE.md).
func TestFittedStepAgainstBLIS(t *testing.T) {
	c := blisTrained(LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: blisPeakH100(), TP: 1}})
	e := c.Engine
	require.InDelta(t, 6911.01e-6, e.StepTime(Step{Decode: []int{1000}}), 0.01e-6)
	mixed := Step{Prefill: []Chunk{{Tokens: 512}, {Tokens: 300, Cached: 200}}, Decode: []int{401, 701, 1201}}
	require.InDelta(t, 8817e-6, e.StepTime(mixed), 1e-6)
	e.Model, e.TP = Llama3_70B(), 4
	require.InDelta(t, 16666e-6, e.StepTime(Step{Decode: []int{1000}}), 1e-6)
	require.InDelta(t, 21797e-6, e.StepTime(mixed), 1e-6)

	// The overheads: a lone request of 100 + 3 tokens on an idle engine
	// is queued 15.563 ms after it arrives; its TTFT is that, the prefill
	// step and one token's 0.046 ms; its TPOT the decode step and the
	// token's; its E2E the TTFT, two more steps and tokens and 0.777 ms.
	c.Engine.Model, c.Engine.TP, c.KVBlocks = Llama3_8B(), 1, 1000
	c.MaxModelLen = 1000
	r, err := SimulateLLM(c, []LLMRequest{{ArrivalMs: 5, Input: 100, Output: 3}})
	require.NoError(t, err)
	e = c.Engine
	pre := e.StepTime(Step{Prefill: []Chunk{{Tokens: 100}}}) * 1e3
	d1, d2 := e.StepTime(Step{Decode: []int{101}})*1e3, e.StepTime(Step{Decode: []int{102}})*1e3
	require.InDelta(t, 15.563199579+pre+0.045907545, r.TTFTMs[0], 1e-9)
	require.InDelta(t, (d1+d2)/2+0.045907545, r.TPOTMs[0], 1e-9)
	require.InDelta(t, 15.563199579+pre+d1+d2+3*0.045907545+0.7773455, r.E2EMs[0], 1e-9)

	bad := c
	bad.Engine.Fit.DecodeKV = -1
	_, err = SimulateLLM(bad, nil)
	require.ErrorContains(t, err, "stepFit")
	bad = c
	bad.TokenOverheadMs = math.NaN()
	_, err = SimulateLLM(bad, nil)
	require.ErrorContains(t, err, "tokenOverheadMs")
}

// The fast model (SteadyLLM) beside BLIS on the same configurations,
// from the spec's length distributions (normal 512 +- 256 in [16, 2,048]
// and 256 +- 128 in [16, 1,024]) rather than the 500 requests. With
// BLIS's default step time (Fitted, as above) it is within 10% (6% at worst) of BLIS's
// mean and p95 TTFT and TPOT wherever a steady state exists; at 50
// requests a second Llama-3-8B is past the replica's capacity in the
// steady state, which the fast model says (ErrLLMOverload), while BLIS's
// (and the exact model's) 500 requests are a 10 s transient with a
// growing queue. With BLIS's roofline (WholeStep) the fast model is
// logged, not held: at 8B's 30/s and 70B's 16/s its TPOT is 13-15%
// under BLIS's mean and 22-31% under its p95 (TTFT within 12%). The exact
// model on BLIS's requests agrees with BLIS within 2% there
// (TestLLMAgainstBLIS), so the gap is the fast model's steady-state
// approximation, which TestSteadyLLMAgainstExact holds within 5% only
// up to part of a replica's capacity.
func TestSteadyLLMAgainstBLIS(t *testing.T) {
	in := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	for _, c := range readBLIS(t) {
		model := Llama3_8B()
		if c.Model == "llama-3.1-70b" {
			model = Llama3_70B()
		}
		cfg := blisTrained(LLMConfig{Engine: Engine{Model: model, GPU: blisPeakH100(), TP: c.TP},
			MaxNumBatchedTokens: 2048, MaxNumSeqs: 256, KVBlocks: c.KVBlocks})
		s, err := SteadyLLM(cfg, c.Rate, in, out)
		if c.Name == "8b-r50" {
			require.ErrorIs(t, err, ErrLLMOverload)
			continue
		}
		require.NoError(t, err, c.Name)
		b := c.Trained
		got := [4]float64{s.TTFTMeanMs, s.TTFTP95Ms, s.TPOTMeanMs, s.TPOTP95Ms}
		want := [4]float64{b.TTFTMean, b.TTFTP95, b.TPOTMean, b.TPOTP95}
		for i, what := range []string{"mean TTFT", "p95 TTFT", "mean TPOT", "p95 TPOT"} {
			require.InEpsilon(t, want[i], got[i], 0.10, "%s %s: gpuplan's fast model %.2f ms, BLIS %.2f ms", c.Name, what, got[i], want[i])
		}
		rcfg := LLMConfig{Engine: Engine{Model: blisShape(model), GPU: blisH100(), TP: c.TP, StepModel: WholeStep},
			MaxNumBatchedTokens: 2048, MaxNumSeqs: 256, KVBlocks: c.KVBlocks}
		r, err := SteadyLLM(rcfg, c.Rate, in, out)
		require.NoError(t, err, c.Name)
		t.Logf("%-7s fast, BLIS default's step: %6.2f / %6.2f  %6.2f / %6.2f (BLIS %6.2f / %6.2f  %6.2f / %6.2f) | BLIS roofline's step: %6.2f / %6.2f  %6.2f / %6.2f (BLIS %6.2f / %6.2f  %6.2f / %6.2f)",
			c.Name, got[0], got[1], got[2], got[3], want[0], want[1], want[2], want[3],
			r.TTFTMeanMs, r.TTFTP95Ms, r.TPOTMeanMs, r.TPOTP95Ms, c.TTFTMean, c.TTFTP95, c.TPOTMean, c.TPOTP95)
	}
}
