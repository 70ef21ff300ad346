package sim

import (
	"fmt"
	"runtime"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Jobs live in chunks that never move: the first holds firstChunk jobs (a
// small run allocates little), the others 1<<chunkBits each.
const (
	chunkBits  = 10
	firstChunk = 64
)

// jobTable is the run's job table: every job's state, numbered in arrival
// order (workload jobs and services' replica pods alike), and the records
// of the jobs that finished. In a plain run a finished job is recorded at
// once and, once every job of its chunk is, the chunk is dropped (and
// kept for reuse); slabs recycle the placement slices of released jobs.
type jobTable struct {
	chunks [][]jobState
	njobs  int32
	// inChunk counts each chunk's jobs not yet recorded; plain: finished
	// jobs are recorded at once and their chunks dropped (records.go).
	inChunk []int32
	plain   bool
	recs    recStore
	spare   [][]jobState // dropped chunks, for reuse
	// dropped counts the chunks dropped, discarded those of them left
	// to the collector; stale the events dropped with their jobs.
	dropped, discarded, stale int
	slabs                     [65][][]cluster.Placement
}

// queueHolder says whether the scheduler's queue still points to a job
// that left it (scheduler.Scheduler does): a dropped chunk is reused only
// when it does not.
type queueHolder interface{ HoldsNoDone() bool }

// at is job id's state.
func (t *jobTable) at(id int32) *jobState {
	if id < firstChunk {
		return &t.chunks[0][id]
	}
	id -= firstChunk
	return &t.chunks[1+id>>chunkBits][id&(1<<chunkBits-1)]
}

// add is a new job, numbered next, with nothing started.
func (t *jobTable) add(q queueHolder) *jobState {
	id := t.njobs
	switch {
	case len(t.chunks) == 0:
		t.chunks = append(t.chunks, make([]jobState, firstChunk))
		t.inChunk = append(t.inChunk, 0)
	case id >= firstChunk && int(1+(id-firstChunk)>>chunkBits) == len(t.chunks):
		t.chunks = append(t.chunks, t.freshChunk(q))
		t.inChunk = append(t.inChunk, 0)
	}
	t.njobs++
	t.inChunk[len(t.inChunk)-1]++
	j := t.at(id)
	j.info.ID = id
	j.info.Spec = &j.spec
	j.start, j.end = -1, -1
	j.pool = -1
	j.usePool = -1
	j.admitAt = -1
	return j
}

// gone reports whether job id's chunk of the job table was dropped (a
// plain run): the job finished and is recorded.
func (t *jobTable) gone(id int32) bool { return t.chunks[chunkOf(id)] == nil }

// chunkOf is the job table chunk of job id.
func chunkOf(id int32) int {
	if id < firstChunk {
		return 0
	}
	return 1 + int((id-firstChunk)>>chunkBits)
}

// chunkEnd is one past the last job id chunk k holds.
func chunkEnd(k int) int32 {
	return firstChunk + int32(k)<<chunkBits
}

// retire is called when job j has finished: in a plain run its record is
// built now (admission: the run admits jobs), and its chunk of the job
// table dropped once every job of it is recorded.
func (t *jobTable) retire(j *jobState, admission bool) {
	if !t.plain || j.svc != 0 {
		return
	}
	t.record(j, j.info.ID, admission) // no replica pods: records are numbered as jobs
	t.recs.built(j.info.ID)
	k := chunkOf(j.info.ID)
	t.inChunk[k]--
	if t.inChunk[k] == 0 && t.njobs >= chunkEnd(k) {
		t.dropped++
		if c := t.chunks[k]; len(c) == 1<<chunkBits && len(t.spare) < spareChunks {
			t.spare = append(t.spare, c)
		} else {
			t.discarded++
		}
		t.chunks[k] = nil
	}
}

// spareChunks is how many dropped chunks wait for reuse.
const spareChunks = 8

// freshChunk is a zeroed chunk for the job table: a dropped one when the
// scheduler no longer points to any job that left its queue (the only
// references a plain run keeps to finished jobs), so that a run does not
// allocate its jobs' state again and again as garbage (344 MB a million
// jobs); a new one otherwise.
func (t *jobTable) freshChunk(q queueHolder) []jobState {
	if n := len(t.spare); n > 0 && q.HoldsNoDone() {
		c := t.spare[n-1]
		t.spare[n-1] = nil
		t.spare = t.spare[:n-1]
		clear(c)
		return c
	}
	return make([]jobState, 1<<chunkBits)
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
// run's heap may hold much garbage by now: every job's state (333 MB at
// 1M) in a run that is not plain, or the job-table chunks a plain run
// dropped and could not reuse (its queue kept finished jobs). One
// collection then frees it before the outputs allocate, and they reuse
// its memory rather than grow the heap. A run whose garbage is small (a
// small run, or a plain run that reused its chunks) skips the collection,
// which would cost a mark of every record for little.
func (t *jobTable) release() {
	t.chunks, t.spare = nil, nil
	garbage := int64(t.njobs)
	if t.plain {
		garbage = int64(t.discarded) << chunkBits
	}
	if t.njobs >= bigRun && garbage >= bigRun/4 {
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
