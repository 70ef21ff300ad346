package balancedallocation_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/balancedallocation"
)

func scores(t *testing.T, resources map[string]int64, used []cluster.PodSpec, pod cluster.PodSpec) []int64 {
	t.Helper()
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: len(used), GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 256 << 10}})
	require.NoError(t, err)
	nodes := make([]int32, len(used))
	for i := range used {
		nodes[i] = int32(i)
		if used[i] != (cluster.PodSpec{}) {
			_, err := c.Allocate(0, int32(i), &used[i], -1)
			require.NoError(t, err)
		}
	}
	pl, err := balancedallocation.New(scheduler.PluginConfig{Resources: resources}, nil)
	require.NoError(t, err)
	out := make([]int64, len(nodes))
	pl.(scheduler.ScorePlugin).ScoreBatch(&scheduler.CycleState{Cluster: c}, &pod, nodes, out)
	return out
}

// Nodes of 64 CPUs and 256 GiB, the default resources (cpu, memory). A pod
// of 16 CPUs and 96 GiB: on node 0 (16 CPUs and 32 GiB taken) it leaves
// cpu 32/64 = 0.5 and memory 128/256 = 0.5 requested, std 0, balance 100;
// before it, 16/64 = 0.25 and 32/256 = 0.125, std 0.0625, balance 93.75
// -> 93; score 50 + (50 + 100 - 93)/2 = 50 + 28 = 78. On the empty node 1,
// 16/64 = 0.25 and 96/256 = 0.375, std 0.0625, balance 93; before it 0
// and 0, balance 100; score 50 + (50 + 93 - 100)/2 = 50 + 21 = 71. Its 2
// GPUs are not counted: nvidia.com/gpu is not among the resources.
// (kube-scheduler v1.37.2 scores the change in balance; the balance after
// alone, which gpuplan scored before, gave 100 and 93.)
func TestTwoResourcesByHand(t *testing.T) {
	got := scores(t, nil, []cluster.PodSpec{{MilliCPU: 16000, MemoryMiB: 32 << 10}, {}},
		cluster.PodSpec{MilliCPU: 16000, MemoryMiB: 96 << 10, GPUs: 2})
	require.Equal(t, []int64{78, 71}, got)
}

// With nvidia.com/gpu named too: node 0 has 32 CPUs, 96 GiB and no GPU
// taken; a pod of 16 CPUs, 32 GiB and 2 GPUs leaves cpu 48/64 = 0.75,
// memory 128/256 = 0.5, gpu 2/8 = 0.25: mean 0.5, variance
// (0.0625 + 0 + 0.0625) / 3 = 0.041667, std 0.204124, balance 79.59 -> 79.
// Before it: 0.5, 0.375, 0: mean 0.291667, variance (0.043403 + 0.006944
// + 0.085069) / 3 = 0.045139, std 0.212459, balance 78.75 -> 78. Score
// 50 + (50 + 79 - 78)/2 = 50 + 25 = 75. The weights' values do not
// matter, only which resources they name.
func TestThreeResourcesByHand(t *testing.T) {
	pod := cluster.PodSpec{MilliCPU: 16000, MemoryMiB: 32 << 10, GPUs: 2}
	used := []cluster.PodSpec{{MilliCPU: 32000, MemoryMiB: 96 << 10}}
	require.Equal(t, []int64{75}, scores(t, map[string]int64{"cpu": 1, "memory": 1, "nvidia.com/gpu": 1}, used, pod))
	require.Equal(t, []int64{75}, scores(t, map[string]int64{"cpu": 5, "memory": 2, "nvidia.com/gpu": 9}, used, pod))
	// A pod without GPUs leaves nvidia.com/gpu out (kube-scheduler skips an
	// extended resource the pod does not request), before and after:
	// after, cpu 0.75, memory 0.5, std 0.125, balance 87.5 -> 87; before,
	// 0.5 and 0.375, std 0.0625, balance 93; score 50 + (50 + 87 - 93)/2 =
	// 50 + 22 = 72.
	pod.GPUs = 0
	require.Equal(t, []int64{72}, scores(t, map[string]int64{"cpu": 1, "memory": 1, "nvidia.com/gpu": 1}, used, pod))
}

// A pod that requests none of the resources (best effort) is not scored
// by the plugin: 0 on every node.
func TestBestEffortPodScoresZero(t *testing.T) {
	got := scores(t, nil, []cluster.PodSpec{{MilliCPU: 16000}, {}}, cluster.PodSpec{GPUs: 1})
	require.Equal(t, []int64{0, 0}, got)
}

// The scorer on its own: one fraction has no spread; fractions 0 and 1
// have std 0.5; 0.1, 0.2, 0.3, 0.4 have mean 0.25 and variance
// (0.0225 + 0.0025 + 0.0025 + 0.0225) / 4 = 0.0125, std 0.111803,
// score 88.82 -> 88.
func TestScore(t *testing.T) {
	require.Equal(t, int64(100), balancedallocation.Score([]float64{0.7}))
	require.Equal(t, int64(50), balancedallocation.Score([]float64{0, 1}))
	require.Equal(t, int64(88), balancedallocation.Score([]float64{0.1, 0.2, 0.3, 0.4}))
}

// The change in balance on its own: unchanged 75, the best 100 (from the
// worst balance, 50, to a perfect one), the worst 50, and (50 + 93 - 100)
// / 2 = 21.5 truncated to 21.
func TestImprovement(t *testing.T) {
	require.Equal(t, int64(75), balancedallocation.Improvement(88, 88))
	require.Equal(t, int64(100), balancedallocation.Improvement(100, 50))
	require.Equal(t, int64(50), balancedallocation.Improvement(50, 100))
	require.Equal(t, int64(71), balancedallocation.Improvement(93, 100))
}
