package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports/outdir"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline/recommend"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

type recommendOptions struct {
	minimize     string
	subjectTo    []string
	vary         []string
	out          string
	search       recommend.Options
	stdout       io.Writer
	tracker      *outdir.Tracker
	scenarioFile string
	restrict     bool
	// progress is --progress, stderr where its line is drawn and now its
	// clock (nil: time.Now).
	progress  string
	stderr    io.Writer
	now       func() time.Time
	maxEvents int64
	// params are the --vary settings parsed (validate).
	params []sweep.Parameter
}

func newRecommendCmd(stdout, stderr io.Writer, t *outdir.Tracker) *cobra.Command {
	o := &recommendOptions{stdout: stdout, stderr: stderr, tracker: t}
	c := &cobra.Command{
		Use:   "recommend [SCENARIO] --vary PATH=VALUES... --subject-to 'METRIC <= BOUND'...",
		Short: "Find the cheapest setting that meets every constraint, with 95% intervals, and write it as manifests",
		Long: `Search the settings of a scenario (the built-in default when none is given) for the
one that minimises --minimize (default cost.total) while meeting every --subject-to,
and report it with the runner-up and the Pareto front of the objective against the
first constraint's metric.

--vary PATH=VALUES sets a field of the scenario's spec (as in a Sweep spec:
cluster.pools[l4].count, workload.recovery.checkpoint.interval, policy.manifests);
--vary spot:POOL=VALUES splits a pool into on-demand and spot nodes. VALUES is a
list (4,6,8 or 30m,1h), a range (2..12, 2..12/2, 30m..2h/30m) or a YAML list
([[policy/], [policy-cohort/]]). Constraints read METRIC <= BOUND or METRIC >= BOUND
with validate's metrics, wait.p95{queue=team-a}, or completed (the share of jobs
completed); bounds are numbers, durations (30m) or percentages (99%).

The mix of spot, a spend commitment and on-demand: with pricing.commitmentAdvice
in the scenario (or --vary pricing.commitmentAdvice.discount=0.3), --minimize
commitment.mixBill --vary spot:POOL=0..1/0.25 runs each spot share with its SLOs
checked, bills each run's on-demand demand with one commitment for all the share's
seeds (the level whose mean bill over them is least, not each seed's own chosen with
hindsight) and its spot GPU-hours at the spot price, and shows the winner's level
with each seed's bill, saving, break-even and the fall in demand the level survives
at it, their means and 95% intervals.

The search: a coarse grid (--coarse values of each parameter, ends included), then
every setting in the box around the best coarse one, then neighbours while one is
better. Each setting runs --min-seeds seeds; a setting whose 95% interval (Student's
t) misses a constraint is dropped at once, one whose intervals meet them all is
kept, and only the rest get more seeds, two at a time up to --max-seeds, after
which their means decide. Every run goes through the run pipeline (invariants
checked). The report says how many simulations it took against a sweep of every
setting at --max-seeds seeds.

With --out DIR: DIR/recommend.json (every setting searched), DIR/decision.html (one
self-contained page that leads with the answer: the setting, its cost, its margin
against each constraint with 95% intervals, the runner-up and why it lost, the
cheaper settings rejected and the constraint each missed; then the Pareto front,
every point linked to its row, and how the cost moves along each parameter),
DIR/scenario.yaml (the
winner, paths relative to DIR) and DIR/manifests/ (what gpuplan manifests writes for
it), the folder put in place whole. Exit status: 0 (a winner or none), 2 bad input,
4 a broken invariant.`,
		Example: `  gpuplan recommend scenarios/examples/two-teams/scenario.yaml \
    --vary 'cluster.pools[l4].count=3..10' --vary 'policy.manifests=[[policy/], [policy-cohort/]]' \
    --subject-to 'wait.p95{queue=team-a} <= 5h' --subject-to 'completed >= 0.8' --out out/recommend`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.scenarioFile = args[0]
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	f := c.Flags()
	addRestrictPaths(f, &o.restrict, false)
	f.StringVar(&o.minimize, "minimize", "cost.total", "the metric to minimise (or maximise, for completed and allocation)")
	f.StringArrayVar(&o.subjectTo, "subject-to", nil, "a constraint, METRIC <= BOUND or METRIC >= BOUND (repeatable)")
	f.StringArrayVar(&o.vary, "vary", nil, "a setting to search: PATH=VALUES or spot:POOL=VALUES (repeatable)")
	f.StringVar(&o.out, "out", "", "write recommend.json, the winning scenario and its manifests into this folder")
	f.IntVar(&o.search.MinReps, "min-seeds", 3, "seeds each setting runs first")
	f.IntVar(&o.search.MaxReps, "max-seeds", 5, "seeds a setting runs at most, where the intervals do not decide")
	f.IntVar(&o.search.Coarse, "coarse", 4, "values of each parameter in the first grid")
	f.IntVar(&o.search.Workers, "workers", 0, "runs at once (0: one per core); the answer does not depend on it")
	f.StringVar(&o.progress, "progress", "auto", "one progress line on stderr over the search: its stage, the runs done of those planned so far and an ETA for them: auto (only on a terminal), always or never")
	addMaxEvents(f, &o.maxEvents, "each run (every setting, every seed; each --vary value is checked against it first)")
	scenarioArgs(c)
	dirFlag(c, "out")
	// The metrics, the scenario's services and pools spelled out (the
	// built-in default's without a scenario); --vary the pools' settings.
	must(c.RegisterFlagCompletionFunc("minimize", scenarioOrDefault(recommendMetrics)))
	must(c.RegisterFlagCompletionFunc("subject-to", scenarioOrDefault(recommendMetrics)))
	must(c.RegisterFlagCompletionFunc("vary", scenarioOrDefault(varyCompletions)))
	freeFlag(c, "min-seeds", "max-seeds", "coarse", "workers", "max-events")
	enumFlag(c, "progress", choicesOf(progressModes))
	return c
}

// maxCoarse bounds --coarse: the first grid has coarse^parameters points.
const maxCoarse = 100

var paramField = regexp.MustCompile(`^spec\.parameters\[(\d+)\]`)

// validate checks the flags and parses the objective, the constraints
// and the settings varied, before any scenario is read.
func (o *recommendOptions) validate() error {
	if len(o.vary) == 0 {
		return usageError{fmt.Errorf("give at least one --vary PATH=VALUES")}
	}
	switch {
	case o.search.MinReps < 2 || o.search.MinReps > sweep.MaxReplications:
		return usageError{fmt.Errorf("--min-seeds %d: want 2..%d (an interval needs two seeds)", o.search.MinReps, sweep.MaxReplications)}
	case o.search.MaxReps < o.search.MinReps || o.search.MaxReps > sweep.MaxReplications:
		return usageError{fmt.Errorf("--max-seeds %d: want --min-seeds (%d)..%d", o.search.MaxReps, o.search.MinReps, sweep.MaxReplications)}
	case o.search.Coarse < 2 || o.search.Coarse > maxCoarse:
		return usageError{fmt.Errorf("--coarse %d: want 2..%d values of each parameter in the first grid", o.search.Coarse, maxCoarse)}
	case o.search.Workers < 0:
		return usageError{fmt.Errorf("--workers %d: want 0 (one per core) or more", o.search.Workers)}
	}
	if err := checkMaxEvents(o.maxEvents); err != nil {
		return err
	}
	if err := checkProgress(o.progress); err != nil {
		return err
	}
	obj, err := sweep.ParseMetric(o.minimize)
	if err != nil {
		return badFlag("minimize", o.minimize, strings.TrimPrefix(err.Error(), q(o.minimize)+": "))
	}
	o.search.Objective = obj
	for _, s := range o.subjectTo {
		c, err := sweep.ParseConstraint(s)
		if err != nil {
			return badFlag("subject-to", s, strings.TrimPrefix(err.Error(), q(s)+": "))
		}
		o.search.Constraints = append(o.search.Constraints, c)
		if msg := sweep.Contradiction(o.search.Constraints); msg != "" {
			return badFlag("subject-to", s, strings.TrimPrefix(msg, c.Text+" "))
		}
	}
	o.params = nil
	for _, v := range o.vary {
		p, err := recommend.ParseVary(v)
		if err != nil {
			return usageError{err}
		}
		o.params = append(o.params, p)
	}
	return nil
}

func (o *recommendOptions) run(ctx context.Context) error {
	var err error
	var base *scenarios.Scenario
	var data []byte
	if o.scenarioFile == "" {
		base, err = scenarios.Default()
		data = scenarios.DefaultYAML()
	} else if data, err = scenarios.ReadFileBounded(o.scenarioFile); err == nil {
		base, err = scenarios.ParseWith(o.scenarioFile, filepath.Dir(o.scenarioFile), data, loadOptions(o.restrict))
	}
	if err != nil {
		return err
	}
	sw, err := recommend.Space(base, data, o.params, o.search.Objective, o.search.Constraints, o.search.MaxReps, sweep.MaxEvents(o.maxEvents))
	if err != nil {
		// Name the --vary, not the spec field it became.
		var ie *scenarios.InputError
		if errors.As(err, &ie) {
			if m := paramField.FindStringSubmatch(ie.Field); m != nil {
				i, _ := strconv.Atoi(m[1])
				if i < len(o.vary) {
					return usageError{fmt.Errorf("--vary %s: %s", scenarios.Quote(o.vary[i]), ie.Msg)}
				}
			}
		}
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	search := o.search
	m := progress{o.progress, o.stderr}.meter(o.now)
	if m != nil {
		search.Progress = searchMeter{m}
	}
	res, err := recommend.Search(ctx, sw, search)
	m.finish()
	if err != nil {
		return err
	}
	if err := res.WriteText(o.stdout, o.search); err != nil {
		return err
	}
	if o.out == "" {
		return nil
	}
	folder := outdir.Options{Kind: "recommend", Tracker: o.tracker, Ours: func(names []string) bool {
		return slices.Contains(names, recommend.FileJSON)
	}}
	if err := outdir.Write(o.out, folder, res.WriteDir); err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "\nWrote %s/%s, %s/%s", o.out, recommend.FileJSON, o.out, recommend.FileDecision)
	if res.Winner != nil {
		fmt.Fprintf(o.stdout, ", %s/%s and %s/%s/", o.out, recommend.FileScenario, o.out, recommend.DirManifests)
	}
	fmt.Fprintln(o.stdout)
	return nil
}
