package manifests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim/services"
)

const ttftScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: llm-ttft
spec:
  seed: 3
  horizon: 12h
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
      pod: {cpu: "16", memory: 128Gi, gpus: 1}
      coldStart: {imagePull: 60s, modelLoad: 40s}
      load:
        diurnal: {base: 60, amplitude: 40, peak: "06:00"}
      llm:
        model: llama-3-8b
        gpu: H100-80GB
        maxModelLen: 8192
        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
        slo: {ttft: 500ms, tpot: 50ms}
      autoscaler:
        manifests: [scaledobject.yaml]
`

const ttftScaledObject = `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: chat
  namespace: inference
spec:
  scaleTargetRef:
    name: chat
  pollingInterval: 15
  minReplicaCount: 1
  maxReplicaCount: 16
  triggers:
  - type: prometheus
    metricType: Value
    metadata:
      serverAddress: http://prometheus.monitoring:9090
      query: histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket{model_name="meta-llama/Llama-3.1-8B-Instruct"}[2m])) by (le))
      threshold: "0.08"
`

// TestRoundTripLLMTTFT: an LLM service scaled by KEDA on its p95 TTFT
// (a prometheus trigger over vLLM's TTFT histogram, metricType Value,
// 80 ms) is written back as a ScaledObject whose query is the same
// quantile of the same histogram over the same window (over the
// service's pods), with the threshold in seconds; read back, it gives
// the run's summary.
func TestRoundTripLLMTTFT(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates an LLM service twice")
	}
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "scenario.yaml"), []byte(ttftScenario), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "scaledobject.yaml"), []byte(ttftScaledObject), 0o644))
	s, err := scenarios.LoadFile(filepath.Join(src, "scenario.yaml"))
	require.NoError(t, err)
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	k, ok := b.Config.Services[0].Scaler.(services.KEDA)
	b.Close()
	require.True(t, ok)
	require.Equal(t, services.LatencyQuantileMs, k.Metric)
	require.Equal(t, services.LatencyQuantile{Of: services.TTFT, Q: 0.95, WindowMs: 120_000}, k.Quantile)
	require.Equal(t, 80.0, k.K.Spec().Threshold, "0.08 s, in ms")

	_, dir, y, raw := writtenService(t, s, "chat")
	set, err := kubesvc.Read(y, raw)
	require.NoError(t, err)
	require.Len(t, set.ScaledObjects, 1)
	so := set.ScaledObjects[0]
	require.Equal(t, `histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket{namespace="inference",pod=~"chat-.*"}[2m])) by (le))`, so.Metric.Query)
	require.Equal(t, 0.08, so.Spec.Threshold)

	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, servicesReadBack(t, s, dir), pipeline.Options{})
	require.Equal(t, want, got, "the LLM service read back")
}
