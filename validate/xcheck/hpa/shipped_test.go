package hpa

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// shippedCases are the project's reproduction hpa-rate-limits (its two
// scenarios' HorizontalPodAutoscalers and request rates, every replica
// ready at once: testdata/PROVENANCE.md) as Pods metrics sharing the
// load: requestsPerReplica = rate / replicas, target 50.
func shippedCases(t *testing.T) []*hpaCase {
	pods := func(v int32, period int32) []autoscalingv2.HPAScalingPolicy {
		return []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: v, PeriodSeconds: period}}
	}
	zero := int32(0)
	return []*hpaCase{
		{
			// hpa-step.yaml: no behavior (the documented default), 2 h.
			name: "hpa-step", kind: podsLoad, target: 50_000, min: 1, max: 100, initial: 1,
			series: rateSeries(t, "rates.csv", 2*3600/syncSeconds),
		},
		{
			// hpa-mixed.yaml: scale-up and scale-down policies inside one
			// period, 10 min.
			name: "hpa-mixed", kind: podsLoad, target: 50_000, min: 1, max: 20, initial: 10,
			behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero, Policies: pods(2, 60)},
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero, Policies: pods(1, 60)},
			},
			series: rateSeries(t, "rates-osc.csv", 10*60/syncSeconds),
		},
	}
}

// rateSeries reads a time,requests_per_second CSV (a step function) and
// gives the load at each of n syncs, in milli-requests per second.
func rateSeries(t *testing.T, file string, n int) []int64 {
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	type step struct{ at, rate int64 }
	var steps []step
	for _, row := range rows[1:] {
		at, err1 := strconv.ParseInt(row[0], 10, 64)
		rate, err2 := strconv.ParseInt(row[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad row %v", file, row)
		}
		steps = append(steps, step{at, rate})
	}
	out := make([]int64, n)
	for k := range out {
		now := int64(k * syncSeconds)
		for _, s := range steps {
			if s.at <= now {
				out[k] = s.rate * 1000
			}
		}
	}
	return out
}
