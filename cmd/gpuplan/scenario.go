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
	var restrict bool
	def := &cobra.Command{
		Use:   "default",
		Short: "Print the built-in default scenario (a starting point for your own)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			_, err := out.Write(scenarios.DefaultYAML())
			return err
		},
	}
	check := &cobra.Command{
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
Nothing is simulated.`,
		Args: argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
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
				if err := pipeline.Check(s, pipeline.Options{File: f}); err != nil {
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
	addRestrictPaths(check.Flags(), &restrict, false)
	c.AddCommand(def, check)
	return c
}
