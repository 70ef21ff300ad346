package scenarios_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/manifests"
	"gpuplan.dev/gpuplan/sim"
)

// roundTripCluster has what gpuplan manifests writes as Karpenter
// NodePools: fixed pools (static NodePools) on-demand and spot, and a
// NodePool over two instance types and both capacity types.
const roundTripCluster = `
    pools:
    - name: a100
      count: 2
      instanceType: p4d.24xlarge
    - name: t4-spot
      count: 3
      instanceType: g4dn.xlarge
      capacityType: spot
    nodePools:
    - name: burst
      instanceTypes: [p5.48xlarge, p4d.24xlarge]
      capacityTypes: [spot, on-demand]
      limits: {nvidia.com/gpu: 32}
      consolidation: {policy: WhenEmpty, consolidateAfter: 10m}
`

func roundTripScenario(cluster, policy string) string {
	return `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: roundtrip}
spec:
  horizon: 2h
  cluster:` + cluster + policy + `
  workload:
    synthetic:
      classes:
      - name: j
        arrival: {process: fixed, ratePerHour: 2}
        pod: {cpu: "8", memory: 64Gi, gpus: 8}
        duration: 30m
`
}

// gpuplan's own NodePools, written by gpuplan manifests and read back as
// the cluster (policy manifests), give the same pools: names, instance
// types, node counts and maxima, sizes, capacity types and prices, and
// the same NodePool group.
func TestGeneratedNodePoolsReadBack(t *testing.T) {
	orig, err := scenarios.Parse("orig.yaml", "", []byte(roundTripScenario(roundTripCluster, "")))
	require.NoError(t, err)
	want, err := orig.Cluster()
	require.NoError(t, err)
	files, _, err := manifests.Generate(orig, want, manifests.Options{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, manifests.WriteDir(dir, files))
	np := filepath.Join(dir, filepath.FromSlash(manifests.PathNodePools))
	nc := filepath.Join(dir, filepath.FromSlash(manifests.PathEC2NodeClass))
	for _, f := range []string{np, nc} {
		_, err := os.Stat(f)
		require.NoError(t, err)
	}
	back, err := scenarios.Parse("back.yaml", "", []byte(roundTripScenario(" {}", "\n  policy:\n    manifests: ["+np+", "+nc+"]")))
	require.NoError(t, err)
	got, err := back.Cluster()
	require.NoError(t, err)

	require.Len(t, got.Pools, len(want.Pools))
	for i := range want.Pools {
		w, g := want.Pools[i], got.Pools[i]
		require.Equal(t, w.Name, g.Name)
		require.Equal(t, w.InstanceType, g.InstanceType, w.Name)
		require.Equal(t, w.Nodes, g.Nodes, w.Name)
		require.Equal(t, w.Slots(), g.Slots(), w.Name)
		require.Equal(t, w.GPUModel, g.GPUModel, w.Name)
		require.Equal(t, w.GPUsPerNode, g.GPUsPerNode, w.Name)
		require.Equal(t, w.MilliCPU, g.MilliCPU, w.Name)
		require.Equal(t, w.MemoryMiB, g.MemoryMiB, w.Name)
		require.Equal(t, w.Labels[scenarios.LabelCapacityType], g.Labels[scenarios.LabelCapacityType], w.Name)
		require.Equal(t, want.Prices[i], got.Prices[i], w.Name)
	}
	// By hand: 2 + 3 fixed nodes; burst's two types in two capacity types,
	// 32 GPUs of 8-GPU nodes: at most 4 nodes of each.
	var names []string
	for _, p := range got.Pools {
		names = append(names, p.Name)
	}
	require.Equal(t, "a100 t4-spot burst/p5.48xlarge/spot burst/p5.48xlarge/on-demand burst/p4d.24xlarge/spot burst/p4d.24xlarge/on-demand", strings.Join(names, " "))
	require.Equal(t, []int{2, 3, 0, 0, 0, 0}, []int{got.Pools[0].Nodes, got.Pools[1].Nodes, got.Pools[2].Nodes, got.Pools[3].Nodes, got.Pools[4].Nodes, got.Pools[5].Nodes})
	require.Equal(t, 4, got.Pools[2].Slots())
	require.NotNil(t, got.Capacity)
	require.Len(t, got.Capacity.Groups, 1)
	require.Equal(t, int64(32), got.Capacity.Groups[0].MaxGPUs)
	require.Equal(t, want.Capacity.Pools, got.Capacity.Pools)
}

// A NodePool with a capacity reservation (Karpenter's reserved capacity
// type): gpuplan manifests writes it with reserved among its capacity
// types and an EC2NodeClass of its own whose capacityReservationSelectorTerms
// select the reservation by tags carrying its instance type, count and
// price; read back, the NodePool has the same reservation and the cluster
// the same pools, prices and capacity, so the run bills the same.
func TestGeneratedReservedNodePoolReadsBack(t *testing.T) {
	const cluster = `
    nodePools:
    - name: train
      instanceTypes: [p5.48xlarge]
      capacityTypes: [on-demand, reserved]
      reservations:
      - {instanceType: p5.48xlarge, count: 2, pricePerHour: 30}
      limits: {nodes: 3}
`
	orig, err := scenarios.Parse("orig.yaml", "", []byte(roundTripScenario(cluster, "")))
	require.NoError(t, err)
	want, err := orig.Cluster()
	require.NoError(t, err)
	files, _, err := manifests.Generate(orig, want, manifests.Options{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, manifests.WriteDir(dir, files))
	np := filepath.Join(dir, filepath.FromSlash(manifests.PathNodePools))
	nc := filepath.Join(dir, filepath.FromSlash(manifests.PathEC2NodeClass))
	written, err := os.ReadFile(nc)
	require.NoError(t, err)
	for _, w := range []string{"name: gpu-train", "capacityReservationSelectorTerms:", "gpuplan.dev/count: \"2\"",
		"gpuplan.dev/instance-type: p5.48xlarge", "gpuplan.dev/nodepool: train", "gpuplan.dev/price-per-hour: \"30\""} {
		require.Contains(t, string(written), w)
	}
	pools, err := os.ReadFile(np)
	require.NoError(t, err)
	require.Contains(t, string(pools), "name: gpu-train")
	require.Contains(t, string(pools), "- reserved")

	back, err := scenarios.Parse("back.yaml", "", []byte(roundTripScenario(" {}", "\n  policy:\n    manifests: ["+np+", "+nc+"]")))
	require.NoError(t, err)
	got, err := back.Cluster()
	require.NoError(t, err)
	require.Len(t, got.Pools, len(want.Pools))
	for i := range want.Pools {
		require.Equal(t, want.Pools[i].Name, got.Pools[i].Name)
		require.Equal(t, want.Pools[i].Slots(), got.Pools[i].Slots(), want.Pools[i].Name)
		require.Equal(t, want.Prices[i], got.Prices[i], want.Pools[i].Name)
	}
	// By hand: the reserved pool holds the reservation's 2 nodes, paid for
	// the whole run at its $30.
	var held int
	for _, p := range got.Prices {
		if p.CapacityType == "reserved" {
			held = p.Held
			require.Equal(t, 30.0, p.PerHour)
		}
	}
	require.Equal(t, 2, held)
	require.Equal(t, want.Capacity.Pools, got.Capacity.Pools)
	// The same run and bill: the reservation's 2 nodes x 2 h x $30 =
	// $120.00 at least, whatever else is launched on demand.
	bill := func(s *scenarios.Scenario) float64 {
		b, err := s.Build(scenarios.Options{})
		require.NoError(t, err)
		defer b.Close()
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		return reports.Cost(res, b.Pricing).Total
	}
	wb, gb := bill(orig), bill(back)
	require.Equal(t, wb, gb)
	require.GreaterOrEqual(t, wb, 120.0)
}
