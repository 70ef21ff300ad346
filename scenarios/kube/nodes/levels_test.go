package nodes

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dump is a node list of GB200 trays (4 GPUs each) with the given extra
// labels per node.
func dump(labels []map[string]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i, lb := range labels {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: tray-%d\n    labels:\n      kubernetes.io/hostname: tray-%d\n      nvidia.com/gpu.product: NVIDIA-GB200\n      topology.kubernetes.io/region: us-east-1\n", i, i)
		for _, k := range slices.Sorted(maps.Keys(lb)) {
			fmt.Fprintf(&b, "      %s: %s\n", k, lb[k])
		}
		b.WriteString("  status:\n    allocatable: {cpu: \"140\", memory: 800Gi, nvidia.com/gpu: \"4\"}\n")
	}
	return b.String()
}

// Eight GB200 trays in two NVLink domains (nvidia.com/gpu.clique as GPU
// feature discovery writes it, <cluster UUID>.<clique>), each domain behind
// its own bottom-layer EC2 network node (EKS's network-node-layer-3), both
// under one layer-2 node: one pool of 8 nodes whose topology is NVLink
// domains of 4 nodes (16 GPUs), racks of 4 nodes and one block of 2 racks;
// the EKS labels name gpuplan's rack and block levels.
func TestTopologyFromNodeLabels(t *testing.T) {
	var lbs []map[string]string
	for i := range 8 {
		lbs = append(lbs, map[string]string{
			"nvidia.com/gpu.clique":                 fmt.Sprintf("6f1c2d7e-0000-4000-8000-00000000000%d.%d", i/4, i/4),
			"topology.k8s.aws/network-node-layer-1": "nn-top",
			"topology.k8s.aws/network-node-layer-2": "nn-mid",
			"topology.k8s.aws/network-node-layer-3": fmt.Sprintf("nn-bottom-%d", i/4),
		})
	}
	res, err := Parse("gb200.yaml", []byte(dump(lbs)))
	require.NoError(t, err)
	require.Len(t, res.Pools, 1)
	p := res.Pools[0]
	require.Equal(t, 8, p.Nodes)
	require.Equal(t, "GB200", p.GPUModel)
	require.Equal(t, &Levels{NodesPerDomain: 4, NodesPerRack: 4, RacksPerBlock: 2, Keys: map[string]string{
		"nvidia.com/gpu.clique":                 LevelDomain,
		"topology.k8s.aws/network-node-layer-3": LevelRack,
		"topology.k8s.aws/network-node-layer-2": LevelBlock,
	}}, p.Levels)
	// The labels that differ between the nodes are not the pool's; the
	// one they share is.
	require.NotContains(t, p.Labels, "topology.k8s.aws/network-node-layer-3")
	require.Equal(t, "nn-top", p.Labels["topology.k8s.aws/network-node-layer-1"])

	// Racks of 3 and 5 nodes cannot be filled in order: flat, with a note
	// saying so (the domain level alone would nest in them, but not the racks).
	for i := range lbs {
		delete(lbs[i], "nvidia.com/gpu.clique")
		lbs[i]["topology.k8s.aws/network-node-layer-3"] = map[bool]string{true: "nn-a", false: "nn-b"}[i < 3]
	}
	res, err = Parse("uneven.yaml", []byte(dump(lbs)))
	require.NoError(t, err)
	require.Nil(t, res.Pools[0].Levels)
	require.Contains(t, strings.Join(res.Notes, "\n"), "uneven.yaml:4: pool ")
	require.Contains(t, strings.Join(res.Notes, "\n"), "its racks (topology.k8s.aws/network-node-layer-3) hold 3 or 5 nodes; gpuplan's pools fill levels of one size, so its topology is taken as one flat network")

	// An NVLink domain split over two racks does not nest: flat.
	for i := range lbs {
		lbs[i]["nvidia.com/gpu.clique"] = "c.1"
		lbs[i]["topology.k8s.aws/network-node-layer-3"] = fmt.Sprintf("nn-%d", i%2)
	}
	res, err = Parse("split.yaml", []byte(dump(lbs)))
	require.NoError(t, err)
	require.Nil(t, res.Pools[0].Levels)
	require.Contains(t, strings.Join(res.Notes, "\n"), "an NVLink domain (nvidia.com/gpu.clique) spans two racks")

	// No level label: no topology, no note.
	res, err = Parse("plain.yaml", []byte(dump(make([]map[string]string, 2))))
	require.NoError(t, err)
	require.Nil(t, res.Pools[0].Levels)
	require.Empty(t, res.Notes)
}
