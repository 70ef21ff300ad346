package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/validate"
)

func runQueue(t *testing.T, q scheduler.QueueConfig, pools []cluster.PoolSpec, spec *capacity.Spec, jobs ...cluster.JobSpec) *sim.Result {
	t.Helper()
	res, err := sim.Run(sim.Config{Seed: 1, Pools: pools, Capacity: spec, Workload: &sim.SliceSource{Jobs: jobs},
		TimelineInterval: 10 * mins, Queue: q})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	return res
}

// A NodePool's limits, as Karpenter's scheduler spends them: a NodeClaim
// takes from what the limits leave the most any of its instance types
// could (subtractMax), so a batch may take more than one round. Limit 8
// GPUs; types of 8 GPUs ($10/h) and 4 GPUs ($4/h), 40 CPUs each; two pods
// of 4 GPUs and 30 CPUs (one a node). The first opens a NodeClaim of both
// types: 8 - 8 leaves 0 GPUs, so the second gets none at 0. The first
// launches on the 4-GPU type ($4), Ready at 5 min; then 8 - 4 leaves 4 and
// the second gets a 4-GPU node, Ready at 10 min. (Before: both 4-GPU nodes
// launched at 0, the limit checked node by node.)
func TestNodePoolLimitsAsKarpenterSpendsThem(t *testing.T) {
	pool := func(name string, gpus int32) cluster.PoolSpec {
		return cluster.PoolSpec{Name: name, MaxNodes: 2, GPUsPerNode: gpus, MilliCPU: 40000, MemoryMiB: 1 << 18}
	}
	spec := &capacity.Spec{
		Pools: []capacity.Pool{
			{PricePerHour: 10, Provisioning: 5 * mins, Group: 0},
			{PricePerHour: 4, Provisioning: 5 * mins, Group: 0},
		},
		Groups: []capacity.Group{{Name: "gpu", Kind: capacity.NodePool, Pools: []int32{0, 1}, MaxGPUs: 8}},
	}
	job := func(name string) cluster.JobSpec {
		return cluster.JobSpec{Name: name, Queue: "q", Duration: hour, Replicas: 1,
			Pod: cluster.PodSpec{GPUs: 4, MilliCPU: 30000, MemoryMiB: 1024}}
	}
	res := runQueue(t, scheduler.QueueConfig{Backfill: true}, []cluster.PoolSpec{pool("eight", 8), pool("four", 4)}, spec, job("a"), job("b"))
	require.Equal(t, []sim.Time{5 * mins, 10 * mins}, []sim.Time{res.Jobs[0].Start, res.Jobs[1].Start})
	require.Equal(t, []int32{1, 1}, []int32{res.Jobs[0].Pool, res.Jobs[1].Pool})
	require.Equal(t, int64(0), res.Pools[0].Capacity.Launched)
	require.Equal(t, int64(2), res.Pools[1].Capacity.Launched)
}

// Under strict FIFO, the pods behind a blocked head are pending all the
// same (kube-scheduler would have marked them unschedulable): Karpenter
// provisions them in the head's cycle, and what fits on a Ready node goes
// there. A fixed 8-GPU node runs a 4-GPU job from 0 to 2 h; at 1 min an
// 8-GPU job (the head), a 1-GPU job and another 8-GPU job arrive. The
// 1-GPU job fits the fixed node's 4 free GPUs: nothing is launched for it.
// Each 8-GPU job gets a NodePool node (8 GPUs, 5 min): two launched at 1
// min, and all three start at 6 min. (Before: only the head was seen, so
// the second 8-GPU job's node was launched when the head started, at 6
// min, and it started at 11 min.)
func TestStrictFIFOProvisionsThePodsBehindTheHead(t *testing.T) {
	spec := &capacity.Spec{
		Pools: []capacity.Pool{
			{Group: -1},
			{PricePerHour: 10, Provisioning: 5 * mins, Group: 0},
		},
		Groups: []capacity.Group{{Name: "gpu", Kind: capacity.NodePool, Pools: []int32{1}, MaxGPUs: 32}},
	}
	pools := []cluster.PoolSpec{gpuPool("fixed", 1, 1, 8), gpuPool("np", 0, 4, 8)}
	res := runQueue(t, scheduler.QueueConfig{}, pools, spec,
		gpuJob("run", 0, 2*hour, 1, 4, nil), gpuJob("head", mins, hour, 1, 8, nil),
		gpuJob("small", mins, hour, 1, 1, nil), gpuJob("next", mins, hour, 1, 8, nil))
	require.Equal(t, int64(2), res.Pools[1].Capacity.Launched)
	for _, j := range res.Jobs[1:] {
		require.Equal(t, 6*mins, j.Start, j.Name)
	}
	require.Equal(t, []int32{1, 0, 1}, []int32{res.Jobs[1].Pool, res.Jobs[2].Pool, res.Jobs[3].Pool})
}

// PlannedPods is the provisioning decision alone, the pods of each
// NodeClaim launched into a pool, as Karpenter's Solve returns it (the
// cross-check in validate/xcheck compares it with Solve's). Types of 1 GPU
// ($1.50/h) and 4 GPUs ($4/h); three 1-GPU pods pending together: the
// first opens a NodeClaim of both types, the second leaves only the 4-GPU
// one, the third joins it. One 4-GPU node holding the three pods.
func TestPlannedPodsArePerNodeClaim(t *testing.T) {
	spec := &capacity.Spec{
		Pools: []capacity.Pool{
			{PricePerHour: 1.5, Provisioning: 5 * mins, Group: 0},
			{PricePerHour: 4, Provisioning: 5 * mins, Group: 0},
		},
		Groups: []capacity.Group{{Name: "gpu", Kind: capacity.NodePool, Pools: []int32{0, 1}, MaxGPUs: 64}},
	}
	pools := []cluster.PoolSpec{gpuPool("one", 0, 4, 1), gpuPool("four", 0, 4, 4)}
	res := runQueue(t, scheduler.QueueConfig{Backfill: true}, pools, spec,
		gpuJob("a", 0, hour, 1, 1, nil), gpuJob("b", 0, hour, 1, 1, nil), gpuJob("c", 0, hour, 1, 1, nil))
	require.Equal(t, []int64{0, 1}, []int64{res.Pools[0].Capacity.Launched, res.Pools[1].Capacity.Launched})
	require.Equal(t, []int64{0, 3}, []int64{res.Pools[0].Capacity.PlannedPods, res.Pools[1].Capacity.PlannedPods})
}
