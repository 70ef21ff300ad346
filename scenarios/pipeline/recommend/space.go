package recommend

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
	"gpuplan.dev/gpuplan/validate/strict"
)

var rangeRE = regexp.MustCompile(`^([^.,\[\]]+)\.\.([^/,\[\]]+)(?:/(.+))?$`)

// ParseVary reads one --vary: PATH=VALUES or spot:POOL=VALUES, where
// VALUES is a comma-separated list (4,6,8 or 30m,1h), a range FROM..TO
// (step 1) or FROM..TO/STEP (numbers or durations), or a YAML list
// ([[policy/], [policy-cohort/]]).
func ParseVary(s string) (sweep.Parameter, error) {
	var p sweep.Parameter
	lhs, rhs, ok := strings.Cut(s, "=")
	lhs, rhs = strings.TrimSpace(lhs), strings.TrimSpace(rhs)
	if !ok || lhs == "" || rhs == "" {
		return p, fmt.Errorf("--vary %s: want PATH=VALUES or spot:POOL=VALUES", scenarios.Quote(s))
	}
	p.Name = lhs
	if pool, ok := strings.CutPrefix(lhs, "spot:"); ok {
		p.SpotShareOf = pool
	} else {
		p.Path = lhs
	}
	switch m := rangeRE.FindStringSubmatch(rhs); {
	case strings.HasPrefix(rhs, "["):
		if err := strict.Unmarshal([]byte(rhs), &p.Values); err != nil {
			return p, fmt.Errorf("--vary %s: the values are not a YAML list: %v", scenarios.Quote(s), err)
		}
		if p.Values == nil {
			p.Values = []any{}
		}
	case m != nil:
		step := m[3]
		if step == "" {
			step = "1"
		}
		p.Range = &sweep.Range{From: scalar(m[1]), To: scalar(m[2]), Step: scalar(step)}
	default:
		for _, v := range strings.Split(rhs, ",") {
			p.Values = append(p.Values, scalar(strings.TrimSpace(v)))
		}
	}
	return p, nil
}

// scalar is a number when it reads as one, else the text.
func scalar(v string) any {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	return v
}

// CommitmentFigures are the advice's figures a commitment objective's
// answer shows beside it: one level for all a setting's seeds (the one
// that makes their mean bill least), then each seed's figures at it.
func CommitmentFigures() []string {
	return []string{"commitment.level", "commitment.spotBill", "commitment.bill", "commitment.saving", "commitment.breakEven", "commitment.breakEvenFall"}
}

// Space is the sweep recommend searches: the scenario, the parameters
// varied, the objective then each constraint's metric, and maxReps seeds
// (opts: sweep.MaxEvents, the work budget of every run).
func Space(base *scenarios.Scenario, baseBytes []byte, vary []sweep.Parameter, objective sweep.Metric, cons []sweep.Constraint, maxReps int, opts ...sweep.Option) (*sweep.Sweep, error) {
	metrics := []string{objective.Name}
	for _, c := range cons {
		if !contains(metrics, c.Metric.Name) {
			metrics = append(metrics, c.Metric.Name)
		}
	}
	// A commitment objective (commitment.mixBill: the mix of spot, a
	// spend commitment and on-demand) carries the advice's level, the
	// saving, its break-even and the fall in demand it survives, for the
	// answer.
	if strings.HasPrefix(objective.Name, "commitment.") {
		for _, m := range CommitmentFigures() {
			if !contains(metrics, m) {
				metrics = append(metrics, m)
			}
		}
	}
	name := base.Metadata.Name
	if name == "" {
		name = "scenario"
	}
	doc := sweep.Document{Metadata: sweep.Metadata{Name: "recommend-" + strings.ReplaceAll(name, "/", "-")},
		Spec: sweep.Spec{Parameters: vary, Replications: maxReps, Metrics: metrics}}
	return sweep.New(base, baseBytes, doc, opts...)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
