package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

type sweepOptions struct {
	spec, out, shard, progress string
	workers                    int
	shardI, shards             int // --shard parsed
	maxEvents                  int64
	emitJob                    bool
	restrict                   bool
	job                        sweep.JobOptions
	stdout, stderr             io.Writer
}

func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &sweepOptions{stdout: stdout, stderr: stderr}
	c := &cobra.Command{
		Use:   "sweep SPEC.yaml",
		Short: "Run a scenario over a space of settings (grid, random, Latin hypercube), resumable and shardable",
		Long: `Run a base scenario at every point of a space of settings and tabulate the
metrics: a Sweep spec (kind: Sweep, apiVersion gpuplan.dev/v1alpha1) names the base
scenario (spec.scenario, relative to the spec; none: the built-in default), the
parameters (a path into the scenario's spec, or spotShareOf a pool; values, a
range or a logRange), the design (grid, random or latinHypercube with points and
seed), the replications (seeds per point: the scenario's seed, seed+1, ...) and the
metrics (those of validate, wait.p95{queue=NAME}, or completed: the share of jobs
completed). A checkpoint interval on spot needs its cost (the time a write
takes): without one every write would be free and no interruption would lose work.

  apiVersion: gpuplan.dev/v1alpha1
  kind: Sweep
  metadata: {name: h100-size}
  spec:
    parameters:
    - {name: h100, path: "cluster.pools[h100-train].count", values: [4, 6, 8, 10]}
    - {name: spot, spotShareOf: h100-train, values: [0, 0.5, 1]}
    - {name: ckpt, path: workload.recovery.checkpoint.interval, range: {from: 30m, to: 90m, step: 30m}}
    - {name: ckptCost, path: workload.recovery.checkpoint.cost, values: [5m]}
    replications: 5
    metrics: [cost.total, wait.p95, completed]

Every run goes through the run pipeline (invariants checked); the points share
each seed's synthetic jobs, and a setting the design draws twice runs once. Points run on
--workers at once (default: every core); each finished point is written
atomically to OUT/points/NNNNNN.json, so a sweep stopped at any moment (kill -9
included) and started again with the same --out runs only the points missing.
The table OUT/sweep.csv and OUT/sweep.json (one row per point: each metric's
mean and 95% interval over the seeds) and OUT/sweep.html (Pareto front of the
first metric against each other one, each metric against each parameter) and
OUT/decision.html (the answer first: the best point on the first metric among
those meeting spec.constraints, its margin against each with 95% intervals, the
runner-up and why it lost, the better points rejected and the constraint each
missed; then the Pareto front with every point linked to its row, and how the
answer's first metric moves along each parameter) are byte-identical whatever
the number of workers or shards.

--shard I/N runs only the points whose index is I modulo N (and writes no table);
gpuplan sweep merge joins the shards' folders. --emit-job prints a batch/v1
Indexed Job whose pod I runs shard I of --shards: copy the folder holding the
spec and the scenario onto the volume of --claim, kubectl apply the Job, then
merge results/shard-*. Exit status: 0 success, 2 bad input (the spec's file,
line and field), 3 an I/O failure, 4 a broken invariant.`,
		Example: `  gpuplan sweep scenarios/examples/sweep/default-capacity.yaml --out out/sweep
  gpuplan sweep spec.yaml --shard 3/8 --out results/shard-3
  gpuplan sweep merge results/shard-* --out out/sweep
  gpuplan sweep spec.yaml --emit-job --shards 8 --image registry.example/gpuplan:v1 > job.yaml`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.spec = args[0]
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	f := c.Flags()
	f.StringVar(&o.out, "out", "", "output folder (default out/sweep-NAME); points go to OUT/points")
	addRestrictPaths(f, &o.restrict, false)
	f.IntVar(&o.workers, "workers", 0, "runs at once (0: one per core); the results do not depend on it")
	addMaxEvents(f, &o.maxEvents, "each run (every point, every seed; each parameter's values are checked against it at load)")
	f.StringVar(&o.shard, "shard", "", "run only shard I of N (I/N): the points whose index is I modulo N")
	f.StringVar(&o.progress, "progress", "auto", "progress bar with ETA on stderr: auto (only on a terminal), always or never")
	f.BoolVar(&o.emitJob, "emit-job", false, "print a Kubernetes batch/v1 Indexed Job running the sweep's shards, and run nothing")
	f.IntVar(&o.job.Shards, "shards", 4, "with --emit-job: pods (completions), one shard each")
	f.IntVar(&o.job.Parallelism, "parallelism", 0, "with --emit-job: pods at once (0: all)")
	f.StringVar(&o.job.Image, "image", "gpuplan:latest", "with --emit-job: the image holding /gpuplan (see the Dockerfile)")
	f.IntVar(&o.job.CPUs, "cpus", 2, "with --emit-job: each pod's CPU request and limit, and its workers")
	f.StringVar(&o.job.Memory, "memory", "2Gi", "with --emit-job: each pod's memory request and limit")
	f.StringVar(&o.job.Claim, "claim", "gpuplan-sweep", "with --emit-job: the PersistentVolumeClaim mounted at /work (inputs, and results/shard-I)")
	f.StringVar(&o.job.Namespace, "namespace", "", "with --emit-job: the Job's namespace")
	scenarioArgs(c)
	dirFlag(c, "out")
	enumFlag(c, "progress", choicesOf(progressModes))
	freeFlag(c, "workers", "max-events", "shard", "shards", "parallelism", "image", "cpus", "memory", "claim", "namespace")
	c.AddCommand(newSweepMergeCmd(stdout))
	return c
}

// validate checks the flags before the spec is read, and parses --shard.
func (o *sweepOptions) validate() error {
	if o.workers < 0 {
		return usageError{fmt.Errorf("--workers %d: want 0 (one per core) or more", o.workers)}
	}
	if err := checkProgress(o.progress); err != nil {
		return err
	}
	if err := checkMaxEvents(o.maxEvents); err != nil {
		return err
	}
	if o.shard != "" {
		var err error
		if o.shardI, o.shards, err = sweep.ParseShard(o.shard); err != nil {
			return usageError{err}
		}
	}
	if o.emitJob {
		return o.checkJob()
	}
	return nil
}

func (o *sweepOptions) run(ctx context.Context) error {
	opts := sweep.Options{Workers: o.workers, Shard: o.shardI, Shards: o.shards}
	sw, err := sweep.LoadWith(o.spec, loadOptions(o.restrict), sweep.MaxEvents(o.maxEvents))
	if err != nil {
		return err
	}
	if o.emitJob {
		o.job.SpecPath = filepath.ToSlash(filepath.Clean(o.spec))
		job, err := sw.Job(o.job)
		if err != nil {
			return usageError{err}
		}
		b, err := sweep.JobYAML(job)
		if err != nil {
			return err
		}
		_, err = o.stdout.Write(b)
		return err
	}
	opts.Out = o.out
	if opts.Out == "" {
		opts.Out = filepath.Join("out", "sweep-"+sw.Doc.Metadata.Name)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var bar *progressbar.ProgressBar
	if p := (progress{o.progress, o.stderr}); p.shown() {
		opts.Progress = func(done, total int) {
			if bar == nil {
				bar = p.bar(int64(total), "sweep points", progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond))
			}
			_ = bar.Set(done)
		}
	}
	st, err := sw.Run(ctx, opts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "Sweep %s: %d points (%d found done, %d run now: %d simulations of %d seeds each) in %s\n",
		sw.Doc.Metadata.Name, st.Points, st.Skipped, st.Ran, st.Runs, len(sw.Seeds), filepath.Join(opts.Out, sweep.DirPoints))
	if opts.Shards > 1 {
		fmt.Fprintf(o.stdout, "Shard %d of %d done; join the shards with: gpuplan sweep merge DIR...\n", opts.Shard, opts.Shards)
		return nil
	}
	t, err := sweep.Merge([]string{opts.Out})
	if err != nil {
		return err
	}
	if err := t.Write(opts.Out); err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "Wrote %s/{%s,%s,%s,%s}\n", opts.Out, sweep.FileCSV, sweep.FileJSON, sweep.FileHTML, sweep.FileDecision)
	return nil
}

func newSweepMergeCmd(stdout io.Writer) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Join sweep shards' folders into one table",
		Long: `Read the point files of each folder (a sweep's --out, or its points/ folder)
and write the table OUT/sweep.csv, sweep.json, sweep.html and decision.html, byte for byte what one
process running every point writes. Refuses points of different sweeps, a point
present twice and a point missing (naming the first missing ones): exit 2.`,
		Example: `  gpuplan sweep merge results/shard-0 results/shard-1 results/shard-2 results/shard-3 --out out/sweep`,
		Args:    argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, dirs []string) error {
			if out == "" {
				return usageError{fmt.Errorf("--out is required")}
			}
			t, err := sweep.Merge(dirs)
			if err != nil {
				return err
			}
			if err := t.Write(out); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Merged %d points of sweep %s from %d folders; wrote %s/{%s,%s,%s,%s}\n", len(t.Rows), t.Sweep, len(dirs), out, sweep.FileCSV, sweep.FileJSON, sweep.FileHTML, sweep.FileDecision)
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "the folder to write the table into")
	dirFlag(c, "out")
	return c
}

// checkJob refuses --emit-job's flags that would write a Job the API
// server refuses, before the sweep is read.
func (o *sweepOptions) checkJob() error {
	switch {
	case o.job.Parallelism < 0:
		return usageError{fmt.Errorf("--parallelism %d: want 0 (every pod at once) or more", o.job.Parallelism)}
	case strings.TrimSpace(o.job.Image) == "":
		return badFlag("image", o.job.Image, "want a container image holding /gpuplan, such as registry.example/gpuplan:v1")
	}
	if o.job.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.job.Namespace); len(errs) > 0 {
			return badFlag("namespace", o.job.Namespace, "want a namespace name: "+errs[0])
		}
	}
	return nil
}
