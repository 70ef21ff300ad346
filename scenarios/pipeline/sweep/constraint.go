package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/validate"
)

// Constraint is "METRIC OP BOUND": wait.p95{queue=team-a} <= 30m,
// completed >= 0.99. Bounds are numbers, durations for time metrics
// (in seconds after parsing) or percentages for ratios.
type Constraint struct {
	Text   string
	Metric Metric
	// Op is <= or >= (< and > read as those: a simulated mean is never
	// exactly on a bound that matters).
	Op    string
	Bound float64
}

// ParseConstraint reads one constraint.
func ParseConstraint(s string) (Constraint, error) {
	c := Constraint{Text: strings.TrimSpace(s)}
	var name, bound string
	for _, op := range []string{"<=", ">=", "<", ">"} {
		if a, b, ok := strings.Cut(c.Text, op); ok {
			name, bound, c.Op = strings.TrimSpace(a), strings.TrimSpace(b), op
			break
		}
	}
	switch c.Op {
	case "":
		return c, fmt.Errorf("%s: want METRIC <= BOUND or METRIC >= BOUND", scenarios.Quote(s))
	case "<":
		c.Op = "<="
	case ">":
		c.Op = ">="
	}
	m, err := ParseMetric(name)
	if err != nil {
		return c, err
	}
	c.Metric = m
	if c.Bound, err = parseBound(bound, m.Unit()); err != nil {
		return c, fmt.Errorf("%s: %v", scenarios.Quote(s), err)
	}
	return c, nil
}

func parseBound(v string, unit validate.Unit) (float64, error) {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || unit != validate.Ratio {
			return 0, fmt.Errorf("%s: a percentage bounds a ratio (completed, allocation)", scenarios.Quote(v))
		}
		return f / 100, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f, nil
	}
	if unit == validate.Seconds {
		if d, err := scenarios.ParseDuration(v); err == nil {
			return d.Seconds(), nil
		}
	}
	return 0, fmt.Errorf("the bound %s is not a number%s", scenarios.Quote(v), map[bool]string{true: " or a duration (30m)", false: ""}[unit == validate.Seconds])
}

// Meets says whether value meets the constraint.
func (c Constraint) Meets(v float64) bool {
	if c.Op == "<=" {
		return v <= c.Bound
	}
	return v >= c.Bound
}

// Verdict is what a metric's mean and 95% interval say of a constraint:
// met with confidence (the whole interval meets it), missed with
// confidence (none of it does), or not yet known.
type Verdict int8

const (
	Missed Verdict = iota - 1
	Unsure
	Met
)

// Judge is the verdict on s.
func (c Constraint) Judge(s Stat) Verdict {
	switch {
	case c.Meets(s.Lo) && c.Meets(s.Hi):
		return Met
	case !c.Meets(s.Lo) && !c.Meets(s.Hi):
		return Missed
	}
	return Unsure
}

// Contradiction is the first pair of constraints no value can meet
// together (a metric at most 10 and at least 20), or "" if none.
func Contradiction(cs []Constraint) string {
	for i, a := range cs {
		for _, b := range cs[:i] {
			if a.Metric.canonical != b.Metric.canonical || a.Metric.completed != b.Metric.completed || a.Metric.queue != b.Metric.queue || a.Op == b.Op {
				continue
			}
			lo, hi := a, b
			if a.Op == "<=" {
				lo, hi = b, a
			}
			if lo.Bound > hi.Bound {
				return fmt.Sprintf("%s contradicts %s: no value is both", a.Text, b.Text)
			}
		}
	}
	return ""
}
