package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/topology"
)

// A pool's zones are dealt round robin by its widest unit: node by node
// in a flat pool, whole racks in a racked one, whole blocks in a blocked
// one. The zone and hostname are node labels; the pool's other labels
// stay the pool's.
func TestZonesRoundRobin(t *testing.T) {
	zones := []string{"z1", "z2", "z3"}
	c, err := New([]PoolSpec{
		// 7 nodes flat: z1 z2 z3 z1 z2 z3 z1.
		{Name: "flat", Nodes: 7, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024, GPUModel: "H100", Zones: zones, Labels: map[string]string{"team": "a"}},
		// racks of 2: slots 0,1 z1; 2,3 z2; 4,5 z3; 6 z1.
		{Name: "racked", Nodes: 7, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024, GPUModel: "H100", Zones: zones, Topology: topology.Spec{NodesPerRack: 2}},
		// racks of 1, 2 racks a block: slots 0,1 z1; 2,3 z2; 4,5 z3; 6 z1.
		{Name: "blocked", Nodes: 7, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024, GPUModel: "H100", Zones: zones, Topology: topology.Spec{NodesPerRack: 1, RacksPerBlock: 2}},
		{Name: "plain", Nodes: 1, MilliCPU: 1000, MemoryMiB: 1024},
	})
	require.NoError(t, err)
	want := map[string][]string{
		"flat":    {"z1", "z2", "z3", "z1", "z2", "z3", "z1"},
		"racked":  {"z1", "z1", "z2", "z2", "z3", "z3", "z1"},
		"blocked": {"z1", "z1", "z2", "z2", "z3", "z3", "z1"},
		"plain":   {""},
	}
	for _, p := range c.Pools {
		var got []string
		for n := p.First; n < p.First+p.Count; n++ {
			got = append(got, c.Topology().ZoneOf(n))
		}
		require.Equal(t, want[p.Spec.Name], got, p.Spec.Name)
	}
	v, ok := c.Topology().NodeLabel(3, LabelZone)
	require.True(t, ok)
	require.Equal(t, "z1", v)
	v, _ = c.Topology().NodeLabel(3, LabelHostname)
	require.Equal(t, "flat-3", v)
	v, _ = c.Topology().NodeLabel(3, "team")
	require.Equal(t, "a", v)
	_, ok = c.Topology().NodeLabel(c.Pools[3].First, LabelZone)
	require.False(t, ok, "a pool with no zone gives its nodes no zone label")

	_, err = New([]PoolSpec{{Name: "x", Nodes: 1, MilliCPU: 1, MemoryMiB: 1, Zones: []string{"a", "a"}}})
	require.ErrorContains(t, err, "listed twice")
}
