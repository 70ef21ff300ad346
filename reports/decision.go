package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// FileDecision is the decision page `gpuplan sweep` and `gpuplan recommend`
// write into their output folder.
const FileDecision = "decision.html"

// Units of a decision's figures, named as validate names them in JSON.
const (
	UnitUSD          = "usd"
	UnitSeconds      = "seconds"
	UnitRatio        = "ratio"
	UnitMilliseconds = "milliseconds"
	UnitNumber       = "number"
)

// DecisionMetric is a figure every point has: its name, its unit (one of
// the Unit constants) and which way is better.
type DecisionMetric struct {
	Name           string
	Unit           string
	HigherIsBetter bool
}

// DecisionConstraint is "Metrics[Metric] <= Bound" (AtMost) or ">= Bound".
type DecisionConstraint struct {
	Text   string
	Metric int
	AtMost bool
	Bound  float64
}

// Interval is a mean with its 95% confidence interval.
type Interval struct{ Mean, Lo, Hi float64 }

// DecisionPoint is one setting run: its index (the anchor its row
// carries), each parameter's value as written, each metric's mean and
// interval over Seeds seeds, and whether it meets every constraint.
type DecisionPoint struct {
	Index    int
	Settings []string
	Stats    []Interval
	Seeds    int
	Feasible bool
}

// Decision is what a sweep or a search found, as the decision page reads
// it: Metrics[0] is the objective; Winner and RunnerUp are positions in
// Points (-1: none); Pareto the positions on the front of the objective
// against Metrics[ParetoY] (ParetoY -1: no front), in the order drawn.
type Decision struct {
	// Command is "sweep" or "recommend"; Name the sweep's or scenario's.
	Command, Name string
	Parameters    []string
	Metrics       []DecisionMetric
	Constraints   []DecisionConstraint
	Points        []DecisionPoint
	Winner        int
	RunnerUp      int
	Pareto        []int
	ParetoY       int
	// Method says how the points were run and judged, in a sentence or two.
	Method string
}

// The figures of a column: its formatter over every value the page shows
// in it, so that one column has one unit and one precision.
type column struct {
	f    func(float64) string
	unit string
}

func (d *Decision) column(m int) column {
	var xs []float64
	for _, p := range d.Points {
		st := d.clip(m, p.Stats[m])
		xs = append(xs, st.Mean, st.Lo, st.Hi)
	}
	for _, c := range d.Constraints {
		if c.Metric == m {
			xs = append(xs, c.Bound)
		}
	}
	return unitColumn(d.Metrics[m].Unit, xs)
}

func unitColumn(unit string, xs []float64) column {
	switch unit {
	case UnitUSD:
		return column{MoneyFormat(xs...), "USD"}
	case UnitSeconds:
		u := DurationUnit(xs...)
		return column{DurationFormat(xs...), map[string]string{"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[u]}
	case UnitRatio:
		return column{func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }, "%"}
	case UnitMilliseconds:
		// The cells carry their unit (ms, s or longer).
		return column{latencyFormat(xs...), ""}
	}
	return column{NumberFormat(xs...), ""}
}

// clip keeps an interval inside the values the metric can take: no
// negative dollars, durations or shares, no share above 100% (Student's t
// knows nothing of bounds).
func (d *Decision) clip(m int, st Interval) Interval {
	st.Lo, st.Hi = UnitClip(d.Metrics[m].Unit, st.Lo, st.Hi)
	return st
}

func (c column) interval(st Interval) string {
	if st.Lo == st.Hi {
		return c.f(st.Mean)
	}
	return c.f(st.Mean) + " [" + c.f(st.Lo) + ", " + c.f(st.Hi) + "]"
}

// margin is how far x is on the right side of the constraint (negative:
// the wrong side), with its interval.
func (c DecisionConstraint) margin(st Interval) Interval {
	if c.AtMost {
		return Interval{c.Bound - st.Mean, c.Bound - st.Hi, c.Bound - st.Lo}
	}
	return Interval{st.Mean - c.Bound, st.Lo - c.Bound, st.Hi - c.Bound}
}

// marginText writes a margin in the metric's unit (percentage points for
// a share).
func marginText(unit string, col column, m Interval) string {
	f := col.f
	if unit == UnitRatio {
		f = func(x float64) string { return fmt.Sprintf("%.1f pp", 100*x) }
	}
	if m.Lo == m.Hi {
		return f(m.Mean)
	}
	return f(m.Mean) + " [" + f(m.Lo) + ", " + f(m.Hi) + "]"
}

// better says whether point a beats point b on the objective (ties: the
// lower index).
func (d *Decision) better(a, b DecisionPoint) bool {
	x, y := a.Stats[0].Mean, b.Stats[0].Mean
	if d.Metrics[0].HigherIsBetter {
		x, y = -x, -y
	}
	if x != y {
		return x < y
	}
	return a.Index < b.Index
}

// Missed is the first constraint p's mean misses, with how far, or ok
// false when it meets them all.
func (d *Decision) missed(p DecisionPoint) (DecisionConstraint, Interval, bool) {
	for _, c := range d.Constraints {
		m := c.margin(p.Stats[c.Metric])
		if m.Mean < 0 {
			return c, m, true
		}
	}
	return DecisionConstraint{}, Interval{}, false
}

type decisionRow struct {
	Label, Value, Bound, Margin, Verdict string
	Short                                bool
}

type decisionLink struct {
	Index int
	// Indices are the points the line stands for (one, or several with
	// the same figures).
	Indices  []int
	points   []DecisionPoint
	Settings string
	Figure   string
	Why      string
}

// maxRejectedShown bounds the lines of settings better than the answer
// but rejected.
const maxRejectedShown = 5

// settingsOf writes the settings of points: name = value where they
// agree, name = a | b | c where they differ.
func (d *Decision) settingsOf(ps []DecisionPoint) string {
	var s []string
	for j, name := range d.Parameters {
		var vals []string
		for _, p := range ps {
			if !slices.Contains(vals, p.Settings[j]) {
				vals = append(vals, p.Settings[j])
			}
		}
		s = append(s, name+" = "+strings.Join(vals, " | "))
	}
	return strings.Join(s, ", ")
}

type sensitivityRow struct {
	Index                 int
	Value, Figure, Change string
	Status                string
	Answer                bool
}

type sensitivity struct {
	Parameter string
	Rows      []sensitivityRow
}

type pointRow struct {
	Index  int
	Class  string
	Cells  []string
	Status string
}

type decisionPage struct {
	D               *Decision
	Title           string
	Objective       string
	ObjectiveUnit   string
	Answer          *decisionLink
	NoAnswer        string
	Margins         []decisionRow
	RunnerUp        *decisionLink
	Rejected        []decisionLink
	Plot            template.HTML
	PlotCaption     string
	Sensitivity     []sensitivity
	SensitivityNote string
	Header          []string
	Rows            []pointRow
	Clipped         bool
}

// HTML writes the decision page: one self-contained file that leads with
// the answer (the setting, its objective, its margin against each
// constraint with 95% intervals, the runner-up and why it lost, the
// better settings rejected and the constraint each missed), then the
// Pareto front with every point labelled and linked to its row, then how
// the answer's objective moves along each parameter, then every point.
func (d *Decision) HTML() ([]byte, error) {
	pg := decisionPage{D: d, Objective: d.Metrics[0].Name}
	pg.Title = fmt.Sprintf("gpuplan %s %s: decision", d.Command, d.Name)
	cols := make([]column, len(d.Metrics))
	for m := range d.Metrics {
		cols[m] = d.column(m)
		for _, p := range d.Points {
			if d.clip(m, p.Stats[m]) != p.Stats[m] {
				pg.Clipped = true
			}
		}
	}
	pg.ObjectiveUnit = cols[0].unit
	obj := cols[0]
	settings := func(p DecisionPoint) string {
		var s []string
		for j, name := range d.Parameters {
			s = append(s, name+" = "+p.Settings[j])
		}
		return strings.Join(s, ", ")
	}
	if d.Winner < 0 {
		pg.NoAnswer = "No setting run meets every constraint."
		if d.Command == "sweep" {
			pg.NoAnswer += " Widen the parameters' values or loosen a constraint."
		}
	} else {
		w := d.Points[d.Winner]
		pg.Answer = &decisionLink{Index: w.Index, Settings: settings(w), Figure: obj.interval(d.clip(0, w.Stats[0]))}
		for _, c := range d.Constraints {
			st := d.clip(c.Metric, w.Stats[c.Metric])
			col := cols[c.Metric]
			mg := c.margin(w.Stats[c.Metric])
			verdict := "met with 95% confidence"
			short := false
			switch {
			case mg.Mean < 0:
				verdict, short = "missed", true
			case mg.Lo < 0:
				verdict = "met by the mean; the 95% interval crosses the bound"
			}
			op := ">="
			if c.AtMost {
				op = "<="
			}
			pg.Margins = append(pg.Margins, decisionRow{Label: c.Text, Value: col.interval(st),
				Bound: op + " " + col.f(c.Bound), Margin: marginText(d.Metrics[c.Metric].Unit, col, mg), Verdict: verdict, Short: short})
		}
		if d.RunnerUp >= 0 {
			r := d.Points[d.RunnerUp]
			pg.RunnerUp = &decisionLink{Index: r.Index, Settings: settings(r), Figure: obj.interval(d.clip(0, r.Stats[0])), Why: d.lostBy(obj, w, r)}
		}
		// The settings better on the objective than the answer: each
		// missed a constraint (else it would be the answer).
		var better []DecisionPoint
		for _, p := range d.Points {
			if !p.Feasible && d.better(p, w) {
				better = append(better, p)
			}
		}
		// Nearest the answer first; at one figure, by index.
		sort.SliceStable(better, func(i, j int) bool {
			a, b := better[i], better[j]
			if a.Stats[0].Mean != b.Stats[0].Mean {
				return d.better(b, a)
			}
			return a.Index < b.Index
		})
		// Settings with the same figures (a parameter that changes
		// nothing) make one line.
		for _, p := range better {
			why := "misses a constraint"
			if c, mg, ok := d.missed(p); ok {
				col := cols[c.Metric]
				st := d.clip(c.Metric, p.Stats[c.Metric])
				side := "under"
				if c.AtMost {
					side = "over"
				}
				why = fmt.Sprintf("misses %s at %s, %s %s the bound", c.Text, col.interval(st),
					marginText(d.Metrics[c.Metric].Unit, col, Interval{-mg.Mean, -mg.Mean, -mg.Mean}), side)
			}
			fig := obj.interval(d.clip(0, p.Stats[0]))
			if n := len(pg.Rejected); n > 0 && pg.Rejected[n-1].Figure == fig && pg.Rejected[n-1].Why == why {
				last := &pg.Rejected[n-1]
				last.Indices = append(last.Indices, p.Index)
				last.points = append(last.points, p)
				last.Settings = d.settingsOf(last.points)
				continue
			}
			if len(pg.Rejected) == maxRejectedShown {
				break
			}
			pg.Rejected = append(pg.Rejected, decisionLink{Index: p.Index, Indices: []int{p.Index}, points: []DecisionPoint{p},
				Settings: settings(p), Figure: fig, Why: why})
		}
	}
	if d.ParetoY >= 0 && len(d.Points) > 0 {
		pg.Plot = template.HTML(d.paretoSVG(cols[0], cols[d.ParetoY]))
		pg.PlotCaption = fmt.Sprintf("%s (x) against %s (y), one mark per setting run, the mean over its seeds; the line joins the Pareto front (no other setting is better on both); filled marks meet every constraint, hollow ones miss one; every label links to its row below.", d.Metrics[0].Name, d.Metrics[d.ParetoY].Name)
	}
	pg.Sensitivity, pg.SensitivityNote = d.sensitivity(obj)
	pg.Header = []string{"#"}
	pg.Header = append(pg.Header, d.Parameters...)
	for m, mt := range d.Metrics {
		h := mt.Name
		if cols[m].unit != "" {
			h += " (" + cols[m].unit + ")"
		}
		pg.Header = append(pg.Header, h)
	}
	pg.Header = append(pg.Header, "seeds", "status")
	for i, p := range d.Points {
		r := pointRow{Index: p.Index}
		r.Cells = append(r.Cells, p.Settings...)
		for m := range d.Metrics {
			r.Cells = append(r.Cells, cols[m].interval(d.clip(m, p.Stats[m])))
		}
		r.Cells = append(r.Cells, strconv.Itoa(p.Seeds))
		switch {
		case i == d.Winner:
			r.Class, r.Status = "answer", "the answer"
		case i == d.RunnerUp:
			r.Class, r.Status = "runnerup", "runner-up"
		case p.Feasible:
			r.Status = "meets every constraint"
		default:
			r.Class, r.Status = "miss", "misses a constraint"
			if c, _, ok := d.missed(p); ok {
				r.Status = "misses " + c.Text
			}
		}
		pg.Rows = append(pg.Rows, r)
	}
	var b bytes.Buffer
	if err := decisionTemplate.Execute(&b, pg); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// lostBy says why the runner-up r is not the answer w.
func (d *Decision) lostBy(obj column, w, r DecisionPoint) string {
	dv := r.Stats[0].Mean - w.Stats[0].Mean
	if d.Metrics[0].HigherIsBetter {
		dv = -dv
	}
	if dv == 0 {
		return fmt.Sprintf("it meets every constraint too and has the same %s (%s); a tie goes to the setting listed first", d.Metrics[0].Name, obj.f(w.Stats[0].Mean))
	}
	rel := ""
	if w.Stats[0].Mean != 0 {
		rel = fmt.Sprintf(" (%.1f%%)", 100*dv/math.Abs(w.Stats[0].Mean))
	}
	word := "worse"
	if d.Metrics[0].Unit == UnitUSD && !d.Metrics[0].HigherIsBetter {
		word = "more"
		return fmt.Sprintf("it meets every constraint too but costs %s %s%s", obj.f(dv), word, rel)
	}
	return fmt.Sprintf("it meets every constraint too but its %s is %s %s%s", d.Metrics[0].Name, obj.f(dv), word, rel)
}

// sensitivity is, for each parameter with more than one value, the points
// that differ from the answer in that parameter alone: how the objective
// moves along it, from the points already run.
func (d *Decision) sensitivity(obj column) ([]sensitivity, string) {
	if d.Winner < 0 {
		return nil, "No answer to move around."
	}
	w := d.Points[d.Winner]
	var out []sensitivity
	for j, name := range d.Parameters {
		var rows []sensitivityRow
		for _, p := range d.Points {
			same := true
			for k := range d.Parameters {
				if k != j && p.Settings[k] != w.Settings[k] {
					same = false
				}
			}
			if !same {
				continue
			}
			r := sensitivityRow{Index: p.Index, Value: p.Settings[j], Figure: obj.interval(d.clip(0, p.Stats[0])), Answer: p.Index == w.Index}
			if !r.Answer {
				dv := p.Stats[0].Mean - w.Stats[0].Mean
				r.Change = obj.f(dv)
				if dv > 0 {
					r.Change = "+" + r.Change
				}
				if w.Stats[0].Mean != 0 {
					r.Change += fmt.Sprintf(" (%+.1f%%)", 100*dv/math.Abs(w.Stats[0].Mean))
				}
			}
			r.Status = "meets every constraint"
			if r.Answer {
				r.Status = "the answer"
			} else if c, _, ok := d.missed(p); ok {
				r.Status = "misses " + c.Text
			} else if !p.Feasible {
				r.Status = "misses a constraint"
			}
			rows = append(rows, r)
		}
		if len(rows) > 1 {
			out = append(out, sensitivity{Parameter: name, Rows: rows})
		}
	}
	if len(out) == 0 {
		return nil, "No setting run differs from the answer in one parameter alone."
	}
	return out, ""
}

var decisionTemplate = template.Must(template.New("decision").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;padding:1em;max-width:1280px;color:#222;line-height:1.4}
h1{font-size:1.5em;margin:.3em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.answer-box{border:2px solid #1f77b4;border-radius:6px;padding:.6em 1em;background:#f3f8fc}
.big{font-size:1.6em;font-weight:600}
.settings{overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;margin:.4em 0}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f4f4f4}td.l,th.l{text-align:left;white-space:normal;min-width:10em}
tr.answer td{background:#e3f0fa;font-weight:600}tr.runnerup td{background:#f3f3f3}tr.miss td{color:#777}
tr:target td{outline:2px solid #d62728}
.short{color:#b00}
svg{width:100%;height:auto;max-width:760px;min-width:540px;display:block}
figure{margin:.5em 0}figcaption{font-size:13px;color:#555}
</style>
</head><body>
<h1>{{.Title}}</h1>
<p>{{.D.Method}}</p>
<h2>The answer</h2>
{{if .Answer}}<div class="answer-box">
<div class="settings big"><a href="#p-{{.Answer.Index}}">#{{.Answer.Index}}</a>: {{.Answer.Settings}}</div>
<p>{{.Objective}}: <span class="big" id="answer-objective">{{.Answer.Figure}}</span> (mean over the seeds, 95% interval in brackets)</p>
</div>
{{if .Margins}}<h3>Margin against each constraint</h3>
<div class="scroll"><table id="margins"><tr><th class="l">constraint</th><th>value [95% interval]</th><th>bound</th><th>margin [95% interval]</th><th class="l">verdict</th></tr>
{{range .Margins}}<tr><td class="l">{{.Label}}</td><td>{{.Value}}</td><td>{{.Bound}}</td><td{{if .Short}} class="short"{{end}}>{{.Margin}}</td><td class="l">{{.Verdict}}</td></tr>
{{end}}</table></div>
<p>The margin is how far the figure is on the right side of the bound (percentage points for a share).</p>
{{else}}<p>No constraints: the answer is the best {{.Objective}} of every setting run.</p>{{end}}
<h3>Runner-up</h3>
{{if .RunnerUp}}<p id="runner-up"><span class="settings"><a href="#p-{{.RunnerUp.Index}}">#{{.RunnerUp.Index}}</a>: {{.RunnerUp.Settings}}</span>, {{.Objective}} {{.RunnerUp.Figure}}: {{.RunnerUp.Why}}.</p>
{{else}}<p id="runner-up">None: no other setting run meets every constraint.</p>{{end}}
{{if .Rejected}}<h3>Better on {{.Objective}}, but rejected</h3>
<ul id="rejected">{{range .Rejected}}<li><span class="settings">{{range $i, $x := .Indices}}{{if $i}}, {{end}}<a href="#p-{{$x}}">#{{$x}}</a>{{end}}: {{.Settings}}</span>, {{$.Objective}} {{.Figure}}: {{.Why}}.</li>
{{end}}</ul>{{end}}
{{else}}<p class="answer-box" id="no-answer">{{.NoAnswer}}</p>{{end}}
{{if .Plot}}<h2>Pareto front</h2>
<figure id="pareto"><div class="scroll">{{.Plot}}</div><figcaption>{{.PlotCaption}}</figcaption></figure>{{end}}
<h2>Sensitivity</h2>
{{if .Sensitivity}}<p>How {{.Objective}} moves when one parameter leaves the answer's value, the others held, over the settings already run.</p>
{{range .Sensitivity}}<h3>{{.Parameter}}</h3>
<div class="scroll"><table class="sensitivity"><tr><th class="l">{{.Parameter}}</th><th>{{$.Objective}}{{if $.ObjectiveUnit}} ({{$.ObjectiveUnit}}){{end}}</th><th>change</th><th class="l">status</th></tr>
{{range .Rows}}<tr{{if .Answer}} class="answer"{{end}}><td class="l"><a href="#p-{{.Index}}">{{.Value}}</a></td><td>{{.Figure}}</td><td>{{.Change}}</td><td class="l">{{.Status}}</td></tr>
{{end}}</table></div>
{{end}}{{else}}<p>{{.SensitivityNote}}</p>{{end}}
<h2>Every setting run</h2>
<p>Each figure is the mean over the seeds with its 95% interval (Student's t){{if .Clipped}}, the interval clipped to the values the figure can take (no negative wait or cost, no share above 100%){{end}}.</p>
<div class="scroll"><table id="points"><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr id="p-{{.Index}}"{{if .Class}} class="{{.Class}}"{{end}}><td>{{.Index}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}<td class="l">{{.Status}}</td></tr>
{{end}}</table></div>
</body></html>
`))
