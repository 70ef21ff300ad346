package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"gpuplan.dev/gpuplan/reports"
)

// Unit says what a row's figures are.
type Unit string

// The units of the rows; a change of a Fraction is in percentage points.
const (
	Count         Unit = "count"
	Seconds       Unit = "seconds"
	Milliseconds  Unit = "milliseconds"
	USD           Unit = "usd"
	USDPerGPUHour Unit = "usd-per-gpu-hour"
	GPUHours      Unit = "gpu-hours"
	Fraction      Unit = "fraction"
)

// Row is one figure of both runs and its change.
type Row struct {
	Metric string  `json:"metric"`
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	Change float64 `json:"change"`
	// RelativeChange is change / a (0 when a is 0).
	RelativeChange float64 `json:"relativeChange"`
	Unit           Unit    `json:"unit"`
}

// Comparison is two runs' figures side by side: the rows in the order
// they print.
type Comparison struct {
	// NameA and NameB are the runs' scenario names (the table's heads).
	NameA, NameB string
	A, B         reports.RunFigures
	Rows         []Row
}

// New compares run a (its summary read from pathA) with run b: jobs,
// waits, completion times, the bill, idle cost and the cost per useful
// GPU-hour; for runs with both jobs and services, training's cost per
// useful GPU-hour and inference's cost per million requests, each on its
// share of the bill, instead; the mean training step when either has one;
// and for each inference service both runs have (by name), its p95
// latency, SLO attainment, drops, GPU-hours and cost per million requests.
func New(pathA string, a *reports.Summary, pathB string, b *reports.Summary) *Comparison {
	fa, fb := reports.Figures(pathA, a), reports.Figures(pathB, b)
	c := &Comparison{NameA: a.Scenario.Name, NameB: b.Scenario.Name, A: fa, B: fb}
	c.add("jobs completed", float64(fa.Completed), float64(fb.Completed), Count)
	c.add("jobs failed", float64(fa.Failed), float64(fb.Failed), Count)
	c.add("GPU allocation", fa.Allocation, fb.Allocation, Fraction)
	c.add("p95 queue wait", fa.WaitP95, fb.WaitP95, Seconds)
	// Completion time over every job, the unfinished ones censored at the
	// end of the run (Kaplan-Meier), as simulate prints it: over completed
	// jobs alone it flatters the run that completed less.
	c.add(P50CompletionTime, fa.JCTAllP50, fb.JCTAllP50, Seconds)
	c.add(P95CompletionTime, fa.JCTAllP95, fb.JCTAllP95, Seconds)
	c.add("cost (USD)", fa.Cost, fb.Cost, USD)
	c.add("idle cost (USD)", fa.IdleCost, fb.IdleCost, USD)
	if fa.BySide || fb.BySide {
		// Jobs and services: each side on its share of the bill.
		c.add("training cost per useful GPU-hour (its share)", fa.CostPerUsefulGPUHour, fb.CostPerUsefulGPUHour, USDPerGPUHour)
		c.add("inference cost per million requests (its share)", fa.CostPerMillionRequests, fb.CostPerMillionRequests, USD)
	} else {
		c.add("cost per useful GPU-hour", fa.CostPerUsefulGPUHour, fb.CostPerUsefulGPUHour, USDPerGPUHour)
	}
	c.add("GPU-hours lost to disruptions", fa.LostGPUHours, fb.LostGPUHours, GPUHours)
	c.add("disruptions", float64(fa.Disruptions), float64(fb.Disruptions), Count)
	if fa.StepSeconds > 0 || fb.StepSeconds > 0 {
		c.add("mean training step", fa.StepSeconds, fb.StepSeconds, Seconds)
	}
	for _, x := range fa.Services {
		for _, y := range fb.Services {
			if x.Name != y.Name {
				continue
			}
			c.add(x.Name+" p95 latency", x.P95Ms, y.P95Ms, Milliseconds)
			if x.SLOAttainment > 0 || y.SLOAttainment > 0 {
				c.add(x.Name+" within SLO", x.SLOAttainment, y.SLOAttainment, Fraction)
			}
			c.add(x.Name+" requests dropped", x.Dropped, y.Dropped, Count)
			c.add(x.Name+" GPU-hours", x.GPUHours, y.GPUHours, GPUHours)
			if x.CostPerMillion > 0 || y.CostPerMillion > 0 {
				c.add(x.Name+" cost per million requests", x.CostPerMillion, y.CostPerMillion, USD)
			}
		}
	}
	return c
}

// The completion-time rows' names: Kaplan-Meier quantiles over every job.
const (
	P50CompletionTime = "p50 completion time, all jobs (KM)"
	P95CompletionTime = "p95 completion time, all jobs (KM)"
)

func (c *Comparison) add(metric string, a, b float64, unit Unit) {
	r := Row{Metric: metric, A: a, B: b, Change: b - a, Unit: unit}
	if unit == Seconds && (a < 0 || b < 0) {
		// A Kaplan-Meier quantile not reached (-1) has no change.
		r.Change = 0
		c.Rows = append(c.Rows, r)
		return
	}
	if a != 0 {
		r.RelativeChange = (b - a) / a
	}
	c.Rows = append(c.Rows, r)
}

// Format is a figure as the table shows it.
func (r Row) Format(x float64) string {
	switch r.Unit {
	case Seconds:
		if x < 0 {
			return "not reached"
		}
		return reports.Human(x)
	case Milliseconds:
		return fmt.Sprintf("%.1f ms", x)
	case USD, USDPerGPUHour:
		return reports.Money(x)
	case Fraction:
		return fmt.Sprintf("%.1f%%", 100*x)
	case GPUHours:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// FormatChange is the change as the table shows it: a fraction's in
// percentage points, anything else's in percent of A ("" when A is 0).
func (r Row) FormatChange() string {
	switch {
	case r.Unit == Fraction:
		return fmt.Sprintf("%+.1f pp", 100*r.Change)
	case r.Unit == Seconds && (r.A < 0 || r.B < 0):
		return ""
	case r.A != 0:
		return fmt.Sprintf("%+.1f%%", 100*r.RelativeChange)
	}
	return ""
}

func (c *Comparison) cells() [][]string {
	rows := make([][]string, 0, len(c.Rows))
	for _, r := range c.Rows {
		a, b := r.FormatPair()
		rows = append(rows, []string{r.Metric, a, b, r.FormatChange()})
	}
	return rows
}

// FormatPair writes A and B in one unit and one precision (the
// one money and duration formatters over the pair): $785 beside $2,642,
// never $785.39 beside $2,642; 0.50h beside 3.40h, never 30.0m.
func (r Row) FormatPair() (string, string) {
	var f func(float64) string
	switch r.Unit {
	case Seconds:
		var xs []float64
		for _, x := range []float64{r.A, r.B} {
			if x >= 0 {
				xs = append(xs, x)
			}
		}
		d := reports.DurationFormat(xs...)
		f = func(x float64) string {
			if x < 0 {
				return "not reached"
			}
			return d(x)
		}
	case USD, USDPerGPUHour:
		f = reports.MoneyFormat(r.A, r.B)
	default:
		return r.Format(r.A), r.Format(r.B)
	}
	return f(r.A), f(r.B)
}

// WriteTable prints the comparison as an aligned text table.
func (c *Comparison) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tA: %s\tB: %s\tCHANGE\n", c.NameA, c.NameB)
	for _, r := range c.cells() {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// WriteMarkdown prints the comparison as a Markdown table.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "| | %s | %s | change |\n|---|---:|---:|---:|\n", c.NameA, c.NameB); err != nil {
		return err
	}
	for _, r := range c.cells() {
		if _, err := fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | ")); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON prints the rows as an indented JSON array.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c.Rows)
}

// Decode reads a summary.json's bytes (from path, named in errors): a
// JSON document of this gpuplan's schema version.
func Decode(path string, data []byte) (*reports.Summary, error) {
	var s reports.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: not a gpuplan summary.json: %v", path, err)
	}
	if s.SchemaVersion != reports.SchemaVersion {
		return nil, fmt.Errorf("%s: schemaVersion %d, this gpuplan reads %d", path, s.SchemaVersion, reports.SchemaVersion)
	}
	return &s, nil
}
