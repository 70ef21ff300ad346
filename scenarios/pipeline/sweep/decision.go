package sweep

import (
	"fmt"
	"slices"
	"strings"

	"gpuplan.dev/gpuplan/reports"
)

// decisionMetrics are the table's metrics as the decision page reads them.
func decisionMetrics(names []string) ([]reports.DecisionMetric, error) {
	var out []reports.DecisionMetric
	for _, n := range names {
		m, err := ParseMetric(n)
		if err != nil {
			return nil, err
		}
		out = append(out, reports.DecisionMetric{Name: n, Unit: m.Unit().String(), HigherIsBetter: HigherIsBetter(n)})
	}
	return out, nil
}

// DecisionConstraints are cs as the decision page reads them, each
// metric's column in metrics.
func DecisionConstraints(cs []Constraint, metrics []string) ([]reports.DecisionConstraint, error) {
	var out []reports.DecisionConstraint
	for _, c := range cs {
		m := slices.Index(metrics, c.Metric.Name)
		if m < 0 {
			return nil, fmt.Errorf("constraint %s: metric %s is not kept", c.Text, c.Metric.Name)
		}
		out = append(out, reports.DecisionConstraint{Text: c.Text, Metric: m, AtMost: c.Op == "<=", Bound: c.Bound})
	}
	return out, nil
}

// DecisionStats are a point's stats as the decision page reads them.
func DecisionStats(st []Stat) []reports.Interval {
	out := make([]reports.Interval, len(st))
	for i, s := range st {
		out[i] = reports.Interval{Mean: s.Mean, Lo: s.Lo, Hi: s.Hi}
	}
	return out
}

// Decision is the table as the decision page reads it: the answer is the
// best point on the first metric among those whose means meet every
// constraint (every point, without constraints), the runner-up the next;
// the Pareto front is of the first metric against the first constraint's
// metric (without constraints, the second metric).
func (t *Table) Decision() (*reports.Decision, error) {
	metrics, err := decisionMetrics(t.Metrics)
	if err != nil {
		return nil, err
	}
	var cons []Constraint
	for _, text := range t.Constraints {
		c, err := ParseConstraint(text)
		if err != nil {
			return nil, err
		}
		cons = append(cons, c)
	}
	dc, err := DecisionConstraints(cons, t.Metrics)
	if err != nil {
		return nil, err
	}
	d := &reports.Decision{Command: "sweep", Name: t.Sweep, Parameters: t.Parameters, Metrics: metrics, Constraints: dc,
		Winner: -1, RunnerUp: -1, ParetoY: -1}
	var seeds []string
	for _, s := range t.Seeds {
		seeds = append(seeds, fmt.Sprint(s))
	}
	d.Method = fmt.Sprintf("Every one of the sweep's %d points ran %d seeds (%s); a point meets the constraints when each metric's mean does. The answer is the point with the best %s among those.",
		len(t.Rows), len(t.Seeds), strings.Join(seeds, ", "), t.Metrics[0])
	if len(cons) == 0 {
		d.Method = fmt.Sprintf("Every one of the sweep's %d points ran %d seeds (%s). The sweep has no constraints: the answer is the point with the best %s.",
			len(t.Rows), len(t.Seeds), strings.Join(seeds, ", "), t.Metrics[0])
	}
	for _, r := range t.Rows {
		p := reports.DecisionPoint{Index: r.Index, Stats: DecisionStats(r.Stats), Seeds: len(t.Seeds), Feasible: r.Meets == nil || *r.Meets}
		for _, v := range r.Values {
			p.Settings = append(p.Settings, FormatValue(v))
		}
		d.Points = append(d.Points, p)
	}
	var feasible []int
	for i, p := range d.Points {
		if p.Feasible {
			feasible = append(feasible, i)
		}
	}
	hib := metrics[0].HigherIsBetter
	slices.SortStableFunc(feasible, func(a, b int) int {
		x, y := d.Points[a].Stats[0].Mean, d.Points[b].Stats[0].Mean
		if hib {
			x, y = -x, -y
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return d.Points[a].Index - d.Points[b].Index
	})
	if len(feasible) > 0 {
		d.Winner = feasible[0]
	}
	if len(feasible) > 1 {
		d.RunnerUp = feasible[1]
	}
	switch {
	case len(dc) > 0 && dc[0].Metric != 0:
		d.ParetoY = dc[0].Metric
	case len(t.Metrics) > 1:
		d.ParetoY = 1
	}
	if d.ParetoY >= 0 {
		x, y := make([]float64, len(d.Points)), make([]float64, len(d.Points))
		for i, p := range d.Points {
			x[i], y[i] = p.Stats[0].Mean, p.Stats[d.ParetoY].Mean
		}
		d.Pareto = Pareto(x, y, hib, metrics[d.ParetoY].HigherIsBetter)
	}
	return d, nil
}
