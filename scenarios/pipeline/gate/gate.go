package gate

import (
	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/validate"
)

// Options says what to gate.
type Options struct {
	// Baseline and Candidate are the scenario files, Rules the
	// Assertions file.
	Baseline, Candidate, Rules string
	// Replications is the seeds per side (0: the rules file's, else 5).
	Replications int
	// Seed is the first seed (nil: the baseline's spec.seed).
	Seed *uint64
	// Workers is how many runs go at once (0: one per core); the
	// verdicts do not depend on it.
	Workers int
	// MaxEvents is the work budget of every run (0: the default).
	MaxEvents int64
	// Load says how the scenarios are read (--restrict-paths).
	Load scenarios.LoadOptions
	// Progress and Planned follow the runs (pipeline.Options' own).
	Progress func(name string, w *pipeline.Watch) (done func())
	Planned  func(runs int)
}

// Run loads the rules and both scenarios, runs each side on the same
// seeds (every run on a pool, its invariants checked) and evaluates the
// rules. A rules file that cannot be read is bad input
// (*pipeline.InputError, exit 2); the result says whether the gate
// passed.
func Run(o Options) (*validate.GateResult, error) {
	data, err := scenarios.ReadInput(o.Rules)
	if err != nil {
		return nil, &pipeline.InputError{Err: err}
	}
	a, err := validate.ParseAssertions(o.Rules, data)
	if err != nil {
		return nil, err
	}
	sides := map[validate.Side]*scenarios.Scenario{}
	for side, path := range map[validate.Side]string{validate.Baseline: o.Baseline, validate.Candidate: o.Candidate} {
		if sides[side], err = scenarios.LoadFileWith(path, o.Load); err != nil {
			return nil, err
		}
	}
	seed := sides[validate.Baseline].Seed()
	if o.Seed != nil {
		seed = *o.Seed
	}
	// Every run on a pool first, in the order Evaluate takes them.
	sums, err := pipeline.ReplicationsWith([]pipeline.Side{
		{Name: string(validate.Baseline), Scenario: sides[validate.Baseline], File: o.Baseline, MaxEvents: o.MaxEvents},
		{Name: string(validate.Candidate), Scenario: sides[validate.Candidate], File: o.Candidate, MaxEvents: o.MaxEvents},
	}, seed, a.Seeds(o.Replications), o.Workers, pipeline.Options{Progress: o.Progress, Planned: o.Planned})
	if err != nil {
		return nil, err
	}
	return validate.Evaluate(a, o.Replications, seed, func(side validate.Side, s uint64) (*reports.Summary, error) {
		i := 0
		if side == validate.Candidate {
			i = 1
		}
		return sums[i][s-seed], nil
	})
}
