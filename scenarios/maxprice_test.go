package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
)

// Two autoscaled pools of one Azure H100 VM size in eastus, each 0 to 1
// node: spot (the catalog's spot price $2.192418 a node-hour, as
// TestAKSNodeDumpEndToEnd reads it), then on-demand. The cluster
// autoscaler grows the first group with room, the spot pool, unless its
// max price is under its price.
const maxPriceScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: max-price}
spec:
  horizon: 3h
  pricing: {region: eastus}
  cluster:
    pools:
    - name: spotnp
      count: 0
      instanceType: Standard_NC40ads_H100_v5
      capacityType: spot
      MAXPRICE
      autoscaling: {maxNodes: 1}
      interruptions: {mtbf: 10000h}
    - name: odnp
      count: 0
      instanceType: Standard_NC40ads_H100_v5
      autoscaling: {maxNodes: 1}
  workload:
    synthetic:
      jobs: 1
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "8", memory: 64Gi, gpus: 1}
        duration: 1h
`

func maxPriceRun(t *testing.T, body string) (*sim.Result, *Built) {
	t.Helper()
	s, err := Parse("m.yaml", "", []byte(body))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	return res, b
}

// By hand: at $2.50 (and at -1, up to the on-demand price) the spot pool
// is at or above its $2.192418 and takes the launch; at $2.00 it is
// below, so the autoscaler skips the spot pool and launches on demand.
func TestSpotMaxPriceSkipsTheOffering(t *testing.T) {
	for _, c := range []struct {
		max                string
		spotNodes, odNodes int64
	}{{"maxPrice: 2.5", 1, 0}, {"maxPrice: -1", 1, 0}, {"maxPrice: 2.0", 0, 1}} {
		res, b := maxPriceRun(t, strings.Replace(maxPriceScenario, "MAXPRICE", c.max, 1))
		require.Equal(t, c.spotNodes, res.Pools[0].Capacity.Launched, c.max)
		require.Equal(t, c.odNodes, res.Pools[1].Capacity.Launched, c.max)
		require.Equal(t, sim.Completed, res.Jobs[0].Outcome, c.max)
		require.InDelta(t, 2.192418, b.Pricing.Pools[0].PerHour, 1e-9)
		if c.odNodes == 1 {
			require.Contains(t, b.Pricing.Pools[0].Interruptions, "max price $2, below the spot price $2.192418: the autoscaler launches none of it")
		}
	}
}

func TestSpotMaxPriceRefused(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		// A fixed pool whose nodes could not launch: exit 2 at the field.
		{"      autoscaling: {maxNodes: 1}\n      interruptions", "      interruptions", `m.yaml:13:17: spec.cluster.pools[0].maxPrice: is $2 a node-hour, below the spot price of Standard_NC40ads_H100_v5, $2.192418 (`},
		{"count: 0\n      instanceType: Standard_NC40ads_H100_v5\n      capacityType: spot", "count: 1\n      instanceType: Standard_NC40ads_H100_v5\n      capacityType: spot", `yet the pool starts with 1 nodes and keeps at least 0; set count and minNodes to 0 or raise it`},
		{"maxPrice: 2.0", "maxPrice: 0", `spec.cluster.pools[0].maxPrice: is 0; give -1 (up to the on-demand price) or a price above 0`},
		{"      capacityType: spot\n      maxPrice: 2.0\n      autoscaling: {maxNodes: 1}\n      interruptions: {mtbf: 10000h}\n", "      maxPrice: 2.0\n      autoscaling: {maxNodes: 1}\n", `spec.cluster.pools[0].maxPrice: is a spot pool's`},
		// EC2: a p4d.24xlarge's spot price in us-east-1 is far above $1.
		{"      instanceType: Standard_NC40ads_H100_v5\n      capacityType: spot\n      maxPrice: 2.0\n      autoscaling: {maxNodes: 1}\n", "      instanceType: p4d.24xlarge\n      region: us-east-1\n      capacityType: spot\n      maxPrice: 1\n", `spec.cluster.pools[0].maxPrice: is $1 a node-hour, below the spot price of p4d.24xlarge`},
	} {
		body := strings.Replace(maxPriceScenario, "MAXPRICE", "maxPrice: 2.0", 1)
		require.Contains(t, body, c.from)
		body = strings.Replace(body, c.from, c.to, 1)
		s, err := Parse("m.yaml", "", []byte(body))
		if err == nil {
			var b *Built
			if b, err = s.Build(Options{}); err == nil {
				b.Close()
			}
		}
		require.Error(t, err, c.want)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want)
	}
}
