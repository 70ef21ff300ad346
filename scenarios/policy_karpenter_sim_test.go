package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
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
// too, spot comes first: g6.2xlarge spot. A NodePool of weight 50 over g5
// alone is tried before one of weight 10 over g6: g5.2xlarge ($1.212),
// although g6 is cheaper.
func TestKarpenterPickInSimulation(t *testing.T) {
	one := func(name string, w int, fam, ct string) string {
		return fmt.Sprintf(g5g6, name, w, fam, ct)
	}
	require.Equal(t, []string{"gpu/g6.2xlarge/on-demand"}, launched(t, one("gpu", 0, "g5, g6", "on-demand")))
	require.Equal(t, []string{"gpu/g6.2xlarge/spot"}, launched(t, one("gpu", 0, "g5, g6", "on-demand, spot")))
	require.Equal(t, []string{"preferred/g5.2xlarge/on-demand"}, launched(t, one("cheap", 10, "g6", "on-demand")+"---\n"+one("preferred", 50, "g5", "on-demand")))
}
