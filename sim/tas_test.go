package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/validate"
)

// The job and cluster of TestTrainingPricedByRacksSpanned, scored
// LeastAllocated, which alone spreads the 4 pods over the 4 nodes (both
// racks: 674.60 ms an all-reduce, 167.460 s). Asking Kueue for one rack
// (podset-required-topology rack): racks 0 and 1 each hold 4 pods (2 a
// node), a tie broken by name, so rack 0: nodes 0 and 1 take 2 pods each,
// all 8 rails of each: 50 us + 26.25e9 / 155.66e9 = 168.69 ms, and
// 100 x (1000 + 168.69) ms = 116.869 s, the packed figure of that test.
func TestTASRackPricesTheAllReduceAtRack(t *testing.T) {
	job := cluster.JobSpec{Name: "llm", Queue: "q", Replicas: 4, Duration: 100 * sim.Second,
		Pod:         cluster.PodSpec{GPUs: 4, MilliCPU: 1000, MemoryMiB: 1024},
		Training:    &cluster.Training{Steps: 100, ComputePerStep: sim.Second, GradientBytes: 14_000_000_000},
		Constraints: &cluster.Constraints{TAS: &cluster.TASRequest{Mode: topology.TASRequired, Level: cluster.LabelTopologyRack}}}
	pools := []cluster.PoolSpec{{Name: "h100", GPUModel: "H100-80GB", Nodes: 4, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20,
		Topology: topology.Spec{NodesPerRack: 2}}}
	rec := runTraining(t, pools, job, "LeastAllocated")
	require.Equal(t, "rack", rec.Step().Level)
	require.InDelta(t, 168.69, rec.Step().CommMs, 0.01)
	require.Equal(t, sim.Time(116869), rec.End-rec.Start)

	job.Constraints = nil
	spread := runTraining(t, pools, job, "LeastAllocated")
	require.Equal(t, "block", spread.Step().Level)
	require.Equal(t, sim.Time(167460), spread.End-spread.Start)
}

// Waits against locality: 4 nodes of 8 GPUs in racks of 2; four 4-GPU
// fillers at time 0 go one a node (LeastAllocated), those on rack 0 for
// 1 h, those on rack 1 for 2 h. A job of 3 pods x 4 GPUs at 1 s asks for
// one rack: each rack holds 2 of its pods (4 GPUs free a node), so under
// required it waits until rack 0 empties at 1 h and starts then, in rack
// 0; under preferred Kueue goes up to the block (4 pods >= 3) and it
// starts at 1 s across both racks.
func TestTASRequiredWaitsForARack(t *testing.T) {
	filler := func(name string, d sim.Time) cluster.JobSpec {
		return cluster.JobSpec{Name: name, Queue: "q", Replicas: 1, Duration: d, Pod: cluster.PodSpec{GPUs: 4, MilliCPU: 1000, MemoryMiB: 1024}}
	}
	run := func(mode topology.TASMode) sim.JobRecord {
		jobs := []cluster.JobSpec{filler("f0", sim.Hour), filler("f1", sim.Hour), filler("f2", 2*sim.Hour), filler("f3", 2*sim.Hour),
			{Name: "tas", Queue: "q", Submit: sim.Second, Replicas: 3, Duration: 10 * sim.Minute, Pod: cluster.PodSpec{GPUs: 4, MilliCPU: 1000, MemoryMiB: 1024},
				Constraints: &cluster.Constraints{TAS: &cluster.TASRequest{Mode: mode, Level: cluster.LabelTopologyRack}}}}
		prof := plugins.Default()
		prof[4].Name = "LeastAllocated"
		res, err := sim.Run(sim.Config{Pools: []cluster.PoolSpec{{Name: "h100", GPUModel: "H100-80GB", Nodes: 4, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20,
			Topology: topology.Spec{NodesPerRack: 2}}}, Plugins: prof, Workload: &sim.SliceSource{Jobs: jobs}, Queue: scheduler.QueueConfig{Backfill: true}})
		require.NoError(t, err)
		require.NoError(t, validate.Invariants(res))
		for _, j := range res.Jobs[:4] {
			require.Equal(t, sim.Time(0), j.Start, j.Name)
		}
		return res.Jobs[4]
	}
	req := run(topology.TASRequired)
	require.Equal(t, sim.Completed, req.Outcome)
	require.Equal(t, sim.Hour, req.Start)
	pref := run(topology.TASPreferred)
	require.Equal(t, sim.Second, pref.Start)
}
