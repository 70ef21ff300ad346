package scenarios

import (
	"math"
	"slices"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/serving"
)

// An LLM service (spec.workload.services[].llm): the replicas are
// vLLM-style engines serving requests measured in tokens. The schema and
// its checks are here; the engine model is models/serving (SimulateLLM,
// SteadyLLM), and the cluster run serves it as servicellmbuild.go says.

// LLMServiceSpec is one replica's engine and the requests' lengths.
type LLMServiceSpec struct {
	// Model is a model of the catalog: llama-3-8b or llama-3-70b (Llama 3
	// and 3.1, bf16). With manifests holding a vLLM server, it and the
	// engine's limits left unset are the server's arguments.
	Model string `json:"model"`
	// GPU is the replica's GPU model, one with LLM defaults (H100-80GB,
	// H200-141GB, B200, A100-80GB, A100-40GB); default the service's
	// gpuModel.
	GPU string `json:"gpu,omitempty"`
	// TensorParallel is the GPUs of one replica the model is split over
	// (vLLM's --tensor-parallel-size; default 1).
	TensorParallel *int `json:"tensorParallel,omitempty"`
	// PipelineParallel is the pipeline stages of one replica, each of
	// tensorParallel GPUs (vLLM's --pipeline-parallel-size; default 1):
	// the replica holds tensorParallel x pipelineParallel GPUs, vLLM's
	// multi-node recipe being tensor parallel within a node and pipeline
	// parallel across the nodes of a LeaderWorkerSet group.
	PipelineParallel *int `json:"pipelineParallel,omitempty"`
	// vLLM's engine limits: --max-num-batched-tokens (default 8192),
	// --max-num-seqs (256), --max-model-len (the model's context),
	// --gpu-memory-utilization (0.9), --block-size (16).
	MaxNumBatchedTokens  *int     `json:"maxNumBatchedTokens,omitempty"`
	MaxNumSeqs           *int     `json:"maxNumSeqs,omitempty"`
	MaxModelLen          *int     `json:"maxModelLen,omitempty"`
	GPUMemoryUtilization *float64 `json:"gpuMemoryUtilization,omitempty"`
	BlockSize            *int     `json:"blockSize,omitempty"`
	// StepOverheadMs is the engine's CPU time a step (default 0).
	StepOverheadMs *float64 `json:"stepOverheadMs,omitempty"`
	// Roofline overrides the GPU's figures.
	Roofline *LLMRooflineSpec `json:"roofline,omitempty"`
	// StepFit prices a step with fitted coefficients instead of the
	// per-kernel roofline (serving.StepFit: BLIS's trained-physics form);
	// APIOverhead adds the API server's time outside the engine.
	StepFit     *LLMStepFitSpec     `json:"stepFit,omitempty"`
	APIOverhead *LLMAPIOverheadSpec `json:"apiOverhead,omitempty"`
	// InputTokens and OutputTokens are the requests' prompt and output
	// lengths; or RequestTrace gives each request (llmtrace.go), read
	// when the scenario is built.
	InputTokens  TokenDistSpec `json:"inputTokens"`
	OutputTokens TokenDistSpec `json:"outputTokens"`
	RequestTrace *LLMTraceSpec `json:"requestTrace,omitempty"`
	// SLO is the TTFT and TPOT targets the report measures attainment of.
	SLO *LLMSLOSpec `json:"slo,omitempty"`
	// Prefix is the shared prefix the prompts start with (a system
	// prompt, few-shot examples): vLLM's automatic prefix caching keeps
	// its full blocks on a replica, so a prompt prefills only what
	// follows them.
	Prefix *LLMPrefixSpec `json:"prefix,omitempty"`
	// WeightLoad is a new replica's model load from its weights' bytes:
	// the replica's cold start after the image pull (in place of
	// coldStart.modelLoad).
	WeightLoad *LLMWeightLoadSpec `json:"weightLoad,omitempty"`
	// Disaggregation splits each replica into a prefill pool and a
	// decode pool (llm-d's prefill/decode disaggregation): the prompts
	// prefilled on one, their KV caches sent to the other, which
	// decodes (serving.Disagg).
	Disaggregation *LLMDisaggSpec `json:"disaggregation,omitempty"`
}

// LLMDisaggSpec is a disaggregated replica: its prefill and decode
// pools, the KV cache's transfer between them, and the router that
// spreads each pool's requests (round-robin, the default,
// least-outstanding or prefix-aware). The engine's limits are the llm
// block's in both pools. Placement is how a replica's engines are
// placed: pods (the default), one pod per engine as llm-d deploys them
// (its prefill and decode Deployments, KServe's LLMInferenceService
// spec.prefill), each asking for its engine's GPUs, all one gang; or
// pod, one pod holding every engine's GPUs (on one node).
type LLMDisaggSpec struct {
	Prefill    *LLMPoolSpec       `json:"prefill"`
	Decode     *LLMPoolSpec       `json:"decode"`
	KVTransfer *LLMKVTransferSpec `json:"kvTransfer,omitempty"`
	Router     string             `json:"router,omitempty"`
	Placement  string             `json:"placement,omitempty"`
}

// Disaggregated replicas' placements (llm.disaggregation.placement).
const (
	DisaggPods = "pods"
	DisaggPod  = "pod"
)

// LLMPoolSpec is one pool of a disaggregated replica: its engines and
// the GPUs of each (default llm.tensorParallel).
type LLMPoolSpec struct {
	Replicas       *int `json:"replicas"`
	TensorParallel *int `json:"tensorParallel,omitempty"`
}

// LLMKVTransferSpec is the path a prompt's KV cache takes from a prefill
// engine to a decode engine: a fabric of models/comm, its bus bandwidth
// and latency the transfer's, or a bandwidth (GB/s) and a latency (ms)
// given. With neither, the GPU's NVLink fabric where the replica's
// engines are on one node (placement pod; placement pods when they fit
// one node of every pool the service runs on), else the pools' network
// (scenarios/servicellmbuild.go, disaggNetwork).
type LLMKVTransferSpec struct {
	Fabric        string   `json:"fabric,omitempty"`
	BandwidthGBps *float64 `json:"bandwidthGBps,omitempty"`
	LatencyMs     *float64 `json:"latencyMs,omitempty"`
}

// Bounds of a disaggregated replica.
const (
	maxLLMPoolReplicas = 64
	maxLLMTransferMs   = 1e4
)

// LLMWeightLoadSpec prices a replica's model load: the model's weights
// (every parameter at the model's bytes a weight, all of the replica's
// shards together) read at BandwidthGBps (GB/s, 10^9 bytes: the storage
// or network path the weights come from, a PVC, an object store, a node's
// local NVMe cache), then EngineInit (vLLM's engine start: CUDA graphs
// captured, the KV cache allocated, the API server up; default 0).
type LLMWeightLoadSpec struct {
	BandwidthGBps *float64  `json:"bandwidthGBps"`
	EngineInit    *Duration `json:"engineInit,omitempty"`
}

// maxLLMEngineInit bounds llm.weightLoad.engineInit.
const maxLLMEngineInit = time.Hour

// LLMPrefixSpec is an LLM service's shared prompt prefixes.
type LLMPrefixSpec struct {
	// Tokens is a prefix's length, part of every prompt (below the
	// shortest prompt).
	Tokens int `json:"tokens"`
	// Groups is how many different prefixes the prompts start with
	// (default 1); a replica holds every one (requests reach the
	// replicas at random, round robin or least outstanding), behind
	// the prefix-aware picker only its own; in a disaggregated replica
	// the prefill engines hold them (as the pool's router spreads them)
	// and the decode engines none.
	Groups *int `json:"groups,omitempty"`
}

// maxLLMPrefixGroups bounds llm.prefix.groups.
const maxLLMPrefixGroups = 10_000

// LLMRooflineSpec overrides a GPU's roofline: the dense bf16 rate
// reached (TFLOP/s; decodeTflops for decode rows), the memory bandwidth
// reached (GB/s), a kernel's fixed time (us) and the memory (GiB).
type LLMRooflineSpec struct {
	TFLOPS       *float64 `json:"tflops,omitempty"`
	DecodeTFLOPS *float64 `json:"decodeTflops,omitempty"`
	GBps         *float64 `json:"gbps,omitempty"`
	KernelUS     *float64 `json:"kernelUs,omitempty"`
	MemoryGiB    *float64 `json:"memoryGiB,omitempty"`
}

// LLMStepFitSpec is serving.StepFit as a scenario gives it: the
// dimensionless corrections of the roofline terms and the fixed
// overheads in microseconds (unset: 0).
type LLMStepFitSpec struct {
	PrefillCompute *float64 `json:"prefillCompute,omitempty"`
	PrefillKV      *float64 `json:"prefillKV,omitempty"`
	DecodeCompute  *float64 `json:"decodeCompute,omitempty"`
	DecodeKV       *float64 `json:"decodeKV,omitempty"`
	Weights        *float64 `json:"weights,omitempty"`
	AllReduce      *float64 `json:"allReduce,omitempty"`
	PerLayerUS     *float64 `json:"perLayerUs,omitempty"`
	PerSeqUS       *float64 `json:"perSeqUs,omitempty"`
	PerStepUS      *float64 `json:"perStepUs,omitempty"`
}

// LLMAPIOverheadSpec is the API server's time outside the engine, in
// milliseconds: before a request is queued, with each output token
// streamed, after the last (serving.LLMConfig's RequestOverheadMs,
// TokenOverheadMs, FinishOverheadMs).
type LLMAPIOverheadSpec struct {
	RequestMs *float64 `json:"requestMs,omitempty"`
	TokenMs   *float64 `json:"tokenMs,omitempty"`
	FinishMs  *float64 `json:"finishMs,omitempty"`
}

// Bounds of a step fit's coefficients and the API server's times.
const (
	maxLLMFitCoefficient = 1e3
	maxLLMFitUS          = 1e6
	maxLLMAPIMs          = 1e4
)

// TokenDistSpec is a length in tokens: mean alone is fixed; min and max
// alone uniform; mean and stdDev a normal, rounded and clamped to min
// (default 1) and max (default maxModelLen).
type TokenDistSpec struct {
	Mean   *float64 `json:"mean,omitempty"`
	StdDev *float64 `json:"stdDev,omitempty"`
	Min    *int     `json:"min,omitempty"`
	Max    *int     `json:"max,omitempty"`
}

// Bounds of an LLM service's engine fields.
const (
	maxLLMTensorParallel = 64
	// maxLLMPipelineParallel bounds llm.pipelineParallel (and the
	// model's layers do: a stage holds one at least).
	maxLLMPipelineParallel = 64
	maxLLMBatchedTokens    = 1 << 24
	maxLLMNumSeqs          = 1 << 20
	maxLLMBlockSize        = 1024
	maxLLMStepOverheadMs   = 1e4
	maxLLMTFLOPS           = 1e6
	maxLLMGBps             = 1e6
	maxLLMMemoryGiB        = 1e5
)

// LLMModels are the models an LLM service may name.
func LLMModels() map[string]serving.Transformer {
	return map[string]serving.Transformer{"llama-3-8b": serving.Llama3_8B(), "llama-3-70b": serving.Llama3_70B()}
}

var llmGPUs = []string{"A100-40GB", "A100-80GB", "B200", "H100-80GB", "H200-141GB"}

// LLMGPUs are the GPU models with LLM roofline defaults.
func LLMGPUs() []string { return append([]string(nil), llmGPUs...) }

// LLMService is an LLM service's engine and request lengths as built
// (Trace, when the service gives a request trace, read at build).
type LLMService struct {
	Config        serving.LLMConfig
	Input, Output serving.TokenDist
	Trace         []serving.LLMRequest
	// Disagg, when llm.disaggregation is given, is the replica's two
	// pools (Config then the engine's limits they share, at
	// llm.tensorParallel); DisaggFabric names the transfer's fabric
	// ("" when a bandwidth is given).
	Disagg       *serving.Disagg
	DisaggFabric string
	// DisaggPods: each engine of a replica is a pod of its own
	// (placement pods); DisaggGiven: llm.disaggregation.kvTransfer named
	// a fabric or a bandwidth, DisaggLatencyGiven its latency.
	DisaggPods, DisaggGiven, DisaggLatencyGiven bool
	// DisaggPlacementGiven: llm.disaggregation.placement was written
	// (else pods, or pod where the service's pod holds every engine).
	DisaggPlacementGiven bool
	// ModelLoadMs is the model load llm.weightLoad prices (0: none
	// given), WeightBytes the bytes it reads.
	ModelLoadMs int64
	WeightBytes float64
}

// llmService checks services[i].llm field by field (at is the service's
// path) and builds it; every error names its field.
func (s *Scenario) llmService(at string, v *ServiceSpec) (LLMService, error) {
	l := v.LLM
	at += ".llm"
	var out LLMService
	model, ok := LLMModels()[l.Model]
	if !ok && l.Model == "" {
		return out, s.errAt(at+".model", "is not given (nor a vLLM server's model of the catalog in the service's manifests): name the catalog model of the same shape, llama-3-8b or llama-3-70b")
	}
	if !ok {
		return out, s.errAt(at+".model", "%s is not a model of the catalog (known: llama-3-8b, llama-3-70b)", Quote(l.Model))
	}
	gpu, gpuAt := l.GPU, at+".gpu"
	if gpu == "" {
		gpu, gpuAt = v.GPUModel, strings.TrimSuffix(at, ".llm")+".gpuModel"
	}
	if gpu == "" {
		return out, s.errAt(at+".gpu", "name the replica's GPU (one of %s), here or in the service's gpuModel", strings.Join(llmGPUs, ", "))
	}
	roof, ok := serving.RooflineFor(gpu)
	if !ok {
		return out, s.errAt(gpuAt, "%s has no LLM roofline defaults (known: %s)", Quote(gpu), strings.Join(llmGPUs, ", "))
	}
	cfg := serving.LLMConfig{Engine: serving.Engine{Model: model, GPU: roof, TP: 1}}
	ints := []struct {
		name     string
		v        *int
		lo, hi   int
		dst      *int
		whatIsIt string
	}{
		{"tensorParallel", l.TensorParallel, 1, maxLLMTensorParallel, &cfg.Engine.TP, "GPUs of a replica"},
		{"pipelineParallel", l.PipelineParallel, 1, min(maxLLMPipelineParallel, model.Layers), &cfg.Engine.PP, "pipeline stages of a replica"},
		{"maxNumBatchedTokens", l.MaxNumBatchedTokens, 1, maxLLMBatchedTokens, &cfg.MaxNumBatchedTokens, "tokens a step"},
		{"maxNumSeqs", l.MaxNumSeqs, 1, maxLLMNumSeqs, &cfg.MaxNumSeqs, "requests running at once"},
		{"blockSize", l.BlockSize, 1, maxLLMBlockSize, &cfg.BlockSize, "tokens a KV block"},
		{"maxModelLen", l.MaxModelLen, 1, model.MaxContext, &cfg.MaxModelLen, "tokens a request"},
	}
	for _, f := range ints {
		if f.v == nil {
			continue
		}
		if *f.v < f.lo || *f.v > f.hi {
			if f.name == "maxModelLen" && *f.v > f.hi {
				return out, s.errAt(at+"."+f.name, "%d is above %s's context of %d tokens", *f.v, model.Name, f.hi)
			}
			return out, s.errAt(at+"."+f.name, "%d: %s are from %d to %d", *f.v, f.whatIsIt, f.lo, f.hi)
		}
		*f.dst = *f.v
	}
	if u := l.GPUMemoryUtilization; u != nil {
		if !(*u > 0 && *u <= 1) {
			return out, s.errAt(at+".gpuMemoryUtilization", "%g: a share of the GPU's memory, above 0 and at most 1", *u)
		}
		cfg.GPUMemoryUtilization = *u
	}
	if o := l.StepOverheadMs; o != nil {
		if !(*o >= 0 && *o <= maxLLMStepOverheadMs) {
			return out, s.errAt(at+".stepOverheadMs", "%g ms: from 0 to %g", *o, float64(maxLLMStepOverheadMs))
		}
		cfg.StepOverheadMs = *o
	}
	if r := l.Roofline; r != nil {
		for _, f := range []struct {
			name string
			v    *float64
			hi   float64
			zero bool
			dst  *float64
		}{
			{"tflops", r.TFLOPS, maxLLMTFLOPS, false, &cfg.Engine.GPU.TFLOPS},
			{"decodeTflops", r.DecodeTFLOPS, maxLLMTFLOPS, false, &cfg.Engine.GPU.DecodeTFLOPS},
			{"gbps", r.GBps, maxLLMGBps, false, &cfg.Engine.GPU.GBps},
			{"kernelUs", r.KernelUS, 1e6, true, &cfg.Engine.GPU.KernelUS},
			{"memoryGiB", r.MemoryGiB, maxLLMMemoryGiB, false, &cfg.Engine.GPU.MemoryGiB},
		} {
			if f.v == nil {
				continue
			}
			if !finite(*f.v) || *f.v < 0 || (*f.v == 0 && !f.zero) || *f.v > f.hi {
				return out, s.errAt(at+".roofline."+f.name, "%g: must be positive and at most %g", *f.v, f.hi)
			}
			*f.dst = *f.v
		}
		cfg.Engine.GPU.Source = "the scenario's roofline over " + roof.Source
	}
	if f := l.StepFit; f != nil {
		fit := &cfg.Engine.Fit
		for _, c := range []struct {
			name string
			v    *float64
			hi   float64
			dst  *float64
		}{
			{"prefillCompute", f.PrefillCompute, maxLLMFitCoefficient, &fit.PrefillCompute},
			{"prefillKV", f.PrefillKV, maxLLMFitCoefficient, &fit.PrefillKV},
			{"decodeCompute", f.DecodeCompute, maxLLMFitCoefficient, &fit.DecodeCompute},
			{"decodeKV", f.DecodeKV, maxLLMFitCoefficient, &fit.DecodeKV},
			{"weights", f.Weights, maxLLMFitCoefficient, &fit.Weights},
			{"allReduce", f.AllReduce, maxLLMFitCoefficient, &fit.AllReduce},
			{"perLayerUs", f.PerLayerUS, maxLLMFitUS, &fit.PerLayerUS},
			{"perSeqUs", f.PerSeqUS, maxLLMFitUS, &fit.PerSeqUS},
			{"perStepUs", f.PerStepUS, maxLLMFitUS, &fit.PerStepUS},
		} {
			if c.v == nil {
				continue
			}
			if !finite(*c.v) || *c.v < 0 || *c.v > c.hi {
				return out, s.errAt(at+".stepFit."+c.name, "%g: from 0 to %g", *c.v, c.hi)
			}
			*c.dst = *c.v
		}
		if *fit == (serving.StepFit{}) {
			return out, s.errAt(at+".stepFit", "every coefficient is 0: a step would take no time")
		}
		cfg.Engine.StepModel = serving.Fitted
	}
	if a := l.APIOverhead; a != nil {
		for _, c := range []struct {
			name string
			v    *float64
			dst  *float64
		}{{"requestMs", a.RequestMs, &cfg.RequestOverheadMs}, {"tokenMs", a.TokenMs, &cfg.TokenOverheadMs}, {"finishMs", a.FinishMs, &cfg.FinishOverheadMs}} {
			if c.v == nil {
				continue
			}
			if !finite(*c.v) || *c.v < 0 || *c.v > maxLLMAPIMs {
				return out, s.errAt(at+".apiOverhead."+c.name, "%g ms: from 0 to %g", *c.v, float64(maxLLMAPIMs))
			}
			*c.dst = *c.v
		}
	}
	cfg = cfg.WithDefaults()
	if t := l.RequestTrace; t != nil {
		if t.Path == "" {
			return out, s.errAt(at+".requestTrace.path", "is empty: name a file")
		}
		if l.InputTokens != (TokenDistSpec{}) || l.OutputTokens != (TokenDistSpec{}) {
			return out, s.errAt(at+".requestTrace", "give the token lengths or a request trace, not both")
		}
		if b := t.Bin; b != nil && (b.Millis() < minLLMTraceBin || b.Millis() > maxLLMTraceBin || b.Duration%time.Millisecond != 0) {
			return out, s.errAt(at+".requestTrace.bin", "is %s: the arrivals are counted in bins of 1s to 24h, whole milliseconds", b.Duration)
		}
	} else {
		var err error
		if out.Input, err = s.tokenDist(at+".inputTokens", &l.InputTokens, cfg.MaxModelLen); err != nil {
			return out, err
		}
		if out.Output, err = s.tokenDist(at+".outputTokens", &l.OutputTokens, cfg.MaxModelLen); err != nil {
			return out, err
		}
		if n := out.Input.Longest() + out.Output.Longest(); n > cfg.MaxModelLen {
			return out, s.errAt(at+".outputTokens", "a request of up to %d prompt and %d output tokens is above maxModelLen %d", out.Input.Longest(), out.Output.Longest(), cfg.MaxModelLen)
		}
	}
	if p := l.Prefix; p != nil {
		if l.RequestTrace != nil {
			return out, s.errAt(at+".prefix", "shares a prefix among inputTokens' prompts; a request trace is for the exact model")
		}
		shortest := out.Input.Min
		if out.Input.Kind == serving.Fixed {
			shortest = int(out.Input.Mean)
		}
		if p.Tokens < 1 || p.Tokens >= shortest {
			return out, s.errAt(at+".prefix.tokens", "%d: a prefix is part of every prompt, from 1 to %d tokens (below the shortest prompt, %d)", p.Tokens, shortest-1, shortest)
		}
		groups := 1
		if p.Groups != nil {
			if *p.Groups < 1 || *p.Groups > maxLLMPrefixGroups {
				return out, s.errAt(at+".prefix.groups", "%d: from 1 to %d prefixes", *p.Groups, maxLLMPrefixGroups)
			}
			groups = *p.Groups
		}
		// vLLM caches full blocks only.
		blocks := p.Tokens / cfg.BlockSize
		if blocks == 0 {
			return out, s.errAt(at+".prefix.tokens", "%d tokens fill no KV block of %d: vLLM caches full blocks only", p.Tokens, cfg.BlockSize)
		}
		cfg.PrefixHitTokens = blocks * cfg.BlockSize
		cfg.PrefixCacheBlocks = int64(groups) * int64(blocks)
	}
	if sl := l.SLO; sl != nil {
		for _, f := range []struct {
			name string
			d    *Duration
		}{{"ttft", sl.TTFT}, {"tpot", sl.TPOT}} {
			if f.d != nil && f.d.Duration <= 0 {
				return out, s.errAt(at+".slo."+f.name, "is %s: a target is positive", f.d.Duration)
			}
		}
	}
	if w := l.WeightLoad; w != nil {
		if v.ColdStart != nil && v.ColdStart.ModelLoad != nil {
			return out, s.errAt(at+".weightLoad", "give coldStart.modelLoad or llm.weightLoad, not both")
		}
		if w.BandwidthGBps == nil || !finite(*w.BandwidthGBps) || *w.BandwidthGBps <= 0 || *w.BandwidthGBps > maxLLMGBps {
			return out, s.errAt(at+".weightLoad.bandwidthGBps", "the weights' read bandwidth in GB/s: positive and at most %g", float64(maxLLMGBps))
		}
		out.WeightBytes = model.Params() * model.WeightBytes
		ms := math.Round(out.WeightBytes / (*w.BandwidthGBps * 1e9) * 1e3)
		if e := w.EngineInit; e != nil {
			if e.Duration < 0 || e.Duration > maxLLMEngineInit {
				return out, s.errAt(at+".weightLoad.engineInit", "is %s: from 0 to %s", e.Duration, maxLLMEngineInit)
			}
			ms += float64(e.Millis())
		}
		out.ModelLoadMs = int64(ms)
	}
	if err := cfg.Check(); err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		switch field {
		case "model":
			return out, s.errAt(at+".model", "%s; a larger tensorParallel splits it", msg)
		case "maxModelLen":
			return out, s.errAt(at+".maxModelLen", "%s", msg)
		case "pipelineParallel":
			return out, s.errAt(at+".pipelineParallel", "%s", msg)
		case "prefix":
			return out, s.errAt(at+".prefix.groups", "%s", msg)
		}
		return out, s.errAt(at, "%v", err)
	}
	out.Config = cfg
	if d := l.Disaggregation; d != nil {
		if cfg.Engine.PP > 1 {
			return out, s.errAt(at+".pipelineParallel", "%d with llm.disaggregation: a disaggregated replica's engines are tensor parallel only", cfg.Engine.PP)
		}
		var err error
		if out.Disagg, out.DisaggFabric, err = s.llmDisagg(at+".disaggregation", d, l, cfg, gpu, out.Input); err != nil {
			return out, err
		}
		out.DisaggPlacementGiven = d.Placement != ""
		switch d.Placement {
		case "", DisaggPods:
			out.DisaggPods = true
		case DisaggPod:
		default:
			return out, s.errAt(at+".disaggregation.placement", "is %s; want pods (one pod an engine, as llm-d deploys them; the default) or pod (one pod holding every engine)", Quote(d.Placement))
		}
		if t := d.KVTransfer; t != nil {
			out.DisaggGiven, out.DisaggLatencyGiven = t.Fabric != "" || t.BandwidthGBps != nil, t.LatencyMs != nil
		}
	}
	return out, nil
}

// llmDisagg checks and builds llm.disaggregation (at its path) over the
// engine cfg on gpu.
func (s *Scenario) llmDisagg(at string, d *LLMDisaggSpec, l *LLMServiceSpec, cfg serving.LLMConfig, gpu string, in serving.TokenDist) (*serving.Disagg, string, error) {
	x := &serving.Disagg{Prefill: cfg, Decode: cfg, Router: serving.RoundRobin}
	// llm.prefix is the prefill engines' cache: a decode engine receives
	// the whole prompt's KV cache, the prefix's too, as its own.
	x.Decode.PrefixHitTokens, x.Decode.PrefixCacheBlocks = 0, 0
	for _, p := range []struct {
		name string
		spec *LLMPoolSpec
		n    *int
		c    *serving.LLMConfig
	}{{"prefill", d.Prefill, &x.PrefillReplicas, &x.Prefill}, {"decode", d.Decode, &x.DecodeReplicas, &x.Decode}} {
		pat := at + "." + p.name
		if p.spec == nil {
			return nil, "", s.errAt(pat, "is not given: a disaggregated replica has a prefill pool and a decode pool ({replicas: N})")
		}
		if p.spec.Replicas == nil {
			return nil, "", s.errAt(pat+".replicas", "is not given: the pool's engines in one replica, from 1 to %d", maxLLMPoolReplicas)
		}
		if r := *p.spec.Replicas; r < 1 || r > maxLLMPoolReplicas {
			return nil, "", s.errAt(pat+".replicas", "%d: a pool's engines are from 1 to %d", r, maxLLMPoolReplicas)
		}
		*p.n = *p.spec.Replicas
		if tp := p.spec.TensorParallel; tp != nil {
			if *tp < 1 || *tp > maxLLMTensorParallel {
				return nil, "", s.errAt(pat+".tensorParallel", "%d: GPUs of an engine are from 1 to %d", *tp, maxLLMTensorParallel)
			}
			p.c.Engine.TP = *tp
			// The activations' reserve is the engine's at its own split.
			if p.c.ReserveBytes == cfg.ReserveBytes {
				p.c.ReserveBytes = 0
				*p.c = p.c.WithDefaults()
			}
		}
		if err := p.c.Check(); err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			if field == "model" {
				return nil, "", s.errAt(pat+".tensorParallel", "%s; a larger tensorParallel splits it", msg)
			}
			return nil, "", s.errAt(pat, "%v", err)
		}
	}
	if d.Router != "" {
		r, err := serving.ParseRouter(d.Router)
		if err != nil {
			return nil, "", s.errAt(at+".router", "%s: a pool's requests are spread by round-robin (the default), least-outstanding or prefix-aware", Quote(d.Router))
		}
		x.Router = r
	}
	if x.Router == serving.PrefixAware && l.Prefix != nil && x.PrefillReplicas > 1 && !serving.PrefixSticky(cfg, in) {
		return nil, "", s.errAt(at+".router", "prefix-aware with llm.prefix of %d tokens: the prefix's %d blocks are 2/3 or less of the longest prompt's %d, so the llm-d picker's queue scorer can outweigh its prefix scorer and spread a prefix over prefill engines that do not hold it, which the fast model does not follow; give a prefix above 2/3 of the longest prompt, or round-robin or least-outstanding",
			l.Prefix.Tokens, cfg.PrefixHitTokens/cfg.BlockSize, in.Longest()/cfg.BlockSize)
	}
	fabric := llmFabrics[gpu]
	if t := d.KVTransfer; t != nil {
		if t.Fabric != "" && t.BandwidthGBps != nil {
			return nil, "", s.errAt(at+".kvTransfer", "give a fabric or a bandwidthGBps, not both")
		}
		if t.Fabric != "" {
			if _, ok := models.DefaultFabrics()[t.Fabric]; !ok {
				names := make([]string, 0, len(models.DefaultFabrics()))
				for n := range models.DefaultFabrics() {
					names = append(names, n)
				}
				slices.Sort(names)
				return nil, "", s.errAt(at+".kvTransfer.fabric", "%s is not a fabric (known: %s)", Quote(t.Fabric), strings.Join(names, ", "))
			}
			fabric = t.Fabric
		}
		if b := t.BandwidthGBps; b != nil {
			if !finite(*b) || *b <= 0 || *b > maxLLMGBps {
				return nil, "", s.errAt(at+".kvTransfer.bandwidthGBps", "%g: GB/s, positive and at most %g", *b, float64(maxLLMGBps))
			}
			x.KVTransferGBps, fabric = *b, ""
		}
		if m := t.LatencyMs; m != nil {
			if !finite(*m) || *m < 0 || *m > maxLLMTransferMs {
				return nil, "", s.errAt(at+".kvTransfer.latencyMs", "%g ms: from 0 to %g", *m, float64(maxLLMTransferMs))
			}
			x.KVTransferLatencyMs = *m
		}
	}
	if fabric != "" {
		f := models.DefaultFabrics()[fabric]
		x.KVTransferGBps = f.BusBWGBps
		if d.KVTransfer == nil || d.KVTransfer.LatencyMs == nil {
			x.KVTransferLatencyMs = f.AlphaUS / 1e3
		}
	}
	if err := x.Check(); err != nil {
		return nil, "", s.errAt(at, "%v", err)
	}
	return x, fabric, nil
}

// tokenDist checks and builds one length distribution.
func (s *Scenario) tokenDist(at string, t *TokenDistSpec, maxLen int) (serving.TokenDist, error) {
	for _, f := range []namedFloat{{"mean", t.Mean}, {"stdDev", t.StdDev}} {
		if f.x != nil && !(finite(*f.x) && *f.x >= 0 && *f.x <= serving.MaxTokens) {
			return serving.TokenDist{}, s.errAt(at+"."+f.name, "%g tokens: a length is from 0 to %d", *f.x, serving.MaxTokens)
		}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"min", t.Min}, {"max", t.Max}} {
		if f.v != nil && (*f.v < 1 || *f.v > serving.MaxTokens) {
			return serving.TokenDist{}, s.errAt(at+"."+f.name, "%d tokens: a length is from 1 to %d", *f.v, serving.MaxTokens)
		}
	}
	d := serving.TokenDist{Min: 1, Max: maxLen}
	if t.Min != nil {
		d.Min = *t.Min
	}
	if t.Max != nil {
		d.Max = *t.Max
	}
	switch {
	case t.Mean != nil && t.StdDev == nil && t.Min == nil && t.Max == nil:
		d = serving.TokenDist{Kind: serving.Fixed, Mean: *t.Mean}
		if *t.Mean < 1 || *t.Mean != math.Trunc(*t.Mean) {
			return d, s.errAt(at+".mean", "%g tokens: a fixed length is a whole number, at least 1", *t.Mean)
		}
	case t.Mean == nil && t.StdDev == nil && t.Min != nil && t.Max != nil:
		d.Kind = serving.Uniform
	case t.Mean != nil && t.StdDev != nil:
		d.Kind, d.Mean, d.StdDev = serving.Normal, *t.Mean, *t.StdDev
		if *t.Mean < 1 {
			return d, s.errAt(at+".mean", "%g tokens: the mean is at least 1", *t.Mean)
		}
	default:
		return d, s.errAt(at, "give mean (a fixed length), min and max (uniform), or mean and stdDev (normal, within min and max)")
	}
	if d.Min > d.Max {
		return d, s.errAt(at+".min", "min %d is above max %d", d.Min, d.Max)
	}
	if err := d.Check(); err != nil {
		return d, s.errAt(at, "%v", err)
	}
	return d, nil
}

// buildLLMService is llmService with the files it names read: the
// request trace, strictly, its requests within maxModelLen, whose
// prompt and output lengths become Input and Output (each the trace's
// empirical distribution).
func (s serviceBuilder) buildLLMService(at string, v *ServiceSpec) (LLMService, error) {
	l, err := s.llmService(at, v)
	if err != nil || v.LLM.RequestTrace == nil {
		return l, err
	}
	file := s.path(v.LLM.RequestTrace.Path)
	t, err := s.cache.trace(file, l.Config.MaxModelLen, func() (llmTrace, error) {
		data, err := readWholeBounded(file)
		if err != nil {
			return llmTrace{}, err
		}
		reqs, err := ReadLLMTraceCSV(file, data, l.Config.MaxModelLen)
		if err != nil {
			return llmTrace{}, err
		}
		in, out := make([]int, len(reqs)), make([]int, len(reqs))
		for i, r := range reqs {
			in[i], out[i] = r.Input, r.Output
		}
		return llmTrace{reqs, serving.EmpiricalTokens(in), serving.EmpiricalTokens(out)}, nil
	})
	l.Trace, l.Input, l.Output = t.reqs, t.in, t.out
	return l, err
}
