package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/scenarios"
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
	}, &cobra.Command{
		Use:   "check FILE...",
		Short: "Strictly load scenario files and report the first problem in each (exit 2 if any)",
		Args:  argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			var first error
			for _, f := range args {
				s, err := scenarios.LoadFile(f)
				if err != nil {
					if first == nil {
						first = err
					} else {
						fmt.Fprintln(out, err)
					}
					continue
				}
				if _, err := s.Pools(); err != nil {
					if first == nil {
						first = err
					}
					continue
				}
				fmt.Fprintf(out, "%s: ok (scenario %s)\n", f, s.Metadata.Name)
			}
			return first
		},
	})
	return c
}
