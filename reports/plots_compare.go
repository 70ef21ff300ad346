package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"gpuplan.dev/gpuplan/sim"
)

// humanTicks labels a log-scale axis of seconds with round durations
// (1 s, 1 m, 10 m, 1 h, 6 h, 1 d, 1 w) instead of powers of ten.
type humanTicks struct{}

var humanTickSeconds = []float64{1, 10, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400}

func (humanTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, s := range humanTickSeconds {
		if s >= lo && s <= hi {
			out = append(out, plot.Tick{Value: s, Label: Human(s)})
		}
	}
	if len(out) < 2 { // a narrow range: its ends
		out = []plot.Tick{{Value: lo, Label: Human(lo)}, {Value: hi, Label: Human(hi)}}
	}
	return out
}

// timeAxis is the unit of a chart's time axis: hours for runs up to three
// days, days beyond.
func timeAxis(end sim.Time) (div float64, label string) {
	if end > 72*sim.Hour {
		return 24, "simulated time (days)"
	}
	return 1, "simulated time (h)"
}

// comparePlot sets the scenario as given and each variant on cost against
// p95 wait, each point labelled with its completed jobs: cheaper and
// faster is down and left.
func comparePlot(s *Summary) (*plot.Plot, error) {
	if len(s.Variants) < 2 {
		return nil, nil
	}
	p := newPlot("What-if variants: cost against p95 queue wait", "p95 queue wait", "cost")
	var xys plotter.XYs
	var labels []string
	top, right := 0.0, 0.0
	for _, f := range s.Variants {
		xy := plotter.XY{X: f.WaitP95, Y: f.Cost}
		label := fmt.Sprintf("%s (%d done)", f.Name, f.Completed)
		top, right = math.Max(top, f.Cost), math.Max(right, f.WaitP95)
		// Runs with the same figures share one point and one label.
		same := -1
		for i, q := range xys {
			if q == xy {
				same = i
			}
		}
		if same >= 0 {
			labels[same] += " = " + label
			continue
		}
		xys = append(xys, xy)
		labels = append(labels, label)
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Color = PlotColor(0)
	sc.GlyphStyle.Radius = vg.Points(4)
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	p.Add(sc)
	// Labels alternate above and below their points, so that runs close
	// together do not write over each other.
	for k, dy := range []vg.Length{vg.Points(4), vg.Points(-13)} {
		var sub plotter.XYs
		var names []string
		for i := k; i < len(xys); i += 2 {
			sub = append(sub, xys[i])
			names = append(names, labels[i])
		}
		if len(sub) == 0 {
			continue
		}
		ls, err := plotter.NewLabels(plotter.XYLabels{XYs: sub, Labels: names})
		if err != nil {
			return nil, err
		}
		for i := range ls.TextStyle {
			ls.TextStyle[i].Font.Size = vg.Points(9)
			ls.TextStyle[i].XAlign = draw.XLeft
		}
		ls.Offset = vg.Point{X: vg.Points(6), Y: dy}
		p.Add(ls)
	}
	p.X.Min, p.X.Max = 0, math.Max(360, right*1.6)
	p.Y.Min, p.Y.Max = 0, math.Max(1, top*1.15)
	// Waits and money through the tables' formatters: 25h and $8,000.
	p.X.Tick.Marker = UnitTicks{Unit: UnitSeconds}
	p.Y.Tick.Marker = UnitTicks{Unit: UnitUSD}
	return p, nil
}

// costTimePlot is each pool's cost so far over time: the nodes present in
// each timeline interval times the pool's price (GPU pools; nodes counted
// from the GPUs they supply).
func costTimePlot(res *sim.Result, s *Summary) (*plot.Plot, error) {
	if s.Cost == nil || res.Timeline.Supplied == nil {
		return nil, nil
	}
	div, xl := timeAxis(res.End)
	p := newPlot("Cost so far per pool (USD)", xl, "USD")
	tl := &res.Timeline
	top := 0.0
	drawn := 0
	for pi, pool := range res.Pools {
		if pi >= len(s.Cost.ByPool) || pool.Spec.GPUsPerNode <= 0 || pi >= len(tl.Supplied) {
			continue
		}
		price := s.Cost.ByPool[pi].PricePerHour
		if price <= 0 {
			continue
		}
		var xy plotter.XYs
		xy = append(xy, plotter.XY{X: 0, Y: 0})
		var sum float64
		for i := range tl.Supplied[pi] {
			w := tl.Width(i, res.End)
			if w <= 0 {
				continue
			}
			nodeMs := float64(tl.Supplied[pi][i]) / 1000 / float64(pool.Spec.GPUsPerNode)
			sum += nodeMs / float64(sim.Hour) * price
			x := float64(sim.Time(i)*tl.Interval+w) / 3.6e6 / div
			xy = append(xy, plotter.XY{X: x, Y: sum})
		}
		l, err := line(xy, PlotColor(pi), false)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(pool.Spec.Name, l)
		top = math.Max(top, sum)
		drawn++
	}
	if drawn == 0 {
		return nil, nil
	}
	p.Y.Min, p.Y.Max = 0, math.Max(1, top*(1.15+0.07*float64(drawn)))
	p.Y.Tick.Marker = UnitTicks{Unit: UnitUSD}
	return p, nil
}

// teamCostPlot is each team's showback: what its pods paid and its share
// of idle cost, stacked.
func teamCostPlot(s *Summary) (*plot.Plot, error) {
	if s.Cost == nil || s.Cost.Showback == nil || len(s.Cost.Showback.Teams) == 0 {
		return nil, nil
	}
	sb := s.Cost.Showback
	p := newPlot(fmt.Sprintf("Cost by team (idle shared by %s)", sb.IdleDistribution), "", "USD")
	names := make([]string, len(sb.Teams))
	paid, idle := make(plotter.Values, len(sb.Teams)), make(plotter.Values, len(sb.Teams))
	top := 0.0
	for i, t := range sb.Teams {
		names[i], paid[i], idle[i] = t.Team, t.Allocated, t.IdleShare
		top = math.Max(top, t.Total)
	}
	width := vg.Points(math.Min(70, 360/float64(len(sb.Teams))))
	a, err := plotter.NewBarChart(paid, width)
	if err != nil {
		return nil, err
	}
	a.Color, a.LineStyle.Width = PlotColor(0), 0
	b, err := plotter.NewBarChart(idle, width)
	if err != nil {
		return nil, err
	}
	b.Color, b.LineStyle.Width = PlotColor(7), 0
	b.StackOn(a)
	p.Add(a, b)
	p.Legend.Add("its pods paid", a)
	p.Legend.Add("share of idle", b)
	p.Legend.Left = false
	p.NominalX(names...)
	rotateNames(p, len(names))
	p.X.Min, p.X.Max = -0.75, float64(len(names))-0.25
	p.Y.Min, p.Y.Max = 0, math.Max(1, top*1.35)
	p.Y.Tick.Marker = UnitTicks{Unit: UnitUSD}
	return p, nil
}

// rotateNames slants category names when there are several, so long
// NodePool or team names do not run into each other.
func rotateNames(p *plot.Plot, n int) {
	if n < 3 {
		return
	}
	p.X.Tick.Label.Rotation = math.Pi / 7
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YTop
}

// waterfallPlot draws the steps from the all-on-demand bill to a spot
// bill: totals in blue, savings in green, added cost in red, each change
// floating from where the previous step ended; the parts of the spot bill
// (work lost, checkpoint writes) stand beside it from zero.
func waterfallPlot(title string, ws []WaterfallStep) (*plot.Plot, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	n := len(ws)
	base, totals, down, up, parts := make(plotter.Values, n), make(plotter.Values, n), make(plotter.Values, n), make(plotter.Values, n), make(plotter.Values, n)
	names := make([]string, n)
	run, top := 0.0, 0.0
	short := map[string]string{
		"all on-demand bill": "all on-demand", "node-hours bought differ (at on-demand prices)": "node-hours differ",
		"spot discount": "spot discount", "spot bill": "spot bill",
		"of which work lost to interruptions": "of which: lost work", "of which checkpoint writes": "of which: checkpoints",
	}
	last := 0 // the spot bill: the last step that is not a part of it
	for i, s := range ws {
		if !s.Of {
			last = i
		}
	}
	for i, s := range ws {
		names[i] = s.Name
		if v, ok := short[s.Name]; ok {
			names[i] = v
		}
		switch {
		case s.Of:
			parts[i] = s.Delta
		case i == 0 || i == last:
			totals[i] = s.Total
			run = s.Total
		case s.Delta < 0:
			base[i], down[i] = run+s.Delta, -s.Delta
			run += s.Delta
		default:
			base[i], up[i] = run, s.Delta
			run += s.Delta
		}
		top = math.Max(top, math.Max(run, s.Total))
	}
	p := newPlot(title, "", "USD")
	width := vg.Points(math.Min(60, 420/float64(n)))
	var below *plotter.BarChart
	for k, v := range []struct {
		vals  plotter.Values
		color int
		name  string
	}{{base, -1, ""}, {totals, 0, "bill"}, {down, 2, "saves"}, {up, 3, "adds"}, {parts, 7, "part of the spot bill"}} {
		b, err := plotter.NewBarChart(v.vals, width)
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = 0
		if v.color < 0 {
			b.Color = color.Transparent
		} else {
			b.Color = PlotColor(v.color)
		}
		if below != nil && k < 4 {
			b.StackOn(below)
		}
		if k < 4 {
			below = b
		}
		p.Add(b)
		if v.name != "" {
			p.Legend.Add(v.name, b)
		}
	}
	p.Legend.Left = false
	p.NominalX(names...)
	rotateNames(p, n)
	p.X.Min, p.X.Max = -0.75, float64(n)-0.25
	p.Y.Min, p.Y.Max = 0, math.Max(1, top*1.3)
	p.Y.Tick.Marker = UnitTicks{Unit: UnitUSD}
	return p, nil
}

// UnitTicks labels a linear axis of figures of a unit (validate's names)
// at round values in the unit the labels are written in, every label
// through the one formatter of that unit (UnitFormat over the labels):
// $15,000 and 4.00h, never 1.5e+04 or 14400.
type UnitTicks struct{ Unit string }

// Ticks are the axis's ticks between lo and hi.
func (u UnitTicks) Ticks(lo, hi float64) []plot.Tick {
	vals := unitTicks(u.Unit, svgAxis{lo: lo, hi: hi})
	f := UnitFormat(u.Unit, vals...)
	out := make([]plot.Tick, 0, len(vals))
	for _, v := range vals {
		if v >= lo && v <= hi {
			out = append(out, plot.Tick{Value: v, Label: f(v)})
		}
	}
	return out
}
