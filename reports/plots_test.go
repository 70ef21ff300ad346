package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
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

// A timeline longer than maxSteps intervals is drawn at an interval k
// times its own, each step its intervals' mean weighted by their widths.
// 1,001 hourly intervals, the last cut to half an hour: k = ceil(1001/480)
// = 3. Values 1, 2, 6 repeating: each of the 333 full steps is 3 h at
// mean 3; the last holds interval 999 (value 1, an hour) and 1000 (value
// 2, half an hour): (1x1 + 2x0.5)/1.5 = 4/3 over 1.5 h.
func TestLongTimelinesDrawnCoarser(t *testing.T) {
	const n = 1001
	tl := &sim.Timeline{Interval: 3600_000, PendingJobMs: make([]int64, n+5)} // 5 intervals past the end
	vals := []float64{1, 2, 6}
	got := steps(tl, (n-1)*3600_000+1800_000, 1, func(i int) float64 { return vals[i%3] })
	require.Len(t, got, 2*334)
	for g := range 333 {
		require.Equal(t, plotter.XY{X: float64(3 * g), Y: 3}, got[2*g], "step %d", g)
		require.Equal(t, plotter.XY{X: float64(3*g + 3), Y: 3}, got[2*g+1], "step %d", g)
	}
	require.Equal(t, 999.0, got[666].X)
	require.Equal(t, 1000.5, got[667].X)
	require.InDelta(t, 4.0/3, got[666].Y, 1e-12)
	require.InDelta(t, 4.0/3, got[667].Y, 1e-12)
	// At maxSteps intervals the steps are the intervals themselves.
	got = steps(tl, maxSteps*3600_000, 24, func(i int) float64 { return vals[i%3] })
	require.Len(t, got, 2*maxSteps)
	require.Equal(t, plotter.XY{X: 1.0 / 24, Y: 2}, got[2])
}

// The variants' chart labels its axes through the tables' formatters:
// money as $15,000 (never 1.5e+04 or 16000) and waits in one duration
// unit (days here: the widest wait is 1.34 days, the axis 1.6 times it).
func TestComparePlotAxesInTheTablesUnits(t *testing.T) {
	s := &Summary{Variants: []RunFigures{{Name: "(as given)", Cost: 14756, WaitP95: 78444}, {Name: "tight", Cost: 4564, WaitP95: 115776}}}
	p, err := comparePlot(s)
	require.NoError(t, err)
	labels := func(ts []plot.Tick) []string {
		var out []string
		for _, x := range ts {
			if x.Label != "" {
				out = append(out, x.Label)
			}
		}
		return out
	}
	y := labels(p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max))
	require.Equal(t, []string{"$0", "$5,000", "$10,000", "$15,000"}, y)
	x := labels(p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max))
	require.Contains(t, x, "1.00d")
	for _, l := range x {
		require.True(t, strings.HasSuffix(l, "d"), l)
	}
}
