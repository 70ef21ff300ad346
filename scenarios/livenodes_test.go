package scenarios

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

const liveScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: live
spec:
  horizon: 6h
  cluster:
    nodes: {path: nodes.yaml}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: poisson, ratePerHour: 4}
        pod: {cpu: "8", memory: 64Gi, gpus: 8}
        duration: 1h
  variants:
  - name: longer
    patch: {horizon: 12h}
`

// The hand-written kubectl dump of a mixed cluster becomes the pools and
// prices worked out by hand from the embedded catalog: on-demand from
// Karpenter's us-east-1 table (p4d.24xlarge 21.957642, g5.xlarge 1.006),
// spot as the median of the region's zone prices (p5.48xlarge: six zones,
// (25.8774 + 27.6948) / 2 = 26.7861; g5.12xlarge: five zones, 2.5445).
func TestLiveClusterNodesBecomePools(t *testing.T) {
	dir := t.TempDir()
	nodes, err := os.ReadFile("kube/nodes/testdata/mixed-cluster.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes.yaml"), nodes, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(liveScenario), 0o644))
	s, err := LoadFile(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	type want struct {
		name     string
		nodes    int
		model    string
		gpus     int32
		memMiB   int64
		ct       string
		price    float64
		migSlots int
	}
	wants := []want{
		{"p4d.24xlarge-on-demand-us-east-1a", 2, "A100-40GB", 8, 1119575716 / 1024, "on-demand", 21.957642, 0},
		{"p4d.24xlarge-on-demand-us-east-1a-2", 1, "A100-40GB", 8, 1119575716 / 1024, "on-demand", 21.957642, 7},
		{"p5.48xlarge-spot-us-east-1b", 3, "H100-80GB", 8, 2045339036 / 1024, "spot", 26.7861, 0},
		{"g5.xlarge-on-demand-us-east-1a", 4, "A10G", 1, 15147064 / 1024, "on-demand", 1.006, 0},
		{"g5.12xlarge-spot-us-east-1c", 2, "A10G", 4, 192727580 / 1024, "spot", 2.5445, 0},
	}
	require.Len(t, m.Pools, 6)
	gpus := 0
	for i, w := range wants {
		p := m.Pools[i]
		require.Equal(t, w.name, p.Name)
		require.Equal(t, w.nodes, p.Nodes, w.name)
		require.Equal(t, w.model, p.GPUModel, w.name)
		require.Equal(t, w.gpus, p.GPUsPerNode, w.name)
		require.Equal(t, w.memMiB, p.MemoryMiB, w.name)
		require.Equal(t, w.ct, p.Labels[LabelCapacityType], w.name)
		require.Equal(t, "us-east-1", p.Labels[LabelRegion], w.name)
		require.Len(t, p.Sharing.MIGLayout, w.migSlots, w.name)
		require.Equal(t, w.name, m.Prices[i].Pool)
		require.InDelta(t, w.price, m.Prices[i].PerHour, 1e-9, w.name)
		gpus += p.Nodes * int(p.GPUsPerNode)
	}
	// 2x8 + 1x8 + 3x8 + 4x1 + 2x4 = 60 GPUs on 12 GPU nodes.
	require.Equal(t, 60, gpus)
	require.Equal(t, "m6i.2xlarge-on-demand-us-east-1a", m.Pools[5].Name)
	require.Equal(t, int64(7910), m.Pools[5].MilliCPU)
	require.Equal(t, "NoSchedule", string(m.Pools[0].Taints[0].Effect))
	require.Equal(t, "us-east-1a", m.Pools[0].Labels[LabelZone])

	// A variant reads the node list again: the same pools, not twice.
	v, err := s.Variant("longer")
	require.NoError(t, err)
	vm, err := v.Cluster()
	require.NoError(t, err)
	require.Len(t, vm.Pools, 6)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	require.Contains(t, b.Assumptions, filepath.Join(dir, "nodes.yaml")+": 1 cordoned nodes (spec.unschedulable) left out")
}

// Nodes of a capacity reservation (Karpenter's capacity-type reserved)
// or an EKS capacity block (CAPACITY_BLOCK) become reserved pools, not
// on-demand ones (they were on-demand before): held for the whole run,
// priced at the on-demand figure (p4d.24xlarge 21.957642, g5.xlarge
// 1.006, Karpenter's us-east-1 table), each pool with a note saying so.
func TestReservedAndCapacityBlockNodesBecomeReservedPools(t *testing.T) {
	dir := t.TempDir()
	nodes, err := os.ReadFile("kube/nodes/testdata/mixed-cluster.yaml")
	require.NoError(t, err)
	dump := strings.ReplaceAll(string(nodes), "karpenter.sh/capacity-type: on-demand", "karpenter.sh/capacity-type: reserved")
	// Node ip-10-0-1-13 (pool p4d.24xlarge-reserved-us-east-1a-2, alone in
	// it) is in a capacity block, as Karpenter labels it; the other two
	// p4d nodes are in an on-demand capacity reservation.
	at := strings.Index(dump, "name: ip-10-0-1-13.ec2.internal")
	dump = dump[:at] + strings.Replace(dump[at:], "karpenter.sh/capacity-type: reserved", "karpenter.sh/capacity-type: reserved\n      karpenter.k8s.aws/capacity-reservation-type: capacity-block", 1)
	dump = strings.ReplaceAll(dump, "eks.amazonaws.com/capacityType: ON_DEMAND", "eks.amazonaws.com/capacityType: CAPACITY_BLOCK")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes.yaml"), []byte(dump), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(liveScenario), 0o644))
	s, err := LoadFile(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	got := map[string]string{}
	price := map[string]float64{}
	for i, p := range m.Pools {
		got[p.Name] = p.Labels[LabelCapacityType]
		require.Equal(t, p.Name, m.Prices[i].Pool)
		price[p.Name] = m.Prices[i].PerHour
		if strings.Contains(p.Name, "-reserved-") {
			require.Equal(t, "reserved", m.Prices[i].CapacityType, p.Name)
		}
	}
	require.Equal(t, map[string]string{
		"p4d.24xlarge-reserved-us-east-1a":   "reserved",
		"p4d.24xlarge-reserved-us-east-1a-2": "reserved",
		"p5.48xlarge-spot-us-east-1b":        "spot",
		"g5.xlarge-reserved-us-east-1a":      "reserved",
		"g5.12xlarge-spot-us-east-1c":        "spot",
		"m6i.2xlarge-reserved-us-east-1a":    "reserved",
	}, got)
	require.InDelta(t, 21.957642, price["p4d.24xlarge-reserved-us-east-1a"], 1e-9)
	require.InDelta(t, 1.006, price["g5.xlarge-reserved-us-east-1a"], 1e-9)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	n, blocks := 0, map[string]string{}
	for _, a := range b.Assumptions {
		if strings.Contains(a, "of a capacity reservation or capacity block") {
			n++
		}
		if i := strings.Index(a, "; a capacity block ("); i >= 0 {
			pool, _, _ := strings.Cut(a[strings.Index(a, ": pool ")+7:], ":")
			blocks[pool] = a[i:]
		}
	}
	require.Equal(t, 4, n, "a note for each reserved pool")
	// The window of a capacity block is not on its nodes: said, for the
	// Karpenter-labelled block and for EKS's CAPACITY_BLOCK node group.
	require.Equal(t, []string{"g5.xlarge-reserved-us-east-1a", "m6i.2xlarge-reserved-us-east-1a", "p4d.24xlarge-reserved-us-east-1a-2"}, slices.Sorted(maps.Keys(blocks)))
	for pool, note := range blocks {
		require.Contains(t, note, "whose window is not given: no label or field of a Node holds the block's start or end", pool)
	}
	require.Contains(t, blocks["p4d.24xlarge-reserved-us-east-1a-2"], "(karpenter.k8s.aws/capacity-reservation-type: capacity-block)")
	require.Contains(t, blocks["g5.xlarge-reserved-us-east-1a"], "(eks.amazonaws.com/capacityType: CAPACITY_BLOCK)")
}

// An AKS cluster as a node dump (no GPU feature discovery): the GPUs come
// from the VM size through the embedded Azure catalog, each agent pool
// keeps its name, the spot agent pool is a spot pool priced at the
// catalog's eastus spot figure and gets Azure's 30 s eviction notice,
// named in its interruption model. Prices from azure_gpu_vms.csv, eastus:
// Standard_NC24ads_A100_v4 3.673 on-demand; Standard_NC40ads_H100_v5
// spot 2.192418. Before, the dump was refused (no nvidia.com/gpu.product).
func TestAKSNodeDumpEndToEnd(t *testing.T) {
	dir := t.TempDir()
	nodes, err := os.ReadFile("kube/nodes/testdata/aks-cluster.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes.yaml"), nodes, 0o644))
	scen := strings.Replace(liveScenario, "  horizon: 6h\n", "  horizon: 6h\n  pricing: {region: eastus}\n", 1)
	scen = strings.Replace(scen, "        duration: 1h\n", "        duration: 1h\n        tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}, {key: kubernetes.azure.com/scalesetpriority, operator: Exists, effect: NoSchedule}]\n", 1)
	scen = strings.Replace(scen, "gpus: 8}", "gpus: 1}", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scen), 0o644))
	s, err := LoadFile(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	type pool struct {
		nodes int
		model string
		ct    string
		price float64
	}
	got := map[string]pool{}
	for i, p := range m.Pools {
		got[p.Name] = pool{p.Nodes, p.GPUModel, p.Labels[LabelCapacityType], m.Prices[i].PerHour}
	}
	require.Equal(t, map[string]pool{
		"gpunp":  {2, "A100-80GB", "on-demand", 3.673},
		"spotnp": {3, "H100-80GB", "spot", 2.192418},
		"system": {1, "", "on-demand", 0},
	}, got)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	var model string
	for _, p := range b.Config.Capacity.Pools {
		if strings.Contains(p.Interruptions.Assumption, "spot supply") {
			model = p.Interruptions.Assumption
		}
	}
	require.Contains(t, model, "notice 30 s (Azure Spot VM eviction through Scheduled Events; eviction policy Delete")
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NotEmpty(t, res.Jobs)
}
