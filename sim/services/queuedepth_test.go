package services

import (
	"testing"

	"gpuplan.dev/gpuplan/sim/autoscale"
)

// vLLM's vllm:num_requests_waiting is a queue depth: requests waiting,
// not in service. By Little's law a service taking 300 requests/s whose
// requests wait 40 ms before service has 300 x 0.040 = 12 waiting, 3 per
// replica of 4 ready; with none ready, the requests held. A ScaledObject
// with threshold 2 on sum(vllm:num_requests_waiting) (AverageValue) asks
// for ceil(12 / 2) = 6 replicas. Read as requests per second per
// replica, the same trigger would want 300 / 2 = 150 and get 8, the
// HPA's default scale-up limit (double, or 4 more, a period).
func TestQueueDepthIsWaitingRequests(t *testing.T) {
	m := Metrics{Rate: 300, InFlight: 40, QueueLatencyMs: 40}
	if got := m.value(QueueDepth, 4); got != 3 {
		t.Fatalf("queue depth per replica: got %g, want 3", got)
	}
	if got := (Metrics{Rate: 5, InFlight: 17}).value(QueueDepth, 0); got != 17 {
		t.Fatalf("queue depth with no replica ready: got %g, want the 17 held", got)
	}
	spec := autoscale.NewScaledObjectSpec(2)
	spec.MinReplicaCount, spec.MaxReplicaCount = 1, 200
	for _, c := range []struct {
		kind MetricKind
		want int
	}{{QueueDepth, 6}, {RequestsPerReplica, 8}} {
		k, err := autoscale.NewKEDA(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := (KEDA{K: k, Metric: c.kind}).Decide(0, 4, 4, 0, m); got != c.want {
			t.Fatalf("KEDA on kind %d: got %d replicas, want %d", c.kind, got, c.want)
		}
	}
}
