package hpa

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// metricKind is the HorizontalPodAutoscaler metric a case drives.
type metricKind int

const (
	// cpuUtilization: a Resource metric (cpu) with an averageUtilization
	// target; every pod requests 1 cpu and uses series[k] percent of it.
	cpuUtilization metricKind = iota
	// podsAverage: a Pods metric with an averageValue target; every pod
	// reports series[k] (milli-units).
	podsAverage
	// podsLoad: a Pods metric with an averageValue target whose pods share
	// a load: every pod reports series[k] / replicas (milli-units,
	// truncated), the loop a request rate per replica closes.
	podsLoad
	// objectValue: an Object metric with a value target, series[k]
	// (milli-units).
	objectValue
)

func (m metricKind) String() string {
	return [...]string{"cpu-utilization", "pods-average", "pods-load", "object-value"}[m]
}

// hpaCase is one HorizontalPodAutoscaler and the metric it sees at each
// sync (every 15 s).
type hpaCase struct {
	name     string
	kind     metricKind
	target   int64 // percent (cpuUtilization) or milli-units
	min, max int32
	initial  int32
	behavior *autoscalingv2.HorizontalPodAutoscalerBehavior // nil: none given
	series   []int64
}

// syncSeconds is the controller's --horizontal-pod-autoscaler-sync-period.
const syncSeconds = 15

// perPod is what each of n pods reports at sync k (milli-units or percent).
func (c *hpaCase) perPod(k int, n int32) int64 {
	v := c.series[k]
	if c.kind == podsLoad {
		if n <= 0 {
			return 0
		}
		return v / int64(n)
	}
	return v
}
