package sim_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Reclaim waves: 10 spot nodes with exponential lifetimes (mean 2 h), no
// notice, each lost node relaunched at once, over 1,000 h. Every slot is
// always up (booting counts), so primary reclaims come at 10 x 0.5 = 5 an
// hour (memoryless: a victim's fresh clock changes nothing), 5,000 in
// all, and each takes each of the 9 other nodes at chance 0.3: 1 + 2.7
// nodes a reclaim, 18,500 interruptions. The count's standard deviation
// is sqrt(5,000 x E[(1+B)^2]) = sqrt(5,000 x (1.89 + 3.7^2)) = 279 with
// B ~ Binomial(9, 0.3); 5% is 925. Without a wave, 5,000 (5% is 250,
// the deviation 71).
func TestSpotReclaimWave(t *testing.T) {
	run := func(wave float64) int64 {
		spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
			Interruptions: capacity.Process{Lifetime: models.Exponential{MeanValue: 2}, Wave: wave}}}}
		res := simulateTo(t, 1000*hour, []cluster.PoolSpec{gpuPool("spot", 10, 0, 8)}, spec, gpuJob("x", 999*hour, hour, 1, 8, nil))
		return res.Pools[0].Capacity.Interrupted
	}
	alone, wave := run(0), run(0.3)
	t.Logf("interrupted: %d one at a time, %d in waves of chance 0.3", alone, wave)
	require.InEpsilon(t, 5000, float64(alone), 0.05)
	require.InEpsilon(t, 18500, float64(wave), 0.05)
}

// seq draws its values in order (one per node launched, in slot order).
type seq struct {
	next *int
	v    []float64
}

func (s seq) Sample(*rand.Rand) float64 { x := s.v[*s.next]; *s.next++; return x }
func (s seq) Mean() float64             { return s.v[0] }
func (s seq) CDF(float64) float64       { return 0 }
func (s seq) String() string            { return "seq" }

// With a notice, a wave's victims are noticed at the primary's moment:
// two nodes that would live 2 h and 3 h, a 2 min notice, not replaced.
// One at a time they are held 2:02 and 3:02 (5 1/15 node-hours); in a
// wave of chance 1 the second goes with the first at 2:00 and leaves at
// 2:02 as well (4 1/15 node-hours). Both count as interrupted either way.
func TestSpotReclaimWaveNotice(t *testing.T) {
	for _, c := range []struct {
		wave, nodeHours float64
	}{{0, 5 + 1.0/15}, {1, 4 + 1.0/15}} {
		spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Group: -1,
			Interruptions: capacity.Process{Lifetime: seq{new(int), []float64{2, 3}}, Wave: c.wave, Notice: 2 * mins}}}}
		res := simulateTo(t, 5*hour, []cluster.PoolSpec{gpuPool("spot", 2, 0, 8)}, spec, gpuJob("x", 0, 10*mins, 1, 8, nil))
		require.Equal(t, int64(2), res.Pools[0].Capacity.Interrupted)
		require.InDelta(t, c.nodeHours, res.Pools[0].Usage.NodeHours, 1e-9, "wave %g", c.wave)
	}
}

// A wave is a chance, and it follows drawn lifetimes.
func TestSpotReclaimWaveRefused(t *testing.T) {
	pools := []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}
	for _, p := range []capacity.Process{
		{RatePerHour: 0.5, Wave: 1.5},
		{Times: []cluster.Time{hour}, Wave: 0.3},
	} {
		s := capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Group: -1, Interruptions: p}}}
		require.ErrorContains(t, s.Validate(pools), "a reclaim wave is a chance from 0 to 1")
	}
}
