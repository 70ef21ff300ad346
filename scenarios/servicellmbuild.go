package scenarios

import (
	"fmt"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/serving"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/services"
)

// The cluster run's side of an LLM service: its replicas are pods of the
// same scheduler as any service's (cfg.Pod, placement, priority, queue
// and autoscaler built as for a batch server), and the services.Spec they
// serve carries the engine (services.LLM) in place of a batch model.

// LLMSLOSpec is an LLM service's latency targets, whose attainment the
// report gives: time to first token and time per output token.
type LLMSLOSpec struct {
	TTFT *Duration `json:"ttft,omitempty"`
	TPOT *Duration `json:"tpot,omitempty"`
}

// LLMServingNote is the assumption a run with an LLM service lists.
const LLMServingNote = "LLM services: each replica a vLLM-style engine (continuous batching, chunked prefill, KV-cache blocks) accounted per interval with the fast model (models/serving.SteadyLLM, held within 5% of the request- and step-level model on mean and p95 TTFT, TPOT and end-to-end latency up to 63-80% of a replica's capacity, optimistic nearer it; its KV-cache share the steady state's mean blocks, no recompute preemption counted); requests spread at random over the ready replicas (Poisson per replica); above capacity the excess waits in a backlog served at capacity; with no replica ready requests are refused"

// llmFabrics is the NVLink fabric of each GPU with LLM defaults: the
// all-reduces of a tensor-parallel replica are priced on it.
var llmFabrics = map[string]string{"A100-40GB": "a100-nvswitch", "A100-80GB": "a100-nvswitch", "H100-80GB": "h100-nvls",
	"H200-141GB": "h200-nvswitch", "B200": "b200-nvswitch"}

// buildLLMServiceSpec finishes an LLM service whose pod, placement,
// queue, priority and scaler cfg holds: the engine, the load, the cold
// start; the fields of a batch server are refused.
func (s serviceBuilder) buildLLMServiceSpec(at string, v *ServiceSpec, b *Built, cfg sim.ServiceConfig, notes []string) (sim.ServiceConfig, []string, error) {
	l, err := s.buildLLMService(at, v)
	if err != nil {
		return cfg, nil, err
	}
	la := at + ".llm"
	if v.LLM.RequestTrace != nil {
		return cfg, nil, s.errAt(la+".requestTrace", "the cluster run draws requests from inputTokens and outputTokens at the load's rate; a request trace is for the exact model")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"batching", v.Batching != nil}, {"torchserve", v.TorchServe != nil}, {"queueLimit", v.QueueLimit != nil}, {"timeout", v.Timeout != nil}, {"slo", v.SLO != nil}} {
		if f.set {
			msg := "is a batch server's; an LLM service's engine is its llm block"
			if f.name == "slo" {
				msg = "is a batch server's latency; give an LLM service's targets as llm.slo.ttft and llm.slo.tpot"
			}
			return cfg, nil, s.errAt(at+"."+f.name, "%s", msg)
		}
	}
	if v.Balancing != "" && v.Balancing != "random" {
		return cfg, nil, s.errAt(at+".balancing", "%s: an LLM service's requests are spread at random over its replicas (the fast model is one replica's at Poisson arrivals)", Quote(v.Balancing))
	}
	tp := l.Config.Engine.TP
	if int(cfg.Pod.GPUs) != tp || cfg.Pod.MIG != "" {
		return cfg, nil, s.errAt(at+".pod.gpus", "a replica of tensorParallel %d holds %d whole GPUs; the pod asks for %d%s", tp, tp, cfg.Pod.GPUs, map[bool]string{true: " MIG slices", false: ""}[cfg.Pod.MIG != ""])
	}
	gpu := l.Config.Engine.GPU.Name
	for _, p := range servicePools(b.Config.Pools, cfg.Constraints, cfg.Pod) {
		if p.GPUModel != gpu {
			return cfg, nil, s.errAt(la+".gpu", "is %s, but a replica can run on pool %s's %s: give the service a nodeSelector (or affinity) that keeps it on %s nodes", gpu, p.Name, p.GPUModel, gpu)
		}
	}
	if tp > 1 {
		f := llmFabric(gpu)
		l.Config.Engine.AllReduce = serving.TPAllReduce(f, tp)
		notes = append(notes, fmt.Sprintf("tensor parallel %d: two all-reduces a layer priced on %s (%.0f us + bytes at %.0f GB/s bus bandwidth)", tp, f.Name, f.AlphaUS, f.BusBWGBps))
	}
	if c := l.Config; c.PrefixHitTokens > 0 || v.LLM.Prefix != nil {
		notes = append(notes, fmt.Sprintf("prefix caching (vLLM's automatic prefix caching): each prompt's first %d tokens (the prefix's full blocks of %d) are found cached; every replica holds the %d prefixes' %d blocks, as requests spread at random reach them all; a prefix's first request on a replica (a miss) is not counted",
			c.PrefixHitTokens, c.BlockSize, c.PrefixCacheBlocks/int64(max(c.PrefixHitTokens/c.BlockSize, 1)), c.PrefixCacheBlocks))
	}
	x := &services.LLM{Config: l.Config, Input: l.Input, Output: l.Output}
	if sl := v.LLM.SLO; sl != nil {
		if sl.TTFT != nil {
			x.TTFTSLOMs = float64(sl.TTFT.Millis())
		}
		if sl.TPOT != nil {
			x.TPOTSLOMs = float64(sl.TPOT.Millis())
		}
	}
	if x.CapacityPerReplica, err = serving.LLMCapacity(l.Config, l.Input, l.Output); err != nil {
		return cfg, nil, s.errAt(la, "%v", err)
	}
	spec := services.Spec{Name: v.Name, Balancing: serving.Random, LLM: x}
	notes = append(notes, fmt.Sprintf("LLM engine %s on %d %s (%s), KV cache %d blocks of %d tokens, up to %d requests and %d tokens a step: a replica serves up to %.1f requests/s of these lengths (the fast model's capacity)",
		l.Config.Engine.Model.Name, tp, gpu, strings.TrimSpace(l.Config.Engine.GPU.Source), l.Config.Blocks(), l.Config.BlockSize, l.Config.MaxNumSeqs, l.Config.MaxNumBatchedTokens, x.CapacityPerReplica))
	if spec.Load, err = s.serviceLoad(at+".load", &v.Load); err != nil {
		return cfg, nil, err
	}
	if err := spec.Validate(); err != nil {
		return cfg, nil, s.errAt(at, "%v", err)
	}
	// The fast model at every per-replica rate the run may meet, once for
	// all its runs: from the load's lowest rate on the most replicas up to
	// capacity.
	maxR := cfg.MaxReplicas
	if maxR == 0 {
		maxR = max(cfg.MinReplicas, cfg.InitialReplicas)
	}
	if x.Curve, err = services.NewLLMCurve(x, spec.Load.Floor()/float64(max(maxR, 1))); err != nil {
		return cfg, nil, s.errAt(la, "%v", err)
	}
	cfg.Spec = spec
	if c := v.ColdStart; c != nil {
		if c.ImagePull != nil {
			cfg.ImagePull = c.ImagePull.Millis()
		}
		if c.ModelLoad != nil {
			cfg.ModelLoad = c.ModelLoad.Millis()
		}
	}
	if cfg.ImagePull == 0 && cfg.ModelLoad == 0 {
		notes = append(notes, "no coldStart given: a replica serves as soon as it is bound")
	}
	b.Assumptions = appendOnce(b.Assumptions, LLMServingNote)
	return cfg, notes, nil
}

// appendOnce appends s unless xs holds it.
func appendOnce(xs []string, s string) []string {
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}

// withVLLMArgs is v with its llm block's unset engine fields taken from
// the vLLM server's arguments in wl's manifest (a field the scenario
// sets wins, and a note says so), and the notes on what was read.
func withVLLMArgs(v *ServiceSpec, wl *kubesvc.Workload) (*ServiceSpec, []string) {
	a := wl.VLLM
	w, l := *v, *v.LLM
	w.LLM = &l
	where := fmt.Sprintf("%s %s (%s:%d)", wl.Kind, wl.Name, wl.File, wl.Line)
	var read, over []string
	str := func(field, flag string, dst *string, val string) {
		switch {
		case val == "":
		case *dst == "":
			*dst = val
			read = append(read, flag+" "+val)
		case *dst != val:
			over = append(over, fmt.Sprintf("llm.%s %s over %s %s", field, *dst, flag, val))
		}
	}
	ints := func(field, flag string, dst **int, val *int) {
		switch {
		case val == nil:
		case *dst == nil:
			*dst = val
			read = append(read, fmt.Sprintf("%s %d", flag, *val))
		case **dst != *val:
			over = append(over, fmt.Sprintf("llm.%s %d over %s %d", field, **dst, flag, *val))
		}
	}
	str("model", "model", &l.Model, a.Model)
	ints("tensorParallel", "--tensor-parallel-size", &l.TensorParallel, a.TensorParallel)
	ints("maxNumSeqs", "--max-num-seqs", &l.MaxNumSeqs, a.MaxNumSeqs)
	ints("maxNumBatchedTokens", "--max-num-batched-tokens", &l.MaxNumBatchedTokens, a.MaxNumBatchedTokens)
	ints("maxModelLen", "--max-model-len", &l.MaxModelLen, a.MaxModelLen)
	ints("blockSize", "--block-size", &l.BlockSize, a.BlockSize)
	switch g := a.GPUMemoryUtilization; {
	case g == nil:
	case l.GPUMemoryUtilization == nil:
		l.GPUMemoryUtilization = g
		read = append(read, fmt.Sprintf("--gpu-memory-utilization %g", *g))
	case *l.GPUMemoryUtilization != *g:
		over = append(over, fmt.Sprintf("llm.gpuMemoryUtilization %g over --gpu-memory-utilization %g", *l.GPUMemoryUtilization, *g))
	}
	args := "every engine limit vLLM's default"
	if len(read) > 0 {
		args = strings.Join(read, ", ") + "; the rest vLLM's defaults"
	}
	notes := []string{fmt.Sprintf("vLLM server of %s, container %s, model %s: %s", where, Quote(a.Container), Quote(a.HFModel), args)}
	if len(over) > 0 {
		notes = append(notes, "the scenario's "+strings.Join(over, ", ")+" (the scenario wins)")
	}
	return &w, append(notes, a.Notes...)
}

// LLMEngine is a replica's engine as a scenario's llm block builds it
// from a catalog model, a GPU with LLM defaults and a tensor parallel
// (its all-reduces on the GPU's NVLink fabric): for tools that model one
// engine outside a scenario (gpuplan calibrate vllm).
func LLMEngine(model, gpu string, tp int) (serving.Engine, error) {
	m, ok := LLMModels()[model]
	if !ok {
		return serving.Engine{}, fmt.Errorf("model %s is not in the catalog (known: llama-3-8b, llama-3-70b)", Quote(model))
	}
	roof, ok := serving.RooflineFor(gpu)
	if !ok {
		return serving.Engine{}, fmt.Errorf("GPU %s has no LLM roofline defaults (known: %s)", Quote(gpu), strings.Join(llmGPUs, ", "))
	}
	if tp < 1 || tp > maxLLMTensorParallel {
		return serving.Engine{}, fmt.Errorf("tensor parallel %d: from 1 to %d GPUs", tp, maxLLMTensorParallel)
	}
	e := serving.Engine{Model: m, GPU: roof, TP: tp}
	if tp > 1 {
		e.AllReduce = serving.TPAllReduce(llmFabric(gpu), tp)
	}
	return e, nil
}

// llmFabric is the NVLink fabric a GPU's tensor-parallel all-reduces run on.
func llmFabric(gpu string) models.Fabric { return models.DefaultFabrics()[llmFabrics[gpu]] }
