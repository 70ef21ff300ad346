package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"

	"gpuplan.dev/gpuplan/models/topology"
)

// Each node carries its block, rack and NVLink domain as labels (the keys
// of Kueue's samples and NVIDIA's GPU feature discovery), worked out from
// its slot: in a pool of 4 nodes a rack and 2 racks a block, slot 9 is in
// rack 9/4 = 2 and block 2/2 = 1; on GB200 trays of 4 GPUs in NVL72
// domains of 18 nodes (one rack each), slot 20 is in domain 20/18 = 1,
// rack 1. A flat pool is one block and one rack, each node its own NVLink
// domain. The pool's own label of a key wins. A Volcano HyperNode's
// labelMatch on the rack label selects the rack's nodes.
func TestNodesCarryTheirLevelLabels(t *testing.T) {
	c, err := New([]PoolSpec{
		{Name: "h100", Nodes: 16, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024, GPUModel: "H100", Topology: topology.Spec{NodesPerRack: 4, RacksPerBlock: 2}},
		{Name: "gb200", Nodes: 36, GPUsPerNode: 4, MilliCPU: 1000, MemoryMiB: 1024, GPUModel: "GB200", Topology: topology.Spec{DomainGPUs: 72}},
		{Name: "flat", Nodes: 3, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024, GPUModel: "H100", Labels: map[string]string{LabelTopologyRack: "r42"}},
	})
	require.NoError(t, err)
	top := c.Topology()
	label := func(pool int, slot int32, key string) string {
		v, ok := top.NodeLabel(c.Pools[pool].First+slot, key)
		require.True(t, ok, "%d/%d %s", pool, slot, key)
		return v
	}
	require.Equal(t, "h100-rack-2", label(0, 9, LabelTopologyRack))
	require.Equal(t, "h100-block-1", label(0, 9, LabelTopologyBlock))
	require.Equal(t, "h100-nvl-9", label(0, 9, LabelGPUClique), "a p5's NVLink domain is its own 8 GPUs")
	require.Equal(t, "gb200-nvl-1", label(1, 20, LabelGPUClique))
	require.Equal(t, "gb200-rack-1", label(1, 20, LabelTopologyRack))
	require.Equal(t, "gb200-block-0", label(1, 20, LabelTopologyBlock))
	require.Equal(t, "r42", label(2, 1, LabelTopologyRack), "the pool's label")
	require.Equal(t, "flat-block-0", label(2, 1, LabelTopologyBlock))

	sel, err := labels.Parse(LabelTopologyRack + "=h100-rack-1")
	require.NoError(t, err)
	require.NoError(t, c.SetHyperNodes([]HyperNode{{Name: "rack-1", Tier: 1, Members: []HyperNodeMember{{Labels: sel}}}}))
	var in []string
	for n := range c.Nodes {
		if c.tas.vals[0][n] >= 0 && c.tas.vals[0][n] < hyperSynthetic {
			in = append(in, top.HostnameOf(int32(n)))
		}
	}
	require.Equal(t, []string{"h100-4", "h100-5", "h100-6", "h100-7"}, in, "rack 1 is slots 4 to 7")
}
