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
	for _, c := range chartSpecs(res, s) {
		p, err := c.render()
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, *p)
		}
	}
	return out, nil
}

// chartSpec is one chart a folder may hold, not yet built: charts are
// built and drawn independently of each other, so that a folder's charts
// (and the charts of several folders) can be drawn at once.
type chartSpec struct {
	name, title string
	height      vg.Length
	// cost is a rough estimate of the CPU time (ns) it takes to build and
	// draw the chart, so that a pool can start the largest first.
	cost int64
	// make builds the chart; nil when there is nothing to draw.
	make func() (drawer, error)
}

// Rough costs of the pieces of a folder, in nanoseconds of CPU on one
// core, measured on the shipped examples and a million-job replay: only
// the order in which a pool starts them depends on them.
const (
	costChart     = 50_000_000 // drawing one chart as PNG and SVG
	costCDFJob    = 150        // one job's value in a CDF chart
	costStepPt    = 20_000     // one step of a step chart
	costJobRow    = 800        // one row of jobs.csv
	costFOCUSRow  = 1_500      // one job's charges in focus.csv
	costTLRow     = 5_000      // one interval of timeline.csv and the metric series
	costMetricJob = 300        // one job in the metric series' per-queue counts
)

// plotOf is p as a drawer, nil when p is nil (a nil *plot.Plot in an
// interface is not a nil interface).
func plotOf(p *plot.Plot, err error) (drawer, error) {
	if p == nil || err != nil {
		return nil, err
	}
	return p, nil
}

// chartSpecs lists the run's charts in the order the report shows them.
func chartSpecs(res *sim.Result, s *Summary) []chartSpec {
	var out []chartSpec
	add := func(name, title string, cost int64, make func() (drawer, error)) {
		out = append(out, chartSpec{name: name, title: title, height: plotHeight, cost: costChart + cost, make: make})
	}
	if n := int64(len(res.Timeline.PendingJobMs)); n > 0 {
		n = min(n, maxSteps)
		add("allocation", "GPUs allocated per pool", n*costStepPt*int64(len(res.Pools)), func() (drawer, error) { return plotOf(allocationPlot(res)) })
		if res.NumJobs() > 0 || len(res.Services) == 0 {
			add("queue", "Jobs pending and running", n*costStepPt, func() (drawer, error) { return plotOf(queuePlot(res)) })
		}
	}
	for _, which := range []string{"wait", "jct"} {
		title := "Queue wait CDF"
		if which == "jct" {
			title = "Completion time CDF"
		}
		add(which+"-cdf", title, int64(res.NumJobs())*costCDFJob, func() (drawer, error) { return plotOf(cdfPlot(res, which)) })
	}
	add("compare", "What-if variants: cost against p95 wait", 0, func() (drawer, error) { return plotOf(comparePlot(s)) })
	add("cost-time", "Cost so far per pool", 0, func() (drawer, error) { return plotOf(costTimePlot(res, s)) })
	add("team-cost", "Cost by team", 0, func() (drawer, error) { return plotOf(teamCostPlot(s)) })
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
		add("spot-waterfall-"+fileStem(w.name), title, 0, func() (drawer, error) { return plotOf(waterfallPlot(title, w.ws)) })
	}
	for k := range res.Services {
		if k == maxServicesPlotted {
			break
		}
		name := "service-" + fileStem(res.Services[k].Name)
		steps := int64(len(res.Services[k].Timeline)) * costStepPt
		add(name, res.Services[k].Name+": replicas against load", steps, func() (drawer, error) {
			st, err := serviceLoadPlot(res, k)
			if st == nil || err != nil {
				return nil, err
			}
			return st, nil
		})
		out[len(out)-1].height = plotHeight * 3 / 2
		add(name+"-latency", res.Services[k].Name+": p95 latency against the SLO", steps, func() (drawer, error) { return plotOf(serviceLatencyPlot(res, k)) })
	}
	if s.Cost != nil && len(s.Cost.ByPool) > 0 {
		add("cost", "Cost by pool", 0, func() (drawer, error) { return plotOf(costPlot(s.Cost)) })
	}
	return out
}

// render builds the chart and draws it as PNG and SVG; nil when there is
// nothing to draw.
func (c *chartSpec) render() (pl *Plot, err error) {
	p, err := c.make()
	if err != nil || p == nil {
		return nil, err
	}
	// gonum/plot panics on some degenerate axes; a bad chart must not
	// take the run with it unexplained.
	defer func() {
		if r := recover(); r != nil {
			pl, err = nil, fmt.Errorf("plot %s: %v", c.name, r)
		}
	}()
	pl = &Plot{Name: c.name, Title: c.title}
	// PNG at 144 dpi, sharp on high-density screens.
	img := vgimg.NewWith(vgimg.UseWH(plotWidth, c.height), vgimg.UseDPI(pngDPI))
	p.Draw(draw.New(img))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("plot %s: %w", c.name, err)
	}
	pl.PNG = b.Bytes()
	w, err := draw.NewFormattedCanvas(plotWidth, c.height, "svg")
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", c.name, err)
	}
	p.Draw(draw.New(w))
	var sb bytes.Buffer
	if _, err := w.WriteTo(&sb); err != nil {
		return nil, fmt.Errorf("plot %s: %w", c.name, err)
	}
	pl.SVG = sb.Bytes()
	return pl, nil
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

// maxSteps is the most steps a step line draws. A longer timeline is
// drawn at an interval k times its own (the smallest k that fits), each
// step the mean of its k intervals weighted by their widths: what a
// timeline k times as coarse holds. A chart 1,080 pixels wide shows no
// more, and the rasteriser's time grows faster than the steps (two charts
// of 4,000 noisy hourly intervals took 39 s to draw, of 1,000 0.85 s).
const maxSteps = 480

// steps turns per-bucket means into a step line over hours (div 1) or
// days (div 24), of at most maxSteps steps.
func steps(tl *sim.Timeline, end sim.Time, div float64, v func(i int) float64) plotter.XYs {
	n := 0 // the intervals the run covers: a prefix of the timeline
	for n < len(tl.PendingJobMs) && tl.Width(n, end) > 0 {
		n++
	}
	var xy plotter.XYs
	if n <= maxSteps {
		for i := range n {
			lo := float64(sim.Time(i)*tl.Interval) / 3.6e6 / div
			hi := lo + float64(tl.Width(i, end))/3.6e6/div
			y := v(i)
			xy = append(xy, plotter.XY{X: lo, Y: y}, plotter.XY{X: hi, Y: y})
		}
		return xy
	}
	k := (n + maxSteps - 1) / maxSteps
	for g := 0; g < n; g += k {
		var sum, width float64
		for i := g; i < min(g+k, n); i++ {
			w := float64(tl.Width(i, end))
			sum += v(i) * w
			width += w
		}
		lo := float64(sim.Time(g)*tl.Interval) / 3.6e6 / div
		hi := lo + width/3.6e6/div
		xy = append(xy, plotter.XY{X: lo, Y: sum / width}, plotter.XY{X: hi, Y: sum / width})
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
	for _, j := range res.Records() {
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
	p.Y.Tick.Marker = UnitTicks{Unit: UnitUSD}
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
