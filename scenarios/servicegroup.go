package scenarios

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Multi-pod replicas (spec.workload.services[].leaderWorker): a replica
// is a LeaderWorkerSet's group, a leader and size-1 workers, each pod the
// service's pod. The run places the group as one job of size pods (a
// gang under the Gang plugin, as a job's pods are), it serves once every
// pod is bound and the cold start has passed, and a pod lost or
// preempted makes the whole group again (LWS's default restart policy,
// RecreateGroupOnPodRestart). An LLM engine spans the group's GPUs:
// llm.tensorParallel x llm.pipelineParallel is pod.gpus x size. vLLM's
// multi-node serving runs pipeline parallel across the nodes
// (--pipeline-parallel-size, llm.pipelineParallel) and tensor parallel
// within each: the engine model (models/serving.Engine) prices each
// stage's all-reduces on NVLink and the activations sent between stages
// on the nodes' network (the pool's, default InfiniBand NDR 400:
// nccl-tests' fit on 2 nodes of 8 H100), PP batches in flight. A group
// engine without pipeline parallel is tensor parallel over all its GPUs,
// each layer's two all-reduces on the nodes' network.

// LeaderWorkerSpec is LeaderWorkerSet's spec.leaderWorkerTemplate: the
// pods of one replica and what happens when one of them goes.
type LeaderWorkerSpec struct {
	// Size is the pods of a replica, the leader included (LWS's size,
	// default 1).
	Size *int `json:"size,omitempty"`
	// RestartPolicy is LWS's: RecreateGroupOnPodRestart (the default; a
	// pod lost or preempted recreates the group). None (a pod restarted
	// alone, the rest of the group kept) is not modelled.
	RestartPolicy string `json:"restartPolicy,omitempty"`
}

// LWS's restart policy names.
const (
	RecreateGroupOnPodRestart = "RecreateGroupOnPodRestart"
	lwsRestartNone            = "None"
)

// maxReplicaPods bounds leaderWorker.size.
const maxReplicaPods = 1024

// validateLeaderWorker checks a service's leaderWorker block.
func (s validator) validateLeaderWorker(at string, v *ServiceSpec) error {
	lw := v.LeaderWorker
	if lw == nil {
		return nil
	}
	at += ".leaderWorker"
	if lw.Size != nil && (*lw.Size < 1 || *lw.Size > maxReplicaPods) {
		return s.errAt(at+".size", "%d: the pods of a replica are from 1 to %d", *lw.Size, maxReplicaPods)
	}
	switch lw.RestartPolicy {
	case "", RecreateGroupOnPodRestart:
	case lwsRestartNone:
		return s.errAt(at+".restartPolicy", "None (a pod restarted alone, its group kept) is not modelled: a replica's pods stop and start together (RecreateGroupOnPodRestart)")
	default:
		return s.errAt(at+".restartPolicy", "is %s; want %s", Quote(lw.RestartPolicy), RecreateGroupOnPodRestart)
	}
	if lw.Size != nil && *lw.Size > 1 && v.LLM == nil {
		return s.errAt(at+".size", "%d pods a replica: a batch server's replica is one pod; multi-pod replicas are LLM engines (give an llm block)", *lw.Size)
	}
	return nil
}

// replicaPods is the pods of one of service v's replicas: its
// leaderWorker.size, else its LeaderWorkerSet's (size of wl), else 1;
// and the field that says so.
func replicaPods(at string, v *ServiceSpec, wlSize int) (int, string) {
	if lw := v.LeaderWorker; lw != nil && lw.Size != nil {
		return *lw.Size, at + ".leaderWorker.size"
	}
	if wlSize > 1 {
		return wlSize, at + ".manifests"
	}
	return 1, at + ".leaderWorker.size"
}

// groupAllReduce prices a group's tensor-parallel all-reduce over tp GPUs
// spanning nodes, each pod's gpus on its own node: on the network of the
// pools the replicas can run on (the slowest when several), its bus
// bandwidth scaled by the share of a node's rails a pod uses, or on the
// GPUs' NVLink fabric where that is slower, as a training job's gradients
// are (sim.stepTime); the fabric's name is returned for the note.
func groupAllReduce(pools []cluster.PoolSpec, fabrics map[string]models.Fabric, gpu string, tp, gpus int) (func(bytes float64) float64, models.Fabric, float64, error) {
	if fabrics == nil {
		fabrics = models.DefaultFabrics()
	}
	intra, ok := fabrics[llmFabrics[gpu]]
	if !ok {
		intra = llmFabric(gpu)
	}
	var net models.Fabric
	scale := 1.0
	found := false
	for _, p := range pools {
		name := p.Network
		if name == "" {
			name = models.DefaultNetwork
		}
		f, ok := fabrics[name]
		if !ok {
			return nil, net, 0, fmt.Errorf("pool %s: network fabric %q is not in the run's fabrics", p.Name, name)
		}
		sc := math.Min(1, float64(gpus)/float64(f.RanksPerNode()))
		if !found || f.BusBWGBps*sc < net.BusBWGBps*scale {
			net, scale, found = f, sc, true
		}
	}
	f := intra
	if found && net.BusBWGBps*scale < intra.BusBWGBps {
		f = net
	} else {
		scale = 1
	}
	return func(bytes float64) float64 { return f.Time(models.AllReduce, int64(bytes), tp, scale) }, f, scale, nil
}

// groupModelLoad is a group's model load: each pod reads its share of the
// weights (its shards) at the bandwidth given, all at once, then the
// engine's init.
func groupModelLoad(weightBytes float64, w *LLMWeightLoadSpec, pods int) int64 {
	ms := int64(math.Round(weightBytes / float64(pods) / (*w.BandwidthGBps * 1e9) * 1e3))
	if w.EngineInit != nil {
		ms += w.EngineInit.Millis()
	}
	return ms
}

// groupNote says how a service's replicas of pods are placed and priced.
func groupNote(cfg *sim.ServiceConfig, tp int, f models.Fabric, scale float64) string {
	return fmt.Sprintf("a replica is a LeaderWorkerSet group of %d pods of %d GPUs (a leader and %d workers), placed as one gang, ready when every pod is, made again whole when a pod is lost or preempted (RecreateGroupOnPodRestart); its engine is tensor parallel %d over the group's GPUs (no pipeline parallel: llm.pipelineParallel), two all-reduces a layer priced on %s (%.0f us + bytes at %.0f GB/s bus bandwidth)",
		cfg.PodsPerReplica, cfg.Pod.GPUs, cfg.PodsPerReplica-1, tp, f.Name, f.AlphaUS, f.BusBWGBps*scale)
}
