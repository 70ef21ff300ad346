package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

// The HPA's period rule (issue 26): with scale-down and scale-up policies
// inside one period, each direction's limit counts from the replicas at
// the period's start, current - added + removed within it (Kubernetes'
// calculateScaleUpLimitWithScalingRules and
// calculateScaleDownLimitWithBehaviors). testdata/repro/hpa-rate-limits:
// 10 replicas at a target of 50 requests each, Pods 2 up and Pods 1 down
// per 60 s, no stabilization, a sync every 15 s, the load 500/s, then
// 300/s from 20 s, 1000/s from 35 s, 200/s from 400 s. Worked by hand:
//   - 30 s: 300/s asks for 6; down by one: 9.
//   - 45 s: 1000/s asks for 20; the period started at 9 + 1 = 10: 12
//     (counting from 9, as gpuplan did, 11).
//   - 105, 165, 225, 285 s: the last change has left the period (a change
//     at t counts while t + 60 s is after now): 14, 16, 18, 20.
//   - 405 s: 200/s asks for 4; no change since 285 s: 19, then
//     18 at 465 s, 17 at 525 s, 16 at 585 s.
func TestHPAPeriodRuleRepro(t *testing.T) {
	s, err := LoadFile("testdata/repro/hpa-rate-limits/hpa-mixed.yaml")
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.Len(t, res.Services, 1)
	// From each time (s) on, the replicas.
	steps := []struct{ at, replicas int }{{0, 10}, {30, 9}, {45, 12}, {105, 14}, {165, 16}, {225, 18}, {285, 20}, {405, 19}, {465, 18}, {525, 17}, {585, 16}}
	var want, got []float64
	for i, p := range res.Services[0].Timeline {
		at := 15 * i
		r := 0
		for _, st := range steps {
			if st.at <= at {
				r = st.replicas
			}
		}
		want = append(want, float64(r))
		got = append(got, p.Replicas)
	}
	require.Len(t, got, 40) // 10 min in 15 s buckets
	require.Equal(t, want, got)
}
