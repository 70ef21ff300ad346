package recommend

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/manifests"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

// Files a recommendation writes.
const (
	FileJSON      = "recommend.json"
	FileScenario  = "scenario.yaml"
	DirManifests  = "manifests"
	scenarioLabel = "-recommended"
)

// WriteText prints the answer: the winner and the runner-up with their
// 95% intervals, the Pareto front, and how many runs the search took.
func (r *Result) WriteText(w io.Writer, o Options) error {
	fmt.Fprintf(w, "Searched %d of the %d settings with %d simulations (a sweep of every setting at %d seeds: %d).\n",
		len(r.Evaluated), r.Sweep.NumPoints(), r.Runs, o.MaxReps, r.GridRuns)
	var cons []string
	for _, c := range o.Constraints {
		cons = append(cons, c.Text)
	}
	if len(cons) == 0 {
		fmt.Fprintf(w, "Minimising %s (no --subject-to: every setting is feasible).\n\n", o.Objective.Name)
	} else {
		fmt.Fprintf(w, "Minimising %s subject to %s.\n\n", o.Objective.Name, strings.Join(cons, ", "))
	}
	for _, x := range []struct {
		label string
		c     *Candidate
	}{{"Winner", r.Winner}, {"Runner-up", r.RunnerUp}} {
		if x.c == nil {
			if x.label == "Winner" {
				fmt.Fprintf(w, "No setting searched meets every constraint.\n")
			}
			continue
		}
		fmt.Fprintf(w, "%s: %s (%d seeds)\n", x.label, r.Sweep.Describe(x.c.Point), x.c.Seeds)
		for m, name := range r.Metrics {
			st := x.c.Stats[m]
			unit := r.Sweep.Metrics[m].Unit().String()
			lo, hi := reports.UnitClip(unit, st.Lo, st.Hi)
			f := reports.UnitFormat(unit, st.Mean, lo, hi)
			fmt.Fprintf(w, "  %-28s %s  95%% interval [%s, %s]\n", name, f(st.Mean), f(lo), f(hi))
		}
		if slices.Contains(r.Metrics, "commitment.level") {
			fmt.Fprintf(w, "  (one commitment level for all %d seeds: the one whose mean bill over them is least; the other commitment figures are each seed's at that level, the break-even each seed's own)\n", x.c.Seeds)
		}
	}
	if len(r.Pareto) > 0 && r.paretoOn() {
		fmt.Fprintf(w, "\nPareto front of %s against %s (settings searched):\n", r.Metrics[0], r.Metrics[1])
		var xs, ys []float64
		for _, c := range r.Pareto {
			xs, ys = append(xs, c.Stats[0].Mean), append(ys, c.Stats[1].Mean)
		}
		fx := reports.UnitFormat(r.Sweep.Metrics[0].Unit().String(), xs...)
		fy := reports.UnitFormat(r.Sweep.Metrics[1].Unit().String(), ys...)
		for _, c := range r.Pareto {
			fmt.Fprintf(w, "  %-12s %-12s %s: %s\n", fx(c.Stats[0].Mean), fy(c.Stats[1].Mean), r.Sweep.Describe(c.Point), r.why(c))
		}
	}
	return nil
}

// why is what the search concluded of c, naming for a setting that
// misses a constraint which one and its value there: the first whose 95%
// interval misses it, else (decided on the means after --max-seeds) the
// first whose mean does.
func (r *Result) why(c *Candidate) string {
	if c.Status != Infeasible {
		return string(c.Status)
	}
	for _, byMean := range []bool{false, true} {
		for _, con := range r.Constraints {
			m := slices.Index(r.Metrics, con.Metric.Name)
			if m < 0 {
				continue
			}
			st := c.Stats[m]
			if !byMean && con.Judge(st) != sweep.Missed || byMean && con.Meets(st.Mean) {
				continue
			}
			gap, side := st.Mean-con.Bound, "over"
			if gap < 0 {
				gap, side = -gap, "under"
			}
			f := reports.UnitFormat(r.Sweep.Metrics[m].Unit().String(), st.Mean, con.Bound, gap)
			return fmt.Sprintf("misses %s at %s (%s %s the bound)", con.Text, f(st.Mean), f(gap), side)
		}
	}
	return string(c.Status)
}

type jsonCandidate struct {
	Index     int          `json:"index"`
	Settings  []any        `json:"settings"`
	Seeds     int          `json:"seeds"`
	Status    Status       `json:"status"`
	Confident bool         `json:"confident"`
	Metrics   []sweep.Stat `json:"metrics"`
}

func jc(c *Candidate) *jsonCandidate {
	if c == nil {
		return nil
	}
	return &jsonCandidate{c.Point.Index, c.Point.Values, c.Seeds, c.Status, c.Confident, c.Stats}
}

// WriteDir writes recommend.json (every point searched), decision.html
// (the answer, the Pareto front, the sensitivity), and for a winner
// scenario.yaml (the base scenario with the winning settings) and its
// manifests (gpuplan manifests' objects) under manifests/.
func (r *Result) WriteDir(dir string) error {
	out := struct {
		Parameters []string         `json:"parameters"`
		Metrics    []string         `json:"metrics"`
		Runs       int              `json:"runs"`
		GridRuns   int              `json:"gridRuns"`
		Winner     *jsonCandidate   `json:"winner"`
		RunnerUp   *jsonCandidate   `json:"runnerUp"`
		Pareto     []int            `json:"pareto"`
		Evaluated  []*jsonCandidate `json:"evaluated"`
	}{Metrics: r.Metrics, Runs: r.Runs, GridRuns: r.GridRuns, Winner: jc(r.Winner), RunnerUp: jc(r.RunnerUp)}
	for _, p := range r.Sweep.Params {
		out.Parameters = append(out.Parameters, p.Name)
	}
	for _, c := range r.Pareto {
		out.Pareto = append(out.Pareto, c.Point.Index)
	}
	for _, c := range r.Evaluated {
		out.Evaluated = append(out.Evaluated, jc(c))
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, FileJSON), append(b, '\n'), 0o644); err != nil {
		return err
	}
	d, err := r.Decision()
	if err != nil {
		return err
	}
	page, err := d.HTML()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, FileDecision), page, 0o644); err != nil {
		return err
	}
	if r.Winner == nil {
		return nil
	}
	sc, err := r.Sweep.Scenario(r.Winner.Point)
	if err != nil {
		return err
	}
	m, err := sc.Cluster()
	if err != nil {
		return err
	}
	files, _, err := manifests.Generate(sc, m, manifests.Options{})
	if err != nil {
		return err
	}
	if err := manifests.WriteDir(filepath.Join(dir, DirManifests), files); err != nil {
		return err
	}
	base := r.Sweep.Base
	sc.Metadata.Name = base.Metadata.Name + scenarioLabel
	sc.Metadata.Description = "gpuplan recommend: " + r.Sweep.Describe(r.Winner.Point)
	// The files the scenario names are relative to the base scenario's
	// folder; written elsewhere, they are made relative to dir.
	if f := base.File(); f != "" && f != scenarios.DefaultName {
		rel := func(p string) string {
			if p == "" || filepath.IsAbs(p) {
				return p
			}
			abs, err := filepath.Abs(filepath.Join(filepath.Dir(f), p))
			if err != nil {
				return p
			}
			d, err := filepath.Abs(dir)
			if err != nil {
				return p
			}
			if r, err := filepath.Rel(d, abs); err == nil {
				if strings.HasSuffix(p, "/") && !strings.HasSuffix(r, "/") {
					r += "/"
				}
				return filepath.ToSlash(r)
			}
			return p
		}
		sc.RebasePaths(rel)
	}
	y, err := yaml.Marshal(sc)
	if err != nil {
		return err
	}
	head := fmt.Sprintf("# Written by gpuplan recommend: %s with %s.\n", base.Metadata.Name, r.Sweep.Describe(r.Winner.Point))
	return os.WriteFile(filepath.Join(dir, FileScenario), append([]byte(head), y...), 0o644)
}
