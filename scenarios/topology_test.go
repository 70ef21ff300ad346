package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim"
)

// topoScenario is one 16-GPU training job (4 pods x 4 H100s, 100 steps of
// 1 s, 14 GB of gradients) on 4 nodes of 8 H100s in racks of 2 nodes;
// %s is the pool's topology block, %s the scoring plugin.
const topoScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: topo
spec:
  seed: 1
  cluster:
    pools:
    - name: h100
      count: 4
      gpuModel: H100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1Ti
%s
  workload:
    synthetic:
      jobs: 1
      classes:
      - name: llm
        queue: research
        arrival: {process: fixed, ratePerHour: 1}
        replicas: 4
        pod: {cpu: "40", memory: 400Gi, gpus: 4}
        training: {steps: 100, computePerStep: 1s, gradientBytes: "14G"}
  scheduler:
    plugins:
    - {name: PrioritySort}
    - {name: NodeResourcesFit}
    - {name: %s, weight: 1}
    - {name: Gang}
`

func topoRun(t *testing.T, block, score string) (sim.JobRecord, []string) {
	t.Helper()
	s, err := Parse("topo.yaml", "", []byte(fmt.Sprintf(topoScenario, block, score)))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1)
	return res.Jobs[0], b.Assumptions
}

// Packed and spread placements of the same gang on 2-node racks, worked by
// hand (S x 2 x 15/16 = 26.25e9 bytes; alpha + bytes / busbw):
//
//	packed (MostAllocated): 2 nodes of one rack, all rails: 155.66 GB/s,
//	  50 us + 26.25e9 / 155.66e9 = 168.69 ms; 100 x 1168.69 ms = 116.869 s;
//	spread (LeastAllocated): 4 nodes over 2 racks, half the rails, through
//	  a 2:1 spine (the assumed default): 38.915 GB/s,
//	  50 us + 26.25e9 / 38.915e9 = 674.60 ms; 100 x 1674.60 ms = 167.460 s;
//	spread through a non-blocking spine (spineOversubscription: 1):
//	  77.83 GB/s, 50 us + 26.25e9 / 77.83e9 = 337.32 ms: 133.732 s, the
//	  flat pool's figure.
func TestPoolTopologyPricesTheGang(t *testing.T) {
	const racks = "      topology: {nodesPerRack: 2}"
	packed, notes := topoRun(t, racks, "MostAllocated")
	require.Equal(t, sim.Time(116869), packed.End-packed.Start)
	require.Equal(t, "rack", packed.Step().Level)
	spread, _ := topoRun(t, racks, "LeastAllocated")
	require.Equal(t, sim.Time(167460), spread.End-spread.Start)
	require.Equal(t, "block", spread.Step().Level)
	nonBlocking, _ := topoRun(t, "      topology: {nodesPerRack: 2, spineOversubscription: 1}", "LeastAllocated")
	require.Equal(t, sim.Time(133732), nonBlocking.End-nonBlocking.Start)
	flat, flatNotes := topoRun(t, "", "LeastAllocated")
	require.Equal(t, sim.Time(133732), flat.End-flat.Start)
	require.Equal(t, "", flat.Step().Level)

	// The run says what it took the topology as; a flat pool says nothing.
	require.Contains(t, strings.Join(notes, "\n"), "pool h100: each node its own NVLink domain, 2 nodes a rack, all racks a block")
	require.Contains(t, strings.Join(notes, "\n"), "2:1 spine (assumed")
	require.NotContains(t, strings.Join(flatNotes, "\n"), "NVLink domain")
}

// A topology block that cannot be is an input error at its field.
func TestPoolTopologyErrors(t *testing.T) {
	for _, c := range []struct{ block, field, msg string }{
		{"      topology: {nodesPerRack: -1}", "pools[0].topology.nodesPerRack", "outside 0..65536"},
		{"      topology: {spineOversubscription: 0.5}", "pools[0].topology.spineOversubscription", "outside [1, 1000]"},
		{"      topology: {spineOversubscription: 4, coreOversubscription: 2}", "pools[0].topology.coreOversubscription", "below the spine's 4"},
		{"      topology: {racksPerBlock: 2}", "pools[0].topology.racksPerBlock", "needs nodesPerRack"},
		{"      topology: {nvlinkDomainGPUs: 12}", "pools[0].topology.nvlinkDomainGPUs", "not a whole number of the pool's 8-GPU nodes"},
		{"      topology: {nvlinkDomainGPUs: 16}", "pools[0].topology.domainFabric", "no built-in NVLink domain wider than a node"},
		{"      topology: {nvlinkDomainGPUs: 32, nodesPerRack: 6, domainFabric: gb200-nvl72}", "pools[0].topology.nodesPerRack", "not a whole number of 4-node NVLink domains"},
		{"      topology: {nodesPerRak: 2}", "nodesPerRak", "unknown"},
		{"      topology: {zones: [a, b, a]}", "pools[0].topology.zones[2]", `"a" is listed twice`},
		{"      topology: {zones: [a, \"b c\"]}", "pools[0].topology.zones[1]", "not a zone name"},
		{"      topology: {zones: [a, \"\"]}", "pools[0].topology.zones[1]", "not a zone name"},
		{"      labels: {topology.kubernetes.io/zone: a}\n      topology: {zones: [a, b]}", "pools[0].labels", "give one or the other"},
	} {
		s, err := Parse("topo.yaml", "", []byte(fmt.Sprintf(topoScenario, c.block, "MostAllocated")))
		if err == nil {
			_, err = s.Build(Options{})
		}
		require.Error(t, err, c.block)
		require.Contains(t, err.Error(), "topo.yaml:15:", c.block)
		require.Contains(t, err.Error(), c.field, c.block)
		require.Contains(t, err.Error(), c.msg, c.block)
	}
}

// A node list of 8 GB200 trays (4 GPUs each) in two NVLink domains, each
// behind its own bottom-layer EC2 network node under one middle-layer node
// (the labels EKS and GPU feature discovery put on nodes): the pool's
// topology is read from them (domains and racks of 4 trays, a block of 2
// racks) and prices the gang by the level it spans, by hand:
//
//	4 pods x 4 GPUs (MostAllocated packs one domain): 16 ranks over the
//	  NVL72 fabric, S x 2 x 15/16 = 26.25e9 bytes, 39.67 us + 26.25e9 /
//	  835e9 = 31.48 ms a step, 100 x 1031.48 ms = 103.148 s;
//	8 pods x 4 GPUs (both domains, so both racks of the block): the rails
//	  (ib-ndr-400, 155.66 GB/s; a tray of an NVLink domain has a NIC a GPU,
//	  so its 4 GPUs use all its rails) through the 2:1 spine, 77.83 GB/s;
//	  S x 2 x 31/32 = 27.125e9 bytes, 50 us + 27.125e9 / 77.83e9 =
//	  348.57 ms, 100 x 1348.57 ms = 134.857 s.
//
// Without the labels the same trays are a flat pool (each its own domain).
func TestNodeListTopologyPricesTheGang(t *testing.T) {
	dir := t.TempDir()
	var dump strings.Builder
	dump.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range 8 {
		fmt.Fprintf(&dump, `- apiVersion: v1
  kind: Node
  metadata:
    name: tray-%d
    labels:
      nvidia.com/gpu.product: NVIDIA-GB200
      nvidia.com/gpu.clique: 6f1c2d7e-5b1a-4c3e-9d2f-0a1b2c3d4e5f.%d
      topology.kubernetes.io/region: us-east-1
      topology.k8s.aws/network-node-layer-1: nn-1
      topology.k8s.aws/network-node-layer-2: nn-2
      topology.k8s.aws/network-node-layer-3: nn-3%d
  status:
    allocatable: {cpu: "140", memory: 800Gi, nvidia.com/gpu: "4"}
`, i, i/4, i/4)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes.yaml"), []byte(dump.String()), 0o644))
	run := func(replicas int) (sim.JobRecord, *Built) {
		scen := strings.Replace(fmt.Sprintf(topoScenario, "", "MostAllocated"), `    pools:
    - name: h100
      count: 4
      gpuModel: H100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1Ti
`, "    nodes: {path: nodes.yaml}\n", 1)
		scen = strings.Replace(scen, "replicas: 4", fmt.Sprintf("replicas: %d", replicas), 1)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scen), 0o644))
		s, err := LoadFile(filepath.Join(dir, "s.yaml"))
		require.NoError(t, err)
		b, err := s.Build(Options{})
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		require.Len(t, res.Jobs, 1)
		return res.Jobs[0], b
	}
	one, b := run(4)
	p := b.Config.Pools[0]
	require.Equal(t, topology.Spec{DomainGPUs: 16, NodesPerRack: 4, RacksPerBlock: 2}, p.Topology)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "topology from its nodes' labels (nvidia.com/gpu.clique, topology.k8s.aws/network-node-layer-2, topology.k8s.aws/network-node-layer-3): NVLink domains of 4 nodes, racks of 4 nodes, blocks of 2 racks, 8 nodes in all")
	// The cloud's labels name gpuplan's levels: a Kueue Topology or a pod
	// affinity on EKS's layer-3 label finds the racks.
	r0, _ := p.LevelLabel(0, "topology.k8s.aws/network-node-layer-3")
	r1, _ := p.LevelLabel(4, "topology.k8s.aws/network-node-layer-3")
	require.NotEqual(t, r0, r1)
	r3, _ := p.LevelLabel(3, "topology.k8s.aws/network-node-layer-3")
	require.Equal(t, r0, r3)
	require.Equal(t, "nvlink-domain", one.Step().Level)
	require.InDelta(t, 31.48, one.Step().CommMs, 0.01)
	require.InDelta(t, 103148, float64(one.End-one.Start), 1)
	both, _ := run(8)
	require.Equal(t, "block", both.Step().Level)
	require.InDelta(t, 348.57, both.Step().CommMs, 0.01)
	require.InDelta(t, 134857, float64(both.End-both.Start), 1)
}
