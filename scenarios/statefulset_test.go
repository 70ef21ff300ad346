package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A StatefulSet gives a service its replica pod and replicas as a
// Deployment does (Kueue serves both alike); before, the service's files
// held "no Deployment or InferenceService". A ReplicaSet reads the same way
// (Volcano's examples write them by hand). 3 replicas of 1 GPU, 4 CPUs,
// 16Gi, kept at 3 without an autoscaler; podManagementPolicy OrderedReady
// (the default: not given) and volumeClaimTemplates are noted; a KEDA
// ScaledObject whose scaleTargetRef names the StatefulSet scales it.
func TestServiceFromStatefulSetOrReplicaSet(t *testing.T) {
	const sts = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: triton
spec:
  replicas: 3
  serviceName: triton
  selector: {matchLabels: {app: triton}}
  template:
    metadata: {labels: {app: triton}}
    spec:
      containers:
      - name: server
        image: nvcr.io/nvidia/tritonserver:24.08-py3
        resources:
          limits: {nvidia.com/gpu: 1, cpu: "4", memory: 16Gi}
  volumeClaimTemplates:
  - metadata: {name: models}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 50Gi}}
`
	const so = `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: triton-scaler}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: triton}
  minReplicaCount: 2
  maxReplicaCount: 6
  triggers:
  - type: prometheus
    metadata: {serverAddress: "http://prometheus:9090", query: "sum(rate(nv_inference_request_success[1m]))", threshold: "100"}
`
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sts.yaml"), []byte(sts+"---\n"+so), 0o644))
	body := svcCluster + `    services:
    - name: triton
      manifests: [sts.yaml]
      load: {constant: 50}
      batching: {batchSize: 1, baseMs: 20, perItemMs: 1}
`
	build := func(body string) *Built {
		s, err := Parse("svc.yaml", dir, []byte(body))
		require.NoError(t, err)
		b, err := s.Build(Options{})
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		return b
	}
	b := build(body)
	require.Len(t, b.Config.Services, 1)
	c := b.Config.Services[0]
	require.Equal(t, []int{3, 3, 3}, []int{c.MinReplicas, c.MaxReplicas, c.InitialReplicas})
	require.EqualValues(t, 1, c.Pod.GPUs)
	require.EqualValues(t, 4000, c.Pod.MilliCPU)
	require.EqualValues(t, 16384, c.Pod.MemoryMiB)
	notes := strings.Join(b.Assumptions, "\n")
	require.Contains(t, notes, "replicas from StatefulSet triton")
	require.Contains(t, notes, "sts.yaml:1: StatefulSet triton: podManagementPolicy OrderedReady (the default) starts its replicas one at a time")
	require.Contains(t, notes, "sts.yaml:1: StatefulSet triton: volumeClaimTemplates: storage is not modelled")

	// With the ScaledObject as its autoscaler: KEDA's bounds 2..6, starting
	// at the StatefulSet's 3.
	b = build(strings.Replace(body, "      batching:", "      autoscaler: {manifests: [sts.yaml]}\n      batching:", 1))
	c = b.Config.Services[0]
	require.Equal(t, []int{2, 6, 3}, []int{c.MinReplicas, c.MaxReplicas, c.InitialReplicas})
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "scaled by ScaledObject triton-scaler")

	// The same replicas and pod as a ReplicaSet (which has no
	// volumeClaimTemplates or serviceName): 3..3, nothing noted.
	rs := strings.NewReplacer("kind: StatefulSet\n", "kind: ReplicaSet\n", "  serviceName: triton\n", "").Replace(sts[:strings.Index(sts, "  volumeClaimTemplates:")])
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sts.yaml"), []byte(rs), 0o644))
	b = build(body)
	c = b.Config.Services[0]
	require.Equal(t, []int{3, 3, 3}, []int{c.MinReplicas, c.MaxReplicas, c.InitialReplicas})
	require.EqualValues(t, 1, c.Pod.GPUs)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "replicas from ReplicaSet triton")
	require.NotContains(t, strings.Join(b.Assumptions, "\n"), "OrderedReady")
}
