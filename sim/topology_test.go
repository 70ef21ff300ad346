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

func runTraining(t *testing.T, pools []cluster.PoolSpec, job cluster.JobSpec, score string) sim.JobRecord {
	t.Helper()
	prof := plugins.Default()
	prof[4].Name = score
	res, err := sim.Run(sim.Config{Pools: pools, Plugins: prof, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}},
		Queue: scheduler.QueueConfig{Backfill: true}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	return res.Jobs[0]
}

// The 16-GPU job of TestPackedAgainstSpreadTraining (4 pods x 4 GPUs, 100
// steps of 1 s, 14 GB of gradients) on 4 nodes of 8 H100s in racks of 2
// nodes, one block (a 2:1 spine by default). S x 2 x 15/16 = 26.25e9 bytes.
//
//	packed: nodes 0 and 1, one rack, all 8 rails of each: 155.66 GB/s,
//	  50 us + 26.25e9 / 155.66e9 = 168.69 ms (the flat model's figure);
//	  100 x (1000 + 168.69) ms = 116.869 s;
//	spread: 4 nodes over both racks, 4 GPUs a node (half the rails)
//	  through the 2:1 spine: 155.66 x 0.5 / 2 = 38.915 GB/s,
//	  50 us + 26.25e9 / 38.915e9 = 674.60 ms; 100 x 1674.597 = 167.460 s
//	  (flat, without racks, it was 337.32 ms and 133.732 s).
func TestTrainingPricedByRacksSpanned(t *testing.T) {
	job := cluster.JobSpec{Name: "llm", Queue: "q", Replicas: 4, Duration: 100 * sim.Second,
		Pod:      cluster.PodSpec{GPUs: 4, MilliCPU: 1000, MemoryMiB: 1024},
		Training: &cluster.Training{Steps: 100, ComputePerStep: sim.Second, GradientBytes: 14_000_000_000}}
	pools := []cluster.PoolSpec{{Name: "h100", GPUModel: "H100-80GB", Nodes: 4, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20,
		Topology: topology.Spec{NodesPerRack: 2}}}
	packed, spread := runTraining(t, pools, job, "MostAllocated"), runTraining(t, pools, job, "LeastAllocated")
	require.Equal(t, "rack", packed.Step().Level)
	require.Equal(t, "block", spread.Step().Level)
	require.Equal(t, "ib-ndr-400", spread.Step().Fabric)
	require.InDelta(t, 168.69, packed.Step().CommMs, 0.01)
	require.InDelta(t, 674.60, spread.Step().CommMs, 0.01)
	require.Equal(t, sim.Time(116869), packed.End-packed.Start)
	require.Equal(t, sim.Time(167460), spread.End-spread.Start)
}

// A 64-GPU job (16 pods x 4 GPUs) on GB200 NVL72 trays: inside one NVLink
// domain it runs on the NVL72 fabric (835 GB/s busbw, 39.67 us):
// S x 2 x 63/64 = 27.5625e9 bytes, 39.67 us + 27.5625e9 / 835e9 = 33.05 ms;
// 100 x 1033.0487 ms = 103.305 s. The same trays as a flat pool (no
// domain) go over the rails with 4 of 8 GPUs a node:
// 50 us + 27.5625e9 / 77.83e9 = 354.19 ms.
func TestTrainingInsideNVLinkDomain(t *testing.T) {
	job := cluster.JobSpec{Name: "llm", Queue: "q", Replicas: 16, Duration: 100 * sim.Second,
		Pod:      cluster.PodSpec{GPUs: 4, MilliCPU: 1000, MemoryMiB: 1024},
		Training: &cluster.Training{Steps: 100, ComputePerStep: sim.Second, GradientBytes: 14_000_000_000}}
	pool := cluster.PoolSpec{Name: "gb200", GPUModel: "GB200", Nodes: 36, GPUsPerNode: 4, MilliCPU: 72000, MemoryMiB: 1 << 20,
		Topology: topology.Spec{DomainGPUs: 72}}
	in := runTraining(t, []cluster.PoolSpec{pool}, job, "MostAllocated")
	require.Equal(t, "nvlink-domain", in.Step().Level)
	require.Equal(t, topology.NVL72, in.Step().Fabric)
	require.InDelta(t, 33.05, in.Step().CommMs, 0.01)
	require.Equal(t, sim.Time(103305), in.End-in.Start)

	pool.Topology = topology.Spec{}
	flat := runTraining(t, []cluster.PoolSpec{pool}, job, "MostAllocated")
	require.Equal(t, "", flat.Step().Level)
	require.InDelta(t, 354.19, flat.Step().CommMs, 0.01)
}

// Issue 28's three placements as simulated durations, for the job of
// TestTrainingPricedByRacksSpanned as 2 pods x 8 GPUs (every rail of a
// node: 155.66 GB/s) on nodes of 8 H100s, each pod on its own node.
// S x 2 x 15/16 = 26.25e9 bytes an all-reduce, 100 steps of 1 s:
//
//	one rack (2 nodes a rack): 50 us + 26.25e9 / 155.66e9 = 168.69 ms,
//	  100 x 1168.69 ms = 116.869 s;
//	two racks of one block (a 2:1 spine): 155.66 / 2 = 77.83 GB/s,
//	  50 us + 26.25e9 / 77.83e9 = 337.32 ms, 133.732 s;
//	two blocks (a 4:1 core): 155.66 / 4 = 38.915 GB/s,
//	  50 us + 26.25e9 / 38.915e9 = 674.60 ms, 167.460 s.
func TestTrainingPricedByLevelSpanned(t *testing.T) {
	job := cluster.JobSpec{Name: "llm", Queue: "q", Replicas: 2, Duration: 100 * sim.Second,
		Pod:      cluster.PodSpec{GPUs: 8, MilliCPU: 1000, MemoryMiB: 1024},
		Training: &cluster.Training{Steps: 100, ComputePerStep: sim.Second, GradientBytes: 14_000_000_000}}
	for _, c := range []struct {
		name  string
		spec  topology.Spec
		level string
		comm  float64
		dur   sim.Time
	}{
		{"one rack", topology.Spec{NodesPerRack: 2}, "rack", 168.69, 116869},
		{"two racks", topology.Spec{NodesPerRack: 1, RacksPerBlock: 2}, "block", 337.32, 133732},
		{"two blocks", topology.Spec{NodesPerRack: 1, RacksPerBlock: 1}, "zone", 674.60, 167460},
	} {
		pools := []cluster.PoolSpec{{Name: "h100", GPUModel: "H100-80GB", Nodes: 4, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20,
			Topology: c.spec}}
		rec := runTraining(t, pools, job, "MostAllocated")
		require.Equal(t, c.level, rec.Step().Level, c.name)
		require.Equal(t, "ib-ndr-400", rec.Step().Fabric, c.name)
		require.InDelta(t, c.comm, rec.Step().CommMs, 0.01, c.name)
		require.Equal(t, c.dur, rec.End-rec.Start, c.name)
	}
}
