package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// timeSliced is one node of 2 GPUs each advertised 4 times (8 devices),
// with 10% lost to context switches.
func timeSliced(t *testing.T) *Cluster {
	t.Helper()
	c, err := New([]PoolSpec{{Name: "ts", Nodes: 1, GPUsPerNode: 2, MilliCPU: 16000, MemoryMiB: 64 << 10, GPUModel: "A100",
		Sharing: Sharing{TimeSlicing: 4, SliceOverhead: 0.1}}})
	require.NoError(t, err)
	return c
}

// Replicas go to the least-shared GPU first: three one-device pods take
// GPU 0, GPU 1, then GPU 0 again; each of the two on GPU 0 runs at
// (1 - 0.1) / 2 = 0.45.
func TestGPUsSharersOfTimeSlicedGPUs(t *testing.T) {
	c := timeSliced(t)
	g := c.GPUs()
	require.Equal(t, 2, g.PhysGPUs())
	require.True(t, g.TimeSliced(0))
	pod := PodSpec{GPUs: 1}
	for range 3 {
		_, err := c.Allocate(0, 0, &pod, -1)
		require.NoError(t, err)
	}
	require.Equal(t, []int32{2, 1}, []int32{g.Sharers(0), g.Sharers(1)})
	require.InDelta(t, 0.45, g.SliceRate(0, g.Sharers(0)), 1e-12)
	require.Equal(t, 1.0, g.SliceRate(0, g.Sharers(1)), "alone on its GPU: full speed")
	// Devices 0-3 are GPU 0's replicas, 4-7 GPU 1's.
	require.Equal(t, []int32{0, 0, 1, 1}, []int32{g.PhysGPU(0, 0), g.PhysGPU(0, 3), g.PhysGPU(0, 4), g.PhysGPU(0, 7)})
}

// A pool's usage integrates what is present and what pods hold: 2 nodes
// of 32 cores for 2 h are 4 node-hours; a pod of 8 cores and 1 GiB held
// from 0.5 h to 1.5 h is 8000 milli-CPU-hours and 1024 MiB-hours.
func TestPoolUsageIntegrates(t *testing.T) {
	c := twoPools(t)
	pod := PodSpec{MilliCPU: 8000, MemoryMiB: 1024}
	const hour = Time(3600 * 1000)
	pl, err := c.Allocate(hour/2, 0, &pod, -1)
	require.NoError(t, err)
	require.NoError(t, c.Release(3*hour/2, pl, &pod))
	c.Advance(2 * hour)
	require.Equal(t, Usage{NodeHours: 4, MilliCPUHours: 8000, MemMiBHours: 1024}, c.Pools[0].Usage())
	_, supplied := c.Pools[0].Integrals()
	require.Equal(t, int64(8*MilliGPU)*int64(2*hour), supplied, "8 GPUs for 2 h")
}
