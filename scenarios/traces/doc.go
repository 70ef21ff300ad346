// Package traces reads and writes job traces: gpuplan's native CSV and
// JSON lines (NativeColumns), Alibaba's openb pod and node lists, the
// Philly trace (its processed CSV and the raw job log), Helios, and
// Alibaba PAI's task, job and machine tables. Every reader turns a row
// into a cluster.JobSpec or an InputError naming the file, line, column
// and field, and bounds every size it reads before allocating.
//
// Traces stream (OpenTrace): CSV rows are split in place (csvrows.go)
// and go through one row loop (csvTable), a reorder buffer puts a slightly
// unordered file back in submit order (reorder.go), and a first pass
// over the submit column decides whether the trace is sorted, within the
// buffer, or must be sorted first (traceorder.go). A row read allocates
// nothing: fields are views of the read buffer, job names go into shared
// blocks (names.go), and wall-clock times in the fixed layout are read
// without time.Parse (parseWallTime). SortTrace and the replay
// of a trace out of order sort in memory up to a bound and beyond it in
// runs on temporary files, merged (tracesort.go, sortruns.go). Node lists
// become pools through one pools-by-shape helper (poolsByShape).
//
// It also owns what the commands do with traces (tracetools.go: the
// native writer, stats, convert, the cluster sized for a trace), the
// bounded file and CSV reading the other readers of scenarios share
// (tracecheck.go; Table), and node affinity and tolerations as a trace and
// a scenario write them (TermSpec, TolerationSpec, ConstraintsFrom). The
// scenarios package builds a run from it; this package imports nothing of
// scenarios but strict.
package traces
