package traces

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"maps"
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// The rows being sorted are held as records in a compact binary form
// (varints and length-prefixed texts), packed in large byte chunks, and
// ordered by small keys (time, record). A record is a fraction of the
// size of a parsed row, holds no pointer for the garbage collector to
// scan, and is read in the order of the keys with a cache miss or two. A
// sorted run of an external sort is the same records, each behind its
// length, written to a temporary file in the keys' order and read back in
// the merge; the last run stays in memory. A record keeps every field of
// a row (its flags and full node affinity too).

// appendRow appends a row in the record form.
func appendRow(b []byte, a *absJob) ([]byte, error) {
	j := &a.job
	if j.Recovery != nil || j.Training != nil || j.MinAvailable != 0 {
		return b, fmt.Errorf("job %s: recovery, training and gang size are not trace fields", strict.Quote(j.Name))
	}
	for _, v := range [...]int64{a.at, int64(a.seq), int64(a.line), j.Duration, j.Deadline, int64(j.Replicas), int64(j.Priority), int64(j.Flags),
		j.Pod.MilliCPU, j.Pod.MemoryMiB, int64(j.Pod.GPUs), int64(j.Pod.GPUMilli), j.Pod.GPUMemMiB} {
		b = binary.AppendVarint(b, v)
	}
	b = appendText(appendText(appendText(b, j.Name), j.Queue), j.Pod.MIG)
	c := j.Constraints
	if c == nil {
		return append(b, 0), nil
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(c.NodeSelector)))
	for _, k := range slices.Sorted(maps.Keys(c.NodeSelector)) {
		b = appendText(appendText(b, k), c.NodeSelector[k])
	}
	b = binary.AppendUvarint(b, uint64(len(c.Affinity)))
	for _, t := range c.Affinity {
		b = binary.AppendUvarint(b, uint64(len(t)))
		for _, r := range t {
			b = appendText(appendText(b, r.Key), string(r.Op))
			b = binary.AppendUvarint(b, uint64(len(r.Values)))
			for _, v := range r.Values {
				b = appendText(b, v)
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(c.Tolerations)))
	for _, t := range c.Tolerations {
		b = appendText(appendText(appendText(appendText(b, t.Key), t.Operator), t.Value), string(t.Effect))
	}
	return b, nil
}

func appendText(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var errBadRecord = errors.New("a record cut short or out of range")

// maxInterned bounds the distinct texts a rowDecoder shares.
const maxInterned = 4096

// rowDecoder reads records back. The texts rows repeat (queues, MIG
// profiles, labels) are shared, up to maxInterned of them; names are not.
type rowDecoder struct {
	b      []byte
	err    error
	shared map[string]string
	// borrowNames makes a job's name a view of its record, good until
	// the next row is read (for a writer that copies it at once).
	borrowNames bool
	// names holds the names otherwise.
	names nameArena
}

func (d *rowDecoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errBadRecord
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length: never more than the bytes left, as every item
// counted takes at least one.
func (d *rowDecoder) count() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > uint64(len(d.b)-n) {
		d.err = errBadRecord
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *rowDecoder) text() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	t := d.b[:n]
	d.b = d.b[n:]
	return t
}

// common reads a text rows are likely to share.
func (d *rowDecoder) common() string {
	t := d.text()
	if len(t) == 0 {
		return ""
	}
	if s, ok := d.shared[string(t)]; ok {
		return s
	}
	s := string(t)
	if d.shared == nil {
		d.shared = make(map[string]string)
	}
	if len(d.shared) < maxInterned {
		d.shared[s] = s
	}
	return s
}

// decodeRow reads a record into a.
func (d *rowDecoder) decodeRow(rec []byte, a *absJob) error {
	d.b, d.err = rec, nil
	*a = absJob{}
	j := &a.job
	a.at, a.seq, a.line = d.int(), int(d.int()), int(d.int())
	j.Duration, j.Deadline, j.Replicas, j.Priority, j.Flags = d.int(), d.int(), int32(d.int()), int32(d.int()), cluster.JobFlag(d.int())
	j.Pod.MilliCPU, j.Pod.MemoryMiB, j.Pod.GPUs, j.Pod.GPUMilli, j.Pod.GPUMemMiB = d.int(), d.int(), int32(d.int()), int32(d.int()), d.int()
	if d.borrowNames {
		j.Name = view(d.text())
	} else {
		j.Name = d.names.clone(view(d.text()))
	}
	j.Queue, j.Pod.MIG = d.common(), d.common()
	has := d.text1()
	if has == 1 {
		c := &cluster.Constraints{}
		if n := d.count(); n > 0 {
			c.NodeSelector = make(map[string]string, n)
			for range n {
				k := d.common()
				c.NodeSelector[k] = d.common()
			}
		}
		for range d.count() {
			var t cluster.NodeSelectorTerm
			for range d.count() {
				r := cluster.Requirement{Key: d.common(), Op: cluster.SelectorOp(d.common())}
				for range d.count() {
					r.Values = append(r.Values, d.common())
				}
				t = append(t, r)
			}
			c.Affinity = append(c.Affinity, t)
		}
		for range d.count() {
			c.Tolerations = append(c.Tolerations, cluster.Toleration{Key: d.common(), Operator: d.common(), Value: d.common(), Effect: cluster.TaintEffect(d.common())})
		}
		j.Constraints = c
	}
	if d.err == nil && (has > 1 || len(d.b) > 0) {
		d.err = errBadRecord
	}
	if d.err != nil {
		return fmt.Errorf("reading back a sorted run: %w", d.err)
	}
	j.Submit = a.at
	return nil
}

// text1 reads one byte.
func (d *rowDecoder) text1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.err = errBadRecord
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// recordHead reads a record's time and sequence, which order the merge.
func recordHead(rec []byte) (at, seq int64, err error) {
	at, n := binary.Varint(rec)
	if n <= 0 {
		return 0, 0, errBadRecord
	}
	seq, m := binary.Varint(rec[n:])
	if m <= 0 {
		return 0, 0, errBadRecord
	}
	return at, seq, nil
}

// rowArena holds records, each behind its length, in chunks of a fixed
// size (a record never spans two), so that adding one never copies those
// before it. A record is named by a reference: its chunk and offset.
type rowArena struct {
	chunks [][]byte
	cur    int
}

const arenaChunk = 1 << 20

// add copies rec in and says where it is.
func (r *rowArena) add(rec []byte) uint64 {
	need := binary.MaxVarintLen64 + len(rec)
	if len(r.chunks) == 0 || cap(r.chunks[r.cur])-len(r.chunks[r.cur]) < need {
		if len(r.chunks) > 0 {
			r.cur++
		}
		if r.cur == len(r.chunks) {
			r.chunks = append(r.chunks, nil)
		}
		if cap(r.chunks[r.cur]) < need {
			r.chunks[r.cur] = make([]byte, 0, max(arenaChunk, need))
		}
	}
	c := r.chunks[r.cur]
	ref := uint64(r.cur)<<32 | uint64(len(c))
	c = binary.AppendUvarint(c, uint64(len(rec)))
	r.chunks[r.cur] = append(c, rec...)
	return ref
}

// entry is a record with its length in front, as a run file holds it.
func (r *rowArena) entry(ref uint64) []byte {
	c := r.chunks[ref>>32][uint32(ref):]
	n, k := binary.Uvarint(c)
	return c[:k+int(n)]
}

// first is the first byte of a record's entry. Reading it some rows
// before the record is needed starts the fetch of its cache line, so that
// the fetches of rows read in key order (scattered in the arena) overlap
// instead of each stalling in turn.
func (r *rowArena) first(ref uint64) byte { return r.chunks[ref>>32][uint32(ref)] }

// touchAhead is how many rows ahead of the one read a run touches the
// next record.
const touchAhead = 8

// record is a record alone.
func (r *rowArena) record(ref uint64) []byte {
	c := r.chunks[ref>>32][uint32(ref):]
	n, k := binary.Uvarint(c)
	return c[k : k+int(n)]
}

// reset empties the arena for the next run, keeping its chunks.
func (r *rowArena) reset() {
	for i := range r.chunks {
		r.chunks[i] = r.chunks[i][:0]
	}
	r.cur = 0
}

// sortKey orders a record by its row's time.
type sortKey struct {
	at  int64
	ref uint64
}

// sortKeys sorts keys (in the order the rows were read) by time, stably,
// with a least-significant-digit radix sort on the time's bytes, which
// skips the bytes all times share: a few linear passes instead of n log n
// compares. It uses tmp as scratch and returns the sorted keys and the
// other buffer, either of which may be tmp.
func sortKeys(keys, tmp []sortKey) (sorted, spare []sortKey) {
	n := len(keys)
	if n < 2 {
		return keys, tmp
	}
	if cap(tmp) < n {
		tmp = make([]sortKey, n)
	}
	tmp = tmp[:n]
	var counts [8][256]int
	for i := range keys {
		u := uint64(keys[i].at) ^ 1<<63
		for b := range 8 {
			counts[b][byte(u>>(8*b))]++
		}
	}
	src, dst := keys, tmp
	for b := range 8 {
		c := &counts[b]
		shift := 8 * b
		if c[byte((uint64(src[0].at)^1<<63)>>shift)] == n {
			continue
		}
		pos := 0
		for i := range c {
			c[i], pos = pos, pos+c[i]
		}
		for _, k := range src {
			d := byte((uint64(k.at) ^ 1<<63) >> shift)
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	return src, dst
}

// sortRun is one sorted run: a file, or (the last) records in memory. cur
// is its next record and at, seq that row's time and sequence.
type sortRun struct {
	path string
	f    *os.File
	r    *bufio.Reader
	// bufs hold a file run's last two records read: cur is one, and the
	// record before it stays whole until the run is advanced again (a
	// borrowed name may point into it).
	bufs [2][]byte
	flip int
	mem  *rowArena
	keys []sortKey
	next int
	cur  []byte
	at   int64
	seq  int64
	// touched sums the bytes read ahead (arena.first), so that the reads
	// are not dropped as unused.
	touched byte
}

// maxRecordBytes bounds a record read back from a run: a row's record
// is never much longer than the row's text.
const maxRecordBytes = 4*strict.MaxLineBytes + 1<<10

// writeRun writes the records of arena in the order of keys (sorted) as
// run n in dir.
func writeRun(dir string, n int, arena *rowArena, keys []sortKey) (sortRun, error) {
	r := sortRun{path: filepath.Join(dir, "run-"+strconv.Itoa(n))}
	f, err := os.Create(r.path)
	if err != nil {
		return r, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	var touched byte
	for i, k := range keys {
		if i+touchAhead < len(keys) {
			touched += arena.first(keys[i+touchAhead].ref)
		}
		if _, err = bw.Write(arena.entry(k.ref)); err != nil {
			break
		}
	}
	r.touched = touched
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return r, fmt.Errorf("writing a sorted run to %s: %w", r.path, err)
	}
	return r, nil
}

func (r *sortRun) open() error {
	if r.mem != nil {
		return nil
	}
	f, err := os.Open(r.path)
	if err != nil {
		return err
	}
	r.f = f
	r.r = bufio.NewReaderSize(f, 1<<16)
	return nil
}

// advance moves cur to the run's next record; false at the end.
func (r *sortRun) advance() (bool, error) {
	r.cur = nil
	if r.mem != nil {
		if r.next >= len(r.keys) {
			return false, nil
		}
		if i := r.next + touchAhead; i < len(r.keys) {
			r.touched += r.mem.first(r.keys[i].ref)
		}
		r.cur = r.mem.record(r.keys[r.next].ref)
		r.next++
	} else {
		n, err := binary.ReadUvarint(r.r)
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err == nil && n > maxRecordBytes {
			err = errBadRecord
		}
		if err == nil {
			r.flip ^= 1
			buf := r.bufs[r.flip]
			if uint64(cap(buf)) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			r.bufs[r.flip] = buf
			_, err = io.ReadFull(r.r, buf)
		}
		if err != nil {
			return false, fmt.Errorf("reading back a sorted run: %w", err)
		}
		r.cur = r.bufs[r.flip]
	}
	var err error
	if r.at, r.seq, err = recordHead(r.cur); err != nil {
		return false, fmt.Errorf("reading back a sorted run: %w", err)
	}
	return true, nil
}

func (r *sortRun) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// rowSorter reads a trace's rows into sorted runs and merges them: next
// gives the rows by time (stable: rows of the same time in the order they
// were read), their times relative to the earliest unless the trace keeps
// its own.
type rowSorter struct {
	runs      []sortRun
	heap      []int32 // runs with rows left, by their next rows' (time, sequence)
	dir       string
	keepTimes bool
	base      int64
	started   bool
	dec       rowDecoder
	x         absJob
	notes     []string
	rows      int
}

// sortRows reads src whole into sorted runs of at most opts.MemoryRows
// rows, those beyond the last written to a temporary folder, and makes
// ready to merge them. Closing the sorter removes the folder.
func sortRows(src TraceSource, opts SortOptions) (s *rowSorter, err error) {
	limit := opts.MemoryRows
	if limit <= 0 {
		limit = SortMemoryRows
	}
	read, keepTimes := rawReader(src)
	s = &rowSorter{keepTimes: keepTimes}
	defer func() {
		if err != nil {
			if cerr := s.close(); cerr != nil && err == nil {
				err = cerr
			}
			s = nil
		}
	}()
	arena := &rowArena{}
	var keys, tmp []sortKey
	var a absJob
	var rec []byte
	for {
		ok, err := read(&a)
		if err != nil {
			return s, err
		}
		if !ok {
			break
		}
		if rec, err = appendRow(rec[:0], &a); err != nil {
			return s, err
		}
		keys = append(keys, sortKey{at: a.at, ref: arena.add(rec)})
		s.rows++
		if len(keys) < limit {
			continue
		}
		if s.dir == "" {
			if s.dir, err = os.MkdirTemp(opts.TempDir, "gpuplan-sort-"); err != nil {
				return s, err
			}
		}
		keys, tmp = sortKeys(keys, tmp)
		r, err := writeRun(s.dir, len(s.runs), arena, keys)
		if err != nil {
			return s, err
		}
		s.runs = append(s.runs, r)
		arena.reset()
		keys = keys[:0]
	}
	s.notes = src.Notes()
	if len(keys) > 0 || len(s.runs) == 0 {
		keys, _ = sortKeys(keys, tmp)
		s.runs = append(s.runs, sortRun{mem: arena, keys: keys})
	}
	for i := range s.runs {
		if err := s.runs[i].open(); err != nil {
			return s, err
		}
		ok, err := s.runs[i].advance()
		if err != nil {
			return s, err
		}
		if ok {
			s.heap = append(s.heap, int32(i))
		}
	}
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
	return s, nil
}

func (s *rowSorter) less(i, j int32) bool {
	a, b := &s.runs[i], &s.runs[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (s *rowSorter) down(i int) {
	n := len(s.heap)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && s.less(s.heap[c+1], s.heap[c]) {
			c++
		}
		if !s.less(s.heap[c], s.heap[i]) {
			return
		}
		s.heap[i], s.heap[c] = s.heap[c], s.heap[i]
		i = c
	}
}

// next gives the next row by time, as a job with its time (and deadline)
// made relative to the trace start.
func (s *rowSorter) next(j *cluster.JobSpec) (bool, error) {
	if len(s.heap) == 0 {
		return false, nil
	}
	r := &s.runs[s.heap[0]]
	x := &s.x
	if err := s.dec.decodeRow(r.cur, x); err != nil {
		return false, err
	}
	ok, err := r.advance()
	if err != nil {
		return false, err
	}
	if !ok {
		n := len(s.heap) - 1
		s.heap[0] = s.heap[n]
		s.heap = s.heap[:n]
	}
	s.down(0)
	if !s.started {
		s.started = true
		if !s.keepTimes {
			s.base = x.at
		}
	}
	*j = x.job
	j.Submit = x.at - s.base
	if j.Deadline > 0 {
		j.Deadline -= s.base
	}
	return true, nil
}

// close closes the runs and removes their folder.
func (s *rowSorter) close() error {
	for i := range s.runs {
		s.runs[i].close()
	}
	if s.dir != "" {
		return os.RemoveAll(s.dir)
	}
	return nil
}
