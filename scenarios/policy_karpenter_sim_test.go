package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// launched runs a one-job scenario over the NodePools of manifest and
// returns the pools that launched nodes.
func launched(t *testing.T, manifest string) []string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "nodepools.yaml")
	require.NoError(t, os.WriteFile(p, []byte(manifest), 0o644))
	body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: karpenter-pick}
spec:
  horizon: 1h
  policy:
    manifests: [` + p + `]
  workload:
    synthetic:
      classes:
      - name: infer
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "6", memory: 20Gi, gpus: 1}
        duration: 10m
`
	s, err := Parse("s.yaml", dir, []byte(body))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	var out []string
	for _, pr := range res.Pools {
		if pr.Capacity.Launched > 0 {
			out = append(out, pr.Spec.Name)
		}
	}
	return out
}

const g5g6 = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: %s}
spec:
  weight: %d
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [%s]}
      - {key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: ["4"]}
      - {key: karpenter.k8s.aws/instance-size, operator: NotIn, values: [16xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [%s]}
  limits: {nvidia.com/gpu: 8}
`

// The simulation launches what Karpenter would, worked out by hand from
// the CSV rows: the pod (1 GPU, 6 CPUs, 20 GiB) does not fit the xlarge
// sizes (4 vCPUs, 16 GiB); of g5 and g6 2xlarge, 4xlarge and 8xlarge the
// cheapest on demand is g6.2xlarge at $0.9776 an hour. With spot allowed
// too, spot comes first: g6.2xlarge spot; its spot node, interrupted as
// measured (the default), is reclaimed within the hour and g6.2xlarge
// spot stays out of capacity for the outage, so Karpenter falls back to
// the next cheapest spot offering, g5.2xlarge. A NodePool of weight 50 over g5
// alone is tried before one of weight 10 over g6: g5.2xlarge ($1.212),
// although g6 is cheaper.
func TestKarpenterPickInSimulation(t *testing.T) {
	one := func(name string, w int, fam, ct string) string {
		np := fmt.Sprintf(g5g6, name, w, fam, ct)
		// The CRD's weight is 1 to 100: no weight is written as none.
		return strings.Replace(np, "  weight: 0\n", "", 1)
	}
	require.Equal(t, []string{"gpu/g6.2xlarge/on-demand"}, launched(t, one("gpu", 0, "g5, g6", "on-demand")))
	require.Equal(t, []string{"gpu/g5.2xlarge/spot", "gpu/g6.2xlarge/spot"}, launched(t, one("gpu", 0, "g5, g6", "on-demand, spot")))
	require.Equal(t, []string{"preferred/g5.2xlarge/on-demand"}, launched(t, one("cheap", 10, "g6", "on-demand")+"---\n"+one("preferred", 50, "g5", "on-demand")))
}

// expireAfter, by hand. Jobs of 30 min arrive every 70 min (at 0 and 70
// min in a 2 h horizon), each wanting one GPU. Without expireAfter, the
// node launched for the first (Ready at 5 min, Karpenter's provisioning
// time here) is still there, empty, when the second comes: it starts at
// once, one node launched. With expireAfter 1h that node is drained at 60
// min (empty: nothing to disrupt), so the second waits for a new node (5
// min): two launched, one expired.
func TestKarpenterExpireAfterInSimulation(t *testing.T) {
	run := func(expire, rate, duration string, jobs int) *sim.Result {
		dir := t.TempDir()
		p := filepath.Join(dir, "nodepools.yaml")
		np := `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: ` + expire + `
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g6.xlarge]}
  limits: {nvidia.com/gpu: 4}
`
		require.NoError(t, os.WriteFile(p, []byte(np), 0o644))
		body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: expiry}
spec:
  horizon: 2h
  policy:
    manifests: [` + p + `]
  workload:
    synthetic:
      classes:
      - name: j
        arrival: {process: fixed, ratePerHour: ` + rate + `}
        pod: {cpu: "2", memory: 8Gi, gpus: 1}
        duration: ` + duration + `
`
		s, err := Parse("s.yaml", dir, []byte(body))
		require.NoError(t, err)
		b, err := s.Build(Options{})
		require.NoError(t, err)
		defer b.Close()
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		require.Len(t, res.Jobs, jobs)
		return res
	}
	never := run("Never", "0.857142857142857", "30m", 2)
	require.Equal(t, int64(1), never.Pools[0].Capacity.Launched)
	require.Equal(t, int64(0), never.Pools[0].Capacity.Expired)
	second := never.Jobs[1]
	require.Equal(t, second.Submit, second.Start, "the first node is still there")

	hour := run("1h", "0.857142857142857", "30m", 2)
	require.Equal(t, int64(2), hour.Pools[0].Capacity.Launched)
	require.Equal(t, int64(1), hour.Pools[0].Capacity.Expired)
	second = hour.Jobs[1]
	require.Equal(t, sim.Time(5*60*1000), second.Start-second.Submit, "a new node's provisioning")
	require.Equal(t, int64(0), hour.Stats.Disruptions[capacity.CauseExpiry], "the node was empty when it expired")

	// A 50 min job on nodes that expire 30 min after launch, without
	// checkpoints: it starts at 5 min and is drained at 30 (25 min lost),
	// waits its 10 s backoff, runs again on a new node from 35:10 to its
	// expiry at 60:10, and again from 65:20 to 90:20: three drains, 75 min
	// lost, four nodes launched and the fourth attempt running at the 2 h
	// horizon. An expireAfter shorter than the jobs starves them.
	drained := run("30m", "0.5", "50m", 1)
	require.Equal(t, int64(3), drained.Stats.Disruptions[capacity.CauseExpiry])
	require.Equal(t, int64(4), drained.Pools[0].Capacity.Launched)
	j := drained.Jobs[0]
	require.Equal(t, int32(4), j.Attempts)
	require.Equal(t, sim.Running, j.Outcome)
	require.Equal(t, sim.Time(75*60*1000), j.LostMs)
}
