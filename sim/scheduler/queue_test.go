package scheduler_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
)

// A pass starts each list of the queue at its first job still waiting
// (finished jobs stay in a list until they are a quarter of it);
// a job put back in the queue (its pods lost) or a new one that goes
// before that point is still tried in its place in queue order.
func TestQueueKeepsPlacesBeforeItsHead(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 1, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 1 << 20}})
	require.NoError(t, err)
	prof, err := plugins.NewProfile(plugins.Default(), &scheduler.Handle{})
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	s := scheduler.New(fw, scheduler.QueueConfig{Backfill: true})
	jobs := make([]*scheduler.JobInfo, 40)
	for i := range jobs {
		spec := &cluster.JobSpec{Submit: int64(10 + i), Duration: 1, Replicas: 1, Pod: cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: 8}}
		jobs[i] = &scheduler.JobInfo{ID: int32(i), Spec: spec}
		s.Enqueue(jobs[i])
	}
	var rec recorder
	// Each pass places the first waiting job on the one node; the last
	// placement is released before the next pass.
	pass := func(want int32) {
		t.Helper()
		n := len(rec.log)
		require.NoError(t, s.Pass(0, true, &rec))
		require.Len(t, rec.log, n+1)
		got := rec.log[n]
		require.Equal(t, want, got.job)
		require.NoError(t, c.Release(0, got.pls[0], &jobs[got.job].Spec.Pod))
	}
	pass(0)
	pass(1)
	pass(2)
	// Job 0 loses its pods and goes back in the queue in its place, ahead
	// of jobs 3 to 39.
	s.Requeue(jobs[0])
	pass(0)
	pass(3)
	// A job of higher priority submitted later goes first too.
	hi := &scheduler.JobInfo{ID: 40, Spec: &cluster.JobSpec{Submit: 60, Duration: 1, Replicas: 1, Priority: 5, Pod: jobs[0].Spec.Pod}}
	s.Enqueue(hi)
	jobs = append(jobs, hi)
	pass(40)
	pass(4)
	// And one submitted before the jobs already placed.
	early := &scheduler.JobInfo{ID: 41, Spec: &cluster.JobSpec{Submit: 1, Duration: 1, Replicas: 1, Pod: jobs[0].Spec.Pod}}
	s.Enqueue(early)
	jobs = append(jobs, early)
	pass(41)
	pass(5)
	pass(6)
}

// kube-scheduler's backoff after the n-th failed attempt:
// podInitialBackoffDuration (1s) doubled per attempt, capped at
// podMaxBackoffDuration (10s).
func TestBackoffFor(t *testing.T) {
	for n, want := range []int64{0, 1000, 2000, 4000, 8000, 10000, 10000} {
		require.Equal(t, want, scheduler.BackoffFor(n), "attempt %d", n)
	}
	require.Equal(t, int64(10000), scheduler.BackoffFor(200))
}

// The scheduling queue: a job that does not fit is set aside and the
// jobs behind it are tried; freed capacity brings it back only once its
// backoff (1s, then 2s, from its last attempt, at a whole second) is
// over, when a pass retries it.
func TestSchedulingQueueBacksOff(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 1, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 1 << 20}})
	require.NoError(t, err)
	prof, err := plugins.NewProfile(plugins.Default(), &scheduler.Handle{})
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	s := scheduler.New(fw, scheduler.QueueConfig{Policy: scheduler.SchedulingQueue})
	job := func(id int32, gpus int32) *scheduler.JobInfo {
		return &scheduler.JobInfo{ID: id, Spec: &cluster.JobSpec{Submit: int64(id), Duration: 1, Replicas: 1, Pod: cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: gpus}}}
	}
	var rec recorder
	bound := func() []int32 {
		var ids []int32
		for _, b := range rec.log {
			ids = append(ids, b.job)
		}
		return ids
	}
	a, b := job(0, 8), job(1, 8)
	s.Enqueue(a)
	s.Enqueue(b)
	require.NoError(t, s.Pass(0, false, &rec))
	require.Equal(t, []int32{0}, bound()) // b failed at 0: backoff to 1s
	at, ok := s.NextBackoff()
	require.False(t, ok, "b waits in unschedulablePods, not in backoff: nothing freed yet")

	require.NoError(t, c.Release(0, rec.log[0].pls[0], &a.Spec.Pod))
	require.NoError(t, s.Pass(500, true, &rec)) // a finished: b is still backing off
	require.Equal(t, []int32{0}, bound())
	at, ok = s.NextBackoff()
	require.True(t, ok)
	require.Equal(t, int64(1000), at)

	cj := job(2, 4) // behind b, tried meanwhile
	s.Enqueue(cj)
	require.NoError(t, s.Pass(600, false, &rec))
	require.Equal(t, []int32{0, 2}, bound())

	require.NoError(t, s.Pass(1000, false, &rec)) // b's backoff is over: tried, fails (4 GPUs free)
	require.Equal(t, []int32{0, 2}, bound())
	_, ok = s.NextBackoff()
	require.False(t, ok)

	require.NoError(t, c.Release(0, rec.log[1].pls[0], &cj.Spec.Pod))
	require.NoError(t, s.Pass(1500, true, &rec)) // second failure at 1s: backoff 2s, to 3s
	require.Equal(t, []int32{0, 2}, bound())
	at, ok = s.NextBackoff()
	require.True(t, ok)
	require.Equal(t, int64(3000), at)
	require.NoError(t, s.Pass(3000, false, &rec))
	require.Equal(t, []int32{0, 2, 1}, bound())
	_, ok = s.NextBackoff()
	require.False(t, ok)

	// A failure between whole seconds: the backoff queue is flushed once
	// a second, so e, failing at 3.4s, is back at 5s (4.4s rounded up).
	e := job(3, 8)
	s.Enqueue(e)
	require.NoError(t, s.Pass(3400, false, &rec))
	require.NoError(t, c.Release(0, rec.log[2].pls[0], &b.Spec.Pod))
	require.NoError(t, s.Pass(4700, true, &rec))
	at, ok = s.NextBackoff()
	require.True(t, ok)
	require.Equal(t, int64(5000), at)
	require.NoError(t, s.Pass(5000, false, &rec))
	require.Equal(t, []int32{0, 2, 1, 3}, bound())
}

// Every job in flight keeps a JobInfo; the scheduling queue's state
// (backoff end, attempts, backoff flag) fits in its padding.
func TestJobInfoStays32Bytes(t *testing.T) {
	require.Equal(t, uintptr(32), unsafe.Sizeof(scheduler.JobInfo{}))
}

// WaitingAbove yields exactly the waiting jobs of Waiting above the floor,
// in the same order, though under PrioritySort it stops each list at its
// first job at or below the floor. One node of 8 GPUs, taken by a job of
// priority 10; 60 jobs of 1, 2, 4 or 8 GPUs, 1 or 2 pods and priorities
// 0 to 4 then wait in several lists (kube-scheduler's queue sets them
// aside as tried), some finished (deleted) among them.
func TestWaitingAboveIsWaitingFiltered(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 1, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 1 << 20}})
	require.NoError(t, err)
	prof, err := plugins.NewProfile(plugins.Default(), &scheduler.Handle{})
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	s := scheduler.New(fw, scheduler.QueueConfig{Policy: scheduler.SchedulingQueue})
	pod := func(g int32) cluster.PodSpec { return cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: g} }
	s.Enqueue(&scheduler.JobInfo{ID: 0, Spec: &cluster.JobSpec{Submit: 0, Duration: 1, Replicas: 1, Priority: 10, Pod: pod(8)}})
	var jobs []*scheduler.JobInfo
	for i := 1; i <= 60; i++ {
		spec := &cluster.JobSpec{Submit: int64(i), Duration: 1, Replicas: int32(1 + i%2), Priority: int32(i*7) % 5, Pod: pod(int32(1) << (i % 4))}
		jobs = append(jobs, &scheduler.JobInfo{ID: int32(i), Spec: spec})
		s.Enqueue(jobs[len(jobs)-1])
	}
	var rec recorder
	require.NoError(t, s.Pass(0, true, &rec))
	require.Len(t, rec.log, 1, "only the job of priority 10 fits")
	for i := 0; i < len(jobs); i += 7 {
		s.Remove(jobs[i])
	}
	ids := func(walk func(func(*scheduler.JobInfo) bool)) []int32 {
		var out []int32
		walk(func(j *scheduler.JobInfo) bool { out = append(out, j.ID); return true })
		return out
	}
	all := ids(s.Waiting)
	require.Len(t, all, 60-9, "60 waiting, 9 removed")
	for floor := int32(-1); floor <= 4; floor++ {
		var want []int32
		for _, id := range all {
			if jobs[id-1].Spec.Priority > floor {
				want = append(want, id)
			}
		}
		got := ids(func(fn func(*scheduler.JobInfo) bool) { s.WaitingAbove(floor, fn) })
		require.Equal(t, want, got, "floor %d", floor)
	}
}

// The queue holds a job from Enqueue until its bucket drops it: placed
// jobs stay in their bucket, marked done, until a quarter of it is done.
// 8 whole-node jobs, one node: after the first pass job 0 is placed and
// still held (1 of 8 done); after the second, 2 of 8 are, the bucket is
// compacted and neither is held; the 6 waiting ones are.
func TestQueueHoldsJobsUntilTheirBucketDropsThem(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 1, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 1 << 20}})
	require.NoError(t, err)
	prof, err := plugins.NewProfile(plugins.Default(), &scheduler.Handle{})
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	s := scheduler.New(fw, scheduler.QueueConfig{Backfill: true})
	jobs := make([]*scheduler.JobInfo, 8)
	for i := range jobs {
		spec := &cluster.JobSpec{Submit: int64(i), Duration: 1, Replicas: 1, Pod: cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: 8}}
		jobs[i] = &scheduler.JobInfo{ID: int32(i), Spec: spec}
		s.Enqueue(jobs[i])
		require.True(t, s.Holds(jobs[i]), "an arrival")
	}
	var rec recorder
	require.NoError(t, s.Pass(0, true, &rec))
	require.True(t, jobs[0].Done)
	require.True(t, s.Holds(jobs[0]), "placed, in its bucket until it is compacted")
	require.NoError(t, c.Release(0, rec.log[0].pls[0], &jobs[0].Spec.Pod))
	require.NoError(t, s.Pass(1, true, &rec))
	require.True(t, jobs[1].Done)
	require.False(t, s.Holds(jobs[0]))
	require.False(t, s.Holds(jobs[1]))
	for _, j := range jobs[2:] {
		require.True(t, s.Holds(j), "job %d waits", j.ID)
	}
}
