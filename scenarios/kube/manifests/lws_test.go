package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

const lwsScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: llm-lws
spec:
  seed: 3
  horizon: 12h
  cluster:
    pools:
    - name: gpu
      count: 4
      instanceType: p5.48xlarge
  workload:
    services:
    - name: big
      queue: inference
      priority: 1000
      pod: {cpu: "64", memory: 512Gi, gpus: 8}
      leaderWorker: {size: 2}
      coldStart: {imagePull: 120s, modelLoad: 90s}
      load:
        diurnal: {base: 4, amplitude: 3, peak: "06:00"}
      llm:
        model: llama-3-70b
        gpu: H100-80GB
        tensorParallel: 8
        pipelineParallel: 2
        maxModelLen: 8192
        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
        slo: {ttft: 500ms, tpot: 50ms}
      replicas: {min: 1, max: 2}
      autoscaler:
        keda: {metric: queueDepth, threshold: 5}
`

// TestRoundTripLeaderWorkerSet: an LLM service whose replica is a group of
// two 8-GPU pods is written as vLLM's multi-node serving on a
// LeaderWorkerSet (the leader's vllm serve at tensor parallel 8 and
// pipeline parallel $(LWS_GROUP_SIZE), the worker joining its Ray
// cluster) with its KEDA ScaledObject targeting the LeaderWorkerSet (its
// scale subresource); read back, it is the same group and engine, and the
// run gives the same summary.
func TestRoundTripLeaderWorkerSet(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates an LLM service twice")
	}
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "scenario.yaml"), []byte(lwsScenario), 0o644))
	s, err := scenarios.LoadFile(filepath.Join(src, "scenario.yaml"))
	require.NoError(t, err)
	files, dir, y, raw := writtenService(t, s, "big")
	flat := strings.Join(strings.Fields(string(raw)), " ")
	for _, want := range []string{"kind: LeaderWorkerSet", "size: 2", "restartPolicy: RecreateGroupOnPodRestart",
		"multi-node-serving.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE) && vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 8",
		"--pipeline-parallel-size $(LWS_GROUP_SIZE)", "multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)",
		"scaleTargetRef: apiVersion: leaderworkerset.x-k8s.io/v1 kind: LeaderWorkerSet name: big"} {
		require.Contains(t, flat, want)
	}
	require.NotContains(t, string(raw), "kind: Deployment")
	// The LeaderWorkerSet and ScaledObject as LWS v0.9.0's and KEDA's CRDs
	// have them (unknown fields refused).
	schemas := newSchemaSet()
	n := 0
	for _, f := range files {
		for _, o := range f.Objects {
			ok, err := schemas.validate(t, o)
			require.NoError(t, err, f.Path)
			if ok && f.Path == DirServices+"big.yaml" {
				n++
			}
		}
	}
	require.Equal(t, 2, n, "the LeaderWorkerSet and its ScaledObject checked")

	ws, _, err := kubesvc.ReadServing(y, raw)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	require.Equal(t, "LeaderWorkerSet", ws[0].Kind)
	require.Equal(t, 2, ws[0].Size)
	require.Equal(t, 8, *ws[0].VLLM.TensorParallel)
	require.Equal(t, 2, *ws[0].VLLM.PipelineParallel)
	set, err := kubesvc.Read(y, raw)
	require.NoError(t, err)
	require.Len(t, set.ScaledObjects, 1)
	require.Equal(t, "LeaderWorkerSet/big", set.ScaledObjects[0].Target)

	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, servicesReadBack(t, s, dir), pipeline.Options{})
	require.Equal(t, want, got, "the LeaderWorkerSet read back")
}
