package sim_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/validate"
)

const (
	sec  = sim.Second
	mins = sim.Minute
	hour = sim.Hour
)

func gpuPool(name string, nodes, maxNodes int, gpus int32) cluster.PoolSpec {
	return cluster.PoolSpec{Name: name, Nodes: nodes, MaxNodes: maxNodes, GPUsPerNode: gpus, MilliCPU: 96000, MemoryMiB: 1 << 20}
}

func gpuJob(name string, submit, work sim.Time, replicas, gpus int32, rec *cluster.Recovery) cluster.JobSpec {
	return cluster.JobSpec{Name: name, Queue: "q", Submit: submit, Duration: work, Replicas: replicas,
		Pod: cluster.PodSpec{GPUs: gpus, MilliCPU: 1000, MemoryMiB: 1024}, Recovery: rec}
}

func simulate(t *testing.T, pools []cluster.PoolSpec, spec *capacity.Spec, jobs ...cluster.JobSpec) *sim.Result {
	t.Helper()
	res, err := sim.Run(sim.Config{Seed: 1, Pools: pools, Capacity: spec, Workload: &sim.SliceSource{Jobs: jobs},
		TimelineInterval: 10 * mins, Queue: scheduler.QueueConfig{Backfill: true}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	return res
}

// One spot node, interrupted by a trace at 50 min; the pool replaces it in
// 10 min. The 2 h job checkpoints every 20 min of work (2 min to write, 3
// min to restore). By hand: writes end at 22 and 44 min, so at 50 min the
// job has 40 min saved and loses the 6 min since; it restarts at 60 min,
// restores (3), runs the 80 min left with 3 writes (6): ends at 149 min.
func TestCheckpointLossWithoutNotice(t *testing.T) {
	rec := &cluster.Recovery{CheckpointInterval: 20 * mins, CheckpointCost: 2 * mins, RestoreCost: 3 * mins, BackoffLimit: 6, IgnoreDisruptions: true}
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Times: []sim.Time{50 * mins}}}}}
	res := simulate(t, []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}, spec, gpuJob("train", 0, 2*hour, 1, 8, rec))
	j := res.Jobs[0]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, [2]sim.Time{0, 149 * mins}, [2]sim.Time{j.Start, j.End})
	require.Equal(t, int32(2), j.Attempts)
	require.Equal(t, int32(1), j.Disruptions)
	require.Equal(t, int32(0), j.Failures, "podFailurePolicy ignores the disruption")
	require.Equal(t, 9*mins, j.LostMs, "6 min since the last checkpoint + the 3 min restore")
	require.Equal(t, 10*mins, j.CheckpointMs, "2 writes before the loss, 3 after")
	require.Equal(t, int64(8000)*(50+89)*mins, j.HeldMilliMs)
	use := slices.Collect(j.Usage())
	require.Len(t, use, 1)
	require.Equal(t, int64(8000)*(50+89)*mins, use[0].Held[sim.ResGPU])
	require.Equal(t, int64(8000)*9*mins, use[0].Lost[sim.ResGPU])
	require.Equal(t, int64(8000)*10*mins, use[0].Checkpoint[sim.ResGPU])
	// A node was present (and paid for) all along: the replacement from
	// its launch at 50 min, booting included.
	p := res.Pools[0]
	require.Equal(t, int64(1), p.Capacity.Interrupted)
	require.Equal(t, int64(1), p.Capacity.Launched)
	require.InDelta(t, 149.0/60, p.Usage.NodeHours, 1e-9)
	require.Equal(t, int64(8000)*149*mins, p.SuppliedMilliMs)
}

// The same with a 2 min notice: the job writes everything it computed
// (46 min of work) by 52 min; the node goes at 52 and its replacement is
// Ready at 62; the job restores (3) and runs the 74 min left with 3 writes
// (6): it ends at 145 min and loses only the restore.
func TestCheckpointOnNotice(t *testing.T) {
	rec := &cluster.Recovery{CheckpointInterval: 20 * mins, CheckpointCost: 2 * mins, RestoreCost: 3 * mins, BackoffLimit: 6, IgnoreDisruptions: true}
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Times: []sim.Time{50 * mins}, Notice: 2 * mins}}}}
	res := simulate(t, []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}, spec, gpuJob("train", 0, 2*hour, 1, 8, rec))
	j := res.Jobs[0]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, 145*mins, j.End)
	require.Equal(t, 3*mins, j.LostMs)
	require.Equal(t, 12*mins, j.CheckpointMs)
	require.Equal(t, int64(1), res.Stats.Disruptions[capacity.CauseSpot])
}

// Without a podFailurePolicy a disruption counts: with backoffLimit 0 the
// job fails at the first; with the default it comes back after the Job
// controller's 10 s backoff (the pool replaces nodes at once here).
func TestBackoffLimitAndDelay(t *testing.T) {
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Replace: true, Group: -1,
		Interruptions: capacity.Process{Times: []sim.Time{30 * mins}}}}}
	pools := []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}
	res := simulate(t, pools, spec, gpuJob("fragile", 0, hour, 1, 8, &cluster.Recovery{BackoffLimit: 0}))
	j := res.Jobs[0]
	require.Equal(t, sim.Failed, j.Outcome)
	require.Equal(t, 30*mins, j.End)
	require.Contains(t, j.Diagnosis(), "BackoffLimitExceeded: 1 failures (the last a spot interruption) with a backoff limit of 0")
	require.Equal(t, 30*mins, j.LostMs, "no checkpoints: all its work is lost")

	res = simulate(t, pools, spec, gpuJob("default", 0, hour, 1, 8, nil))
	j = res.Jobs[0]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, int32(1), j.Failures)
	require.Equal(t, 30*mins+10*sec+hour, j.End, "restarts from scratch after the 10 s backoff")
}

// A cluster-autoscaler group scales from zero: the job's pod waits while a
// node provisions (5 min), runs 1 h, and the empty node goes after the
// 10 min scale-down-unneeded time: 75 min of one 8-GPU node.
func TestAutoscalerScalesUpAndDown(t *testing.T) {
	spec := &capacity.Spec{
		Pools:  []capacity.Pool{{Provisioning: 5 * mins, Group: 0}},
		Groups: []capacity.Group{{Name: "ca", Kind: capacity.Autoscaler, Pools: []int32{0}, MaxNodes: 2, ScaleDownUnneeded: 10 * mins, ScaleDownDelayAfterAdd: 10 * mins}},
	}
	pools := []cluster.PoolSpec{gpuPool("ca", 0, 2, 8)}
	res := simulate(t, pools, spec, gpuJob("a", 0, hour, 1, 8, nil), gpuJob("b", 0, 2*hour, 1, 8, nil), gpuJob("c", 0, hour, 1, 8, nil))
	tm := map[string][2]sim.Time{}
	for _, j := range res.Jobs {
		tm[j.Name] = [2]sim.Time{j.Start, j.End}
	}
	// Both pods are seen pending at once: two nodes launch at 0.
	require.Equal(t, [2]sim.Time{5 * mins, 65 * mins}, tm["a"])
	require.Equal(t, [2]sim.Time{5 * mins, 125 * mins}, tm["b"])
	require.Equal(t, [2]sim.Time{65 * mins, 125 * mins}, tm["c"], "max 2 nodes: c waits for a's node")
	p := res.Pools[0]
	require.Equal(t, int64(2), p.Capacity.Launched)
	require.Equal(t, int32(2), p.Capacity.MaxPresent)
	// Both nodes run 5..125 min, then the run ends with the last job.
	require.InDelta(t, 2*(125.0)/60, p.Usage.NodeHours, 1e-9)
}

// A Karpenter-like NodePool over three offerings: spot first, then the
// cheapest per pod; a refused spot launch falls back to on-demand; the
// GPU limit holds.
func TestNodePoolChoosesSpotThenFallsBack(t *testing.T) {
	p4dSpot, p4dOD, g5Spot := gpuPool("p4d-spot", 0, 4, 8), gpuPool("p4d-od", 0, 4, 8), gpuPool("g5-spot", 0, 4, 4)
	spec := func(fail float64) *capacity.Spec {
		return &capacity.Spec{
			Pools: []capacity.Pool{
				{CapacityType: models.Spot, PricePerHour: 6.79, Provisioning: mins, Group: 0},
				{CapacityType: models.OnDemand, PricePerHour: 21.96, Provisioning: mins, Group: 0},
				{CapacityType: models.Spot, PricePerHour: 2.54, Provisioning: mins, Group: 0},
			},
			Groups: []capacity.Group{{Name: "gpu", Kind: capacity.NodePool, Pools: []int32{0, 1, 2}, MaxGPUs: 16, SpotLaunchFailure: fail}},
		}
	}
	pools := []cluster.PoolSpec{p4dSpot, p4dOD, g5Spot}
	res := simulate(t, pools, spec(0), gpuJob("eight", 0, hour, 1, 8, nil), gpuJob("four", 0, hour, 1, 4, nil))
	require.Equal(t, int32(0), res.Jobs[0].Pool, "8 GPUs: only p4d holds it; spot first")
	require.Equal(t, int32(2), res.Jobs[1].Pool, "4 GPUs: the g5 spot node is the cheapest per pod")
	require.Equal(t, mins, res.Jobs[0].Start)

	res = simulate(t, pools, spec(1), gpuJob("eight", 0, hour, 1, 8, nil))
	require.Equal(t, int32(1), res.Jobs[0].Pool, "spot refused: on-demand")
	require.Equal(t, int64(1), res.Pools[0].Capacity.SpotFallbacks)

	// 16 GPUs: two 8-GPU nodes; the third job waits for one to finish.
	res = simulate(t, pools, spec(0), gpuJob("a", 0, hour, 1, 8, nil), gpuJob("b", 0, hour, 1, 8, nil), gpuJob("c", 0, hour, 1, 8, nil))
	require.Equal(t, mins+hour, res.Jobs[2].Start)
	require.Equal(t, int32(2), res.Pools[0].Capacity.MaxPresent)
}

// WhenEmptyOrUnderutilized, swept every 5 min (consolidateAfter). A (6
// GPUs) and C (2) fill node 1, B (4) gets node 2, Ready at 1 min. When A
// leaves at 60 min, B, unchanged for 59 min, fits on node 1: the 60 min
// sweep evicts it (no checkpoint: 59 min lost), node 2 goes after the 30 s
// grace and B restarts on node 1 after its 10 s backoff.
func TestConsolidationMovesAnUnderusedNode(t *testing.T) {
	spec := &capacity.Spec{
		Pools: []capacity.Pool{{PricePerHour: 10, Provisioning: mins, Group: 0}},
		Groups: []capacity.Group{{Name: "gpu", Kind: capacity.NodePool, Pools: []int32{0}, MaxGPUs: 16,
			Consolidation: capacity.WhenEmptyOrUnderutilized, ConsolidateAfter: 5 * mins}},
	}
	pools := []cluster.PoolSpec{gpuPool("np", 1, 2, 8)}
	res := simulate(t, pools, spec, gpuJob("A", 0, hour, 1, 6, nil), gpuJob("B", 0, 4*hour, 1, 4, nil), gpuJob("C", 0, 4*hour, 1, 2, nil))
	b := res.Jobs[1]
	require.Equal(t, sim.Completed, b.Outcome)
	require.Equal(t, int32(2), b.Attempts)
	require.Equal(t, 59*mins, b.LostMs)
	require.Equal(t, 60*mins+10*sec+4*hour, b.End)
	require.Equal(t, int32(1), res.Jobs[2].Attempts)
	require.Equal(t, int64(1), res.Pools[0].Capacity.Consolidated)
	require.Equal(t, int64(1), res.Stats.Disruptions[capacity.CauseConsolidation])

	// With do-not-disrupt on B, node 1 qualifies 5 min after A left: C
	// moves to node 2 at 65 min, losing 65 min.
	keep := &cluster.Recovery{BackoffLimit: 6, DoNotDisrupt: true}
	res = simulate(t, pools, spec, gpuJob("A", 0, hour, 1, 6, nil), gpuJob("B", 0, 4*hour, 1, 4, keep), gpuJob("C", 0, 4*hour, 1, 2, nil))
	require.Equal(t, int32(1), res.Jobs[1].Attempts)
	c := res.Jobs[2]
	require.Equal(t, int32(2), c.Attempts)
	require.Equal(t, 65*mins, c.LostMs)
	require.Equal(t, 65*mins+10*sec+4*hour, c.End)
}
