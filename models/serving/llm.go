package serving

import (
	"fmt"
	"math"
	"slices"
)

// The time of one step of an LLM serving engine (vLLM-style continuous
// batching: each step runs the prefill chunks and the decodes of the
// sequences scheduled, every token through every layer at once) from the
// model's shape and a roofline of the GPU: every matrix multiply costs a
// kernel's fixed time plus the larger of its bytes over the memory
// bandwidth and its FLOPs over the compute rate, so a decode step of a
// few sequences is the weights read once (memory-bound) and a long
// prefill is 2 x parameters x tokens of compute (compute-bound).

// Transformer is a decoder-only model's shape, Llama-style: grouped-query
// attention and a gated MLP.
type Transformer struct {
	Name string
	// Layers, Hidden (the model dimension), Heads and KVHeads (query and
	// key/value heads), Intermediate (the MLP's width) and Vocab.
	Layers, Hidden, Heads, KVHeads, Intermediate, Vocab int
	// WeightBytes and KVBytes are the bytes of a weight and of a cached
	// key or value element (2: bf16 or fp16; 1: fp8).
	WeightBytes, KVBytes float64
	// MaxContext is the longest sequence the model takes
	// (max_position_embeddings).
	MaxContext int
}

// Llama3_8B and Llama3_70B are Meta's Llama 3 (and 3.1) models as their
// published config.json files give them, in bf16, with Llama 3.1's
// context of 131,072 tokens (Llama 3's was 8,192).
func Llama3_8B() Transformer {
	return Transformer{Name: "llama-3-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 128256, WeightBytes: 2, KVBytes: 2, MaxContext: 131072}
}

func Llama3_70B() Transformer {
	return Transformer{Name: "llama-3-70b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, Intermediate: 28672, Vocab: 128256, WeightBytes: 2, KVBytes: 2, MaxContext: 131072}
}

// HeadDim is the width of one attention head.
func (t Transformer) HeadDim() int { return t.Hidden / t.Heads }

// Check refuses a shape that is not one.
func (t Transformer) Check() error {
	switch {
	case t.Layers <= 0 || t.Hidden <= 0 || t.Heads <= 0 || t.KVHeads <= 0 || t.Intermediate <= 0 || t.Vocab <= 0:
		return fmt.Errorf("layers, hidden, heads, kvHeads, intermediate and vocab are positive")
	case t.Hidden%t.Heads != 0:
		return fmt.Errorf("hidden %d is not a multiple of heads %d", t.Hidden, t.Heads)
	case t.Heads%t.KVHeads != 0:
		return fmt.Errorf("heads %d is not a multiple of kvHeads %d", t.Heads, t.KVHeads)
	case !(t.WeightBytes > 0) || !(t.KVBytes > 0):
		return fmt.Errorf("weightBytes and kvBytes are positive")
	case t.MaxContext < 0:
		return fmt.Errorf("maxContext %d is negative", t.MaxContext)
	}
	return nil
}

// the four weight matrices of a layer, as (rows k, columns n) of y = x W.
func (t Transformer) layerMatrices() [4][2]int {
	h, kvw := t.Hidden, 2*t.KVHeads*t.HeadDim()
	return [4][2]int{{h, h + kvw}, {h, h}, {h, 2 * t.Intermediate}, {t.Intermediate, h}}
}

// Params counts the weights: each layer's attention projections (query,
// key, value, output) and MLP (gate, up, down), and the embedding and
// the output head (norms, a few thousand, are left out).
func (t Transformer) Params() float64 {
	per := 0.0
	for _, m := range t.layerMatrices() {
		per += float64(m[0]) * float64(m[1])
	}
	return float64(t.Layers)*per + 2*float64(t.Vocab)*float64(t.Hidden)
}

// KVBytesPerToken is the KV cache one token holds: a key and a value per
// layer and key/value head.
func (t Transformer) KVBytesPerToken() float64 {
	return 2 * float64(t.Layers*t.KVHeads*t.HeadDim()) * t.KVBytes
}

// Roofline is a GPU as an LLM step sees it.
type Roofline struct {
	Name string
	// TFLOPS is the dense bf16 rate large matrix multiplies reach;
	// GBps the memory bandwidth large reads reach (weights, KV cache);
	// KernelUS the fixed time of each kernel (launch and ramp).
	TFLOPS, GBps, KernelUS float64
	// MemoryGiB is the memory a process can use.
	MemoryGiB float64
	// DecodeTFLOPS, when above 0, is the rate of the decode rows of a
	// step's matrix multiplies (BLIS's roofline calibrates a lower model
	// FLOPs utilisation for decode than for prefill); 0: TFLOPS.
	DecodeTFLOPS float64
	// PeakTFLOPS and PeakGBps are the published peaks the rates were
	// derived from (0 when fitted only); for the record.
	PeakTFLOPS, PeakGBps float64
	// Source says where the figures come from.
	Source string
}

// H200Roofline is fitted to one H200 measured for this project
// (benchmarks/calibrate/testdata/h200-device/h200-llm-pieces.json, bf16,
// PyTorch 2.11, CUDA 13.0): the fixed time, bandwidth and rate that best
// fit (least squares of the log error) the 96 timed projections of
// Llama-3-8B and -70B at 1 to 16,384 rows (median error 7%); 140 GiB is
// what NVML reports of its memory.
func H200Roofline() Roofline {
	return Roofline{Name: "H200-141GB", TFLOPS: 750, GBps: 4400, KernelUS: 24, MemoryGiB: 140,
		Source: "fitted to a measured H200 (bf16 GEMMs of Llama-3 shapes, 2026-12-04)"}
}

// GEMM is the time in seconds of y = x W for x of m rows by k and W of k
// by n, elements of b bytes: a kernel's fixed time plus the larger of
// reading x and W and writing y at the bandwidth, and 2mkn FLOPs at the
// rate.
func (r Roofline) GEMM(m, k, n int, b float64) float64 { return r.gemm(m, 0, k, n, b) }

// gemm is GEMM of mp prefill rows and md decode rows, the decode rows'
// FLOPs at DecodeTFLOPS when set.
func (r Roofline) gemm(mp, md, k, n int, b float64) float64 {
	m := float64(mp + md)
	bytes := b * (float64(k)*float64(n) + m*float64(k) + m*float64(n))
	flops := 2 * float64(k) * float64(n)
	secs := flops * float64(mp) / (r.TFLOPS * 1e12)
	if r.DecodeTFLOPS > 0 {
		secs += flops * float64(md) / (r.DecodeTFLOPS * 1e12)
	} else {
		secs += flops * float64(md) / (r.TFLOPS * 1e12)
	}
	return r.KernelUS*1e-6 + math.Max(bytes/(r.GBps*1e9), secs)
}

// Read is the time of one kernel reading bytes (decode attention's pass
// over the KV cache).
func (r Roofline) Read(bytes float64) float64 { return r.KernelUS*1e-6 + bytes/(r.GBps*1e9) }

// Compute is the time of one kernel doing flops (prefill attention).
func (r Roofline) Compute(flops float64) float64 {
	return r.KernelUS*1e-6 + flops/(r.TFLOPS*1e12)
}

// Chunk is a prefill chunk of a step: Tokens new tokens of a sequence
// that already has Cached tokens in the KV cache.
type Chunk struct{ Tokens, Cached int }

// Step is what one engine step runs: prefill chunks and decodes (each
// decode one new token of a sequence whose context is Context tokens).
type Step struct {
	Prefill []Chunk
	Decode  []int // each decoding sequence's context length
}

// StepModel names how Engine prices a step.
type StepModel int

const (
	// PerKernel (the default) prices each matrix multiply and attention
	// pass as a kernel: its fixed time plus the larger of its bytes and
	// its FLOPs, summed over the layers, with the output head.
	PerKernel StepModel = iota
	// WholeStep is the single-crossover roofline of BLIS (llm-d's
	// simulator) and llm-optimizer: the larger of the step's FLOPs over
	// the rate (prefill and decode tokens at their own rates) and its
	// bytes over the bandwidth (the layers' weights once, the KV cache
	// read and written, a hidden vector a token and layer), with no
	// kernel time and no output head. It is here to compare with BLIS
	// on its own assumptions.
	WholeStep
	// Fitted is Engine.Fit: a step time fitted to measured steps, in the
	// form of BLIS's trained-physics latency model (see StepFit).
	Fitted
)

// StepFit is a step time fitted to measured steps (a vLLM benchmark's,
// or BLIS's published coefficients), in the form of BLIS's default
// "trained-physics" latency model: dimensionless corrections of roofline
// terms, each computed at the GPU's published peaks (Roofline.PeakTFLOPS
// and PeakGBps; TFLOPS and GBps when those are 0), and fixed overheads
// in microseconds:
//
//	step = PrefillCompute x Tpc + PrefillKV x Tpk + DecodeCompute x Tdc
//	     + DecodeKV x Tdk + Weights x Tw + AllReduce x Tar
//	     + PerLayerUS x layers + PerSeqUS x sequences + PerStepUS
//
// on one GPU of TP: Tpc is the prefill tokens' FLOPs (the four attention
// projections, the gated MLP's three matrices, and causal attention: 4 x
// hidden x t x (s + t/2) a layer for a chunk of t tokens of a prompt of s
// so far) over the peak rate; Tpk their keys and values written; Tdc the
// decode tokens' FLOPs (projections, MLP, attention over the context);
// Tdk the decoding sequences' keys and values read and the new ones
// written; Tw the layers' weights read once (no output head); Tar two
// ring all-reduces a layer of the step's activations, 2 x (TP-1)/TP of
// their bytes over the HBM bandwidth (0 on one GPU). Each term is one
// GPU's share: the work, weights and cache split over TP. sequences
// counts the step's prefill chunks and decodes. With TP > 1 the Engine's
// AllReduce is not used: AllReduce x Tar stands for it.
type StepFit struct {
	PrefillCompute, PrefillKV, DecodeCompute, DecodeKV, Weights, AllReduce float64
	PerLayerUS, PerSeqUS, PerStepUS                                        float64
}

// Check refuses a coefficient that is negative or not a number.
func (f StepFit) Check() error {
	for _, v := range []float64{f.PrefillCompute, f.PrefillKV, f.DecodeCompute, f.DecodeKV, f.Weights, f.AllReduce, f.PerLayerUS, f.PerSeqUS, f.PerStepUS} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("step fit: coefficients are finite and not negative (%g)", v)
		}
	}
	return nil
}

// Engine is a model on a replica's GPUs, tensor-parallel over TP of them
// and, with PP above 1, pipeline-parallel over PP stages of TP GPUs each.
//
// Pipeline parallel (vLLM's --pipeline-parallel-size) splits the layers
// over the stages as vLLM's get_pp_indices does (vllm/distributed/utils.py):
// Layers/PP each, the remainder one a stage from the last but one
// backwards (the last stage also runs the output head); a stage's
// all-reduces are its TP GPUs' (AllReduce, NVLink inside a node), and a
// micro-batch's activations (a hidden vector a token) go from each stage
// to the next (Send, on the network between nodes). vLLM keeps PP batches
// in flight (max_concurrent_batches is the pipeline size: "PP requires
// PP-size concurrent batches to fill the pipeline", vllm/config/vllm.py),
// each scheduled from the requests not in flight with its own token
// budget, so a request gets a token once a pipeline pass while the
// stages work on PP batches at once. StepTime prices that as one step of
// the engine: the step's sequences split evenly into PP micro-batches
// (the largest prefill chunk whole in one), and the step takes the time
// until each micro-batch is back for its next token: the larger of one
// micro-batch's pass through the pipeline (its stages' times and PP - 1
// sends) and the slowest stage's time for each micro-batch that holds a
// sequence (PP, or the sequences when fewer), which bounds the stages'
// throughput. So a request's token takes a pipeline pass, and the
// engine's tokens are PP micro-batches' a pass. (The last stage's output
// head makes it the slowest of even stages: where the head takes longer
// than a send, a full step is PP times the last stage.) The engine's CPU
// time (LLMConfig.StepOverheadMs) is counted once a step: vLLM schedules
// the next batch while the others run.
type Engine struct {
	Model Transformer
	GPU   Roofline
	TP    int
	// PP is the pipeline stages (0 or 1: none).
	PP int
	// Send is the time to send bytes of activations from one pipeline
	// stage to the next (nil: none; used with PP above 1).
	Send func(bytes float64) float64
	// StepModel is PerKernel unless set.
	StepModel StepModel
	// Fit is the step time under StepModel Fitted.
	Fit StepFit
	// AllReduce is the time of an all-reduce of bytes over the TP GPUs
	// (nil with TP 1).
	AllReduce func(bytes float64) float64
}

// StepTime is the GPU time of one step in seconds: per layer the four
// projections with every token of the batch as a row (weights and heads
// split over TP), decode attention reading each sequence's cached keys
// and values, causal prefill attention's FLOPs, and with TP > 1 two
// all-reduces of the layer's activations; then the output head for each
// sequence that produces a token (every decode, every prefill chunk). The
// engine's CPU time per step (scheduling, sampling) is not included.
func (e Engine) StepTime(b Step) float64 {
	prefill := 0
	for _, c := range b.Prefill {
		prefill += c.Tokens
	}
	if prefill+len(b.Decode) == 0 {
		return 0
	}
	switch e.StepModel {
	case WholeStep:
		return e.wholeStep(b, prefill)
	case Fitted:
		return e.fitted(b, prefill)
	}
	hiddenTP := e.Model.Hidden / max(e.TP, 1)
	ctx := 0.0
	for _, c := range b.Decode {
		ctx += float64(c)
	}
	flops := 0.0
	big, bigFlops := 0, 0.0
	for _, c := range b.Prefill {
		f := prefillAttnFlops(hiddenTP, c.Tokens, c.Cached)
		flops += f
		if c.Tokens > big {
			big, bigFlops = c.Tokens, f
		}
	}
	return e.perKernel(prefill, len(b.Prefill), len(b.Decode), ctx, flops, big, bigFlops)
}

// Stages is the pipeline's stages' layers (one stage of every layer
// without pipeline parallel): vLLM's split, Layers/PP a stage and the
// remainder one a stage from the last but one backwards.
func (e Engine) Stages() []int {
	pp := max(e.PP, 1)
	s := make([]int, pp)
	for i := range s {
		s[i] = e.Model.Layers / pp
	}
	for i := 2; i < e.Model.Layers%pp+2; i++ {
		s[pp-i]++
	}
	return s
}

// GPUs is the replica's GPUs: TP x PP.
func (e Engine) GPUs() int { return max(e.TP, 1) * max(e.PP, 1) }

// prefillAttnFlops is causal prefill attention's FLOPs in one layer for a
// chunk of tokens new tokens over cached ones (hiddenTP: the model
// dimension on one GPU): scores and weighted values, 2 FLOPs a
// multiply-add each, for each new token over the cached ones and the new
// ones before it.
func prefillAttnFlops(hiddenTP, tokens, cached int) float64 {
	t := float64(tokens)
	return 4 * float64(hiddenTP) * t * (float64(cached) + (t+1)/2)
}

// perKernel is StepTime under PerKernel from a step's totals: prefill
// tokens in chunks chunks, decodes sequences decoding with contexts
// summing to ctx, and the prefill attention's FLOPs a layer (the sum of
// prefillAttnFlops over the chunks); big and bigFlops are the largest
// chunk's tokens and FLOPs (which a pipeline's micro-batch holds whole).
// It costs the same whatever the step's size, so the fast model can price
// steps of many sequences.
func (e Engine) perKernel(prefill, chunks, decodes int, ctx, flops float64, big int, bigFlops float64) float64 {
	if prefill+decodes == 0 {
		return 0
	}
	if pp := e.PP; pp > 1 {
		return e.pipelined(pp, prefill, chunks, decodes, ctx, flops, big, bigFlops)
	}
	layer, head := e.layerHead(prefill, chunks, decodes, ctx, flops)
	return float64(e.Model.Layers)*layer + head
}

// pipelined is perKernel with pp stages: the step split into pp
// micro-batches, the largest of which (a pp-th of the decodes, rounded up,
// at their mean context; a pp-th of the prefill tokens, rounded up, or the
// largest chunk whole, with their share of the attention FLOPs) passes
// through the stages one after the other, a send between each two; the
// step is that pass, or the slowest stage's time for each micro-batch
// that holds a sequence (at most pp) where that is longer (see Engine).
func (e Engine) pipelined(pp, prefill, chunks, decodes int, ctx, flops float64, big int, bigFlops float64) float64 {
	up := func(n int) int { return (n + pp - 1) / pp }
	mbPrefill, mbFlops := up(prefill), 0.0
	if prefill > 0 {
		mbFlops = flops * float64(mbPrefill) / float64(prefill)
	}
	if big > mbPrefill {
		mbPrefill, mbFlops = big, math.Max(mbFlops, bigFlops)
	}
	mbDecodes, mbCtx := up(decodes), 0.0
	if decodes > 0 {
		mbCtx = ctx * float64(mbDecodes) / float64(decodes)
	}
	layer, head := e.layerHead(mbPrefill, up(chunks), mbDecodes, mbCtx, mbFlops)
	var pass, slowest float64
	stages := e.Stages()
	for i, l := range stages {
		t := float64(l) * layer
		if i == len(stages)-1 {
			t += head
		}
		pass += t
		slowest = math.Max(slowest, t)
	}
	if e.Send != nil {
		m := e.Model
		pass += float64(pp-1) * e.Send(float64(mbPrefill+mbDecodes)*float64(m.Hidden)*m.WeightBytes)
	}
	return math.Max(pass, float64(min(pp, chunks+decodes))*slowest)
}

// layerHead is one layer's time on a step's totals (its projections,
// attention and all-reduces on TP GPUs) and the output head's.
func (e Engine) layerHead(prefill, chunks, decodes int, ctx, flops float64) (float64, float64) {
	tp := max(e.TP, 1)
	m := e.Model
	tokens := prefill + decodes
	var layer float64
	for i, w := range m.layerMatrices() {
		k, n := w[0], w[1]
		if i == 1 || i == 3 { // output and down projections split by rows
			k /= tp
		} else {
			n /= tp
		}
		layer += e.GPU.gemm(prefill, decodes, k, n, m.WeightBytes)
	}
	kvPerTokenLayer := 2 * float64(m.KVHeads*m.HeadDim()) * m.KVBytes / float64(tp)
	if decodes > 0 {
		layer += e.GPU.Read(ctx * kvPerTokenLayer)
	}
	if chunks > 0 {
		layer += e.GPU.Compute(flops)
	}
	if tp > 1 && e.AllReduce != nil {
		layer += 2 * e.AllReduce(float64(tokens)*float64(m.Hidden)*m.WeightBytes)
	}
	head := e.GPU.gemm(chunks, decodes, m.Hidden, m.Vocab/tp, m.WeightBytes)
	return layer, head
}

// WeightBytesPerGPU is the weights each GPU holds: a TP-th of the model,
// or with pipeline parallel a TP-th of the largest stage's layers and of
// the embedding or the output head (the first stage holds the one, the
// last the other).
func (e Engine) WeightBytesPerGPU() float64 {
	m := e.Model
	tp := float64(max(e.TP, 1))
	if e.PP <= 1 {
		return m.Params() * m.WeightBytes / tp
	}
	var per float64
	for _, w := range m.layerMatrices() {
		per += float64(w[0]) * float64(w[1])
	}
	return (float64(slices.Max(e.Stages()))*per + float64(m.Vocab)*float64(m.Hidden)) * m.WeightBytes / tp
}

// kvBytesPerTokenGPU is the KV cache a token takes on each GPU with
// pipeline parallel: a TP-th of its keys and values in the largest
// stage's layers (every stage holds each token's keys and values of its
// layers).
func (e Engine) kvBytesPerTokenGPU() float64 {
	tp := float64(max(e.TP, 1))
	return e.Model.KVBytesPerToken() * float64(slices.Max(e.Stages())) / float64(e.Model.Layers) / tp
}

// KVCacheTokens is how many tokens the replica's KV cache holds, in whole
// blocks of blockSize tokens: the share util of each GPU's memory less its
// share of the weights and reserve bytes (activations, CUDA graphs), over
// the KV bytes a token takes on each GPU. Zero when the weights do not
// fit.
func (e Engine) KVCacheTokens(util float64, reserve float64, blockSize int) int64 {
	free := util*e.GPU.MemoryGiB*(1<<30) - e.WeightBytesPerGPU() - reserve
	if free <= 0 || blockSize <= 0 {
		return 0
	}
	blockBytes := float64(blockSize) * e.Model.KVBytesPerToken() / float64(max(e.TP, 1))
	if e.PP > 1 {
		blockBytes = float64(blockSize) * e.kvBytesPerTokenGPU()
	}
	return int64(math.Floor(free/blockBytes)) * int64(blockSize)
}

// wholeStep is StepTime under WholeStep.
func (e Engine) wholeStep(b Step, prefillTokens int) float64 {
	m := e.Model
	tp := float64(max(e.TP, 1))
	layers := float64(m.Layers)
	var params float64
	for _, w := range m.layerMatrices() {
		params += float64(w[0]) * float64(w[1])
	}
	decodeRate := e.GPU.DecodeTFLOPS
	if !(decodeRate > 0) {
		decodeRate = e.GPU.TFLOPS
	}
	kvToken := m.KVBytesPerToken()
	attn := func(t, cached float64) float64 { // FLOPs of t new tokens over cached ones, all layers
		return layers * 4 * float64(m.Hidden) * t * (cached + (t-1)/2)
	}
	var prefillFlops, decodeFlops, bytes float64
	for _, c := range b.Prefill {
		t := float64(c.Tokens)
		prefillFlops += 2*layers*params*t + attn(t, float64(c.Cached))
		bytes += kvToken * (float64(c.Cached) + t)
	}
	for _, ctx := range b.Decode {
		decodeFlops += 2*layers*params + attn(1, float64(ctx-1))
		bytes += kvToken * float64(ctx)
	}
	tokens := float64(prefillTokens + len(b.Decode))
	bytes += layers*params*m.WeightBytes + layers*float64(m.Hidden)*m.KVBytes*tokens
	compute := prefillFlops/(e.GPU.TFLOPS*1e12) + decodeFlops/(decodeRate*1e12)
	t := math.Max(compute, bytes/(e.GPU.GBps*1e9)) / tp
	if tp > 1 && e.AllReduce != nil {
		t += 2 * layers * e.AllReduce(tokens*float64(m.Hidden)*m.WeightBytes)
	}
	return t
}

// fitted is StepTime under Fitted (StepFit's formula), in seconds.
func (e Engine) fitted(b Step, prefillTokens int) float64 {
	m, f := e.Model, e.Fit
	tp := float64(max(e.TP, 1))
	L, d := float64(m.Layers), float64(m.Hidden)
	dKV := float64(m.KVHeads * m.HeadDim())
	dFF := float64(m.Intermediate)
	flopsUS := e.GPU.PeakTFLOPS * 1e6 // FLOPs a microsecond
	if !(flopsUS > 0) {
		flopsUS = e.GPU.TFLOPS * 1e6
	}
	bytesUS := e.GPU.PeakGBps * 1e3 // bytes a microsecond
	if !(bytesUS > 0) {
		bytesUS = e.GPU.GBps * 1e3
	}
	// a token's FLOPs in one layer's projections (query, key, value,
	// output) and gated MLP (gate, up, down), split over TP
	perToken := 2*d*(2*d+2*dKV)/tp + 6*d*dFF/tp
	kvToken := L * 2 * dKV / tp * m.KVBytes // a token's keys and values, all layers
	P, D := float64(prefillTokens), float64(len(b.Decode))
	var attnP, ctx float64
	for _, c := range b.Prefill {
		t := float64(c.Tokens)
		attnP += 4 * d / tp * t * (float64(c.Cached+c.Tokens) + t/2)
	}
	for _, c := range b.Decode {
		ctx += float64(c - 1) // the cached context, without the new token
	}
	var us float64
	if P > 0 {
		us += f.PrefillCompute*L*(P*perToken+attnP)/flopsUS + f.PrefillKV*kvToken*P/bytesUS
	}
	if D > 0 {
		us += f.DecodeCompute*L*(D*perToken+4*d/tp*ctx)/flopsUS + f.DecodeKV*kvToken*(ctx+D)/bytesUS
	}
	us += f.Weights * L * (d*(2*d+2*dKV) + 3*d*dFF) * m.WeightBytes / tp / bytesUS
	if tp > 1 {
		us += f.AllReduce * 2 * L * (P + D) * d * m.WeightBytes * 2 * (tp - 1) / tp / bytesUS
	}
	us += f.PerLayerUS*L + f.PerSeqUS*float64(len(b.Prefill)+len(b.Decode)) + f.PerStepUS
	return us * 1e-6
}
