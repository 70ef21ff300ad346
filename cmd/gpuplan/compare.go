package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/reports/compare"
	"gpuplan.dev/gpuplan/scenarios"
)

// readSummaryFile reads a run's summary.json, bounded: a file that is not
// one is bad input (exit 2).
func readSummaryFile(path string) (*reports.Summary, error) {
	b, err := scenarios.ReadFileBounded(path)
	if err != nil {
		var ie *scenarios.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, usageError{fmt.Errorf("%s: %s", path, scenarios.ReadErr(err))}
	}
	s, err := compare.Decode(path, b)
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

type compareOptions struct {
	a, b   string
	output string
	stdout io.Writer
}

func newCompareCmd(stdout io.Writer) *cobra.Command {
	o := &compareOptions{stdout: stdout}
	c := &cobra.Command{
		Use:   "compare A/summary.json B/summary.json",
		Short: "Set two runs' key figures side by side",
		Long: `Set two runs' key figures side by side, with the change: jobs, waits, completion times (over
every job, the unfinished ones censored at the end of the run: Kaplan-Meier, as simulate prints
them), the bill, idle cost and the cost per useful GPU-hour (the bill over completed jobs' work); for runs
with both jobs and services, training's cost per useful GPU-hour and inference's cost per million
requests served instead, each on its share of the bill (cost.byWorkload); and for each inference
service both runs have, its p95 latency, SLO attainment, drops, GPU-hours and cost per million
requests.`,
		Example: `  gpuplan simulate a.yaml --out out/a && gpuplan simulate b.yaml --out out/b
  gpuplan compare out/a/summary.json out/b/summary.json`,
		Args: argsUsage(cobra.ExactArgs(2)),
		RunE: func(_ *cobra.Command, args []string) error {
			o.complete(args)
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	c.Flags().StringVarP(&o.output, "output", "o", "table", "table, json, yaml or markdown")
	enumFlag(c, "output", choicesOf(outputsTable))
	c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
	}
	return c
}

func (o *compareOptions) complete(args []string) { o.a, o.b = args[0], args[1] }

func (o *compareOptions) validate() error {
	return outputsTable().check("output", o.output)
}

func (o *compareOptions) run() error {
	a, err := readSummaryFile(o.a)
	if err != nil {
		return err
	}
	b, err := readSummaryFile(o.b)
	if err != nil {
		return err
	}
	cmp := compare.New(o.a, a, o.b, b)
	switch o.output {
	case "json":
		return cmp.WriteJSON(o.stdout)
	case "yaml":
		return writeYAML(o.stdout, cmp.WriteJSON)
	case "markdown":
		return cmp.WriteMarkdown(o.stdout)
	}
	return cmp.WriteTable(o.stdout)
}
