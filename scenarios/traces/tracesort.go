package traces

import (
	"fmt"
	"os"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// SortMemoryRows is how many rows SortTrace sorts in memory, each held as
// a compact binary record (about 55 bytes for a generated trace, names
// included) and two 16-byte keys. A longer trace is sorted in runs of this
// many rows, written to temporary files (the last kept in memory) and
// merged.
const SortMemoryRows = 2_000_000

// SortOptions tune SortTrace.
type SortOptions struct {
	// MemoryRows is the rows sorted in memory at once (default
	// SortMemoryRows): the size of the runs of an external sort.
	MemoryRows int
	// TempDir is where the runs' folder is made (default os.TempDir()).
	TempDir string
}

// SortResult says what SortTrace read.
type SortResult struct {
	Rows int // jobs written
	Runs int // sorted runs merged (0: sorted in memory)
	// Notes are the reader's notes on the trace.
	Notes []string
}

// SortTrace reads a trace of any format, in any order, and writes its jobs
// to w sorted by submit time (stable: jobs submitted at the same time keep
// the file's order), with times as a replay of the sorted file would give
// them. Up to opts.MemoryRows rows are sorted in memory; beyond that the
// rows are sorted in runs written to a temporary folder (removed
// afterwards) and merged, so memory is bounded by the run size.
func SortTrace(path, format string, topts TraceOptions, w *NativeWriter, opts SortOptions) (SortResult, error) {
	src, err := openTraceRaw(path, format, topts)
	if err != nil {
		return SortResult{}, err
	}
	defer src.Close()
	s, err := sortRows(src, opts)
	if err != nil {
		return SortResult{}, err
	}
	// The writer copies each job's name out before the next row is read.
	s.dec.borrowNames = true
	res := SortResult{Notes: s.notes}
	if len(s.runs) > 1 {
		res.Runs = len(s.runs)
	}
	var j cluster.JobSpec
	for {
		ok, err := s.next(&j)
		if err == nil && ok {
			err = w.Write(&j)
		}
		if err != nil {
			s.close()
			return res, err
		}
		if !ok {
			break
		}
		res.Rows++
	}
	return res, s.close()
}

// rawReader reads a source's rows as parsed, before any reordering: the
// absolute times of a streamed trace, or the jobs of one read whole. A
// row it gives is good until the next is read (a job's name may be a view
// of the row read).
func rawReader(src TraceSource) (read func(a *absJob) (bool, error), keepTimes bool) {
	if s, ok := src.(*streamTrace); ok {
		if s.table != nil {
			s.table.borrowNames = true
		}
		n := 0
		return func(a *absJob) (bool, error) {
			for {
				*a = absJob{}
				ok, skip, err := s.read(a)
				if err != nil || !ok {
					return false, err
				}
				if skip {
					continue
				}
				if n >= sim.MaxJobs {
					return false, tooManyJobs(s.info.File, a.line)
				}
				a.seq = n
				n++
				return true, nil
			}
		}, s.ro.keepTimes
	}
	n := 0
	return func(a *absJob) (bool, error) {
		*a = absJob{}
		ok, err := src.Next(&a.job)
		if !ok || err != nil {
			return false, err
		}
		a.at, a.seq = a.job.Submit, n
		n++
		return true, nil
	}, true
}

// sortedNote is the assumption a replay of a trace sorted first adds.
func sortedNote(rows int) string {
	return fmt.Sprintf("the trace was not in time order: sorted before replay (%d rows)", rows)
}

// sortedTrace replays a trace sorted first: the merge of its sorted
// runs (SortTrace's, in a temporary folder that closing it removes).
type sortedTrace struct {
	s     *rowSorter
	info  TraceInfo
	notes []string
	dir   string
	rows  int
}

// Next gives the next job by time.
func (s *sortedTrace) Next(j *cluster.JobSpec) (bool, error) {
	ok, err := s.s.next(j)
	if ok {
		s.rows++
	}
	return ok, err
}

func (s *sortedTrace) Notes() []string { return s.notes }

func (s *sortedTrace) Info() TraceInfo {
	i := s.info
	i.Rows = s.rows
	return i
}

func (s *sortedTrace) Close() error {
	err := s.s.close()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

// openSorted reads a trace whole into sorted runs (those beyond memory in
// a temporary folder) and replays their merge.
func openSorted(path, format string, opts TraceOptions) (_ TraceSource, err error) {
	src, err := openTraceRaw(path, format, opts)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	info := src.Info()
	dir, err := os.MkdirTemp("", "gpuplan-sorted-")
	if err != nil {
		return nil, err
	}
	s, err := sortRows(src, SortOptions{TempDir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	info.Format = format
	return &sortedTrace{s: s, info: info, notes: append(s.notes, sortedNote(s.rows)), dir: dir}, nil
}
