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

func checkCmd(out io.Writer) *cobra.Command {
	var maxEvents int64
	var restrict bool
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
			if err := checkMaxEvents(maxEvents); err != nil {
				return err
			}
			var first error
			for _, f := range args {
				s, err := scenarios.LoadFileWith(f, loadOptions(restrict))
				if err != nil {
					if first == nil {
						first = err
					} else {
						fmt.Fprintln(out, err)
					}
					continue
				}
				if err := pipeline.Check(s, pipeline.Options{File: f, Build: scenarios.Options{MaxEvents: maxEvents}}); err != nil {
					if first == nil {
						first = err
					}
					continue
				}
				fmt.Fprintf(out, "%s: ok (scenario %s)\n", f, s.Metadata.Name)
			}
			return first
		},
	}
	c.Flags().Int64Var(&maxEvents, "max-events", scenarios.DefaultMaxEvents, "the work budget: a scenario whose settings are estimated to make more simulation events is refused (see simulate --help)")
	addRestrictPaths(c.Flags(), &restrict, false)
	return c
}
