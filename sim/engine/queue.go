package engine

import "fmt"

// Time is virtual time in milliseconds since the start of the simulation.
type Time = int64

// Handle names a pushed event so it can be cancelled. The zero Handle is
// never returned by Push and cancelling it is a no-op.
type Handle struct {
	slot int32
	gen  uint32
}

// Valid reports whether h was returned by Push (it may have fired since).
func (h Handle) Valid() bool { return h.gen != 0 }

type item[E any] struct {
	at   Time
	seq  uint64
	slot int32
	ev   E
}

type slot struct {
	pos int32 // index in heap, -1 when free
	gen uint32
}

// Queue is a priority queue of events of type E keyed by (time, seq).
// The zero value is not usable; call New.
type Queue[E any] struct {
	heap  []item[E]
	slots []slot
	free  []int32
	seq   uint64
	now   Time
	// popped is the sequence number of the most recently popped event.
	popped uint64
}

// New returns an empty queue with room for capacity events.
func New[E any](capacity int) *Queue[E] {
	return &Queue[E]{
		heap:  make([]item[E], 0, capacity),
		slots: make([]slot, 0, capacity),
		free:  make([]int32, 0, capacity),
	}
}

// Now is the time of the most recently popped event (0 before the first).
func (q *Queue[E]) Now() Time { return q.now }

// Len is the number of pending events.
func (q *Queue[E]) Len() int { return len(q.heap) }

// Push schedules ev at time at. Scheduling in the past is a programming
// error and panics: the clock never runs backwards.
func (q *Queue[E]) Push(at Time, ev E) Handle {
	q.seq++
	return q.push(at, q.seq, ev)
}

// Reserve takes the sequence number the next Push would take, without
// pushing: an event pushed later with PushSeq and that number is ordered
// as if it had been pushed now (after the events pushed before, before
// those pushed after at the same time).
func (q *Queue[E]) Reserve() uint64 {
	q.seq++
	return q.seq
}

// PushSeq schedules ev at time at with sequence number seq: one from
// Reserve, or 0 to come before every other event at the same time.
func (q *Queue[E]) PushSeq(at Time, seq uint64, ev E) Handle {
	return q.push(at, seq, ev)
}

// Popped is the sequence number of the most recently popped event (the
// order of events at the same time is their sequence numbers').
func (q *Queue[E]) Popped() uint64 { return q.popped }

func (q *Queue[E]) push(at Time, seq uint64, ev E) Handle {
	if at < q.now {
		panic(fmt.Sprintf("engine: event at %d ms is before now (%d ms)", at, q.now))
	}
	var s int32
	if n := len(q.free); n > 0 {
		s = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		s = int32(len(q.slots))
		q.slots = append(q.slots, slot{})
	}
	q.slots[s].gen++
	if q.slots[s].gen == 0 { // wrapped: skip the reserved zero generation
		q.slots[s].gen = 1
	}
	q.heap = append(q.heap, item[E]{at: at, seq: seq, slot: s, ev: ev})
	i := len(q.heap) - 1
	q.slots[s].pos = int32(i)
	q.up(i)
	return Handle{slot: s, gen: q.slots[s].gen}
}

// Cancel removes the event h names if it has not fired yet and reports
// whether it did.
func (q *Queue[E]) Cancel(h Handle) bool {
	if h.gen == 0 || int(h.slot) >= len(q.slots) {
		return false
	}
	sl := q.slots[h.slot]
	if sl.gen != h.gen || sl.pos < 0 {
		return false
	}
	q.removeAt(int(sl.pos))
	return true
}

// PeekTime returns the time of the next event; ok is false when empty.
func (q *Queue[E]) PeekTime() (at Time, ok bool) {
	if len(q.heap) == 0 {
		return 0, false
	}
	return q.heap[0].at, true
}

// Pop removes the next event, advances the clock to its time and returns it.
func (q *Queue[E]) Pop() (at Time, ev E, ok bool) {
	if len(q.heap) == 0 {
		return 0, ev, false
	}
	top := q.heap[0]
	q.removeAt(0)
	q.now = top.at
	q.popped = top.seq
	return top.at, top.ev, true
}

func (q *Queue[E]) removeAt(i int) {
	s := q.heap[i].slot
	q.slots[s].pos = -1
	q.free = append(q.free, s)
	last := len(q.heap) - 1
	if i != last {
		q.heap[i] = q.heap[last]
		q.slots[q.heap[i].slot].pos = int32(i)
	}
	var zero item[E]
	q.heap[last] = zero
	q.heap = q.heap[:last]
	if i < len(q.heap) {
		if !q.down(i) {
			q.up(i)
		}
	}
}

func (q *Queue[E]) less(i, j int) bool {
	a, b := &q.heap[i], &q.heap[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *Queue[E]) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.slots[q.heap[i].slot].pos = int32(i)
	q.slots[q.heap[j].slot].pos = int32(j)
}

// 4-ary heap: children of i are 4i+1..4i+4.
func (q *Queue[E]) up(i int) {
	for i > 0 {
		p := (i - 1) / 4
		if !q.less(i, p) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *Queue[E]) down(i int) bool {
	start := i
	n := len(q.heap)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if q.less(k, best) {
				best = k
			}
		}
		if !q.less(best, i) {
			break
		}
		q.swap(i, best)
		i = best
	}
	return i > start
}
