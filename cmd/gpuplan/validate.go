package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios/pipeline/gate"
	"gpuplan.dev/gpuplan/validate"
)

// failedRules is a gate that did not pass: exit 1.
type failedRules struct{ n, of int }

func (e failedRules) Error() string { return fmt.Sprintf("%d of %d rules failed", e.n, e.of) }
func (failedRules) ExitCode() int   { return 1 }

// validateOptions are validate's flags.
type validateOptions struct {
	baseline, candidate, rules string
	markdown, junit, jsonOut   string
	restrict                   bool
	reps, workers              int
	seed                       uint64
	seedSet                    bool
	maxEvents                  int64
	// progress is --progress.
	progress string

	stdout, stderr io.Writer
	// now is the clock of the JUnit report's elapsed time.
	now func() time.Time
}

func newValidateCmd(stdout io.Writer, now func() time.Time) *cobra.Command {
	o := &validateOptions{stdout: stdout, now: now}
	c := &cobra.Command{
		Use:   "validate --baseline A.yaml --candidate B.yaml --assert RULES.yaml",
		Short: "Gate a change: run baseline and candidate on the same seeds and check rules",
		Long: `Run the baseline and the candidate scenario on the same seeds (--replications of
them, from --seed or the baseline's spec.seed on), read each rule's metric off every run and check it, on the
candidate's (or the baseline's) value or on the change between them, paired by
seed. Each verdict gives the mean and its 95% confidence interval (Student's t over
the replications); a rule passes when the mean meets its bound, and is marked
uncertain when the interval crosses it.

The rules file (kind Assertions):

  apiVersion: gpuplan.dev/v1alpha1
  kind: Assertions
  replications: 5
  rules:
  - {name: team-a waits little, metric: queue.team-a.wait.p95, op: "<=", value: 30m}
  - {metric: cost.total, of: relativeChange, op: "<=", value: 5%}
  - {metric: allocation, op: ">=", value: 0.7}

Metrics: ` + fmt.Sprint(validate.Metrics()) + `; of: candidate (default),
baseline, change or relativeChange. The Markdown summary goes to stdout (and
--markdown FILE), JUnit XML to --junit FILE, the verdicts to --json FILE; each
FILE's folder must exist, which is checked before any run. Exit 0 when every
rule passes, 1 when one fails, 2 on bad input, 3 when an output's folder is not
there or cannot be written.

As a CI gate runs scenarios from pull requests, validate restricts paths by
default: a scenario (and its variants) may name only files in its own folder,
symbolic links followed; --restrict-paths=false lifts that. Special files
(/proc, /sys, devices, FIFOs) are refused by every command.

The runs (both sides, every seed) go to --workers at once, one per core by
default; the verdicts are the same whatever the number.`,
		Example: `  gpuplan validate --baseline scenarios/examples/validate/baseline.yaml \
    --candidate scenarios/examples/validate/candidate.yaml \
    --assert scenarios/examples/validate/rules.yaml --junit report.xml`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.complete(cmd)
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	f := c.Flags()
	f.StringVar(&o.baseline, "baseline", "", "the scenario as it is")
	f.StringVar(&o.candidate, "candidate", "", "the scenario with the change")
	f.StringVar(&o.rules, "assert", "", "rules file (kind Assertions)")
	f.IntVar(&o.reps, "replications", 0, "seeds per side (default: the rules file's, else 5)")
	f.Uint64Var(&o.seed, "seed", 0, "first seed (default: the baseline's spec.seed)")
	f.StringVar(&o.markdown, "markdown", "", "also write the Markdown summary here")
	f.StringVar(&o.junit, "junit", "", "write JUnit XML here (its folder must exist)")
	addRestrictPaths(f, &o.restrict, true)
	f.StringVar(&o.jsonOut, "json", "", "write the verdicts as JSON here")
	f.IntVar(&o.workers, "workers", 0, "runs at once (0: one per core); the verdicts do not depend on it")
	addMaxEvents(f, &o.maxEvents, "each run (both sides, every seed)")
	f.StringVar(&o.progress, "progress", "auto", "one progress line with an ETA on stderr over every run (both sides, every seed): auto (only on a terminal), always or never")
	enumFlag(c, "progress", choicesOf(progressModes))
	fileFlag(c, "baseline", "yaml", "yml")
	fileFlag(c, "candidate", "yaml", "yml")
	fileFlag(c, "assert", "yaml", "yml")
	fileFlag(c, "markdown", "md")
	fileFlag(c, "junit", "xml")
	fileFlag(c, "json", "json")
	freeFlag(c, "replications", "seed", "workers", "max-events")
	return c
}

func (o *validateOptions) complete(cmd *cobra.Command) {
	o.seedSet = cmd.Flags().Changed("seed")
	o.stderr = cmd.ErrOrStderr()
}

func (o *validateOptions) validate() error {
	if o.baseline == "" || o.candidate == "" || o.rules == "" {
		return usageError{fmt.Errorf("--baseline, --candidate and --assert are required")}
	}
	if err := checkMaxEvents(o.maxEvents); err != nil {
		return err
	}
	if err := checkProgress(o.progress); err != nil {
		return err
	}
	if o.workers < 0 {
		return usageError{fmt.Errorf("--workers %d: want 0 (one per core) or more", o.workers)}
	}
	if o.reps < 0 || o.reps > 1000 {
		return usageError{fmt.Errorf("--replications %d: want 1..1000 (or 0: the rules file's, else 5)", o.reps)}
	}
	// The outputs' folders are there before any work is done.
	for _, out := range []struct{ flag, path string }{{"markdown", o.markdown}, {"junit", o.junit}, {"json", o.jsonOut}} {
		if err := checkOutputFile(out.flag, out.path); err != nil {
			return err
		}
	}
	return nil
}

func (o *validateOptions) run() error {
	start := o.now()
	g := gate.Options{Baseline: o.baseline, Candidate: o.candidate, Rules: o.rules, Replications: o.reps,
		Workers: o.workers, MaxEvents: o.maxEvents, Load: loadOptions(o.restrict)}
	if o.seedSet {
		g.Seed = &o.seed
	}
	m := progress{o.progress, o.stderr}.meter(nil)
	if m != nil {
		g.Progress, g.Planned = m.run, m.plan
	}
	res, err := gate.Run(g)
	m.finish()
	if err != nil {
		return err
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md, o.baseline, o.candidate); err != nil {
		return err
	}
	if _, err := o.stdout.Write(md.Bytes()); err != nil {
		return err
	}
	write := func(path string, fn func(io.Writer) error) error {
		if path == "" {
			return nil
		}
		return reports.WriteFileAtomic(path, fn)
	}
	if err := write(o.markdown, func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }); err != nil {
		return err
	}
	if err := write(o.junit, func(w io.Writer) error { return res.WriteJUnit(w, o.now().Sub(start)) }); err != nil {
		return err
	}
	if err := write(o.jsonOut, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}); err != nil {
		return err
	}
	if !res.Pass {
		n := 0
		for _, v := range res.Verdicts {
			if !v.Pass {
				n++
			}
		}
		return failedRules{n, len(res.Verdicts)}
	}
	return nil
}
