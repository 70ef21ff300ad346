package pipeline

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
)

// The break-even MTBF the report gives (interpolated on its 16-point
// grid) against a bisection over full runs: the MTBF, between 15 minutes
// and a year, at which spot's saving for the same work crosses zero,
// bisected in log MTBF to a factor of 1.05. They agree within one step of
// the grid (a factor of about 1.8).
func TestSpotBreakEvenAgainstBisection(t *testing.T) {
	sc := load(t, "../examples/spot-what-if.yaml")
	v, err := sc.Variant("all-spot-tight")
	require.NoError(t, err)
	o := Options{}
	grid := reports.SpotMTBFGrid()
	curve, err := SpotSensitivity("all-spot-tight", v, o, grid, nil)
	require.NoError(t, err)
	require.Greater(t, curve.BreakEvenHours, 0.0, "spot stops paying somewhere on the curve")

	// The bisection averages the curve's seeds as its points do.
	seeds := curve.Seeds
	require.Equal(t, DefaultSpotSeeds, seeds)
	saving := func(h float64) float64 {
		samples := make([]reports.SpotSample, seeds)
		for k := range samples {
			err := spotPoint(v, o, "bisect", time.Duration(h*float64(time.Hour)).Round(time.Second), uint64(k), &samples[k])
			require.NoError(t, err)
		}
		return reports.SpotPointOf(h, samples, curve.OnDemand).SavingPct
	}
	lo, hi := grid[0].Hours(), grid[len(grid)-1].Hours()
	require.Less(t, saving(lo), 0.0)
	require.Greater(t, saving(hi), 0.0)
	for hi/lo > 1.05 {
		mid := math.Sqrt(lo * hi)
		if saving(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	bisect := math.Sqrt(lo * hi)
	step := grid[1].Hours() / grid[0].Hours()
	ratio := curve.BreakEvenHours / bisect
	require.True(t, ratio < step && ratio > 1/step, "grid break-even %.3f h, bisection %.3f h, grid step x%.2f", curve.BreakEvenHours, bisect, step)
	t.Logf("break-even MTBF: grid %.3f h, bisection %.3f h", curve.BreakEvenHours, bisect)

	// The curve runs on a pool of workers; its points do not depend on
	// how many.
	for _, w := range []int{1, 3} {
		o.Workers = w
		again, err := SpotSensitivity("all-spot-tight", v, o, grid[:4], nil)
		require.NoError(t, err)
		require.Equal(t, curve.Points[:4], again.Points, "%d workers", w)
	}
}

// WithSpotMTBF sets every spot pool's interruptions and nothing else.
func TestWithSpotMTBF(t *testing.T) {
	sc := load(t, "../examples/spot-what-if.yaml")
	v, err := sc.Variant("mix-tight")
	require.NoError(t, err)
	w, err := v.WithSpotMTBF(90 * time.Minute)
	require.NoError(t, err)
	for i, p := range w.Spec.Cluster.Pools {
		if p.CapacityType == "spot" {
			require.Equal(t, 90*time.Minute, p.Interruptions.MTBF.Duration)
		} else {
			require.Equal(t, v.Spec.Cluster.Pools[i].Interruptions, p.Interruptions)
		}
	}
}

// A point's saving for the same requests: $1.50 a million against $2 all
// on-demand saves 25%; a replay that served nothing saves -100%, and the
// point is the mean of its replays: (25 - 100)/2 = -37.5%.
func TestServedSaving(t *testing.T) {
	od := reports.SpotOnDemand{CostPerMillionRequests: 2}
	p := reports.SpotPointOf(1, []reports.SpotSample{{CostPerMillionRequests: 1.5}}, od)
	require.Equal(t, 25.0, p.ServedSavingPct)
	p = reports.SpotPointOf(1, []reports.SpotSample{{}}, od)
	require.Equal(t, -100.0, p.ServedSavingPct)
	p = reports.SpotPointOf(1, []reports.SpotSample{{CostPerMillionRequests: 1.5}, {}}, od)
	require.Equal(t, -37.5, p.ServedSavingPct)
	p = reports.SpotPointOf(1, []reports.SpotSample{{CostPerMillionRequests: 1.5}}, reports.SpotOnDemand{})
	require.Zero(t, p.ServedSavingPct, "no service all on-demand: no figure")
}

// Variants are built on the workers, and whether one has a spot curve is
// known only once it is built: a variant without spot has none, the
// others keep theirs in order, the same on 1 and 4 workers.
func TestScenarioCurvesOfVariantsBuiltOnTheWorkers(t *testing.T) {
	data, err := os.ReadFile("../examples/spot-what-if.yaml")
	require.NoError(t, err)
	onDemand := "  variants:\n  - name: on-demand\n    patch:\n      cluster:\n        pools:\n        - {name: train-od, count: 4}\n        - {name: train-spot, count: 0}\n"
	text := strings.Replace(string(data), "  variants:\n", onDemand, 1)
	require.NotEqual(t, string(data), text)
	sc, err := scenarios.Parse("v.yaml", "../examples", []byte(text))
	require.NoError(t, err)
	h := 24 * time.Hour
	var first []reports.SpotCurve
	for _, w := range []int{1, 4} {
		out, err := Scenario(sc, Options{Build: scenarios.Options{Horizon: &h}, Workers: w})
		require.NoError(t, err)
		var names []string
		for _, c := range out.Main.Summary.SpotSensitivity {
			names = append(names, c.Run)
			require.Contains(t, c.Note, "seed 7;")
		}
		require.Equal(t, []string{"all-spot-tight", "all-spot-advisor", "mix-tight"}, names, "%d workers", w)
		require.Len(t, out.Variants, 4)
		if first == nil {
			first = out.Main.Summary.SpotSensitivity
		} else {
			require.Equal(t, first, out.Main.Summary.SpotSensitivity, "%d workers", w)
		}
	}
}

// The scenario's own curve takes its all-on-demand figures from the
// all-on-demand twin instead of running it again: the curve is the one a
// pool of its own computes, all-on-demand run included.
func TestScenarioCurveSharesTheTwin(t *testing.T) {
	sc := load(t, "../examples/volcano-jobs.yaml")
	require.True(t, sc.UsesSpot())
	h := 12 * time.Hour
	o := Options{Build: scenarios.Options{Horizon: &h}, NoVariants: true}
	out, err := Scenario(sc, o)
	require.NoError(t, err)
	sum := out.Main.Summary
	require.NotNil(t, sum.SpotVsOnDemand)
	require.Len(t, sum.SpotSensitivity, 1)
	curve := sum.SpotSensitivity[0]
	require.Equal(t, sum.SpotVsOnDemand.OnDemand.CostPerUsefulGPUHour, curve.OnDemand.CostPerUsefulGPUHour)
	require.Equal(t, sum.SpotVsOnDemand.OnDemand.Completed, curve.OnDemand.Completed)
	require.Positive(t, curve.OnDemand.Completed)
	require.Positive(t, curve.OnDemand.CostPerUsefulGPUHour)
	alone, err := SpotSensitivity("as given", sc, o, reports.SpotMTBFGrid(), sum)
	require.NoError(t, err)
	require.Equal(t, *alone, curve)
}
