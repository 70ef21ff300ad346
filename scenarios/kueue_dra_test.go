package scenarios

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

// kueueDRAPolicy is one ClusterQueue covering nvidia.com/gpu and
// example.com/dra-gpu, 6 of each, a LocalQueue q in namespace ml, and a
// Configuration mapping gpu.nvidia.com to nvidia.com/gpu and
// gpu.example.com to example.com/dra-gpu.
const kueueDRAPolicy = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu, example.com/dra-gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 1000}
      - {name: memory, nominalQuota: 10Ti}
      - {name: nvidia.com/gpu, nominalQuota: 6}
      - {name: example.com/dra-gpu, nominalQuota: 6}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ml}
spec: {clusterQueue: cq}
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: nvidia.com/gpu
    deviceClassNames: [gpu.nvidia.com]
  - name: example.com/dra-gpu
    deviceClassNames: [gpu.example.com]
`

// kueueDRARun simulates count copies of the job file under kueueDRAPolicy
// on two nodes of 8 H100s, 10 minutes each, and says how many start at
// once (an error: the scenario is refused).
func kueueDRARun(t *testing.T, job string, count int) (int, error) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(kueueDRAPolicy), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(job), 0o644))
	path := filepath.Join(dir, "scenario.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: kueue-dra}
spec:
  seed: 1
  cluster:
    pools:
    - {name: h100, count: 2, instanceType: p5.48xlarge, gpuModel: H100-80GB, gpusPerNode: 8, cpu: "192", memory: 2048Gi}
  policy: {manifests: [policy.yaml]}
  workload:
    manifests:
    - {path: job.yaml, queue: q, count: COUNT, duration: 10m}
`, "COUNT", strconv.Itoa(count))), 0o644))
	s, err := LoadFile(path)
	if err != nil {
		return 0, err
	}
	b, err := s.Build(Options{})
	if err != nil {
		return 0, err
	}
	t.Cleanup(func() { b.Close() })
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.Len(t, res.Jobs, count)
	n := 0
	for _, j := range res.Jobs {
		require.Equal(t, sim.Completed, j.Outcome)
		if j.Start == 0 {
			n++
		}
	}
	return n, nil
}

// TestKueueDRAChargesAsV0192: what Kueue v0.19.2 charges of DRA claims,
// 6 nvidia.com/gpu (and 6 example.com/dra-gpu) of quota on 16 H100s, by
// hand from Kueue's pkg/dra:
//   - a template of 2 + 1 GPUs of gpu.nvidia.com under a matchAttribute
//     constraint: Kueue v0.19.2 counts 3 a pod, so of 3 copies 2 run at
//     once (6) and 1 waits; v0.17 refused the template (constraints), an
//     input error before;
//   - two templates of gpu.nvidia.com, 2 and (count unset) 1: 3 a pod, 2
//     of 3 at once;
//   - a container asking example.com/gpu: 1, DRA-backed by gpu.example.com,
//     which the Configuration maps to example.com/dra-gpu: charged as
//     example.com/dra-gpu (6 of 8 at once; before, as example.com/gpu, which
//     the ClusterQueue does not cover);
//   - a pod naming a ResourceClaim: never admitted by Kueue v0.19.2, an
//     input error (before: charged to no quota).
func TestKueueDRAChargesAsV0192(t *testing.T) {
	fixture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("kube", "dra", "testdata", "kueue", name))
		require.NoError(t, err)
		return string(b)
	}
	n, err := kueueDRARun(t, fixture("constraints.yaml"), 3)
	require.NoError(t, err)
	require.Equal(t, 2, n, "3 GPUs a pod against 6 of quota")
	n, err = kueueDRARun(t, fixture("two-templates.yaml"), 3)
	require.NoError(t, err)
	require.Equal(t, 2, n, "2 + 1 GPUs a pod against 6 of quota")
	n, err = kueueDRARun(t, `apiVersion: batch/v1
kind: Job
metadata: {name: ext, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "1", memory: 1Gi, example.com/gpu: "1"}
          limits: {example.com/gpu: "1"}
`, 8)
	require.NoError(t, err)
	require.Equal(t, 6, n, "one example.com/dra-gpu a pod against 6 of quota")
	_, err = kueueDRARun(t, `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: ml}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: gpu.nvidia.com, count: 1}
---
apiVersion: batch/v1
kind: Job
metadata: {name: named, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - {name: g, resourceClaimName: shared}
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "1", memory: 1Gi}
          claims: [{name: g}]
`, 1)
	require.ErrorContains(t, err, `job.yaml:18: Job named: Kueue v0.19.2 would never admit it: spec.template.spec.resourceClaims[0].resourceClaimName: its pods name ResourceClaim "shared"`)
	require.ErrorContains(t, err, `"KueueDRAIntegration feature does not support use of resource claims"`)
}
