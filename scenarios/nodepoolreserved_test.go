package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
)

// A Karpenter NodePool that may launch p5.48xlarge into an on-demand
// capacity reservation of one instance (billed at the on-demand price,
// $50 an hour here, for the whole run) or on demand ($50); two jobs of 2 h
// on 8 GPUs, an hour apart.
const reservedNodePoolScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: reserved-nodepool
spec:
  horizon: 6h
  cluster:
    nodePools:
    - name: train
      instanceTypes: [p5.48xlarge]
      capacityTypes: [on-demand, reserved]
      reservations:
      - {instanceType: p5.48xlarge, count: 1, pricePerHour: 50}
      pricePerHour: {p5.48xlarge: {on-demand: 50}}
      limits: {nodes: 3}
  workload:
    synthetic:
      jobs: 2
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "180", memory: 1800Gi, gpus: 8}
        duration: 2h
`

func reservedNodePoolRun(t *testing.T, body string) (*sim.Result, *reports.CostSummary) {
	t.Helper()
	s, err := Parse("r.yaml", "", []byte(body))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	// The all-on-demand twin keeps the reservation: it is bought either way.
	od, err := s.OnDemandOnly()
	require.NoError(t, err)
	require.Equal(t, []string{"on-demand", "reserved"}, od.Spec.Cluster.NodePools[0].CapacityTypes)
	ob, err := od.Build(Options{})
	require.NoError(t, err)
	ob.Close()
	return res, reports.Cost(res, b.Pricing)
}

// By hand. The first job comes at 0: Karpenter launches into the
// reservation first (reserved offerings while one has room, though
// on-demand is listed first and costs the same), Ready at 5 min, the job
// runs to 2h05m. The
// second comes at 1h: the reservation is full, so an on-demand node is
// launched, Ready at 1h05m, the job runs to 3h05m. Nothing consolidates:
// both nodes stay to the horizon. The bill: the reservation is paid for
// the whole run, 1 x 6 h x $50 = $300.00; the on-demand node from 1h to
// 6h, 5 h x $50 = $250.00; $550.00 in all. With a reservation of 2 both
// jobs run on it (the second from 1h05m) and the bill is 2 x 6 x $50 =
// $600.00, nothing on demand.
func TestReservedNodePool(t *testing.T) {
	res, cs := reservedNodePoolRun(t, reservedNodePoolScenario)
	require.Len(t, res.Jobs, 2)
	require.Equal(t, 5*sim.Minute, res.Jobs[0].Start)
	require.Equal(t, 125*sim.Minute, res.Jobs[0].End)
	require.Equal(t, 65*sim.Minute, res.Jobs[1].Start)
	require.Equal(t, 185*sim.Minute, res.Jobs[1].End)
	byName := map[string]reports.CostLine{}
	for _, l := range cs.ByPool {
		byName[l.Name] = l
	}
	rsv, od := byName["train/p5.48xlarge/reserved"], byName["train/p5.48xlarge/on-demand"]
	require.Equal(t, "reserved", rsv.CapacityType)
	require.Equal(t, 300.0, rsv.Cost)
	require.Equal(t, 6.0, rsv.NodeHours)
	require.Equal(t, 250.0, od.Cost)
	require.Equal(t, 5.0, od.NodeHours)
	require.Equal(t, 550.0, cs.Total)
	for _, p := range res.Pools {
		require.Equal(t, int64(1), p.Capacity.Launched, p.Spec.Name)
	}

	res, cs = reservedNodePoolRun(t, strings.Replace(reservedNodePoolScenario, "count: 1,", "count: 2,", 1))
	require.Equal(t, 65*sim.Minute, res.Jobs[1].Start)
	for i, p := range res.Pools {
		if p.Spec.Name == "train/p5.48xlarge/reserved" {
			require.Equal(t, int64(2), p.Capacity.Launched)
			require.Equal(t, 600.0, cs.ByPool[i].Cost)
		} else {
			require.Zero(t, p.Capacity.Launched)
			require.Zero(t, cs.ByPool[i].Cost)
		}
	}
	require.Equal(t, 600.0, cs.Total)
}

func TestReservedNodePoolRefused(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"      reservations:\n      - {instanceType: p5.48xlarge, count: 1, pricePerHour: 50}\n", "",
			`spec.cluster.nodePools[0].capacityTypes[1]: reserved launches into capacity reservations: give them in reservations (instanceType, count)`},
		{"[on-demand, reserved]", "[on-demand]", `spec.cluster.nodePools[0].reservations[0]: the NodePool's capacityTypes do not allow reserved`},
		{"{instanceType: p5.48xlarge, count: 1,", "{instanceType: p4d.24xlarge, count: 1,", `spec.cluster.nodePools[0].reservations[0].instanceType: "p4d.24xlarge" is not one of the NodePool's instanceTypes`},
		{"count: 1,", "count: 0,", `spec.cluster.nodePools[0].reservations[0].count: is 0; a reservation holds 1 to 100,000 instances`},
	} {
		body := strings.Replace(reservedNodePoolScenario, c.from, c.to, 1)
		require.NotEqual(t, reservedNodePoolScenario, body, c.from)
		s, err := Parse("r.yaml", "", []byte(body))
		if err == nil {
			_, err = s.Build(Options{})
		}
		require.Error(t, err, c.want)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want)
	}
}
