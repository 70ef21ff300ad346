package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

func newScenarioCmd(out io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "scenario",
		Short: "Show or check scenario files",
	}
	c.AddCommand(&cobra.Command{
		Use:   "default",
		Short: "Print the built-in default scenario (a starting point for your own)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			_, err := out.Write(scenarios.DefaultYAML())
			return err
		},
	}, checkCmd(out))
	return c
}

// checkOptions are scenario check's flags.
type checkOptions struct {
	files     []string
	maxEvents int64
	restrict  bool
	stdout    io.Writer
}

func checkCmd(out io.Writer) *cobra.Command {
	o := &checkOptions{stdout: out}
	c := &cobra.Command{
		Use:   "check FILE...",
		Short: "Check scenario files as simulate would, running nothing; report the first problem in each (exit 2 if any)",
		Long: `Check loads each scenario file strictly and then makes every check simulate
makes before its clock starts, with the same code: it builds the cluster
(pools, NodePools, node lists, prices, spot and failure models), the
workload (trace or synthetic classes: each class's MIG profile must be one
a pool offers), the inference services (their rate files, TorchServe
config.properties, autoscaler and Deployment or InferenceService manifests,
replica bounds, and a pool each replica can run on), the admission policy
(each class's and service's queue must be one of its LocalQueues), each
what-if variant and the all-on-demand twin, and reads the pricing rules.
It checks the work budget too (see simulate --max-events). Nothing is
simulated.`,
		Args: argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			o.files = args
			if err := checkMaxEvents(o.maxEvents); err != nil {
				return err
			}
			return o.run()
		},
	}
	c.Flags().Int64Var(&o.maxEvents, "max-events", scenarios.DefaultMaxEvents, "the work budget: a scenario whose settings are estimated to make more simulation events is refused (see simulate --help)")
	addRestrictPaths(c.Flags(), &o.restrict, false)
	freeFlag(c, "max-events")
	c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	return c
}

// run checks each file, printing every problem after the first (which
// is the error) and ok for each file that passes.
func (o *checkOptions) run() error {
	var first error
	for _, f := range o.files {
		s, err := scenarios.LoadFileWith(f, loadOptions(o.restrict))
		if err != nil {
			if first == nil {
				first = err
			} else {
				fmt.Fprintln(o.stdout, err)
			}
			continue
		}
		if err := pipeline.Check(s, pipeline.Options{File: f, Build: scenarios.Options{MaxEvents: o.maxEvents}}); err != nil {
			if first == nil {
				first = err
			} else {
				fmt.Fprintln(o.stdout, err)
			}
			continue
		}
		fmt.Fprintf(o.stdout, "%s: ok (scenario %s)\n", f, s.Metadata.Name)
	}
	return first
}
