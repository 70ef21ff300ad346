package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	karpv1alpha1 "sigs.k8s.io/karpenter/pkg/apis/v1alpha1"

	"gpuplan.dev/gpuplan/scenarios"
)

// The NodeOverlays of a policy are written back after the NodePools they
// priced and read back to the same prices: g5.2xlarge at 25% off its
// $1.212 on-demand price, $0.909 an hour, both ways.
func TestNodeOverlayWrittenBack(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "nodepools.yaml")
	require.NoError(t, os.WriteFile(pol, []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.2xlarge, g6.2xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits: {nvidia.com/gpu: 8}
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: discount}
spec:
  weight: 10
  requirements:
  - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}
  priceAdjustment: "-25%"
`), 0o644))
	scen := filepath.Join(dir, "s.yaml")
	body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: overlay}
spec:
  horizon: 1h
  policy: {manifests: [POLICY]}
  workload:
    synthetic:
      classes:
      - {name: infer, arrival: {process: fixed, ratePerHour: 1}, pod: {cpu: "6", memory: 20Gi, gpus: 1}, duration: 10m}
`
	price := func(policy string) float64 {
		require.NoError(t, os.WriteFile(scen, []byte(strings.ReplaceAll(body, "POLICY", policy)), 0o644))
		s, err := scenarios.LoadFile(scen)
		require.NoError(t, err)
		m, err := s.Cluster()
		require.NoError(t, err)
		for i, p := range m.Pools {
			if p.Name == "gpu/g5.2xlarge/on-demand" {
				return m.Prices[i].PerHour
			}
		}
		t.Fatal("no g5.2xlarge pool")
		return 0
	}
	require.InDelta(t, 0.909, price(pol), 1e-9)
	s, err := scenarios.LoadFile(scen)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	ov := find[karpv1alpha1.NodeOverlay](t, files, "discount")
	require.Equal(t, int32(10), *ov.Spec.Weight)
	require.Equal(t, "-25%", *ov.Spec.PriceAdjustment)
	out := t.TempDir()
	require.NoError(t, WriteDir(out, files))
	require.InDelta(t, 0.909, price(filepath.Join(out, PathNodePools)+", "+filepath.Join(out, PathEC2NodeClass)), 1e-9)
}

// A NodeOverlay's capacity is written back with it and read back to the
// same nodes: g6f.2xlarge, which Karpenter's catalog lists with no GPU,
// given nvidia.com/gpu: 1 (and example.com/fuse: 2, noted only) by a
// weight-10 overlay that changes no price, has one L4 a node both ways.
func TestNodeOverlayCapacityWrittenBack(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "nodepools.yaml")
	require.NoError(t, os.WriteFile(pol, []byte(`apiVersion: karpenter.sh/v1
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
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: frac}
spec:
  weight: 10
  requirements:
  - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6f]}
  capacity: {nvidia.com/gpu: 1, example.com/fuse: 2}
`), 0o644))
	scen := filepath.Join(dir, "s.yaml")
	body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: overlay}
spec:
  horizon: 1h
  policy: {manifests: [POLICY]}
  workload:
    synthetic:
      classes:
      - {name: infer, arrival: {process: fixed, ratePerHour: 1}, pod: {cpu: "6", memory: 20Gi, gpus: 1}, duration: 10m}
`
	gpus := func(policy string) (int32, *scenarios.Scenario, *scenarios.ClusterModel) {
		require.NoError(t, os.WriteFile(scen, []byte(strings.ReplaceAll(body, "POLICY", policy)), 0o644))
		s, err := scenarios.LoadFile(scen)
		require.NoError(t, err)
		m, err := s.Cluster()
		require.NoError(t, err)
		for _, p := range m.Pools {
			if p.Name == "gpu/g6f.2xlarge/on-demand" {
				require.Equal(t, "L4", p.GPUModel)
				return p.GPUsPerNode, s, m
			}
		}
		t.Fatal("no g6f.2xlarge pool")
		return 0, nil, nil
	}
	n, s, m := gpus(pol)
	require.Equal(t, int32(1), n)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	ov := find[karpv1alpha1.NodeOverlay](t, files, "frac")
	require.Nil(t, ov.Spec.Price)
	require.Nil(t, ov.Spec.PriceAdjustment)
	require.Equal(t, "1", ov.Spec.Capacity.Name("nvidia.com/gpu", "").String())
	require.Equal(t, "2", ov.Spec.Capacity.Name("example.com/fuse", "").String())
	out := t.TempDir()
	require.NoError(t, WriteDir(out, files))
	n, _, _ = gpus(filepath.Join(out, PathNodePools) + ", " + filepath.Join(out, PathEC2NodeClass))
	require.Equal(t, int32(1), n)
}
