package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// spotPriceScenario has spot pools the catalog has no spot price for.
// The figures the tests expect are the CSV rows', worked by hand:
//   - g5.48xlarge, us-east-1: on-demand 16.288 (Karpenter's list), Spot
//     Advisor savings 71%: 16.288 x 0.29 = 4.72352.
//   - p4d.24xlarge, ap-south-1: on-demand 39.32, SpotPrice blank (the
//     SkyPilot row), savings 90%: 39.32 x 0.10 = 3.932.
//   - g5.xlarge, g5.2xlarge, us-east-1 (a NodePool): on-demand 1.006 and
//     1.212, savings 59% and 58%: 0.41246 and 0.50904.
//   - inf2.8xlarge, us-east-1, a type only Karpenter's catalog knows:
//     on-demand 1.96786, savings 70%: 1.96786 x 0.30 = 0.590358.
//   - p5.4xlarge, us-east-1: on-demand 6.88 (Karpenter's list), no Spot
//     Advisor row: billed at on-demand, an upper bound.
//   - p4d.24xlarge, us-east-1: the catalog's spot prices (median of three
//     zones, 6.7915) win over the advisor's 0.1 x.
const spotPriceScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: spotprice
spec:
  horizon: 2h
  cluster:
    pools:
    - name: g5big
      count: 1
      instanceType: g5.48xlarge
      capacityType: spot
    - name: mumbai
      count: 1
      instanceType: p4d.24xlarge
      capacityType: spot
      region: ap-south-1
    - name: p4d
      count: 1
      instanceType: p4d.24xlarge
      capacityType: spot
    nodePools:
    - name: small
      instanceTypes: [g5.xlarge, g5.2xlarge, p5.4xlarge, inf2.8xlarge]
      capacityTypes: [spot, on-demand]
      limits: {nvidia.com/gpu: 8}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 2}
        pod: {cpu: "4", memory: 16Gi, gpus: 1}
        duration: 30m
`

func spotPrices(t *testing.T, body string) (map[string]PoolPrice, []string) {
	t.Helper()
	s, err := Parse("s.yaml", "", []byte(body))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	out := map[string]PoolPrice{}
	for _, p := range b.Prices {
		out[p.Pool] = p
	}
	return out, b.Assumptions
}

func TestSpotPriceFromSpotAdvisor(t *testing.T) {
	prices, notes := spotPrices(t, spotPriceScenario)
	for pool, want := range map[string]float64{
		"g5big": 4.72352, "mumbai": 3.932, "p4d": 6.7915,
		"small/g5.xlarge/spot": 0.41246, "small/g5.2xlarge/spot": 0.50904, "small/p5.4xlarge/spot": 6.88,
		"small/inf2.8xlarge/spot": 0.590358, "small/inf2.8xlarge/on-demand": 1.96786,
		"small/g5.xlarge/on-demand": 1.006, "small/p5.4xlarge/on-demand": 6.88,
	} {
		require.InDelta(t, want, prices[pool].PerHour, 1e-9, pool)
	}
	// Each estimate says where it comes from, in the price's basis and
	// once in the run's assumptions.
	require.Contains(t, prices["g5big"].Basis, "on-demand $16.288/h (Karpenter on-demand list (generated 2026-01-19) us-east-1) less 71%, the Spot Advisor's average savings for g5.48xlarge in us-east-1")
	require.Contains(t, prices["mumbai"].Basis, "on-demand $39.32/h (catalog on-demand ap-south-1) less 90%")
	require.Equal(t, "catalog spot us-east-1, median of 3 zones (5.093-9.611)", prices["p4d"].Basis)
	require.Contains(t, prices["small/p5.4xlarge/spot"].Basis, "billed at on-demand (an upper bound)")
	require.Contains(t, prices["small/inf2.8xlarge/spot"].Basis, "on-demand $1.96786/h (Karpenter's us-east-1 on-demand list) less 70%")
	// One line per region: which types, the percentage, the figures.
	require.Equal(t, []string{
		"spot priced from " + SpotEstimateNote + " (AWS Spot Instance Advisor, snapshot 2025-06-28), on-demand x (1 - savings%), where the price catalog has no spot price in us-east-1: " +
			"g5.48xlarge 71% off $16.288/h = $4.72352/h, g5.xlarge 59% off $1.006/h = $0.41246/h, g5.2xlarge 58% off $1.212/h = $0.50904/h, inf2.8xlarge 70% off $1.96786/h = $0.590358/h",
		"spot priced from " + SpotEstimateNote + " (AWS Spot Instance Advisor, snapshot 2025-06-28), on-demand x (1 - savings%), where the price catalog has no spot price in ap-south-1: " +
			"p4d.24xlarge 90% off $39.32/h = $3.932/h",
		"spot billed at on-demand (an upper bound) in us-east-1: neither the price catalog nor the Spot Advisor has a spot price or savings for p5.4xlarge",
	}, spotNotes(notes))
}

func spotNotes(notes []string) []string {
	var out []string
	for _, n := range notes {
		if strings.HasPrefix(n, "spot ") {
			out = append(out, n)
		}
	}
	return out
}

// An explicit price always wins, and says nothing of the advisor.
func TestSpotPriceScenarioPriceWins(t *testing.T) {
	body := strings.Replace(spotPriceScenario, "      instanceType: g5.48xlarge\n", "      instanceType: g5.48xlarge\n      pricePerHour: 5.5\n", 1)
	body = strings.Replace(body, "      limits: {nvidia.com/gpu: 8}\n", "      limits: {nvidia.com/gpu: 8}\n      pricePerHour: {g5.xlarge: {spot: 0.4}}\n", 1)
	prices, notes := spotPrices(t, body)
	require.Equal(t, 5.5, prices["g5big"].PerHour)
	require.Equal(t, "scenario price", prices["g5big"].Basis)
	require.Equal(t, 0.4, prices["small/g5.xlarge/spot"].PerHour)
	require.InDelta(t, 0.50904, prices["small/g5.2xlarge/spot"].PerHour, 1e-9, "the type without a price still takes the advisor's")
	for _, n := range spotNotes(notes) {
		require.NotContains(t, n, "g5.48xlarge")
		require.NotContains(t, n, "g5.xlarge ")
	}
}

// A fixed spot pool with neither a spot price nor Spot Advisor savings
// is refused, as before, and the error says the advisor was asked.
func TestSpotPriceNeitherRefusesAFixedPool(t *testing.T) {
	body := strings.Replace(spotPriceScenario, "      instanceType: g5.48xlarge\n", "      instanceType: p5.4xlarge\n      interruptions: {mtbf: 100h}\n", 1)
	s, err := Parse("s.yaml", "", []byte(body))
	require.NoError(t, err)
	_, err = s.Cluster()
	require.ErrorContains(t, err, `s.yaml:11:21: spec.cluster.pools[0].instanceType: instance type "p5.4xlarge" has no prices in the catalog, nor has the Spot Advisor its savings there; give pricePerHour`)
	requireInputError(t, err)
}

// A NodePool may offer hundreds of types: an assumption names twelve.
func TestPriceNotesBoundTheTypesNamed(t *testing.T) {
	m := &ClusterModel{}
	var names []string
	for i := range 14 {
		name := fmt.Sprintf("t%d.large", i)
		names = append(names, name)
		// each twice (spot and a second NodePool): named once
		for range 2 {
			m.Prices = append(m.Prices, PoolPrice{Pool: name, estimate: spotEstimate{instanceType: name, region: "us-east-1", upperBound: true}})
		}
	}
	m.Prices = append(m.Prices, PoolPrice{Pool: "priced"})
	require.Equal(t, []string{"spot billed at on-demand (an upper bound) in us-east-1: neither the price catalog nor the Spot Advisor has a spot price or savings for " +
		strings.Join(names[:12], ", ") + " and 2 more"}, m.PriceNotes())
}

// A live cluster's spot nodes of a type the catalog has no spot price
// for (the hand-written dump's four g5.xlarge nodes made SPOT) are priced
// from the Spot Advisor: $1.006/h less 59% = $0.41246/h. Before, such a
// pool was refused ("has no prices in the catalog").
func TestLiveSpotNodesPricedFromSpotAdvisor(t *testing.T) {
	dir := t.TempDir()
	nodes, err := os.ReadFile("kube/nodes/testdata/mixed-cluster.yaml")
	require.NoError(t, err)
	// The first four ON_DEMAND nodes are the g5.xlarge ones.
	spot := strings.Replace(string(nodes), "eks.amazonaws.com/capacityType: ON_DEMAND", "eks.amazonaws.com/capacityType: SPOT", 4)
	require.NotEqual(t, string(nodes), spot)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes.yaml"), []byte(spot), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(liveScenario), 0o644))
	s, err := LoadFile(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	found := false
	for _, p := range b.Prices {
		if p.Pool == "g5.xlarge-spot-us-east-1a" {
			found = true
			require.InDelta(t, 0.41246, p.PerHour, 1e-9)
		}
	}
	require.True(t, found, "%v", b.Prices)
	require.Contains(t, spotNotes(b.Assumptions), "spot priced from "+SpotEstimateNote+" (AWS Spot Instance Advisor, snapshot 2025-06-28), on-demand x (1 - savings%), where the price catalog has no spot price in us-east-1: g5.xlarge 59% off $1.006/h = $0.41246/h")
}
