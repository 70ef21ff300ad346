package cluster

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/topology"
)

// Time is virtual time in milliseconds.
type Time = int64

// MilliGPU is one whole GPU in the milli-GPU unit used for shares.
const MilliGPU = 1000

// MaxGPUsPerNode bounds the GPUs one node may have (a bitmask tracks them).
const MaxGPUsPerNode = 64

// Well-known node labels every pool carries.
const (
	LabelPool         = "gpuplan.dev/pool"
	LabelGPUModel     = "gpuplan.dev/gpu-model"
	LabelInstanceType = "node.kubernetes.io/instance-type"
	// LabelZone and LabelHostname are the well-known topology labels a
	// node carries per node rather than per pool (NodeLabel).
	LabelZone     = "topology.kubernetes.io/zone"
	LabelHostname = "kubernetes.io/hostname"
	// LabelRegion is the well-known region label (a pool's).
	LabelRegion = "topology.kubernetes.io/region"
)

// NodeLabels are the labels every node of the pool carries: the pool's
// own and the well-known ones (pool name, GPU model, instance type).
func (p PoolSpec) NodeLabels() map[string]string {
	labels := make(map[string]string, len(p.Labels)+3)
	for k, v := range p.Labels {
		labels[k] = v
	}
	labels[LabelPool] = p.Name
	if p.GPUModel != "" {
		labels[LabelGPUModel] = p.GPUModel
	}
	if p.InstanceType != "" {
		labels[LabelInstanceType] = p.InstanceType
	}
	return labels
}

// TaintEffect is a Kubernetes taint effect.
type TaintEffect string

const (
	NoSchedule       TaintEffect = "NoSchedule"
	PreferNoSchedule TaintEffect = "PreferNoSchedule"
	NoExecute        TaintEffect = "NoExecute"
)

// Taint repels pods that do not tolerate it.
type Taint struct {
	Key    string
	Value  string
	Effect TaintEffect
}

func (t Taint) String() string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

// Toleration follows core/v1 semantics: operator Equal (default) or Exists;
// an empty key with Exists tolerates every taint; an empty effect matches
// every effect.
type Toleration struct {
	Key      string
	Operator string
	Value    string
	Effect   TaintEffect
}

// Tolerates reports whether the toleration matches the taint.
func (tol Toleration) Tolerates(t Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key == "" {
		return tol.Operator == "Exists"
	}
	if tol.Key != t.Key {
		return false
	}
	if tol.Operator == "Exists" {
		return true
	}
	return tol.Value == t.Value
}

// SelectorOp is a node selector requirement operator.
type SelectorOp string

const (
	OpIn           SelectorOp = "In"
	OpNotIn        SelectorOp = "NotIn"
	OpExists       SelectorOp = "Exists"
	OpDoesNotExist SelectorOp = "DoesNotExist"
	OpGt           SelectorOp = "Gt"
	OpLt           SelectorOp = "Lt"
)

// Requirement is one node selector requirement (key, operator, values).
type Requirement struct {
	Key    string
	Op     SelectorOp
	Values []string
}

// Matches evaluates the requirement against a label set.
func (r Requirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Op {
	case OpIn:
		if !ok {
			return false
		}
		for _, x := range r.Values {
			if x == v {
				return true
			}
		}
		return false
	case OpNotIn:
		if !ok {
			return true
		}
		for _, x := range r.Values {
			if x == v {
				return false
			}
		}
		return true
	case OpExists:
		return ok
	case OpDoesNotExist:
		return !ok
	case OpGt, OpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		a, err1 := strconv.ParseInt(v, 10, 64)
		b, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Op == OpGt {
			return a > b
		}
		return a < b
	}
	return false
}

// NodeSelectorTerm is a list of requirements that must all hold.
type NodeSelectorTerm []Requirement

// Constraints say where a pod may run. Jobs with the same constraints share
// one *Constraints, so per-constraint work is done once.
type Constraints struct {
	// NodeSelector labels must all be present with these values.
	NodeSelector map[string]string
	// Affinity is required node affinity: the node must match at least one
	// term (terms are ORed, requirements within a term ANDed). Empty: any.
	Affinity []NodeSelectorTerm
	// Tolerations for the node pool taints.
	Tolerations []Toleration
	// Spread are the pod's topology spread constraints.
	Spread []SpreadConstraint
	// PodAffinity are the pod's required pod affinity and anti-affinity
	// terms (requiredDuringSchedulingIgnoredDuringExecution).
	PodAffinity []PodAffinityTerm
	// TAS is the pod template's Kueue topology-aware scheduling request
	// (nil: none): the job's pods are placed into topology domains as
	// Kueue assigns them (tas.go).
	TAS *TASRequest
}

// PodAffinityTerm is one required pod (anti-)affinity term: the node's
// TopologyKey domain must hold (affinity) or must not hold (Anti) a pod
// the selector matches.
type PodAffinityTerm struct {
	Anti        bool
	TopologyKey string
	// Selector: requirements ANDed, matchLabels as In; Nothing: no
	// labelSelector (it matches no pod).
	Selector []Requirement
	Nothing  bool
}

// Matches reports whether the term's selector matches a pod's labels.
func (t *PodAffinityTerm) Matches(l *PodLabels) bool {
	sc := SpreadConstraint{Selector: t.Selector, Nothing: t.Nothing}
	return sc.Matches(l)
}

// SpreadConstraint is one of a pod's topologySpreadConstraints: the pods
// its selector matches may differ by at most MaxSkew between the domains
// of TopologyKey (zones, hosts, ...).
type SpreadConstraint struct {
	MaxSkew     int32
	TopologyKey string
	// DoNotSchedule: whenUnsatisfiable DoNotSchedule (a filter); else
	// ScheduleAnyway (a score).
	DoNotSchedule bool
	// Selector is the labelSelector, matchLabels as In requirements, all
	// ANDed; Nothing: no labelSelector (it matches no pod).
	Selector []Requirement
	Nothing  bool
	// MinDomains: with fewer eligible domains the global minimum is 0.
	MinDomains int32
	// IgnoreNodeAffinity is nodeAffinityPolicy Ignore (default Honor:
	// only nodes the pod's node selector and affinity admit count);
	// HonorTaints is nodeTaintsPolicy Honor (default Ignore: tainted
	// nodes count too).
	IgnoreNodeAffinity, HonorTaints bool
}

// Matches reports whether the constraint's selector matches a pod's labels.
func (sc *SpreadConstraint) Matches(l *PodLabels) bool {
	if sc.Nothing {
		return false
	}
	var labels map[string]string
	if l != nil {
		labels = l.Labels
	}
	for _, r := range sc.Selector {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// Key is a canonical text form, used to share identical constraints.
func (c *Constraints) Key() string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	keys := make([]string, 0, len(c.NodeSelector))
	for k := range c.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "s:%s=%s;", k, c.NodeSelector[k])
	}
	for _, t := range c.Affinity {
		b.WriteString("t:")
		for _, r := range t {
			fmt.Fprintf(&b, "%s %s %s,", r.Key, r.Op, strings.Join(r.Values, "|"))
		}
		b.WriteString(";")
	}
	for _, t := range c.Tolerations {
		fmt.Fprintf(&b, "o:%s/%s/%s/%s;", t.Key, t.Operator, t.Value, t.Effect)
	}
	for _, sc := range c.Spread {
		fmt.Fprintf(&b, "p:%d/%s/%t/%t/%d/%t/%t/", sc.MaxSkew, sc.TopologyKey, sc.DoNotSchedule, sc.Nothing, sc.MinDomains, sc.IgnoreNodeAffinity, sc.HonorTaints)
		for _, r := range sc.Selector {
			fmt.Fprintf(&b, "%s %s %s,", r.Key, r.Op, strings.Join(r.Values, "|"))
		}
		b.WriteString(";")
	}
	if r := c.TAS; r != nil {
		fmt.Fprintf(&b, "k:%d/%s/%s/%d;", r.Mode, r.Level, r.SliceLevel, r.SliceSize)
	}
	for _, t := range c.PodAffinity {
		fmt.Fprintf(&b, "a:%t/%s/%t/", t.Anti, t.TopologyKey, t.Nothing)
		for _, r := range t.Selector {
			fmt.Fprintf(&b, "%s %s %s,", r.Key, r.Op, strings.Join(r.Values, "|"))
		}
		b.WriteString(";")
	}
	return b.String()
}

// PodSpec is the resource request of one pod (requests equal limits).
// A pod asks either for GPUs whole devices, or (GPUs == 0) for GPUMilli
// thousandths of one device, shared with other pods.
type PodSpec struct {
	MilliCPU  int64
	MemoryMiB int64
	GPUs      int32
	GPUMilli  int32
	// MIG, when set, is the MIG profile (e.g. "1g.10gb") the pod's GPUs
	// must be: the nvidia.com/mig-<profile> resource of the mixed strategy.
	MIG string
	// GPUMemMiB is the GPU memory each of the pod's GPUs needs. Only
	// time-sliced GPUs, which do not isolate memory, check it.
	GPUMemMiB int64
	// Labels are the pod's labels, which topology spread selectors match
	// (nil: none; the cluster counts labelled pods per node).
	Labels *PodLabels
}

// MilliGPUs is the pod's GPU request in milli-GPUs.
func (p PodSpec) MilliGPUs() int64 { return int64(p.GPUs)*MilliGPU + int64(p.GPUMilli) }

// Shared reports whether the pod asks for a share of one GPU.
func (p PodSpec) Shared() bool { return p.GPUs == 0 && p.GPUMilli > 0 }

// Validate checks the request is well formed.
func (p PodSpec) Validate() error {
	switch {
	case p.MilliCPU < 0:
		return fmt.Errorf("cpu request is negative")
	case p.MemoryMiB < 0:
		return fmt.Errorf("memory request is negative")
	case p.GPUs < 0:
		return fmt.Errorf("gpu request is negative")
	case p.GPUs > MaxGPUsPerNode:
		return fmt.Errorf("gpu request %d is over the %d a node can have", p.GPUs, MaxGPUsPerNode)
	case p.GPUMilli < 0 || p.GPUMilli >= MilliGPU:
		return fmt.Errorf("gpu share %d milli is outside 0..999", p.GPUMilli)
	case p.GPUs > 0 && p.GPUMilli > 0:
		return fmt.Errorf("a pod asks for whole GPUs or a share of one, not both")
	case p.MIG != "" && p.GPUs == 0:
		return fmt.Errorf("a pod asking for MIG instances asks for at least one")
	case p.GPUMemMiB < 0:
		return fmt.Errorf("gpu memory is negative")
	}
	return nil
}

// GPUResource is the Kubernetes resource the pod's GPUs are.
func (p PodSpec) GPUResource() string {
	if p.MIG != "" {
		return "nvidia.com/mig-" + p.MIG
	}
	return "nvidia.com/gpu"
}

// JobFlag marks how a job came out of its source.
type JobFlag uint8

const (
	// FlagNoRecordedRun: the source trace never ran the job (for example an
	// openb pod still Pending when deleted); its Duration is an upper bound
	// and its Deadline is when it was deleted.
	FlagNoRecordedRun JobFlag = 1 << iota
	// FlagPreemptNever: the job's PriorityClass has preemptionPolicy
	// Never; it waits rather than evict lower-priority jobs.
	FlagPreemptNever
	// FlagDRAClaims: the job's GPUs come by DRA claim (a
	// ResourceClaimTemplate, a ResourceClaim or a DRA-backed extended
	// resource): kube-scheduler's preemption does not free them (see
	// sim's preemption).
	FlagDRAClaims
)

// JobSpec is one job of a workload: Replicas identical pods, bound together
// when the scheduler runs a gang plugin.
type JobSpec struct {
	Name     string
	Queue    string
	Submit   Time
	Duration Time
	// Deadline, when non-zero, is the absolute time the job is deleted,
	// whether it is still pending or running by then.
	Deadline    Time
	Replicas    int32
	Priority    int32
	Pod         PodSpec
	Constraints *Constraints
	Flags       JobFlag
	// Recovery says how the job survives losing a node (nil: no
	// checkpoints, Kubernetes' default backoff limit of 6).
	Recovery *Recovery
	// Training, when set, makes the job data-parallel training whose run
	// time depends on where it lands: Steps x (compute + the all-reduce of
	// its gradients over its placement). Duration is then the run time
	// with no communication, until the job starts.
	Training *Training
	// MinAvailable is the job's gang size (a Volcano PodGroup's
	// minMember): under the Gang plugin this many pods must be placeable
	// together before any binds, the rest then bind as they fit; the job
	// runs once every pod is bound. 0 (or Replicas): the whole job.
	MinAvailable int32
	// GPUQuota, when set, is the resource Kueue admission charges the
	// job's GPUs as instead of nvidia.com/gpu (or its MIG resource): a
	// DRA claim's DeviceClass through Kueue's deviceClassMappings, or a
	// DRA-backed extended resource; NoGPUQuota: not charged (Kueue does
	// not see the claim).
	GPUQuota string
	// Groups are the job's further pod groups when its replicas ask for
	// different pods (an MPIJob's CPU Launcher and GPU Workers, a TFJob's
	// PS and Workers): one gang, one Kueue Workload with a PodSet per
	// group. Replicas counts every pod of the job; the first
	// MainReplicas() are Pod with Constraints, then each group's in
	// order. Nil for the common one-shape job.
	Groups []PodGroup
	// MainAt is the main pod group's place among the job's pod groups in
	// the object's order (Kueue's PodSets: Groups[:MainAt], the main
	// Pod, then Groups[MainAt:]); 0: first.
	MainAt int32
}

// PodGroup is one further group of a job's pods (JobSpec.Groups): a
// replica type whose pod template differs from the job's main one.
type PodGroup struct {
	// Name is the replica type (Worker, PS, ...), for reports.
	Name        string
	Pod         PodSpec
	Replicas    int32
	Constraints *Constraints
}

// MainReplicas is how many of the job's pods are its main Pod: Replicas
// less the further groups' pods.
func (j *JobSpec) MainReplicas() int32 {
	n := j.Replicas
	for i := range j.Groups {
		n -= j.Groups[i].Replicas
	}
	return n
}

// PodAt is the spec and constraints of the job's pod k (0 <= k <
// Replicas): the main Pod for the first MainReplicas(), then each
// group's in order.
func (j *JobSpec) PodAt(k int32) (*PodSpec, *Constraints) {
	if len(j.Groups) > 0 {
		first := j.Replicas
		for g := len(j.Groups) - 1; g >= 0; g-- {
			first -= j.Groups[g].Replicas
			if k >= first {
				return &j.Groups[g].Pod, j.Groups[g].Constraints
			}
		}
	}
	return &j.Pod, j.Constraints
}

// GroupOf is the pod group of the job's pod k: 0 for the main Pod, g >=
// 1 for Groups[g-1].
func (j *JobSpec) GroupOf(k int32) int {
	first := j.Replicas
	for g := len(j.Groups) - 1; g >= 0; g-- {
		first -= j.Groups[g].Replicas
		if k >= first {
			return g + 1
		}
	}
	return 0
}

// Part is the job's pod group g as a job of its own (g 0: the main Pod,
// g >= 1: Groups[g-1]), for the checks that look at one pod shape: the
// same job but for its pods, replicas and constraints, with no further
// groups and no MinAvailable.
func (j *JobSpec) Part(g int) JobSpec {
	v := *j
	v.Groups, v.MinAvailable, v.MainAt = nil, 0, 0
	if g == 0 {
		v.Replicas = j.MainReplicas()
		return v
	}
	pg := &j.Groups[g-1]
	v.Pod, v.Replicas, v.Constraints = pg.Pod, pg.Replicas, pg.Constraints
	return v
}

// NoGPUQuota is a JobSpec.GPUQuota: the job's GPUs are charged to no
// quota.
const NoGPUQuota = "-"

// Training describes a data-parallel training job: each step computes for
// ComputePerStep and all-reduces GradientBytes over all its GPUs.
type Training struct {
	Steps          int64
	ComputePerStep Time
	GradientBytes  int64
}

// DefaultBackoffLimit is a Kubernetes Job's default spec.backoffLimit.
const DefaultBackoffLimit = 6

// Recovery is how a job checkpoints and restarts when a node it runs on
// is lost. Jobs of one class share one *Recovery.
type Recovery struct {
	// CheckpointInterval is the work between checkpoints (0: none);
	// CheckpointCost the time one takes to write, during which the job
	// makes no progress; RestoreCost the time to load one on a restart.
	CheckpointInterval, CheckpointCost, RestoreCost Time
	// BackoffLimit is how many failures the job survives; one more and it
	// fails (Kubernetes spec.backoffLimit).
	BackoffLimit int32
	// IgnoreDisruptions is a podFailurePolicy rule with action Ignore on
	// the DisruptionTarget condition: losing a node does not count
	// towards the backoff limit (and restarts without backoff delay).
	IgnoreDisruptions bool
	// ActiveDeadline, when positive, fails the job that long after its
	// submission, running or not (spec.activeDeadlineSeconds).
	ActiveDeadline Time
	// DoNotDisrupt keeps consolidation off the job's nodes (the
	// karpenter.sh/do-not-disrupt annotation).
	DoNotDisrupt bool
	// Volcano, when set, replaces the Kubernetes Job's backoff limit and
	// podFailurePolicy by a Volcano Job's lifecycle policies.
	Volcano *VolcanoPolicies
	// TerminationGrace is the pods' terminationGracePeriodSeconds: a job
	// preempted or drained whose checkpoint write fits in it (and in a
	// spot notice) checkpoints what it computed before its pods go (0:
	// long enough for the write, as gpuplan manifests sets it).
	TerminationGrace Time
}

// VolcanoAction is what a Volcano Job does on a pod event.
type VolcanoAction uint8

const (
	// VolcanoSync: no policy for the event; the job controller recreates
	// the pod. In gpuplan the job restarts from its last checkpoint, with
	// no retry counted and no backoff.
	VolcanoSync VolcanoAction = iota
	// VolcanoRestartJob (RestartJob, and RestartTask or RestartPod, which
	// for a one-task data-parallel job restart it whole): every pod is
	// killed and recreated, the job resumes from its last checkpoint, and
	// one retry is counted; at maxRetry retries the job fails.
	VolcanoRestartJob
	// VolcanoAbortJob: the job stops (Aborted), its work done so far lost.
	VolcanoAbortJob
	// VolcanoTerminateJob: the job stops for good (Terminated).
	VolcanoTerminateJob
)

var volcanoActionNames = []string{"", "RestartJob", "AbortJob", "TerminateJob"}

func (a VolcanoAction) String() string {
	if a == VolcanoSync {
		return "none"
	}
	return volcanoActionNames[a]
}

// ParseVolcanoAction reads a Volcano action name.
func ParseVolcanoAction(s string) (VolcanoAction, error) {
	switch s {
	case "RestartTask", "RestartPod":
		return VolcanoRestartJob, nil
	case "":
		return VolcanoSync, fmt.Errorf("an action is required")
	case "CompleteJob":
		return VolcanoSync, fmt.Errorf("CompleteJob on a pod event is not modelled: it would mark the job Completed with its work undone")
	}
	for i, n := range volcanoActionNames {
		if i > 0 && n == s {
			return VolcanoAction(i), nil
		}
	}
	return VolcanoSync, fmt.Errorf("action %q is not one of RestartJob, RestartTask, RestartPod, AbortJob, TerminateJob", s)
}

// DefaultMaxRetry is a Volcano Job's default spec.maxRetry.
const DefaultMaxRetry = 3

// VolcanoPolicies are a Volcano Job's lifecycle policies for the pod
// events gpuplan produces: PodEvicted (a node lost, reclaimed or
// drained, or a pod preempted) and PodFailed (an OOM kill on shared
// GPUs).
type VolcanoPolicies struct {
	OnEvicted, OnFailed VolcanoAction
	// MaxRetry: the job fails when its retry count reaches it.
	MaxRetry int32
}

// Validate checks the recovery settings.
func (r *Recovery) Validate() error {
	switch {
	case r.CheckpointInterval < 0 || r.CheckpointCost < 0 || r.RestoreCost < 0:
		return fmt.Errorf("checkpoint interval, checkpoint cost and restore cost must not be negative")
	case r.CheckpointCost > 0 && r.CheckpointInterval == 0:
		return fmt.Errorf("a checkpoint cost needs a checkpoint interval")
	case r.BackoffLimit < 0:
		return fmt.Errorf("backoff limit must not be negative")
	case r.ActiveDeadline < 0:
		return fmt.Errorf("active deadline must not be negative")
	case r.Volcano != nil && r.Volcano.MaxRetry < 1:
		return fmt.Errorf("Volcano maxRetry must be at least 1")
	}
	return nil
}

// Validate checks the job is well formed.
func (j *JobSpec) Validate() error {
	switch {
	case j.Submit < 0:
		return fmt.Errorf("submit time is negative")
	case j.Duration <= 0:
		return fmt.Errorf("duration must be positive")
	case j.Replicas < 1:
		return fmt.Errorf("replicas must be at least 1")
	case j.Deadline != 0 && j.Deadline < j.Submit:
		return fmt.Errorf("deadline is before the submit time")
	case j.MinAvailable < 0:
		return fmt.Errorf("minAvailable must not be negative")
	}
	if err := j.Pod.Validate(); err != nil {
		return err
	}
	if len(j.Groups) > 0 {
		if j.MainReplicas() < 1 {
			return fmt.Errorf("replicas (%d) must exceed the further pod groups' (%d)", j.Replicas, j.Replicas-j.MainReplicas())
		}
		for i := range j.Groups {
			g := &j.Groups[i]
			if g.Replicas < 1 {
				return fmt.Errorf("pod group %q: replicas must be at least 1", g.Name)
			}
			if err := g.Pod.Validate(); err != nil {
				return fmt.Errorf("pod group %q: %w", g.Name, err)
			}
		}
	}
	if j.Recovery != nil {
		return j.Recovery.Validate()
	}
	return nil
}

// MIG strategies of the NVIDIA device plugin.
const (
	// MIGSingle: every GPU of the node has the same layout of one profile;
	// each instance is advertised as nvidia.com/gpu.
	MIGSingle = "single"
	// MIGMixed: instances are advertised as nvidia.com/mig-<profile>.
	MIGMixed = "mixed"
)

// Sharing is how a pool's GPUs are shared.
type Sharing struct {
	// TimeSlicing advertises each GPU this many times (the device plugin's
	// replicas); 0 or 1 means no time slicing.
	TimeSlicing int32
	// SliceOverhead is the share of a time-sliced GPU lost to context
	// switching when two or more pods share it: each of k sharers runs at
	// (1 - SliceOverhead) / k instead of 1/k.
	SliceOverhead float64
	// MIGStrategy is "", MIGSingle or MIGMixed; MIGLayout the instances of
	// every GPU (models.MIGLayout expands mig-parted names).
	MIGStrategy string
	MIGLayout   []string
	// MIGRelayout, when set (mixed strategy only), lets an idle GPU be
	// re-partitioned for a pending pod's profile: the GPU leaves service for
	// MIGDrain + MIGReconfigure and returns as all-<profile>.
	MIGRelayout    bool
	MIGDrain       Time
	MIGReconfigure Time
}

// PoolSpec describes a group of identical nodes.
type PoolSpec struct {
	Name         string
	InstanceType string
	GPUModel     string
	// Nodes are Ready at time 0; MaxNodes (at least Nodes; 0 means Nodes)
	// is how many the pool can ever have at once: the slots a capacity
	// controller launches nodes into.
	Nodes       int
	MaxNodes    int
	GPUsPerNode int32
	MilliCPU    int64
	MemoryMiB   int64
	// GPUMemoryMiB is each GPU's memory (0: unknown; time-sliced pools need it).
	GPUMemoryMiB int64
	// Fabric names the GPUs' interconnect within a node and Network the
	// one between nodes, in the run's fabrics (calibration profile or
	// defaults); empty: the GPU model's default.
	Fabric, Network string
	Sharing         Sharing
	Labels          map[string]string
	Taints          []Taint
	// Topology groups the pool's node slots into NVLink domains, racks
	// and blocks (zero: one flat network, each node its own domain).
	Topology topology.Spec
	// LevelKeys are other names of the level labels (LabelGPUClique,
	// LabelTopologyRack, LabelTopologyBlock) on the pool's nodes: the
	// cloud's labels a node list gave its topology by, such as EKS's
	// topology.k8s.aws/network-node-layer-3 for the rack.
	LevelKeys map[string]string
	// Zones, when given, spread the pool's nodes over zones round robin
	// (ZoneOf): each node's topology.kubernetes.io/zone label. None: the
	// zone label, if any, is the pool's.
	Zones []string
}

// Slots is the most nodes the pool can have at once.
func (p *PoolSpec) Slots() int { return max(p.Nodes, p.MaxNodes) }

// Validate checks the pool is well formed.
func (p *PoolSpec) Validate() error {
	switch {
	case p.Name == "":
		return fmt.Errorf("pool has no name")
	case p.Nodes < 0:
		return fmt.Errorf("node count is negative")
	case p.MaxNodes != 0 && p.MaxNodes < p.Nodes:
		return fmt.Errorf("the pool starts with %d nodes, more than its maximum %d", p.Nodes, p.MaxNodes)
	case p.GPUsPerNode < 0 || p.GPUsPerNode > MaxGPUsPerNode:
		return fmt.Errorf("gpus per node %d is outside 0..%d", p.GPUsPerNode, MaxGPUsPerNode)
	case p.MilliCPU <= 0:
		return fmt.Errorf("cpu must be positive")
	case p.MemoryMiB <= 0:
		return fmt.Errorf("memory must be positive")
	case p.GPUMemoryMiB < 0:
		return fmt.Errorf("gpu memory is negative")
	}
	if err := p.Topology.Validate(p.GPUsPerNode); err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	if err := p.validateZones(); err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	sh := &p.Sharing
	if sh.TimeSlicing > 1 && sh.MIGStrategy != "" {
		return fmt.Errorf("a pool's GPUs are time-sliced or MIG-partitioned, not both")
	}
	if sh.TimeSlicing < 0 {
		return fmt.Errorf("time-slicing replicas must not be negative")
	}
	if sh.SliceOverhead < 0 || sh.SliceOverhead >= 1 {
		return fmt.Errorf("time-slicing overhead %g is outside [0, 1)", sh.SliceOverhead)
	}
	if sh.TimeSlicing > 1 && int64(sh.TimeSlicing)*int64(p.GPUsPerNode) > MaxGPUsPerNode {
		return fmt.Errorf("%d GPUs x %d replicas is more than the %d devices a node can advertise", p.GPUsPerNode, sh.TimeSlicing, MaxGPUsPerNode)
	}
	switch sh.MIGStrategy {
	case "":
		if len(sh.MIGLayout) > 0 {
			return fmt.Errorf("a MIG layout needs a MIG strategy (single or mixed)")
		}
	case MIGSingle, MIGMixed:
		if _, err := models.PlaceMIG(p.GPUModel, sh.MIGLayout); err != nil {
			return err
		}
		if len(sh.MIGLayout) == 0 {
			return fmt.Errorf("a MIG pool needs a layout")
		}
		if sh.MIGStrategy == MIGSingle {
			for _, x := range sh.MIGLayout {
				if x != sh.MIGLayout[0] {
					return fmt.Errorf("the single MIG strategy needs one profile on every GPU, the layout has %s and %s", sh.MIGLayout[0], x)
				}
			}
		}
		if len(sh.MIGLayout)*int(p.GPUsPerNode) > MaxGPUsPerNode {
			return fmt.Errorf("%d GPUs x %d MIG instances is more than the %d devices a node can advertise", p.GPUsPerNode, len(sh.MIGLayout), MaxGPUsPerNode)
		}
	default:
		return fmt.Errorf("MIG strategy %q is not single or mixed", sh.MIGStrategy)
	}
	if sh.MIGRelayout && sh.MIGStrategy != MIGMixed {
		return fmt.Errorf("MIG re-layout needs the mixed strategy")
	}
	if sh.MIGDrain < 0 || sh.MIGReconfigure < 0 {
		return fmt.Errorf("MIG drain and reconfigure delays must not be negative")
	}
	return nil
}
