package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const overlayFmt = `---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: %s}
spec:
  weight: %d
  requirements:
  - {key: karpenter.k8s.aws/instance-family, operator: In, values: [%s]}
  %s
`

// Karpenter's NodeOverlay prices, by hand from the catalog rows of
// TestKarpenterPickInSimulation (g6.2xlarge $0.9776, g5.2xlarge $1.212 an
// hour on demand, the cheapest of each family the pod fits): 25% off g5
// makes g5.2xlarge $0.909, cheaper than g6.2xlarge, so Karpenter launches
// it; 15% off makes it $1.0302, still dearer. A fixed price of 0.5 on g5
// wins too. Of two overlays on g5, the heavier one sets the price (+50%
// at weight 20 over -25% at weight 10: $1.818, g6 again).
func TestNodeOverlayPricesKarpentersChoice(t *testing.T) {
	pool := strings.Replace(fmt.Sprintf(g5g6, "gpu", 0, "g5, g6", "on-demand"), "  weight: 0\n", "", 1)
	ov := func(name string, w int, change string) string {
		return fmt.Sprintf(overlayFmt, name, w, "g5", change)
	}
	require.Equal(t, []string{"gpu/g5.2xlarge/on-demand"}, launched(t, pool+ov("discount", 10, `priceAdjustment: "-25%"`)))
	require.Equal(t, []string{"gpu/g6.2xlarge/on-demand"}, launched(t, pool+ov("discount", 10, `priceAdjustment: "-15%"`)))
	require.Equal(t, []string{"gpu/g5.2xlarge/on-demand"}, launched(t, pool+ov("fixed", 10, `price: "0.5"`)))
	require.Equal(t, []string{"gpu/g6.2xlarge/on-demand"}, launched(t, pool+ov("discount", 10, `priceAdjustment: "-25%"`)+ov("licence", 20, `priceAdjustment: "+50%"`)))

	// The bill is at the overlaid price, and the price's basis says why.
	dir := t.TempDir()
	p := filepath.Join(dir, "np.yaml")
	require.NoError(t, os.WriteFile(p, []byte(pool+ov("discount", 10, `priceAdjustment: "-25%"`)), 0o644))
	s, err := Parse("s.yaml", dir, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: overlay}
spec:
  horizon: 1h
  policy: {manifests: [`+p+`]}
  workload:
    synthetic:
      classes:
      - {name: infer, arrival: {process: fixed, ratePerHour: 1}, pod: {cpu: "6", memory: 20Gi, gpus: 1}, duration: 10m}
`))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	found := false
	for i, pp := range m.Pools {
		if pp.Name == "gpu/g5.2xlarge/on-demand" {
			found = true
			require.InDelta(t, 1.212*0.75, m.Prices[i].PerHour, 1e-9)
			require.Contains(t, m.Prices[i].Basis, "NodeOverlay discount")
		}
	}
	require.True(t, found)
}

// Bad overlays are refused at their field, as the CRD refuses them.
func TestNodeOverlayRefused(t *testing.T) {
	pool := strings.Replace(fmt.Sprintf(g5g6, "gpu", 0, "g5", "on-demand"), "  weight: 0\n", "", 1)
	for _, c := range []struct{ change, want string }{
		{`priceAdjustment: "-150%"`, `spec.priceAdjustment: "-150%" is not a price adjustment`},
		{`price: "-1"`, `spec.price: "-1" is not a price`},
		{"price: \"1\"\n  priceAdjustment: \"+1\"", `cannot set both 'price' and 'priceAdjustment'`},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "np.yaml")
		require.NoError(t, os.WriteFile(p, []byte(pool+fmt.Sprintf(overlayFmt, "bad", 1, "g5", c.change)), 0o644))
		_, err := LoadPolicy([]string{p})
		require.ErrorContains(t, err, c.want)
		require.ErrorContains(t, err, "np.yaml:")
	}
}

// A NodePool of g6.2xlarge ($0.9776 an hour, one L4) and g6f.2xlarge
// ($0.475, a fractional L4 that EC2, and so Karpenter's catalog, lists
// with no GPU): a pod asking a GPU (6 CPUs, 20 GiB) fits only g6.2xlarge
// until a NodeOverlay gives g6f nvidia.com/gpu: 1, as the Karpenter docs'
// fractional-GPU example does; then g6f.2xlarge, the cheaper, launches.
const fracPool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g6.2xlarge, g6f.2xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits: {nvidia.com/gpu: 8}
`

func capacityOverlay(name string, weight int, capacity string) string {
	return fmt.Sprintf(`---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: %s}
spec:
  weight: %d
  requirements:
  - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6f]}
  capacity: {%s}
`, name, weight, capacity)
}

// Karpenter's rules for spec.capacity, by hand: in weight order each
// resource is set by the first overlay that gives it and later ones add
// only what is not set (a weight-10 nvidia.com/gpu: 1 stands over a
// weight-5 nvidia.com/gpu: 0, whose example.com/fuse: 1 is still added; at
// weight 20 the 0 stands and g6f takes no GPU pod); two overlays of the
// same weight setting one resource conflict, and the one Karpenter takes
// second (equal weights: the name earlier in the alphabet) is applied
// nowhere.
func TestNodeOverlayCapacityGivesGPUs(t *testing.T) {
	g6, g6f := []string{"gpu/g6.2xlarge/on-demand"}, []string{"gpu/g6f.2xlarge/on-demand"}
	require.Equal(t, g6, launched(t, fracPool))
	require.Equal(t, g6f, launched(t, fracPool+capacityOverlay("frac", 10, "nvidia.com/gpu: 1")))
	require.Equal(t, g6f, launched(t, fracPool+capacityOverlay("frac", 10, "nvidia.com/gpu: 1")+capacityOverlay("more", 5, "nvidia.com/gpu: 0, example.com/fuse: 1")))
	require.Equal(t, g6, launched(t, fracPool+capacityOverlay("frac", 10, "nvidia.com/gpu: 1")+capacityOverlay("more", 20, "nvidia.com/gpu: 0, example.com/fuse: 1")))
	// z-none comes first at equal weight and sets 0; a-frac conflicts.
	require.Equal(t, g6, launched(t, fracPool+capacityOverlay("a-frac", 10, "nvidia.com/gpu: 1")+capacityOverlay("z-none", 10, "nvidia.com/gpu: 0")))
	// z-frac first sets 1; a-none conflicts and is not applied.
	require.Equal(t, g6f, launched(t, fracPool+capacityOverlay("z-frac", 10, "nvidia.com/gpu: 1")+capacityOverlay("a-none", 10, "nvidia.com/gpu: 0")))

	// The cluster says so: g6f.2xlarge with one L4 a node, the fuse noted
	// as not modelled, the conflict named.
	dir := t.TempDir()
	p := filepath.Join(dir, "np.yaml")
	require.NoError(t, os.WriteFile(p, []byte(fracPool+capacityOverlay("frac", 10, "nvidia.com/gpu: 1")+capacityOverlay("more", 5, "nvidia.com/gpu: 0, example.com/fuse: 1")+capacityOverlay("a-frac", 5, "example.com/fuse: 2")), 0o644))
	s, err := Parse("s.yaml", dir, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: overlay}
spec:
  horizon: 1h
  policy: {manifests: [`+p+`]}
  workload:
    synthetic:
      classes:
      - {name: infer, arrival: {process: fixed, ratePerHour: 1}, pod: {cpu: "6", memory: 20Gi, gpus: 1}, duration: 10m}
`))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	found := false
	for i, pp := range m.Pools {
		if pp.Name == "gpu/g6f.2xlarge/on-demand" {
			found = true
			require.Equal(t, int32(1), pp.GPUsPerNode)
			require.Equal(t, "L4", pp.GPUModel)
			require.InDelta(t, 0.475, m.Prices[i].PerHour, 1e-9)
		}
	}
	require.True(t, found)
	notes := strings.Join(m.PriceNotes(), "\n")
	require.Contains(t, notes, "NodeOverlay frac gives g6f.2xlarge in NodePool gpu 1 nvidia.com/gpu a node (Karpenter's simulation and gpuplan's: 1 x L4; each a fraction of one, 5722 MiB of its 24576 MiB, taken at a whole one's speed)")
	require.Contains(t, notes, "NodeOverlay more adds example.com/fuse 1 to g6f.2xlarge in NodePool gpu: not modelled")
	require.Contains(t, notes, "NodeOverlay a-frac conflicts with another overlay (example.com/fuse on g6f.2xlarge was set at the same weight 5 by NodeOverlay more)")
}

// spec.capacity is refused at its field as the CRD refuses it (a standard
// resource), and where a node's capacity cannot be (negative, a fraction
// of a GPU).
func TestNodeOverlayCapacityRefused(t *testing.T) {
	for _, c := range []struct{ capacity, field, want string }{
		{"cpu: 4", "spec.capacity.cpu", "cpu is restricted: capacity adds extended resources only"},
		{"pods: 10", "spec.capacity.pods", "pods is restricted"},
		{`example.com/fuse: "-1"`, "spec.capacity.example.com/fuse", "cannot be negative"},
		{`nvidia.com/gpu: 500m`, "spec.capacity.nvidia.com/gpu", "a whole number of devices"},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "np.yaml")
		require.NoError(t, os.WriteFile(p, []byte(fracPool+capacityOverlay("bad", 1, c.capacity)), 0o644))
		_, err := LoadPolicy([]string{p})
		var ie *InputError
		require.ErrorAs(t, err, &ie, c.capacity)
		require.Equal(t, c.field, ie.Field)
		require.Contains(t, ie.Msg, c.want)
		require.Equal(t, 20, ie.Line, c.capacity) // the capacity line of np.yaml
	}
}
