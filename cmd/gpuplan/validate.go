package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/validate"
)

// failedRules is a gate that did not pass: exit 1.
type failedRules struct{ n, of int }

func (e failedRules) Error() string { return fmt.Sprintf("%d of %d rules failed", e.n, e.of) }
func (failedRules) ExitCode() int   { return 1 }

func newValidateCmd(stdout, stderr io.Writer) *cobra.Command {
	var baseline, candidate, rules, markdown, junit, jsonOut string
	var restrict bool
	var reps, workers int
	var seed uint64
	var maxEvents int64
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
			if baseline == "" || candidate == "" || rules == "" {
				return usageError{fmt.Errorf("--baseline, --candidate and --assert are required")}
			}
			if err := checkMaxEvents(maxEvents); err != nil {
				return err
			}
			if workers < 0 {
				return usageError{fmt.Errorf("--workers %d: want 0 (one per core) or more", workers)}
			}
			if reps < 0 || reps > 1000 {
				return usageError{fmt.Errorf("--replications %d: want 1..1000 (or 0: the rules file's, else 5)", reps)}
			}
			// The outputs' folders are there before any work is done.
			for _, o := range []struct{ flag, path string }{{"markdown", markdown}, {"junit", junit}, {"json", jsonOut}} {
				if err := checkOutputFile(o.flag, o.path); err != nil {
					return err
				}
			}
			data, err := scenarios.ReadInput(rules)
			if err != nil {
				return usageError{err}
			}
			a, err := validate.ParseAssertions(rules, data)
			if err != nil {
				return err
			}
			sides := map[validate.Side]*scenarios.Scenario{}
			for side, path := range map[validate.Side]string{validate.Baseline: baseline, validate.Candidate: candidate} {
				if sides[side], err = scenarios.LoadFileWith(path, loadOptions(restrict)); err != nil {
					return err
				}
			}
			if !cmd.Flags().Changed("seed") {
				seed = sides[validate.Baseline].Seed()
			}
			start := time.Now()
			// Every run on a pool first, in the order Evaluate takes them.
			sums, err := pipeline.Replications([]pipeline.Side{
				{Name: string(validate.Baseline), Scenario: sides[validate.Baseline], File: baseline, MaxEvents: maxEvents},
				{Name: string(validate.Candidate), Scenario: sides[validate.Candidate], File: candidate, MaxEvents: maxEvents},
			}, seed, a.Seeds(reps), workers)
			if err != nil {
				return err
			}
			res, err := validate.Evaluate(a, reps, seed, func(side validate.Side, s uint64) (*reports.Summary, error) {
				i := 0
				if side == validate.Candidate {
					i = 1
				}
				return sums[i][s-seed], nil
			})
			if err != nil {
				return err
			}
			var md bytes.Buffer
			if err := res.WriteMarkdown(&md, baseline, candidate); err != nil {
				return err
			}
			if _, err := stdout.Write(md.Bytes()); err != nil {
				return err
			}
			write := func(path string, fn func(io.Writer) error) error {
				if path == "" {
					return nil
				}
				return reports.WriteFileAtomic(path, fn)
			}
			if err := write(markdown, func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }); err != nil {
				return err
			}
			if err := write(junit, func(w io.Writer) error { return res.WriteJUnit(w, time.Since(start)) }); err != nil {
				return err
			}
			if err := write(jsonOut, func(w io.Writer) error {
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
		},
	}
	f := c.Flags()
	f.StringVar(&baseline, "baseline", "", "the scenario as it is")
	f.StringVar(&candidate, "candidate", "", "the scenario with the change")
	f.StringVar(&rules, "assert", "", "rules file (kind Assertions)")
	f.IntVar(&reps, "replications", 0, "seeds per side (default: the rules file's, else 5)")
	f.Uint64Var(&seed, "seed", 0, "first seed (default: the baseline's spec.seed)")
	f.StringVar(&markdown, "markdown", "", "also write the Markdown summary here")
	f.StringVar(&junit, "junit", "", "write JUnit XML here (its folder must exist)")
	addRestrictPaths(f, &restrict, true)
	f.StringVar(&jsonOut, "json", "", "write the verdicts as JSON here")
	f.IntVar(&workers, "workers", 0, "runs at once (0: one per core); the verdicts do not depend on it")
	addMaxEvents(f, &maxEvents, "each run (both sides, every seed)")
	return c
}
