package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/benchmarks/calibrate"
	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
)

// calibrateVLLMOptions are `gpuplan calibrate vllm`'s flags: the engine
// the benchmark ran (as an llm block gives it) and what the file lacks.
type calibrateVLLMOptions struct {
	model, gpu                                  string
	tp, maxNumSeqs, maxBatched, maxModelLen, bs int
	kvBlocks                                    int64
	memUtil                                     float64
	prefix                                      int
	inputTokens, outputTokens                   string
	seed                                        uint64
	out                                         string
	stdout                                      io.Writer
}

func newCalibrateVLLMCmd(stdout io.Writer) *cobra.Command {
	o := &calibrateVLLMOptions{stdout: stdout}
	c := &cobra.Command{
		Use:   "vllm RESULT.json",
		Short: "Fit an LLM engine's roofline to a vLLM serving benchmark's measured TTFT and ITL",
		Long: `Read the JSON that 'vllm bench serve --save-result' writes (request rate and
burstiness, requests completed and their tokens, mean TTFT and mean inter-token
latency, and the per-request lengths where it keeps them), replay the same requests
in gpuplan's exact model of a vLLM replica with the engine the flags describe, and fit
its roofline: the kernel time (or, if even none is too slow, the memory bandwidth)
to the mean ITL, the compute rate to the mean TTFT, each within 1.5 times the GPU's
defaults. It prints the roofline as the llm block's roofline: fields for a scenario,
with the model's means before and after. A benchmark of short prompts says little
about the compute rate: calibrate from one whose prompts are long (thousands of
tokens) where TTFT matters.`,
		Example: `  gpuplan calibrate vllm result.json --model llama-3-8b --gpu H100-80GB --max-num-batched-tokens 2048
  gpuplan calibrate vllm old-result.json --model llama-3-8b --gpu H100-80GB --input-tokens 2048,1974,2,3500 --output-tokens 28,60,6,200`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error { return o.run(args[0]) },
	}
	f := c.Flags()
	f.StringVar(&o.model, "model", "", "the catalog model the benchmark served: llama-3-8b or llama-3-70b (required)")
	f.StringVar(&o.gpu, "gpu", "", "the GPU it ran on, one with LLM defaults: A100-40GB, A100-80GB, B200, H100-80GB, H200-141GB (required)")
	f.IntVar(&o.tp, "tensor-parallel", 1, "vLLM's --tensor-parallel-size")
	f.IntVar(&o.maxNumSeqs, "max-num-seqs", 0, "vLLM's --max-num-seqs (0: its default, 256)")
	f.IntVar(&o.maxBatched, "max-num-batched-tokens", 0, "vLLM's --max-num-batched-tokens (0: 8192)")
	f.IntVar(&o.maxModelLen, "max-model-len", 0, "vLLM's --max-model-len (0: the model's context)")
	f.IntVar(&o.bs, "block-size", 0, "vLLM's --block-size (0: 16)")
	f.Float64Var(&o.memUtil, "gpu-memory-utilization", 0, "vLLM's --gpu-memory-utilization (0: 0.9)")
	f.Int64Var(&o.kvBlocks, "kv-blocks", 0, "the KV cache's blocks as vLLM logged them (0: from the memory arithmetic)")
	f.IntVar(&o.prefix, "prefix-tokens", 0, "tokens every prompt starts with, shared (vllm bench's --random-prefix-len)")
	f.StringVar(&o.inputTokens, "input-tokens", "", "the prompts' lengths when the file keeps none: MEAN or MEAN,STDDEV,MIN,MAX (a clipped normal)")
	f.StringVar(&o.outputTokens, "output-tokens", "", "the outputs' lengths when the file keeps none, as --input-tokens")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the replayed arrivals (and drawn lengths)")
	f.StringVar(&o.out, "out", "", "file to write the roofline to (default: stdout)")
	enumFlag(c, "model", choicesOf(llmModels))
	enumFlag(c, "gpu", choicesOf(llmGPUModels))
	fileFlag(c, "out", "yaml", "yml")
	freeFlag(c, "tensor-parallel", "max-num-seqs", "max-num-batched-tokens", "max-model-len", "block-size", "gpu-memory-utilization", "kv-blocks", "prefix-tokens", "input-tokens", "output-tokens", "seed")
	return c
}

// tokenDistFlag reads MEAN or MEAN,STDDEV,MIN,MAX.
func tokenDistFlag(flag, v string) (*serving.TokenDist, error) {
	if v == "" {
		return nil, nil
	}
	parts := strings.Split(v, ",")
	var xs []float64
	for _, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || x < 0 || x > serving.MaxTokens {
			return nil, badFlag(flag, v, "want MEAN or MEAN,STDDEV,MIN,MAX in tokens")
		}
		xs = append(xs, x)
	}
	switch len(xs) {
	case 1:
		if xs[0] < 1 {
			return nil, badFlag(flag, v, "a length is at least 1 token")
		}
		return &serving.TokenDist{Mean: xs[0]}, nil
	case 4:
		if xs[2] < 1 || xs[3] < xs[2] {
			return nil, badFlag(flag, v, "want MIN at least 1 and MAX at least MIN")
		}
		return &serving.TokenDist{Kind: serving.Normal, Mean: xs[0], StdDev: xs[1], Min: int(xs[2]), Max: int(xs[3])}, nil
	}
	return nil, badFlag(flag, v, "want MEAN or MEAN,STDDEV,MIN,MAX in tokens")
}

func (o *calibrateVLLMOptions) run(path string) error {
	if o.model == "" || o.gpu == "" {
		return usageError{errors.New("--model and --gpu are required: the engine the benchmark ran")}
	}
	if err := llmModels().check("model", o.model); err != nil {
		return err
	}
	if err := llmGPUModels().check("gpu", o.gpu); err != nil {
		return err
	}
	if err := checkOutputFile("out", o.out); err != nil {
		return usageError{err}
	}
	in, err := tokenDistFlag("input-tokens", o.inputTokens)
	if err != nil {
		return err
	}
	out, err := tokenDistFlag("output-tokens", o.outputTokens)
	if err != nil {
		return err
	}
	if (in == nil) != (out == nil) {
		return usageError{errors.New("--input-tokens and --output-tokens go together")}
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"max-num-seqs", o.maxNumSeqs}, {"max-num-batched-tokens", o.maxBatched}, {"max-model-len", o.maxModelLen}, {"block-size", o.bs}, {"prefix-tokens", o.prefix}} {
		if c.v < 0 {
			return badFlag(c.flag, strconv.Itoa(c.v), "want 0 (the default) or more")
		}
	}
	if o.kvBlocks < 0 || o.memUtil < 0 || o.memUtil > 1 {
		return usageError{errors.New("--kv-blocks is not negative and --gpu-memory-utilization is in [0, 1]")}
	}
	eng, err := scenarios.LLMEngine(o.model, o.gpu, o.tp)
	if err != nil {
		return usageError{err}
	}
	cfg := serving.LLMConfig{Engine: eng, MaxNumSeqs: o.maxNumSeqs, MaxNumBatchedTokens: o.maxBatched, MaxModelLen: o.maxModelLen,
		BlockSize: o.bs, GPUMemoryUtilization: o.memUtil, KVBlocks: o.kvBlocks}.WithDefaults()
	if err := cfg.Check(); err != nil {
		return usageError{fmt.Errorf("the engine: %v", err)}
	}
	if err := scenarios.RegularFile(path); err != nil {
		var ie *scenarios.InputError
		if errors.As(err, &ie) {
			return err
		}
		return usageError{fmt.Errorf("%s: %s", path, scenarios.ReadErr(err))}
	}
	f, err := os.Open(path)
	if err != nil {
		return usageError{err}
	}
	b, err := calibrate.ParseVLLMBench(path, f)
	f.Close()
	if err != nil {
		return usageError{err}
	}
	reqs, notes, err := b.Requests(in, out, o.prefix, o.seed)
	if err != nil {
		return usageError{err}
	}
	for i := range reqs {
		if reqs[i].Input+reqs[i].Output > cfg.MaxModelLen {
			return usageError{fmt.Errorf("request %d: %d tokens are above --max-model-len %d", i, reqs[i].Input+reqs[i].Output, cfg.MaxModelLen)}
		}
	}
	fit, err := serving.CalibrateLLM(cfg, reqs, serving.LLMMeasured{TTFTMeanMs: b.MeanTTFTMs, ITLMeanMs: b.MeanITLMs})
	residual := errors.Is(err, serving.ErrLLMFitResidual)
	if err != nil && !residual {
		return usageError{err}
	}
	var w strings.Builder
	fmt.Fprintf(&w, "# gpuplan calibrate vllm %s: %s on %d %s\n", path, o.model, o.tp, o.gpu)
	for _, n := range notes {
		fmt.Fprintf(&w, "# replayed: %s\n", n)
	}
	fmt.Fprintf(&w, "# measured: mean TTFT %.3f ms, mean ITL %.3f ms\n", b.MeanTTFTMs, b.MeanITLMs)
	fmt.Fprintf(&w, "# the model with %s's defaults: TTFT %.3f ms, ITL %.3f ms; fitted: TTFT %.3f ms, ITL %.3f ms\n",
		o.gpu, fit.Before.TTFTMeanMs, fit.Before.ITLMeanMs, fit.After.TTFTMeanMs, fit.After.ITLMeanMs)
	if residual {
		fmt.Fprintf(&w, "# warning: %v (the knobs stay within 1.5 times the GPU's defaults)\n", err)
	}
	fmt.Fprintf(&w, "roofline:\n  tflops: %.4g\n  gbps: %.5g\n  kernelUs: %.4g\n", fit.Roofline.TFLOPS, fit.Roofline.GBps, fit.Roofline.KernelUS)
	if fit.Roofline.DecodeTFLOPS > 0 && fit.Roofline.DecodeTFLOPS != fit.Roofline.TFLOPS {
		fmt.Fprintf(&w, "  decodeTflops: %.4g\n", fit.Roofline.DecodeTFLOPS)
	}
	if o.out == "" {
		_, err := io.WriteString(o.stdout, w.String())
		return err
	}
	if err := reports.WriteFileAtomic(o.out, func(f io.Writer) error { _, err := io.WriteString(f, w.String()); return err }); err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "Wrote %s: tflops %.4g, gbps %.5g, kernelUs %.4g.\n", o.out, fit.Roofline.TFLOPS, fit.Roofline.GBps, fit.Roofline.KernelUS)
	return nil
}
