package scenarios

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/serving"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
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
const LLMServingNote = "LLM services: each replica a vLLM-style engine (continuous batching, chunked prefill, KV-cache blocks) accounted per interval with the fast model (models/serving.SteadyLLM, held within 5% of the request- and step-level model on mean and p95 TTFT, TPOT and end-to-end latency up to 63-80% of a replica's capacity, optimistic nearer it; its KV-cache share the steady state's mean blocks, recompute preemptions counted where the decoding requests' drift reaches the cache, within a factor of 2 of the exact model's where they pass a few per 1,000 requests); requests spread at random over the ready replicas (Poisson per replica); above capacity the excess waits in a backlog served at capacity; with no replica ready requests are refused"

// llmFabrics is the NVLink fabric of each GPU with LLM defaults: the
// all-reduces of a tensor-parallel replica are priced on it.
var llmFabrics = map[string]string{"A100-40GB": "a100-nvswitch", "A100-80GB": "a100-nvswitch", "H100-80GB": "h100-nvls",
	"H200-141GB": "h200-nvswitch", "B200": "b200-nvswitch"}

// buildLLMServiceSpec finishes an LLM service whose pod, placement,
// queue, priority and scaler cfg holds: the engine, the load, the cold
// start; the fields of a batch server are refused.
func (s serviceBuilder) buildLLMServiceSpec(at string, v *ServiceSpec, wl *kubesvc.Workload, b *Built, cfg sim.ServiceConfig, notes []string) (sim.ServiceConfig, []string, error) {
	l, err := s.buildLLMService(at, v)
	if err != nil {
		return cfg, nil, err
	}
	la := at + ".llm"
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
	router, err := llmRouter(v.Balancing)
	if err != nil {
		return cfg, nil, s.errAt(at+".balancing", "%v", err)
	}
	sticky := router != nil && *router == serving.PrefixAware && v.LLM.Prefix != nil && l.Disagg == nil
	if sticky && !serving.PrefixSticky(l.Config, l.Input) {
		return cfg, nil, s.errAt(la+".prefix.tokens", "%d with balancing prefix-aware: the prefix's %d blocks are 2/3 or less of the longest prompt's %d, so the llm-d picker's queue scorer can outweigh its prefix scorer and spread a prefix over replicas that do not hold it, which the cluster run's fast model does not follow; give a prefix above 2/3 of the longest prompt, round-robin, least-outstanding or random, or run the exact model (serving.SimulateLLMRouted)",
			v.LLM.Prefix.Tokens, l.Config.PrefixHitTokens/l.Config.BlockSize, l.Input.Longest()/l.Config.BlockSize)
	}
	tp := l.Config.Engine.TP
	if d := l.Disagg; d != nil && cfg.PodsPerReplica > 1 {
		return cfg, nil, s.errAt(at+".leaderWorker.size", "a disaggregated replica's pods are its engines, one pod each (llm.disaggregation.placement pods), or one pod holding them all (placement pod); an engine over a group of pods (a LeaderWorkerSet's) is not modelled")
	}
	if d := l.Disagg; d != nil {
		if router != nil {
			return cfg, nil, s.errAt(at+".balancing", "%s with llm.disaggregation: the requests reach the replicas (each a prefill and a decode pool) at random; each pool's router is llm.disaggregation.router", router)
		}
		if pt, dt := d.Prefill.Engine.TP, d.Decode.Engine.TP; l.DisaggPods && !l.DisaggPlacementGiven && cfg.Pod.MIG == "" &&
			int(cfg.Pod.GPUs) == d.GPUs() && int(cfg.Pod.GPUs) != pt && int(cfg.Pod.GPUs) != dt {
			// A pod of every engine's GPUs, placement not written: the
			// single-pod form it can only mean.
			l.DisaggPods = false
			notes = append(notes, fmt.Sprintf("llm.disaggregation.placement pod: the service's pod asks for all %d GPUs of the replica's engines (one pod an engine would ask for %d or %d)", d.GPUs(), pt, dt))
		}
		if l.DisaggPods {
			// Each engine a pod: the prefill engines' pods first (the
			// replica's main pods), then the decode engines' (a group of
			// their own where they differ). The service's pod is either
			// pool's engine's, the other asking for its own GPUs; a
			// manifest's prefill pod (an LLMInferenceService's
			// spec.prefill.template) is the prefill engines'.
			pt, dt := d.Prefill.Engine.TP, d.Decode.Engine.TP
			if (int(cfg.Pod.GPUs) != pt && int(cfg.Pod.GPUs) != dt) || cfg.Pod.MIG != "" {
				return cfg, nil, s.errAt(at+".pod.gpus", "a disaggregated replica placed as pods (llm.disaggregation.placement pods, the default) is one pod an engine: the pod is an engine's, a prefill engine's %d whole GPUs or a decode engine's %d (the other pool's pods ask for their own); the pod asks for %d%s; give placement pod for one pod holding all %d",
					pt, dt, cfg.Pod.GPUs, map[bool]string{true: " MIG slices", false: ""}[cfg.Pod.MIG != ""], d.GPUs())
			}
			pp, dp := cfg.Pod, cfg.Pod
			pp.GPUs, dp.GPUs = int32(pt), int32(dt)
			if wl != nil && wl.Disagg != nil {
				m := wl.Disagg.PrefillPod
				pp.MilliCPU, pp.MemoryMiB, pp.GPUs = m.MilliCPU, m.MemoryMiB, int32(m.GPUs)
				if int(pp.GPUs) != pt {
					return cfg, nil, s.errAt(la+".disaggregation.prefill.tensorParallel", "%d, but %s %s's prefill pods (%s:%d, spec.prefill.template) ask for %d GPUs", pt, wl.Kind, wl.Name, wl.File, wl.Line, pp.GPUs)
				}
			}
			cfg.Pod, cfg.PodsPerReplica = pp, d.PrefillReplicas+d.DecodeReplicas
			if dp != pp {
				cfg.Groups = []cluster.PodGroup{{Name: "decode", Pod: dp, Replicas: int32(d.DecodeReplicas), Constraints: cfg.Constraints}}
			}
			tp = d.GPUs()
		} else if tp = d.GPUs(); int(cfg.Pod.GPUs) != tp || cfg.Pod.MIG != "" {
			return cfg, nil, s.errAt(at+".pod.gpus", "a disaggregated replica of %d prefill engines of %d GPUs and %d decode engines of %d holds %d whole GPUs; the pod asks for %d%s",
				d.PrefillReplicas, d.Prefill.Engine.TP, d.DecodeReplicas, d.Decode.Engine.TP, tp, cfg.Pod.GPUs, map[bool]string{true: " MIG slices", false: ""}[cfg.Pod.MIG != ""])
		}
	} else if pods := max(cfg.PodsPerReplica, 1); int(cfg.Pod.GPUs)*pods != l.Config.Engine.GPUs() || cfg.Pod.MIG != "" {
		what := fmt.Sprintf("tensorParallel %d", tp)
		if pp := l.Config.Engine.PP; pp > 1 {
			what = fmt.Sprintf("tensorParallel %d x pipelineParallel %d", tp, pp)
		}
		return cfg, nil, s.errAt(at+".pod.gpus", "a replica of %s holds %d whole GPUs; the pod asks for %d%s%s", what, l.Config.Engine.GPUs(), cfg.Pod.GPUs, map[bool]string{true: " MIG slices", false: ""}[cfg.Pod.MIG != ""], map[bool]string{true: fmt.Sprintf(", %d pods a replica", pods), false: ""}[pods > 1])
	}
	gpu := l.Config.Engine.GPU.Name
	for _, p := range servicePools(b.Config.Pools, cfg.Constraints, cfg.Pod) {
		if p.GPUModel != gpu {
			return cfg, nil, s.errAt(la+".gpu", "is %s, but a replica can run on pool %s's %s: give the service a nodeSelector (or affinity) that keeps it on %s nodes", gpu, p.Name, p.GPUModel, gpu)
		}
	}
	if d := l.Disagg; d != nil {
		for _, c := range []*serving.LLMConfig{&d.Prefill, &d.Decode} {
			if c.Engine.TP > 1 {
				c.Engine.AllReduce = serving.TPAllReduce(llmFabric(gpu), c.Engine.TP)
			}
		}
		var where string
		if l.DisaggPods {
			pools := servicePools(b.Config.Pools, cfg.Constraints, cfg.Pod)
			one, smallest := disaggFitsNode(pools, d.GPUs())
			where = fmt.Sprintf("; each engine a pod of its own (llm-d's prefill and decode pods, placement pods), the replica's %d pods one gang, ready when all are, made again whole when one is lost or preempted", cfg.PodsPerReplica)
			switch {
			case l.DisaggGiven:
				where += ", the KV transfer's path as given"
			case one:
				where += fmt.Sprintf("; its %d GPUs fit one node of every pool it may run on, so the KV transfer is priced on the GPUs' NVLink (optimistic where the scheduler spreads the pods over nodes)", d.GPUs())
			default:
				f, scale, err := disaggNetwork(pools, b.Config.Fabrics, min(d.Prefill.Engine.TP, d.Decode.Engine.TP))
				if err != nil {
					return cfg, nil, s.errAt(la+".disaggregation", "%v", err)
				}
				d.KVTransferGBps = f.BusBWGBps * scale
				if !l.DisaggLatencyGiven {
					d.KVTransferLatencyMs = f.AlphaUS / 1e3
				}
				l.DisaggFabric = f.Name
				where += fmt.Sprintf("; its %d GPUs are more than a node of %d holds, so its pods span nodes and the KV transfer goes over the pools' network (NIXL over RDMA), %s's bus bandwidth scaled by the %d of a node's %d rails an engine uses (chosen at build, not where each replica lands)",
					d.GPUs(), smallest, f.Name, min(d.Prefill.Engine.TP, d.Decode.Engine.TP, f.RanksPerNode()), f.RanksPerNode())
			}
		} else {
			where = "; one pod holding every engine's GPUs (placement pod), on one node"
		}
		var via string
		if l.DisaggFabric == "" {
			via = fmt.Sprintf("%g GB/s, %g ms a transfer, as given", d.KVTransferGBps, d.KVTransferLatencyMs)
		} else {
			via = fmt.Sprintf("%s's bus bandwidth %.0f GB/s and latency %.3f ms", l.DisaggFabric, d.KVTransferGBps, d.KVTransferLatencyMs)
		}
		notes = append(notes, fmt.Sprintf("prefill/decode disaggregation: a replica is %d prefill engines of %d GPUs and %d decode engines of %d, each pool's requests spread %s; a prompt's KV cache (%.0f KiB a token) goes from prefill to decode over %s; TTFT is the prefill's queue and prefill and the transfer, TPOT the decode pool's (models/serving.SteadyLLMDisagg: within 5%% of the exact model on mean and p95 TTFT, TPOT and end-to-end latency from 30%% to 70%% of capacity)%s",
			d.PrefillReplicas, d.Prefill.Engine.TP, d.DecodeReplicas, d.Decode.Engine.TP, d.Router, l.Config.Engine.Model.KVBytesPerToken()/1024, via, where))
	} else if e := &l.Config.Engine; e.PP > 1 {
		note, err := pipelineEngine(e, &cfg, b, gpu)
		if err != nil {
			return cfg, nil, s.errAt(at+".leaderWorker", "%v", err)
		}
		notes = append(notes, note)
	} else if cfg.PodsPerReplica > 1 {
		ar, f, scale, err := groupAllReduce(servicePools(b.Config.Pools, cfg.Constraints, cfg.Pod), b.Config.Fabrics, gpu, tp, int(cfg.Pod.GPUs))
		if err != nil {
			return cfg, nil, s.errAt(at+".leaderWorker", "%v", err)
		}
		l.Config.Engine.AllReduce = ar
		notes = append(notes, groupNote(&cfg, tp, f, scale))
	} else if tp > 1 {
		f := llmFabric(gpu)
		l.Config.Engine.AllReduce = serving.TPAllReduce(f, tp)
		notes = append(notes, fmt.Sprintf("tensor parallel %d: two all-reduces a layer priced on %s (%.0f us + bytes at %.0f GB/s bus bandwidth)", tp, f.Name, f.AlphaUS, f.BusBWGBps))
	}
	if c := l.Config; sticky {
		g := c.PrefixCacheBlocks / int64(max(c.PrefixHitTokens/c.BlockSize, 1))
		notes = append(notes, fmt.Sprintf("prefix caching (vLLM's automatic prefix caching) behind the llm-d picker: each prompt's first %d tokens (the prefix's full blocks of %d) are found cached; the picker keeps each of the %d prefixes on the replica it first sent it to (its prefix score, 3 x the prefix's share of a prompt, outweighs the queue score's 2), so a replica holds and serves only its own prefixes: with no more prefixes than c ready replicas one each (the replicas without one serve nothing), with more as the picker's first placements spread them, each prefix's first request to the replica with the fewest outstanding (unevenly, but less than at random: the busiest replica holds more than %d/c); the service's capacity is its expected busiest replica's (models/serving.PrefixAwareCapacity); held within 5%% of the exact routed model's mean and p95 TTFT, TPOT and end-to-end latency with no more prefixes than replicas from 10%% to 80%% of capacity, and with more of the exact model's averaged over seeds from 30%% to 70%% but for three figures of up to 11%%; a prefix's first request (a miss) is not counted",
			c.PrefixHitTokens, c.BlockSize, g, g))
	} else if c.PrefixHitTokens > 0 || v.LLM.Prefix != nil {
		where := "every replica holds the %d prefixes' %d blocks, as requests spread at random reach them all"
		if l.Disagg != nil {
			where = "every prefill engine holds the %d prefixes' %d blocks and skips their prefill; the KV cache sent to a decode engine is the whole prompt's (prefix included), which the decode engine holds as its own"
		}
		notes = append(notes, fmt.Sprintf("prefix caching (vLLM's automatic prefix caching): each prompt's first %d tokens (the prefix's full blocks of %d) are found cached; "+where+"; a prefix's first request on a replica (a miss) is not counted",
			c.PrefixHitTokens, c.BlockSize, c.PrefixCacheBlocks/int64(max(c.PrefixHitTokens/c.BlockSize, 1)), c.PrefixCacheBlocks))
	}
	x := &services.LLM{Config: l.Config, Input: l.Input, Output: l.Output, Disagg: l.Disagg}
	if sl := v.LLM.SLO; sl != nil {
		if sl.TTFT != nil {
			x.TTFTSLOMs = float64(sl.TTFT.Millis())
		}
		if sl.TPOT != nil {
			x.TPOTSLOMs = float64(sl.TPOT.Millis())
		}
	}
	if x.CapacityPerReplica, err = s.cache.llmCapacity(x); err != nil {
		return cfg, nil, s.errAt(la, "%v", err)
	}
	spec := services.Spec{Name: v.Name, Balancing: serving.Random, LLM: x}
	if router != nil {
		x.Router = router
		notes = append(notes, fmt.Sprintf("balancing %s: %s", router, llmRouterNotes[*router]))
	}
	blocks := l.Config.Blocks()
	if d := l.Disagg; d != nil {
		blocks = d.Decode.Blocks() * int64(d.DecodeReplicas)
	}
	notes = append(notes, fmt.Sprintf("LLM engine %s on %d %s (%s), KV cache %d blocks of %d tokens, up to %d requests and %d tokens a step: a replica serves up to %.1f requests/s of these lengths (the fast model's capacity)",
		l.Config.Engine.Model.Name, tp*max(l.Config.Engine.PP, 1), gpu, strings.TrimSpace(l.Config.Engine.GPU.Source), blocks, l.Config.BlockSize, l.Config.MaxNumSeqs, l.Config.MaxNumBatchedTokens, x.CapacityPerReplica))
	if t := v.LLM.RequestTrace; t != nil {
		var cut bool
		if spec.Load.Points, cut, err = LLMTraceLoad(l.Trace, t.binMs(), t.Loop, b.Config.Horizon); err != nil {
			return cfg, nil, s.errAt(la+".requestTrace", "%s: %v", t.Path, err)
		}
		notes = append(notes, llmTraceNote(t, l, b.Config.Horizon, cut))
	} else if spec.Load, err = s.serviceLoad(at+".load", &v.Load); err != nil {
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
	if x.Curve, err = s.cache.llmCurve(x, spec.Load.Floor()/float64(max(maxR, 1))); err != nil {
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
	if l.ModelLoadMs > 0 {
		cfg.ModelLoad = l.ModelLoadMs
		w := v.LLM.WeightLoad
		init := "no engine init given"
		if w.EngineInit != nil {
			init = "the engine's init " + w.EngineInit.Duration.String()
		}
		if n := cfg.PodsPerReplica; n > 1 && l.Disagg == nil {
			cfg.ModelLoad = groupModelLoad(l.WeightBytes, w, n)
			l.ModelLoadMs = cfg.ModelLoad
			init += fmt.Sprintf(", each of the group's %d pods reading its share at once", n)
		}
		notes = append(notes, fmt.Sprintf("model load %s a replica (every start and scale-up): %.2f GB of %s weights at %g GB/s and %s",
			(time.Duration(l.ModelLoadMs)*time.Millisecond).String(), l.WeightBytes/1e9, l.Config.Engine.Model.Name, *w.BandwidthGBps, init))
	}
	if cfg.ImagePull == 0 && cfg.ModelLoad == 0 {
		notes = append(notes, "no coldStart given: a replica serves as soon as it is bound")
	}
	b.Assumptions = appendOnce(b.Assumptions, LLMServingNote)
	return cfg, notes, nil
}

// llmTraceNote says how the cluster run serves a request trace.
func llmTraceNote(t *LLMTraceSpec, l LLMService, horizonMs int64, cut bool) string {
	last := l.Trace[len(l.Trace)-1].ArrivalMs
	bin := time.Duration(t.binMs()) * time.Millisecond
	span := time.Duration((int64(last)/t.binMs()+1)*t.binMs()) * time.Millisecond
	after := "no request arrives after it"
	switch {
	case t.Loop && horizonMs > 0:
		after = "it is replayed from the start after it (loop)"
	case t.Loop:
		after = "loop has no horizon to replay it to (the run goes until drained): no request arrives after it"
	}
	if cut {
		after = fmt.Sprintf("the horizon %s cuts it", time.Duration(horizonMs)*time.Millisecond)
	}
	return fmt.Sprintf("llm.requestTrace %s: %d requests over %s; the load is their count in each bin of %s over its length (requests spread as a Poisson stream within a bin), from the run's start; %s; prompt and output lengths the trace's own (means %.1f and %.1f tokens)",
		t.Path, len(l.Trace), span, bin, after, l.Input.Mean, l.Output.Mean)
}

// llmRouter reads an LLM service's balancing: random (a Kubernetes
// Service; nil) or a gateway's router.
func llmRouter(b string) (*serving.Router, error) {
	if b == "" || b == "random" {
		return nil, nil
	}
	r, err := serving.ParseRouter(b)
	if err != nil {
		return nil, fmt.Errorf("%s: an LLM service's requests are spread at random (a Kubernetes Service) or by a gateway's round-robin, least-outstanding or prefix-aware router", Quote(b))
	}
	return &r, nil
}

// llmRouterNotes say what each router does to a replica in the fast
// model (serving.SteadyLLMRouted).
var llmRouterNotes = map[serving.Router]string{
	serving.RoundRobin:       "a replica gets every c-th request of c ready (Erlang-c gaps): fewer prompts gather in a step, and its decoding requests vary less (Whitt's peakedness of a GI/G/infinity count); held within 10% of the exact routed model's mean and p95 TTFT and 5% of TPOT and end-to-end latency on 2 to 8 replicas at 27-80% of capacity",
	serving.LeastOutstanding: "a request joins the replica with the fewest outstanding: each holds a c-th of the service's decoding requests (variance d/c, the pooled bound), its arrivals as bursty as at random (they follow its steps' completions); held within 10% of the exact routed model's mean and p95 TTFT and 5% of TPOT and end-to-end latency on 2 to 8 replicas at 27-80% of capacity",
	serving.PrefixAware:      "the llm-d endpoint picker's default scoring without shared prefixes is its queue scorer, ties to the fewest outstanding: arrivals spread as round robin's, decoding requests as least outstanding's; held within 10% of the exact routed model's mean and p95 TTFT and 5% of TPOT and end-to-end latency on 2 to 8 replicas at 27-80% of capacity",
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
	ints("pipelineParallel", "--pipeline-parallel-size", &l.PipelineParallel, a.PipelineParallel)
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

// pipelineEngine prices a pipeline-parallel replica's communication: each
// stage's tensor-parallel all-reduces on the GPUs' NVLink fabric where a
// stage fits a pod's GPUs (across pods as groupAllReduce prices a group's
// otherwise), and a micro-batch's activations sent from stage to stage
// over the network of the pools the replica runs on (groupAllReduce's
// choice: the slowest, its bandwidth scaled by the share of a node's
// rails a pod uses) when the stages are pods of a group, or over NVLink
// in one pod; the note says so.
func pipelineEngine(e *serving.Engine, cfg *sim.ServiceConfig, b *Built, gpu string) (string, error) {
	pods, gpus := max(cfg.PodsPerReplica, 1), int(cfg.Pod.GPUs)
	pools := servicePools(b.Config.Pools, cfg.Constraints, cfg.Pod)
	intra := llmFabric(gpu)
	ar := fmt.Sprintf("on %s", intra.Name)
	switch {
	case e.TP > gpus:
		f, fab, scale, err := groupAllReduce(pools, b.Config.Fabrics, gpu, e.TP, gpus)
		if err != nil {
			return "", err
		}
		e.AllReduce = f
		ar = fmt.Sprintf("across pods on %s (%.0f us + bytes at %.0f GB/s bus bandwidth)", fab.Name, fab.AlphaUS, fab.BusBWGBps*scale)
	case e.TP > 1:
		e.AllReduce = serving.TPAllReduce(intra, e.TP)
		ar = fmt.Sprintf("on %s (%.0f us + bytes at %.0f GB/s bus bandwidth)", intra.Name, intra.AlphaUS, intra.BusBWGBps)
	default:
		ar = "none (one GPU a stage)"
	}
	send, scale := intra, 1.0
	if pods > 1 {
		_, f, sc, err := groupAllReduce(pools, b.Config.Fabrics, gpu, 2, gpus)
		if err != nil {
			return "", err
		}
		send, scale = f, sc
	}
	e.Send = serving.PPSend(send, scale)
	where := fmt.Sprintf("a replica is one pod of %d GPUs", gpus)
	if pods > 1 {
		where = fmt.Sprintf("a replica is a LeaderWorkerSet group of %d pods of %d GPUs (a leader and %d workers), placed as one gang, ready when every pod is, made again whole when a pod is lost or preempted (RecreateGroupOnPodRestart)", pods, gpus, pods-1)
	}
	stages := e.Stages()
	return fmt.Sprintf("%s; its engine is pipeline parallel %d (layers %s a stage, vLLM's split) of tensor parallel %d, each stage's two all-reduces a layer %s, a micro-batch's activations sent from stage to stage on %s (%.0f us + bytes at %.0f GB/s); %d batches in flight (vLLM's max_concurrent_batches), a request's token a pass through every stage",
		where, e.PP, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(stages)), ","), "[]"), e.TP, ar, send.Name, send.AlphaUS, send.BusBWGBps*scale, e.PP), nil
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

// withInferencePool is v behind the InferencePool that routes to its
// replicas: the llm-d endpoint picker's default scoring
// (serving.PrefixAware) unless the scenario's balancing says otherwise
// (the scenario wins, and the note says so).
func withInferencePool(v *ServiceSpec, wl *kubesvc.Workload) (*ServiceSpec, string) {
	p := wl.InferencePool
	where := fmt.Sprintf("%s, selecting %s on port %d through endpoint picker %s:%d (%s)", p.Where(), p.SelectorText(), p.TargetPort, p.EndpointPicker, p.EndpointPickerPort, p.FailureMode)
	if v.Balancing != "" && v.Balancing != serving.PrefixAware.String() {
		return v, fmt.Sprintf("%s: the scenario's balancing %s over the endpoint picker's prefix-aware scoring (the scenario wins)", where, v.Balancing)
	}
	w := *v
	w.Balancing = serving.PrefixAware.String()
	return &w, where + ": requests routed by the endpoint picker's default scoring, balancing prefix-aware"
}

// withManifestDisagg is v with llm.disaggregation's pools from wl's
// prefill/decode disaggregation (an LLMInferenceService's spec.prefill):
// its prefill engines and their tensor parallel, its decode engines, each
// engine a pod (placement pods); a pool the scenario gives wins, and a
// note says so.
func withManifestDisagg(v *ServiceSpec, wl *kubesvc.Workload) (*ServiceSpec, []string) {
	m := wl.Disagg
	w, l := *v, *v.LLM
	w.LLM = &l
	d := LLMDisaggSpec{Placement: DisaggPods}
	if l.Disaggregation != nil {
		d = *l.Disaggregation
	}
	var over []string
	if d.Prefill == nil {
		d.Prefill = &LLMPoolSpec{Replicas: &m.Prefill, TensorParallel: &m.PrefillTP}
	} else {
		over = append(over, "llm.disaggregation.prefill")
	}
	if d.Decode == nil {
		d.Decode = &LLMPoolSpec{Replicas: &m.Decode}
	} else {
		over = append(over, "llm.disaggregation.decode")
	}
	l.Disaggregation = &d
	notes := []string{fmt.Sprintf("%s %s (%s:%d): spec.prefill read as llm.disaggregation: %d prefill engines of %d GPUs and %d decode engines, each a pod, one replica", wl.Kind, wl.Name, wl.File, wl.Line, m.Prefill, m.PrefillTP, m.Decode)}
	if len(over) > 0 {
		notes = append(notes, "the scenario's "+strings.Join(over, " and ")+" over the manifest's pools (the scenario wins)")
	}
	return &w, notes
}

// disaggFitsNode says whether a disaggregated replica's gpus fit one node
// of every pool in pools, and the fewest GPUs a node of them has.
func disaggFitsNode(pools []cluster.PoolSpec, gpus int) (bool, int) {
	one, smallest := true, 0
	for i, p := range pools {
		if i == 0 || int(p.GPUsPerNode) < smallest {
			smallest = int(p.GPUsPerNode)
		}
		one = one && int(p.GPUsPerNode) >= gpus
	}
	return one, smallest
}

// disaggNetwork is the network a disaggregated replica's KV transfer
// takes when its engines' pods span nodes: the pools' (the slowest when
// several; default InfiniBand NDR 400, nccl-tests' fit on 2 nodes of 8
// H100), its bus bandwidth scaled by the share of a node's rails an
// engine of gpus uses (each GPU sends its shard of the KV cache over its
// own NIC), as a group's all-reduce is (groupAllReduce).
func disaggNetwork(pools []cluster.PoolSpec, fabrics map[string]models.Fabric, gpus int) (models.Fabric, float64, error) {
	if fabrics == nil {
		fabrics = models.DefaultFabrics()
	}
	var net models.Fabric
	scale, found := 1.0, false
	for _, p := range pools {
		name := p.Network
		if name == "" {
			name = models.DefaultNetwork
		}
		f, ok := fabrics[name]
		if !ok {
			return net, 0, fmt.Errorf("pool %s: network fabric %q is not in the run's fabrics", p.Name, name)
		}
		sc := math.Min(1, float64(gpus)/float64(f.RanksPerNode()))
		if !found || f.BusBWGBps*sc < net.BusBWGBps*scale {
			net, scale, found = f, sc, true
		}
	}
	if !found {
		net = fabrics[models.DefaultNetwork]
		scale = math.Min(1, float64(gpus)/float64(net.RanksPerNode()))
	}
	return net, scale, nil
}
