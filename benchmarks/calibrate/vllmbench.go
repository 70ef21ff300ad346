package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/models/serving"
)

// VLLMBench is what a vLLM serving benchmark measured: the JSON that
// `vllm bench serve --save-result` (earlier benchmarks/benchmark_serving.py
// --save-result) writes. gpuplan reads the request rate and arrival
// process, the requests completed and their tokens, the mean time to
// first token and inter-token latency, and the per-request prompt and
// output lengths where the file keeps them (input_lens, output_lens:
// kept by default in older versions, with --save-detailed in newer).
type VLLMBench struct {
	File    string
	ModelID string
	// RequestRate is requests a second (+Inf: every request at once);
	// Burstiness the gamma shape of the gaps (1: Poisson).
	RequestRate, Burstiness float64
	// MaxConcurrency caps the requests in flight (0: none).
	MaxConcurrency int
	Completed      int
	// TotalInput and TotalOutput are the tokens of the completed requests.
	TotalInput, TotalOutput int64
	MeanTTFTMs, MeanITLMs   float64
	// InputLens and OutputLens are each request's (nil when not kept).
	InputLens, OutputLens []int
}

// maxVLLMBenchBytes bounds a result file (a million requests' lists fit).
const maxVLLMBenchBytes = 512 << 20

// ParseVLLMBench reads a vLLM benchmark result. Fields it does not use
// are left alone (the format grows with vLLM's versions); those it uses
// are checked, and an error names the file, the field and its line.
func ParseVLLMBench(file string, r io.Reader) (*VLLMBench, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxVLLMBenchBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(data) > maxVLLMBenchBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a benchmark result", file, maxVLLMBenchBytes>>20)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s:%d: not a vLLM benchmark result (JSON object): %v", file, jsonErrLine(data, err), err)
	}
	b := &VLLMBench{File: file, Burstiness: 1}
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s: %s", file, keyLine(data, field), field, fmt.Sprintf(format, args...))
	}
	num := func(field string, required bool, dst *float64) error {
		v, ok := raw[field]
		if !ok || string(v) == "null" {
			if required {
				return fmt.Errorf("%s: %s: missing; a vLLM benchmark result (--save-result) has it", file, field)
			}
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil || math.IsNaN(*dst) || math.IsInf(*dst, 0) {
			return bad(field, "%s is not a number", quoteRaw(v))
		}
		return nil
	}
	// request_rate: a number, or "inf" (every request sent at once).
	if v, ok := raw["request_rate"]; !ok {
		return nil, fmt.Errorf("%s: request_rate: missing; a vLLM benchmark result (--save-result) has it", file)
	} else if s := strings.Trim(string(v), `"`); s == "inf" || s == "Infinity" {
		b.RequestRate = math.Inf(1)
	} else if f, err := strconv.ParseFloat(s, 64); err != nil || !(f > 0) || math.IsInf(f, 0) {
		return nil, bad("request_rate", "%s is not a positive rate or \"inf\"", quoteRaw(v))
	} else {
		b.RequestRate = f
	}
	var completed, tin, tout, conc float64
	for _, f := range []struct {
		name     string
		required bool
		dst      *float64
	}{{"burstiness", false, &b.Burstiness}, {"completed", true, &completed}, {"total_input_tokens", true, &tin},
		{"total_output_tokens", true, &tout}, {"mean_ttft_ms", true, &b.MeanTTFTMs}, {"mean_itl_ms", true, &b.MeanITLMs},
		{"max_concurrency", false, &conc}} {
		if err := num(f.name, f.required, f.dst); err != nil {
			return nil, err
		}
	}
	switch {
	case !(completed >= 1) || completed != math.Trunc(completed) || completed > 1e8:
		return nil, bad("completed", "%g: no request completed (or not a count)", completed)
	case !(tin >= completed) || tin > 1e13:
		return nil, bad("total_input_tokens", "%g: fewer than one token a request", tin)
	case !(tout >= completed) || tout > 1e13:
		return nil, bad("total_output_tokens", "%g: fewer than one token a request", tout)
	case !(b.MeanTTFTMs > 0):
		return nil, bad("mean_ttft_ms", "%g is not positive", b.MeanTTFTMs)
	case !(b.MeanITLMs > 0):
		return nil, bad("mean_itl_ms", "%g is not positive: every request had one output token, no inter-token latency to fit", b.MeanITLMs)
	case !(b.Burstiness > 0):
		return nil, bad("burstiness", "%g is not positive", b.Burstiness)
	case conc < 0 || conc != math.Trunc(conc) || conc > 1e8:
		return nil, bad("max_concurrency", "%g is not a count", conc)
	}
	b.Completed, b.TotalInput, b.TotalOutput, b.MaxConcurrency = int(completed), int64(tin), int64(tout), int(conc)
	if v, ok := raw["model_id"]; ok {
		_ = json.Unmarshal(v, &b.ModelID)
	}
	ins, iok := raw["input_lens"]
	outs, ook := raw["output_lens"]
	if iok && ook && string(ins) != "null" && string(outs) != "null" {
		if err := json.Unmarshal(ins, &b.InputLens); err != nil {
			return nil, bad("input_lens", "not a list of token counts")
		}
		if err := json.Unmarshal(outs, &b.OutputLens); err != nil {
			return nil, bad("output_lens", "not a list of token counts")
		}
		if len(b.InputLens) != len(b.OutputLens) {
			return nil, bad("output_lens", "%d lengths beside %d input_lens", len(b.OutputLens), len(b.InputLens))
		}
		done := 0
		for i := range b.InputLens {
			if b.InputLens[i] < 0 || b.OutputLens[i] < 0 {
				return nil, bad("input_lens", "request %d has a negative length", i)
			}
			if b.OutputLens[i] > 0 {
				done++
			}
		}
		if done != b.Completed {
			return nil, bad("output_lens", "%d requests with output beside completed %d", done, b.Completed)
		}
	}
	return b, nil
}

// keyLine is the line of the first "key": in data (1 when not found).
func keyLine(data []byte, key string) int {
	i := bytes.Index(data, []byte(`"`+key+`"`))
	if i < 0 {
		return 1
	}
	return 1 + bytes.Count(data[:i], []byte("\n"))
}

// jsonErrLine is the line of a JSON syntax error's offset.
func jsonErrLine(data []byte, err error) int {
	if se, ok := err.(*json.SyntaxError); ok && se.Offset <= int64(len(data)) {
		return 1 + bytes.Count(data[:se.Offset], []byte("\n"))
	}
	return 1
}

// quoteRaw is a JSON value for an error, bounded.
func quoteRaw(v json.RawMessage) string {
	s := string(v)
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

// Requests are the benchmark's requests as the exact model replays them:
// arrivals at its rate (gamma gaps of its burstiness; Poisson at 1;
// all at once at "inf"), with the file's per-request lengths, or drawn
// from in and out when the file keeps none (nil: every request the
// mean lengths, and a note says so); the first prefix tokens of every
// prompt shared (vllm bench's --random-prefix-len, BLIS's prefix_tokens).
func (b *VLLMBench) Requests(in, out *serving.TokenDist, prefix int, seed uint64) ([]serving.LLMRequest, []string, error) {
	if b.MaxConcurrency > 0 {
		return nil, nil, fmt.Errorf("%s: max_concurrency %d: a closed loop of requests in flight is not replayed; calibrate from a run at a request rate", b.File, b.MaxConcurrency)
	}
	rng := rand.New(rand.NewPCG(seed, 0x76_6c_6c_6d))
	var notes []string
	var lens [][2]int
	switch {
	case b.InputLens != nil:
		for i := range b.InputLens {
			if b.OutputLens[i] > 0 {
				lens = append(lens, [2]int{b.InputLens[i], b.OutputLens[i]})
			}
		}
		notes = append(notes, fmt.Sprintf("%d requests with the file's prompt and output lengths", len(lens)))
	case in != nil && out != nil:
		for range b.Completed {
			lens = append(lens, [2]int{in.Sample(rng), out.Sample(rng)})
		}
		notes = append(notes, fmt.Sprintf("%d requests with lengths drawn from the given distributions (the file keeps none)", b.Completed))
	default:
		mi := int(math.Round(float64(b.TotalInput) / float64(b.Completed)))
		mo := int(math.Round(float64(b.TotalOutput) / float64(b.Completed)))
		for range b.Completed {
			lens = append(lens, [2]int{mi, mo})
		}
		notes = append(notes, fmt.Sprintf("%d requests of the mean lengths, %d prompt and %d output tokens (the file keeps no per-request lengths: --input-tokens and --output-tokens give their spread)", b.Completed, mi, mo))
	}
	reqs := make([]serving.LLMRequest, len(lens))
	t := 0.0
	for i, l := range lens {
		if !math.IsInf(b.RequestRate, 1) {
			t += gammaGap(rng, b.Burstiness, b.RequestRate) * 1e3
		}
		reqs[i] = serving.LLMRequest{ArrivalMs: t, Input: max(l[0], 1), Output: max(l[1], 1)}
		if prefix > 0 {
			if reqs[i].Input <= prefix {
				return nil, nil, fmt.Errorf("--prefix-tokens %d: request %d's prompt is %d tokens; a shared prefix is part of every prompt", prefix, i, reqs[i].Input)
			}
			reqs[i].PrefixID, reqs[i].PrefixTokens = 1, prefix
		}
	}
	arrivals := "Poisson arrivals"
	switch {
	case math.IsInf(b.RequestRate, 1):
		arrivals = "every request at once (request_rate inf)"
	case b.Burstiness != 1:
		arrivals = fmt.Sprintf("gamma gaps of shape %g (burstiness)", b.Burstiness)
	}
	if !math.IsInf(b.RequestRate, 1) {
		arrivals += fmt.Sprintf(" at %g a second", b.RequestRate)
	}
	return reqs, append(notes, arrivals+fmt.Sprintf(" (seed %d)", seed)), nil
}

// gammaGap is a gap of a gamma process of shape k and mean 1/rate (vLLM's
// burstiness: shape k, scale 1/(rate k)), drawn by Marsaglia and Tsang's
// method (for k < 1, a Gamma(k+1) draw times U^(1/k)).
func gammaGap(rng *rand.Rand, k, rate float64) float64 {
	if k == 1 {
		return rng.ExpFloat64() / rate
	}
	shape, boost := k, 1.0
	if shape < 1 {
		boost = math.Pow(rng.Float64(), 1/shape)
		shape++
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if math.Log(rng.Float64()) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return boost * d * v / (rate * k)
		}
	}
}
