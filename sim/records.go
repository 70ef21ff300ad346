package sim

import "gpuplan.dev/gpuplan/sim/cluster"

// Job records are built as jobs finish, so that a big run never holds
// every job's engine state and every job's record at once.
//
// The records live in chunks of recChunk. With Config.JobsHint (at most
// Config.RecordsInMemory) the chunks are windows of one array of that
// many records, reserved at the start (its pages cost memory only once
// written; on Linux it is advised to huge pages, see adviseHuge), and
// Result.Jobs is that array: no copy. Without a hint, or past it, the
// chunks are allocated one by one and copied into Result.Jobs at the end.
// Past Config.RecordsInMemory records, each chunk whose records are all
// built goes to the run's temporary file (spill.go) and its array is
// reused: memory then holds the chunks of jobs in flight.
//
// In a plain run (no capacity controller or preemption, whose events
// and tables refer to jobs by index after they finish), a job's
// record is built when it finishes and its state dropped, its slot of
// the job table reused (jobs.go): the table then holds the jobs in
// flight, not every job of the run. Admission runs are plain: the
// controller forgets a workload when its job finishes (admState.finish, before
// retire), its decisions name pending and admitted workloads only, and
// the events it leaves queued for a finished job (a waitForPodsReady
// timeout, a requeue after one) do nothing to it, so runner.handle drops
// them when the job's state is gone.

const (
	recBits  = 10
	recChunk = 1 << recBits
)

type recStore struct {
	all    []JobRecord // the hint's array, whole chunks (nil: none)
	chunks [][]JobRecord
	n      int32 // records numbered so far
	// The rare parts of the few records that have one (recordRare): usage
	// entries are cut from use, the rare parts from rares; records with
	// only recovery settings and a diagnosis share one of shared.
	use    []PoolUsage
	rares  []recordRare
	shared map[rareKey]*recordRare
	// Records share one PodSpec per distinct request: pods holds them,
	// recent the last few used (a trace has few, in any order).
	pods   map[cluster.PodSpec]*cluster.PodSpec
	recent [8]*cluster.PodSpec
	// Spilling (spill.go): past keep records (<= 0: never) the chunks
	// whose records are all built go to file, made in dir; fill counts
	// each chunk's records built, whole the chunks filled; free holds
	// spilled chunks' arrays for reuse; err is the first failure to make
	// the file.
	keep  int
	dir   string
	fill  []uint16
	whole int
	file  *recordFile
	free  [][]JobRecord
	err   error
}

// pod is the run's shared copy of p.
func (s *recStore) pod(p *cluster.PodSpec) *cluster.PodSpec {
	for _, q := range s.recent {
		if q != nil && *q == *p {
			return q
		}
	}
	q, ok := s.pods[*p]
	if !ok {
		if s.pods == nil {
			s.pods = map[cluster.PodSpec]*cluster.PodSpec{}
		}
		q = new(cluster.PodSpec)
		*q = *p
		s.pods[*p] = q
	}
	copy(s.recent[1:], s.recent[:len(s.recent)-1])
	s.recent[0] = q
	return q
}

func (s *recStore) reserve(hint int) {
	if hint <= 0 || hint > MaxJobs || (s.keep > 0 && hint > s.keep) {
		return
	}
	s.all = make([]JobRecord, (hint+recChunk-1)/recChunk*recChunk)
	adviseHuge(s.all)
}

// slot is the record numbered i, its chunk made on first use.
func (s *recStore) slot(i int32) *JobRecord {
	k := int(i >> recBits)
	for len(s.chunks) <= k {
		c := len(s.chunks)
		if (c+1)*recChunk <= len(s.all) {
			s.chunks = append(s.chunks, s.all[c*recChunk:(c+1)*recChunk:(c+1)*recChunk])
		} else if n := len(s.free); n > 0 {
			s.chunks = append(s.chunks, s.free[n-1])
			s.free[n-1] = nil
			s.free = s.free[:n-1]
		} else {
			s.chunks = append(s.chunks, make([]JobRecord, recChunk))
		}
	}
	return &s.chunks[k][i&(recChunk-1)]
}

// usage returns room for n usage entries.
func (s *recStore) usage(n int) []PoolUsage {
	if cap(s.use)-len(s.use) < n {
		s.use = make([]PoolUsage, 0, max(recChunk, n))
	}
	k := len(s.use)
	s.use = s.use[:k+n]
	return s.use[k : k+n : k+n]
}

// rare is the rare part x of a record, shared with the records with the
// same recovery settings and diagnosis when that is all it holds: nil when
// it holds nothing.
func (s *recStore) rare(x recordRare) *recordRare {
	switch {
	case x.empty():
		return nil
	case x.use == nil && x.step == nil:
		k := rareKey{x.recovery, x.diag}
		p, ok := s.shared[k]
		if !ok {
			if s.shared == nil {
				s.shared = map[rareKey]*recordRare{}
			}
			p = &recordRare{recovery: x.recovery, diag: x.diag}
			s.shared[k] = p
		}
		return p
	}
	if len(s.rares) == cap(s.rares) {
		s.rares = make([]recordRare, 0, recChunk)
	}
	s.rares = append(s.rares, x)
	return &s.rares[len(s.rares)-1]
}

// rareKey is what records share a rare part by.
type rareKey struct {
	recovery *cluster.Recovery
	diag     string
}

// diagnose gives record rec the diagnosis msg.
func (s *recStore) diagnose(rec *JobRecord, msg string) {
	var x recordRare
	if rec.rare != nil {
		x = *rec.rare
	}
	x.diag = msg
	rec.rare = s.rare(x)
}

// built counts record id as built (diagnosis and all): once its chunk
// holds all its records, past keep records, the chunk goes to file.
func (s *recStore) built(id int32) {
	k := int(id >> recBits)
	for len(s.fill) <= k {
		s.fill = append(s.fill, 0)
	}
	s.fill[k]++
	if s.fill[k] < recChunk || s.keep <= 0 || s.err != nil {
		return
	}
	s.whole++
	if s.file == nil {
		if s.whole*recChunk <= s.keep {
			return
		}
		if s.file, s.err = newRecordFile(s.dir); s.err != nil {
			return
		}
		for c := range s.chunks {
			if s.chunks[c] != nil && c < len(s.fill) && s.fill[c] == recChunk {
				s.spill(c)
			}
		}
		return
	}
	s.spill(k)
}

// spill writes whole chunk k to file and keeps its array for reuse.
func (s *recStore) spill(k int) {
	s.file.write(k, s.chunks[k])
	if len(s.free) < spareChunks {
		clear(s.chunks[k])
		s.free = append(s.free, s.chunks[k])
	}
	s.chunks[k] = nil
}

// result is every record, in order: as one slice, or (when records went
// to file) the file, the rest of the records written to it; the store is
// spent.
func (s *recStore) result() ([]JobRecord, *recordFile, error) {
	if s.err != nil {
		return nil, nil, s.err
	}
	if f := s.file; f != nil {
		for k := range s.chunks {
			if c := s.chunks[k]; c != nil {
				f.write(k, c[:min(recChunk, int(s.n)-k*recChunk)])
			}
		}
		s.all, s.chunks, s.free, s.file = nil, nil, nil, nil
		f.n = int(s.n)
		f.buf, f.names = nil, nil
		return nil, f, f.err
	}
	return s.inMemory(), nil, nil
}

// inMemory is every record, in order, as one slice.
func (s *recStore) inMemory() []JobRecord {
	n := int(s.n)
	if n <= len(s.all) {
		out := s.all[:n:n]
		s.all, s.chunks = nil, nil
		return out
	}
	out := make([]JobRecord, n)
	for k := range s.chunks {
		copy(out[k*recChunk:], s.chunks[k])
		s.chunks[k] = nil
	}
	s.all, s.chunks = nil, nil
	return out
}

// record builds the record of workload job j, numbered id among the
// workload's jobs, from its state (Running and Pending jobs are completed
// by finish).
func (t *jobTable) record(j *jobState, id int32, admission bool) *JobRecord {
	j.recorded = true
	rec := t.recs.slot(id)
	*rec = JobRecord{
		ID: id, Name: j.spec.Name, Queue: j.spec.Queue, Priority: j.spec.Priority,
		Replicas: j.spec.Replicas, PodsBound: j.info.Bound, MinAvailable: minAvailable(&j.spec), Pod: t.recs.pod(&j.spec.Pod),
		Submit: j.spec.Submit, Start: j.start, End: j.end, Duration: j.spec.Duration,
		Deadline: j.spec.Deadline, Flags: j.spec.Flags, Outcome: j.outcome,
		Pool: j.pool, Reason: j.info.FirstReason,
		AllocMilli: j.allocMilli, Slowed: j.slowed, Attempts: int32(j.attempts),
		Admitted: -1,
	}
	if admission {
		rec.Admitted = j.admitAt
	}
	x := j.x
	var step *StepRecord
	if x != nil {
		rec.Preemptions, rec.PreemptionsCaused = x.preempted, x.preempting
		rec.Disruptions, rec.Failures, rec.LostMs, rec.CheckpointMs = x.disruptions, x.failures, x.lostMs, x.ckptMs
		step = x.step
	}
	var use []PoolUsage
	if j.usePool >= 0 {
		if x == nil || (len(x.more) == 0 && x.lost0 == [3]int64{} && x.ckpt0 == [3]int64{}) {
			// Most jobs: one pool, nothing lost, kept in the record.
			rec.usePool, rec.useHeld = j.usePool+1, j.useHeld
			rec.HeldMilliMs = j.useHeld[ResGPU]
		} else {
			use = t.recs.usage(1 + len(x.more))
			use[0] = PoolUsage{Pool: j.usePool, Held: j.useHeld, Lost: x.lost0, Checkpoint: x.ckpt0}
			copy(use[1:], x.more)
			for _, u := range use {
				rec.HeldMilliMs += u.Held[ResGPU]
			}
		}
	}
	rec.rare = t.recs.rare(recordRare{use: use, recovery: j.spec.Recovery, step: step, diag: j.diag})
	return rec
}
