package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/validate"
)

// The same 16-GPU data-parallel job (4 pods x 4 GPUs, 100 steps of 1 s of
// compute, 14 GB of gradients) on 4 nodes of 8 H100s, with the default
// fabrics: NVSwitch/NVLS 479.70 GB/s busbw, 39.67 us; NDR InfiniBand
// 155.66 GB/s measured with 8 ranks per node, 50 us. An all-reduce of S
// bytes over n ranks takes alpha + S x 2(n-1)/n / busbw:
//
//	packed (MostAllocated): 2 nodes, 8 GPUs each: all rails,
//	  50 us + 14e9 x 1.875 / 155.66e9 = 168.69 ms a step;
//	spread (LeastAllocated): 4 nodes, 4 GPUs each: half the rails,
//	  50 us + 14e9 x 1.875 / 77.83e9 = 337.32 ms a step.
func TestPackedAgainstSpreadTraining(t *testing.T) {
	job := cluster.JobSpec{Name: "llm", Queue: "q", Replicas: 4, Duration: 100 * sim.Second,
		Pod:      cluster.PodSpec{GPUs: 4, MilliCPU: 1000, MemoryMiB: 1024},
		Training: &cluster.Training{Steps: 100, ComputePerStep: sim.Second, GradientBytes: 14_000_000_000}}
	pools := []cluster.PoolSpec{{Name: "h100", GPUModel: "H100-80GB", Nodes: 4, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20}}
	run := func(score string) sim.JobRecord {
		prof := plugins.Default()
		prof[4].Name = score
		res, err := sim.Run(sim.Config{Pools: pools, Plugins: prof, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}},
			Queue: scheduler.QueueConfig{Backfill: true}})
		require.NoError(t, err)
		require.NoError(t, validate.Invariants(res))
		return res.Jobs[0]
	}
	packed, spread := run("MostAllocated"), run("LeastAllocated")
	require.Equal(t, [3]int{2, 16, 8}, [3]int{packed.Step().Nodes, packed.Step().Ranks, packed.Step().GPUsPerNode})
	require.Equal(t, [3]int{4, 16, 4}, [3]int{spread.Step().Nodes, spread.Step().Ranks, spread.Step().GPUsPerNode})
	require.Equal(t, "ib-ndr-400", packed.Step().Fabric)
	require.InDelta(t, 168.69, packed.Step().CommMs, 0.01)
	require.InDelta(t, 337.32, spread.Step().CommMs, 0.01)
	// 100 steps: 116.869 s against 133.732 s.
	require.Equal(t, sim.Time(116869), packed.End-packed.Start)
	require.Equal(t, sim.Time(133732), spread.End-spread.Start)

	// On one node (2 pods of 4, 8 ranks: factor 2 x 7/8 = 1.75) it stays
	// on NVLS: 39.67 us + 14e9 x 1.75 / 479.70e9 = 51.11 ms.
	one := job
	one.Replicas = 2
	res, err := sim.Run(sim.Config{Pools: pools, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{one}}})
	require.NoError(t, err)
	st := res.Jobs[0].Step()
	require.Equal(t, "h100-nvls", st.Fabric)
	require.InDelta(t, 51.11, st.CommMs, 0.01)
}
