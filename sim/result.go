package sim

import (
	"iter"
	"math"
	"slices"

	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Outcome is how a job ended up.
type Outcome uint8

const (
	// Completed: ran for its whole duration.
	Completed Outcome = iota
	// Deleted: running when its deadline (the trace's deletion time) came.
	Deleted
	// Abandoned: still pending when its deadline came.
	Abandoned
	// Unschedulable: no pool could ever hold it (too large or no pool its
	// constraints allow); it was never queued. Under an admission policy
	// such a job is queued as Kueue queues it (admitted if it fits its
	// quota) and ends pending or abandoned, its diagnosis saying it is
	// never schedulable.
	Unschedulable
	// Running: still running at the end of the run.
	Running
	// Pending: still waiting at the end of the run.
	Pending
	// OOMKilled: started on time-sliced GPUs whose sharers together declare
	// more GPU memory than the GPU has; it failed at once.
	OOMKilled
	// Failed: lost its nodes more often than its backoff limit allows, or
	// passed its activeDeadlineSeconds.
	Failed
	numOutcomes
)

var outcomeNames = [...]string{"completed", "deleted", "abandoned", "unschedulable", "running", "pending", "oom-killed", "failed"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// Outcomes lists every outcome in order.
func Outcomes() []Outcome {
	out := make([]Outcome, numOutcomes)
	for i := range out {
		out[i] = Outcome(i)
	}
	return out
}

// JobRecord is what happened to one job. Times are virtual milliseconds;
// Start and End are -1 when the job never started or has not ended.
//
// A run keeps one record a job, so the fields are ordered to leave no
// padding (208 bytes; TestJobRecordSize); the per-pool usage is kept
// compactly (see Usage), and what few jobs have (recovery settings, a
// training step, a diagnosis) is read through methods.
type JobRecord struct {
	ID int32
	// Reason indexes Result.Reasons: why the job first had to wait (-1: it
	// never waited for want of capacity).
	Reason    int32
	Name      string
	Queue     string
	Priority  int32
	Replicas  int32
	PodsBound int32
	// MinAvailable is the job's gang size when below Replicas (0: all).
	MinAvailable int32
	// Pod is the request of each of the job's pods; the records of a run
	// share one copy per distinct request (never nil in a Result).
	Pod      *cluster.PodSpec
	Submit   Time
	Start    Time
	End      Time
	Duration Time
	Deadline Time
	Flags    cluster.JobFlag
	Outcome  Outcome
	// Slowed is set when the job shared time-sliced GPUs and so ran longer
	// than its duration.
	Slowed bool
	// Pool is the index of the pool of the job's first pod (-1: none).
	Pool int32
	// HeldMilliMs is milli-GPU x ms the job's pods held GPUs, partly bound
	// pods included.
	HeldMilliMs int64
	// AllocMilli is the milli-GPU the job's pods hold while it runs (a MIG
	// instance or a time-slicing replica holds its share of a GPU).
	AllocMilli int64
	// Attempts counts the job's starts; Disruptions the times a lost node
	// (or, under a Volcano PodFailed policy, an OOM kill) stopped it,
	// Failures those that counted towards its backoff limit or maxRetry.
	Attempts, Disruptions, Failures int32
	// The usage (see Usage): usePool is the pool of the only entry plus
	// one (0: no usage) and useHeld its Held, when that entry is the whole
	// usage and lost nothing and wrote no checkpoint, as for most jobs;
	// otherwise rare.use is every entry.
	usePool int32
	// LostMs is job time lost to disruptions (work since the last
	// checkpoint, restores); CheckpointMs time spent writing checkpoints.
	LostMs, CheckpointMs Time
	useHeld              [3]int64
	// rare is what few jobs have (nil: none of it): see recordRare.
	rare *recordRare
	// Admitted is when admission first admitted the job (-1: never, or no
	// admission policy); Preemptions the times admission or the scheduler
	// evicted it.
	Admitted    Time
	Preemptions int32
	// PreemptionsCaused counts the jobs the scheduler evicted for this one.
	PreemptionsCaused int32
}

// recordRare is the part of a record few jobs have: a usage list when the
// usage does not fit in the record, recovery settings, a training job's
// step record, a diagnosis. A run's records with recovery settings and a
// diagnosis and nothing else of it share one per pair; a recordRare is
// never changed once made.
type recordRare struct {
	use      []PoolUsage // nil: the usage is in the record
	recovery *cluster.Recovery
	step     *StepRecord
	diag     string
}

// Diagnosis explains a job left pending or unschedulable, as
// kube-scheduler would ("0/N nodes are available: ..."), or why a job
// failed ("" for others).
func (r *JobRecord) Diagnosis() string {
	if r.rare == nil {
		return ""
	}
	return r.rare.diag
}

// SetDiagnosis makes msg the record's diagnosis. Runs build their records'
// diagnoses themselves; this is for records made by hand.
func (r *JobRecord) SetDiagnosis(msg string) {
	var rare recordRare
	if r.rare != nil {
		rare = *r.rare
	}
	rare.diag = msg
	r.rare = rare.orNil()
}

// empty reports whether x holds nothing.
func (x *recordRare) empty() bool {
	return x.use == nil && x.recovery == nil && x.step == nil && x.diag == ""
}

// orNil is a copy of x, or nil when x holds nothing.
func (x recordRare) orNil() *recordRare {
	if x.empty() {
		return nil
	}
	return &x
}

// Recovery is the job's checkpoint and restart settings (nil: none).
func (r *JobRecord) Recovery() *cluster.Recovery {
	if r.rare == nil {
		return nil
	}
	return r.rare.recovery
}

// Step is how a training job's steps went (nil for other jobs).
func (r *JobRecord) Step() *StepRecord {
	if r.rare == nil {
		return nil
	}
	return r.rare.step
}

// Usage is the resource time the job's pods held, one entry a pool in the
// order the pools were first used (none if its pods never held anything).
// A record keeps a single entry with no lost or checkpoint time in place
// (24 bytes and the pool in what was padding, instead of a slice of
// 80-byte entries a job), so the entries are read through this iterator:
//
//	for u := range rec.Usage() { ... u.Pool, u.Held[sim.ResGPU] ... }
func (r *JobRecord) Usage() iter.Seq[PoolUsage] {
	return func(yield func(PoolUsage) bool) {
		if r.rare != nil && r.rare.use != nil {
			for _, u := range r.rare.use {
				if !yield(u) {
					return
				}
			}
			return
		}
		if r.usePool > 0 {
			yield(PoolUsage{Pool: r.usePool - 1, Held: r.useHeld})
		}
	}
}

// SetUsage makes us the record's usage (copied); HeldMilliMs is left as it
// is. Runs build their records' usage themselves; this is for records
// made by hand.
func (r *JobRecord) SetUsage(us []PoolUsage) {
	var rare recordRare
	if r.rare != nil {
		rare = *r.rare
	}
	r.usePool, r.useHeld, rare.use = 0, [3]int64{}, nil
	switch {
	case len(us) == 0:
	case inPlace(us):
		r.usePool, r.useHeld = us[0].Pool+1, us[0].Held
	default:
		rare.use = slices.Clone(us)
	}
	r.rare = rare.orNil()
}

// inPlace reports whether usage us fits in a record: one pool, nothing
// lost or checkpointed.
func inPlace(us []PoolUsage) bool {
	return len(us) == 1 && us[0].Lost == [3]int64{} && us[0].Checkpoint == [3]int64{} && us[0].Pool >= 0 && us[0].Pool < math.MaxInt32
}

// AdmissionWait is the time from submit to first admission (-1 if never
// admitted).
func (r *JobRecord) AdmissionWait() Time {
	if r.Admitted < 0 {
		return -1
	}
	return r.Admitted - r.Submit
}

// StepRecord is a training job's step time on its (first) placement.
type StepRecord struct {
	Steps int64
	// ComputeMs and CommMs are one step's compute and all-reduce, in ms.
	ComputeMs, CommMs float64
	// Fabric is the fabric the all-reduce was limited by; Nodes and Ranks
	// the placement's nodes and GPUs; GPUsPerNode the fewest on a node.
	Fabric                    string
	Nodes, Ranks, GPUsPerNode int
	// Level is the widest topology level the placement spans ("" when its
	// pool has no topology).
	Level string
}

// Resources of a PoolUsage, in its arrays.
const (
	ResGPU = iota // milli-GPU x ms
	ResCPU        // milli-CPU x ms
	ResMem        // MiB x ms
)

// PoolUsage is the resource time one job's pods held in one pool: Held in
// all, of which Lost to disruptions and spent on Checkpoint writes.
type PoolUsage struct {
	Pool                   int32
	Held, Lost, Checkpoint [3]int64
}

// Wait is the time from submit to start (-1 if it never started).
func (r *JobRecord) Wait() Time {
	if r.Start < 0 {
		return -1
	}
	return r.Start - r.Submit
}

// JCT is the job completion time, submit to end (-1 if it has not ended).
func (r *JobRecord) JCT() Time {
	if r.End < 0 {
		return -1
	}
	return r.End - r.Submit
}

// PoolResult is one pool's GPU ledger over the run.
type PoolResult struct {
	Spec cluster.PoolSpec
	// AllocatedMilliMs and SuppliedMilliMs are milli-GPU x ms: GPUs held by
	// pods, and GPUs present, integrated over [0, End].
	AllocatedMilliMs int64
	SuppliedMilliMs  int64
	// Usage is the pool's node-hours present (paid for) and the CPU and
	// memory its pods held.
	Usage cluster.Usage
	// Capacity is what its capacity controller did (zero without one).
	Capacity capacity.PoolStats
}

// Timeline holds time-bucketed series: bucket i covers
// [i*Interval, (i+1)*Interval), the last one cut at Result.End.
type Timeline struct {
	Interval Time
	// Allocated[p][i] is pool p's milli-GPU x ms allocated in bucket i,
	// Supplied[p][i] the milli-GPU x ms of the nodes present.
	Allocated [][]int64
	Supplied  [][]int64
	// PendingJobMs[i] is pending-job x ms in bucket i (mean queue length =
	// PendingJobMs / bucket width).
	PendingJobMs []int64
	// RunningJobMs[i] is running-job x ms in bucket i.
	RunningJobMs []int64
	// FragMilli[p][i], when sampled, is pool p's fragmented GPU capacity
	// (milli-GPU, the FGD measure) at the end of bucket i.
	FragMilli [][]int64
	// Levels, when some pool has a topology, are the free GPUs that form
	// a whole slot at each level (LevelSlots), one entry a bucket.
	Levels *LevelSlots
}

// Width is the length of bucket i given the run's end.
func (t *Timeline) Width(i int, end Time) Time {
	lo := Time(i) * t.Interval
	hi := lo + t.Interval
	if hi > end {
		hi = end
	}
	return hi - lo
}

// Stats counts the work a run did.
type Stats struct {
	Events   uint64
	Passes   uint64
	Attempts uint64
	Skipped  uint64
	// Relayouts counts MIG re-layouts of idle GPUs.
	Relayouts uint64
	// PreemptSearches counts the scheduler's searches for preemption
	// victims (a waiting job's look over the nodes its pods may use).
	PreemptSearches uint64
	// Disruptions counts jobs stopped by losing a node, by cause (spot
	// interruption, node failure, consolidation); JobsFailed those that
	// then failed past their backoff limit.
	Disruptions [capacity.NumCauses]int64
	JobsFailed  int64
}

// Result is the outcome of one simulation.
type Result struct {
	Seed    uint64
	Horizon Time
	End     Time
	Pools   []PoolResult
	// Jobs is every job's record, in order, when the run kept them in
	// memory (nil when they went to a temporary file: see
	// Config.RecordsInMemory). Read them through Records and NumJobs,
	// which serve both.
	Jobs     []JobRecord
	recs     *recordFile
	Reasons  []string
	Timeline Timeline
	Stats    Stats
	// Profile lists the enabled scheduler plugins per extension point.
	Profile map[string][]string
	Queue   struct {
		Policy        scheduler.QueuePolicy
		Backfill      bool
		BackfillDepth int
	}
	// Truncated is set when the horizon cut the workload short.
	Truncated bool
	// Dynamic is set when a capacity controller made nodes come and go.
	Dynamic bool
	// Admission is what the admission policy did (nil without one).
	Admission *AdmissionResult
	// Nodes, when fragmentation is sampled, is every node at the end.
	Nodes []NodeState
	// Services is what each of Config.Services did, in order.
	Services []ServiceResult
}

// NodeState is one node's free capacity and GPU fragmentation (the FGD
// measure, for the pod mix seen) at the end of a run.
type NodeState struct {
	Pool          int32
	FreeMilliCPU  int64
	FreeMemoryMiB int64
	FreeMilliGPU  int64
	FragMilliGPU  int64
	Pods          int32
}

// NumJobs is the number of job records.
func (r *Result) NumJobs() int {
	if r.recs != nil {
		return r.recs.n
	}
	return len(r.Jobs)
}

// Records yields every job record with its index, in order: from Jobs,
// or from the run's temporary file, a chunk at a time. A record from the
// file is only good until the next is yielded (the records of one chunk
// are reused for the next): copy what is kept. Several goroutines may
// read at once. A failure to read the file stops the sequence early and
// is RecordsErr's.
func (r *Result) Records() iter.Seq2[int, *JobRecord] {
	if r.recs != nil {
		return r.recs.all()
	}
	return func(yield func(int, *JobRecord) bool) {
		for i := range r.Jobs {
			if !yield(i, &r.Jobs[i]) {
				return
			}
		}
	}
}

// Spilled reports whether the records are in a temporary file rather
// than in Jobs.
func (r *Result) Spilled() bool { return r.recs != nil }

// RecordsErr is the first failure to read the records back from the
// run's temporary file (nil when none, or when they are in memory).
func (r *Result) RecordsErr() error {
	if r.recs == nil {
		return nil
	}
	return r.recs.readErr()
}

// Reason returns the text of a reason id ("" for -1).
func (r *Result) Reason(id int32) string {
	if id < 0 || int(id) >= len(r.Reasons) {
		return ""
	}
	return r.Reasons[id]
}
