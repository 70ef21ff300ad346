package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/validate"
)

func simulateTo(t *testing.T, horizon sim.Time, pools []cluster.PoolSpec, spec *capacity.Spec, jobs ...cluster.JobSpec) *sim.Result {
	t.Helper()
	res, err := sim.Run(sim.Config{Seed: 1, Horizon: horizon, Pools: pools, Capacity: spec, Workload: &sim.SliceSource{Jobs: jobs},
		TimelineInterval: hour, Queue: scheduler.QueueConfig{Backfill: true}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	return res
}

// A burst early in a 72 h run: once the last job ends the nodes it
// launched are still scaled down, consolidated or expired, and billed only
// until then, not to the horizon (they were billed 2 x 72 h = 144
// node-hours in the first case).
//   - cluster-autoscaler, scale-down after 10 min unneeded: as in
//     TestAutoscalerScalesUpAndDown both nodes are launched at 0 and empty
//     at 125 min; they go at 135 min: 2 x 135 min = 4.5 node-hours,
//     2 x 8 GPUs x 135 min supplied.
//   - Karpenter WhenEmpty, consolidateAfter 30 min: one node launched at 0,
//     Ready at 1 min, the job runs 1..61 min, the node goes at 91 min.
//   - Karpenter without consolidation, expireAfter 2 h: the node lives to
//     2 h, is drained with the 30 s grace and goes at 2 h 30 s; nothing
//     waits, so nothing is launched again.
func TestNodesLeaveAfterTheLastJob(t *testing.T) {
	const horizon = 72 * hour
	ca := &capacity.Spec{
		Pools:  []capacity.Pool{{Provisioning: 5 * mins, Group: 0}},
		Groups: []capacity.Group{{Name: "ca", Kind: capacity.Autoscaler, Pools: []int32{0}, MaxNodes: 2, ScaleDownUnneeded: 10 * mins, ScaleDownDelayAfterAdd: 10 * mins}},
	}
	res := simulateTo(t, horizon, []cluster.PoolSpec{gpuPool("ca", 0, 2, 8)}, ca,
		gpuJob("a", 0, hour, 1, 8, nil), gpuJob("b", 0, 2*hour, 1, 8, nil), gpuJob("c", 0, hour, 1, 8, nil))
	require.Equal(t, horizon, res.End)
	p := res.Pools[0]
	require.Equal(t, 125*mins, res.Jobs[1].End)
	require.Equal(t, int64(2), p.Capacity.ScaledDown)
	require.InDelta(t, 4.5, p.Usage.NodeHours, 1e-9)
	require.Equal(t, int64(2*8*1000)*135*mins, p.SuppliedMilliMs)
	require.Equal(t, int64(8*1000)*4*hour, p.AllocatedMilliMs)

	np := func(consolidation string, after, expire sim.Time) *capacity.Spec {
		return &capacity.Spec{
			Pools: []capacity.Pool{{CapacityType: models.OnDemand, PricePerHour: 21.96, Provisioning: mins, Group: 0}},
			Groups: []capacity.Group{{Name: "gpu", Kind: capacity.NodePool, Pools: []int32{0}, MaxGPUs: 16,
				Consolidation: consolidation, ConsolidateAfter: after, ExpireAfter: expire}},
		}
	}
	res = simulateTo(t, horizon, []cluster.PoolSpec{gpuPool("np", 0, 2, 8)}, np(capacity.WhenEmpty, 30*mins, 0), gpuJob("x", 0, hour, 1, 8, nil))
	require.Equal(t, [2]sim.Time{mins, 61 * mins}, [2]sim.Time{res.Jobs[0].Start, res.Jobs[0].End})
	require.InDelta(t, 91.0/60, res.Pools[0].Usage.NodeHours, 1e-9)
	require.Equal(t, int64(1), res.Pools[0].Capacity.Consolidated)

	res = simulateTo(t, horizon, []cluster.PoolSpec{gpuPool("np", 0, 2, 8)}, np("", 0, 2*hour), gpuJob("x", 0, hour, 1, 8, nil))
	require.InDelta(t, 2+30.0/3600, res.Pools[0].Usage.NodeHours, 1e-9)
	require.Equal(t, int64(1), res.Pools[0].Capacity.Expired)
	require.Equal(t, int64(1), res.Pools[0].Capacity.Launched)
}
