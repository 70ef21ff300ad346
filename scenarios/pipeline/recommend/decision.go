package recommend

import (
	"fmt"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

// FileDecision is the decision page recommend writes with --out.
const FileDecision = reports.FileDecision

// Decision is the search's answer as the decision page reads it: every
// setting evaluated, the winner and the runner-up, the Pareto front of the
// objective against the first constraint's metric.
func (r *Result) Decision() (*reports.Decision, error) {
	d := &reports.Decision{Command: "recommend", Name: r.Sweep.Base.Metadata.Name, Winner: -1, RunnerUp: -1, ParetoY: -1}
	if d.Name == "" {
		d.Name = "scenario"
	}
	for _, p := range r.Sweep.Params {
		d.Parameters = append(d.Parameters, p.Name)
	}
	for _, m := range r.Sweep.Metrics {
		d.Metrics = append(d.Metrics, reports.DecisionMetric{Name: m.Name, Unit: m.Unit().String(), HigherIsBetter: sweep.HigherIsBetter(m.Name)})
	}
	var err error
	if d.Constraints, err = sweep.DecisionConstraints(r.Constraints, r.Metrics); err != nil {
		return nil, err
	}
	pos := map[*Candidate]int{}
	for i, c := range r.Evaluated {
		pos[c] = i
		p := reports.DecisionPoint{Index: c.Point.Index, Stats: sweep.DecisionStats(c.Stats), Seeds: c.Seeds, Feasible: c.Status == Feasible}
		for _, v := range c.Point.Values {
			p.Settings = append(p.Settings, sweep.FormatValue(v))
		}
		d.Points = append(d.Points, p)
	}
	if r.Winner != nil {
		d.Winner = pos[r.Winner]
	}
	if r.RunnerUp != nil {
		d.RunnerUp = pos[r.RunnerUp]
	}
	if r.paretoOn() {
		d.ParetoY = 1
		for _, c := range r.Pareto {
			d.Pareto = append(d.Pareto, pos[c])
		}
	}
	verb := "Minimising"
	if sweep.HigherIsBetter(r.Objective.Name) {
		verb = "Maximising"
	}
	d.Method = fmt.Sprintf("%s %s over %d of the %d settings (%d simulations; a sweep of every setting at %d seeds would run %d). "+
		"Each setting ran %d seeds first; one whose 95%% interval missed a constraint was dropped, one whose intervals met them all was kept, "+
		"and the rest ran more seeds, up to %d, after which their means decided.",
		verb, r.Objective.Name, len(r.Evaluated), r.Sweep.NumPoints(), r.Runs, r.MaxReps, r.GridRuns, r.MinReps, r.MaxReps)
	return d, nil
}
