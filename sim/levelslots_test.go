package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// The case: a rack whose nodes each have 7 of 8 GPUs free is no
// free 8-GPU slot. Pool a: 4 nodes of 8 H100s, one rack; pool b: 4 more,
// 2 racks of 2 (2 racks, one block). A job of 4 pods x 1 GPU, each pod
// taking a node's whole CPU (one pod a node), pinned to pool a, runs 2 h.
// At the first bucket end (1 h): pool a has 4 x 7 = 28 free GPUs on no
// free node; pool b all 32 free on free nodes, in free racks (2 x 16) and
// its free block (32); pool a's block (its one rack) is not free.
// Free 60, on free nodes 32, in free racks 32, in free blocks 32. The job
// ends at 2 h, before the bucket ending then is closed: at 2 h and 3 h, 64
// everywhere.
func TestLevelSlotsCountOnlyWholeDomains(t *testing.T) {
	pool := func(name string, rack int32) cluster.PoolSpec {
		return cluster.PoolSpec{Name: name, GPUModel: "H100-80GB", Nodes: 4, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20,
			Labels: map[string]string{"pool": name}, Topology: topology.Spec{NodesPerRack: rack}}
	}
	job := cluster.JobSpec{Name: "j", Queue: "q", Replicas: 4, Duration: 2 * sim.Hour, Pod: cluster.PodSpec{GPUs: 1, MilliCPU: 96000, MemoryMiB: 1024},
		Constraints: &cluster.Constraints{NodeSelector: map[string]string{"pool": "a"}}}
	res, err := sim.Run(sim.Config{Pools: []cluster.PoolSpec{pool("a", 4), pool("b", 2)}, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}},
		Horizon: 3 * sim.Hour})
	require.NoError(t, err)
	ls := res.Timeline.Levels
	require.NotNil(t, ls)
	require.Equal(t, []int64{60, 64, 64}, ls.Free)
	require.Equal(t, []int64{32, 64, 64}, ls.Node)
	require.Equal(t, []int64{32, 64, 64}, ls.Rack)
	require.Equal(t, []int64{32, 64, 64}, ls.Block)

	// Without a topology on any pool nothing is sampled (reports stay as
	// they were).
	p := pool("a", 0)
	res, err = sim.Run(sim.Config{Pools: []cluster.PoolSpec{p}, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}}, Horizon: 3 * sim.Hour})
	require.NoError(t, err)
	require.Nil(t, res.Timeline.Levels)
}
