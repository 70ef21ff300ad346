package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// A spot node that lives 2 h and a capacity outage of 1 h after each
// reclaim (no notice; 10 min to provision). Job a (1.5 h) runs 0-1.5 h;
// job b (1 h, submitted at 1 h) starts at 1.5 h and loses its node at 2 h
// (30 min of work lost). The pool may relaunch only when the outage ends,
// at 3 h (not at once, as without an outage): the node is Ready at
// 3:10 and b runs again 3:10-4:10. By hand the pool held a node 0-2 h and
// from 3 h to the end at 4:10: 2 + 7/6 node-hours.
func TestSpotOutageHoldsTheRelaunch(t *testing.T) {
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Lifetime: models.Constant{Value: 2}, Outage: models.Constant{Value: 1}}}}}
	res := simulate(t, []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}, spec,
		gpuJob("a", 0, 90*mins, 1, 8, nil), gpuJob("b", hour, hour, 1, 8, nil))
	a, b := res.Jobs[0], res.Jobs[1]
	require.Equal(t, 90*mins, a.End)
	require.Equal(t, sim.Completed, b.Outcome)
	require.Equal(t, 250*mins, b.End)
	require.Equal(t, 30*mins, b.LostMs)
	p := res.Pools[0]
	require.Equal(t, int64(1), p.Capacity.Interrupted)
	require.Equal(t, int64(1), p.Capacity.Launched)
	require.InDelta(t, 2+7.0/6, p.Usage.NodeHours, 1e-9)

	// Without the outage the node is relaunched at once (Ready at 2:10)
	// and b ends at 3:10.
	spec.Pools[0].Interruptions.Outage = nil
	res = simulate(t, []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}, spec,
		gpuJob("a", 0, 90*mins, 1, 8, nil), gpuJob("b", hour, hour, 1, 8, nil))
	require.Equal(t, 190*mins, res.Jobs[1].End)
}

// Heavy-tailed lifetimes as the spot traces show (Weibull, shape 0.617,
// scale 1.411 h: mean 2.049 h) on 10 nodes over 1,000 h, each reclaimed
// node replaced at once (10 min to provision, counted in its next life
// as the lifetime starts at launch): by renewal theory a slot is
// interrupted every 2.049 h, so about 10 x 1,000 / 2.049 = 4,880 times.
// The count's standard deviation is about sqrt(4,880) x 1.7 (the shape's
// coefficient of variation) = 119; 5% is 244.
func TestSpotWeibullLifetimesRate(t *testing.T) {
	life := models.Weibull{Shape: 0.617, Scale: 1.411}
	require.InDelta(t, 2.049, life.Mean(), 0.001)
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Lifetime: life}}}}
	res := simulateTo(t, 1000*hour, []cluster.PoolSpec{gpuPool("spot", 10, 0, 8)}, spec, gpuJob("x", 999*hour, hour, 1, 8, nil))
	require.InEpsilon(t, 10*1000/2.049, float64(res.Pools[0].Capacity.Interrupted), 0.05)
}

// A rate and a lifetime distribution are two answers to one question;
// an outage needs interruptions to follow.
func TestSpotLifetimeSpecRefused(t *testing.T) {
	pools := []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}
	both := capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Group: -1,
		Interruptions: capacity.Process{RatePerHour: 0.5, Lifetime: models.Constant{Value: 2}}}}}
	require.ErrorContains(t, both.Validate(pools), "a rate and a lifetime distribution both draw the interruptions")
	alone := capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Group: -1,
		Interruptions: capacity.Process{Outage: models.Constant{Value: 1}}}}}
	require.ErrorContains(t, alone.Validate(pools), "an outage follows an interruption")
}
