package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports/outdir"
)

// version, when set at build time with -ldflags "-X main.version=...",
// overrides the module version the build info records.
var version = "dev"

func newRootCmd(in io.Reader, out, errOut io.Writer, t *outdir.Tracker) *cobra.Command {
	v := readVersion(debug.ReadBuildInfo, version)
	root := &cobra.Command{
		Use:   "gpuplan",
		Short: "Simulate and plan Kubernetes GPU clusters offline",
		Long: `gpuplan replays GPU workload traces (or synthetic workloads) against modelled
Kubernetes node pools in a deterministic discrete-event simulation (spot
interruptions, failures, autoscaling and checkpointing jobs included), and reports
GPU allocation, idle GPU-hours, queue waits, completion times, why jobs waited and,
for priced pools, what it all costs.

Exit status: 0 success; 1 a failed assertion (validate); 2 bad input or usage
(the message names the file, line and field); 3 an I/O or environment failure
(an unwritable folder, a full disk); 4 a broken invariant, a bug in gpuplan (the
message gives the seed to report it with). An output folder (--out) is built
aside and put in place whole: it holds the earlier run or the new one, never a mix.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       v.String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newSimulateCmd(out, errOut, t), newScenarioCmd(out), newInflateCmd(out), newAdviseCmd(out), newTraceCmd(out, errOut), newCalibrateCmd(out, errOut), newValidateCmd(out, time.Now), newCompareCmd(out), newManifestsCmd(out, t), newSweepCmd(out, errOut), newRecommendCmd(out, errOut, t), newVersionCmd(out, v))
	return root
}

// argsUsage wraps a cobra argument check so a mistake exits 2.
func argsUsage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
		}
		return nil
	}
}
