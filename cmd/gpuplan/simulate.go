package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/reports/focus"
	"gpuplan.dev/gpuplan/reports/outdir"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/scenarios/traces"
)

type simulateOptions struct {
	scenario string
	// over are the flags that override the scenario's own settings.
	over overrides
	// trace is --trace and the flags that go with it.
	trace traceReplay
	// out is the output folder, output what is printed, progress when a
	// progress bar shows.
	out, output, progress string
	workers               int
	restrict              bool
	profile               profiles
	// focusVersion is --focus-version: focus.csv's FOCUS version.
	focusVersion string

	stdout, stderr io.Writer
	// now is the clock of the progress line's ETA (nil: time.Now).
	now func() time.Time
	// tracker holds the output folder being built, for the signal handler.
	tracker *outdir.Tracker
}

// overrides are simulate's flags that replace what the scenario says:
// the seed, horizon, policy, tie-break, the variant to run alone, the work
// budget and the spot sensitivity.
type overrides struct {
	seed    uint64
	seedSet bool
	horizon string
	policy  string
	// Filled by validate: the --policy as a placement policy or Kueue
	// manifests, and the --horizon parsed.
	placement, policyManifests string
	horizonD                   *time.Duration
	tieBreak                   string
	variant                    string
	maxEvents                  int64
	spotSens                   string
	spotSeeds                  int
}

// traceReplay is --trace and its companions: the file and its format,
// what becomes of openb's pods that never ran, and where the cluster the
// trace runs on comes from (scenario or derive).
type traceReplay struct {
	path, format, pendingPods, clusterFrom string
}

// profiles are the files --cpuprofile and --memprofile write.
type profiles struct {
	cpu, mem string
}

func newSimulateCmd(stdout, stderr io.Writer, t *outdir.Tracker) *cobra.Command {
	o := &simulateOptions{stdout: stdout, stderr: stderr, tracker: t}
	c := &cobra.Command{
		Use:   "simulate [SCENARIO]",
		Short: "Run a scenario (the built-in default when none is given) and report",
		Long: `Run one simulation of a scenario file (kind: Scenario, apiVersion gpuplan.dev/v1alpha1)
or, with no file, of the built-in default scenario, and print a summary.

With --trace and no scenario file the cluster is sized from the trace (one pool per
GPU model its jobs ask for, nodes of 8 GPUs, enough for the most the jobs would hold
at once had each started on arrival; the report says so); --cluster scenario runs
the trace on the built-in default's cluster instead.

With --out DIR it writes DIR/summary.json (schemaVersion 1), DIR/jobs.csv (one row
per job), DIR/timeline.csv (allocation and queue length per interval), DIR/focus.csv
(the bill in FOCUS 1.3, with prices: each pool's cost split to the jobs and
services that held it, the rest unallocated; --focus-version 1.2 writes 1.2),
DIR/report.md, DIR/report.html (one self-contained file: summary, tables and
plots), DIR/plots/*.png and *.svg (GPUs allocated per pool, jobs pending and
running, wait and completion-time CDFs, cost by pool), and the metric series
DIR/metrics.prom (Prometheus text), DIR/metrics.om.txt (OpenMetrics, for promtool
backfill) and DIR/metrics.csv: DCGM_FI_DEV_GPU_UTIL per pool, ml_training_jobs_*
per queue, GPUs allocated and present, cumulative cost. Pools with prices (an instance type from the price catalog, or
pricePerHour) add a FinOps section: cost by pool, capacity type, instance type and
queue, idle cost, work lost to interruptions, the showback per team; a run with
spot nodes is repeated with every spot node bought on-demand and the two are set
side by side for the same work (cost per useful GPU-hour, completion times job by
job), and replayed at 16 spot MTBFs for the break-even interruption rate, each
on --spot-seeds seeds of node supply (5 by default) whose mean and 95% interval it
reports (--spot-sensitivity off, or spec.output.spotSensitivity: off, skips the replay; a
point whose replay fails is reported as failed, with why, and the others stand). A
scenario with spec.variants runs each what-if variant too and compares them
(their files go to DIR/variants/NAME); --variant runs one alone. The variants,
the all-on-demand twin and the sensitivity's runs go --workers at a time (one
per core by default); the outputs are the same whatever the number. --trace replaces the scenario's workload with a trace file replayed
against the scenario's cluster (the default scenario's cluster when none is given);
the whole trace runs unless --horizon cuts it.

A run's work is checked before it starts against a budget of events
(--max-events, default 25,000,000; the shipped examples are estimated at
780,000 at most): node failures and spot interruptions (nodes x horizon / MTBF), the
scalers' periods of the services (horizon / period), the jobs the arrival
processes submit, timeline buckets, a rate file's samples and spikes. A scenario
over it is refused (exit 2) naming the setting that costs most and the value of
it that fits. A run without a horizon whose workload never drains (services,
manifests submitted by a rate or a schedule, a synthetic workload without a
jobs limit) is refused too; --horizon 0 means run until the workload drains. A
run that still passes the budget (plus 8 events for each job it submitted) is
stopped with exit 2.

A scenario's spec.policy, or --policy DIR (a file or folder of Kueue
ResourceFlavors, ClusterQueues, LocalQueues, Cohorts, priority classes and Kueue's
Configuration, whose fairSharing turns on fair sharing, or of Volcano Queues;
Karpenter NodePools in spec.policy's manifests join the cluster),
puts quota admission in front of the scheduler: the report adds
each ClusterQueue's time to admission, share of its cohort used against its fair
share, borrowed and lent GPU-hours and preemptions; --policy NAME with a placement policy (fgd, bestfit, ...) replaces the
scheduler's scoring instead. spec.scheduler.preemption turns on kube-scheduler's
priority preemption. The same scenario and seed give byte-identical files. DIR is built aside and put
in place whole: it holds the earlier run or the new one, never a mix, and an
existing folder that is not a gpuplan run is refused.

Exit status: 0 success, 2 bad input or usage, 3 an I/O failure (an unwritable
folder), 4 a broken invariant (a gpuplan bug: the message gives the seed).`,
		Example: `  gpuplan simulate
  gpuplan simulate scenarios/examples/openb-replay.yaml --out out/openb
  gpuplan simulate --trace jobs.csv --trace-format csv --output json
  gpuplan simulate my.yaml --seed 7 --output markdown
  gpuplan simulate scenarios/examples/two-teams/scenario.yaml --policy scenarios/examples/two-teams/policy-strict
  gpuplan simulate --trace big.csv --trace-format philly --out out/big --cpuprofile cpu.pprof --memprofile mem.pprof
  go tool pprof -top cpu.pprof`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd, args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			stop, err := startCPUProfile(o.profile.cpu)
			if err != nil {
				return err
			}
			err = o.run()
			if perr := stop(); err == nil {
				err = perr
			}
			return err
		},
	}
	f := c.Flags()
	f.Uint64Var(&o.over.seed, "seed", 0, "random seed (overrides spec.seed)")
	f.StringVar(&o.out, "out", "", "folder to write summary.json, jobs.csv, timeline.csv, report.md, report.html, plots/ and the metric series into")
	f.StringVarP(&o.output, "output", "o", "table", "what to print: table, json, yaml or markdown")
	f.StringVar(&o.trace.path, "trace", "", "trace file to replay instead of the scenario's workload (.gz read directly)")
	f.StringVar(&o.trace.format, "trace-format", "", "format of --trace: "+strings.Join(traces.TraceFormats(), ", "))
	f.StringVar(&o.trace.clusterFrom, "cluster", "", "the cluster to run on: scenario (the scenario's, or the built-in default's) or derive (sized from the --trace); default derive for --trace without a scenario file, else scenario")
	f.StringVar(&o.trace.pendingPods, "pending-pods", "", "openb pods that never ran in the source: replay (default) or exclude")
	f.StringVar(&o.over.horizon, "horizon", "", "end the run at this simulated time, e.g. 72h or 30d (0: run until the workload drains); with --trace the whole trace runs unless this is given")
	f.StringVar(&o.over.policy, "policy", "", "a GPU placement policy replacing the scenario's scheduler profile ("+strings.Join(pipeline.PolicyNames(), ", ")+"), or a file or folder of Kueue manifests replacing spec.policy (admission)")
	f.StringVar(&o.over.tieBreak, "tie-break", "", "between nodes of equal score: lowestIndex, random or nodeOrder (overrides spec.scheduler.tieBreak)")
	f.StringVar(&o.over.variant, "variant", "", "run only this what-if variant of the scenario (spec.variants) instead of the scenario and all its variants")
	f.StringVar(&o.progress, "progress", "auto", "one progress line with an ETA on stderr over every run (variants, the all-on-demand twin, the spot sensitivity's points) and the writing of --out: auto (only on a terminal), always or never")
	f.IntVar(&o.workers, "workers", 0, "whole runs at once (the variants, the all-on-demand twin, the spot sensitivity's points; 0: one per core); the outputs do not depend on it")
	f.StringVar(&o.over.spotSens, "spot-sensitivity", "", "replay a run that buys spot at 16 spot MTBFs for the break-even: on or off (default: spec.output.spotSensitivity, else on)")
	f.StringVar(&o.focusVersion, "focus-version", string(focus.DefaultVersion), "FOCUS version of DIR/focus.csv: 1.3 (a pool's cost split to the workloads that held it, FOCUS's Allocated* columns) or 1.2 (one row per job and pool, as gpuplan wrote before)")
	f.IntVar(&o.over.spotSeeds, "spot-seeds", 0, "seeds of node supply each spot-sensitivity MTBF replays, 1 to 100: each point is their mean with its 95% interval (0: spec.output.spotSensitivitySeeds, else 5)")
	f.Int64Var(&o.over.maxEvents, "max-events", scenarios.DefaultMaxEvents, "the work budget: refuse, before it runs, a scenario whose settings are estimated to make more simulation events (failures, interruptions, scaler periods, jobs, timeline buckets), naming the setting and what would fit")
	f.StringVar(&o.profile.cpu, "cpuprofile", "", "write a CPU profile of the whole command to this file (read it with go tool pprof)")
	addRestrictPaths(f, &o.restrict, false)
	f.StringVar(&o.profile.mem, "memprofile", "", "write a heap profile to this file once the outputs are written: what is live then (the results) and every allocation of the run (go tool pprof -sample_index=alloc_space)")
	scenarioArgs(c)
	enumFlag(c, "output", choicesOf(outputsTable))
	enumFlag(c, "trace-format", traces.TraceFormats)
	enumFlag(c, "cluster", choicesOf(clusterSources))
	enumFlag(c, "pending-pods", choicesOf(pendingPodModes))
	// --policy is a placement policy or a file or folder of Kueue
	// manifests: the names, and the shell's file completion besides.
	enumFlag(c, "policy", pipeline.PolicyNames)
	enumFlag(c, "tie-break", scenarios.TieBreaks)
	enumFlag(c, "progress", choicesOf(progressModes))
	enumFlag(c, "spot-sensitivity", choicesOf(onOff))
	enumFlag(c, "focus-version", focusVersions)
	scenarioFlag(c, "variant", variantNames)
	fileFlag(c, "trace")
	dirFlag(c, "out")
	fileFlag(c, "cpuprofile")
	fileFlag(c, "memprofile")
	freeFlag(c, "seed", "horizon", "workers", "max-events", "spot-seeds")
	return c
}

func (o *simulateOptions) complete(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.scenario = args[0]
	}
	o.over.seedSet = cmd.Flags().Changed("seed")
	return nil
}

func (o *simulateOptions) validate() error {
	if err := outputsTable().check("output", o.output); err != nil {
		return err
	}
	if o.over.spotSens != "" {
		if err := onOff().check("spot-sensitivity", o.over.spotSens); err != nil {
			return err
		}
	}
	if o.over.spotSeeds < 0 || o.over.spotSeeds > pipeline.MaxSpotSeeds {
		return usageError{fmt.Errorf("--spot-seeds is %d; want 1 to %d (0: the scenario's, else %d)", o.over.spotSeeds, pipeline.MaxSpotSeeds, pipeline.DefaultSpotSeeds)}
	}
	if err := checkMaxEvents(o.over.maxEvents); err != nil {
		return err
	}
	if o.workers < 0 {
		return usageError{fmt.Errorf("--workers %d: want 0 (one per core) or more", o.workers)}
	}
	if _, err := focus.ParseVersion(o.focusVersion); err != nil {
		return badFlag("focus-version", o.focusVersion, "want one of "+strings.Join(focusVersions(), ", "))
	}
	if err := checkProgress(o.progress); err != nil {
		return err
	}
	if (o.trace.path == "") != (o.trace.format == "") {
		return usageError{errors.New("--trace and --trace-format go together")}
	}
	if o.trace.format != "" && !slices.Contains(traces.TraceFormats(), o.trace.format) {
		return usageError{fmt.Errorf("--trace-format %s: want one of %s", q(o.trace.format), strings.Join(traces.TraceFormats(), ", "))}
	}
	if o.trace.pendingPods != "" && o.trace.path == "" {
		return usageError{errors.New("--pending-pods applies to --trace")}
	}
	if o.trace.pendingPods != "" && !pendingPodModes().has(o.trace.pendingPods) {
		return badFlag("pending-pods", o.trace.pendingPods, "want "+pendingPodModes().words())
	}
	if o.trace.clusterFrom != "" {
		if err := clusterSources().check("cluster", o.trace.clusterFrom); err != nil {
			return err
		}
	}
	switch o.trace.clusterFrom {
	case "":
		o.trace.clusterFrom = "scenario"
		if o.trace.path != "" && o.scenario == "" {
			o.trace.clusterFrom = "derive"
		}
	case "scenario":
	case "derive":
		if o.trace.path == "" {
			return usageError{errors.New("--cluster derive sizes a cluster for --trace; give one")}
		}
	}
	if pipeline.IsPolicy(o.over.policy) || o.over.policy == "" {
		o.over.placement = o.over.policy
	} else if _, err := os.Stat(o.over.policy); err == nil {
		o.over.policyManifests = o.over.policy
	} else {
		return usageError{fmt.Errorf("--policy %s is neither a placement policy (%s) nor a file or folder of Kueue manifests", q(o.over.policy), strings.Join(pipeline.PolicyNames(), ", "))}
	}
	if o.over.horizon != "" {
		h, err := scenarios.ParseDuration(o.over.horizon)
		if err != nil || h < 0 {
			return usageError{fmt.Errorf("--horizon %s is not a duration (examples: 72h, 30d, 0)", q(o.over.horizon))}
		}
		o.over.horizonD = &h
	}
	return nil
}

func (o *simulateOptions) run() error {
	var sc *scenarios.Scenario
	var err error
	if o.scenario == "" {
		sc, err = scenarios.Default()
	} else {
		lo := loadOptions(o.restrict)
		if o.over.policyManifests != "" {
			// The workload's claims may name the given policy's
			// DeviceClasses: read with it.
			lo.PolicyManifests = []string{o.over.policyManifests}
		}
		sc, err = scenarios.LoadFileWith(o.scenario, lo)
	}
	if err != nil {
		return err
	}
	opts := scenarios.Options{TieBreak: o.over.tieBreak, MaxEvents: o.over.maxEvents, Policy: o.over.placement, Horizon: o.over.horizonD}
	if o.over.policyManifests != "" {
		opts.PolicyManifests = []string{o.over.policyManifests}
	}
	if o.over.seedSet {
		opts.Seed = &o.over.seed
	}
	if o.trace.path != "" {
		opts.Trace = &scenarios.TraceSpec{Path: o.trace.path, Format: o.trace.format, PendingPods: o.trace.pendingPods}
		if o.trace.clusterFrom == "derive" {
			tick, done := progress{o.progress, o.stderr}.ticks("sizing a cluster for the trace")
			scan, err := traces.SizeTrace(o.trace.path, o.trace.format, traces.TraceOptions{PendingPods: o.trace.pendingPods}, tick)
			done()
			if err != nil {
				return usageError{err}
			}
			opts.Pools, opts.ClusterNotes, opts.TraceScan = scan.Pools, scan.Notes, scan
		}
	}
	// One progress line over every run and the writing of the outputs.
	m := progress{o.progress, o.stderr}.meter(o.now)
	defer m.finish()
	popts := pipeline.Options{Build: opts, File: o.scenario, Variant: o.over.variant, Workers: o.workers,
		Sensitivity: scenarios.Switch(o.over.spotSens), SpotSeeds: o.over.spotSeeds}
	if m != nil {
		popts.Progress, popts.Planned = m.run, m.plan
		if o.out != "" {
			m.plan(1)
		}
	}
	outcome, err := pipeline.Scenario(sc, popts)
	if err != nil {
		return err
	}
	if o.out != "" {
		v, _ := focus.ParseVersion(o.focusVersion)
		outcome.Main.Summary.SetFOCUSVersion(v)
		for i := range outcome.Variants {
			outcome.Variants[i].Summary.SetFOCUSVersion(v)
		}
		if err := m.step("writing "+o.out+" (tables, plots, report)", func() error { return outcome.WriteDir(o.out, o.tracker) }); err != nil {
			return err
		}
	}
	// The heap profile while the results are still held.
	if err := writeHeapProfile(o.profile.mem); err != nil {
		return err
	}
	sum := outcome.Main.Summary
	switch o.output {
	case "json":
		return reports.WriteJSON(o.stdout, sum)
	case "yaml":
		return writeYAML(o.stdout, func(w io.Writer) error { return reports.WriteJSON(w, sum) })
	case "markdown":
		return reports.WriteMarkdown(o.stdout, sum)
	}
	if err := reports.WriteTable(o.stdout, sum); err != nil {
		return err
	}
	if o.out != "" {
		fmt.Fprintf(o.stdout, "\nWrote %s/{%s,%s,%s,%s,%s}, plots/ and the metric series\n", o.out, reports.FileSummary, reports.FileJobs, reports.FileTimeline, reports.FileReport, reports.FileHTML)
	}
	return nil
}

// focusVersions are the FOCUS versions --focus-version takes.
func focusVersions() []string {
	var out []string
	for _, v := range focus.Versions() {
		out = append(out, string(v))
	}
	return out
}
