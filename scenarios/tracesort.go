package scenarios

import (
	"bufio"
	"container/heap"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// SortMemoryRows is how many rows SortTrace sorts in memory (about 300
// bytes each, names included, for a generated trace). A longer trace is
// sorted in runs of this many rows, written to temporary files in a
// compact binary form (the last kept in memory) and merged.
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
	return sortSource(src, jobSink{w: w}, opts)
}

// rawReader reads a source's rows as parsed, before any reordering: the
// absolute times of a streamed trace, or the jobs of one read whole.
func rawReader(src TraceSource) (read func(a *absJob) (bool, error), keepTimes bool) {
	if s, ok := src.(*streamTrace); ok {
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
				if n >= MaxJobs {
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

// rowChunks holds the rows being sorted in chunks of a fixed size, so
// that adding rows never copies those already read.
type rowChunks struct {
	chunks [][]absJob
	n      int
}

const rowChunk = 1 << 12

// add is a zeroed slot for the next row.
func (c *rowChunks) add() *absJob {
	i, k := c.n/rowChunk, c.n%rowChunk
	if i == len(c.chunks) {
		c.chunks = append(c.chunks, make([]absJob, rowChunk))
	}
	c.n++
	return &c.chunks[i][k]
}

// drop takes the last row added back.
func (c *rowChunks) drop() { c.n-- }

func (c *rowChunks) at(i int32) *absJob { return &c.chunks[i/rowChunk][i%rowChunk] }

// reset empties the chunks for the next run, keeping them.
func (c *rowChunks) reset() {
	for _, ch := range c.chunks {
		clear(ch)
	}
	c.n = 0
}

// sortOrder is the order of buf's rows by time, stable: it sorts small
// keys (time, sequence, index), not the rows themselves.
func sortOrder(buf *rowChunks, keys []lateKey) []lateKey {
	keys = keys[:0]
	for i := range int32(buf.n) {
		a := buf.at(i)
		keys = append(keys, lateKey{at: a.at, seq: a.seq, slot: i})
	}
	slices.SortFunc(keys, func(a, b lateKey) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return a.seq - b.seq
	})
	return keys
}

// jobSink is where sorted jobs go: a native writer and, for a sorted copy
// that is read back, a side file of the jobs' flags (one byte a job),
// which the native format has no column for.
type jobSink struct {
	w     *NativeWriter
	flags *bufio.Writer
}

// emit writes a job with its time relative to base (changing a's job).
func emit(s jobSink, a *absJob, base int64) error {
	j := &a.job
	j.Submit = a.at - base
	if j.Deadline > 0 {
		j.Deadline -= base
	}
	if s.flags != nil {
		if err := s.flags.WriteByte(byte(j.Flags)); err != nil {
			return err
		}
	}
	return s.w.Write(j)
}

func sortSource(src TraceSource, w jobSink, opts SortOptions) (res SortResult, err error) {
	limit := opts.MemoryRows
	if limit <= 0 {
		limit = SortMemoryRows
	}
	read, keepTimes := rawReader(src)
	var buf rowChunks
	var dir string
	var runs []sortRun
	defer func() {
		for i := range runs {
			runs[i].close()
		}
		if dir != "" {
			if rerr := os.RemoveAll(dir); err == nil && rerr != nil {
				err = rerr
			}
		}
	}()
	for {
		ok, err := read(buf.add())
		if err != nil {
			return res, err
		}
		if !ok {
			buf.drop()
			break
		}
		if buf.n < limit {
			continue
		}
		if dir == "" {
			if dir, err = os.MkdirTemp(opts.TempDir, "gpuplan-sort-"); err != nil {
				return res, err
			}
		}
		r, err := writeRun(dir, len(runs), &buf)
		if err != nil {
			return res, err
		}
		runs = append(runs, r)
		buf.reset()
	}
	res.Notes = src.Notes()
	if buf.n > 0 || len(runs) == 0 {
		runs = append(runs, memoryRun(&buf))
	}
	if len(runs) > 1 {
		res.Runs = len(runs)
	}
	h := &runHeap{}
	for i := range runs {
		if err := runs[i].open(); err != nil {
			return res, err
		}
		x := runItem{run: i}
		ok, err := runs[i].nextRow(&x.a)
		if err != nil {
			return res, err
		}
		if ok {
			h.items = append(h.items, x)
		}
	}
	heap.Init(h)
	var base int64
	if h.Len() > 0 && !keepTimes {
		base = h.items[0].a.at
	}
	for h.Len() > 0 {
		top := &h.items[0]
		if err := emit(w, &top.a, base); err != nil {
			return res, err
		}
		res.Rows++
		ok, err := runs[top.run].nextRow(&top.a)
		if err != nil {
			return res, err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return res, nil
}

type runItem struct {
	a   absJob
	run int
}

// runHeap orders the runs' next jobs by time, then by run (runs are in
// file order, so equal times keep the file's order).
type runHeap struct{ items []runItem }

func (h *runHeap) Len() int { return len(h.items) }
func (h *runHeap) Less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	if a.a.at != b.a.at {
		return a.a.at < b.a.at
	}
	return a.run < b.run
}
func (h *runHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *runHeap) Push(x any)    { h.items = append(h.items, x.(runItem)) }
func (h *runHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// sortedNote is the assumption a replay of a trace sorted first adds.
func sortedNote(rows int) string {
	return fmt.Sprintf("the trace was not in time order: sorted before replay (%d rows)", rows)
}

// sortedTrace replays a trace that was sorted first into a temporary
// native file; closing it removes the file.
type sortedTrace struct {
	TraceSource
	info  TraceInfo
	notes []string
	dir   string
	flags *os.File
	fr    *bufio.Reader
}

// Next gives the sorted copy's next job, its flags from the side file.
func (s *sortedTrace) Next(j *cluster.JobSpec) (bool, error) {
	ok, err := s.TraceSource.Next(j)
	if !ok || err != nil {
		return ok, err
	}
	b, err := s.fr.ReadByte()
	if err != nil {
		return false, &InputError{File: s.info.File, Msg: "reading the flags of its sorted copy: " + readErr(err)}
	}
	j.Flags = cluster.JobFlag(b)
	return true, nil
}

func (s *sortedTrace) Notes() []string { return s.notes }

func (s *sortedTrace) Info() TraceInfo {
	i := s.info
	i.Rows = s.TraceSource.Info().Rows
	return i
}

func (s *sortedTrace) Close() error {
	err := s.TraceSource.Close()
	s.flags.Close()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

// openSorted sorts a trace into a temporary native file and opens that.
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
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	jsonl := info.Format == FormatJSONL
	tmp := filepath.Join(dir, "sorted.csv")
	if jsonl {
		tmp = filepath.Join(dir, "sorted.jsonl")
	}
	var res SortResult
	err = writeSorted(tmp, jsonl, func(sink jobSink) error {
		var err error
		res, err = sortSource(src, sink, SortOptions{TempDir: dir})
		return err
	})
	if err != nil {
		return nil, err
	}
	flags, err := os.Open(tmp + ".flags")
	if err != nil {
		return nil, err
	}
	sorted, err := openTraceRaw(tmp, FormatNative, opts)
	if err != nil {
		flags.Close()
		return nil, err
	}
	info.Format = format
	return &sortedTrace{TraceSource: sorted, info: info, notes: append(res.Notes, sortedNote(res.Rows)), dir: dir,
		flags: flags, fr: bufio.NewReaderSize(flags, 1<<12)}, nil
}

// writeSorted writes path, a native CSV (or JSON lines), and its ".flags"
// side file through the sink fill is given, then flushes and closes both.
func writeSorted(path string, jsonl bool, fill func(jobSink) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	ff, err := os.Create(path + ".flags")
	if err != nil {
		f.Close()
		return err
	}
	bw, fw := bufio.NewWriterSize(f, 1<<16), bufio.NewWriterSize(ff, 1<<12)
	nw, err := NewNativeWriter(bw, jsonl)
	if err == nil {
		err = fill(jobSink{w: nw, flags: fw})
	}
	if err == nil {
		err = nw.Flush()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = fw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if cerr := ff.Close(); err == nil {
		err = cerr
	}
	return err
}
