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
