package sim

import (
	"fmt"
	"runtime"
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Jobs live in slots, in chunks that never move: the first holds
// firstChunk slots (a small run allocates little), the others
// 1<<chunkBits each. Job ids map to slots through id chunks of
// 1<<chunkBits ids.
const (
	chunkBits  = 10
	firstChunk = 64
)

// jobTable is the run's job table: every job's state, numbered in arrival
// order (workload jobs and services' replica pods alike), and the records
// of the jobs that finished. In a plain run a finished job is recorded at
// once and its slot freed for a later job, once the scheduler's queue no
// longer points to it: the table then holds the jobs in flight (and those
// the queue still points to), not every job of the run, however far
// apart in arrival order they are (an overloaded cluster's backlog keeps
// a few jobs of every thousand waiting to the end); slabs recycle the
// placement slices of released jobs.
type jobTable struct {
	chunks [][]jobState // by slot
	nslots int32
	// ids maps job ids to slots (-1: the job is recorded and its state
	// gone), 1<<chunkBits ids a chunk; a chunk whose jobs are all gone
	// is dropped (nil), live counts each chunk's jobs not gone.
	ids   [][]int32
	live  []int32
	njobs int32
	plain bool
	// reps are the ids of the services' replica pods, ascending: a job's
	// record is numbered by its id less the replica pods before it.
	reps []int32
	recs recStore
	// retired holds the slots of recorded jobs the queue may still point
	// to, free those it does not: checked again once retired has grown to
	// checkAt.
	retired, free []int32
	checkAt       int
	// reused counts the slots given to a second job; stale the events
	// dropped with their jobs.
	reused, stale int
	slabs         [65][][]cluster.Placement
}

// queueHolder says whether the scheduler's queue still points to a job
// that left it (scheduler.Scheduler does): a job's slot is reused only
// when it does not.
type queueHolder interface {
	Holds(j *scheduler.JobInfo) bool
}

// slot is the state in slot k.
func (t *jobTable) slot(k int32) *jobState {
	if k < firstChunk {
		return &t.chunks[0][k]
	}
	k -= firstChunk
	return &t.chunks[1+k>>chunkBits][k&(1<<chunkBits-1)]
}

// at is job id's state.
func (t *jobTable) at(id int32) *jobState {
	return t.slot(t.ids[id>>chunkBits][id&(1<<chunkBits-1)])
}

// add is a new job, numbered next, with nothing started.
func (t *jobTable) add(q queueHolder) *jobState {
	id := t.njobs
	if int(id>>chunkBits) == len(t.ids) {
		t.ids = append(t.ids, make([]int32, 1<<chunkBits))
		t.live = append(t.live, 0)
	}
	k, reused := t.newSlot(q)
	t.ids[id>>chunkBits][id&(1<<chunkBits-1)] = k
	t.live[id>>chunkBits]++
	t.njobs++
	j := t.slot(k)
	if reused {
		*j = jobState{}
	}
	j.info.ID = id
	j.info.Spec = &j.spec
	j.start, j.end = -1, -1
	j.pool = -1
	j.usePool = -1
	j.admitAt = -1
	return j
}

// newSlot is a slot for a new job: a freed one when there is one
// (reused), a new one, zero, otherwise.
func (t *jobTable) newSlot(q queueHolder) (k int32, reused bool) {
	if len(t.free) == 0 && len(t.retired) > 0 && len(t.retired) >= t.checkAt {
		// Free the retired slots the queue no longer points to; check
		// again once as many more have retired as are still held (each
		// slot is checked a bounded number of times on average).
		held := t.retired[:0]
		for _, k := range t.retired {
			if q.Holds(&t.slot(k).info) {
				held = append(held, k)
			} else {
				t.free = append(t.free, k)
			}
		}
		t.retired = held
		t.checkAt = max(retiredCheck, 2*len(held))
	}
	if n := len(t.free); n > 0 {
		k = t.free[n-1]
		t.free = t.free[:n-1]
		t.reused++
		return k, true
	}
	k = t.nslots
	switch {
	case k == 0:
		t.chunks = append(t.chunks, make([]jobState, firstChunk))
	case k >= firstChunk && int(1+(k-firstChunk)>>chunkBits) == len(t.chunks):
		t.chunks = append(t.chunks, make([]jobState, 1<<chunkBits))
	}
	t.nslots++
	return k, false
}

// spareChunks is how many spilled chunks of records wait for reuse
// (recStore.spill).
const spareChunks = 8

// retiredCheck is how many retired slots wait before the queue is asked
// which of them it still points to.
const retiredCheck = 256

// gone reports whether job id's state was dropped (a plain run): the job
// finished and is recorded.
func (t *jobTable) gone(id int32) bool {
	c := t.ids[id>>chunkBits]
	return c == nil || c[id&(1<<chunkBits-1)] < 0
}

// retire is called when job j has finished: in a plain run its record is
// built now (admission: the run admits jobs), and its state dropped, its
// slot freed for a later job once the queue no longer points to it.
func (t *jobTable) retire(j *jobState, admission bool) {
	if !t.plain || j.svc != 0 {
		return
	}
	id := j.info.ID
	n, _ := slices.BinarySearch(t.reps, id)
	out := id - int32(n) // records are numbered as jobs, replica pods left out
	t.record(j, out, admission)
	t.recs.built(out)
	c := t.ids[id>>chunkBits]
	t.retired = append(t.retired, c[id&(1<<chunkBits-1)])
	c[id&(1<<chunkBits-1)] = -1
	t.live[id>>chunkBits]--
	if t.live[id>>chunkBits] == 0 && t.njobs >= (id>>chunkBits+1)<<chunkBits {
		t.ids[id>>chunkBits] = nil
	}
}

// placements is an empty slice for the placements of a job of n pods.
func (t *jobTable) placements(n int32) []cluster.Placement {
	if int(n) < len(t.slabs) {
		if s := t.slabs[n]; len(s) > 0 {
			p := s[len(s)-1]
			t.slabs[n] = s[:len(s)-1]
			return p[:0]
		}
	}
	return make([]cluster.Placement, 0, n)
}

// unplace drops job j's placements, keeping the slice for reuse.
func (t *jobTable) unplace(j *jobState) {
	if n := j.spec.Replicas; int(n) < len(t.slabs) && j.placed != nil {
		t.slabs[n] = append(t.slabs[n], j.placed[:0])
	}
	j.placed = nil
}

// bigRun is the size of job table past which the run's end collects its
// engine state at once (when a quarter of it or more is garbage).
const bigRun = 1 << 18

// release drops the job table, whose state is now in the records. A big
// table (every job's state, 333 MB at 1M, in a run that is not plain; a
// plain run's jobs in flight at once) is garbage now: one collection then
// frees it before the outputs allocate, and they reuse its memory rather
// than grow the heap. A small table skips the collection, which would
// cost a mark of every record for little.
func (t *jobTable) release() {
	t.chunks, t.ids, t.retired, t.free = nil, nil, nil, nil
	if t.nslots >= bigRun {
		runtime.GC()
	}
}

// workloadFeed reads the workload one job ahead of the clock: next is the
// job read but not yet arrived (hasNext), lastSub the latest submit time
// read; truncated: a job at or past the horizon ended the read; longest
// is the longest job arrived.
type workloadFeed struct {
	next      cluster.JobSpec
	hasNext   bool
	lastSub   Time
	truncated bool
	longest   Time
}

// readNext reads the workload's next job (numbered idx) and, when there
// is one before the horizon, schedules its arrival.
func (f *workloadFeed) readNext(src JobSource, horizon Time, idx int, ev eventSink) error {
	if err := f.read(src, horizon, idx); err != nil || !f.hasNext {
		return err
	}
	ev.push(f.next.Submit, event{kind: evArrival})
	return nil
}

// read reads the workload's next job, numbered idx, into f.next: hasNext
// says whether there is one before the horizon (0: none).
func (f *workloadFeed) read(src JobSource, horizon Time, idx int) error {
	f.hasNext = false
	j := &f.next
	ok, err := src.Next(j)
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	if horizon > 0 && j.Submit >= horizon {
		f.truncated = true
		return nil
	}
	if err := j.Validate(); err != nil {
		return &WorkloadError{Job: idx, Name: j.Name, Err: err}
	}
	if j.Submit < f.lastSub {
		return &WorkloadError{Job: idx, Name: j.Name, Err: fmt.Errorf("submitted at %d ms, before the previous job (%d ms): the workload must be in submit order", j.Submit, f.lastSub)}
	}
	f.lastSub = j.Submit
	f.hasNext = true
	return nil
}
