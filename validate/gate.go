package validate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Assertions is a rules file: kind Assertions, apiVersion gpuplan.dev/v1alpha1.
type Assertions struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Replications is how many seeds each side runs (default 5).
	Replications int    `json:"replications,omitempty"`
	Rules        []Rule `json:"rules"`
}

// What a rule looks at.
const (
	OfCandidate = "candidate"
	OfBaseline  = "baseline"
	// OfChange is candidate - baseline, paired by seed.
	OfChange = "change"
	// OfRelativeChange is (candidate - baseline) / baseline.
	OfRelativeChange = "relativeChange"
)

// Rule is one assertion: metric (of what) op value.
type Rule struct {
	Name   string    `json:"name,omitempty"`
	Metric string    `json:"metric"`
	Of     string    `json:"of,omitempty"`
	Op     string    `json:"op"`
	Value  Threshold `json:"value"`

	threshold float64
}

// Threshold is a rule's bound as written: a number, a duration (30m) or a
// percentage (5%).
type Threshold struct{ text string }

// UnmarshalJSON keeps the bound's text.
func (t *Threshold) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		t.text = s
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("a threshold is a number, a duration (30m) or a percentage (5%%)")
	}
	t.text = strconv.FormatFloat(f, 'g', -1, 64)
	return nil
}

func (t Threshold) String() string { return t.text }

func ops() []string { return []string{"<=", "<", ">=", ">", "=="} }

func (r *Rule) label() string {
	if r.Name != "" {
		return r.Name
	}
	if r.Of == OfCandidate || r.Of == "" {
		return fmt.Sprintf("%s %s %s", r.Metric, r.Op, r.Value.text)
	}
	return fmt.Sprintf("%s of %s %s %s", r.Of, r.Metric, r.Op, r.Value.text)
}

// ParseAssertions reads and checks a rules file. Errors name the file,
// line and field, and quote at most strict.MaxQuote bytes of it.
func ParseAssertions(file string, data []byte) (*Assertions, error) {
	a, err := parseAssertions(file, data)
	var ml *metricListError
	if errors.As(err, &ml) {
		// The metric as written is quoted bounded; the list is whole.
		return nil, ml
	}
	return a, strict.BoundError(err)
}

// metricListError is an unknown metric in a rules file: the InputError
// naming file, line and field, and after it the list of every metric
// validate knows, not cut.
type metricListError struct{ *strict.InputError }

func (e *metricListError) Error() string {
	return e.InputError.Error() + " (metrics: " + strings.Join(Metrics(), ", ") + ")"
}

func (e *metricListError) Unwrap() error { return e.InputError }

func parseAssertions(file string, data []byte) (*Assertions, error) {
	if err := strict.CheckLines(file, data); err != nil {
		return nil, err
	}
	a := &Assertions{}
	pos, err := strict.Decode(file, data, a, strict.Options{What: "a rules file"})
	if err != nil {
		// YAML's .inf and .nan decode, then fail as JSON with no place:
		// find them.
		if strings.Contains(err.Error(), "unsupported value") {
			if e := nonFinite(file, data); e != nil {
				return nil, e
			}
		}
		return nil, err
	}
	bad := func(path, format string, args ...any) error {
		return pos.Errorf(file, path, format, args...)
	}
	if a.APIVersion != strict.APIVersion || a.Kind != "Assertions" {
		return nil, bad("kind", "want apiVersion %s, kind Assertions", strict.APIVersion)
	}
	if a.Replications < 0 || a.Replications > 1000 {
		return nil, bad("replications", "must be in 1..1000")
	}
	if len(a.Rules) == 0 {
		return nil, bad("rules", "give at least one rule")
	}
	for i := range a.Rules {
		r := &a.Rules[i]
		at := fmt.Sprintf("rules[%d]", i)
		unit, err := MetricUnit(r.Metric)
		if err != nil {
			ie := bad(at+".metric", "unknown metric %s", strict.Quote(r.Metric)).(*strict.InputError)
			return nil, &metricListError{ie}
		}
		switch r.Of {
		case "":
			r.Of = OfCandidate
		case OfCandidate, OfBaseline, OfChange, OfRelativeChange:
		default:
			return nil, bad(at+".of", "is %s; want candidate, baseline, change or relativeChange", strict.Quote(r.Of))
		}
		ok := false
		for _, o := range ops() {
			ok = ok || o == r.Op
		}
		if !ok {
			return nil, bad(at+".op", "is %s; want one of %s", strict.Quote(r.Op), strings.Join(ops(), " "))
		}
		if r.threshold, err = parseThreshold(r.Value.text, unit, r.Of); err != nil {
			return nil, bad(at+".value", "%v", err)
		}
	}
	return a, nil
}

func parseThreshold(v string, unit Unit, of string) (float64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, fmt.Errorf("is required")
	}
	if p, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%s is not a percentage", strict.Quote(v))
		}
		if of != OfRelativeChange && unit != Ratio {
			return 0, fmt.Errorf("%s: a percentage bounds a relativeChange or a ratio metric", strict.Quote(v))
		}
		return f / 100, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f, nil
	}
	if (unit == Seconds || unit == Milliseconds) && of != OfRelativeChange {
		d, err := strict.ParseDuration(v)
		if err == nil {
			if unit == Milliseconds {
				return float64(d.Microseconds()) / 1000, nil
			}
			return d.Seconds(), nil
		}
	}
	return 0, fmt.Errorf("%s is not a number, a duration or a percentage", strict.Quote(v))
}

// nonFinite finds a YAML .inf or .nan in a rules file, as an InputError
// at its line and field (nil when there is none, or the file is not YAML).
func nonFinite(file string, data []byte) error {
	var doc yamlv3.Node
	if yamlv3.Unmarshal(data, &doc) != nil {
		return nil
	}
	n, path := strict.FindNonFinite(&doc, "")
	if n == nil {
		return nil
	}
	msg := fmt.Sprintf("%s is not a finite number", strict.Quote(n.Value))
	if strings.HasSuffix(path, ".value") {
		msg += "; a bound is a number, a duration (30m) or a percentage (5%)"
	}
	return &strict.InputError{File: file, Line: n.Line, Column: n.Column, Field: path, Msg: msg}
}

// Side is which scenario a run was.
type Side string

const (
	Baseline  Side = "baseline"
	Candidate Side = "candidate"
)

// RunFunc runs one side with one seed and summarises it.
type RunFunc func(side Side, seed uint64) (*reports.Summary, error)

// Verdict is one rule's outcome.
type Verdict struct {
	Rule      string `json:"rule"`
	Metric    string `json:"metric"`
	Of        string `json:"of"`
	Op        string `json:"op"`
	Threshold string `json:"threshold"`
	// Unit is what Mean, CILow, CIHigh and Samples measure: the metric's
	// unit (seconds, milliseconds, ratio, usd, number), or "fraction" for a
	// relativeChange (a change over the baseline's mean).
	Unit string `json:"unit"`
	// Mean is the judged value: the mean over the replications of what
	// the rule looks at (of).
	Mean float64 `json:"mean"`
	// CILow and CIHigh bound the 95% confidence interval of Mean over the
	// replications (Student's t; paired by seed for changes).
	CILow  float64 `json:"ciLow"`
	CIHigh float64 `json:"ciHigh"`
	// Samples are the judged value, one per seed, in Unit.
	Samples []float64 `json:"samples"`
	// BaselineMean and CandidateMean are the metric's means on each side,
	// in the metric's unit; Change is their difference (candidate -
	// baseline) with ChangeLow and ChangeHigh its 95% interval, paired by
	// seed; RelativeChange is Change over the baseline's mean (0 when that
	// is 0).
	BaselineMean   float64 `json:"baselineMean"`
	CandidateMean  float64 `json:"candidateMean"`
	Change         float64 `json:"change"`
	ChangeLow      float64 `json:"changeLow"`
	ChangeHigh     float64 `json:"changeHigh"`
	RelativeChange float64 `json:"relativeChange"`
	Pass           bool    `json:"pass"`
	// Certain is set when the whole interval is on the rule's side of the
	// threshold (or the whole of it is not).
	Certain bool `json:"certain"`
	unit    Unit
}

// GateResult is a validation run.
type GateResult struct {
	Replications int       `json:"replications"`
	Seeds        []uint64  `json:"seeds"`
	Verdicts     []Verdict `json:"verdicts"`
	Pass         bool      `json:"pass"`
	// Baseline and Candidate are the first seed's headline figures.
	Baseline  reports.RunFigures `json:"baseline"`
	Candidate reports.RunFigures `json:"candidate"`
	// servicesOnly: both first runs have inference services and no jobs.
	servicesOnly bool
}

// RuleError is a rule the runs cannot answer (a queue the scenario lacks,
// a cost without prices): bad input, exit 2.
type RuleError struct {
	Rule string
	Err  error
}

func (e *RuleError) Error() string { return fmt.Sprintf("rule %s: %v", e.Rule, e.Err) }
func (e *RuleError) Unwrap() error { return e.Err }

// ExitCode is 2: the rules do not fit the scenarios.
func (e *RuleError) ExitCode() int { return 2 }

// Seeds is how many seeds per side Evaluate runs when asked for reps:
// reps, else the rules file's replications, else 5.
func (a *Assertions) Seeds(reps int) int {
	if reps <= 0 {
		reps = a.Replications
	}
	if reps <= 0 {
		reps = 5
	}
	return reps
}

// Evaluate runs both sides for reps seeds from seed on and checks every
// rule.
func Evaluate(a *Assertions, reps int, seed uint64, run RunFunc) (*GateResult, error) {
	reps = a.Seeds(reps)
	res := &GateResult{Replications: reps, Pass: true}
	var base, cand []*reports.Summary
	for i := 0; i < reps; i++ {
		s := seed + uint64(i)
		res.Seeds = append(res.Seeds, s)
		b, err := run(Baseline, s)
		if err != nil {
			return nil, fmt.Errorf("baseline, seed %d: %w", s, err)
		}
		c, err := run(Candidate, s)
		if err != nil {
			return nil, fmt.Errorf("candidate, seed %d: %w", s, err)
		}
		base, cand = append(base, b), append(cand, c)
	}
	res.Baseline, res.Candidate = reports.Figures("baseline", base[0]), reports.Figures("candidate", cand[0])
	res.servicesOnly = base[0].Jobs.Total == 0 && cand[0].Jobs.Total == 0 && len(base[0].Services)+len(cand[0].Services) > 0
	for _, r := range a.Rules {
		unit, _ := MetricUnit(r.Metric)
		v := Verdict{Rule: r.label(), Metric: r.Metric, Of: r.Of, Op: r.Op, Threshold: r.Value.text, unit: unit, Unit: unit.String()}
		var bs, cs, ds []float64
		for i := 0; i < reps; i++ {
			bv, err := Metric(base[i], r.Metric)
			if err != nil {
				return nil, &RuleError{v.Rule, err}
			}
			cv, err := Metric(cand[i], r.Metric)
			if err != nil {
				return nil, &RuleError{v.Rule, err}
			}
			bs, cs, ds = append(bs, bv), append(cs, cv), append(ds, cv-bv)
		}
		bm, cm := stat.Mean(bs, nil), stat.Mean(cs, nil)
		change, half := meanCI(ds)
		v.BaselineMean, v.CandidateMean = bm, cm
		v.Change, v.ChangeLow, v.ChangeHigh = change, change-half, change+half
		if bm != 0 {
			v.RelativeChange = change / math.Abs(bm)
		}
		switch r.Of {
		case OfBaseline:
			v.Samples = bs
		case OfCandidate:
			v.Samples = cs
		case OfChange:
			v.Samples = ds
		case OfRelativeChange:
			// The paired changes over the baseline's mean (its own spread
			// left out of the interval): the mean of these is the mean
			// change over the mean baseline.
			if bm == 0 {
				return nil, &RuleError{v.Rule, fmt.Errorf("the baseline's %s is 0: a relative change is undefined", r.Metric)}
			}
			v.Unit = "fraction"
			for _, d := range ds {
				v.Samples = append(v.Samples, d/math.Abs(bm))
			}
		}
		mean, half := meanCI(v.Samples)
		v.Mean, v.CILow, v.CIHigh = mean, mean-half, mean+half
		v.Pass = holds(mean, r.Op, r.threshold)
		v.Certain = holds(v.CILow, r.Op, r.threshold) == holds(v.CIHigh, r.Op, r.threshold)
		res.Pass = res.Pass && v.Pass
		res.Verdicts = append(res.Verdicts, v)
	}
	return res, nil
}

func meanCI(x []float64) (mean, half float64) {
	mean = stat.Mean(x, nil)
	if len(x) < 2 {
		return mean, 0
	}
	sd := stat.StdDev(x, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(x) - 1)}.Quantile(0.975)
	return mean, t * sd / math.Sqrt(float64(len(x)))
}

func holds(x float64, op string, t float64) bool {
	const eps = 1e-9
	switch op {
	case "<=":
		return x <= t+eps
	case "<":
		return x < t
	case ">=":
		return x >= t-eps
	case ">":
		return x > t
	}
	return math.Abs(x-t) <= eps*math.Max(1, math.Abs(t))
}

// formatter writes values of the metric's unit, one precision for all
// of xs (a row's figures together); a relativeChange's judged values are
// percentages.
func (v *Verdict) formatter(relative bool, xs ...float64) func(float64) string {
	if relative {
		return func(x float64) string {
			if math.Round(1e4*x) == 0 {
				x = 0 // no -0.00%
			}
			return fmt.Sprintf("%+.2f%%", 100*x)
		}
	}
	switch v.unit {
	case Seconds:
		return reports.DurationFormat(xs...)
	case Milliseconds:
		return func(x float64) string { return fmt.Sprintf("%.1f ms", x) }
	case Ratio:
		return func(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }
	case USD:
		return reports.MoneyFormat(xs...)
	}
	return reports.NumberFormat(xs...)
}

// judged writes the judged value's figures (mean, interval, samples) in
// one unit.
func (v *Verdict) judged() func(float64) string {
	return v.formatter(v.Of == OfRelativeChange, append([]float64{v.Mean, v.CILow, v.CIHigh}, v.Samples...)...)
}

// signed writes a difference with its sign: a ratio's in percentage
// points.
func (v *Verdict) signed(x float64, f func(float64) string) string {
	if v.unit == Ratio {
		return fmt.Sprintf("%+.2f pp", 100*x)
	}
	out := f(x)
	if !strings.HasPrefix(out, "-") && !strings.HasPrefix(out, "+") {
		out = "+" + out
	}
	return out
}

// WriteMarkdown writes the result as a pull-request comment: for each
// rule the baseline's and the candidate's means, their difference with
// its 95% interval (paired by seed), and the value the rule tests with
// its interval against the bound.
func (g *GateResult) WriteMarkdown(w io.Writer, baseline, candidate string) error {
	verdict := "passed"
	if !g.Pass {
		verdict = "FAILED"
	}
	fails := 0
	for _, v := range g.Verdicts {
		if !v.Pass {
			fails++
		}
	}
	fmt.Fprintf(w, "### gpuplan validate: %s\n\n", verdict)
	fmt.Fprintf(w, "Baseline `%s` against candidate `%s`, %d replications (seeds %d-%d); %d of %d rules failed. Means over the seeds; intervals are 95%% (Student's t, the difference paired by seed).\n\n",
		baseline, candidate, g.Replications, g.Seeds[0], g.Seeds[len(g.Seeds)-1], fails, len(g.Verdicts))
	fmt.Fprintf(w, "| | rule | baseline | candidate | difference (95%% CI) | tested (95%% CI) | bound |\n|---|---|---:|---:|---:|---:|---|\n")
	for _, v := range g.Verdicts {
		mark := "pass"
		if !v.Pass {
			mark = "**FAIL**"
		}
		if !v.Certain {
			mark += " (uncertain)"
		}
		what := v.Metric
		if v.Of != OfCandidate {
			what = v.Of + " of " + v.Metric
		}
		rule := v.Rule
		if !strings.HasPrefix(rule, what+" ") {
			rule += " (" + what + ")"
		}
		f := v.formatter(false, v.BaselineMean, v.CandidateMean, v.Change, v.ChangeLow, v.ChangeHigh)
		diff := fmt.Sprintf("%s (%s to %s)", v.signed(v.Change, f), v.signed(v.ChangeLow, f), v.signed(v.ChangeHigh, f))
		if v.BaselineMean != 0 && v.unit != Ratio {
			diff = fmt.Sprintf("%s, %+.1f%%", diff, 100*v.RelativeChange)
		}
		j := v.judged()
		tested := fmt.Sprintf("%s: %s (%s to %s)", v.Of, j(v.Mean), j(v.CILow), j(v.CIHigh))
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s %s |\n", mark, rule, f(v.BaselineMean), f(v.CandidateMean), diff, tested, v.Op, v.Threshold)
	}
	figs := []reports.RunFigures{g.Baseline, g.Candidate}
	if g.servicesOnly {
		g.writeServiceHeadlines(w)
		fmt.Fprintf(w, "\n`uncertain`: the 95%% confidence interval crosses the bound; more replications would tell.\n")
		return nil
	}
	fmt.Fprintf(w, "\nHeadline figures, first seed (the work each run completed, and its cost per useful GPU-hour, beside the bill):\n\n| | cost | completed | $/useful GPU-h | p95 wait | p50 JCT* | p95 JCT* | allocation |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	cost := reports.MoneyFormat(g.Baseline.Cost, g.Candidate.Cost)
	perH := reports.MoneyFormat(g.Baseline.CostPerUsefulGPUHour, g.Candidate.CostPerUsefulGPUHour)
	wait := reports.DurationFormat(g.Baseline.WaitP95, g.Candidate.WaitP95)
	jct := reports.DurationFormat(g.Baseline.JCTAllP50, g.Candidate.JCTAllP50, g.Baseline.JCTAllP95, g.Candidate.JCTAllP95)
	km := func(x float64) string {
		if x < 0 {
			return "not reached"
		}
		return jct(x)
	}
	for _, f := range figs {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %.1f%% |\n", f.Name, cost(f.Cost), f.Completed, perH(f.CostPerUsefulGPUHour),
			wait(f.WaitP95), km(f.JCTAllP50), km(f.JCTAllP95), 100*f.Allocation)
	}
	fmt.Fprintf(w, "\n`uncertain`: the 95%% confidence interval crosses the bound; more replications would tell. *Completion time over every job, the unfinished ones censored at the end of the run (Kaplan-Meier).\n")
	return nil
}

// writeServiceHeadlines is the headline table of runs of inference
// services alone: no job columns, each service's figures instead.
func (g *GateResult) writeServiceHeadlines(w io.Writer) {
	fmt.Fprintf(w, "\nHeadline figures, first seed (inference services only):\n\n| | service | cost | $/M requests | p95 latency | within SLO | dropped | GPU-h | allocation |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var costs, perM, drops, gpuh []float64
	for _, f := range []reports.RunFigures{g.Baseline, g.Candidate} {
		costs = append(costs, f.Cost)
		for _, v := range f.Services {
			perM, drops, gpuh = append(perM, v.CostPerMillion), append(drops, v.Dropped), append(gpuh, v.GPUHours)
		}
	}
	cost, pm, dr, gh := reports.MoneyFormat(costs...), reports.MoneyFormat(perM...), reports.NumberFormat(drops...), reports.NumberFormat(gpuh...)
	for _, f := range []reports.RunFigures{g.Baseline, g.Candidate} {
		for _, v := range f.Services {
			att, per := "-", "-"
			if v.SLOAttainment > 0 {
				att = fmt.Sprintf("%.2f%%", 100*v.SLOAttainment)
			}
			if v.CostPerMillion > 0 {
				per = pm(v.CostPerMillion)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %.1f ms | %s | %s | %s | %.1f%% |\n", f.Name, v.Name, cost(f.Cost), per, v.P95Ms, att, dr(v.Dropped), gh(v.GPUHours), 100*f.Allocation)
		}
	}
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the result as JUnit XML, one test case per rule.
func (g *GateResult) WriteJUnit(w io.Writer, elapsed time.Duration) error {
	s := junitSuite{Name: "gpuplan validate", Tests: len(g.Verdicts), Time: strconv.FormatFloat(elapsed.Seconds(), 'f', 3, 64)}
	for _, v := range g.Verdicts {
		// Every figure of a case in the judged value's one unit.
		j := v.judged()
		samples := make([]string, len(v.Samples))
		for i, x := range v.Samples {
			samples[i] = j(x)
		}
		what := v.Metric
		if v.Of != OfCandidate {
			what = v.Of + " of " + v.Metric
		}
		c := junitCase{Name: v.Rule, ClassName: "gpuplan.validate",
			SystemOut: fmt.Sprintf("%s %s %s: mean %s, 95%% CI %s to %s, per seed %s", what, v.Op, v.Threshold, j(v.Mean), j(v.CILow), j(v.CIHigh), strings.Join(samples, ", "))}
		if !v.Pass {
			s.Failures++
			c.Failure = &junitFailure{Message: fmt.Sprintf("%s is %s, want %s %s", what, j(v.Mean), v.Op, v.Threshold), Text: c.SystemOut}
		}
		s.Cases = append(s.Cases, c)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	b.WriteString("\n")
	_, err := w.Write(b.Bytes())
	return err
}
