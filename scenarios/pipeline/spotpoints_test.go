package pipeline

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
)

// Every reproduction of spot pools without a horizon runs whole on seeds
// 1 to 20, its spot sensitivity included: every job completes in the run,
// and every point of the curve runs whole (at short MTBFs jobs without a
// checkpoint may fail past their backoff limit). The one exception is
// ign-only.yaml's points at MTBFs up to an hour, where an 8h job that
// keeps no checkpoint and ignores disruptions restarts from scratch at
// every interruption: restarts at rate 1/m take m(e^(8h/m) - 1) on
// average to give 8h uninterrupted, 2,650h at m = 61m and more below,
// against the 720h (30 days) a point may go without a job finishing.
// Those points may fail as not draining, and the run stands. (At the next
// MTBF, 1.8h, it is 150h.) Each point replays one seed here: the twenty
// seeds are the supply seeds the default five would add.
func TestSpotWithoutHorizonEverySeed(t *testing.T) {
	zero := time.Duration(0)
	files := []string{
		"no-horizon-spot/ign-only.yaml", "no-horizon-spot/one-auto.yaml", "no-horizon-spot/spot-times.yaml",
		"spot-sensitivity/one.yaml", "spot-sensitivity/two.yaml", "spot-sensitivity/three.yaml",
		"spot-sensitivity/two-times.yaml", "spot-sensitivity/spot-trace.yaml", "spot-sensitivity/cost-two-nodes.yaml",
	}
	for _, f := range files {
		file := filepath.Join("testdata", f)
		sc := load(t, file)
		for seed := uint64(1); seed <= 20; seed++ {
			o := Options{Build: scenarios.Options{Seed: &seed, Horizon: &zero}, File: file, SpotSeeds: 1}
			out, err := Scenario(sc, o)
			require.NoError(t, err, "%s seed %d", f, seed)
			s := out.Main.Summary
			require.Equal(t, s.Jobs.Total, s.Jobs.ByOutcome[sim.Completed.String()], "%s seed %d: every job completes", f, seed)
			require.Len(t, s.SpotSensitivity, 1, "%s seed %d", f, seed)
			c := s.SpotSensitivity[0]
			require.Empty(t, c.Failed, "%s seed %d", f, seed)
			require.Len(t, c.Points, len(reports.SpotMTBFGrid()))
			for _, p := range c.Points {
				if f == "no-horizon-spot/ign-only.yaml" && p.MTBFHours < 1.1 && p.Failed != "" {
					require.Contains(t, p.Failed, "the workload does not drain", "%s seed %d MTBF %gh", f, seed, p.MTBFHours)
					continue
				}
				// Its run passed every invariant check (a failure would be
				// here).
				require.Empty(t, p.Failed, "%s seed %d MTBF %gh", f, seed, p.MTBFHours)
			}
		}
	}
}

// A point of the spot sensitivity that fails is that point's failure,
// reported with its reason in the curve and the printed summary; the
// run, its other points and its break-even stand.
func TestSpotSensitivityPointFailureIsThePoints(t *testing.T) {
	file := "testdata/spot-sensitivity/two.yaml"
	sc := load(t, file)
	seed := uint64(3)
	grid := reports.SpotMTBFGrid()
	o := Options{Build: scenarios.Options{Seed: &seed}, File: file}
	clean, err := Scenario(sc, o)
	require.NoError(t, err)

	o.pointHook = func(mtbf time.Duration) error {
		if mtbf == grid[0] {
			return &BugError{Scenario: file, Seed: seed, Run: "planted", Err: errors.New("planted invariant failure")}
		}
		return nil
	}
	out, err := Scenario(sc, o)
	require.NoError(t, err, "a failed point must not fail the run")
	c := out.Main.Summary.SpotSensitivity[0]
	require.Contains(t, c.Points[0].Failed, "planted invariant failure")
	require.Zero(t, c.Points[0].Completed)
	want := clean.Main.Summary.SpotSensitivity[0]
	require.Equal(t, want.Points[1:], c.Points[1:], "the other points are as without the failure")
	require.Equal(t, clean.Main.Summary.Jobs, out.Main.Summary.Jobs)

	var buf strings.Builder
	require.NoError(t, reports.WriteTable(&buf, out.Main.Summary))
	require.Contains(t, buf.String(), "MTBF 15.0m: failed: replay 1 of 5: planted invariant failure")
	buf.Reset()
	require.NoError(t, reports.WriteJSON(&buf, out.Main.Summary))
	require.Contains(t, buf.String(), `"failed": "replay 1 of 5: planted invariant failure`)
}

// The break-even and the savings read only the points that ran.
func TestBreakEvenSkipsFailedPoints(t *testing.T) {
	c := reports.SpotCurve{Points: []reports.SpotPoint{
		{MTBFHours: 1, Failed: "boom"},
		{MTBFHours: 2, SavingPct: -10},
		{MTBFHours: 8, SavingPct: 30},
	}}
	// Zero between 2h (-10%) and 8h (+30%), a quarter of the way in log
	// MTBF: 2 x 4^(1/4) = 2.828h.
	require.InDelta(t, 2.828, c.BreakEven(), 0.001)
	c.Points[0] = reports.SpotPoint{MTBFHours: 1, SavingPct: 50}
	require.InDelta(t, 1.7818, c.BreakEven(), 0.001, "with the point: zero between 1h (+50%) and 2h (-10%), 5/6 of the way in log MTBF: 2^(5/6)")
}

// --spot-sensitivity off (Options.Sensitivity) and
// spec.output.spotSensitivity: off skip the replay: no point runs and
// the summary has no curve; an explicit on overrides the scenario's off.
func TestSpotSensitivityOff(t *testing.T) {
	file := "testdata/spot-sensitivity/two.yaml"
	var mu sync.Mutex
	points := 0
	count := func(time.Duration) error { mu.Lock(); points++; mu.Unlock(); return nil }
	run := func(sc *scenarios.Scenario, sens scenarios.Switch) *Outcome {
		points = 0
		out, err := Scenario(sc, Options{File: file, Sensitivity: sens, pointHook: count})
		require.NoError(t, err)
		return out
	}
	sc := load(t, file)
	out := run(sc, "")
	require.Equal(t, len(reports.SpotMTBFGrid())*DefaultSpotSeeds, points, "on by default, each MTBF on 5 seeds")
	require.Len(t, out.Main.Summary.SpotSensitivity, 1)
	require.NotNil(t, out.Main.Summary.SpotVsOnDemand, "the all-on-demand twin still runs")

	out = run(sc, scenarios.Off)
	require.Zero(t, points)
	require.Empty(t, out.Main.Summary.SpotSensitivity)
	require.NotNil(t, out.Main.Summary.SpotVsOnDemand)

	off := load(t, file)
	off.Spec.Output.SpotSensitivity = scenarios.Off
	out = run(off, "")
	require.Zero(t, points, "spec.output.spotSensitivity: off")
	require.Empty(t, out.Main.Summary.SpotSensitivity)
	out = run(off, scenarios.On)
	require.Equal(t, len(reports.SpotMTBFGrid())*DefaultSpotSeeds, points, "--spot-sensitivity on overrides the scenario")
	require.Len(t, out.Main.Summary.SpotSensitivity, 1)
}
