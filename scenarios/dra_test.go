package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// draCluster: two H100 nodes of 8 whole GPUs, and one A100-80GB node cut
// into 1g.10gb MIG instances (mixed strategy, 7 per GPU: 56).
const draScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: dra}
spec:
  seed: 1
  cluster:
    pools:
    - {name: h100, count: 2, instanceType: p5.48xlarge, gpuModel: H100-80GB, gpusPerNode: 8, cpu: "192", memory: 2048Gi}
    - name: a100-mig
      count: 1
      instanceType: p4de.24xlarge
      gpuModel: A100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
      sharing: {mig: {strategy: mixed, layout: all-1g.10gb}}
  workload:
    manifests:
    - {path: JOBS, count: 3}
`

// job is a Job of n pods for an hour asking for GPUs by RES (the
// container's resources) and CLAIMS (the pod's resourceClaims), on nodes
// SEL selects.
func draJob(name string, n int, res, claims, sel string) string {
	return strings.NewReplacer("NAME", name, "N", string(rune('0'+n)), "RES", res, "CLAIMS", claims, "SEL", sel).Replace(`---
apiVersion: batch/v1
kind: Job
metadata: {name: NAME, namespace: ml}
spec:
  parallelism: N
  completions: N
  template:
    metadata: {annotations: {gpuplan.dev/duration: 1h}}
    spec:
      restartPolicy: Never
      SEL
      containers:
      - name: c
        image: x
        resources: {requests: {cpu: "4", memory: 16Gi}RES}
      CLAIMS
`)
}

// The device-plugin form of three jobs (whole H100s, a Hopper GPU, a MIG
// partition) and the same jobs asking by DRA claim: the same placements
// and summary. The claim form's selectors resolve to what the plugin form
// names: count 4 of gpu.nvidia.com is nvidia.com/gpu: 4 (the MIG node
// has no whole GPU, so both run on the H100s); architecture Hopper allows
// H100, H100-80GB and H200-141GB, of which the cluster has H100-80GB, as
// the plugin form's nodeSelector says; profile 1g.10gb of mig.nvidia.com
// is nvidia.com/mig-1g.10gb.
func TestDRAClaimsPlaceAsTheDevicePlugin(t *testing.T) {
	plugin := draJob("train", 2, `, limits: {nvidia.com/gpu: 4}`, "", "") +
		draJob("infer", 3, `, limits: {nvidia.com/gpu: 1}`, "", "nodeSelector: {gpuplan.dev/gpu-model: H100-80GB}") +
		draJob("notebook", 5, `, limits: {nvidia.com/mig-1g.10gb: 1}`, "", "")
	claims := `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: four, namespace: ml}
spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 4}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: hopper, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].architecture == 'Hopper'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: slice, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly:
          deviceClassName: mig.nvidia.com
          selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]
` + draJob("train", 2, `, claims: [{name: g}]`, "resourceClaims: [{name: g, resourceClaimTemplateName: four}]", "") +
		draJob("infer", 3, `, claims: [{name: g}]`, "resourceClaims: [{name: g, resourceClaimTemplateName: hopper}]", "") +
		draJob("notebook", 5, `, claims: [{name: g}]`, "resourceClaims: [{name: g, resourceClaimTemplateName: slice}]", "")
	run := func(jobs string) (*sim.Result, []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.yaml"), []byte(jobs), 0o644))
		path := filepath.Join(dir, "scenario.yaml")
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(draScenario, "JOBS", "jobs.yaml", 1)), 0o644))
		s, err := LoadFile(path)
		require.NoError(t, err)
		b, err := s.Build(Options{})
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		sum := reports.Summarize(res, reports.Meta{Scenario: "dra"})
		out, err := json.Marshal(sum)
		require.NoError(t, err)
		return res, out
	}
	a, sa := run(plugin)
	b, sb := run(claims)
	// 3 copies of 3 Jobs; H100 demand 3 x (2x4 + 3x1) = 33 GPUs on 16, so
	// jobs wait: the placements are not trivially equal.
	require.Len(t, a.Jobs, 9)
	waited := 0
	for i := range a.Jobs {
		if a.Jobs[i].Start > a.Jobs[i].Submit {
			waited++
		}
	}
	require.Positive(t, waited)
	// The claim form's jobs carry the flag that keeps kube-scheduler's
	// preemption from freeing their GPUs (cluster.FlagDRAClaims); the
	// rest of their records is the plugin form's.
	for i := range b.Jobs {
		require.Zero(t, a.Jobs[i].Flags&cluster.FlagDRAClaims, a.Jobs[i].Name)
		require.NotZero(t, b.Jobs[i].Flags&cluster.FlagDRAClaims, b.Jobs[i].Name)
		b.Jobs[i].Flags &^= cluster.FlagDRAClaims
	}
	require.Equal(t, a.Jobs, b.Jobs)
	require.JSONEq(t, string(sa), string(sb))
}
