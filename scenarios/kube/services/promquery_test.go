package services

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/services"
)

// The queries users write for autoscaling on vLLM's latency histograms
// (KEDA's prometheus trigger), read strictly: the quantile, the
// histogram and the rate window.
func TestLatencyQueries(t *testing.T) {
	for _, c := range []struct {
		query string
		want  services.LatencyQuantile
	}{
		{`histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket{model_name="meta-llama/Llama-3.1-8B"}[2m])) by (le))`,
			services.LatencyQuantile{Of: services.TTFT, Q: 0.95, WindowMs: 120_000}},
		{`histogram_quantile(0.9,sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket[1m30s])))`,
			services.LatencyQuantile{Of: services.E2E, Q: 0.9, WindowMs: 90_000}},
		{`histogram_quantile(0.99, sum(rate(vllm:time_per_output_token_seconds_bucket{namespace="llm", pod=~"chat-.*"}[5m])) by (le))`,
			services.LatencyQuantile{Of: services.TPOT, Q: 0.99, WindowMs: 300_000}},
		{` histogram_quantile( 0.5 , sum( rate( vllm:inter_token_latency_seconds_bucket{a="x,y",} [30s] ) ) by ( le ) ) `,
			services.LatencyQuantile{Of: services.TPOT, Q: 0.5, WindowMs: 30_000}},
	} {
		q, ok, err := Metric{Source: "prometheus", Query: c.query}.Latency()
		require.NoError(t, err, c.query)
		require.True(t, ok)
		require.Equal(t, c.want, q, c.query)
	}
	for _, c := range []struct{ query, err string }{
		{`histogram_quantile(1.5, sum(rate(vllm:time_to_first_token_seconds_bucket[2m])) by (le))`, `the quantile "1.5" must be a number between 0 and 1`},
		{`histogram_quantile(0.95, sum(rate(vllm:request_queue_time_seconds_bucket[2m])) by (le))`, `"vllm:request_queue_time_seconds_bucket" is not one of vLLM's latency histograms' buckets`},
		{`histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_sum[2m])) by (le))`, `is not one of vLLM's latency histograms' buckets`},
		{`histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket[2 minutes])) by (le))`, `gpuplan reads one quantile`},
		{`histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket[2min])) by (le))`, `the rate window "2min": not a Prometheus duration`},
		{`histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket[2m])) by (le, pod))`, `gpuplan reads one quantile`},
		{`histogram_quantile(0.95, rate(vllm:time_to_first_token_seconds_bucket[2m]))`, `gpuplan reads one quantile`},
		{`sum(rate(vllm:time_to_first_token_seconds_sum[2m])) / sum(rate(vllm:time_to_first_token_seconds_count[2m]))`, `no mean over _sum and _count`},
		{`histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket{model_name=llama}[2m])) by (le))`, `"model_name=llama" is not a label matcher`},
		{`histogram_quantile(0.95, sum(rate(http_request_duration_seconds_bucket[2m])) by (le))`, `"http_request_duration_seconds_bucket" is not one of vLLM's latency histograms' buckets`},
	} {
		_, ok, err := Metric{Source: "prometheus", Query: c.query}.Latency()
		require.True(t, ok, c.query)
		require.ErrorContains(t, err, c.err, c.query)
	}
	_, ok, err := Metric{Source: "prometheus", Query: "sum(vllm:num_requests_waiting)"}.Latency()
	require.False(t, ok)
	require.NoError(t, err)
	_, _, err = Metric{Source: "External", Name: "vllm:time_to_first_token_seconds"}.Kind()
	require.ErrorContains(t, err, `External "vllm:time_to_first_token_seconds" names a latency histogram but no quantile or window`)
}

// A ScaledObject whose query is no quantile gpuplan reads is refused with
// the file, line and field.
func TestScaledObjectLatencyQueryRefused(t *testing.T) {
	doc := `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: chat
spec:
  scaleTargetRef:
    name: chat
  triggers:
  - type: prometheus
    metricType: Value
    metadata:
      serverAddress: http://prometheus.monitoring:9090
      query: histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket[2m])) by (le, pod))
      threshold: "0.5"
`
	_, err := Read("so.yaml", []byte(doc))
	require.ErrorContains(t, err, `so.yaml:`)
	require.ErrorContains(t, err, `spec.triggers[0].metadata["query"]`)
	require.ErrorContains(t, err, "gpuplan reads one quantile")
	set, err := Read("so.yaml", []byte(doc[:len(doc)-len("by (le, pod))\n      threshold: \"0.5\"\n")]+"by (le))\n      threshold: \"0.5\"\n"))
	require.NoError(t, err)
	q, ok, err := set.ScaledObjects[0].Metric.Latency()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, services.LatencyQuantile{Of: services.TTFT, Q: 0.95, WindowMs: 120_000}, q)
	require.Equal(t, 0.5, set.ScaledObjects[0].Spec.Threshold)
}
