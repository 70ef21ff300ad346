package scheduler

import (
	"math"
	"math/bits"
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// QueuePolicy names how the pending queue is served.
type QueuePolicy uint8

const (
	// FIFO walks the queue in QueueSort order: strict FIFO (the first job
	// that does not fit blocks every job behind it) or, with Backfill, every
	// job that fits starts. The zero value.
	FIFO QueuePolicy = iota
	// SchedulingQueue is kube-scheduler's scheduling queue: a job that does
	// not fit is set aside (unschedulablePods) and the jobs behind it are
	// tried; an event that frees capacity moves it back, to be tried again
	// once its backoff is over (InitialBackoff doubling with each failed
	// attempt up to MaxBackoff), in QueueSort order.
	SchedulingQueue
)

// String is the policy's name in reports: FIFO (strict or backfilling)
// or SchedulingQueue.
func (p QueuePolicy) String() string {
	if p == SchedulingQueue {
		return "SchedulingQueue"
	}
	return "FIFO"
}

// kube-scheduler's podInitialBackoffDuration and podMaxBackoffDuration
// defaults, in ms.
const (
	InitialBackoff cluster.Time = 1000
	MaxBackoff     cluster.Time = 10000
)

// BackoffFor is the backoff after a job's n-th failed attempt: 1s, 2s,
// 4s, 8s, then 10s (kube-scheduler's calculateBackoffDuration).
func BackoffFor(n int) cluster.Time {
	if n <= 0 {
		return 0
	}
	d := InitialBackoff
	for i := 1; i < n; i++ {
		if d > MaxBackoff-d {
			return MaxBackoff
		}
		d += d
	}
	return d
}

// QueueConfig is how the pending queue is walked each pass.
type QueueConfig struct {
	Policy QueuePolicy
	// Backfill (FIFO only) lets jobs behind a blocked one start when they
	// fit (Kueue's BestEffortFIFO). Without it the queue is strict FIFO.
	Backfill bool
	// BackfillDepth, when positive, bounds how many jobs a pass tries after
	// the first one that did not fit (Slurm's bf_max_job_test).
	BackfillDepth int
}

// Buckets are keyed by the whole GPUs a job's pods ask for (0: a share of a
// GPU, or none) and the job's size class (replicas 1, 2-3, 4-7, ... 64+).
const (
	sizeClasses = 8
	numBuckets  = (cluster.MaxGPUsPerNode + 1) * sizeClasses
	maskWords   = (numBuckets + 63) / 64
)

func sizeClass(replicas int32) int { return min(bits.Len32(uint32(replicas))-1, sizeClasses-1) }

// bucket holds the queued jobs of one (GPUs per pod, size class) key, in
// queue order. Jobs marked Done stay until the bucket is compacted; every
// job before head is Done, so a pass starts there and does not step over
// the same finished jobs again and again.
type bucket struct {
	jobs []*JobInfo
	done int
	head int
}

// Scheduler owns the pending queue and runs scheduling passes over it.
//
// The queue is kept as one sorted list per (whole GPUs per pod, job size
// class). A pass walks the lists merged in queue order, so jobs are tried
// exactly in QueueSort order, but a list whose jobs cannot fit is not
// visited at all: no node has g GPUs free, or (for gangs) the free GPUs
// cannot hold as many g-GPU pods as the smallest job of the list has,
// and a list is walked from its first job still waiting. This keeps a
// pass proportional to the jobs the free GPUs could hold, not to the
// backlog; jobs of a list that can be visited but fail for other reasons
// (CPU, memory, node affinity, a gang larger than the smallest of its
// class) are still stepped over one by one, cheaply when an earlier job
// of the same constraints and no larger failed in the pass.
type Scheduler struct {
	fw       *Framework
	cfg      QueueConfig
	less     func(a, b *JobInfo) bool
	cmp      func(a, b *JobInfo) int
	buckets  [numBuckets]bucket
	occupied [maskWords]uint64                 // bit b: bucket b has jobs
	fits     [cluster.MaxGPUsPerNode + 1]int64 // pods of g GPUs the free GPUs hold; -1 unknown
	arrivals []*JobInfo
	merged   []*JobInfo // jobs merged in the current pass
	cursor   [numBuckets]int
	memo     shapeMemo
	blocked  int32 // reason id: waited behind a blocked job without being tried
	full     int32 // reason id: skipped because no node had the GPUs free

	// Attempts counts framework attempts; Skipped counts jobs not tried
	// because a smaller job of the same constraints had just failed.
	Attempts, Skipped uint64

	wantMIG []string // MIG profiles of jobs that did not fit in this pass

	// walkPast: jobs behind one that does not fit are tried (Backfill or
	// the scheduling queue); kube: the scheduling queue.
	walkPast, kube bool
	// backoff is the scheduling queue's backoffQ: a min-heap on the time
	// each job's backoff ends; retry is a pass's jobs whose backoff ended.
	backoff []backoffEntry
	retry   []*JobInfo
}

type backoffEntry struct {
	until cluster.Time
	j     *JobInfo
}

// WantedMIG lists, in the order first seen, the MIG profiles of the jobs
// that did not fit in the last pass.
func (s *Scheduler) WantedMIG() []string { return s.wantMIG }

// New returns a scheduler over fw.
func New(fw *Framework, cfg QueueConfig) *Scheduler {
	less := fw.prof.QueueSort.Less
	s := &Scheduler{fw: fw, cfg: cfg, less: less, kube: cfg.Policy == SchedulingQueue, cmp: func(a, b *JobInfo) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	}}
	s.walkPast = cfg.Backfill || s.kube
	s.blocked = fw.reasons.intern("waiting behind an earlier job that does not fit")
	s.full = fw.reasons.intern("Insufficient nvidia.com/gpu: no node has that many GPUs free")
	return s
}

// BlockedReason is the reason id for a job that waited behind a blocked
// head without being tried itself (strict FIFO, or past BackfillDepth).
func (s *Scheduler) BlockedReason() int32 { return s.blocked }

// Framework returns the scheduler's framework.
func (s *Scheduler) Framework() *Framework { return s.fw }

// Enqueue adds a job; it is considered at the next pass.
func (s *Scheduler) Enqueue(j *JobInfo) {
	j.FirstReason, j.LastReason = -1, -1
	s.arrivals = append(s.arrivals, j)
}

func bucketOf(j *JobInfo) int {
	g := int(j.Spec.Pod.GPUs)
	if j.Spec.Pod.MIG != "" {
		g = 0 // MIG instances are not counted by the free-GPU histograms
	}
	for i := range j.Spec.Groups {
		// Every pod needs at least the fewest whole GPUs of any group.
		if p := &j.Spec.Groups[i].Pod; p.MIG != "" {
			g = 0
		} else {
			g = min(g, int(p.GPUs))
		}
	}
	n := j.Spec.Replicas
	if m := j.Spec.MinAvailable; m > 0 && m < n {
		n = 1 // once its gang is bound, its pods bind one by one
	}
	return g*sizeClasses + sizeClass(n)
}

// canHold reports whether bucket bi's jobs might fit now: a whole-GPU pod
// needs a node with that many GPUs free, and a gang needs room for at
// least as many pods as the smallest job of its size class.
func (s *Scheduler) canHold(bi int) bool {
	g := bi / sizeClasses
	if g == 0 {
		return true
	}
	if s.fits[g] < 0 {
		s.fits[g] = s.fw.c.PodsPlaceable(int32(g))
	}
	need := int64(1)
	if s.fw.prof.MinMember != nil {
		need = 1 << (bi % sizeClasses)
	}
	return s.fits[g] >= need
}

func (s *Scheduler) forgetFits() {
	for i := range s.fits {
		s.fits[i] = -1
	}
}

// Requeue puts a job that was bound back in the queue (its pods were
// lost): it keeps its place in queue order and is tried at the next pass.
func (s *Scheduler) Requeue(j *JobInfo) {
	j.Bound, j.Attempted = 0, false
	j.backoff, j.backoffEnd = 0, 0 // a new pod: no attempts yet
	if !j.Done {
		return
	}
	j.Done = false
	if j.queued {
		// Still in its bucket, marked done: count it live again (it may
		// sit before the bucket's head).
		bk := &s.buckets[bucketOf(j)]
		bk.done--
		bk.head = 0
		if s.kube {
			s.merged = append(s.merged, j) // see finishPass
		}
		return
	}
	s.arrivals = append(s.arrivals, j)
}

// Waiting calls fn for each queued job that was tried and did not fit, in
// queue order, until fn returns false.
func (s *Scheduler) Waiting(fn func(*JobInfo) bool) {
	s.inOrder(waitingSkip, nil, fn)
}

func waitingSkip(j *JobInfo) bool { return j.Done || !j.Attempted }

// WaitingAbove is Waiting for the jobs of priority above floor only
// (those that may preempt a job of priority floor). When the queue sort
// puts higher priorities first (PriorityFirst), a bucket is walked only
// to its first job at or below the floor, so the walk costs the jobs
// above the floor, not the whole backlog; otherwise every waiting job is
// looked at and those at or below the floor passed over.
func (s *Scheduler) WaitingAbove(floor int32, fn func(*JobInfo) bool) {
	if _, ok := s.fw.prof.QueueSort.(PriorityFirst); ok {
		s.inOrder(waitingSkip, func(j *JobInfo) bool { return j.Spec.Priority <= floor }, fn)
		return
	}
	s.inOrder(waitingSkip, nil, func(j *JobInfo) bool { return j.Spec.Priority <= floor || fn(j) })
}

// inOrder calls fn for each queued job that skip does not pass over, in
// queue order (the buckets' heads merged by less), until fn returns false.
// A bucket's walk ends at its first job that past (when not nil) accepts:
// past must hold for every job after that one in queue order too.
func (s *Scheduler) inOrder(skip, past func(*JobInfo) bool, fn func(*JobInfo) bool) {
	var cur [numBuckets]int
	for {
		var next *JobInfo
		nb := -1
		for w := 0; w < maskWords; w++ {
			for m := s.occupied[w]; m != 0; m &= m - 1 {
				bi := w<<6 | bits.TrailingZeros64(m)
				bk := &s.buckets[bi]
				cur[bi] = max(cur[bi], bk.head)
				for cur[bi] < len(bk.jobs) {
					j := bk.jobs[cur[bi]]
					if past != nil && past(j) {
						cur[bi] = len(bk.jobs)
						break
					}
					if !skip(j) {
						break
					}
					cur[bi]++
				}
				if cur[bi] == len(bk.jobs) {
					continue
				}
				if j := bk.jobs[cur[bi]]; next == nil || s.less(j, next) {
					next, nb = j, bi
				}
			}
		}
		if next == nil || !fn(next) {
			return
		}
		cur[nb]++
	}
}

// Remove takes a job out of the queue (it was deleted while pending).
func (s *Scheduler) Remove(j *JobInfo) { s.markDone(j) }

// Holds reports whether the queue may still point to job j: it sits in
// a bucket (a job that left the queue stays in its bucket, marked done,
// until the bucket is compacted), in the backoff queue, or among the jobs
// not yet merged or tried in a pass. A job it does not hold is no longer
// referred to from here, and its memory may be reused.
func (s *Scheduler) Holds(j *JobInfo) bool {
	return j.queued || j.inBackoff() || slices.Contains(s.arrivals, j) ||
		slices.Contains(s.retry, j) || slices.Contains(s.merged, j)
}

// NextBackoff is when the earliest backoff of a job in the backoff queue
// ends (ok false: none waits); a pass at that time tries it again.
func (s *Scheduler) NextBackoff() (cluster.Time, bool) {
	if len(s.backoff) == 0 {
		return 0, false
	}
	return s.backoff[0].until, true
}

// Activate ends a job's backoff now: it is tried at the next pass that
// walks the queue (the preemptor whose victims were evicted, which
// kube-scheduler nominates to the node it freed).
func (s *Scheduler) Activate(j *JobInfo) { j.backoffEnd = 0 }

func (s *Scheduler) pushBackoff(j *JobInfo) {
	j.setInBackoff(true)
	h := append(s.backoff, backoffEntry{until: j.backoffUntil(), j: j})
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].until <= h[i].until {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	s.backoff = h
}

func (s *Scheduler) popBackoff() backoffEntry {
	h := s.backoff
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = backoffEntry{}
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].until < h[m].until {
			m = l
		}
		if r := l + 1; r < n && h[r].until < h[m].until {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	s.backoff = h
	return top
}

// flushBackoff moves the jobs whose backoff ended by now from the backoff
// queue to retry (flushBackoffQCompleted); a job whose backoff was renewed
// since it went in waits on.
func (s *Scheduler) flushBackoff(now cluster.Time) {
	for len(s.backoff) > 0 && s.backoff[0].until <= now {
		e := s.popBackoff()
		j := e.j
		switch {
		case j.Done:
			j.setInBackoff(false)
		case j.backoffUntil() > now:
			s.pushBackoff(j)
		default:
			j.setInBackoff(false)
			s.retry = append(s.retry, j)
		}
	}
}

func (s *Scheduler) markDone(j *JobInfo) {
	if j.Done {
		return
	}
	j.Done = true
	if j.queued {
		s.buckets[bucketOf(j)].done++
	}
}

func (s *Scheduler) merge() {
	if len(s.arrivals) == 0 {
		return
	}
	slices.SortStableFunc(s.arrivals, s.cmp)
	for _, j := range s.arrivals {
		if j.Done {
			continue
		}
		j.queued = true
		s.merged = append(s.merged, j)
		b := bucketOf(j)
		bk := &s.buckets[b]
		s.occupied[b>>6] |= 1 << (b & 63)
		n := len(bk.jobs)
		if n == 0 || !s.less(j, bk.jobs[n-1]) {
			bk.jobs = append(bk.jobs, j)
			continue
		}
		// First queued job that j goes before.
		i, hi := 0, n
		for i < hi {
			m := int(uint(i+hi) >> 1)
			if s.less(j, bk.jobs[m]) {
				hi = m
			} else {
				i = m + 1
			}
		}
		bk.jobs = append(bk.jobs, nil)
		copy(bk.jobs[i+1:], bk.jobs[i:])
		bk.jobs[i] = j
		bk.head = min(bk.head, i)
	}
	clear(s.arrivals)
	s.arrivals = s.arrivals[:0]
}

func (s *Scheduler) fail(j *JobInfo, reason int32) {
	j.LastReason = reason
	if j.FirstReason < 0 {
		j.FirstReason = reason
	}
	if m := j.Spec.Pod.MIG; m != "" && !slices.Contains(s.wantMIG, m) {
		s.wantMIG = append(s.wantMIG, m)
	}
	for i := range j.Spec.Groups {
		if m := j.Spec.Groups[i].Pod.MIG; m != "" && !slices.Contains(s.wantMIG, m) {
			s.wantMIG = append(s.wantMIG, m)
		}
	}
}

// Pass runs one scheduling pass at time now. freed says whether capacity
// was released since the last pass; when it was not, jobs that already
// failed cannot fit now (capacity only shrank) and are not tried again.
func (s *Scheduler) Pass(now cluster.Time, freed bool, b Binder) error {
	s.memo.reset()
	s.wantMIG = s.wantMIG[:0]
	if s.kube {
		s.flushBackoff(now)
	}
	if s.walkPast && !freed {
		// Only the new arrivals can fit, and under the scheduling queue
		// the jobs whose backoff just ended (an earlier event moved them):
		// everything else failed against at least the capacity there is now.
		list := s.arrivals
		if len(s.retry) > 0 {
			s.retry = append(s.retry, s.arrivals...)
			list = s.retry
		}
		slices.SortStableFunc(list, s.cmp)
		for _, j := range list {
			if j.Done {
				continue
			}
			if err := s.try(now, j, b); err != nil {
				return err
			}
		}
		clear(s.retry)
		s.retry = s.retry[:0]
		s.merge()
		s.finishPass()
		return nil
	}
	clear(s.retry) // the walk tries them in their places
	s.retry = s.retry[:0]
	s.merge()
	for w := 0; w < maskWords; w++ {
		for m := s.occupied[w]; m != 0; m &= m - 1 {
			bi := w<<6 | bits.TrailingZeros64(m)
			s.cursor[bi] = s.buckets[bi].head
		}
	}
	s.forgetFits()
	maxFree := s.fw.c.MaxFreeWhole()
	blocked, tried := false, 0
	for {
		// The earliest job, in queue order, of the buckets that can fit.
		var next *JobInfo
		nb := -1
	scan:
		for w := 0; w < maskWords; w++ {
			for m := s.occupied[w]; m != 0; m &= m - 1 {
				bi := w<<6 | bits.TrailingZeros64(m)
				if s.walkPast {
					if bi/sizeClasses > int(maxFree) {
						break scan // buckets are in increasing GPU count
					}
					if !s.canHold(bi) {
						continue
					}
				}
				bk := &s.buckets[bi]
				for s.cursor[bi] < len(bk.jobs) && bk.jobs[s.cursor[bi]].Done {
					if s.cursor[bi] == bk.head {
						bk.head++
					}
					s.cursor[bi]++
				}
				if s.cursor[bi] == len(bk.jobs) {
					continue
				}
				if j := bk.jobs[s.cursor[bi]]; next == nil || s.less(j, next) {
					next, nb = j, bi
				}
			}
		}
		if next == nil {
			break
		}
		s.cursor[nb]++
		if s.kube && next.backoffUntil() > now {
			// Still backing off from its last failed attempt: the event
			// moves it to the backoff queue, and it is tried when that ends.
			if !next.inBackoff() {
				s.pushBackoff(next)
			}
			continue
		}
		if blocked && (!s.walkPast || (s.cfg.BackfillDepth > 0 && tried >= s.cfg.BackfillDepth)) {
			break // strict FIFO, or backfill depth used up: the rest wait
		}
		if !s.walkPast && !freed && next.Attempted {
			break // the head failed against at least this much capacity
		}
		if blocked {
			tried++
		}
		if err := s.try(now, next, b); err != nil {
			return err
		}
		if next.Done {
			maxFree = s.fw.c.MaxFreeWhole()
			s.forgetFits()
		} else {
			blocked = true
		}
	}
	s.finishPass()
	return nil
}

// finishPass gives jobs merged this pass (or, under the scheduling queue,
// put back in it) that were never tried a reason, and compacts buckets
// that are a quarter Done.
func (s *Scheduler) finishPass() {
	for _, j := range s.merged {
		if s.kube && !j.Done && !j.Attempted {
			// Not tried because no node had its GPUs free: kube-scheduler
			// would have tried it and set it aside, so it waits as one
			// that failed (a node provisioner sees it).
			j.Attempted = true
			s.fail(j, s.full)
			continue
		}
		if !j.Done && !j.Attempted && j.FirstReason < 0 {
			if s.walkPast {
				s.fail(j, s.full)
			} else {
				s.fail(j, s.blocked)
			}
		}
	}
	clear(s.merged)
	s.merged = s.merged[:0]
	for w := 0; w < maskWords; w++ {
		for m := s.occupied[w]; m != 0; m &= m - 1 {
			bi := w<<6 | bits.TrailingZeros64(m)
			bk := &s.buckets[bi]
			if bk.done == 0 || bk.done*4 < len(bk.jobs) {
				continue
			}
			out := bk.jobs[:0]
			for _, j := range bk.jobs {
				if !j.Done {
					out = append(out, j)
				} else {
					j.queued = false
				}
			}
			clear(bk.jobs[len(out):])
			bk.jobs, bk.done, bk.head = out, 0, 0
			if len(out) == 0 {
				s.occupied[w] &^= 1 << (bi & 63)
			}
		}
	}
}

func (s *Scheduler) try(now cluster.Time, j *JobInfo, b Binder) error {
	if r, ok := s.memo.dominated(j); ok && j.Attempted {
		s.Skipped++
		s.fail(j, r)
		s.backOff(now, j)
		return nil
	}
	s.Attempts++
	placed, st, err := s.fw.Attempt(now, j, b)
	if err != nil {
		return err
	}
	if j.Remaining() == 0 {
		s.markDone(j)
		return nil
	}
	r := s.fw.reasons.intern(st.Message())
	s.fail(j, r)
	s.backOff(now, j)
	if placed == 0 {
		s.memo.add(j, r)
	}
	return nil
}

// backOff counts a failed attempt of j at now and, under the scheduling
// queue, starts its backoff: it may be tried again from the first whole
// second at or after now + BackoffFor(attempts).
func (s *Scheduler) backOff(now cluster.Time, j *JobInfo) {
	if !s.kube {
		return
	}
	if j.failures() < int(^inBackoffQ) {
		j.backoff++
	}
	// kube-scheduler moves the pods whose backoff is over to activeQ once
	// a second (flushBackoffQCompleted): the first whole second at or after
	// the end, which also keeps JobInfo small.
	end := (now + BackoffFor(j.failures()) + 999) / 1000
	j.backoffEnd = int32(min(end, math.MaxInt32))
}

// shapeMemo remembers the smallest jobs that failed in this pass, per
// constraints. A job at least as large in every dimension, with the same
// constraints, cannot fit either: capacity only shrinks within a pass.
type shapeMemo struct {
	n      int
	shapes [16]failedShape
}

type failedShape struct {
	c        *cluster.Constraints
	pod      cluster.PodSpec
	replicas int32
	reason   int32
}

func (m *shapeMemo) reset() { m.n = 0 }

func covers(a *failedShape, j *JobInfo) bool {
	p := &j.Spec.Pod
	if len(j.Spec.Groups) > 0 || a.c != j.Spec.Constraints || p.MilliCPU < a.pod.MilliCPU || p.MemoryMiB < a.pod.MemoryMiB || j.GangNeed() < a.replicas {
		return false
	}
	if p.MIG != a.pod.MIG {
		return false
	}
	if a.pod.GPUMilli > 0 {
		return p.GPUMilli >= a.pod.GPUMilli || p.GPUs > 0
	}
	return p.GPUMilli == 0 && p.GPUs >= a.pod.GPUs
}

func (m *shapeMemo) dominated(j *JobInfo) (int32, bool) {
	for i := 0; i < m.n; i++ {
		if covers(&m.shapes[i], j) {
			return m.shapes[i].reason, true
		}
	}
	return -1, false
}

func (m *shapeMemo) add(j *JobInfo, reason int32) {
	if m.n == len(m.shapes) || len(j.Spec.Groups) > 0 {
		return // a job of several pod groups is no one shape
	}
	m.shapes[m.n] = failedShape{c: j.Spec.Constraints, pod: j.Spec.Pod, replicas: j.GangNeed(), reason: reason}
	m.n++
}
