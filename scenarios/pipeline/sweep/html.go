package sweep

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"gpuplan.dev/gpuplan/reports"
)

// maxSensitivityPlots bounds the sensitivity charts drawn (parameters x
// metrics).
const maxSensitivityPlots = 24

// HigherIsBetter says whether a larger value of the metric is the better
// one (completions, allocation); for the rest (cost, waits) less is better.
func HigherIsBetter(name string) bool {
	base := name
	if i := strings.IndexByte(base, '{'); i >= 0 {
		base = base[:i]
	}
	return base == "completed" || base == "allocation" || strings.HasSuffix(base, ".completed") ||
		base == "gpuHours.allocated" || strings.HasSuffix(base, ".gpuHours")
}

// Pareto is the indices of the points not dominated in (x, y), both
// minimised unless the flags say maximise, sorted by x.
func Pareto(x, y []float64, xMax, yMax bool) []int {
	sx, sy := 1.0, 1.0
	if xMax {
		sx = -1
	}
	if yMax {
		sy = -1
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if x[idx[a]] != x[idx[b]] {
			return sx*x[idx[a]] < sx*x[idx[b]]
		}
		return sy*y[idx[a]] < sy*y[idx[b]]
	})
	var front []int
	best := math.Inf(1)
	for _, i := range idx {
		if sy*y[i] < best {
			best = sy * y[i]
			front = append(front, i)
		}
	}
	return front
}

type htmlChart struct {
	Title string
	SVG   template.HTML
}

var sweepPage = template.Must(template.New("sweep").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sweep {{.T.Sweep}}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f4f4f4}svg{max-width:100%;height:auto}</style>
</head><body>
<h1>Sweep {{.T.Sweep}}</h1>
<p>{{len .T.Rows}} points, {{len .T.Seeds}} seeds each (seeds {{.SeedText}}); digest {{.T.Digest}}. Each figure is the mean over the seeds with its 95% interval (Student's t).</p>
{{range .Charts}}<h2>{{.Title}}</h2>
{{.SVG}}
{{end}}<h2>Table</h2>
<table><tr><th>#</th>{{range .T.Parameters}}<th>{{.}}</th>{{end}}{{range .T.Metrics}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
</body></html>
`))

// HTML is the sweep's report: the Pareto front of the first metric
// against each other one, the sensitivity of each metric to each
// parameter (the metric's mean over the points with that value), and the
// table.
func (t *Table) HTML() ([]byte, error) {
	var charts []htmlChart
	add := func(p *plot.Plot) error {
		svg, err := reports.SVG(p)
		if err != nil {
			return err
		}
		// The XML prolog is not HTML.
		s := string(svg)
		if i := strings.Index(s, "<svg"); i > 0 {
			s = s[i:]
		}
		charts = append(charts, htmlChart{Title: p.Title.Text, SVG: template.HTML(s)})
		return nil
	}
	if len(t.Metrics) > 1 && len(t.Rows) > 1 {
		for m := 1; m < len(t.Metrics); m++ {
			p, err := t.paretoPlot(0, m)
			if err != nil {
				return nil, err
			}
			if err := add(p); err != nil {
				return nil, err
			}
		}
	}
	n := 0
	for j := range t.Parameters {
		for m := range t.Metrics {
			if n >= maxSensitivityPlots {
				break
			}
			p, ok, err := t.sensitivityPlot(j, m)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if err := add(p); err != nil {
				return nil, err
			}
			n++
		}
	}
	// Each metric's column in its unit, one formatter over the column
	// (never 1.505e+04 dollars or raw seconds), intervals clipped to the
	// values the metric can take (no negative wait).
	units := make([]string, len(t.Metrics))
	fmts := make([]func(float64) string, len(t.Metrics))
	for m, name := range t.Metrics {
		units[m] = metricUnit(name)
		var xs []float64
		for _, r := range t.Rows {
			lo, hi := reports.UnitClip(units[m], r.Stats[m].Lo, r.Stats[m].Hi)
			xs = append(xs, r.Stats[m].Mean, lo, hi)
		}
		fmts[m] = reports.UnitFormat(units[m], xs...)
	}
	var rows [][]string
	for _, r := range t.Rows {
		row := []string{fmt.Sprint(r.Index)}
		for _, v := range r.Values {
			row = append(row, FormatValue(v))
		}
		for m, s := range r.Stats {
			f := fmts[m]
			lo, hi := reports.UnitClip(units[m], s.Lo, s.Hi)
			if lo == hi {
				row = append(row, f(s.Mean))
			} else {
				row = append(row, fmt.Sprintf("%s [%s, %s]", f(s.Mean), f(lo), f(hi)))
			}
		}
		rows = append(rows, row)
	}
	var seeds []string
	for _, s := range t.Seeds {
		seeds = append(seeds, fmt.Sprint(s))
	}
	var b bytes.Buffer
	err := sweepPage.Execute(&b, struct {
		T        *Table
		Charts   []htmlChart
		Rows     [][]string
		SeedText string
	}{t, charts, rows, strings.Join(seeds, ", ")})
	return b.Bytes(), err
}

func (t *Table) paretoPlot(mx, my int) (*plot.Plot, error) {
	xn, yn := t.Metrics[mx], t.Metrics[my]
	p := reports.NewPlot(fmt.Sprintf("Pareto front: %s against %s", yn, xn), xn, yn)
	p.X.Tick.Marker = reports.UnitTicks{Unit: metricUnit(xn)}
	p.Y.Tick.Marker = reports.UnitTicks{Unit: metricUnit(yn)}
	var all plotter.XYs
	x, y := make([]float64, len(t.Rows)), make([]float64, len(t.Rows))
	for i, r := range t.Rows {
		x[i], y[i] = r.Stats[mx].Mean, r.Stats[my].Mean
		all = append(all, plotter.XY{X: x[i], Y: y[i]})
	}
	sc, err := plotter.NewScatter(all)
	if err != nil {
		return nil, err
	}
	sc.Color = reports.PlotColor(7)
	p.Add(sc)
	p.Legend.Add("point", sc)
	var front plotter.XYs
	for _, i := range Pareto(x, y, HigherIsBetter(xn), HigherIsBetter(yn)) {
		front = append(front, all[i])
	}
	l, err := plotter.NewLine(front)
	if err != nil {
		return nil, err
	}
	l.Color = reports.PlotColor(3)
	l.Width = vg.Points(1.5)
	p.Add(l)
	p.Legend.Add("Pareto front", l)
	return p, nil
}

// sensitivityPlot is metric m's mean over the points with each value of
// parameter j (numeric values on a numeric axis, others in order).
func (t *Table) sensitivityPlot(j, m int) (*plot.Plot, bool, error) {
	type acc struct {
		sum float64
		n   int
		x   float64
		lbl string
	}
	byVal := map[string]*acc{}
	var order []string
	numeric := true
	for _, r := range t.Rows {
		k := FormatValue(r.Values[j])
		a, ok := byVal[k]
		if !ok {
			a = &acc{lbl: k}
			if f, isNum := r.Values[j].(float64); isNum {
				a.x = f
			} else {
				numeric = false
			}
			byVal[k] = a
			order = append(order, k)
		}
		a.sum += r.Stats[m].Mean
		a.n++
	}
	if len(order) < 2 {
		return nil, false, nil
	}
	if numeric {
		sort.SliceStable(order, func(a, b int) bool { return byVal[order[a]].x < byVal[order[b]].x })
	}
	p := reports.NewPlot(fmt.Sprintf("%s against %s (mean over the other settings)", t.Metrics[m], t.Parameters[j]), t.Parameters[j], t.Metrics[m])
	p.Y.Tick.Marker = reports.UnitTicks{Unit: metricUnit(t.Metrics[m])}
	var xy plotter.XYs
	for i, k := range order {
		a := byVal[k]
		x := a.x
		if !numeric {
			x = float64(i)
		}
		xy = append(xy, plotter.XY{X: x, Y: a.sum / float64(a.n)})
	}
	lp, pts, err := plotter.NewLinePoints(xy)
	if err != nil {
		return nil, false, err
	}
	lp.Color, pts.Color = reports.PlotColor(0), reports.PlotColor(0)
	p.Add(lp, pts)
	p.Legend.Top = false
	if !numeric {
		p.NominalX(order...)
	}
	return p, true, nil
}

// metricUnit is the unit of a metric the table keeps (a plain number if
// it does not parse).
func metricUnit(name string) string {
	if mt, err := ParseMetric(name); err == nil {
		return mt.Unit().String()
	}
	return reports.UnitNumber
}
