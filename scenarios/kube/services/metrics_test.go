package services

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/services"
)

// What an autoscaler's metric measures, from its resource, name or query,
// and the factor to the simulated metric's units.
func TestMetricKind(t *testing.T) {
	for _, c := range []struct {
		m      Metric
		kind   services.MetricKind
		factor float64
	}{
		{Metric{Source: "Resource", Name: "cpu"}, services.Utilization, 1},
		{Metric{Source: "cpu"}, services.Utilization, 1},
		{Metric{Source: "prometheus", Query: `sum(rate(ts_queue_latency_microseconds{model_name="bert"}[1m]))`}, services.QueueLatencyMs, 1e-3},
		{Metric{Source: "prometheus", Query: `avg(nv_inference_queue_duration_us)`}, services.QueueLatencyMs, 1e-3},
		{Metric{Source: "Pods", Name: "request_latency_seconds"}, services.QueueLatencyMs, 1000},
		{Metric{Source: "Pods", Name: "queue_latency_ms"}, services.QueueLatencyMs, 1},
		{Metric{Source: "External", Name: "DCGM_FI_DEV_GPU_UTIL"}, services.Utilization, 1},
		{Metric{Source: "Pods", Name: "requests_in_flight"}, services.Concurrency, 1},
		{Metric{Source: "prometheus", Query: `sum(rate(ts_inference_requests_total[1m]))`}, services.RequestsPerReplica, 1},
		// vLLM's waiting requests are a queue depth, though the name
		// says "requests" (issue 31: it was read as a rate).
		{Metric{Source: "prometheus", Query: `sum(vllm:num_requests_waiting{model_name="llama"})`}, services.QueueDepth, 1},
		{Metric{Source: "External", Name: "vllm:num_requests_waiting"}, services.QueueDepth, 1},
		{Metric{Source: "prometheus", Query: "sum(vllm:num_requests_running)"}, services.Running, 1},
		{Metric{Source: "prometheus", Query: "avg(vllm:gpu_cache_usage_perc)"}, services.KVCacheUsage, 1},
		{Metric{Source: "Pods", Name: "vllm:kv_cache_usage_perc"}, services.KVCacheUsage, 1},
	} {
		k, f, err := c.m.Kind()
		require.NoError(t, err, "%+v", c.m)
		require.Equal(t, c.kind, k, "%+v", c.m)
		require.Equal(t, c.factor, f, "%+v", c.m)
	}
	_, _, err := Metric{Source: "Resource", Name: "memory"}.Kind()
	require.ErrorContains(t, err, `not its "memory"`)
	_, _, err = Metric{Source: "prometheus", Query: "avg(vllm:num_preemptions_total)"}.Kind()
	require.ErrorContains(t, err, "of vLLM's metrics gpuplan's services export vllm:num_requests_waiting (a queue depth), vllm:num_requests_running and vllm:kv_cache_usage_perc")
	// A quantile of a latency histogram is read, in seconds.
	k, f, err := Metric{Source: "prometheus", Query: `histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket{model_name="llama"}[2m])) by (le))`}.Kind()
	require.NoError(t, err)
	require.Equal(t, services.LatencyQuantileMs, k)
	require.Equal(t, 1000.0, f)
	_, _, err = Metric{Source: "prometheus", Query: "sum(foo)"}.Kind()
	require.ErrorContains(t, err, `cannot tell what prometheus "sum(foo)" measures`)
}
