package sim

import (
	"encoding/binary"
	"fmt"
	"iter"
	"os"
	"sync"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Records past Config.RecordsInMemory go to a temporary file as their
// chunks fill, so that a run of millions of jobs holds the records of the
// jobs in flight rather than every record (208 bytes a job in memory; 40
// to 60 in the file). The file is unlinked once made (on systems that
// allow it): the result holds its only handle and the space goes when
// the result does. Result.Records reads it back a chunk at a time, in
// job order, into one chunk of records reused along the way.
//
// A record's strings and pointers become indexes into tables the file
// keeps in memory: the queues, the pod requests (already one copy a
// distinct request) and the rare parts (few); the name is written whole.

// DefaultRecordsInMemory is the records a run keeps in memory before it
// moves finished ones to a temporary file (Config.RecordsInMemory 0).
const DefaultRecordsInMemory = 1 << 20

// recordFile is the records a run moved to its temporary file.
type recordFile struct {
	f *os.File
	// at[k] and size[k]: where chunk k of records is in the file.
	at   []int64
	size []int32
	end  int64
	n    int   // records in all
	err  error // the first write error
	// The tables the records' indexes point into.
	queues []string
	qidx   map[string]uint32
	pods   []*cluster.PodSpec
	pidx   map[*cluster.PodSpec]uint32
	rares  []*recordRare
	ridx   map[*recordRare]uint32
	buf    []byte
	names  []byte
	// mu guards rerr, the first failure to read the file back.
	mu   sync.Mutex
	rerr error
}

// failed keeps err as the first read failure.
func (w *recordFile) failed(err error) {
	w.mu.Lock()
	if w.rerr == nil {
		w.rerr = err
	}
	w.mu.Unlock()
}

// readErr is the first read failure.
func (w *recordFile) readErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rerr
}

// newRecordFile makes the temporary file in dir ("": the system's).
func newRecordFile(dir string) (*recordFile, error) {
	f, err := os.CreateTemp(dir, "gpuplan-records-*")
	if err != nil {
		return nil, fmt.Errorf("records of a large run: %w", err)
	}
	// Unlinked at once where the system allows it: nothing to clean up.
	_ = os.Remove(f.Name())
	return &recordFile{f: f, qidx: map[string]uint32{}, pidx: map[*cluster.PodSpec]uint32{}, ridx: map[*recordRare]uint32{}}, nil
}

// queue is q's index in the queue table.
func (w *recordFile) queue(q string) uint32 {
	if n := len(w.queues); n > 0 && w.queues[n-1] == q {
		return uint32(n - 1)
	}
	i, ok := w.qidx[q]
	if !ok {
		i = uint32(len(w.queues))
		w.queues = append(w.queues, q)
		w.qidx[q] = i
	}
	return i
}

// pod is p's index in the pod table plus one (0: nil).
func (w *recordFile) pod(p *cluster.PodSpec) uint32 {
	if p == nil {
		return 0
	}
	i, ok := w.pidx[p]
	if !ok {
		w.pods = append(w.pods, p)
		i = uint32(len(w.pods))
		w.pidx[p] = i
	}
	return i
}

// rare is x's index in the rare table plus one (0: nil).
func (w *recordFile) rare(x *recordRare) uint32 {
	if x == nil {
		return 0
	}
	i, ok := w.ridx[x]
	if !ok {
		w.rares = append(w.rares, x)
		i = uint32(len(w.rares))
		w.ridx[x] = i
	}
	return i
}

// write appends chunk k, records recs, to the file.
func (w *recordFile) write(k int, recs []JobRecord) {
	if w.err != nil {
		return
	}
	// A chunk: its record count, its names one after another, then the
	// records.
	w.names = w.names[:0]
	body := w.buf[:0]
	for i := range recs {
		body = w.encode(body, &recs[i])
	}
	b := make([]byte, 0, 2*binary.MaxVarintLen64+len(w.names)+len(body))
	b = binary.AppendUvarint(b, uint64(len(recs)))
	b = binary.AppendUvarint(b, uint64(len(w.names)))
	b = append(b, w.names...)
	b = append(b, body...)
	w.buf = body
	for len(w.at) <= k {
		w.at = append(w.at, -1)
		w.size = append(w.size, 0)
	}
	if _, err := w.f.Write(b); err != nil {
		w.err = fmt.Errorf("records of a large run: %w", err)
		return
	}
	w.at[k], w.size[k] = w.end, int32(len(b))
	w.end += int64(len(b))
}

// encode appends record r: every field as a varint, the name whole.
func (w *recordFile) encode(b []byte, r *JobRecord) []byte {
	v := binary.AppendVarint
	u := binary.AppendUvarint
	b = v(b, int64(r.ID))
	b = v(b, int64(r.Reason))
	b = u(b, uint64(len(r.Name)))
	w.names = append(w.names, r.Name...)
	b = u(b, uint64(w.queue(r.Queue)))
	b = v(b, int64(r.Priority))
	b = v(b, int64(r.Replicas))
	b = v(b, int64(r.PodsBound))
	b = v(b, int64(r.MinAvailable))
	b = u(b, uint64(w.pod(r.Pod)))
	b = v(b, r.Submit)
	// Start and End as offsets from Submit and Start: small numbers.
	b = v(b, r.Start-r.Submit)
	b = v(b, r.End-r.Start)
	b = v(b, r.Duration)
	b = v(b, r.Deadline)
	slowed := uint64(0)
	if r.Slowed {
		slowed = 1
	}
	b = u(b, uint64(r.Flags)|uint64(r.Outcome)<<8|slowed<<16)
	b = v(b, int64(r.Pool))
	b = v(b, r.HeldMilliMs)
	b = v(b, r.AllocMilli)
	b = v(b, int64(r.Attempts))
	b = v(b, int64(r.Disruptions))
	b = v(b, int64(r.Failures))
	b = v(b, int64(r.usePool))
	b = v(b, r.LostMs)
	b = v(b, r.CheckpointMs)
	b = v(b, r.useHeld[0])
	b = v(b, r.useHeld[1])
	b = v(b, r.useHeld[2])
	b = u(b, uint64(w.rare(r.rare)))
	b = v(b, r.Admitted)
	b = v(b, int64(r.Preemptions))
	b = v(b, int64(r.PreemptionsCaused))
	return b
}

// decoder reads varints off a chunk; a short or bad chunk sets bad.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) v() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) u() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return x
}

// decode reads one record into r; its name is the next of *names.
func (w *recordFile) decode(d *decoder, r *JobRecord, names *string) {
	r.ID = int32(d.v())
	r.Reason = int32(d.v())
	nl := d.u()
	if nl > uint64(len(*names)) {
		d.bad = true
		return
	}
	r.Name, *names = (*names)[:nl], (*names)[nl:]
	if q := d.u(); q < uint64(len(w.queues)) {
		r.Queue = w.queues[q]
	} else {
		d.bad = true
	}
	r.Priority = int32(d.v())
	r.Replicas = int32(d.v())
	r.PodsBound = int32(d.v())
	r.MinAvailable = int32(d.v())
	switch p := d.u(); {
	case p == 0:
		r.Pod = nil
	case p <= uint64(len(w.pods)):
		r.Pod = w.pods[p-1]
	default:
		d.bad = true
	}
	r.Submit = d.v()
	r.Start = r.Submit + d.v()
	r.End = r.Start + d.v()
	r.Duration = d.v()
	r.Deadline = d.v()
	f := d.u()
	r.Flags, r.Outcome, r.Slowed = cluster.JobFlag(f), Outcome(f>>8), f>>16&1 == 1
	r.Pool = int32(d.v())
	r.HeldMilliMs = d.v()
	r.AllocMilli = d.v()
	r.Attempts = int32(d.v())
	r.Disruptions = int32(d.v())
	r.Failures = int32(d.v())
	r.usePool = int32(d.v())
	r.LostMs = d.v()
	r.CheckpointMs = d.v()
	r.useHeld[0] = d.v()
	r.useHeld[1] = d.v()
	r.useHeld[2] = d.v()
	switch x := d.u(); {
	case x == 0:
		r.rare = nil
	case x <= uint64(len(w.rares)):
		r.rare = w.rares[x-1]
	default:
		d.bad = true
	}
	r.Admitted = d.v()
	r.Preemptions = int32(d.v())
	r.PreemptionsCaused = int32(d.v())
}

// all yields every record in order; a read failure stops it and is kept
// (readErr).
func (w *recordFile) all() iter.Seq2[int, *JobRecord] {
	return func(yield func(int, *JobRecord) bool) {
		var raw []byte
		recs := make([]JobRecord, recChunk)
		id := 0
		for k := range w.at {
			if w.at[k] < 0 {
				w.failed(fmt.Errorf("records of a large run: chunk %d was never written", k))
				return
			}
			if cap(raw) < int(w.size[k]) {
				raw = make([]byte, w.size[k])
			}
			raw = raw[:w.size[k]]
			if _, err := w.f.ReadAt(raw, w.at[k]); err != nil {
				w.failed(fmt.Errorf("records of a large run: %w", err))
				return
			}
			// One string a chunk holds its records' names (they are cut
			// from it): the names outlive the reused records safely.
			d := decoder{b: raw}
			m, nl := d.u(), d.u()
			var names string
			if m > recChunk || nl > uint64(len(d.b)) {
				d.bad = true
			} else {
				names = string(d.b[:nl])
				d.b = d.b[nl:]
			}
			for i := 0; i < int(m) && !d.bad; i++ {
				w.decode(&d, &recs[i], &names)
			}
			if d.bad {
				w.failed(fmt.Errorf("records of a large run: chunk %d is corrupt", k))
				return
			}
			for i := 0; i < int(m); i++ {
				if !yield(id, &recs[i]) {
					return
				}
				id++
			}
		}
	}
}
