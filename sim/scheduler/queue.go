package scheduler

import (
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// QueueConfig is how the pending queue is walked each pass.
type QueueConfig struct {
	// Backfill lets jobs behind a blocked one start when they fit (the
	// kube-scheduler and BestEffortFIFO behaviour). Without it the queue is
	// strict FIFO: the first job that does not fit blocks every job behind it.
	Backfill bool
	// BackfillDepth, when positive, bounds how many jobs past the first
	// blocked one a pass tries (Slurm's bf_max_job_test).
	BackfillDepth int
}

// Scheduler owns the pending queue and runs scheduling passes over it.
type Scheduler struct {
	fw       *Framework
	cfg      QueueConfig
	less     func(a, b *JobInfo) bool
	cmp      func(a, b *JobInfo) int
	queue    []*JobInfo
	arrivals []*JobInfo
	memo     shapeMemo
	blocked  int32 // reason id: waiting behind a blocked job (strict FIFO)

	// done counts queued jobs marked Done since the last compaction.
	done int
	// minWhole is a lower bound on the whole GPUs every queued pod asks
	// for, valid while nonWhole (queued jobs asking for no whole GPU, an
	// upper bound) is zero. A pass stops early when no node has minWhole
	// GPUs free.
	minWhole int32
	nonWhole int
	full     int32 // reason id for jobs cut off by that early stop
	untried  int   // upper bound on queued jobs never attempted

	// Attempts counts framework attempts; Skipped counts jobs not tried
	// because a smaller job of the same constraints had just failed.
	Attempts, Skipped uint64
}

// New returns a scheduler over fw.
func New(fw *Framework, cfg QueueConfig) *Scheduler {
	less := fw.prof.QueueSort.Less
	s := &Scheduler{fw: fw, cfg: cfg, less: less, cmp: func(a, b *JobInfo) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	}}
	s.blocked = fw.reasons.intern("waiting behind an earlier job that does not fit")
	s.full = fw.reasons.intern("Insufficient nvidia.com/gpu: no node has as many GPUs free as the smallest queued pod asks for")
	s.minWhole = 1 << 30
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

// Remove takes a queued job out (it was deleted while pending).
func (s *Scheduler) Remove(j *JobInfo) {
	if !j.Done {
		j.Done = true
		s.done++
	}
}

func (s *Scheduler) markDone(j *JobInfo) {
	j.Done = true
	s.done++
}

func (s *Scheduler) track(j *JobInfo) {
	if g := j.Spec.Pod.GPUs; g > 0 {
		s.minWhole = min(s.minWhole, g)
	} else {
		s.nonWhole++
	}
}

// Pending returns the queued jobs in queue order (including those enqueued
// since the last pass), skipping those marked Done.
func (s *Scheduler) Pending() []*JobInfo {
	s.merge()
	out := make([]*JobInfo, 0, len(s.queue))
	for _, j := range s.queue {
		if !j.Done {
			out = append(out, j)
		}
	}
	return out
}

// Len is the number of queued jobs not yet Done (an upper bound between passes).
func (s *Scheduler) Len() int { return len(s.queue) + len(s.arrivals) }

func (s *Scheduler) merge() {
	if len(s.arrivals) == 0 {
		return
	}
	slices.SortStableFunc(s.arrivals, s.cmp)
	for _, j := range s.arrivals {
		if j.Done {
			s.done++ // counted when compaction drops it
		}
		s.track(j)
		s.untried++
		n := len(s.queue)
		if n == 0 || !s.less(j, s.queue[n-1]) {
			s.queue = append(s.queue, j)
			continue
		}
		// First queued job that j goes before.
		i, hi := 0, n
		for i < hi {
			m := int(uint(i+hi) >> 1)
			if s.less(j, s.queue[m]) {
				hi = m
			} else {
				i = m + 1
			}
		}
		s.queue = append(s.queue, nil)
		copy(s.queue[i+1:], s.queue[i:])
		s.queue[i] = j
	}
	s.arrivals = s.arrivals[:0]
}

func (s *Scheduler) fail(j *JobInfo, reason int32) {
	j.LastReason = reason
	if j.FirstReason < 0 {
		j.FirstReason = reason
	}
}

// Pass runs one scheduling pass at time now. freed says whether capacity
// was released since the last pass; when it was not, jobs that already
// failed cannot fit now (capacity only shrank) and are not tried again.
func (s *Scheduler) Pass(now cluster.Time, freed bool, b Binder) error {
	s.memo.reset()
	if s.cfg.Backfill && !freed {
		slices.SortStableFunc(s.arrivals, s.cmp)
		for _, j := range s.arrivals {
			if j.Done {
				continue
			}
			if err := s.try(now, j, b); err != nil {
				return err
			}
		}
		s.merge()
		s.compact()
		return nil
	}
	s.merge()
	blockedAt := -1
	for i, j := range s.queue {
		if j.Done {
			continue
		}
		if blockedAt >= 0 {
			// Strict FIFO: everything behind the head waits (BlockedReason).
			if !s.cfg.Backfill || (s.cfg.BackfillDepth > 0 && i-blockedAt > s.cfg.BackfillDepth) {
				break
			}
			if s.nonWhole == 0 && s.fw.c.MaxFreeWhole() < s.minWhole {
				// Nothing queued can fit anywhere: stop scanning.
				s.cutOff(s.queue[i:])
				break
			}
		}
		if !s.cfg.Backfill && !freed && j.Attempted {
			// The head failed against at least this much capacity.
			blockedAt = i
			continue
		}
		if err := s.try(now, j, b); err != nil {
			return err
		}
		if !j.Done && blockedAt < 0 {
			blockedAt = i
		}
	}
	s.compact()
	return nil
}

// cutOff gives the jobs an early stop skipped, if never tried, a reason.
func (s *Scheduler) cutOff(rest []*JobInfo) {
	if s.untried == 0 {
		return
	}
	for _, j := range rest {
		if !j.Done && !j.Attempted && j.FirstReason < 0 {
			s.fail(j, s.full)
		}
	}
}

func (s *Scheduler) try(now cluster.Time, j *JobInfo, b Binder) error {
	if r, ok := s.memo.dominated(j); ok && j.Attempted {
		s.Skipped++
		s.fail(j, r)
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
	if placed == 0 {
		s.fail(j, r)
		s.memo.add(j, r)
	} else {
		// Partly bound (no gang): nothing more of this shape fits.
		s.fail(j, r)
	}
	return nil
}

// compact drops Done jobs once they are a quarter of the queue (so a pass
// that looks at few jobs does not pay for the whole queue) and refreshes
// the queue-wide bounds.
func (s *Scheduler) compact() {
	if s.done == 0 || s.done*4 < len(s.queue) {
		return
	}
	out := s.queue[:0]
	s.minWhole, s.nonWhole, s.untried = 1<<30, 0, 0
	for _, j := range s.queue {
		if !j.Done {
			out = append(out, j)
			s.track(j)
			if !j.Attempted {
				s.untried++
			}
		}
	}
	for i := len(out); i < len(s.queue); i++ {
		s.queue[i] = nil
	}
	s.queue = out
	s.done = 0
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
	if a.c != j.Spec.Constraints || p.MilliCPU < a.pod.MilliCPU || p.MemoryMiB < a.pod.MemoryMiB || j.Remaining() < a.replicas {
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
	if m.n == len(m.shapes) {
		return
	}
	m.shapes[m.n] = failedShape{c: j.Spec.Constraints, pod: j.Spec.Pod, replicas: j.Remaining(), reason: reason}
	m.n++
}
