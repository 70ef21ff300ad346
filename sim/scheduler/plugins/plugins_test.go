package plugins

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/balancedallocation"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/fgd"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/leastallocated"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/mostallocated"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/noderesources"
)

type binds struct{ nodes []int32 }

func (b *binds) Bind(_ *scheduler.JobInfo, pls []cluster.Placement) error {
	for _, p := range pls {
		b.nodes = append(b.nodes, p.Node)
	}
	return nil
}

// Node 0 has 6 of 8 GPUs taken, node 1 none. A 2-GPU pod goes to node 0
// under MostAllocated and to node 1 under LeastAllocated.
func TestMostVersusLeastAllocated(t *testing.T) {
	for _, tc := range []struct {
		score string
		want  int32
	}{{mostallocated.Name, 0}, {leastallocated.Name, 1}} {
		c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 2, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 1 << 20}})
		require.NoError(t, err)
		_, err = c.Allocate(0, 0, &cluster.PodSpec{GPUs: 6}, -1)
		require.NoError(t, err)
		prof, err := NewProfile([]scheduler.PluginConfig{{Name: noderesources.Name}, {Name: tc.score, Resources: map[string]int64{"nvidia.com/gpu": 1}}}, nil)
		require.NoError(t, err)
		fw, err := scheduler.NewFramework(prof, c)
		require.NoError(t, err)
		spec := &cluster.JobSpec{Replicas: 1, Duration: 1, Pod: cluster.PodSpec{GPUs: 2}}
		var b binds
		placed, st, err := fw.Attempt(0, &scheduler.JobInfo{Spec: spec}, &b)
		require.NoError(t, err)
		require.True(t, st.IsSuccess())
		require.Equal(t, int32(1), placed)
		require.Equal(t, []int32{tc.want}, b.nodes, tc.score)
	}
}

// The used-fraction score by hand: node with 96 of 192 CPUs, 1 of 2 TiB and
// 4 of 8 GPUs used, pod asking 48 CPUs, 512 GiB, 2 GPUs: after placing,
// cpu 144/192 = 75, memory 1536/2048 = 75, gpu 6/8 = 75; weights 1, 1, 2.
func TestUsedFractionScoreByHand(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 1, GPUsPerNode: 8, MilliCPU: 192000, MemoryMiB: 2 << 20}})
	require.NoError(t, err)
	_, err = c.Allocate(0, 0, &cluster.PodSpec{MilliCPU: 96000, MemoryMiB: 1 << 20, GPUs: 4}, -1)
	require.NoError(t, err)
	st := &scheduler.CycleState{Cluster: c}
	pod := &cluster.PodSpec{MilliCPU: 48000, MemoryMiB: 512 << 10, GPUs: 2}
	out := make([]int64, 1)
	noderesources.UsedFractionScores(st, noderesources.ResourceWeights{CPU: 1, Memory: 1, GPU: 2}, pod, []int32{0}, out, true)
	require.Equal(t, int64(75), out[0])
	noderesources.UsedFractionScores(st, noderesources.ResourceWeights{CPU: 1, Memory: 1, GPU: 2}, pod, []int32{0}, out, false)
	require.Equal(t, int64(25), out[0])
}

func TestProfileErrors(t *testing.T) {
	_, err := NewProfile([]scheduler.PluginConfig{{Name: "MostAllocated"}}, nil)
	require.ErrorContains(t, err, "must enable NodeResourcesFit")
	_, err = NewProfile([]scheduler.PluginConfig{{Name: "NodeResourcesFit"}, {Name: "Bogus"}}, nil)
	require.ErrorContains(t, err, `unknown scheduler plugin "Bogus"`)
	_, err = NewProfile([]scheduler.PluginConfig{{Name: "NodeResourcesFit"}, {Name: "NodeResourcesFit"}}, nil)
	require.ErrorContains(t, err, "listed twice")
	_, err = NewProfile([]scheduler.PluginConfig{{Name: "NodeResourcesFit", Weight: 3}}, nil)
	require.ErrorContains(t, err, "takes no weight")
	_, err = NewProfile([]scheduler.PluginConfig{{Name: "NodeResourcesFit"}, {Name: "MostAllocated", Resources: map[string]int64{"tpu": 1}}}, nil)
	require.ErrorContains(t, err, `unknown resource "tpu"`)
	p, err := NewProfile(Default(), nil)
	require.NoError(t, err)
	require.Equal(t, "PrioritySort", p.QueueSort.Name())
	require.Len(t, p.PreFilter, 3)
	require.NotNil(t, p.MinMember)
}

// FGD by hand. Every pod of the mix is a whole GPU. Node 0 has one GPU
// wholly free; node 1 one GPU with 500 milli free. A 500-milli share:
//   - on node 0: before, a whole-GPU pod fits: fragmentation 0; after, 500
//     free that no whole pod can use: 500. Score 100*sigmoid(-0.5) = 37.75 -> 37.
//   - on node 1: before, its 500 free are unusable: 500; after, 0 free: 0.
//     Score 100*sigmoid(0.5) = 62.25 -> 62.
func TestFGDFillsTheFragment(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", GPUModel: "T4", Nodes: 2, GPUsPerNode: 1, MilliCPU: 8000, MemoryMiB: 1 << 16}})
	require.NoError(t, err)
	_, err = c.Allocate(0, 1, &cluster.PodSpec{GPUMilli: 500}, -1)
	require.NoError(t, err)
	h := &scheduler.Handle{Mix: &models.PodMix{Shapes: []models.PodShape{{MilliCPU: 1000, GPUs: 1, GPUMilli: 1000}}, Weights: []float64{1}}, MixVersion: 1}
	pl, err := fgd.New(scheduler.PluginConfig{}, h)
	require.NoError(t, err)
	require.True(t, h.NeedsMix)
	out := make([]int64, 2)
	pod := &cluster.PodSpec{MilliCPU: 1000, GPUMilli: 500}
	pl.(scheduler.ScorePlugin).ScoreBatch(&scheduler.CycleState{Cluster: c}, pod, []int32{0, 1}, out)
	require.Equal(t, []int64{37, 62}, out)
}

// kube-scheduler's default scoring (NodeResourcesFit LeastAllocated on cpu
// and memory, and NodeResourcesBalancedAllocation, weight 1 each) on two
// nodes of 64 CPUs and 256 GiB, for a pod of 32 CPUs and 32 GiB. Node 0
// has 96 GiB taken: after the pod cpu 0.5, memory 0.5, LeastAllocated
// (50 + 50) / 2 = 50; balance before (0, 0.375) (1 - 0.1875) x 100 = 81,
// after 100, balanced 50 + (50 + 100 - 81) / 2 = 84: 134. Node 1 is empty:
// cpu 0.5, memory 0.125, LeastAllocated (50 + 87) / 2 = 68; balance
// before 100, after 81, balanced 50 + (50 + 81 - 100) / 2 = 65: 133. Node
// 0 wins; LeastAllocated alone picks node 1.
func TestDefaultProfileWithBalancedAllocation(t *testing.T) {
	for _, tc := range []struct {
		balanced bool
		want     int32
	}{{true, 0}, {false, 1}} {
		c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 2, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 256 << 10}})
		require.NoError(t, err)
		_, err = c.Allocate(0, 0, &cluster.PodSpec{MemoryMiB: 96 << 10}, -1)
		require.NoError(t, err)
		cfgs := []scheduler.PluginConfig{{Name: noderesources.Name}, {Name: leastallocated.Name, Weight: 1, Resources: map[string]int64{"cpu": 1, "memory": 1}}}
		if tc.balanced {
			cfgs = append(cfgs, scheduler.PluginConfig{Name: balancedallocation.Name, Weight: 1})
		}
		prof, err := NewProfile(cfgs, nil)
		require.NoError(t, err)
		fw, err := scheduler.NewFramework(prof, c)
		require.NoError(t, err)
		var b binds
		placed, st, err := fw.Attempt(0, &scheduler.JobInfo{Spec: &cluster.JobSpec{Replicas: 1, Duration: 1, Pod: cluster.PodSpec{MilliCPU: 32000, MemoryMiB: 32 << 10}}}, &b)
		require.NoError(t, err)
		require.True(t, st.IsSuccess())
		require.Equal(t, int32(1), placed)
		require.Equal(t, []int32{tc.want}, b.nodes, "balanced %v", tc.balanced)
	}
}
