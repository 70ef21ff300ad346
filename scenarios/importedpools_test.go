package scenarios

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An AKS node dump's spot agent pool takes an interruption model, an
// eviction policy and a max price by its name (cluster.nodes.pools), as an
// inline pool would: a Node carries none of them. Before, cluster.nodes
// took only a path and every dumped spot pool had the measured preset and
// Delete. By hand: the Azure band 10-15% is -ln(0.85) = 0.162519
// evictions a node-hour (MTBF 6.15 h); Deallocate bills the OS disk.
func TestImportedPoolSettings(t *testing.T) {
	dir := t.TempDir()
	dump, err := os.ReadFile("kube/nodes/testdata/aks-cluster.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes.yaml"), dump, 0o644))
	load := func(settings string) (*Scenario, error) {
		scen := strings.Replace(liveScenario, "  horizon: 6h\n", "  horizon: 6h\n  pricing: {region: eastus}\n", 1)
		scen = strings.Replace(scen, "    nodes: {path: nodes.yaml}\n", "    nodes:\n      path: nodes.yaml\n"+settings, 1)
		scen = strings.Replace(scen, "gpus: 8}", "gpus: 1}", 1)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scen), 0o644))
		return LoadFile(filepath.Join(dir, "s.yaml"))
	}
	s, err := load("      pools:\n      - name: spotnp\n        interruptions: {band: \"10-15%\"}\n        evictionPolicy: Deallocate\n        maxPrice: 3\n")
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	m, err := s.Cluster()
	require.NoError(t, err)
	found := false
	for i, p := range m.Pools {
		if p.Name != "spotnp" {
			continue
		}
		found = true
		in := m.Capacity.Pools[i].Interruptions
		require.InEpsilon(t, -math.Log(0.85), in.RatePerHour, 1e-12)
		require.Contains(t, m.Prices[i].Interruptions, "Standard_NC40ads_H100_v5 in eastus: Azure Spot eviction-rate band 10-15%")
		require.Contains(t, m.Prices[i].Interruptions, "eviction policy Deallocate: the evicted node is stopped-deallocated")
	}
	require.True(t, found)

	for _, c := range []struct{ settings, want string }{
		{"      pools:\n      - name: nope\n        maxPrice: 3\n", `s.yaml:12:15: spec.cluster.nodes.pools[0].name: "nope" is not a pool read from nodes.yaml (its pools: gpunp, spotnp, system)`},
		{"      pools:\n      - name: spotnp\n        maxPrice: 3\n      - name: spotnp\n", `spec.cluster.nodes.pools[1].name: "spotnp" is set twice`},
		{"      pools:\n      - name: spotnp\n        interruptions: {band: \"<5%\"}\n", `s.yaml:13:31: spec.cluster.nodes.pools[0].interruptions.band: "<5%" is not an Azure eviction-rate band`},
		{"      pools:\n      - name: gpunp\n        evictionPolicy: Deallocate\n", `spec.cluster.nodes.pools[0].evictionPolicy: is an Azure spot pool's: set capacityType: spot`},
	} {
		s, err := load(c.settings)
		if err == nil {
			_, err = s.Build(Options{})
		}
		require.Error(t, err, c.settings)
		require.Contains(t, err.Error(), c.want, c.settings)
		requireInputError(t, err)
	}
}
