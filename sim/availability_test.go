package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// A spot pool of 2 nodes follows an availability trace of 30-min ticks,
// [2, 1, 1, 0, 2]: one node is reclaimed at 30 min, the other at 90, none
// comes back until the trace has room at 120, when both relaunch and are
// Ready at 130 (10 min provisioning). A 1 h job submitted at 100 waits for
// them: it runs 130-190. By hand the pool held 2 nodes for 30 min, 1 for
// 60, none for 30, then 2 from 120 to the end at 190: 1 + 1 + 0 + 2 x 70/60
// = 4.333 node-hours.
func TestAvailabilityTraceBoundsThePool(t *testing.T) {
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Available: []int32{2, 1, 1, 0, 2}, AvailableGap: 30 * mins}}}}
	res := simulate(t, []cluster.PoolSpec{gpuPool("spot", 2, 0, 8)}, spec, gpuJob("late", 100*mins, hour, 1, 8, nil))
	j := res.Jobs[0]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, [2]sim.Time{130 * mins, 190 * mins}, [2]sim.Time{j.Start, j.End})
	p := res.Pools[0]
	require.Equal(t, int64(2), p.Capacity.Interrupted)
	require.Equal(t, int64(2), p.Capacity.Launched)
	require.InDelta(t, 1+1+2*70.0/60, p.Usage.NodeHours, 1e-9)
}

// A running job loses its node when the trace drops to 0 at 30 min; the
// node comes back only when the trace does, at 60 (Ready at 70). The 45
// min job, without checkpoints, runs again from scratch: 70-115.
func TestAvailabilityTraceInterruptsAndHoldsBack(t *testing.T) {
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Available: []int32{1, 0, 1}, AvailableGap: 30 * mins}}}}
	res := simulate(t, []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}, spec, gpuJob("train", 0, 45*mins, 1, 8, nil))
	j := res.Jobs[0]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, 115*mins, j.End)
	require.Equal(t, int32(1), j.Disruptions)
	require.Equal(t, 30*mins, j.LostMs)
	require.Equal(t, int64(1), res.Pools[0].Capacity.Interrupted)
	require.Equal(t, int64(1), res.Pools[0].Capacity.Launched)
}

// A trace that starts below the pool's size starts the pool smaller, and
// the missing nodes come when it rises: 1 of 3 nodes at 0, 3 from 60 min
// (Ready at 70). Of three 1-node jobs at 0, two run one after the other on
// the one node (0-40, 40-80) and the third on a node the rise brought
// (70-110).
func TestAvailabilityTraceStartsSmall(t *testing.T) {
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Available: []int32{1, 1, 3}, AvailableGap: 30 * mins}}}}
	res := simulate(t, []cluster.PoolSpec{gpuPool("spot", 3, 0, 8)}, spec,
		gpuJob("a", 0, 40*mins, 1, 8, nil), gpuJob("b", 0, 40*mins, 1, 8, nil), gpuJob("c", 0, 40*mins, 1, 8, nil))
	ends := []sim.Time{}
	for _, j := range res.Jobs {
		ends = append(ends, j.End)
	}
	require.ElementsMatch(t, []sim.Time{40 * mins, 80 * mins, 110 * mins}, ends)
	require.Equal(t, int64(0), res.Pools[0].Capacity.Interrupted)
	require.Equal(t, int64(2), res.Pools[0].Capacity.Launched)
}
