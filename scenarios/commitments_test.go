package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim"
)

const commitScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: commitments
spec:
  horizon: 10h
  pricing:
    commitments:
    - name: ri-p4d
      kind: reserved
      instanceType: p4d.24xlarge
      count: 1
      pricePerHour: 20
      upfront: all
    - name: sp
      kind: savingsPlan
      hourly: 8
      discount: 0.3
      pools: [g5]
  cluster:
    pools:
    - name: block
      count: 1
      instanceType: p4d.24xlarge
      capacityType: reserved
      pricePerHour: 15
    - name: p4d
      count: 2
      instanceType: p4d.24xlarge
      pricePerHour: 32
    - name: g5
      count: 2
      instanceType: g5.12xlarge
      pricePerHour: 5
    - name: spot
      count: 1
      instanceType: p4d.24xlarge
      capacityType: spot
      pricePerHour: 10
      interruptions: {times: [100h]}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "8", memory: 64Gi, gpus: 8}
        duration: 30m
`

// A capacity block, a reserved instance, a Savings Plan, spot and
// on-demand, worked by hand over the 10 hours (every node present
// throughout):
//   - list prices: 1 p4d in a capacity block at $15 + 2 on-demand p4d x
//     $32 + 2 g5 x $5 + 1 spot p4d x $10 = $99 an hour, $990.00;
//   - the block is paid as bought, never covered by a commitment;
//   - the reserved p4d ($20 an hour, paid used or not) covers one of the
//     two on-demand p4d: $20 used, $32 of on-demand covered each hour;
//   - the Savings Plan ($8 an hour at 30% off, g5 only) charges the two
//     g5 at $3.50 each: $7 used, $1 unused, $10 of on-demand covered;
//   - left at on-demand: the other p4d, $32; spot $10, never covered.
//
// Bill: 10 x (15 + 20 + 8 + 32 + 10) = $850.00; saving $140.00; unused $10.00;
// coverage (32 + 10) / (64 + 10) = 56.76% of eligible on-demand usage;
// utilisation (20 + 7) / (20 + 8) = 96.43%. The reservation, all
// upfront, cost 20 x 8,760 = $175,200 at purchase.
func TestCommitmentsBillByHand(t *testing.T) {
	s, err := Parse("c.yaml", "", []byte(commitScenario))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.Equal(t, 10*sim.Hour, res.End)
	cs := reports.Cost(res, b.Pricing)
	require.Equal(t, 990.0, cs.Total)
	require.Equal(t, "reserved", cs.ByPool[0].CapacityType)
	require.Equal(t, 150.0, cs.ByPool[0].Cost)
	c := cs.Commitments
	require.NotNil(t, c)
	require.Equal(t, 990.0, c.ListBill)
	require.Equal(t, 850.0, c.Bill)
	require.Equal(t, 140.0, c.Saving)
	require.Equal(t, 10.0, c.Unused)
	require.Equal(t, 280.0, c.Committed)
	require.Equal(t, 740.0, c.EligibleOnDemand)
	require.Equal(t, 0.5676, c.Coverage)
	require.Equal(t, 0.9643, c.Utilisation)
	require.Equal(t, []reports.CommitmentLine{
		{Name: "ri-p4d", Kind: "instances", Committed: 200, Used: 200, CoveredOnDemand: 320, Utilisation: 1, UpfrontPayment: 175200},
		{Name: "sp", Kind: "spend", Committed: 80, Used: 70, Unused: 10, CoveredOnDemand: 100, Utilisation: 0.875},
	}, c.Lines)

}

func TestCommitmentErrors(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"  pricing:\n", "  pricing:\n    commitmentAdvice: {discount: 1.5}\n", `c.yaml:8:34: spec.pricing.commitmentAdvice.discount: 1.5 is not a share between 0 and 1`},
		{"      capacityType: reserved\n", "      capacityType: reserved\n      autoscaling: {maxNodes: 3}\n", `spec.cluster.pools[0].autoscaling: a reserved pool is a capacity reservation of count nodes`},
		{"      capacityType: reserved\n", "      capacityType: reserved\n      interruptions: {mtbf: 1h}\n", `spec.cluster.pools[0].interruptions: only spot nodes are interrupted`},
		{"      capacityType: reserved\n", "      capacityType: leased\n", `spec.cluster.pools[0].capacityType: is "leased"; want on-demand, spot or reserved`},
		{"      kind: savingsPlan\n", "      kind: lease\n", `c.yaml:16:13: spec.pricing.commitments[1].kind: is "lease"; want savingsPlan, committedUse or reserved`},
		{"      discount: 0.3\n", "      discount: 1.3\n", `c.yaml:18:17: spec.pricing.commitments[1].discount: 1.3 is not a share between 0 and 1`},
		{"      hourly: 8\n", "", `spec.pricing.commitments[1].hourly: a spend commitment needs hourly dollars`},
		{"      pools: [g5]", "      pools: [g6]", `c.yaml:19:15: spec.pricing.commitments[1].pools[0]: "g6" is not a pool or NodePool of the cluster`},
		{"      count: 1\n", "      count: 0\n", `spec.pricing.commitments[0].count: is 0; reserved instances are 1 to 100,000`},
		{"      upfront: all\n", "      upfront: most\n", `spec.pricing.commitments[0].upfront: is "most"; want none, partial or all`},
		{"      upfront: all\n", "      term: 2y\n", `spec.pricing.commitments[0]`},
		{"      upfront: all\n", "      term: 100h\n", `spec.pricing.commitments[0].term: is 100h0m0s; a commitment's term is 1y (8760h) or 3y (26280h)`},
		{"    - name: sp\n", "    - name: ri-p4d\n", `spec.pricing.commitments[1].name: "ri-p4d" is given twice`},
		{"      pricePerHour: 20\n", "      pricePerHour: 20\n      discount: 0.4\n", `spec.pricing.commitments[0]: give pricePerHour or discount, not both`},
	}
	for _, c := range cases {
		body := strings.Replace(commitScenario, c.from, c.to, 1)
		require.NotEqual(t, commitScenario, body, c.from)
		s, err := Parse("c.yaml", "", []byte(body))
		if err == nil {
			_, err = s.Build(Options{})
		}
		require.Error(t, err, c.want)
		require.Contains(t, err.Error(), c.want)
		requireInputError(t, err)
	}
}

// A reserved pool without a price is an on-demand capacity reservation:
// billed at the on-demand price of its type, as the on-demand pool beside
// it, and never interrupted.
func TestReservedPoolAtOnDemandPrice(t *testing.T) {
	body := strings.Replace(commitScenario, "      capacityType: reserved\n      pricePerHour: 15\n", "      capacityType: reserved\n", 1)
	body = strings.Replace(body, "      instanceType: p4d.24xlarge\n      pricePerHour: 32\n", "      instanceType: p4d.24xlarge\n", 1)
	s, err := Parse("c.yaml", "", []byte(body))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	require.Equal(t, "reserved", m.Prices[0].CapacityType)
	require.Positive(t, m.Prices[0].PerHour)
	require.Equal(t, m.Prices[1].PerHour, m.Prices[0].PerHour)
	require.Contains(t, m.Prices[0].Basis, "capacity reservation at the on-demand price")
	require.False(t, m.Capacity.Pools[0].Interruptions.Active())
}
