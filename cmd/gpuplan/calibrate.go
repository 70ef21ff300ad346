package main

import (
	"context"
	"errors"
	"fmt"
	"gpuplan.dev/gpuplan/scenarios"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/benchmarks/calibrate"
	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/reports"
)

type calibrateOptions struct {
	out, output string
	nccl        calibrate.Options
	skipNCCL    bool
	stdout      io.Writer
	stderr      io.Writer
}

// validateOutput checks the flags of the profile's output, before any
// work.
func (o *calibrateOptions) validateOutput() error {
	if err := outputsProfile().check("output", o.output); err != nil {
		return err
	}
	if err := checkOutputFile("out", o.out); err != nil {
		return usageError{err}
	}
	return nil
}

// validate checks calibrate's flags before NVML is asked anything.
func (o *calibrateOptions) validate() error {
	if err := o.validateOutput(); err != nil {
		return err
	}
	if o.nccl.GPUs < 0 {
		return usageError{fmt.Errorf("--gpus %d: want 0 (every GPU found) or more", o.nccl.GPUs)}
	}
	for _, s := range []struct{ flag, v string }{{"min-bytes", o.nccl.MinBytes}, {"max-bytes", o.nccl.MaxBytes}} {
		if !ncclSize(s.v) {
			return badFlag(s.flag, s.v, "want a size in bytes as nccl-tests reads it: digits with an optional K, M or G (8, 64M, 4G)")
		}
	}
	if o.nccl.Timeout <= 0 {
		return usageError{fmt.Errorf("--timeout %s: want a positive duration", o.nccl.Timeout)}
	}
	return nil
}

// ncclSize reports whether s is a size nccl-tests' -b and -e read: digits
// and an optional K, M or G (either case).
func ncclSize(s string) bool {
	digits := strings.TrimRight(s, "KMGkmg")
	if len(s)-len(digits) > 1 || digits == "" {
		return false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func (o *calibrateOptions) write(p *models.CalibrationProfile) error {
	if o.out == "" {
		return calibrate.WriteProfile(o.stdout, p, o.output)
	}
	if err := reports.WriteFileAtomic(o.out, func(w io.Writer) error { return calibrate.WriteProfile(w, p, o.output) }); err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "Wrote %s: %d fabrics.\n", o.out, len(p.Fabrics))
	return nil
}

func newCalibrateCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &calibrateOptions{stdout: stdout, stderr: stderr}
	c := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure this GPU node (NVML, nccl-tests) and write a calibration profile",
		Long: `On a GPU node: enumerate the GPUs with NVML (name, UUID, memory, MIG mode and the MIG
profiles each supports, compute capability, power limit, clocks), the NVLink and
PCIe topology between every pair and the node's CPUs and memory; then, when the
nccl-tests binaries are found (--nccl-tests DIR, or on PATH), run all_reduce_perf,
all_gather_perf and reduce_scatter_perf over a size sweep (each within --timeout),
and fit each fabric's latency (alpha, from messages up to 1 MiB) and bus bandwidth
(from messages of 64 MiB and more). The profile (kind CalibrationProfile) is YAML
or JSON; a scenario's spec.calibration uses it.

Without NVML (not a GPU node) it says so and exits 2; 'gpuplan calibrate parse'
builds a profile from saved nccl-tests output anywhere.`,
		Example: `  gpuplan calibrate --nccl-tests ~/nccl-tests/build --out node.yaml
  gpuplan calibrate parse all_reduce.txt --output json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			node, err := calibrate.DiscoverNode()
			if err != nil {
				if calibrate.NoNVML(err) {
					return usageError{err}
				}
				return err
			}
			fmt.Fprintf(stderr, "Found %d GPUs (%s).\n", len(node.GPUs), node.Interconnect)
			p := &models.CalibrationProfile{APIVersion: models.ProfileAPIVersion, Kind: models.ProfileKind, Node: node}
			if !o.skipNCCL {
				runs, notes, err := calibrate.RunNCCL(context.Background(), o.nccl, stderr)
				p.Notes = notes
				if err != nil {
					p.Notes = append(p.Notes, err.Error())
					fmt.Fprintf(stderr, "gpuplan: %v; the profile has the node's facts only\n", err)
				} else if built, err := calibrate.BuildProfile(node, runs, notes); err == nil {
					p = built
				} else {
					p.Notes = append(p.Notes, err.Error())
				}
			}
			return o.write(p)
		},
	}
	f := c.Flags()
	f.StringVar(&o.out, "out", "", "profile to write (default: stdout)")
	f.StringVarP(&o.output, "output", "o", "yaml", "profile format: yaml or json")
	f.StringVar(&o.nccl.Dir, "nccl-tests", "", "folder of the nccl-tests binaries (default: PATH)")
	f.IntVar(&o.nccl.GPUs, "gpus", 0, "GPUs per nccl-tests process, -g (default: all GPUs found)")
	f.StringVar(&o.nccl.MinBytes, "min-bytes", "8", "smallest message size (-b)")
	f.StringVar(&o.nccl.MaxBytes, "max-bytes", "4G", "largest message size (-e)")
	f.DurationVar(&o.nccl.Timeout, "timeout", 5*time.Minute, "time limit of each nccl-tests run")
	f.BoolVar(&o.nccl.Ring, "ring", false, "also run with NCCL_ALGO=RING")
	f.BoolVar(&o.skipNCCL, "skip-nccl", false, "discover the node only")
	enumFlag(c, "output", choicesOf(outputsProfile))
	fileFlag(c, "out", "yaml", "yml", "json")
	dirFlag(c, "nccl-tests")
	freeFlag(c, "gpus", "min-bytes", "max-bytes", "timeout")
	c.AddCommand(newCalibrateParseCmd(stdout))
	c.AddCommand(newCalibrateVLLMCmd(stdout))
	return c
}

func newCalibrateParseCmd(stdout io.Writer) *cobra.Command {
	o := &calibrateOptions{stdout: stdout}
	c := &cobra.Command{
		Use:   "parse FILE...",
		Short: "Build a calibration profile from saved nccl-tests output (text or -J JSON)",
		Long: `Read saved nccl-tests output, text (slurm prefixes and MPI noise lines are fine) or
the JSON that -J writes, and fit each run's fabric: latency alpha from the messages
up to 1 MiB, bus bandwidth from those of 64 MiB and more (busbw = algbw x 2(n-1)/n
for all-reduce). Fabrics are named by kind: nvlink, pcie (one node) or network
(ranks on several hosts).`,
		Example: `  gpuplan calibrate parse testdata/nccl/h100_8gpu_single_node_nvls_issue290.txt --output json`,
		Args:    argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := o.validateOutput(); err != nil {
				return err
			}
			var runs []*calibrate.Run
			for _, p := range args {
				if err := scenarios.RegularFile(p); err != nil {
					var ie *scenarios.InputError
					if errors.As(err, &ie) {
						return err
					}
					return usageError{fmt.Errorf("%s: %s", p, scenarios.ReadErr(err))}
				}
				f, err := os.Open(p)
				if err != nil {
					return usageError{err}
				}
				r, err := calibrate.ParseOutput(p, f)
				f.Close()
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
			p, err := calibrate.BuildProfile(nil, runs, nil)
			if err != nil {
				return usageError{err}
			}
			return o.write(p)
		},
	}
	c.Flags().StringVar(&o.out, "out", "", "profile to write (default: stdout)")
	c.Flags().StringVarP(&o.output, "output", "o", "yaml", "profile format: yaml or json")
	enumFlag(c, "output", choicesOf(outputsProfile))
	fileFlag(c, "out", "yaml", "yml", "json")
	return c
}
