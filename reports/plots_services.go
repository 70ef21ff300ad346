package reports

import (
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"gpuplan.dev/gpuplan/sim"
)

// maxServicesPlotted: the first this many services get plots.
const maxServicesPlotted = 8

// stacked is plots drawn one above the other on a shared time axis.
type stacked []*plot.Plot

// Draw implements the drawing of a figure.
func (s stacked) Draw(c draw.Canvas) {
	rows := make([][]*plot.Plot, len(s))
	for i, p := range s {
		rows[i] = []*plot.Plot{p}
	}
	t := draw.Tiles{Rows: len(s), Cols: 1, PadY: vg.Points(6), PadTop: vg.Points(2), PadBottom: vg.Points(2), PadLeft: vg.Points(2), PadRight: vg.Points(2)}
	cs := plot.Align(rows, t, c)
	for i, p := range s {
		p.Draw(cs[i][0])
	}
}

// serviceSteps is a service's per-bucket values as a step line; buckets
// for which v says false are left out, breaking the line (one XYs per
// unbroken run).
func serviceSteps(tl *sim.Timeline, end sim.Time, n int, div float64, v func(i int, width float64) (float64, bool)) []plotter.XYs {
	var runs []plotter.XYs
	var cur plotter.XYs
	for i := 0; i < n; i++ {
		w := tl.Width(i, end)
		if w <= 0 {
			continue
		}
		y, ok := v(i, float64(w))
		if !ok {
			if len(cur) > 0 {
				runs = append(runs, cur)
				cur = nil
			}
			continue
		}
		lo := float64(sim.Time(i)*tl.Interval) / 3.6e6 / div
		hi := lo + float64(w)/3.6e6/div
		cur = append(cur, plotter.XY{X: lo, Y: y}, plotter.XY{X: hi, Y: y})
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs
}

// addRuns adds a series drawn as unbroken runs, in the legend once; it
// returns the largest y.
func addRuns(p *plot.Plot, name string, runs []plotter.XYs, k int, dashed bool) (float64, error) {
	top := 0.0
	for i, xy := range runs {
		l, err := line(xy, PlotColor(k), dashed)
		if err != nil {
			return 0, err
		}
		p.Add(l)
		if i == 0 {
			p.Legend.Add(name, l)
		}
		for _, q := range xy {
			top = math.Max(top, q.Y)
		}
	}
	return top, nil
}

// serviceLoadPlot draws a service's load (requests arriving and served
// per second) above its replicas (held, pending ones included, and
// ready), per timeline bucket. nil without a timeline.
func serviceLoadPlot(res *sim.Result, k int) (stacked, error) {
	r := &res.Services[k]
	tl := &res.Timeline
	if tl.Interval <= 0 || len(r.Timeline) == 0 {
		return nil, nil
	}
	div, xl := timeAxis(res.End)
	n := len(r.Timeline)
	load := newPlot(r.Name+": load and replicas", "", "requests/s")
	top := 0.0
	for c, s := range []struct {
		name string
		v    func(p sim.ServicePoint, w float64) float64
	}{
		{"arriving", func(p sim.ServicePoint, _ float64) float64 { return p.Rate }},
		{"served", func(p sim.ServicePoint, w float64) float64 { return p.Served / (w / 1000) }},
	} {
		t, err := addRuns(load, s.name, serviceSteps(tl, res.End, n, div, func(i int, w float64) (float64, bool) {
			return s.v(r.Timeline[i], w), true
		}), c, false)
		if err != nil {
			return nil, err
		}
		top = math.Max(top, t)
	}
	load.Y.Min, load.Y.Max = 0, math.Max(1, top*1.3)
	reps := newPlot("", xl, "replicas")
	top = 0
	for c, s := range []struct {
		name string
		v    func(p sim.ServicePoint) float64
	}{
		{"replicas held", func(p sim.ServicePoint) float64 { return p.Replicas }},
		{"replicas ready", func(p sim.ServicePoint) float64 { return p.Ready }},
	} {
		t, err := addRuns(reps, s.name, serviceSteps(tl, res.End, n, div, func(i int, _ float64) (float64, bool) {
			return s.v(r.Timeline[i]), true
		}), c+2, false)
		if err != nil {
			return nil, err
		}
		top = math.Max(top, t)
	}
	reps.Y.Min, reps.Y.Max = 0, math.Max(1, top*1.3)
	// The same time axis on both.
	load.X.Min, load.X.Max = 0, float64(res.End)/3.6e6/div
	reps.X.Min, reps.X.Max = load.X.Min, load.X.Max
	return stacked{load, reps}, nil
}

// serviceLatencyPlot draws each bucket's p95 latency (buckets that served
// nothing are gaps) and the SLO, dashed. The axis is logarithmic when the
// worst bucket is over ten times the median one (a cold start from zero
// beside steady serving). nil when no bucket served.
func serviceLatencyPlot(res *sim.Result, k int) (*plot.Plot, error) {
	r := &res.Services[k]
	tl := &res.Timeline
	if tl.Interval <= 0 || len(r.Timeline) == 0 {
		return nil, nil
	}
	div, xl := timeAxis(res.End)
	n := len(r.Timeline)
	var vals []float64
	for _, p := range r.Timeline[:n] {
		if p.P95Ms > 0 {
			vals = append(vals, p.P95Ms)
		}
	}
	if len(vals) == 0 {
		return nil, nil
	}
	sort.Float64s(vals)
	lo, med, hi := vals[0], vals[len(vals)/2], vals[len(vals)-1]
	p := newPlot(r.Name+": p95 latency per interval (dashed: SLO)", xl, "p95 latency (ms)")
	top, err := addRuns(p, "p95 latency", serviceSteps(tl, res.End, n, div, func(i int, _ float64) (float64, bool) {
		return r.Timeline[i].P95Ms, r.Timeline[i].P95Ms > 0
	}), 0, false)
	if err != nil {
		return nil, err
	}
	end := float64(res.End) / 3.6e6 / div
	if r.SLOMs > 0 {
		if _, err := addRuns(p, "SLO", []plotter.XYs{{{X: 0, Y: r.SLOMs}, {X: end, Y: r.SLOMs}}}, 3, true); err != nil {
			return nil, err
		}
		top = math.Max(top, r.SLOMs)
		lo = math.Min(lo, r.SLOMs)
	}
	p.X.Min, p.X.Max = 0, end
	if hi > 10*med {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = lo/2, top*4
		p.Y.Label.Text = "p95 latency (ms, log scale)"
	} else {
		p.Y.Min, p.Y.Max = 0, top*1.3
	}
	return p, nil
}
