package scheduler

import (
	"fmt"
	"math/rand/v2"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// MaxNodeScore is the highest score a Score plugin returns for a node.
const MaxNodeScore int64 = 100

// Code is the outcome of a plugin call.
type Code int

const (
	// Success: the plugin has no objection.
	Success Code = iota
	// Unschedulable: not now; it may fit once capacity frees up.
	Unschedulable
	// UnschedulableAndUnresolvable: it can never fit where it was tried.
	UnschedulableAndUnresolvable
	// Error: the plugin failed; the run stops.
	Error
)

// Status is the result of a plugin call; a nil *Status means success.
type Status struct {
	Code    Code
	Plugin  string
	Reasons []string
}

// NewStatus returns a status with one or more reasons.
func NewStatus(code Code, plugin string, reasons ...string) *Status {
	return &Status{Code: code, Plugin: plugin, Reasons: reasons}
}

// IsSuccess reports whether s is nil or Success.
func (s *Status) IsSuccess() bool { return s == nil || s.Code == Success }

// Message joins the reasons.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	switch len(s.Reasons) {
	case 0:
		return s.Plugin
	case 1:
		return s.Reasons[0]
	}
	m := s.Reasons[0]
	for _, r := range s.Reasons[1:] {
		m += ", " + r
	}
	return m
}

// Err turns an Error status into a Go error.
func (s *Status) Err() error {
	if s == nil || s.Code != Error {
		return nil
	}
	return fmt.Errorf("plugin %s: %s", s.Plugin, s.Message())
}

// JobInfo is a job as the scheduler sees it.
type JobInfo struct {
	ID int32
	// backoffEnd (under the scheduling queue) is the second at which the
	// job's backoff after its last failed attempt is over (see
	// Scheduler.backOff); it sits in the padding after ID.
	backoffEnd int32
	Spec       *cluster.JobSpec
	// Bound is the number of the job's pods bound so far.
	Bound int32
	// FirstReason and LastReason index the scheduler's reason table (-1:
	// none): why the job was not placed the first and the latest time.
	FirstReason, LastReason int32
	// Attempted is set once the framework has tried the job.
	Attempted bool
	// Done is set when the job leaves the queue (bound or deleted).
	Done bool
	// queued is set while the job sits in a queue bucket.
	queued bool
	// backoff (under the scheduling queue): the low 7 bits count the
	// job's failed attempts (the pod's UnschedulableCount, saturating at
	// 127), the top bit is set while it waits in the backoff queue. One
	// byte, so that JobInfo stays 32 bytes.
	backoff uint8
}

const inBackoffQ uint8 = 0x80

func (j *JobInfo) failures() int   { return int(j.backoff &^ inBackoffQ) }
func (j *JobInfo) inBackoff() bool { return j.backoff&inBackoffQ != 0 }
func (j *JobInfo) setInBackoff(b bool) {
	if b {
		j.backoff |= inBackoffQ
	} else {
		j.backoff &^= inBackoffQ
	}
}

// backoffUntil is when j's backoff ends, in ms.
func (j *JobInfo) backoffUntil() cluster.Time { return cluster.Time(j.backoffEnd) * 1000 }

// Remaining is the number of pods still to bind.
func (j *JobInfo) Remaining() int32 { return j.Spec.Replicas - j.Bound }

// GangNeed is how many of the remaining pods a gang must place together:
// every remaining pod, or with a MinAvailable below the job's size, what
// is still missing of it (at least one).
func (j *JobInfo) GangNeed() int32 {
	m := j.Spec.MinAvailable
	if m <= 0 || m >= j.Spec.Replicas {
		return j.Remaining()
	}
	return min(max(1, m-j.Bound), j.Remaining())
}

// Plugin is the base of every extension point.
type Plugin interface {
	Name() string
}

// QueueSortPlugin orders the pending queue.
type QueueSortPlugin interface {
	Plugin
	Less(a, b *JobInfo) bool
}

// PriorityFirst is implemented by a QueueSort plugin whose order puts
// every job before all jobs of lower priority (PrioritySort): a walk of
// the queue may stop at the first job of a priority it does not want.
type PriorityFirst interface {
	QueueSortPlugin
	PriorityFirst()
}

// PreFilterPlugin checks a job before any node is looked at and narrows
// CycleState.Pools to the pools that may hold its pods. A plugin that drops
// every pool returns the reason.
type PreFilterPlugin interface {
	Plugin
	PreFilter(st *CycleState, job *JobInfo) *Status
}

// FilterPlugin rejects nodes that cannot hold a pod now. FilterBatch keeps
// the nodes that pass, in order, in a prefix of nodes and returns it;
// Filter explains one node (used for diagnosis, not on the hot path).
type FilterPlugin interface {
	Plugin
	FilterBatch(st *CycleState, pod *cluster.PodSpec, nodes []int32) []int32
	Filter(st *CycleState, pod *cluster.PodSpec, node int32) *Status
}

// ScorePlugin ranks feasible nodes: out[i] is in 0..MaxNodeScore for
// nodes[i]. The score may depend only on the pod and that node's state.
type ScorePlugin interface {
	Plugin
	ScoreBatch(st *CycleState, pod *cluster.PodSpec, nodes []int32, out []int64)
}

// ListScorer is a ScorePlugin whose scores depend on the list of nodes it
// is given, not only on each node's own state (Random draws one node of
// the list). With one in the profile the framework scores every feasible
// node; otherwise it scores one node per state class (cluster classes.go),
// which gives the same placements at a cost that does not grow with the
// nodes.
type ListScorer interface {
	ScorePlugin
	ScoresDependOnList()
}

// PlacementAwarePlugin is a plugin whose filter or score, for some jobs,
// depends on where pods already are across the nodes (topology spread):
// placing one pod changes the verdict on other nodes. For such a job the
// framework filters and scores every node again before each pod, as
// kube-scheduler runs one cycle per pod, and not one node per state class.
type PlacementAwarePlugin interface {
	Plugin
	PlacementAware(job *JobInfo) bool
}

// ReservePlugin is told of each pod reserved on a node and of each
// reservation undone when the job's statement is discarded.
type ReservePlugin interface {
	Plugin
	Reserve(st *CycleState, job *JobInfo, node int32) *Status
	Unreserve(st *CycleState, job *JobInfo, node int32)
}

// PermitPlugin approves or rejects the placement of a job's pods as a whole
// after as many as fit have been reserved (placed of them).
type PermitPlugin interface {
	Plugin
	Permit(st *CycleState, job *JobInfo, placed int32) *Status
}

// MinMemberPlugin says how many of a job's remaining pods must be placed in
// one cycle for any to be bound (a gang's minMember). Without one, pods
// bind as they fit.
type MinMemberPlugin interface {
	Plugin
	MinMember(job *JobInfo) int32
}

// GPUSelectPlugin chooses which GPU of a node a pod asking for a share of
// one GPU goes to (-1: the default, the GPU with least free that fits).
type GPUSelectPlugin interface {
	Plugin
	SelectGPU(st *CycleState, pod *cluster.PodSpec, node int32) int
}

// Handle is what plugins may use besides the cycle state: the scheduler's
// own random stream and, for fragmentation-aware plugins, the workload's
// pod mix. Mix may be replaced during a run; MixVersion changes when it is.
type Handle struct {
	Rand       *rand.Rand
	Mix        *models.PodMix
	MixVersion int
	// NeedsMix is set by a plugin that reads Mix, so the runner keeps it up to date.
	NeedsMix bool
}

// Binder receives each committed placement of a job's pods.
type Binder interface {
	Bind(job *JobInfo, placements []cluster.Placement) error
}

// PluginConfig enables one plugin in a profile.
type PluginConfig struct {
	Name string
	// Weight multiplies a score plugin's score (default 1).
	Weight int64
	// Resources weights resources for allocation scoring plugins
	// ("cpu", "memory", "nvidia.com/gpu").
	Resources map[string]int64
}
