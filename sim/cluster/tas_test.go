package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/topology"
)

// A node's domain at each TAS level: a pool label's values ranked by
// their text (spine s1 before s2, whatever the pools' order), hostnames
// by theirs (a-10 before a-2, as Kueue compares label values), blocks and
// racks from the pool's topology; a node without a level's label is not
// a TAS node.
func TestTASPathFromLabelsAndTopology(t *testing.T) {
	c, err := New([]PoolSpec{
		{Name: "a", Nodes: 12, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024, Labels: map[string]string{"example.com/spine": "s2"}, Topology: topology.Spec{NodesPerRack: 4}},
		{Name: "b", Nodes: 1, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024, Labels: map[string]string{"example.com/spine": "s1"}},
		{Name: "c", Nodes: 1, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024},
	})
	require.NoError(t, err)
	require.NoError(t, c.SetTASLevels([]string{"example.com/spine", LabelTopologyRack, LabelHostname}))
	path := func(n int32) []int64 {
		p, ok := c.Topology().TASPath(n, nil)
		require.True(t, ok)
		return p
	}
	// Hostnames sorted: a-0 a-1 a-10 a-11 a-2 ... a-9 b-0 c-0.
	require.Equal(t, []int64{1, 0, 0}, path(0))         // a-0, rack 0
	require.Equal(t, []int64{1, 2, 2}, path(10))        // a-10, rack 2, rank 2
	require.Equal(t, []int64{1, 0, 4}, path(2))         // a-2: rank 4
	require.Equal(t, []int64{0, 1 << 32, 12}, path(12)) // b-0: spine s1, its pool's one rack
	_, ok := c.Topology().TASPath(13, nil)
	require.False(t, ok) // c has no spine label
	require.Error(t, c.SetTASLevels([]string{LabelHostname, LabelHostname}))
}
