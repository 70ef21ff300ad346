package reports

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot/plotter"

	"gpuplan.dev/gpuplan/sim"
)

func TestCDFSteps(t *testing.T) {
	// Of 1, 2, 2, 3: a quarter are <= 1, three quarters <= 2, all <= 3.
	got := cdf([]float64{1, 2, 2, 3})
	want := plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 0.25}, {X: 2, Y: 0.75}, {X: 2, Y: 0.75}, {X: 3, Y: 1}, {X: 3, Y: 1}}
	assert.Equal(t, want, got)
	// A long series is drawn through at most cdfPoints+3 points and still
	// ends at 1.
	x := make([]float64, 100000)
	for i := range x {
		x[i] = float64(i)
	}
	got = cdf(x)
	assert.LessOrEqual(t, len(got), cdfPoints+3)
	assert.Equal(t, 1.0, got[len(got)-1].Y)
	assert.InDelta(t, 0.5, got[len(got)/2].Y, 0.01)
}

func TestStepsAreIntervalMeans(t *testing.T) {
	// Two buckets of an hour, the last cut at 1.5 h: 3 GPUs for the first
	// hour, 1 GPU for the half hour.
	tl := &sim.Timeline{Interval: 3600_000, PendingJobMs: []int64{0, 0}}
	got := steps(tl, 5400_000, 1, func(i int) float64 { return []float64{3, 1}[i] })
	assert.Equal(t, plotter.XYs{{X: 0, Y: 3}, {X: 1, Y: 3}, {X: 1, Y: 1}, {X: 1.5, Y: 1}}, got)
}
