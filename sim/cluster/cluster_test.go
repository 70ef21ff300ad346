package cluster

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func twoPools(t *testing.T) *Cluster {
	t.Helper()
	c, err := New([]PoolSpec{
		{Name: "a", Nodes: 2, GPUsPerNode: 4, MilliCPU: 32000, MemoryMiB: 128 << 10, GPUModel: "A100"},
		{Name: "cpu", Nodes: 1, MilliCPU: 16000, MemoryMiB: 64 << 10},
	})
	require.NoError(t, err)
	return c
}

func TestAllocateReleaseWholeGPUs(t *testing.T) {
	c := twoPools(t)
	pod := PodSpec{MilliCPU: 8000, MemoryMiB: 1024, GPUs: 3}
	pl, err := c.Allocate(0, 0, &pod, -1)
	require.NoError(t, err)
	require.Equal(t, uint64(0b0111), pl.GPUs, "lowest free GPUs")
	require.Equal(t, int32(1), c.Nodes[0].FreeWhole)
	require.Equal(t, []int32{0, 1, 0, 0, 1}, c.Pools[0].FreeByWhole, "node 0 has 1 free, node 1 has 4")
	require.False(t, c.Fits(0, &pod), "only one GPU left on node 0")
	require.True(t, c.Fits(1, &pod))

	_, err = c.Allocate(0, 0, &pod, -1)
	var oc *OverCommitError
	require.ErrorAs(t, err, &oc)

	// 3 GPUs held from t=0 to t=1000 ms on a pool supplying 8 GPUs.
	require.NoError(t, c.Release(1000, pl, &pod))
	c.Advance(2000)
	alloc, supply := c.Pools[0].Integrals()
	require.Equal(t, int64(3*MilliGPU*1000), alloc)
	require.Equal(t, int64(8*MilliGPU*2000), supply)
	require.Equal(t, []int32{0, 0, 0, 0, 2}, c.Pools[0].FreeByWhole)
	require.Equal(t, int64(32000), c.Nodes[0].FreeCPU)
}

func TestSharesBestFit(t *testing.T) {
	c := twoPools(t)
	a := PodSpec{GPUMilli: 600}
	b := PodSpec{GPUMilli: 300}
	pa, err := c.Allocate(0, 0, &a, -1)
	require.NoError(t, err)
	require.Equal(t, int8(0), pa.Share)
	require.Equal(t, int32(3), c.Nodes[0].FreeWhole)
	// 300 fits in the 400 left on GPU 0: best fit keeps whole GPUs whole.
	pb, err := c.Allocate(0, 0, &b, -1)
	require.NoError(t, err)
	require.Equal(t, int8(0), pb.Share)
	require.Equal(t, []int32{100, 1000, 1000, 1000}, c.GPUFree(0))
	require.Equal(t, int64(900), c.Pools[0].AllocMilli)
	// A whole-GPU pod no longer fits 4 GPUs on node 0.
	require.False(t, c.Fits(0, &PodSpec{GPUs: 4}))
	require.NoError(t, c.Release(10, pa, &a))
	require.NoError(t, c.Release(10, pb, &b))
	require.Equal(t, int32(4), c.Nodes[0].FreeWhole)
	require.Equal(t, int32(MilliGPU), c.Nodes[0].MaxShare)
	require.Error(t, c.Release(10, pb, &b), "double release is caught")
}

func TestStatementDiscardRestoresState(t *testing.T) {
	c := twoPools(t)
	pod := PodSpec{MilliCPU: 1000, GPUs: 4}
	var st Statement
	st.Begin(c)
	require.NoError(t, st.Allocate(5, 0, &pod, -1))
	require.NoError(t, st.Allocate(5, 1, &pod, -1))
	require.Equal(t, 2, st.Len())
	require.Error(t, st.Allocate(5, 1, &pod, -1))
	require.NoError(t, st.Discard(5))
	for _, n := range c.Nodes[:2] {
		require.Equal(t, int32(4), n.FreeWhole)
	}
	c.Advance(100)
	alloc, _ := c.Pools[0].Integrals()
	require.Zero(t, alloc, "an allocation discarded at the same instant holds nothing")
}

func TestTolerationsAndSelectors(t *testing.T) {
	taint := Taint{Key: "gpu", Value: "training", Effect: NoSchedule}
	require.True(t, Toleration{Key: "gpu", Value: "training", Effect: NoSchedule}.Tolerates(taint))
	require.True(t, Toleration{Key: "gpu", Operator: "Exists"}.Tolerates(taint))
	require.True(t, Toleration{Operator: "Exists"}.Tolerates(taint))
	require.False(t, Toleration{Key: "gpu", Value: "serving"}.Tolerates(taint))
	require.False(t, Toleration{Key: "gpu", Operator: "Exists", Effect: NoExecute}.Tolerates(taint))

	labels := map[string]string{"zone": "a", "gpus": "8"}
	require.True(t, Requirement{Key: "zone", Op: OpIn, Values: []string{"a", "b"}}.Matches(labels))
	require.False(t, Requirement{Key: "zone", Op: OpNotIn, Values: []string{"a"}}.Matches(labels))
	require.True(t, Requirement{Key: "spot", Op: OpDoesNotExist}.Matches(labels))
	require.True(t, Requirement{Key: "gpus", Op: OpGt, Values: []string{"4"}}.Matches(labels))
	require.False(t, Requirement{Key: "gpus", Op: OpLt, Values: []string{"4"}}.Matches(labels))
}

// Nodes the scheduler cannot tell apart share a class: its first node in
// the tie order stands for it.
func TestStateClasses(t *testing.T) {
	c, err := New([]PoolSpec{{Name: "p", Nodes: 4, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 1 << 20}})
	require.NoError(t, err)
	firsts := func(minWhole int32) []int32 {
		out := c.AppendClassFirsts(0, minWhole, nil)
		slices.Sort(out)
		return out
	}
	require.Equal(t, []int32{0}, firsts(0), "four empty nodes: one class")
	require.Equal(t, 4, c.ClassSize(2))
	pod := PodSpec{MilliCPU: 8000, MemoryMiB: 1024, GPUs: 2}
	p1, err := c.Allocate(0, 1, &pod, -1)
	require.NoError(t, err)
	_, err = c.Allocate(0, 3, &pod, -1)
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1}, firsts(0), "{0, 2} with 8 GPUs free, {1, 3} with 6")
	require.Equal(t, []int32{0}, firsts(7))
	require.Equal(t, 2, c.ClassSize(3))
	// A share on node 0 makes it a class of its own; the same CPU and
	// memory but a different GPU count free is another class again.
	_, err = c.Allocate(0, 0, &PodSpec{MilliCPU: 8000, MemoryMiB: 1024, GPUMilli: 500}, -1)
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1, 2}, firsts(0))
	// Tie order: node 3 first, then 2, 1, 0.
	c.SetTieOrder([]int32{3, 2, 1, 0})
	require.Equal(t, []int32{0, 2, 3}, firsts(0))
	require.NoError(t, c.Cordon(0, 2))
	require.Equal(t, []int32{0, 3}, firsts(0), "a cordoned node is in no class")
	require.Equal(t, 0, c.ClassSize(2))
	require.NoError(t, c.Release(0, p1, &pod))
	require.Equal(t, []int32{0, 1, 3}, firsts(0), "node 1 empty again, alone in its class")
}

// A GPU as all-3g.40gb offers 6 of its 7 compute slices: 857 milli. With
// re-layout a GPU being re-laid offers nothing until it is back.
func TestMIGNodeCapacity(t *testing.T) {
	c, err := New([]PoolSpec{{Name: "m", Nodes: 1, GPUsPerNode: 2, MilliCPU: 8000, MemoryMiB: 1 << 20, GPUModel: "A100-80GB",
		Sharing: Sharing{MIGStrategy: MIGMixed, MIGLayout: []string{"3g.40gb", "3g.40gb"}, MIGRelayout: true}}})
	require.NoError(t, err)
	require.Equal(t, int64(2*857), c.Nodes[0].CapMilli)
	require.Equal(t, int64(2*857), c.Nodes[0].FreeMilli)
	require.NoError(t, c.CheckDevices())

	pod := PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: 1, MIG: "3g.40gb"}
	pl, err := c.Allocate(0, 0, &pod, -1)
	require.NoError(t, err)
	require.Equal(t, int32(428), pl.Milli)
	require.Equal(t, int64(2*857-428), c.Nodes[0].FreeMilli)
	require.NoError(t, c.CheckDevices())

	require.NoError(t, c.MIG().BeginRelayout(0, 0, 1))
	require.Equal(t, int64(857), c.Nodes[0].CapMilli, "GPU 1 out of service")
	require.NoError(t, c.CheckDevices())
	require.NoError(t, c.MIG().EndRelayout(0, 0, 1, []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}))
	require.Equal(t, int64(857+1000), c.Nodes[0].CapMilli)
	require.NoError(t, c.CheckDevices())

	c.Nodes[0].FreeMilli--
	require.ErrorContains(t, c.CheckDevices(), "node 0 counts")
}
