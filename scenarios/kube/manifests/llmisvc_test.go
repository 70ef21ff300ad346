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

const pdScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: llm-pd
spec:
  seed: 3
  horizon: 6h
  cluster:
    pools:
    - name: gpu
      count: 2
      instanceType: p5.48xlarge
  workload:
    services:
    - name: chat
      queue: inference
      priority: 1000
      pod: {cpu: "16", memory: 128Gi, gpus: 4}
      coldStart: {imagePull: 60s, modelLoad: 30s}
      load:
        diurnal: {base: 3, amplitude: 2, peak: "03:00"}
      llm:
        model: llama-3-8b
        gpu: H100-80GB
        tensorParallel: 4
        maxModelLen: 8192
        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
        slo: {ttft: 500ms, tpot: 50ms}
        disaggregation:
          prefill: {replicas: 1}
          decode: {replicas: 2}
      replicas: {min: 1, max: 1}
`

// TestRoundTripLLMInferenceServicePD: a disaggregated LLM service (one
// prefill and two decode engines of 4 H100 each, each engine a pod) is
// written as KServe's LLMInferenceService with spec.prefill (the decode
// pool 2 pods of 4 GPUs, the prefill pool 1, vLLM's NixlConnector on
// both); read back, it is the same replica of pods and engines, and the
// run gives the same summary.
func TestRoundTripLLMInferenceServicePD(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates an LLM service twice")
	}
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "scenario.yaml"), []byte(pdScenario), 0o644))
	s, err := scenarios.LoadFile(filepath.Join(src, "scenario.yaml"))
	require.NoError(t, err)
	_, dir, y, raw := writtenService(t, s, "chat")
	flat := strings.Join(strings.Fields(string(raw)), " ")
	for _, want := range []string{"apiVersion: serving.kserve.io/v1alpha2 kind: LLMInferenceService", "uri: hf://meta-llama/Llama-3.1-8B-Instruct",
		"prefill: parallelism: tensor: 4 replicas: 1", "kv_role\":\"kv_producer", "kv_role\":\"kv_consumer", "nvidia.com/gpu: \"4\"",
		"replicas: 2 router:"} {
		require.Contains(t, flat, want)
	}
	require.NotContains(t, string(raw), "kind: Deployment")
	objs, err := Decode(y, raw)
	require.NoError(t, err, "read back strictly into the writer's types")
	require.Len(t, objs, 1)

	ws, _, err := kubesvc.ReadServing(y, raw)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	w := ws[0]
	require.Equal(t, "LLMInferenceService", w.Kind)
	require.Equal(t, 1, w.Replicas)
	require.NotNil(t, w.Disagg)
	require.Equal(t, 1, w.Disagg.Prefill)
	require.Equal(t, 2, w.Disagg.Decode)
	require.Equal(t, 4, w.Disagg.PrefillTP)
	require.EqualValues(t, 4, w.Pod.GPUs)

	back := servicesReadBack(t, s, dir)
	b, err := back.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	c := b.Config.Services[0]
	require.Equal(t, 3, c.PodsPerReplica)
	require.Equal(t, 77.83, c.Spec.LLM.Disagg.KVTransferGBps, "12 GPUs on nodes of 8: the KV cache over the network")
	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, back, pipeline.Options{})
	require.Equal(t, want, got, "the LLMInferenceService read back")
}
