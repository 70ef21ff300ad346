package scenarios_test

import (
	"os"
	"path/filepath"
	"strconv"
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
	_, want, np, nc := writtenCluster(t, roundTripScenario(roundTripCluster, ""))
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
	orig, want, np, nc := writtenCluster(t, roundTripScenario(cluster, ""))
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

// Fixed reserved pools: a capacity block (p5.48xlarge x 2 at $30 from
// 1h to 3h) and an on-demand capacity reservation (p4d.24xlarge x 1, at
// the on-demand price). gpuplan manifests writes each as Karpenter takes
// reserved capacity: a static NodePool of capacity type reserved (the
// block's also requiring karpenter.k8s.aws/capacity-reservation-type
// capacity-block) from an EC2NodeClass of its own whose
// capacityReservationSelectorTerms select the reservation by tags
// carrying its instance type, count, price and the block's window; read
// back, the pools are the same (capacity type, window, price, count) and
// the run bills the same: by hand the block 2 x 2 h x $30 = $120.00 (the
// whole window within the 4 h run), the reservation 4 h at p4d's price.
func TestGeneratedCapacityBlockReadsBack(t *testing.T) {
	const cluster = `
    pools:
    - name: block
      count: 2
      instanceType: p5.48xlarge
      capacityType: reserved
      pricePerHour: 30
      window: {start: 1h, end: 3h}
    - name: odcr
      count: 1
      instanceType: p4d.24xlarge
      capacityType: reserved
`
	src := strings.Replace(roundTripScenario(cluster, ""), "horizon: 2h", "horizon: 4h", 1)
	orig, want, np, nc := writtenCluster(t, src)
	classes, err := os.ReadFile(nc)
	require.NoError(t, err)
	for _, w := range []string{"name: gpu-block", "name: gpu-odcr", "capacityReservationSelectorTerms:", "gpuplan.dev/count: \"2\"",
		"gpuplan.dev/instance-type: p5.48xlarge", "gpuplan.dev/nodepool: block", "gpuplan.dev/price-per-hour: \"30\"",
		"gpuplan.dev/window-start: 1h0m0s", "gpuplan.dev/window-end: 3h0m0s", "gpuplan.dev/instance-type: p4d.24xlarge"} {
		require.Contains(t, string(classes), w)
	}
	pools, err := os.ReadFile(np)
	require.NoError(t, err)
	for _, w := range []string{"key: karpenter.k8s.aws/capacity-reservation-type", "- capacity-block", "name: gpu-block", "name: gpu-odcr", "- reserved", "replicas: 2"} {
		require.Contains(t, string(pools), w)
	}
	require.Equal(t, 1, strings.Count(string(pools), "capacity-reservation-type"), "only the block asks for capacity blocks")

	back, err := scenarios.Parse("back.yaml", "", []byte(strings.Replace(roundTripScenario(" {}", "\n  policy:\n    manifests: ["+np+", "+nc+"]"), "horizon: 2h", "horizon: 4h", 1)))
	require.NoError(t, err)
	for i, w := range orig.Spec.Cluster.Pools {
		g := back.Spec.Cluster.Pools[i]
		require.Equal(t, w.Name, g.Name)
		require.Equal(t, w.Count, g.Count, w.Name)
		require.Equal(t, w.InstanceType, g.InstanceType, w.Name)
		require.Equal(t, "reserved", g.CapacityType, w.Name)
		require.Equal(t, w.PricePerHour, g.PricePerHour, w.Name)
		require.Equal(t, w.Window, g.Window, w.Name)
	}
	got, err := back.Cluster()
	require.NoError(t, err)
	require.Equal(t, want.Prices, got.Prices)
	bill := func(s *scenarios.Scenario) (block, total float64) {
		b, err := s.Build(scenarios.Options{})
		require.NoError(t, err)
		defer b.Close()
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		cs := reports.Cost(res, b.Pricing)
		require.Equal(t, "block", cs.ByPool[0].Name)
		return cs.ByPool[0].Cost, cs.Total
	}
	wBlock, wTotal := bill(orig)
	gBlock, gTotal := bill(back)
	require.Equal(t, 120.0, wBlock)
	require.Equal(t, wBlock, gBlock)
	require.Equal(t, wTotal, gTotal)
}

// The reserved pools' manifests edited by hand: what does not make a pool
// is refused at its file, line and field.
func TestCapacityBlockManifestsRefused(t *testing.T) {
	const cluster = `
    pools:
    - name: block
      count: 2
      instanceType: p5.48xlarge
      capacityType: reserved
      pricePerHour: 30
      window: {start: 1h, end: 3h}
`
	_, _, np, nc := writtenCluster(t, roundTripScenario(cluster, ""))
	npText, err := os.ReadFile(np)
	require.NoError(t, err)
	ncText, err := os.ReadFile(nc)
	require.NoError(t, err)
	line := func(text, s string) int {
		i := strings.Index(text, s)
		require.GreaterOrEqual(t, i, 0, s)
		return strings.Count(text[:i], "\n") + 1
	}
	// Each edit, the message, and the line the error names: of at in the
	// edited file, or in the other one (errAt "np" or "nc").
	for _, c := range []struct {
		name, file, old, new, want, errIn, at string
	}{
		{"a window without its end", "nc", "      gpuplan.dev/window-end: 3h0m0s\n", "", "spec.capacityReservationSelectorTerms[0].tags: EC2NodeClass gpu-block: a capacity block's window needs both gpuplan.dev/window-start and gpuplan.dev/window-end", "nc", "gpuplan.dev/count: \"2\""},
		{"an end before the start", "nc", "window-end: 3h0m0s", "window-end: 30m", `spec.capacityReservationSelectorTerms[0].tags["gpuplan.dev/window-end"]: EC2NodeClass gpu-block: "30m" is not a time after the window's start 1h0m0s`, "nc", "window-end: 30m"},
		{"replicas beyond the reservation", "np", "replicas: 2", "replicas: 3", "spec.replicas: NodePool block: replicas 3, but its reservation (EC2NodeClass gpu-block) holds 2 instances", "np", "replicas: 3"},
		{"no reservation", "np", "name: gpu-block", "name: gpu", `spec.template.spec.nodeClassRef: NodePool block: a static NodePool of reserved capacity needs its EC2NodeClass "gpu" to select one capacity reservation with gpuplan's tags`, "np", "group: karpenter.k8s.aws"},
		{"a block without a window", "nc", "      gpuplan.dev/window-end: 3h0m0s\n      gpuplan.dev/window-start: 1h0m0s\n", "", "spec.template.spec.nodeClassRef: NodePool block: its requirements ask for a capacity block, but its reservation (EC2NodeClass gpu-block) gives no window", "np", "group: karpenter.k8s.aws"},
	} {
		t.Run(c.name, func(t *testing.T) {
			texts := map[string]string{"np": string(npText), "nc": string(ncText)}
			require.Contains(t, texts[c.file], c.old)
			texts[c.file] = strings.Replace(texts[c.file], c.old, c.new, 1)
			d := t.TempDir()
			paths := map[string]string{"np": filepath.Join(d, "nodepools.yaml"), "nc": filepath.Join(d, "ec2nodeclass.yaml")}
			for k, p := range paths {
				require.NoError(t, os.WriteFile(p, []byte(texts[k]), 0o644))
			}
			_, err := scenarios.Parse("back.yaml", "", []byte(roundTripScenario(" {}", "\n  policy:\n    manifests: ["+paths["np"]+", "+paths["nc"]+"]")))
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			require.Contains(t, err.Error(), paths[c.errIn]+":"+strconv.Itoa(line(texts[c.errIn], c.at))+":", err.Error())
		})
	}
}

// writtenCluster parses the scenario src, builds its cluster and writes
// its manifests to a folder of the test's: the scenario, the cluster and
// the written NodePools and EC2NodeClass files.
func writtenCluster(t *testing.T, src string) (*scenarios.Scenario, *scenarios.ClusterModel, string, string) {
	t.Helper()
	orig, err := scenarios.Parse("orig.yaml", "", []byte(src))
	require.NoError(t, err)
	want, err := orig.Cluster()
	require.NoError(t, err)
	files, _, err := manifests.Generate(orig, want, manifests.Options{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, manifests.WriteDir(dir, files))
	return orig, want, filepath.Join(dir, filepath.FromSlash(manifests.PathNodePools)), filepath.Join(dir, filepath.FromSlash(manifests.PathEC2NodeClass))
}
