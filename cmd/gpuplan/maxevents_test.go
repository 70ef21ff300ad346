package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// validate, sweep and recommend take simulate's work budget, --max-events,
// and build every run with it: a budget lower than a run needs refuses it
// (exit 2, naming the setting and the budget), one higher lets through
// what the default refuses.
func TestMaxEventsReachesEveryRunOfValidateSweepRecommend(t *testing.T) {
	// The built-in default scenario (and the validate example, built on
	// it) makes about 2,800 events in 72 h: 1,393 jobs at 2 events each.
	const over = "over the budget of 1000 (--max-events)"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"validate", []string{"validate", "--baseline", "../../scenarios/examples/validate/baseline.yaml",
			"--candidate", "../../scenarios/examples/validate/candidate.yaml", "--assert", "../../scenarios/examples/validate/rules.yaml",
			"--workers", "1", "--max-events", "1000"}, "baseline, seed 42: ../../scenarios/examples/validate/baseline.yaml:69:24: spec.workload.synthetic.classes[2].arrival.ratePerHour"},
		{"sweep", []string{"sweep", "../../scenarios/examples/sweep/default-capacity.yaml", "--out", t.TempDir(), "--max-events", "1000"},
			"default-capacity.yaml:13:11: spec.parameters[0].path: h100 = 4"},
		{"recommend", []string{"recommend", "--vary", "cluster.pools[0].count=2..4", "--max-events", "1000"},
			`--vary "cluster.pools[0].count=2..4": cluster.pools[0].count = 2`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := gpuplan(t, c.args...)
			require.Equal(t, 2, code, errOut)
			require.Contains(t, errOut, c.want)
			require.Contains(t, errOut, over)
		})
	}

	// A sweep whose first point makes 6.048e8 failure events (1 node, an
	// MTBF of 1 ms, 168 h) is refused by the default budget when it is
	// loaded, and passes the load with a budget of 1e10 (--emit-job runs
	// nothing after it).
	spec := "testdata/budget/sweep-failures.yaml"
	code, _, errOut := gpuplan(t, "sweep", spec, "--emit-job")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "makes about 6e+08 events, over the budget of 25000000 (--max-events)")
	code, out, errOut := gpuplan(t, "sweep", spec, "--emit-job", "--shards", "2", "--max-events", "10000000000")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "kind: Job")

	for _, cmd := range [][]string{
		{"validate", "--baseline", "a.yaml", "--candidate", "b.yaml", "--assert", "r.yaml"},
		{"sweep", spec}, {"recommend", "--vary", "cluster.pools[0].count=2..4"},
	} {
		code, _, errOut := gpuplan(t, append(cmd, "--max-events", "-5")...)
		require.Equal(t, 2, code, errOut)
		require.Contains(t, errOut, "--max-events -5: want a positive number of events", cmd[0])
	}
}
