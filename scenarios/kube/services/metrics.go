package services

import (
	"fmt"
	"strings"

	"gpuplan.dev/gpuplan/sim/services"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Kind says which of a simulated service's metrics an autoscaler's metric
// is, and the factor that turns its values (targets, thresholds) into that
// metric's units: queue latency in ms, rates per second, concurrency in
// requests, utilization in percent. It goes by the resource, metric name
// or Prometheus query:
//
//   - vLLM's vllm:num_requests_waiting: a queue depth (requests waiting);
//     vllm:num_requests_running: the requests running;
//     vllm:kv_cache_usage_perc and vllm:gpu_cache_usage_perc: the KV-cache
//     share in use (0 to 1), known by name; a Prometheus query taking a
//     quantile of vLLM's TTFT, TPOT (inter-token) or end-to-end latency
//     histogram (Latency): that quantile over the query's window, its
//     values in seconds; vLLM's other metrics are refused;
//   - the cpu or nvidia.com/gpu resource, KEDA's cpu trigger, a name with
//     "util" (DCGM_FI_DEV_GPU_UTIL): utilization;
//   - "latency" or "queue_time" (TorchServe's ts_queue_latency_microseconds,
//     Triton's nv_inference_queue_duration_us): queue latency, its unit from
//     the name (microseconds, _us, nanoseconds, _ns, milliseconds, _ms,
//     seconds; ms when it says none);
//   - "concurrency", "in_flight", "inflight", "pending", "queue_size",
//     "running": requests in flight;
//   - "request", "rps", "qps": requests per second.
//
// Anything else is an error: the scenario then says what the metric
// measures.
func (m Metric) Kind() (services.MetricKind, float64, error) {
	switch m.Source {
	case "Resource", "ContainerResource", "cpu":
		switch m.Name {
		case "cpu", "nvidia.com/gpu":
			return services.Utilization, 1, nil
		}
		if m.Source == "cpu" {
			return services.Utilization, 1, nil
		}
		return 0, 0, fmt.Errorf("resource %s: gpuplan models a replica's CPU or GPU utilization, not its %s", strict.Quote(m.Name), strict.Quote(m.Name))
	}
	if _, ok, err := m.Latency(); ok {
		if err != nil {
			return 0, 0, err
		}
		// Seconds, as vLLM's histograms count them.
		return services.LatencyQuantileMs, 1000, nil
	}
	text := strings.ToLower(m.Name + " " + m.Query)
	// vLLM's own metrics are known by name, not guessed from their words
	// (vllm:num_requests_waiting holds "request" but is no rate).
	switch {
	case strings.Contains(text, "vllm:num_requests_waiting"):
		return services.QueueDepth, 1, nil
	case strings.Contains(text, "vllm:num_requests_running"):
		return services.Running, 1, nil
	case strings.Contains(text, "vllm:kv_cache_usage_perc"), strings.Contains(text, "vllm:gpu_cache_usage_perc"):
		// A share, 0 to 1, despite "perc" (vLLM's own description).
		return services.KVCacheUsage, 1, nil
	case strings.Contains(text, "vllm:"):
		return 0, 0, fmt.Errorf("%s: of vLLM's metrics gpuplan's services export vllm:num_requests_waiting (a queue depth), vllm:num_requests_running and vllm:kv_cache_usage_perc (or gpu_cache_usage_perc); and a quantile of its latency histograms (histogram_quantile over vllm:time_to_first_token_seconds, vllm:time_per_output_token_seconds or vllm:inter_token_latency_seconds, vllm:e2e_request_latency_seconds)", strict.Quote(m.Name+m.Query))
	}
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(text, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("latency", "queue_time", "queue_duration", "duration_us"):
		switch {
		case has("nanosecond", "_ns"):
			return services.QueueLatencyMs, 1e-6, nil
		case has("microsecond", "_us"):
			return services.QueueLatencyMs, 1e-3, nil
		case has("millisecond", "_ms"):
			return services.QueueLatencyMs, 1, nil
		case has("second"):
			return services.QueueLatencyMs, 1000, nil
		}
		return services.QueueLatencyMs, 1, nil
	case has("util"):
		return services.Utilization, 1, nil
	case has("concurrency", "in_flight", "inflight", "pending", "queue_size", "running"):
		return services.Concurrency, 1, nil
	case has("request", "rps", "qps"):
		return services.RequestsPerReplica, 1, nil
	}
	what := m.Name
	if m.Query != "" {
		what = m.Query
	}
	return 0, 0, fmt.Errorf("cannot tell what %s %s measures (queue latency, requests per second, concurrency or utilization)", m.Source, strict.Quote(what))
}
