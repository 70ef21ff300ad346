package services

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/autoscale"
)

// vLLM's running requests and KV-cache usage, as an LLM service exports
// them at 40 requests/s on 2 replicas (20 a replica): the KV usage is the
// fast model's mean blocks at 20/s over the cache's (what vLLM's gauge
// averages), the running requests those in flight less those waiting
// (Little's law over the mean TTFT and decode, less the rate times the
// mean wait). A KEDA trigger on avg(vllm:kv_cache_usage_perc) with
// metricType Value at threshold u/3 wants 3 times the replicas (an
// average metric is not multiplied by the replicas).
func TestLLMServiceExportsRunningAndKVCache(t *testing.T) {
	l := llm8B(t)
	s, err := New(Spec{Name: "chat", Load: serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 40}}}, LLM: l}, Fixed{Replicas: 2})
	require.NoError(t, err)
	m := s.Metrics(0, 2)
	st, err := serving.SteadyLLM(l.Config, 20, l.Input, l.Output)
	require.NoError(t, err)
	usage := st.KVBlocks / float64(l.Config.WithDefaults().Blocks())
	require.InEpsilon(t, usage, m.value(KVCacheUsage, 2), 0.02, "the grid rate nearest 20/s is within 1%")
	waiting := 40 * m.QueueLatencyMs / 1000
	require.InDelta(t, (m.InFlight-waiting)/2, m.value(Running, 2), 1e-9)
	require.Greater(t, m.value(Running, 2), 0.0)

	spec := autoscale.NewScaledObjectSpec(m.KVCacheUsage / 3)
	spec.MinReplicaCount, spec.MaxReplicaCount = 1, 20
	spec.Type = autoscale.Value
	k, err := autoscale.NewKEDA(spec)
	require.NoError(t, err)
	require.Equal(t, 6, KEDA{K: k, Metric: KVCacheUsage}.Decide(60_000, 2, 2, 0, m))
	require.True(t, KVCacheUsage.Average() && !Running.Average() && KVCacheUsage.LLMOnly() && Running.LLMOnly())
}
