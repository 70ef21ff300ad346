// Package pipeline is the run pipeline every command uses: build a loaded
// scenario into its plan, run it on the engine, check its invariants,
// summarise the result with the plan (its prices and pricing rules), run
// its what-if variants and its all-on-demand twin, assemble the outcome's
// summary in one place, and write the whole run into one output folder
// that appears whole or not at all.
//
// No caller can skip the invariant checks: One (which every run goes
// through) checks them inside every run and turns a violation into a
// *BugError (exit status 4) that names the scenario and seed to report.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
)

// Options says how to run a scenario.
type Options struct {
	// Build is passed to Scenario.Build (seed, trace, horizon, policy...).
	Build scenarios.Options
	// File is the scenario's path as the user gave it, for the reports.
	File string
	// Variant, when set, runs only that what-if variant.
	Variant string
	// Progress, when set, is called before each run and returns the
	// function to call after it; it may ask the run for its progress
	// (Watch.Each).
	Progress func(name string, w *Watch) (done func())
	// Planned, when set, is told before any run starts how many runs
	// Scenario makes (the scenario or its variant, each variant, the
	// all-on-demand twin, every spot-sensitivity point): Progress is then
	// called for each of them, the sensitivity's points with a Watch that
	// follows nothing. Whether a variant buys spot is known only once it
	// is built, on a worker: the sensitivity runs of a variant that buys
	// none are taken back with a negative Planned, and are no runs.
	Planned func(runs int)
	// NoVariants skips spec.variants (validate compares whole scenarios).
	NoVariants bool
	// NoSpotTwin skips the all-on-demand comparison run.
	NoSpotTwin bool
	// NoSensitivity skips the spot-savings curve over interruption rates,
	// whatever Sensitivity and the scenario say.
	NoSensitivity bool
	// Sensitivity turns that curve off or on (simulate's
	// --spot-sensitivity); "": as the scenario's
	// spec.output.spotSensitivity says (on by default).
	Sensitivity scenarios.Switch
	// Workers is how many whole runs (variants, the all-on-demand twin,
	// the spot-sensitivity points) may run at once; 0: one per core
	// (GOMAXPROCS). The outcome does not depend on it.
	Workers int

	// Jobs, when set, shares synthetic job streams among the runs made
	// with it (a sweep's points: see JobStreams).
	Jobs *JobStreams

	// SpotSeeds is how many seeds of node supply each spot-sensitivity
	// point replays (simulate's --spot-seeds); 0: as the scenario's
	// spec.output.spotSensitivitySeeds says (DefaultSpotSeeds by default).
	SpotSeeds int

	// stallLimit is sim.Config.StallLimit (the spot sensitivity's points).
	stallLimit sim.Time
	// recordsInMemory is sim.Config.RecordsInMemory (0: its default).
	recordsInMemory int
	// supplyReplicate is sim.Config.SupplyReplicate (the spot
	// sensitivity's seeds).
	supplyReplicate uint64
	// pointHook, when set (tests), is called before each spot-sensitivity
	// point runs; an error it returns is that point's failure.
	pointHook func(mtbf time.Duration) error
}

// SensitivityOn reports whether a run of sc with o replays its spot
// nodes at the sensitivity's MTBFs (when it buys spot).
func SensitivityOn(sc *scenarios.Scenario, o Options) bool {
	switch {
	case o.NoSensitivity:
		return false
	case o.Sensitivity != "":
		return o.Sensitivity == scenarios.On
	}
	return sc.Spec.Output.SpotSensitivity != scenarios.Off
}

// Run is one simulated run: its result and its summary.
type Run struct {
	Name    string
	Result  *sim.Result
	Summary *reports.Summary
}

// Outcome is a scenario's runs: the main one (the scenario as given, or
// the one variant asked for), then every variant when the scenario has
// some. Main.Summary carries the variants' figures and the spot
// comparison.
type Outcome struct {
	Main     Run
	Variants []Run

	workers int // Options.Workers, for WriteDir
}

// BugError is a broken invariant: a bug in gpuplan, not bad input. It
// carries what a bug report needs.
type BugError struct {
	Scenario string
	Seed     uint64
	Run      string
	Err      error
}

func (e *BugError) Error() string {
	run := ""
	if e.Run != "" {
		run = " (" + e.Run + ")"
	}
	return fmt.Sprintf("%v\nThis is a bug in gpuplan, not in your input. Please report it with the scenario file%s and seed %d (rerun: gpuplan simulate %s --seed %d).",
		e.Err, run, e.Seed, e.Scenario, e.Seed)
}

func (e *BugError) Unwrap() error { return e.Err }

// ExitCode is 4: a broken invariant.
func (e *BugError) ExitCode() int { return 4 }

// InputError is a workload the engine refused: bad input, exit 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// ExitCode is 2: bad input.
func (e *InputError) ExitCode() int { return 2 }

func scenarioName(o *Options) string { return nameOr(o.File, "(the built-in default)") }

// One builds and runs one scenario, checks its invariants and summarises
// it: the summary is the run's result read with the built plan (its
// pricing rules, names, notes), not with the scenario document.
func One(sc *scenarios.Scenario, o Options, name string, progress bool) (*Run, error) {
	built, res, err := simulate(sc, o, name, progress)
	if err != nil {
		return nil, err
	}
	defer built.Close()
	sum := reports.Summarize(res, built.Meta(o.File))
	if err := res.RecordsErr(); err != nil {
		return nil, err // the records of a large run could not be read back
	}
	return &Run{Name: name, Result: res, Summary: sum}, nil
}

// simulate builds and runs one scenario and checks its invariants; the
// caller closes what was built.
func simulate(sc *scenarios.Scenario, o Options, name string, progress bool) (*scenarios.Built, *sim.Result, error) {
	built, err := sc.Build(o.Build)
	if err != nil {
		return nil, nil, err
	}
	if o.Jobs != nil {
		built.Config.Workload = o.Jobs.source(sc, built)
		if s, ok := built.Config.Workload.(*sim.SliceSource); ok && built.Config.JobsHint == 0 {
			built.Config.JobsHint = len(s.Jobs)
		}
	}
	if built.Config.JobsHint == 0 {
		built.Config.JobsHint = jobsHint(built.Config.Workload)
	}
	done := func() {}
	if progress && o.Progress != nil {
		done = o.Progress(name, &Watch{HorizonMs: built.Config.Horizon, cfg: &built.Config})
	}
	cfg := built.Config
	cfg.StallLimit = o.stallLimit
	cfg.RecordsInMemory = o.recordsInMemory
	cfg.SupplyReplicate = o.supplyReplicate
	stop := func() {}
	if _, trace := cfg.Workload.(interface{ Info() traces.TraceInfo }); trace {
		// The trace is parsed on another core while the run simulates;
		// stopped before anything else reads the trace or closes it.
		pf := sim.Prefetch(cfg.Workload, cfg.Horizon)
		defer pf.Stop()
		cfg.Workload, stop = pf, pf.Stop
	}
	res, err := sim.Run(cfg)
	stop()
	done()
	seed := built.Config.Seed
	if err == nil {
		err = validate.Invariants(res)
	}
	if err == nil {
		err = res.RecordsErr()
	}
	if err != nil {
		built.Close()
		var we *sim.WorkloadError
		switch {
		case errors.As(err, &we):
			return nil, nil, &InputError{err}
		case validate.IsInvariant(err):
			return nil, nil, &BugError{Scenario: scenarioName(&o), Seed: seed, Run: name, Err: err}
		}
		return nil, nil, err
	}
	return built, res, nil
}

// Scenario runs a scenario as `gpuplan simulate` does: the scenario (or
// the one variant asked for), then each variant, then, when it uses spot
// nodes, the same run with every spot node bought on-demand. These runs
// are independent and go to a pool of o.Workers; the outcome is the same
// whatever their number.
func Scenario(sc *scenarios.Scenario, o Options) (*Outcome, error) {
	gc := startGCFloor(Workers(o.Workers)) // before anything is built: see gcFloor
	defer gc.stop()
	if o.Build.Cache == nil {
		// Every run builds its scenario: what they share is done once.
		o.Build.Cache = &scenarios.BuildCache{}
	}
	base := sc
	if o.Variant != "" {
		v, err := sc.Variant(o.Variant)
		if err != nil {
			return nil, err
		}
		sc = v
	}
	// The runs, in the order a single worker takes them; an error that
	// stops one is its own (a variant that does not patch, say), so the
	// first in this order wins as it did when they ran one by one. Each
	// run's scenario (a variant, the all-on-demand twin) is built on the
	// workers by the first run that needs it, not one after another
	// before the pool starts.
	type job struct {
		name string
		sc   func() (*scenarios.Scenario, error)
		wrap string // prefixes the run's error
	}
	given := func() (*scenarios.Scenario, error) { return sc, nil }
	jobs := []job{{name: o.Variant, sc: given}}
	if o.Variant != "" {
		jobs[0].wrap = "variant " + o.Variant
	}
	variants := o.Variant == "" && !o.NoVariants && len(base.Spec.Variants) > 0
	if variants {
		for _, name := range base.VariantNames() {
			build := sync.OnceValues(func() (*scenarios.Scenario, error) { return base.Variant(name) })
			jobs = append(jobs, job{name: name, sc: build, wrap: "variant " + name})
		}
	}
	twin := !o.NoSpotTwin && sc.UsesSpot()
	if twin {
		od := sync.OnceValues(func() (*scenarios.Scenario, error) {
			s, _ := given()
			return s.OnDemandOnly()
		})
		jobs = append(jobs, job{name: "all on-demand", sc: od, wrap: "the all-on-demand comparison run"})
	}
	// The spot sensitivity curves of the runs that use spot (the scenario,
	// then each variant) go to the same pool after the runs above, so that
	// no worker waits at the end of one curve for another's slowest run.
	// Whether a variant uses spot is known once it is built, on a worker:
	// every variant has a curve's runs in the pool, and those of a variant
	// without spot do nothing.
	type curveJob struct {
		name  string
		c     *spotCurve
		run   int // the job whose spot use the curve varies
		first int // the pool index of the curve's first run
		// unplan takes the curve's runs back from the plan, once, when
		// its variant proves to buy no spot.
		unplan sync.Once
	}
	var curves []curveJob
	n := len(jobs)
	if SensitivityOn(sc, o) {
		add := func(name string, run int) {
			c := newSpotCurve(name, jobs[run].sc, o, reports.SpotMTBFGrid(), SpotSeeds(sc, o))
			curves = append(curves, curveJob{name: name, c: c, run: run, first: n})
			n += c.runs()
		}
		if sc.UsesSpot() {
			add(nameOr(o.Variant, "as given"), 0)
		}
		if variants {
			for k, name := range base.VariantNames() {
				add(name, 1+k)
			}
		}
	}
	// The scenario's own curve starts with the run the all-on-demand twin
	// is (the same scenario and options): it takes the twin's summary
	// rather than run it again.
	twinned := func(cj *curveJob) bool { return twin && cj.run == 0 }
	// usesSpot is whether job run's scenario uses spot (false when it did
	// not build: that run fails first, at a lower index).
	usesSpot := func(run int) bool {
		s, err := jobs[run].sc()
		return err == nil && s.UsesSpot()
	}
	type result struct {
		run *Run
		sum *reports.Summary // a curve's run
	}
	unplan := func(cj *curveJob) {
		if o.Planned != nil {
			cj.unplan.Do(func() { o.Planned(-cj.c.runs()) })
		}
	}
	workers := min(Workers(o.Workers), n)
	gc.setWorkers(workers)
	if o.Planned != nil {
		o.Planned(n)
	}
	res, err := Pool(context.Background(), n, workers, func(_ context.Context, i int) (result, error) {
		if i >= len(jobs) {
			k := sort.Search(len(curves), func(k int) bool { return curves[k].first > i }) - 1
			cj := &curves[k]
			if !usesSpot(cj.run) {
				// A variant without spot has no curve: its slots are no runs.
				unplan(cj)
				return result{}, nil
			}
			if o.Progress != nil {
				defer o.Progress(cj.name+" spot sensitivity", &Watch{})()
			}
			if i == cj.first && twinned(cj) {
				return result{}, nil
			}
			sum, err := cj.c.run(i - cj.first)
			if err != nil {
				return result{}, fmt.Errorf("the spot sensitivity of %s: %w", cj.name, err)
			}
			return result{sum: sum}, nil
		}
		j := &jobs[i]
		s, err := j.sc()
		if err != nil {
			return result{}, err
		}
		if !s.UsesSpot() {
			for k := range curves {
				if curves[k].run == i {
					unplan(&curves[k])
				}
			}
		}
		r, err := One(s, o, j.name, true)
		if err != nil && j.wrap != "" {
			err = fmt.Errorf("%s: %w", j.wrap, err)
		}
		return result{run: r}, err
	})
	if err != nil {
		return nil, err
	}
	runs := make([]*Run, len(jobs))
	for i := range runs {
		runs[i] = res[i].run
	}
	var vs []*Run
	if variants {
		vs = runs[1 : 1+len(base.Spec.Variants)]
	}
	var tw *Run
	if twin {
		tw = runs[len(runs)-1]
	}
	var sens []reports.SpotCurve
	for k := range curves {
		cj := &curves[k]
		if !usesSpot(cj.run) {
			continue
		}
		od := res[cj.first].sum
		if twinned(cj) {
			od = tw.Summary
		}
		sens = append(sens, *cj.c.finish(od, runs[cj.run].Summary))
	}
	return assemble(runs[0], vs, tw, sens, o.Workers), nil
}

// assemble is the one place an outcome's summary is put together beyond
// what reports.Summarize makes of one run and its plan: the variants'
// figures, each paired with the run as given; the comparison with the
// all-on-demand twin (nil: none); the spot sensitivity curves.
func assemble(main *Run, variants []*Run, twin *Run, curves []reports.SpotCurve, workers int) *Outcome {
	out := &Outcome{Main: *main, workers: workers}
	sum := out.Main.Summary
	if len(variants) > 0 {
		sum.Variants = []reports.RunFigures{reports.Figures("(as given)", sum)}
		for _, vr := range variants {
			f := reports.Figures(vr.Name, vr.Summary)
			reports.PairWithBase(&f, &sum.Variants[0], vr.Result, main.Result)
			sum.Variants = append(sum.Variants, f)
			out.Variants = append(out.Variants, *vr)
		}
	}
	if twin != nil {
		sum.SpotVsOnDemand = reports.CompareSpot(sum, twin.Summary, main.Result, twin.Result)
	}
	sum.SpotSensitivity = append(sum.SpotSensitivity, curves...)
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Watch is what a progress display sees of one run before it starts: the
// simulated time it will cover (0: until the workload drains) and a way to
// follow it.
type Watch struct {
	HorizonMs int64
	cfg       *sim.Config
}

// Each asks the run to call f as it goes with the simulated time (ms) and
// the jobs submitted and finished so far.
func (w *Watch) Each(f func(nowMs int64, submitted, finished int)) {
	if w.cfg == nil {
		return
	}
	w.cfg.Progress = func(p sim.Progress) { f(p.Now, p.Submitted, p.Finished) }
}
