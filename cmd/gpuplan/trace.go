package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/traces"
)

func newTraceCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "Describe, convert and generate workload traces",
		Long: `Work with trace files: stats describes one, convert rewrites one in the native
format (with filters and transforms), sort rewrites one in submit order, generate
writes a synthetic one.

Formats: ` + strings.Join(traces.TraceFormats(), ", ") + `. .gz files are read (and written) directly.`,
	}
	c.AddCommand(newTraceStatsCmd(stdout, stderr), newTraceConvertCmd(stdout, stderr), newTraceGenerateCmd(stdout, stderr), newTraceSortCmd(stdout, stderr))
	return c
}

// traceOutExts are the endings of a native trace file written (gzip
// for .gz).
var traceOutExts = []string{"csv", "jsonl", "gz"}

// traceInput is the flags every command reading a trace shares.
type traceInput struct {
	format, jobTable string
	gpusPerNode      int64
	progress         string
	stderr           io.Writer
}

func (t *traceInput) flags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&t.format, "format", "", "trace format: "+strings.Join(traces.TraceFormats(), ", "))
	f.StringVar(&t.jobTable, "job-table", "", "pai: pai_job_table.csv, whose users become the queues")
	f.Int64Var(&t.gpusPerNode, "gpus-per-node", 8, "philly, helios: split jobs into pods of at most this many GPUs")
	f.StringVar(&t.progress, "progress", "auto", "progress on stderr: auto (only on a terminal), always or never")
	enumFlag(c, "format", traces.TraceFormats)
	enumFlag(c, "progress", choicesOf(progressModes))
	fileFlag(c, "job-table", "csv")
	freeFlag(c, "gpus-per-node")
}

func (t *traceInput) open(path string) (traces.TraceSource, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	return traces.OpenTrace(path, t.format, traces.TraceOptions{GPUsPerNode: t.gpusPerNode, JobTable: t.jobTable})
}

// check checks the flags.
func (t *traceInput) check() error {
	if t.format == "" {
		return usageError{fmt.Errorf("--format is required (%s)", strings.Join(traces.TraceFormats(), ", "))}
	}
	if !slices.Contains(traces.TraceFormats(), t.format) {
		return badFlag("format", t.format, "want one of "+strings.Join(traces.TraceFormats(), ", "))
	}
	if t.gpusPerNode < 1 || t.gpusPerNode > traces.MaxGPUsPerNode {
		return usageError{fmt.Errorf("--gpus-per-node %d must be in 1..%d", t.gpusPerNode, traces.MaxGPUsPerNode)}
	}
	return checkProgress(t.progress)
}

// checkTraceOut refuses, before any trace is read, a --out whose folder
// is not there (the trace is written beside it, then renamed).
func checkTraceOut(out string) error {
	if out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if err := checkOutputFile("out", out); err != nil {
		return usageError{err}
	}
	return nil
}

// withProgress shows a spinner with the jobs read so far on a terminal.
func withProgress(src traces.TraceSource, mode string, w io.Writer, what string) (traces.TraceSource, func()) {
	tick, done := progress{mode, w}.ticks(what)
	if tick == nil {
		return src, done
	}
	return traces.Counting(src, progressEvery, tick), done
}

func newTraceStatsCmd(stdout, stderr io.Writer) *cobra.Command {
	in := &traceInput{stderr: stderr}
	var output string
	c := &cobra.Command{
		Use:   "stats FILE --format F",
		Short: "Describe a trace: jobs, GPU-hours, sizes, durations, span, queues",
		Example: `  gpuplan trace stats testdata/openb/openb_pod_list_default.csv --format openb
  gpuplan trace stats cluster_log.csv --format helios --output json`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := outputsTJY().check("output", output); err != nil {
				return err
			}
			src, err := in.open(args[0])
			if err != nil {
				return err
			}
			defer src.Close()
			cs, done := withProgress(src, in.progress, stderr, "reading")
			st, err := traces.ComputeTraceStats(cs)
			done()
			if err != nil {
				return err
			}
			switch output {
			case "json":
				return jsonOf(st)(stdout)
			case "yaml":
				return writeYAML(stdout, jsonOf(st))
			}
			return writeTraceStats(stdout, args[0], in.format, st)
		},
	}
	in.flags(c)
	c.Flags().StringVarP(&output, "output", "o", "table", "what to print: table, json or yaml")
	enumFlag(c, "output", choicesOf(outputsTJY))
	return c
}

func writeTraceStats(w io.Writer, file, format string, st *traces.TraceStats) error {
	fmt.Fprintf(w, "Trace %s (format %s)\n", file, format)
	fmt.Fprintf(w, "Jobs %d (%d ask for GPUs), %d pods, %.1f GPU-hours, submissions over %s.\n", st.Jobs, st.GPUJobs, st.Pods, st.GPUHours, reports.Human(st.SpanSeconds))
	fmt.Fprintf(w, "At most %.0f GPUs busy at once if every job started on arrival.\n\n", st.PeakGPUs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "GPU JOBS\tMEAN\tP50\tP90\tP99\tMAX\t")
	g, d := st.GPUsPerJob, st.DurationSeconds
	fmt.Fprintf(tw, "GPUs per job\t%.2f\t%.3g\t%.3g\t%.3g\t%.3g\t\n", g.Mean, g.P50, g.P90, g.P99, g.Max)
	// One unit across the row: the durations' quantiles side by side.
	df := reports.DurationFormat(d.Mean, d.P50, d.P90, d.P99, d.Max)
	fmt.Fprintf(tw, "duration\t%s\t%s\t%s\t%s\t%s\t\n", df(d.Mean), df(d.P50), df(d.P90), df(d.P99), df(d.Max))
	fmt.Fprintln(tw, "\t\t\t\t\t\t")
	fmt.Fprintln(tw, "QUEUE\tJOBS\tGPU JOBS\tGPU-H\t\t\t")
	for i, q := range st.Queues {
		if i == 30 {
			fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\t\n", len(st.Queues)-i)
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t\t\t\n", q.Name, q.Jobs, q.GPUJobs, q.GPUHours)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range st.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	return nil
}

// writeTrace writes a native trace to path atomically: JSON lines for
// .jsonl, CSV otherwise, gzip-compressed for .gz.
func writeTrace(path string, fill func(w *traces.NativeWriter) error) error {
	base := strings.TrimSuffix(path, ".gz")
	jsonl := strings.HasSuffix(base, ".jsonl")
	return reports.WriteFileAtomic(path, func(w io.Writer) error {
		var zw *gzip.Writer
		if strings.HasSuffix(path, ".gz") {
			zw = gzip.NewWriter(w)
			w = zw
		}
		nw, err := traces.NewNativeWriter(w, jsonl)
		if err != nil {
			return err
		}
		if err := fill(nw); err != nil {
			return err
		}
		if zw != nil {
			return zw.Close()
		}
		return nil
	})
}

func newTraceConvertCmd(stdout, stderr io.Writer) *cobra.Command {
	in := &traceInput{stderr: stderr}
	var out, from, to, queues string
	var minGPUs, arrival, duration float64
	var maxJobs int
	c := &cobra.Command{
		Use:   "convert FILE --format F --out OUT",
		Short: "Rewrite a trace in the native format, with filters and transforms",
		Long: `Read a trace in any supported format and write it in the native format: CSV, or
JSON lines when OUT ends in .jsonl (it keeps any node affinity), gzip-compressed when
OUT ends in .gz. Filters keep jobs submitted in [--from, --to) (durations from the
trace start; kept jobs are shifted to start at 0), of the given --queue list, asking
for at least --min-gpus GPUs, up to --max-jobs. Transforms: --arrival-scale 2 halves
the gaps between submissions (twice the arrival rate), --duration-scale scales run
times. The output is written atomically.`,
		Example: `  gpuplan trace convert cluster_log.csv --format helios --out helios-week1.csv.gz --to 7d --min-gpus 1
  gpuplan trace convert philly.csv --format philly --out fast.csv --arrival-scale 1.5`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkTraceOut(out); err != nil {
				return err
			}
			var f traces.TraceFilter
			for _, d := range []struct {
				flag, v string
				dst     *int64
			}{{"from", from, &f.From}, {"to", to, &f.To}} {
				if d.v == "" {
					continue
				}
				x, err := scenarios.ParseDuration(d.v)
				if err != nil || x < 0 {
					return usageError{fmt.Errorf("--%s %s is not a duration from the trace start (examples: 12h, 7d)", d.flag, q(d.v))}
				}
				*d.dst = x.Milliseconds()
			}
			if f.To > 0 && f.To <= f.From {
				return usageError{fmt.Errorf("--to %s must be after --from %s", q(to), q(from))}
			}
			if queues != "" {
				f.Queues = map[string]bool{}
				for _, q := range strings.Split(queues, ",") {
					f.Queues[strings.TrimSpace(q)] = true
				}
			}
			for _, s := range []struct {
				flag string
				v    float64
			}{{"arrival-scale", arrival}, {"duration-scale", duration}} {
				if !(s.v > 0) || math.IsInf(s.v, 0) {
					return usageError{fmt.Errorf("--%s %g: want a positive number (1 keeps the trace's)", s.flag, s.v)}
				}
			}
			if minGPUs < 0 {
				return usageError{fmt.Errorf("--min-gpus %g: want 0 or more", minGPUs)}
			}
			if maxJobs < 0 {
				return usageError{fmt.Errorf("--max-jobs %d: want 0 (all) or more", maxJobs)}
			}
			f.MinGPUs, f.MaxJobs, f.ArrivalScale, f.DurationScale = minGPUs, maxJobs, arrival, duration
			src, err := in.open(args[0])
			if err != nil {
				return err
			}
			defer src.Close()
			cs, done := withProgress(src, in.progress, stderr, "converting")
			var kept, read int
			err = writeTrace(out, func(w *traces.NativeWriter) error {
				var err error
				kept, read, err = traces.ConvertTrace(cs, f, w)
				return err
			})
			done()
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Wrote %s: %d of %d jobs read.\n", out, kept, read)
			return nil
		},
	}
	in.flags(c)
	fl := c.Flags()
	fl.StringVar(&out, "out", "", "native trace to write (.csv, .jsonl, optionally .gz)")
	fl.StringVar(&from, "from", "", "keep jobs submitted at or after this time from the trace start")
	fl.StringVar(&to, "to", "", "keep jobs submitted before this time from the trace start")
	fl.StringVar(&queues, "queue", "", "keep these queues (virtual clusters) only, comma-separated")
	fl.Float64Var(&minGPUs, "min-gpus", 0, "keep jobs asking for at least this many GPUs in all")
	fl.IntVar(&maxJobs, "max-jobs", 0, "stop after this many jobs (0: all)")
	fl.Float64Var(&arrival, "arrival-scale", 1, "divide the gaps between submissions by this (2: twice the rate)")
	fl.Float64Var(&duration, "duration-scale", 1, "multiply run times by this")
	fileFlag(c, "out", traceOutExts...)
	freeFlag(c, "from", "to", "queue", "min-gpus", "max-jobs", "arrival-scale", "duration-scale")
	return c
}

func newTraceGenerateCmd(stdout, stderr io.Writer) *cobra.Command {
	var o scenarios.GenerateOptions
	var out, progressMode string
	c := &cobra.Command{
		Use:   "generate --jobs N --out FILE",
		Short: "Write a reproducible synthetic trace in the native format",
		Long: `Write --jobs jobs, reproducibly from --seed: three quarters single-node jobs of 1, 2,
4 or 8 GPUs (lognormal durations, median 1 h, at most 72 h; diurnal arrivals), one
quarter gangs of 2 to 64 pods of 8 GPUs (median 3 h, at most 96 h), arriving at the
rate that offers --load of a --gpus cluster's GPU-hours. CSV, JSON lines for .jsonl,
gzip for .gz; written atomically.`,
		Example: `  gpuplan trace generate --jobs 1000000 --seed 1 --out 1m.csv.gz
  gpuplan simulate --trace 1m.csv.gz --trace-format native`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			if err := checkTraceOut(out); err != nil {
				return err
			}
			if err := checkProgress(progressMode); err != nil {
				return err
			}
			switch {
			case o.Jobs <= 0:
				return usageError{fmt.Errorf("--jobs %d: want a positive number of jobs", o.Jobs)}
			case o.GPUs < 8:
				return usageError{fmt.Errorf("--gpus %d: want at least 8 (one node)", o.GPUs)}
			case !(o.Load > 0) || o.Load > 10:
				return usageError{fmt.Errorf("--load %g: want a number in (0, 10]", o.Load)}
			}
			bar := progress{progressMode, stderr}.bar(int64(o.Jobs), "generating")
			err := writeTrace(out, func(w *traces.NativeWriter) error { return scenarios.GenerateTrace(o, w) })
			finish(bar)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Wrote %s: %d jobs (seed %d, for %d GPUs at %.0f%% load).\n", out, o.Jobs, o.Seed, o.GPUs, 100*o.Load)
			return nil
		},
	}
	f := c.Flags()
	f.IntVar(&o.Jobs, "jobs", 0, "jobs to generate")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed")
	f.IntVar(&o.GPUs, "gpus", 10000, "GPUs of the cluster the trace is sized for")
	f.Float64Var(&o.Load, "load", 0.85, "offered share of the cluster's GPU-hours")
	f.StringVar(&out, "out", "", "trace to write (.csv, .jsonl, optionally .gz)")
	f.StringVar(&progressMode, "progress", "auto", "progress on stderr: auto (only on a terminal), always or never")
	enumFlag(c, "progress", choicesOf(progressModes))
	fileFlag(c, "out", traceOutExts...)
	freeFlag(c, "jobs", "seed", "gpus", "load")
	return c
}

func newTraceSortCmd(stdout, stderr io.Writer) *cobra.Command {
	in := &traceInput{stderr: stderr}
	var out, tmpDir string
	var memRows int
	c := &cobra.Command{
		Use:   "sort FILE --format F --out OUT",
		Short: "Rewrite a trace in submit-time order, in the native format",
		Long: fmt.Sprintf(`Read a trace in any supported format, its rows in any order, and write it sorted by
submit time in the native format (CSV; JSON lines for .jsonl; gzip for .gz), jobs
submitted at the same time in the file's order. Up to --memory-rows rows (default
%d) are sorted in memory; a longer trace is sorted in runs of that many rows,
written to a temporary folder (under --tmp-dir; removed afterwards) and merged, so
memory stays bounded. The output is written atomically. (A replay sorts a trace
out of order by itself; sorting once saves doing it on every run.)`, traces.SortMemoryRows),
		Example: `  gpuplan trace sort philly_trace.csv --format philly --out philly-sorted.csv.gz
  gpuplan trace sort big.csv --format native --out big-sorted.csv --tmp-dir /scratch`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkTraceOut(out); err != nil {
				return err
			}
			if tmpDir != "" {
				if st, err := os.Stat(tmpDir); err != nil || !st.IsDir() {
					return badFlag("tmp-dir", tmpDir, "want a folder that exists, for the sorted runs")
				}
			}
			if memRows < 1 {
				return usageError{fmt.Errorf("--memory-rows %d: want at least 1 (rows sorted in memory at once; default %d)", memRows, traces.SortMemoryRows)}
			}
			if err := in.check(); err != nil {
				return err
			}
			var res traces.SortResult
			err := writeTrace(out, func(w *traces.NativeWriter) error {
				var err error
				res, err = traces.SortTrace(args[0], in.format, traces.TraceOptions{GPUsPerNode: in.gpusPerNode, JobTable: in.jobTable}, w,
					traces.SortOptions{MemoryRows: memRows, TempDir: tmpDir})
				return err
			})
			if err != nil {
				return err
			}
			how := "in memory"
			if res.Runs > 0 {
				how = fmt.Sprintf("merged from %d sorted runs", res.Runs)
			}
			fmt.Fprintf(stdout, "Wrote %s: %d jobs in submit order (%s).\n", out, res.Rows, how)
			return nil
		},
	}
	in.flags(c)
	f := c.Flags()
	f.StringVar(&in.format, "trace-format", "", "the same as --format")
	f.StringVar(&out, "out", "", "native trace to write (.csv, .jsonl, optionally .gz)")
	f.IntVar(&memRows, "memory-rows", traces.SortMemoryRows, "rows sorted in memory at once; beyond that, an external merge sort")
	f.StringVar(&tmpDir, "tmp-dir", "", "where the sorted runs go (default: the system's temporary folder)")
	enumFlag(c, "trace-format", traces.TraceFormats)
	fileFlag(c, "out", traceOutExts...)
	dirFlag(c, "tmp-dir")
	freeFlag(c, "memory-rows")
	return c
}
