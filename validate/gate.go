package validate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
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
	return a, strict.BoundError(err)
}

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
		e := &strict.InputError{File: file, Field: path, Msg: fmt.Sprintf(format, args...)}
		if lc, ok := pos[path]; ok {
			e.Line, e.Column = lc[0], lc[1]
		}
		return e
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
			return nil, bad(at+".metric", "%v", err)
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
	if unit == Seconds && of != OfRelativeChange {
		d, err := strict.ParseDuration(v)
		if err == nil {
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
	Rule      string  `json:"rule"`
	Metric    string  `json:"metric"`
	Of        string  `json:"of"`
	Op        string  `json:"op"`
	Threshold string  `json:"threshold"`
	Mean      float64 `json:"mean"`
	// Low and High bound the 95% confidence interval of the mean over the
	// replications (Student's t; paired by seed for changes).
	Low     float64   `json:"ciLow"`
	High    float64   `json:"ciHigh"`
	Samples []float64 `json:"samples"`
	Pass    bool      `json:"pass"`
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
	Baseline, Candidate reports.RunFigures
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
	for _, r := range a.Rules {
		unit, _ := MetricUnit(r.Metric)
		v := Verdict{Rule: r.label(), Metric: r.Metric, Of: r.Of, Op: r.Op, Threshold: r.Value.text, unit: unit}
		var baseSum float64
		for i := 0; i < reps; i++ {
			bv, err := Metric(base[i], r.Metric)
			if err != nil {
				return nil, &RuleError{v.Rule, err}
			}
			cv, err := Metric(cand[i], r.Metric)
			if err != nil {
				return nil, &RuleError{v.Rule, err}
			}
			baseSum += bv
			switch r.Of {
			case OfBaseline:
				v.Samples = append(v.Samples, bv)
			case OfCandidate:
				v.Samples = append(v.Samples, cv)
			default:
				v.Samples = append(v.Samples, cv-bv)
			}
		}
		mean, half := meanCI(v.Samples)
		if r.Of == OfRelativeChange {
			// The mean change over the mean baseline (the baseline's own
			// spread is left out of the interval).
			bm := baseSum / float64(reps)
			if bm == 0 {
				return nil, &RuleError{v.Rule, fmt.Errorf("the baseline's %s is 0: a relative change is undefined", r.Metric)}
			}
			mean, half = mean/math.Abs(bm), half/math.Abs(bm)
		}
		v.Mean, v.Low, v.High = mean, mean-half, mean+half
		v.Pass = holds(mean, r.Op, r.threshold)
		v.Certain = holds(v.Low, r.Op, r.threshold) == holds(v.High, r.Op, r.threshold)
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

func (v *Verdict) format(x float64) string {
	if v.Of == OfRelativeChange {
		return fmt.Sprintf("%+.2f%%", 100*x)
	}
	switch v.unit {
	case Seconds:
		return reports.Human(x)
	case Ratio:
		return fmt.Sprintf("%.2f%%", 100*x)
	case USD:
		return reports.Money(x)
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// WriteMarkdown writes the result as a pull-request comment.
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
	fmt.Fprintf(w, "Baseline `%s` against candidate `%s`, %d replications (seeds %d-%d); %d of %d rules failed.\n\n",
		baseline, candidate, g.Replications, g.Seeds[0], g.Seeds[len(g.Seeds)-1], fails, len(g.Verdicts))
	fmt.Fprintf(w, "| | rule | value (95%% CI) | bound |\n|---|---|---|---|\n")
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
		fmt.Fprintf(w, "| %s | %s | %s (%s to %s) | %s %s |\n", mark, rule, v.format(v.Mean), v.format(v.Low), v.format(v.High), v.Op, v.Threshold)
	}
	fmt.Fprintf(w, "\nHeadline figures, first seed (the work each run completed, and its cost per useful GPU-hour, beside the bill):\n\n| | cost | completed | $/useful GPU-h | p95 wait | p50 JCT | p95 JCT | allocation |\n|---|---|---|---|---|---|---|---|\n")
	for _, f := range []reports.RunFigures{g.Baseline, g.Candidate} {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %.1f%% |\n", f.Name, reports.Money(f.Cost), f.Completed, reports.Money(f.CostPerUsefulGPUHour),
			reports.Human(f.WaitP95), reports.Human(f.JCTP50), reports.Human(f.JCTP95), 100*f.Allocation)
	}
	fmt.Fprintf(w, "\n`uncertain`: the 95%% confidence interval crosses the bound; more replications would tell.\n")
	return nil
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
		c := junitCase{Name: v.Rule, ClassName: "gpuplan.validate",
			SystemOut: fmt.Sprintf("%s %s %s: mean %s, 95%% CI %s to %s, samples %v", v.Metric, v.Op, v.Threshold, v.format(v.Mean), v.format(v.Low), v.format(v.High), v.Samples)}
		if !v.Pass {
			s.Failures++
			c.Failure = &junitFailure{Message: fmt.Sprintf("%s is %s, want %s %s", v.Metric, v.format(v.Mean), v.Op, v.Threshold), Text: c.SystemOut}
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
