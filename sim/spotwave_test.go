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
// always up (booting counts), so each node goes every 2 h on average
// whether in waves or not: 5,000 interruptions (sd 71 one at a time; 5%
// is 250). In waves of chance 0.3 a node's own clock is stretched
// 1 + 0.3 x 9 = 3.7 times: 5,000/3.7 = 1,351 primary reclaims
// (memoryless: a victim's fresh clock changes nothing), each taking
// 2.7 others on average: 3,649 victims, and the total stays about 5,000
// (its sd sqrt(1,351 x (1.89 + 3.7^2)) = 160; 5% is 250).
func TestSpotReclaimWave(t *testing.T) {
	run := func(wave float64) capacity.PoolStats {
		spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
			Interruptions: capacity.Process{Lifetime: models.Exponential{MeanValue: 2}, Wave: wave}}}}
		res := simulateTo(t, 1000*hour, []cluster.PoolSpec{gpuPool("spot", 10, 0, 8)}, spec, gpuJob("x", 999*hour, hour, 1, 8, nil))
		return res.Pools[0].Capacity
	}
	alone, wave := run(0), run(0.3)
	t.Logf("interrupted: %d one at a time; %d in waves of chance 0.3, %d of them victims", alone.Interrupted, wave.Interrupted, wave.WaveVictims)
	require.InEpsilon(t, 5000, float64(alone.Interrupted), 0.05)
	require.Zero(t, alone.WaveVictims)
	require.InEpsilon(t, 5000, float64(wave.Interrupted), 0.05)
	require.InEpsilon(t, 5000*2.7/3.7, float64(wave.WaveVictims), 0.08)
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
// two nodes that would live 2 h and 3 h, a 2 min notice, not replaced,
// over 7 h. One at a time they are held 2:02 and 3:02 (5 1/15
// node-hours). In a wave of chance 1 their clocks run 1 + 1 x 1 = 2 times
// slower (4 h and 6 h) and the second goes with the first at 4:00: both
// leave at 4:02 (8 1/15 node-hours). Both count as interrupted either way.
func TestSpotReclaimWaveNotice(t *testing.T) {
	for _, c := range []struct {
		wave, nodeHours float64
		victims         int64
	}{{0, 5 + 1.0/15, 0}, {1, 8 + 1.0/15, 1}} {
		spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Group: -1,
			Interruptions: capacity.Process{Lifetime: seq{new(int), []float64{2, 3}}, Wave: c.wave, Notice: 2 * mins}}}}
		res := simulateTo(t, 7*hour, []cluster.PoolSpec{gpuPool("spot", 2, 0, 8)}, spec, gpuJob("x", 0, 10*mins, 1, 8, nil))
		require.Equal(t, int64(2), res.Pools[0].Capacity.Interrupted)
		require.Equal(t, c.victims, res.Pools[0].Capacity.WaveVictims)
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
