package sim

import (
	"errors"
	"fmt"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Time is virtual time in milliseconds.
type Time = cluster.Time

// Common durations in virtual time.
const (
	Millisecond Time = 1
	Second           = 1000 * Millisecond
	Minute           = 60 * Second
	Hour             = 60 * Minute
)

// JobSource yields a workload's jobs in non-decreasing submit order, one at
// a time, so a trace can stream from disk.
type JobSource interface {
	// Next fills j with the next job; ok is false once the source is done.
	Next(j *cluster.JobSpec) (ok bool, err error)
}

// SliceSource serves jobs from memory.
type SliceSource struct {
	Jobs []cluster.JobSpec
	i    int
}

// Next implements JobSource.
func (s *SliceSource) Next(j *cluster.JobSpec) (bool, error) {
	if s.i >= len(s.Jobs) {
		return false, nil
	}
	*j = s.Jobs[s.i]
	s.i++
	return true, nil
}

// Progress is a snapshot handed to Config.Progress during a run.
type Progress struct {
	Now       Time
	Submitted int
	Finished  int
	Events    uint64
}

// Config is everything one simulation needs.
type Config struct {
	Seed uint64
	// Horizon ends the run (0: run until every job has finished or can make
	// no progress). Jobs submitted at or after it are not read.
	Horizon Time
	Pools   []cluster.PoolSpec
	// Workload is read incrementally during the run.
	Workload JobSource
	// JobsHint, when positive, is about how many jobs the workload holds
	// (at most MaxJobs; a count of the trace's rows, say): the run then
	// keeps their records in one array of that size from the start, whose
	// pages cost memory only once written, and Result.Jobs is that array
	// rather than a copy (unless the hint is over RecordsInMemory: then
	// the records go to file). A wrong hint costs memory, never a result.
	JobsHint int
	// RecordsInMemory is how many job records the run keeps in memory
	// (0: DefaultRecordsInMemory; negative: all of them): past it, the
	// records of finished jobs go to a temporary file in TempDir (the
	// system's when ""), chunk by chunk, so that memory grows with the
	// jobs in flight rather than with every job (Result.Records reads
	// them back). The records, and every output, are the same either way.
	RecordsInMemory int
	TempDir         string
	// Plugins is the scheduler profile (plugins.Default() when empty).
	Plugins []scheduler.PluginConfig
	Queue   scheduler.QueueConfig
	// TieBreak chooses between nodes of equal score: lowestIndex (default)
	// or random (kube-scheduler's behaviour, from the run's seed).
	TieBreak string
	// TimelineInterval is the width of a timeline bucket (default 1h).
	TimelineInterval Time
	// Fragmentation samples each pool's FGD fragmentation (for the pod mix
	// seen so far) at every timeline bucket end; always on when a plugin
	// uses the pod mix.
	Fragmentation bool
	// Fabrics are the interconnects training jobs communicate over, by
	// name (nil: models.DefaultFabrics()).
	Fabrics map[string]models.Fabric
	// TASLevels are the node label keys of the Kueue Topology that jobs
	// asking for topology-aware scheduling are placed over, widest first
	// (cluster.Cluster.SetTASLevels; nil: the pools' levels, TASLevels).
	TASLevels []string
	// HyperNodes, when given, are the Volcano HyperNodes whose tiers are
	// the topology levels instead (cluster.Cluster.SetHyperNodes): Volcano
	// Jobs' spec.networkTopology is placed over them.
	HyperNodes []cluster.HyperNode
	// Capacity, when set, makes nodes come and go: spot interruptions,
	// failures, autoscaling (one entry per pool, same order).
	Capacity *capacity.Spec
	// Preemption lets a pending job evict running jobs of lower priority
	// (kube-scheduler's DefaultPreemption), unless its PreemptNever flag
	// is set.
	Preemption bool
	// Admission, when set, puts Kueue-style quota admission in front of the
	// scheduler: every job's Queue names a LocalQueue of the policy.
	Admission *admission.Spec
	// Services are inference services whose replicas run beside the
	// workload's jobs (see ServiceConfig).
	Services []ServiceConfig
	// StallLimit, when positive, bounds a run without a horizon that no
	// longer drains: once no job has arrived or finished for the longer of
	// StallLimit and ten times the longest job arrived, it stops with a
	// *StallError (jobs that restart after every disruption and never
	// finish, say). The spot sensitivity's replays set it; 0: no bound.
	StallLimit Time
	// SupplyReplicate, when positive, draws node supply (spot lifetimes,
	// capacity outages and reclaim waves, node failures) from seed
	// Seed+SupplyReplicate while everything else (the workload, the
	// scheduler's ties) keeps Seed: replicate k of the same run sees other
	// interruptions of the same workload. The spot sensitivity's seeds
	// set it; 0: supply from Seed.
	SupplyReplicate uint64
	// MaxEvents, when positive, stops a run whose events pass it plus
	// EventsPerJob for each job submitted, with a *BudgetError: the
	// backstop of the budget a scenario is checked against before it runs
	// (a run without a horizon cannot be estimated in full).
	MaxEvents uint64
	// Progress, when set, is called every ProgressEvery events.
	Progress      func(Progress)
	ProgressEvery uint64
	// Planted, when set, plants known bugs in the run. Only tests set it:
	// they check that the invariant checks, and the scenario composer
	// that hunts for broken invariants (scenarios/compose), catch them.
	Planted *PlantedBugs
	// periodEvents makes every scaler period an event of its own (tests:
	// the same run as the default, which does consecutive periods with
	// nothing between them in one; see nextSync).
	periodEvents bool
	// periodsSkipped, when set, counts the periods done in skipped
	// stretches (tests; see syncChain).
	periodsSkipped *int
}

// PlantedBugs are deliberate bugs a test may plant in a run to check that
// they are caught; a run the product makes never has any.
type PlantedBugs struct {
	// DoubleReleaseOnLoss releases a job's first placement twice when an
	// attempt ends with work lost (a lost node, a reclaim, a preemption
	// without a checkpoint): a double release in the allocation ledger.
	DoubleReleaseOnLoss bool
}

// InvariantError is a broken invariant: a bug in the simulator, not bad input.
type InvariantError struct{ Err error }

func (e *InvariantError) Error() string {
	return "invariant violated (a gpuplan bug): " + e.Err.Error()
}
func (e *InvariantError) Unwrap() error { return e.Err }

// ExitCode is 4: a broken invariant, a gpuplan bug.
func (e *InvariantError) ExitCode() int { return 4 }

// WorkloadError is a job the workload source gave that cannot be simulated.
type WorkloadError struct {
	Job  int
	Name string
	Err  error
}

func (e *WorkloadError) Error() string {
	return fmt.Sprintf("workload job %d (%s): %v", e.Job+1, e.Name, e.Err)
}
func (e *WorkloadError) Unwrap() error { return e.Err }

func invariant(err error) error {
	if err == nil {
		return nil
	}
	var ie *InvariantError
	if errors.As(err, &ie) {
		return err
	}
	return &InvariantError{Err: err}
}

// StallError is a run without a horizon that stopped draining: no job
// arrived or finished for Limit of simulated time, up to At, with
// Unfinished of Jobs jobs not finished (Config.StallLimit).
type StallError struct {
	At, Limit        Time
	Unfinished, Jobs int
}

func (e *StallError) Error() string {
	return fmt.Sprintf("the workload does not drain: no job arrived or finished for %s of simulated time (to %s), %d of %d jobs unfinished",
		durationText(e.Limit), durationText(e.At), e.Unfinished, e.Jobs)
}
