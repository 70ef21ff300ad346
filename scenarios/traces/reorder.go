package traces

import (
	"fmt"
	"time"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// absJob is a job with an absolute submit time (ms since the epoch) and
// where it was read, waiting in the reorder buffer.
type absJob struct {
	job  cluster.JobSpec
	at   int64
	line int
	seq  int
}

// before orders rows by time, then by the order they were read.
func (a *absJob) before(b *absJob) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// lateKey is where a row that came late waits, by its time and sequence.
type lateKey struct {
	at   int64
	seq  int
	slot int32
}

func (a lateKey) before(b lateKey) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// lateRows holds the rows that came after a later one: the rows stay in
// slots (reused), and a binary heap of small keys orders them, so nothing
// is boxed and a sift moves 24 bytes, not a whole job.
type lateRows struct {
	slots []absJob
	free  []int32
	keys  []lateKey
}

func (h *lateRows) len() int { return len(h.keys) }

// first is the earliest waiting row (h.len() > 0).
func (h *lateRows) first() *absJob { return &h.slots[h.keys[0].slot] }

func (h *lateRows) push(j *absJob) {
	var slot int32
	if n := len(h.free); n > 0 {
		slot = h.free[n-1]
		h.free = h.free[:n-1]
		h.slots[slot] = *j
	} else {
		slot = int32(len(h.slots))
		h.slots = append(h.slots, *j)
	}
	h.keys = append(h.keys, lateKey{at: j.at, seq: j.seq, slot: slot})
	for i := len(h.keys) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.keys[i].before(h.keys[p]) {
			break
		}
		h.keys[i], h.keys[p] = h.keys[p], h.keys[i]
		i = p
	}
}

// pop moves the earliest row to out.
func (h *lateRows) pop(out *absJob) {
	slot := h.keys[0].slot
	*out = h.slots[slot]
	h.slots[slot] = absJob{}
	h.free = append(h.free, slot)
	n := len(h.keys) - 1
	h.keys[0] = h.keys[n]
	h.keys = h.keys[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.keys[c+1].before(h.keys[c]) {
			c++
		}
		if !h.keys[c].before(h.keys[i]) {
			break
		}
		h.keys[i], h.keys[c] = h.keys[c], h.keys[i]
		i = c
	}
}

// reorderer turns rows into jobs in submit order: a buffer of window rows
// puts a slightly unordered trace back in order. With absolute times the
// jobs' times become relative to the earliest submission; with keepTimes
// (native and openb traces, whose times already count from the trace
// start) they are kept. Rows that arrive in time order (most of them)
// wait in a queue, in place; only those earlier than a row before them
// go to the heap of late rows.
type reorderer struct {
	file      string
	window    int
	field     string // the submit column, for the error about a late row
	keepTimes bool
	q         []absJob // rows in time order, q[qh:] waiting
	qh        int
	late      lateRows
	seq       int
	base      int64
	started   bool
	last      int64
	done      bool
	x         absJob // scratch for pop
	// passThrough is the fast path for a trace known to be in time order
	// (OpenTrace's check found no row earlier than the one before it):
	// each row is handed out as it is read, with no buffer.
	passThrough bool
	// anyOrder hands rows out in the file's order, as read (to size a
	// cluster, where order does not matter).
	anyOrder bool
}

func (r *reorderer) waiting() int { return len(r.q) - r.qh + r.late.len() }

// push adds a row's job; pop takes the next job out once the buffer is
// full (or, when drain is set, whatever is left).
func (r *reorderer) push(j *absJob) {
	j.seq = r.seq
	r.seq++
	n := len(r.q)
	if n > r.qh && j.at < r.q[n-1].at {
		r.late.push(j)
		return
	}
	if r.qh > 0 && n == cap(r.q) {
		// Move the waiting rows to the front rather than grow.
		k := copy(r.q, r.q[r.qh:])
		clear(r.q[k:])
		r.q, r.qh = r.q[:k], 0
	}
	r.q = append(r.q, *j)
}

func (r *reorderer) ready(drain bool) bool {
	w := r.waiting()
	return w > 0 && (drain || w > r.window)
}

func (r *reorderer) pop(out *cluster.JobSpec) error {
	x := &r.x
	if r.qh < len(r.q) && (r.late.len() == 0 || !r.late.first().before(&r.q[r.qh])) {
		*x = r.q[r.qh]
		r.q[r.qh] = absJob{}
		if r.qh++; r.qh == len(r.q) {
			r.q, r.qh = r.q[:0], 0
		}
	} else {
		r.late.pop(x)
	}
	return r.give(x, out)
}

// give hands out the next row in time order as a job, its times made
// relative to the trace start; a row earlier than the one before it is
// an error.
func (r *reorderer) give(x *absJob, out *cluster.JobSpec) error {
	if !r.started {
		r.base, r.started = x.at, true
		if r.keepTimes {
			r.base = 0
		}
	}
	if x.at < r.last && !r.anyOrder {
		field := r.field
		if field == "" {
			field = "submit time"
		}
		return &strict.InputError{File: r.file, Line: x.line, Field: field,
			Msg: fmt.Sprintf("is %s before a job already replayed: the trace is out of time order by more than %d rows; sort the file by submit time first", time.Duration(r.last-x.at)*time.Millisecond, r.window)}
	}
	r.last = x.at
	*out = x.job
	out.Submit = x.at - r.base
	if out.Deadline > 0 {
		out.Deadline -= r.base
	}
	return nil
}
