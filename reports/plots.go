package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"gpuplan.dev/gpuplan/sim"
)

// Plot is one chart, drawn as PNG and SVG.
type Plot struct {
	// Name is the file stem (allocation, queue, wait-cdf, jct-cdf, cost).
	Name, Title string
	PNG, SVG    []byte
}

// Palette is the series colours, in order (the Tableau 10 colours): the
// first series of every chart is Palette[0].
var palette = [...]color.NRGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

// PlotColor is the colour of series i.
func PlotColor(i int) color.NRGBA { return palette[i%len(palette)] }

// Plot sizes.
const (
	plotWidth  = 7.5 * vg.Inch
	plotHeight = 3.6 * vg.Inch
	pngDPI     = 144
	// cdfPoints is how many quantiles a CDF is drawn through.
	cdfPoints = 400
	// maxQueuesPlotted: more queues than this are drawn as the largest
	// ones and "all".
	maxQueuesPlotted = 8
)

// Plots draws the run's charts: GPUs allocated per pool over time (with
// each pool's supply dashed), queue length over time, wait and completion
// time CDFs per queue, and (with prices) the cost breakdown per pool.
func Plots(res *sim.Result, s *Summary) ([]Plot, error) {
	var out []Plot
	var addSized func(name, title string, p drawer, height vg.Length) error
	add := func(name, title string, p drawer) error { return addSized(name, title, p, plotHeight) }
	addSized = func(name, title string, p drawer, height vg.Length) (err error) {
		// gonum/plot panics on some degenerate axes; a bad chart must not
		// take the run with it unexplained.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("plot %s: %v", name, r)
			}
		}()
		pl := Plot{Name: name, Title: title}
		// PNG at 144 dpi, sharp on high-density screens.
		img := vgimg.NewWith(vgimg.UseWH(plotWidth, height), vgimg.UseDPI(pngDPI))
		p.Draw(draw.New(img))
		var b bytes.Buffer
		if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		pl.PNG = b.Bytes()
		w, err := draw.NewFormattedCanvas(plotWidth, height, "svg")
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		p.Draw(draw.New(w))
		var sb bytes.Buffer
		if _, err := w.WriteTo(&sb); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		pl.SVG = sb.Bytes()
		out = append(out, pl)
		return nil
	}
	if len(res.Timeline.PendingJobMs) > 0 {
		p, err := allocationPlot(res)
		if err != nil {
			return nil, err
		}
		if err := add("allocation", "GPUs allocated per pool", p); err != nil {
			return nil, err
		}
		if len(res.Jobs) > 0 || len(res.Services) == 0 {
			if p, err = queuePlot(res); err != nil {
				return nil, err
			}
			if err := add("queue", "Jobs pending and running", p); err != nil {
				return nil, err
			}
		}
	}
	for _, which := range []string{"wait", "jct"} {
		p, err := cdfPlot(res, which)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		title := "Queue wait CDF"
		if which == "jct" {
			title = "Completion time CDF"
		}
		if err := add(which+"-cdf", title, p); err != nil {
			return nil, err
		}
	}
	for _, extra := range []struct {
		name, title string
		make        func() (*plot.Plot, error)
	}{
		{"compare", "What-if variants: cost against p95 wait", func() (*plot.Plot, error) { return comparePlot(s) }},
		{"cost-time", "Cost so far per pool", func() (*plot.Plot, error) { return costTimePlot(res, s) }},
		{"team-cost", "Cost by team", func() (*plot.Plot, error) { return teamCostPlot(s) }},
	} {
		p, err := extra.make()
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		if err := add(extra.name, extra.title, p); err != nil {
			return nil, err
		}
	}
	type waterfall struct {
		name string
		ws   []WaterfallStep
	}
	var waterfalls []waterfall
	if sc := s.SpotVsOnDemand; sc != nil && len(sc.Waterfall) > 0 {
		waterfalls = append(waterfalls, waterfall{"as given", sc.Waterfall})
	}
	for _, c := range s.SpotSensitivity {
		if len(c.Waterfall) > 0 && !(c.Run == "as given" && len(waterfalls) > 0) {
			waterfalls = append(waterfalls, waterfall{c.Run, c.Waterfall})
		}
	}
	for _, w := range waterfalls {
		title := "From the all-on-demand bill to the spot bill: " + w.name
		p, err := waterfallPlot(title, w.ws)
		if err != nil {
			return nil, err
		}
		if err := add("spot-waterfall-"+fileStem(w.name), title, p); err != nil {
			return nil, err
		}
	}
	for k := range res.Services {
		if k == maxServicesPlotted {
			break
		}
		name := "service-" + fileStem(res.Services[k].Name)
		st, err := serviceLoadPlot(res, k)
		if err != nil {
			return nil, err
		}
		if st != nil {
			if err := addSized(name, res.Services[k].Name+": replicas against load", st, plotHeight*3/2); err != nil {
				return nil, err
			}
		}
		lp, err := serviceLatencyPlot(res, k)
		if err != nil {
			return nil, err
		}
		if lp != nil {
			if err := add(name+"-latency", res.Services[k].Name+": p95 latency against the SLO", lp); err != nil {
				return nil, err
			}
		}
	}
	if s.Cost != nil && len(s.Cost.ByPool) > 0 {
		p, err := costPlot(s.Cost)
		if err != nil {
			return nil, err
		}
		if err := add("cost", "Cost by pool", p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// drawer is a chart: one plot or several stacked.
type drawer interface{ Draw(draw.Canvas) }

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

func line(xy plotter.XYs, c color.Color, dashed bool) (*plotter.Line, error) {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Width = vg.Points(1)
	}
	return l, nil
}

// steps turns per-bucket means into a step line over hours (div 1) or
// days (div 24).
func steps(tl *sim.Timeline, end sim.Time, div float64, v func(i int) float64) plotter.XYs {
	var xy plotter.XYs
	for i := range tl.PendingJobMs {
		w := tl.Width(i, end)
		if w <= 0 {
			continue
		}
		lo := float64(sim.Time(i)*tl.Interval) / 3.6e6 / div
		hi := lo + float64(w)/3.6e6/div
		y := v(i)
		xy = append(xy, plotter.XY{X: lo, Y: y}, plotter.XY{X: hi, Y: y})
	}
	return xy
}

func allocationPlot(res *sim.Result) (*plot.Plot, error) {
	tl := &res.Timeline
	div, xl := timeAxis(res.End)
	p := newPlot("GPUs allocated per pool (dashed: GPUs present)", xl, "GPUs")
	top := 0.0
	for pi, pool := range res.Pools {
		c := PlotColor(pi)
		alloc := steps(tl, res.End, div, func(i int) float64 {
			return float64(tl.Allocated[pi][i]) / 1000 / float64(tl.Width(i, res.End))
		})
		l, err := line(alloc, c, false)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(pool.Spec.Name, l)
		for _, q := range alloc {
			top = math.Max(top, q.Y)
		}
		if tl.Supplied != nil {
			sup := steps(tl, res.End, div, func(i int) float64 {
				return float64(tl.Supplied[pi][i]) / 1000 / float64(tl.Width(i, res.End))
			})
			for _, q := range sup {
				top = math.Max(top, q.Y)
			}
			d, err := line(sup, c, true)
			if err != nil {
				return nil, err
			}
			p.Add(d)
		}
	}
	// Head room for the legend.
	p.Y.Min, p.Y.Max = 0, math.Max(1, top*(1.15+0.06*float64(len(res.Pools))))
	return p, nil
}

func queuePlot(res *sim.Result) (*plot.Plot, error) {
	tl := &res.Timeline
	div, xl := timeAxis(res.End)
	p := newPlot("Jobs pending and running (interval means)", xl, "jobs")
	top := 0.0
	for k, s := range []struct {
		name string
		v    []int64
	}{{"pending", tl.PendingJobMs}, {"running", tl.RunningJobMs}} {
		xy := steps(tl, res.End, div, func(i int) float64 { return float64(s.v[i]) / float64(tl.Width(i, res.End)) })
		l, err := line(xy, PlotColor(k), false)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(s.name, l)
		for _, q := range xy {
			top = math.Max(top, q.Y)
		}
	}
	p.Y.Min, p.Y.Max = 0, math.Max(1, top*1.25)
	return p, nil
}

// cdfPlot draws the empirical CDF of waits (started jobs) or completion
// times (completed jobs) per queue on a log time axis; values under a
// second are drawn at one second. nil when no job qualifies.
func cdfPlot(res *sim.Result, which string) (*plot.Plot, error) {
	byQueue := map[string]*cdfSeries{}
	var all cdfSeries
	for i := range res.Jobs {
		j := &res.Jobs[i]
		var v sim.Time
		if which == "wait" {
			v = j.Wait()
		} else {
			if j.Outcome != sim.Completed {
				continue
			}
			v = j.JCT()
		}
		if v < 0 {
			continue
		}
		x := math.Max(float64(v)/1000, 1)
		q := byQueue[j.Queue]
		if q == nil {
			q = &cdfSeries{}
			byQueue[j.Queue] = q
		}
		q.add(x)
		all.add(x)
	}
	if all.n == 0 {
		return nil, nil
	}
	queues := make([]string, 0, len(byQueue))
	for q := range byQueue {
		queues = append(queues, q)
	}
	// The largest queues first, by name among equals.
	sort.Slice(queues, func(a, b int) bool {
		na, nb := byQueue[queues[a]].n, byQueue[queues[b]].n
		if na != nb {
			return na > nb
		}
		return queues[a] < queues[b]
	})
	if len(queues) > maxQueuesPlotted {
		queues = queues[:maxQueuesPlotted]
	}
	title, xl := "Queue wait, started jobs", "wait (log scale; under 1 s drawn at 1 s)"
	if which == "jct" {
		title, xl = "Completion time, completed jobs", "submit to end (log scale)"
	}
	p := newPlot(title, xl, "fraction of jobs")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = humanTicks{}
	// At least a decade, so the log axis has ticks.
	p.X.Min, p.X.Max = all.lo, math.Max(all.hi, all.lo*10)
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	series := []*cdfSeries{&all}
	names := []string{"all jobs"}
	if len(byQueue) > 1 {
		for _, q := range queues {
			series = append(series, byQueue[q])
			names = append(names, q)
		}
	}
	for k, v := range series {
		l, err := line(v.points(), PlotColor(k), false)
		if err != nil {
			return nil, err
		}
		if k == 0 && len(series) > 1 {
			l.Color = color.Black
		}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d)", names[k], v.n), l)
	}
	return p, nil
}

// cdf is the empirical CDF of sorted x as a step line through at most
// cdfPoints+1 quantiles.
func cdf(x []float64) plotter.XYs {
	n := len(x)
	var xy plotter.XYs
	xy = append(xy, plotter.XY{X: x[0], Y: 0})
	stride := 1
	if n > cdfPoints {
		stride = n / cdfPoints
	}
	for i := 0; i < n; i += stride {
		// The fraction of values <= x[i] counting ties.
		k := sort.Search(n, func(j int) bool { return x[j] > x[i] })
		xy = append(xy, plotter.XY{X: x[i], Y: float64(k) / float64(n)})
	}
	xy = append(xy, plotter.XY{X: x[n-1], Y: 1})
	return xy
}

func costPlot(c *CostSummary) (*plot.Plot, error) {
	p := newPlot("Cost by pool (USD)", "", "USD")
	names := make([]string, len(c.ByPool))
	parts := []struct {
		name string
		v    func(l CostLine) float64
	}{
		{"allocated (useful)", func(l CostLine) float64 { return math.Max(l.Allocated-l.LostCost, 0) }},
		{"allocated, lost to disruptions", func(l CostLine) float64 { return l.LostCost }},
		{"idle GPU", func(l CostLine) float64 { return l.IdleGPU }},
		{"idle CPU and memory", func(l CostLine) float64 { return math.Max(l.Idle-l.IdleGPU, 0) }},
	}
	var below *plotter.BarChart
	width := vg.Points(math.Min(90, 360/float64(len(c.ByPool))))
	top := 0.0
	for _, l := range c.ByPool {
		top = math.Max(top, l.Cost)
	}
	for k, part := range parts {
		vals := make(plotter.Values, len(c.ByPool))
		for i, l := range c.ByPool {
			vals[i] = part.v(l)
			names[i] = l.Name
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		b.Color = PlotColor(k)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(part.name, b)
	}
	p.NominalX(names...)
	rotateNames(p, len(names))
	p.Legend.Left = false
	p.X.Min, p.X.Max = -0.75, float64(len(c.ByPool))-0.25
	p.Y.Min, p.Y.Max = 0, math.Max(1, top*1.4)
	return p, nil
}

// fileStem makes a run name safe as part of a file name.
func fileStem(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	return string(b)
}
