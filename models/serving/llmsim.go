package serving

import (
	"fmt"
	"math"
	"sort"
)

// The exact model of one LLM replica: a request- and step-level simulator
// of a vLLM-style engine (vLLM V1's scheduler). Each step it
//
//  1. schedules the running requests in the order they were admitted:
//     each its remaining prompt (a chunk of at most the step's token
//     budget, max_num_batched_tokens: chunked prefill) or one decode
//     token, with the KV-cache blocks the new tokens need; when no block
//     is free, the last admitted running request is preempted (its
//     blocks freed, it goes back to the head of the waiting queue and
//     will recompute its prompt and the tokens it has generated: vLLM's
//     preemption by recompute), until the request fits or is itself the
//     one preempted;
//  2. then, if nothing was preempted in this step, admits waiting
//     requests in arrival order while the budget lasts, fewer than
//     max_num_seqs run, and their first chunk's blocks are free (no
//     watermark: vLLM V1 keeps none);
//  3. runs for Engine.StepTime of what it scheduled plus a fixed CPU
//     time, after which a request whose prompt (and recomputed tokens)
//     is all in the cache has one new token: the first is the end of
//     its time to first token; the last frees its blocks.
//
// Requests arriving while a step runs join the waiting queue when it
// ends. A replica with nothing to run waits for the next arrival.

// LLMConfig is one replica of the engine.
type LLMConfig struct {
	Engine Engine
	// MaxNumBatchedTokens is the token budget of a step (vLLM's
	// --max-num-batched-tokens; default 8,192); MaxNumSeqs the most
	// requests running at once (--max-num-seqs; default 256). With
	// pipeline parallel a step is Engine.PP batches in flight, each with
	// its own budget: the step's is PP x MaxNumBatchedTokens and a
	// request's chunk at most MaxNumBatchedTokens (it is in one batch).
	MaxNumBatchedTokens, MaxNumSeqs int
	// MaxModelLen is the longest request (prompt and output) the engine
	// takes (--max-model-len; default the model's MaxContext).
	MaxModelLen int
	// BlockSize is the KV cache's block in tokens (default 16).
	BlockSize int
	// GPUMemoryUtilization is the share of each GPU's memory the engine
	// may use (--gpu-memory-utilization; default 0.9).
	GPUMemoryUtilization float64
	// ReserveBytes is each GPU's memory for activations, CUDA graphs and
	// the CUDA context, which the KV cache cannot use (0: ActivationBytes).
	ReserveBytes float64
	// KVBlocks, when above 0, is the cache's size in blocks instead of
	// what the memory arithmetic gives (vLLM's --num-gpu-blocks-override).
	KVBlocks int64
	// StepOverheadMs is the engine's CPU time each step (scheduling,
	// sampling, detokenising) not overlapped with the GPU.
	StepOverheadMs float64
	// RequestOverheadMs, TokenOverheadMs and FinishOverheadMs are the API
	// server's time outside the engine (BLIS's alpha coefficients; 0
	// unless set): before a request reaches the engine's queue (HTTP,
	// validation, tokenising: it is queued that much after it arrives,
	// and its TTFT and E2E include it); streaming each output token (the
	// TTFT and each later token's gap include it, so TPOT does, without
	// holding the engine); and after the last token (E2E only).
	RequestOverheadMs, TokenOverheadMs, FinishOverheadMs float64
	// PrefixHitTokens and PrefixCacheBlocks are the fast model's prefix
	// cache (SteadyLLM): each prompt's first PrefixHitTokens tokens are
	// found cached, and the cached prefixes hold PrefixCacheBlocks of the
	// KV cache. The exact model ignores them: it follows each request's
	// PrefixID through the replica's cache.
	PrefixHitTokens   int
	PrefixCacheBlocks int64
	// RecordSteps keeps a StepRecord of every step in the result.
	RecordSteps bool
}

// Defaults of LLMConfig's limits.
const (
	DefaultMaxNumBatchedTokens = 8192
	DefaultMaxNumSeqs          = 256
	DefaultBlockSize           = 16
	DefaultGPUMemUtil          = 0.9
)

// WithDefaults fills the zero fields.
func (c LLMConfig) WithDefaults() LLMConfig {
	if c.MaxNumBatchedTokens == 0 {
		c.MaxNumBatchedTokens = DefaultMaxNumBatchedTokens
	}
	if c.MaxNumSeqs == 0 {
		c.MaxNumSeqs = DefaultMaxNumSeqs
	}
	if c.MaxModelLen == 0 {
		c.MaxModelLen = c.Engine.Model.MaxContext
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.GPUMemoryUtilization == 0 {
		c.GPUMemoryUtilization = DefaultGPUMemUtil
	}
	if c.ReserveBytes == 0 {
		c.ReserveBytes = c.ActivationBytes()
	}
	return c
}

// ActivationBytes estimates what vLLM's memory profiling run finds on
// each GPU besides the weights: the peak activations of a step of
// MaxNumBatchedTokens tokens (the MLP's gate and up outputs and four
// hidden-wide buffers a token, split over TP), the logits of MaxNumSeqs
// sequences in fp32, and 1 GiB of CUDA context, CUDA graphs and NCCL
// buffers (an assumption, stated).
func (c LLMConfig) ActivationBytes() float64 {
	m := c.Engine.Model
	tp := float64(max(c.Engine.TP, 1))
	tokens := float64(max(c.MaxNumBatchedTokens, 1))
	act := tokens * (2*float64(m.Intermediate) + 4*float64(m.Hidden)) * m.WeightBytes / tp
	logits := float64(max(c.MaxNumSeqs, 1)) * float64(m.Vocab) * 4 / tp
	return act + logits + 1<<30
}

// Blocks is the KV cache's size in blocks.
func (c LLMConfig) Blocks() int64 {
	if c.KVBlocks > 0 {
		return c.KVBlocks
	}
	if c.BlockSize <= 0 {
		return 0
	}
	return c.Engine.KVCacheTokens(c.GPUMemoryUtilization, c.ReserveBytes, c.BlockSize) / int64(c.BlockSize)
}

// Check refuses a replica that cannot run, with the field at fault
// (Go field names; the scenario layer names its own): limits that are
// not positive, a max model length above the model's, a model whose
// weights do not fit the GPUs' memory, or a cache that does not hold one
// request of the max model length (vLLM refuses to start then too).
func (c LLMConfig) Check() error {
	if err := c.Engine.Model.Check(); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	g := c.Engine.GPU
	switch {
	case !(g.TFLOPS > 0) || !(g.GBps > 0) || g.KernelUS < 0 || !(g.MemoryGiB > 0):
		return fmt.Errorf("gpu: tflops, gbps and memoryGiB are positive and kernelUS is not negative")
	case c.Engine.TP < 1:
		return fmt.Errorf("tensorParallel: %d is below 1", c.Engine.TP)
	case c.Engine.PP < 0 || c.Engine.PP > c.Engine.Model.Layers:
		return fmt.Errorf("pipelineParallel: %d is not in [1, the model's %d layers]", c.Engine.PP, c.Engine.Model.Layers)
	case c.Engine.PP > 1 && c.Engine.StepModel != PerKernel:
		return fmt.Errorf("pipelineParallel: %d stages are priced per kernel only (stepModel per-kernel)", c.Engine.PP)
	case c.MaxNumBatchedTokens < 1:
		return fmt.Errorf("maxNumBatchedTokens: %d is below 1", c.MaxNumBatchedTokens)
	case c.MaxNumSeqs < 1:
		return fmt.Errorf("maxNumSeqs: %d is below 1", c.MaxNumSeqs)
	case c.BlockSize < 1:
		return fmt.Errorf("blockSize: %d is below 1", c.BlockSize)
	case !(c.GPUMemoryUtilization > 0 && c.GPUMemoryUtilization <= 1):
		return fmt.Errorf("gpuMemoryUtilization: %g is not in (0, 1]", c.GPUMemoryUtilization)
	case c.ReserveBytes < 0 || c.StepOverheadMs < 0 || c.KVBlocks < 0:
		return fmt.Errorf("reserveBytes, stepOverheadMs and kvBlocks are not negative")
	case c.PrefixHitTokens < 0 || c.PrefixCacheBlocks < 0:
		return fmt.Errorf("prefixHitTokens and prefixCacheBlocks are not negative")
	case !(c.RequestOverheadMs >= 0) || !(c.TokenOverheadMs >= 0) || !(c.FinishOverheadMs >= 0) ||
		math.IsInf(c.RequestOverheadMs+c.TokenOverheadMs+c.FinishOverheadMs, 0):
		return fmt.Errorf("requestOverheadMs, tokenOverheadMs and finishOverheadMs are finite and not negative")
	case c.MaxModelLen < 1:
		return fmt.Errorf("maxModelLen: %d is below 1", c.MaxModelLen)
	case c.Engine.Model.MaxContext > 0 && c.MaxModelLen > c.Engine.Model.MaxContext:
		return fmt.Errorf("maxModelLen: %d is above the model's %d tokens", c.MaxModelLen, c.Engine.Model.MaxContext)
	}
	if c.Engine.StepModel == Fitted {
		if err := c.Engine.Fit.Check(); err != nil {
			return fmt.Errorf("stepFit: %w", err)
		}
	}
	weights := c.Engine.WeightBytesPerGPU()
	usable := c.GPUMemoryUtilization * g.MemoryGiB * (1 << 30)
	if c.KVBlocks == 0 && weights+c.ReserveBytes >= usable {
		return fmt.Errorf("model: %s needs %.1f GiB of weights and %.1f GiB of activations on each of %d %s, which has %.1f GiB at utilization %g",
			c.Engine.Model.Name, weights/(1<<30), c.ReserveBytes/(1<<30), c.Engine.GPUs(), g.Name, usable/(1<<30), c.GPUMemoryUtilization)
	}
	if blocks := c.Blocks(); blocks*int64(c.BlockSize) < int64(c.MaxModelLen) {
		return fmt.Errorf("maxModelLen: %d tokens do not fit the KV cache of %d tokens", c.MaxModelLen, blocks*int64(c.BlockSize))
	}
	if blocks := c.Blocks(); c.PrefixCacheBlocks > 0 && (blocks-c.PrefixCacheBlocks)*int64(c.BlockSize) < int64(c.MaxModelLen) {
		return fmt.Errorf("prefix: the cached prefixes' %d blocks leave %d of the KV cache's %d, less than one request of maxModelLen %d tokens", c.PrefixCacheBlocks, blocks-c.PrefixCacheBlocks, blocks, c.MaxModelLen)
	}
	return nil
}

// LLMRequest is one request: its arrival and its prompt and output
// lengths in tokens.
type LLMRequest struct {
	ArrivalMs     float64
	Input, Output int
	// PrefixID names the shared prefix the prompt starts with (a system
	// prompt, a few-shot block, a conversation's history; 0: none) and
	// PrefixTokens its length, within Input. With prefix caching
	// (vLLM's automatic prefix caching, on by default in its V1 engine) a
	// replica that holds the prefix's full blocks does not prefill them
	// again.
	PrefixID, PrefixTokens int
	// Prefilled is a request whose prompt's KV cache arrives computed,
	// from a prefill replica (prefill/decode disaggregation, llmdisagg.go):
	// its first token is already out, and the replica decodes the rest
	// from its first step (recomputing the prompt only if preempted).
	Prefilled bool
}

// StepRecord is one step of the engine.
type StepRecord struct {
	StartMs, Ms float64
	// PrefillTokens and Decodes are what it ran; Running and Waiting the
	// requests after its scheduling; UsedBlocks the cache blocks held.
	PrefillTokens, Decodes, Running, Waiting int
	UsedBlocks                               int64
	// Preempted counts the requests preempted in its scheduling.
	Preempted int
}

// LLMResult is what one replica served.
type LLMResult struct {
	// TTFTMs, TPOTMs and E2EMs of each finished request, in request
	// order: first token less arrival; (last token less first) over the
	// output tokens after the first (0 for a one-token output); last
	// token less arrival.
	TTFTMs, TPOTMs, E2EMs []float64
	// Preemptions counts recompute preemptions; Steps the steps run;
	// Blocks the cache's size; PeakBlocks the most held at once.
	Preemptions, Steps int
	Blocks, PeakBlocks int64
	// EndMs is when the last request finished; BusyMs the time steps ran.
	EndMs, BusyMs float64
	// InputTokens and OutputTokens served; PrefixHitTokens the prompt
	// tokens found in the prefix cache instead of prefilled.
	InputTokens, OutputTokens, PrefixHitTokens int64
	StepLog                                    []StepRecord
}

// maxLLMRequests bounds one run: the exact model is for short windows and
// for holding the fast model to.
const maxLLMRequests = 5_000_000

// SimulateLLM serves reqs (sorted by arrival) on one replica.
func SimulateLLM(cfg LLMConfig, reqs []LLMRequest) (LLMResult, error) {
	cfg = cfg.WithDefaults()
	if err := checkLLMRun(cfg, reqs); err != nil {
		return LLMResult{}, err
	}
	rep := newLLMReplica(&cfg, reqs, newLLMOutcomes(len(reqs)))
	for i := range reqs {
		rep.route(i)
	}
	if err := rep.advance(math.Inf(1)); err != nil {
		return rep.res, err
	}
	return rep.result(), nil
}

// checkLLMRun refuses a configuration or requests the engine cannot serve.
func checkLLMRun(cfg LLMConfig, reqs []LLMRequest) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	if len(reqs) > maxLLMRequests {
		return fmt.Errorf("requests: %d is above the exact model's %d", len(reqs), maxLLMRequests)
	}
	for i, r := range reqs {
		switch {
		case r.Input < 1 || r.Output < 1:
			return fmt.Errorf("request %d: input %d and output %d tokens are at least 1", i, r.Input, r.Output)
		case r.Input+r.Output > cfg.MaxModelLen:
			return fmt.Errorf("request %d: %d tokens are above maxModelLen %d", i, r.Input+r.Output, cfg.MaxModelLen)
		case i > 0 && r.ArrivalMs < reqs[i-1].ArrivalMs, math.IsNaN(r.ArrivalMs):
			return fmt.Errorf("request %d: arrivals are not sorted", i)
		case r.Prefilled && (r.Output < 2 || r.PrefixID != 0):
			return fmt.Errorf("request %d: a prefilled request has a token to decode (output %d) and no shared prefix", i, r.Output)
		case r.PrefixTokens < 0 || r.PrefixTokens > r.Input || r.PrefixID < 0:
			return fmt.Errorf("request %d: prefixTokens %d is not in [0, input %d] or prefixID %d is negative", i, r.PrefixTokens, r.Input, r.PrefixID)
		}
	}
	return nil
}

// InterpQuantile is the p-quantile of xs, linearly interpolated between
// the order statistics (numpy's default, which BLIS reports); xs is not
// changed.
func InterpQuantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
