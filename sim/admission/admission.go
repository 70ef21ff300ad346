package admission

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Strategy is a ClusterQueue's queueingStrategy.
type Strategy uint8

const (
	// BestEffortFIFO: a head that does not fit steps aside and the next
	// workload is tried.
	BestEffortFIFO Strategy = iota
	// StrictFIFO: a head that does not fit blocks every workload behind it.
	StrictFIFO
)

func (s Strategy) String() string {
	if s == StrictFIFO {
		return "StrictFIFO"
	}
	return "BestEffortFIFO"
}

// Policy is a preemption policy.
type Policy uint8

const (
	// Never preempts.
	Never Policy = iota
	// LowerPriority preempts workloads of lower priority.
	LowerPriority
	// LowerOrNewerEqualPriority also preempts workloads of equal priority
	// created later.
	LowerOrNewerEqualPriority
	// Any preempts whatever the priority (reclaimWithinCohort only).
	Any
)

var policyNames = []string{"Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"}

func (p Policy) String() string { return policyNames[p] }

// ParsePolicy reads a Kueue preemption policy name ("" is Never).
func ParsePolicy(s string) (Policy, error) {
	if s == "" {
		return Never, nil
	}
	for i, n := range policyNames {
		if n == s {
			return Policy(i), nil
		}
	}
	return Never, fmt.Errorf("preemption policy %q is not one of %s", s, strings.Join(policyNames, ", "))
}

// NoLimit marks an unset borrowing or lending limit.
const NoLimit int64 = -1

// Quota is one resource's quota in one flavor of a ClusterQueue.
type Quota struct {
	Nominal int64
	// BorrowingLimit caps what the queue may borrow above Nominal from its
	// cohort; LendingLimit caps what of Nominal the cohort may use
	// (NoLimit: unbounded, that is all of it).
	BorrowingLimit, LendingLimit int64
}

// FlavorQuotas are a flavor's quotas, one per covered resource of the
// group, in the group's order.
type FlavorQuotas struct {
	Flavor    string
	Resources []Quota
}

// ResourceGroup is a set of resources whose quotas come from the same
// flavors, tried in order.
type ResourceGroup struct {
	Covered []string
	Flavors []FlavorQuotas
}

// Preemption is a ClusterQueue's preemption policy.
type Preemption struct {
	WithinClusterQueue  Policy
	ReclaimWithinCohort Policy
	BorrowWithinCohort  Policy
}

// ClusterQueue is a pool of quota workloads are admitted against.
type ClusterQueue struct {
	Name     string
	Cohort   string
	Strategy Strategy
	Groups   []ResourceGroup
	Preempt  Preemption
	// NotReclaimable keeps the cohort from reclaiming what this queue
	// borrowed (a Volcano Queue with reclaimable: false).
	NotReclaimable bool
	// Fungibility is the queue's flavorFungibility.
	Fungibility Fungibility
	// FairWeight is the queue's fair-sharing weight in thousandths (0:
	// the default weight 1; ZeroWeight: an explicit weight 0, an
	// infinite share).
	FairWeight int64
}

// Fungibility is how a queue searches its flavors (Kueue's
// flavorFungibility). The zero value is Kueue's default: take the first
// flavor where the workload fits, borrowing or not; where it would need
// preemption, try the next flavors and preempt only when none fits.
type Fungibility struct {
	// TryNextOnBorrow (whenCanBorrow: TryNextFlavor): a flavor where the
	// workload fits only by borrowing is taken only when no later flavor
	// fits without.
	TryNextOnBorrow bool
	// StopOnPreempt (whenCanPreempt: MayStopSearch): a flavor where
	// preemption would make room ends the search, and the workload
	// preempts there even if a later flavor has room.
	StopOnPreempt bool
}

// ZeroWeight is an explicit fair-sharing weight of 0.
const ZeroWeight int64 = -1

// weight is the queue's fair-sharing weight in thousandths.
func (q *ClusterQueue) weight() int64 {
	switch q.FairWeight {
	case 0:
		return 1000
	case ZeroWeight:
		return 0
	}
	return q.FairWeight
}

// FairStrategy is a fair-sharing preemption strategy: whether a workload
// of another queue may be preempted, given the preemptor queue's share
// with the new workload and the target queue's share before and after.
type FairStrategy uint8

const (
	// LessThanOrEqualToFinalShare (Kueue's rule S2-a): the preemptor's
	// new share is at most the target's share without the workload.
	LessThanOrEqualToFinalShare FairStrategy = iota
	// LessThanInitialShare (S2-b): the preemptor's new share is below
	// the target's share as it stands.
	LessThanInitialShare
)

var strategyNames = []string{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}

func (s FairStrategy) String() string { return strategyNames[s] }

// ParseFairStrategy reads a Kueue preemption strategy name.
func ParseFairStrategy(s string) (FairStrategy, error) {
	for i, n := range strategyNames {
		if n == s {
			return FairStrategy(i), nil
		}
	}
	return 0, fmt.Errorf("preemption strategy %q is not one of %s", s, strings.Join(strategyNames, ", "))
}

func (s FairStrategy) allows(preemptorNew, targetOld, targetNew int64) bool {
	if s == LessThanInitialShare {
		return preemptorNew < targetOld
	}
	return preemptorNew <= targetNew
}

// FairSharing turns on Kueue's fair sharing: heads are admitted lowest
// share first, and preemption across a cohort follows the strategies, in
// order (none given: both, as Kueue's default).
type FairSharing struct {
	Strategies []FairStrategy
}

// Flavor is a ResourceFlavor: the node labels an admitted workload's pods
// are steered to, and the taints they tolerate there. A workload is
// assigned the flavor only if its pods' node selector and required
// affinity match NodeLabels (on the keys its resource group's flavors
// label) and its pods tolerate NodeTaints (flavors.go).
type Flavor struct {
	Name       string
	NodeLabels map[string]string
	// Tolerations are added to an admitted workload's pods; they count
	// against the flavor's own NodeTaints as well, as in Kueue.
	Tolerations []Toleration
	// NodeTaints must be tolerated by a workload for it to be assigned
	// the flavor (NoSchedule and NoExecute; PreferNoSchedule is ignored).
	NodeTaints []cluster.Taint
}

// Toleration is a toleration a flavor gives its workloads.
type Toleration struct {
	Key, Operator, Value, Effect string
}

// LocalQueue is where workloads are submitted; it feeds one ClusterQueue.
type LocalQueue struct {
	Name         string
	ClusterQueue string
}

// Spec is an admission policy.
type Spec struct {
	Flavors       []Flavor
	ClusterQueues []ClusterQueue
	LocalQueues   []LocalQueue
	// Cohorts are the cohort trees' inner nodes; a cohort a queue or a
	// parent names without defining it has no quota of its own.
	Cohorts []Cohort
	// FairSharing, when set, replaces classic admission order and
	// cross-queue preemption by Kueue's fair sharing.
	FairSharing *FairSharing
	// WaitForPodsReady, when set, is Kueue's waitForPodsReady; the
	// controller only carries it: its caller keeps the time (Evict,
	// Requeue).
	WaitForPodsReady *WaitForPodsReady
	// Gates are the Kueue feature gates that change admission, off where
	// turned off (the zero value: Kueue v0.19.2's defaults).
	Gates Gates
}

// Gates turns off Kueue feature gates that are on by default in Kueue
// v0.19.2 and change which workload is admitted when (a Kueue
// Configuration's featureGates: NAME: false). With both off, admission
// is Kueue v0.17.0's.
type Gates struct {
	// NoEquivalenceHashing turns off SchedulingEquivalenceHashing (beta,
	// on by default since v0.18): when a BestEffortFIFO queue's head does
	// not fit (or would fit only by preemption with nothing to preempt),
	// only that workload is set aside, not with it every pending workload
	// of its queue Kueue's scheduling hash finds alike (Workload.Equiv).
	NoEquivalenceHashing bool
	// NoPreserveScanProgress turns off
	// FlavorFungibilityPreserveScanProgress (beta, on by default in
	// v0.19): a head that was nominated but skipped in a cycle (it no
	// longer fit after another's admission) starts its flavor search over
	// from the first flavor, instead of after the flavor its last search
	// stopped at.
	NoPreserveScanProgress bool
}

// WaitForPodsReady is Kueue's waitForPodsReady, times in milliseconds: an
// admitted workload whose pods are not all running within Timeout is
// evicted and requeued after a backoff of BackoffBase x 2^(n-1), at most
// BackoffMax (Kueue adds a random jitter; gpuplan does not), and
// deactivated after BackoffLimit requeues (-1: never). BlockAdmission
// admits nothing while an admitted workload is not ready.
type WaitForPodsReady struct {
	Timeout, BackoffBase, BackoffMax int64
	BackoffLimit                     int32
	BlockAdmission                   bool
	// RequeueAtCreation keeps a requeued workload's place by its creation
	// time (requeuingStrategy.timestamp: Creation); by default it queues
	// from its eviction.
	RequeueAtCreation bool
}

// Backoff is the delay before the n-th requeue (n from 1).
func (w *WaitForPodsReady) Backoff(n int32) int64 {
	d := w.BackoffBase
	for i := int32(1); i < n && d < w.BackoffMax; i++ {
		d *= 2
	}
	return min(d, w.BackoffMax)
}

// Request is an amount of one resource, for the whole workload.
type Request struct {
	Resource string
	Amount   int64
}

// Workload is a job as Kueue sees it: all its pods' requests together.
type Workload struct {
	ID       int32
	Queue    string // LocalQueue
	Priority int32
	Created  int64
	Requests []Request
	// Constraints are the workload's pods' node selector, required node
	// affinity and tolerations, checked against each flavor's nodeLabels
	// and nodeTaints (nil: none). Workloads with the same constraints
	// should share one pointer, not changed once submitted: Submit reuses
	// what it worked out for the last one.
	Constraints *cluster.Constraints
	// PodSets, when set, are the workload's PodSets one by one, in the
	// object's order (a PyTorchJob's Master and Workers, an MPIJob's
	// Launcher and Workers); Requests still counts them all. The
	// workload is admitted whole, each PodSet to its own flavor per
	// resource group it asks for (Decision.PodSetFlavors), in order, as
	// Kueue's assignFlavors does.
	PodSets []PodSet
	// Equiv is what Kueue's scheduling hash (SchedulingEquivalenceHashing)
	// sees of the pod templates beyond the workload's priority, summed
	// requests and the flavors its pods may go to: each PodSet's pod
	// count, per-pod requests, node selector, affinity and tolerations,
	// hashed by the caller. Workloads of one queue alike in all of these
	// are alike to Kueue: when one does not fit, the others are set aside
	// with it (0 and 0: nothing more tells them apart).
	Equiv uint64
}

// PodSet is one PodSet of a workload of several (Workload.PodSets).
type PodSet struct {
	Requests    []Request
	Constraints *cluster.Constraints
}

// Decision is one change a cycle made.
type Decision struct {
	ID int32
	// Preempted: the workload lost its admission to By and is pending
	// again; otherwise it was admitted to Flavors (one per resource group
	// it asks for, indices into Spec.Flavors).
	Preempted bool
	By        int32
	// Reclaim says the preemption took back quota another queue of the
	// cohort had borrowed.
	Reclaim bool
	Flavors []int
	// PodSetFlavors, for a workload of several PodSets, are each
	// PodSet's flavors (one per resource group it asks for, indices into
	// Spec.Flavors); Flavors are then all of them.
	PodSetFlavors [][]int
	// Waiting: the workload was tried and not admitted, for Reason (given
	// when the reason changed).
	Waiting bool
	Reason  string
}

// Controller admits workloads against the quotas. It is cut as Kueue's
// scheduler is: the snapshot of quota and usage (snapshot.go, tree.go), the
// queue manager of pending workloads (queue.go), the flavor assigner
// (flavors.go) and the preemptor (preempt.go, fair.go); the controller runs
// the cycle over them and keeps the decisions' order.
type Controller struct {
	spec      Spec
	snap      snapshot
	queues    queueManager
	assigner  flavorAssigner
	preemptor preemptor
	// seq numbers admissions (a workload's admission order).
	seq int64
	// now is the time of the next cycle's admissions (ms, SetClock;
	// clocked: it was called).
	now     int64
	clocked bool
	// evicted wait for the end of the cycle that evicted them.
	evicted []*wl
	// epoch counts, per cohort tree (cqState.cohort; a queue outside any
	// cohort: len(rootNode)+its index), the quota releases that move its
	// inadmissible workloads back to their queues (bucket.aside).
	epoch []uint64
	// again: the last Cycle issued preemptions, and its preemptors wait
	// for the next one (Again); againRun counts such cycles in a row at
	// one instant.
	again    bool
	againRun int
	// intSlab is where workloads' flavor assignments and decisions'
	// flavors are cut from, a block at a time.
	intSlab []int
	// noShortcuts makes every cycle try every head afresh (tests hold
	// the shortcuts to the decisions they would take without).
	noShortcuts bool
	// pairwise picks the fair-sharing head as the best of all pairwise
	// instead of by Kueue's tournament (tests: the behaviour before).
	pairwise bool
	// maxAlone is how many workloads of a queue a Cycle sets aside one
	// at a time (defaultMaxAlone; 0: a failing workload sets its whole
	// shape aside at once, the behaviour before, for tests).
	maxAlone int
	cycleScratch
	// touched and usage are the usage view (usage.go); walked counts the
	// queues the cycles' head searches looked at (Stats).
	touched touchSet
	usage   usageState
	walked  uint64
}

// Stats counts what the controller's cycles did, for tests and
// benchmarks of their cost.
type Stats struct {
	// Cycles counts the calls of Cycle; QueuesWalked the ClusterQueues
	// their searches for heads looked at (a search looks at each queue
	// with pending workloads, once; a cycle searches again after each
	// round of heads, until none is left).
	Cycles, QueuesWalked uint64
}

// Stats says what the controller's cycles did so far.
func (c *Controller) Stats() Stats { return Stats{Cycles: c.cycles, QueuesWalked: c.walked} }

// cycleScratch is Cycle's scratch, kept between cycles so that a cycle
// allocates nothing unless it decides something.
type cycleScratch struct {
	// cycles numbers the cycles (bucket.skipped), rounds their rounds
	// (Kueue's scheduling cycles: wl.scanRound); reasonBuf is the reason
	// being written.
	cycles     uint64
	rounds     uint64
	cycBlocked []bool
	cycHeads   []head
	cycOut     []Decision
	headAssign []int
	// headTargets are the round's nominated preemption targets; held
	// the preemptors holding quota until the round ends.
	headTargets []*wl
	held        []*wl
	// reserved is the quota the round's heads reserved (reserveQuota).
	reserved  []reservedCell
	shareBuf  []int64
	borrowBuf []bool
	tourBuf   []int
	assignBuf []int
	scanBuf   []int
	// probing: nothingFits is nominating the workloads left as a later
	// cycle would; probed holds what their flavor searches were before
	// (recordScan), put back unless nothing fits (then those were the
	// cycles Kueue would run).
	probing   bool
	probed    []scanState
	reasonBuf []byte
}

// New checks a spec and returns its controller.
func New(spec Spec) (*Controller, error) {
	if f := spec.FairSharing; f != nil && len(f.Strategies) == 0 {
		spec.FairSharing = &FairSharing{Strategies: []FairStrategy{LessThanOrEqualToFinalShare, LessThanInitialShare}}
	}
	c := &Controller{spec: spec, maxAlone: defaultMaxAlone}
	if err := c.snap.init(&c.spec); err != nil {
		return nil, err
	}
	for _, q := range spec.ClusterQueues {
		if q.FairWeight < ZeroWeight {
			return nil, fmt.Errorf("ClusterQueue %s: negative fair-sharing weight", q.Name)
		}
	}
	if err := c.queues.init(spec.LocalQueues, spec.ClusterQueues); err != nil {
		return nil, err
	}
	c.initUsage()
	c.epoch = make([]uint64, len(c.snap.rootNode)+len(c.snap.cqs))
	c.assigner = flavorAssigner{snap: &c.snap, oracle: &c.preemptor}
	c.preemptor = preemptor{snap: &c.snap, assigner: &c.assigner, fair: c.spec.FairSharing}
	return c, nil
}

// Spec returns the policy the controller enforces.
func (c *Controller) Spec() *Spec { return &c.spec }

// ErrNoQueue is returned by Submit for a workload whose LocalQueue does
// not exist.
var ErrNoQueue = errors.New("no such LocalQueue")

// Submit adds a pending workload (or one preempted before, re-added by
// the caller: it keeps its creation time).
func (c *Controller) Submit(w Workload) error {
	q := &c.queues
	qi := q.lastCQ
	if qi < 0 || w.Queue != q.lastLQ {
		var ok bool
		if qi, ok = q.lqIndex(w.Queue); !ok {
			return fmt.Errorf("%w %q", ErrNoQueue, w.Queue)
		}
		q.lastLQ, q.lastCQ = w.Queue, qi
	}
	if q.wls.get(w.ID) != nil {
		return fmt.Errorf("workload %d submitted twice", w.ID)
	}
	x := q.newWorkload(w, qi, len(c.snap.resName))
	// The requests are summed into req: the caller may reuse its slice.
	x.Requests = nil
	st := c.snap.cqs[qi]
	if len(w.PodSets) > 0 {
		// Each PodSet is assigned its own flavors (its class and
		// requests); the workload's class says which flavors would take
		// all of them (preemption makes room on one flavor per group).
		x.class = c.assigner.classOfSets(st, w.PodSets)
		x.sets = make([]podSet, len(w.PodSets))
		for i := range w.PodSets {
			ps := &w.PodSets[i]
			x.sets[i] = podSet{req: make([]int64, len(c.snap.resName)), class: c.assigner.classOf(st, ps.Constraints)}
			for _, r := range ps.Requests {
				if ri, ok := c.snap.resIndex(r.Resource); ok && r.Amount > 0 && st.groupOf[ri] >= 0 {
					x.sets[i].req[ri] += r.Amount
				}
			}
		}
		x.PodSets = nil
	} else {
		x.class = c.assigner.classOf(st, w.Constraints)
	}
	var missing []string
	for _, r := range w.Requests {
		if r.Amount <= 0 {
			continue
		}
		ri, ok := c.snap.resIndex(r.Resource)
		if !ok || st.groupOf[ri] < 0 {
			missing = append(missing, r.Resource)
			continue
		}
		x.req[ri] += r.Amount
		if IsGPU(r.Resource) {
			x.gpus += r.Amount
		}
	}
	if len(missing) > 0 {
		x.reason = fmt.Sprintf("ClusterQueue %s: resource %s unavailable", st.Name, strings.Join(missing, ", "))
	}
	q.wls.put(w.ID, x)
	q.insert(x)
	return nil
}

// Version changes whenever what Standings reports may have changed (a
// workload admitted, released, submitted, requeued or withdrawn): a
// caller may keep the standings it read while the version stays the
// same.
func (c *Controller) Version() uint64 { return c.snap.ver + c.queues.pver }

// UsageVersion changes whenever a workload is admitted or released: while
// it stays the same, standings read before differ from today's only in
// their Demand (RefreshDemand).
func (c *Controller) UsageVersion() uint64 { return c.snap.ver }

// RefreshDemand brings the Demand of standings read at the current
// UsageVersion up to date.
func (c *Controller) RefreshDemand(s []Standing) {
	for qi, pq := range c.queues.pending {
		s[qi].Demand = pq.gpus + s[qi].Used
	}
}

// Finish forgets a workload that completed, failed or was deleted,
// releasing its quota if it was admitted.
func (c *Controller) Finish(id int32) {
	x := c.queues.wls.get(id)
	if x == nil {
		return
	}
	if x.admitted {
		c.snap.release(x)
		c.snap.cqs[x.cq].gen++
	} else if x.pending {
		c.queues.withdraw(x)
	}
	// Kueue moves the cohort's inadmissible workloads back to their
	// queues when one finishes or is deleted.
	c.released(x.cq)
	c.queues.forget(x)
}

// Evict takes back an admitted workload's quota; it is then neither
// admitted nor pending until Requeue (waitForPodsReady's eviction).
func (c *Controller) Evict(id int32) {
	if x := c.queues.wls.get(id); x != nil && x.admitted {
		c.snap.release(x)
		c.snap.cqs[x.cq].gen++
		c.released(x.cq)
		x.reason = "Evicted: the workload did not reach PodsReady within waitForPodsReady's timeout"
	}
}

// Withdraw takes a pending workload out of the queue (not admitted, not
// pending) until Requeue: a preempted workload whose pods are still
// stopping.
func (c *Controller) Withdraw(id int32) {
	x := c.queues.wls.get(id)
	if x == nil || x.admitted {
		return
	}
	if i := slices.Index(c.evicted, x); i >= 0 {
		c.evicted = slices.Delete(c.evicted, i, i+1)
		return
	}
	if x.pending {
		c.queues.withdraw(x)
	}
}

// Requeue makes an evicted workload pending again, queued as created at
// created.
func (c *Controller) Requeue(id int32, created int64) {
	x := c.queues.wls.get(id)
	if x == nil || x.admitted || x.pending {
		return
	}
	x.Created = created
	c.queues.insert(x)
	c.released(x.cq)
}

// released moves the inadmissible workloads of queue qi's cohort tree
// back to their queues: quota was released there.
func (c *Controller) released(qi int) { c.epoch[c.treeOf(qi)]++ }

// treeOf is queue qi's index in epoch.
func (c *Controller) treeOf(qi int) int {
	if k := c.snap.cqs[qi].cohort; k >= 0 {
		return k
	}
	return len(c.snap.rootNode) + qi
}

// Again says whether the last Cycle ended on preemptions it issued: the
// caller applies its decisions (the victims stop) and runs another cycle
// at the same instant, in which the preemptors are tried again, as
// Kueue's scheduler tries a preemptor in the cycle after its victims'
// quota came back.
//
// Workloads may preempt each other in turn for ever (a victim that does
// not borrow is tried before its borrowing preemptor and takes its quota
// back): Kueue's cycles then never settle. Again stops after maxAgain
// such cycles in a row at one instant; the next instant goes on.
func (c *Controller) Again() bool { return c.again && c.againRun < maxAgain }

// maxAgain is how many cycles in a row at one instant may issue
// preemptions.
const maxAgain = 64

// Admitted says whether a workload holds quota.
func (c *Controller) Admitted(id int32) bool {
	x := c.queues.wls.get(id)
	return x != nil && x.admitted
}

// Reason is why a pending workload was not admitted at the last cycle
// (or, if it was never tried, why the first workload of its shape was not).
func (c *Controller) Reason(id int32) string {
	if x := c.queues.wls.get(id); x != nil {
		if x.reason == "" && x.pending && x.bucket != nil {
			return x.bucket.reason
		}
		return x.reason
	}
	return ""
}

// ClusterQueueOf names the ClusterQueue a LocalQueue feeds ("" if none).
func (c *Controller) ClusterQueueOf(localQueue string) string {
	if qi, ok := c.queues.lq[localQueue]; ok {
		return c.snap.cqs[qi].Name
	}
	return ""
}

// ints cuts n ints from the controller's slab (they are never reused).
func (c *Controller) ints(n int) []int {
	if len(c.intSlab) < n {
		c.intSlab = make([]int, max(n, 1024))
	}
	out := c.intSlab[:n:n]
	c.intSlab = c.intSlab[n:]
	return out
}

// admit admits x with the flavors of assign (copied: it may be scratch).
func (c *Controller) admit(x *wl, assign []int) Decision {
	if cap(x.assign) < len(assign) {
		x.assign = c.ints(len(assign))
	}
	x.assign = x.assign[:len(assign)]
	copy(x.assign, assign)
	c.seq++
	x.seq = c.seq
	x.reservedSec = c.now / 1000
	if !c.clocked {
		x.reservedSec = c.seq // no clock: each admission its own moment
	}
	x.reason = ""
	st := c.snap.cqs[x.cq]
	c.queues.dequeue(x)
	c.snap.readmit(x)
	d := Decision{ID: x.ID}
	if groups := len(st.Groups); len(assign) > groups {
		// Each PodSet's flavors, and the workload's: the flavors of
		// any PodSet, group by group, the first PodSet's first.
		d.PodSetFlavors = make([][]int, len(x.sets))
		all := c.ints(len(assign))[:0]
		for s := range x.sets {
			d.PodSetFlavors[s] = c.ints(groups)[:0]
			for g, f := range assign[s*groups : (s+1)*groups] {
				if f >= 0 {
					fi := st.flavors[g][f]
					d.PodSetFlavors[s] = append(d.PodSetFlavors[s], fi)
					if !slices.Contains(all, fi) {
						all = append(all, fi)
					}
				}
			}
		}
		if len(all) > 0 {
			d.Flavors = all
		}
		return d
	}
	n := 0
	for _, f := range assign {
		if f >= 0 {
			n++
		}
	}
	if n > 0 {
		d.Flavors = c.ints(n)[:0]
		for g, f := range assign {
			if f >= 0 {
				d.Flavors = append(d.Flavors, st.flavors[g][f])
			}
		}
	}
	return d
}

type head struct {
	x *wl
	// level is how far up its cohort tree the head borrows where it fits
	// as found (0: not at all; Kueue's Assignment.Borrowing, the height
	// of the lowest subtree that holds it).
	level int
	// The head's nomination, against the state the round started from
	// (Kueue's nominate): it fits with the flavors at
	// c.headAssign[at:] (fits); or it would fit there with the
	// workloads at c.headTargets[tAt:tAt+tN] preempted (tN > 0); or it
	// does not fit (known: it failed at this state before; unavailable:
	// it asks for a resource its queue does not cover).
	fits, known, unavailable bool
	// sameShape: another workload of its shape failed at this state
	// (Controller.nominate); its failure is the shape's. partial: its
	// flavor search went on from where its last one stopped (wl.scan),
	// so its failure is its own.
	sameShape, partial bool
	// reserve: it does not fit and has nothing to preempt, but Kueue's
	// flavor assigner counts its flavors at c.headAssign[at:] as
	// preemption all the same, and its queue cannot always reclaim: Kueue
	// reserves quota for it for the rest of the cycle (resourcesToReserve).
	reserve     bool
	ver         uint64
	at, tAt, tN int
	// an is the length of its assignment at c.headAssign[at:].
	an int
	// before is its reason before the nomination.
	before string
	// path and shares: the queue's tree path and the shares along it with
	// the workload admitted (fair sharing only).
	path    []int
	shares  []int64
	borrows []bool
}

// SetClock sets the time (ms) the next cycles' admissions are stamped
// with. Kueue orders preemption victims of one priority by when they
// reserved quota, newest first, as its conditions stamp it: in whole
// seconds; reservations in the same second fall back to the Workload's UID
// (lowest first), for which gpuplan uses the workload's ID.
// Without a clock, each admission counts as a moment of its own.
func (c *Controller) SetClock(ms int64) {
	if ms != c.now {
		c.againRun = 0
	}
	c.now, c.clocked = ms, true
}

// Cycle runs Kueue's scheduling cycles at one instant and returns the
// decisions in order (in the controller's scratch: valid until the next
// Cycle). Each round is one of Kueue's cycles: the head of every queue
// (one a queue) is nominated against the state the round starts from
// (flavors, or the workloads whose preemption would make room), the
// heads are ordered, then admitted in turn while their nominated flavors
// still fit; a head that no longer fits is tried again in the next
// round. A head that needs preemption evicts its targets and holds its
// quota for the rest of the round; the cycle then ends (Again): the
// caller stops the victims, and the preemptor is tried in the next
// cycle, against its victims back in their queues. A BestEffortFIFO
// head that does not fit sets its shape aside until quota is released in
// its cohort tree; a StrictFIFO one blocks its queue for the round.
// Rounds go on while one changes something.
func (c *Controller) Cycle() []Decision {
	out := c.cycOut[:0]
	c.cycles++
	if !c.again {
		c.againRun = 0
	}
	c.again = false
	nq := len(c.snap.cqs)
	blocked := slices.Grow(c.cycBlocked[:0], nq)[:nq]
	c.cycBlocked = blocked
	fair := c.spec.FairSharing != nil
	// blockAdmission: one admission, then none until its pods are ready
	// (the caller holds the next cycle back).
	block := c.spec.WaitForPodsReady != nil && c.spec.WaitForPodsReady.BlockAdmission
	stop := false
	for !stop {
		c.rounds++
		clear(blocked)
		heads := c.heads(blocked)
		if len(heads) == 0 {
			break
		}
		if !fair {
			sortHeads(heads)
		}

		progress, preempted, admitted := false, false, false
		held := c.held[:0]
		sharesAt := uint64(0)
		for i := range heads {
			if fair {
				if i == 0 || c.snap.ver != sharesAt {
					c.refreshShares(heads[i:])
					sharesAt = c.snap.ver
				}
				// Kueue's fair-sharing iterator takes a queue (any:
				// its map's order) and runs the tournament of its
				// cohort tree: the winner is the best head of that
				// tree, heads of other trees are not compared with it.
				tree := c.treeOf(heads[i].x.cq)
				idx := c.tourBuf[:0]
				for k := i; k < len(heads); k++ {
					if c.treeOf(heads[k].x.cq) == tree {
						idx = append(idx, k)
					}
				}
				c.tourBuf = idx
				if c.pairwise { // the pairwise pick this replaced (tests)
					best := i
					for _, k := range idx {
						if fairLess(&heads[k], &heads[best]) {
							best = k
						}
					}
					heads[i], heads[best] = heads[best], heads[i]
				} else {
					best := tournament(heads, idx, 0)
					heads[i], heads[best] = heads[best], heads[i]
				}
			}
			h := &heads[i]
			x := h.x
			st := c.snap.cqs[x.cq]
			switch {
			case h.fits:
				as := c.headAssign[h.at : h.at+h.an]
				if !c.fitsAll(x, as) {
					// Kueue: "Workload no longer fits after processing
					// another workload"; it stays the head. Its next
					// search starts past this flavor: the next cycle
					// may differ.
					progress = progress || x.scanPending()
					continue
				}
				d := c.admit(x, as)
				x.scanOn = false
				if h.before == "" {
					d.Reason = x.bucket.reason
				}
				out = append(out, d)
				progress, admitted = true, true
				stop = block
			case h.tN > 0:
				targets := c.headTargets[h.tAt : h.tAt+h.tN]
				overlap := false
				for _, t := range targets {
					overlap = overlap || !t.admitted
				}
				if overlap {
					// Another preemptor took one of them (Kueue
					// searches again from the first flavor).
					x.scanOn = false
					continue
				}
				ev := c.snap.simulateEviction(targets)
				as := c.headAssign[h.at : h.at+h.an]
				if !c.fitsAll(x, as) {
					ev.undo()
					progress = progress || x.scanPending()
					continue
				}
				c.preempted(x, targets, &out)
				x.scanOn = false // Kueue's markPreemptionOutcome
				for _, t := range targets {
					c.snap.cqs[t.cq].gen++
				}
				if st.Strategy == BestEffortFIFO {
					c.queues.pending[x.cq].sticky = x
				}
				if cap(x.assign) < len(as) {
					x.assign = c.ints(len(as))
				}
				x.assign = x.assign[:len(as)]
				copy(x.assign, as)
				c.snap.readmit(x)
				held = append(held, x)
				x.reason = h.before
				progress, preempted = true, true
			default:
				if h.reserve {
					// (Undone at the round's end: the version stays,
					// but the shares are worked out again.)
					c.reserveQuota(x, c.headAssign[h.at:h.at+h.an], h.level)
					sharesAt = c.snap.ver - 1
				}
				switch {
				case h.sameShape:
					x.reason = h.before // its shape's reason stands for it
				case h.known:
					x.bucket.reason = x.reason
				case !h.unavailable:
					if x.reason != h.before {
						out = append(out, Decision{ID: x.ID, Waiting: true, Reason: x.reason})
					}
					if !h.partial {
						x.failedAt = h.ver
						x.bucket.failed(x, h.ver)
					}
				}
				if st.Strategy == BestEffortFIFO && x.scanPending() {
					// Flavors are left to search: Kueue requeues it
					// to the heap (PendingFlavors), not aside.
					progress = true
				} else if c.setAside(st, x, blocked) {
					progress = true
				}
			}
			if stop {
				break
			}
		}
		for _, x := range held {
			c.snap.release(x)
		}
		c.unreserve()
		c.held = held[:0]
		if preempted {
			c.again = true
			c.againRun++
			break
		}
		if !progress {
			break
		}
		if !admitted && c.nothingFits(blocked, &out) {
			// Every workload left would fail as things stand: Kueue's
			// cycles would pop and set aside each in turn, and nothing
			// would change; set them all aside at once.
			clear(c.probed)
			c.probed = c.probed[:0]
			c.setAllAside(blocked)
			break
		}
		c.unprobe() // the next round nominates them again
	}
	if !c.again {
		// (With another cycle at this instant to come, a workload left
		// may still be admitted without having waited.)
		c.reasonFresh(&out)
	}
	for _, x := range c.evicted {
		c.queues.insert(x)
		c.released(x.cq)
	}
	c.evicted = c.evicted[:0]
	c.cycOut = out
	if len(out) == 0 {
		return nil
	}
	return out
}

// refreshShares works out the heads' shares along their paths with each
// admitted as nominated (Kueue's fair-sharing iterator computes them
// again before each pick, from the usage as it stands).
func (c *Controller) refreshShares(heads []head) {
	c.shareBuf = c.shareBuf[:0]
	c.borrowBuf = c.borrowBuf[:0]
	for i := range heads {
		h := &heads[i]
		var as []int
		if h.fits || h.tN > 0 || h.reserve {
			as = c.headAssign[h.at : h.at+h.an]
		}
		h.path, h.shares, h.borrows = c.headShares(h.x, as)
	}
}

// preempted records the eviction of x's targets, which the round has
// released: they go back to their queues at the end of the cycle.
func (c *Controller) preempted(x *wl, targets []*wl, out *[]Decision) {
	cross := "reclamation within the cohort"
	if c.spec.FairSharing != nil {
		cross = "fair sharing within the cohort"
	}
	for _, t := range targets {
		reclaim := t.cq != x.cq
		why := "prioritization in the ClusterQueue"
		if reclaim {
			why = cross
		}
		t.reason = "Preempted to accommodate a workload (UID: " + strconv.Itoa(int(x.ID)) + ") due to " + why
		c.evicted = append(c.evicted, t)
		*out = append(*out, Decision{ID: t.ID, Preempted: true, By: x.ID, Reclaim: reclaim})
	}
}

// fitsAll says whether x fits, borrowing where it may, with the flavors
// of assign as the usage stands (Kueue's fits after nomination).
func (c *Controller) fitsAll(x *wl, assign []int) bool {
	return c.snap.fitsAssign(x, assign, true)
}

// heads are the first pending workload of every queue not blocked this
// round, each nominated as things stand (in the controller's scratch:
// valid until the next call). It walks only the queues with pending
// workloads (queueManager.busy), in spec order: a cycle's cost does not
// grow with the queues that have nothing to admit.
func (c *Controller) heads(blocked []bool) []head {
	clear(c.cycHeads)
	heads := c.cycHeads[:0]
	c.headAssign = c.headAssign[:0]
	c.headTargets = c.headTargets[:0]
	for w, word := range c.queues.busy {
		for ; word != 0; word &= word - 1 {
			qi := w<<6 | bits.TrailingZeros64(word)
			c.walked++
			if blocked[qi] {
				continue
			}
			if h, ok := c.headOf(qi); ok {
				heads = append(heads, h)
			}
		}
	}
	c.cycHeads = heads
	return heads
}

// headOf is queue qi's head and its nomination (ok false: every bucket
// of it is set aside).
func (c *Controller) headOf(qi int) (head, bool) {
	first := c.queues.headAt(qi, c.cycles, c.epoch[c.treeOf(qi)]+1)
	if first == nil {
		return head{}, false
	}
	return c.nominate(qi, first), true
}

// nominate is workload first of queue qi nominated as its head (Kueue's
// nominate), against the state as it stands.
func (c *Controller) nominate(qi int, first *wl) head {
	st := c.snap.cqs[qi]
	h := head{x: first, ver: c.snap.ver, at: len(c.headAssign), before: first.reason}
	if strings.Contains(first.reason, ": resource ") && strings.HasSuffix(first.reason, " unavailable") {
		h.unavailable = true
		return h
	}
	// sameShape: a workload of its bucket (its shape) failed at this
	// state; it would fail the same way. Kueue pops and tries each not
	// set aside with it (of another Equiv, or every one with
	// SchedulingEquivalenceHashing off) in a cycle of its own, and so
	// does the cycle here; only its reason stays the shape's. One whose
	// flavor search goes on from where its last stopped (partial) is
	// tried for itself.
	c.keepScan(first)
	h.partial = first.scanPending()
	h.sameShape = !h.partial && first.failedAt != c.snap.ver && first.bucket.failedBefore(first, c.snap.ver)
	if h.sameShape {
		// (Tried afresh without shortcuts: its reason stays.)
		defer func(r string) { first.reason = r }(first.reason)
	}
	if !h.partial && (first.failedAt == c.snap.ver || h.sameShape) && !c.noShortcuts {
		// Tried since the last change: it would fail again, for the
		// same reason.
		h.known = true
		c.nominateReserve(&h, first)
		return h
	}
	h.an = first.alen(len(st.Groups))
	c.headAssign = slices.Grow(c.headAssign, h.an)[:h.at+h.an]
	as := c.headAssign[h.at:]
	r := c.assigner.assignment(first, true, as, true)
	// Kept once the nomination is done (its preemption search goes on
	// from where this one started).
	c.scanBuf = append(c.scanBuf[:0], c.assigner.tried...)
	defer c.recordScan(first, st)
	if h.fits = r.outcome == fit; h.fits {
		if r.borrow {
			h.level = max(h.level, c.preemptor.assignLevel(first, as))
		}
		return h
	}
	rb := append(append(append(c.reasonBuf[:0], "ClusterQueue "...), st.Name...), ": "...)
	rb = append(rb, c.assigner.why...)
	c.reasonBuf = rb
	if string(rb) != first.reason {
		first.reason = string(rb)
	}
	first.bucket.reason = first.reason
	targets, pas := c.preemptor.preempt(first, r.failed)
	if targets != nil {
		// How far up it borrows with its targets gone (Kueue's flavor
		// assigner takes the preemption oracle's borrowAfterPreemptions
		// into Assignment.Borrowing, which orders the heads).
		h.level = max(h.level, c.preemptor.assignLevel(first, pas))
		// Nominated only: the round starts from the state as it was.
		for _, t := range targets {
			c.snap.readmit(t)
		}
		copy(as, pas)
		h.tAt, h.tN = len(c.headTargets), len(targets)
		c.headTargets = append(c.headTargets, targets...)
		return h
	}
	c.headAssign = c.headAssign[:h.at]
	c.nominateReserve(&h, first)
	return h
}

// keepScan drops x's kept flavor search where Kueue would
// (lastAssignmentOutdated): with FlavorFungibilityPreserveScanProgress
// it stands while x is tried again in the next scheduling cycle, or
// later while no admitted workload has left its queue since; without
// the gate it is never kept.
func (c *Controller) keepScan(x *wl) {
	if !x.scanOn {
		return
	}
	if c.spec.Gates.NoPreserveScanProgress || (c.rounds-x.scanRound > 1 && c.snap.cqs[x.cq].gen != x.scanGen) {
		x.scanOn = false
	}
}

// recordScan keeps where x's flavor search just stopped (Kueue's
// recordAssignment: the entry's LastAssignment), for its next
// nomination should this one come to nothing.
func (c *Controller) recordScan(x *wl, st *cqState) {
	if c.spec.Gates.NoPreserveScanProgress {
		return
	}
	if c.probing && !slices.ContainsFunc(c.probed, func(p scanState) bool { return p.x == x }) {
		c.probed = append(c.probed, scanState{x: x, on: x.scanOn, round: x.scanRound, gen: x.scanGen, scan: append([]int(nil), x.scan...)})
	}
	if !slices.ContainsFunc(c.scanBuf, func(f int) bool { return f >= 0 }) {
		// Nothing past the first flavor: the next search starts over
		// (kept or not, the same).
		x.scanOn = false
		return
	}
	x.scan = append(x.scan[:0], c.scanBuf...)
	x.scanOn, x.scanRound, x.scanGen = true, c.rounds, st.gen
}

// scanState is a workload's kept flavor search, as nothingFits found it.
type scanState struct {
	x          *wl
	on         bool
	round, gen uint64
	scan       []int
}

// unprobe puts back the flavor searches nothingFits's nominations
// changed.
func (c *Controller) unprobe() {
	for _, p := range c.probed {
		p.x.scanOn, p.x.scanRound, p.x.scanGen = p.on, p.round, p.gen
		p.x.scan = append(p.x.scan[:0], p.scan...)
	}
	clear(c.probed)
	c.probed = c.probed[:0]
}

// scanPending says whether x's next flavor search starts past some
// flavor (Kueue's PendingFlavors).
func (x *wl) scanPending() bool {
	if !x.scanOn {
		return false
	}
	for _, f := range x.scan {
		if f >= 0 {
			return true
		}
	}
	return false
}

// nominateReserve marks a head that does not fit and has nothing to
// preempt as one that reserves quota, with its flavors and borrowing
// height, where Kueue's would: its queue cannot always reclaim
// (reclaimWithinCohort other than Any), it is in a cohort (alone, no
// other queue could take what it reserves), and the flavor assigner
// counts preemption on a flavor of every group it asks for.
func (c *Controller) nominateReserve(h *head, x *wl) {
	st := c.snap.cqs[x.cq]
	if st.cohort < 0 || st.Preempt.ReclaimWithinCohort == Any {
		return
	}
	h.at, h.an = len(c.headAssign), len(st.Groups)
	c.headAssign = slices.Grow(c.headAssign, len(st.Groups))[:h.at+len(st.Groups)]
	as := c.headAssign[h.at:]
	if x.resVer != c.snap.ver || x.resVer == 0 {
		// Worked out once per state: a head tried again and again
		// while nothing changes costs nothing more.
		level, ok := c.preemptor.reserveAssignment(x, as)
		x.resVer, x.resLevel = c.snap.ver, -1
		if ok {
			if cap(x.resAssign) < len(as) {
				x.resAssign = c.ints(len(as))
			}
			x.resAssign = append(x.resAssign[:0], as...)
			x.resLevel = level
		}
	}
	if x.resLevel < 0 {
		c.headAssign = c.headAssign[:h.at]
		return
	}
	copy(as, x.resAssign)
	h.reserve, h.level = true, x.resLevel
}

// reserveQuota adds to x's queue's usage, for the rest of the round, the
// quota Kueue reserves for a head that needs preemption and has no
// targets (quotaResourcesToReserve): where it borrows, its requests up to
// its borrowing limit; otherwise up to its nominal quota, as usage stands.
func (c *Controller) reserveQuota(x *wl, assign []int, level int) {
	st := c.snap.cqs[x.cq]
	groups := len(st.Groups)
	for i, f := range assign {
		if f < 0 {
			continue
		}
		g := i % groups
		for ri, a := range x.reqAt(assign, groups, i) {
			if a == 0 || st.groupOf[ri] != g {
				continue
			}
			r := st.posOf[ri]
			q, u := st.quota[g][f][r], st.usage[g][f][r]
			amt := max(0, min(a, q.Nominal-u))
			if level > 0 {
				amt = a
				if q.BorrowingLimit != NoLimit {
					amt = max(0, min(a, q.Nominal+q.BorrowingLimit-u))
				}
			}
			if amt == 0 {
				continue
			}
			c.addReserved(reservedCell{qi: x.cq, g: g, f: f, r: r, amt: amt})
		}
	}
}

// reservedCell is quota a head reserved in a round.
type reservedCell struct {
	qi, g, f, r int
	amt         int64
}

func (c *Controller) addReserved(rc reservedCell) {
	c.chargeCell(rc, rc.amt)
	c.reserved = append(c.reserved, rc)
}

// chargeCell adds d to a queue's usage cell and up its cohort tree.
func (c *Controller) chargeCell(rc reservedCell, d int64) {
	st := c.snap.cqs[rc.qi]
	st.usage[rc.g][rc.f][rc.r] += d
	c.snap.addUsage(st.node, st.keys[rc.g][rc.f][rc.r], d)
	c.snap.touch.mark(rc.qi)
}

// unreserve gives back what the round's heads reserved.
func (c *Controller) unreserve() {
	for _, rc := range c.reserved {
		c.chargeCell(rc, -rc.amt)
	}
	c.reserved = c.reserved[:0]
}

// sortHeads puts the heads in the order they are tried (Kueue's classical
// iterator): those that do not borrow first, then those that borrow from
// nearer up their cohort tree (Kueue compares Assignment.Borrows(), a
// height); then in queue order.
func sortHeads(heads []head) {
	slices.SortStableFunc(heads, func(a, b head) int {
		switch {
		case a.level != b.level:
			return cmp.Compare(a.level, b.level)
		case less(a.x, b.x):
			return -1
		case less(b.x, a.x):
			return 1
		}
		return 0
	})
}

// tournament is the head Kueue's fair-sharing iterator picks among
// heads[idx] (one cohort tree; idx is reordered): runTournament
// (pkg/scheduler/fair_sharing_iterator.go) plays it level by level, each
// Cohort comparing only the winners of its children (a child Cohort's
// winner, or a ClusterQueue's head) by their sides' shares at that Cohort
// (entryComparer.less). A winner is thus never compared with a head its
// own subtree already beat: picking the best of all heads pairwise at
// their common ancestor may choose a head that lost below (r103: cq3's
// borrowing head, beaten in its Cohort by cq0's reserving one, beat cq1's
// at the root where cq0's would not). d is the depth of the heads'
// common Cohort's children in their paths.
func tournament(heads []head, idx []int, d int) int {
	if len(idx) == 1 {
		return idx[0]
	}
	// Group the heads by their node at depth d, in order of first
	// appearance, and play each group's tournament below.
	best := -1
	for len(idx) > 0 {
		node := heads[idx[0]].path[d]
		n := 1
		for k := 1; k < len(idx); k++ {
			if heads[idx[k]].path[d] == node {
				idx[n], idx[k] = idx[k], idx[n]
				n++
			}
		}
		w := idx[0]
		if n > 1 {
			w = tournament(heads, idx[:n], d+1)
		}
		if best < 0 || fairLessAt(&heads[w], &heads[best], d) {
			best = w
		}
		idx = idx[n:]
	}
	return best
}

// fairLessAt orders two heads by their sides at depth d of their paths
// (the children of the Cohort comparing them): one that does not borrow
// on what its head asks for first, then the lower share, then queue
// order (Kueue's entryComparer.less: PrioritySortingWithinCohort, then
// the queue-order timestamp).
func fairLessAt(a, b *head, d int) bool {
	if a.borrows[d] != b.borrows[d] {
		return !a.borrows[d]
	}
	if a.shares[d] != b.shares[d] {
		return a.shares[d] < b.shares[d]
	}
	return less(a.x, b.x)
}

// fairLess orders two heads under fair sharing (Kueue's fair-sharing
// iterator): by the shares of their sides of their lowest common
// ancestor, then in queue order.
func fairLess(a, b *head) bool {
	if fairBefore(a, b) {
		return true
	}
	if fairBefore(b, a) {
		return false
	}
	return less(a.x, b.x)
}

// setAside takes x's shape out of the heads: a BestEffortFIFO queue's
// until quota is released in its cohort tree (true: the queue may have
// another head), a StrictFIFO queue's whole queue for the round.
func (c *Controller) setAside(st *cqState, x *wl, blocked []bool) bool {
	if st.Strategy == StrictFIFO {
		blocked[x.cq] = true
		return false
	}
	// Kueue sets aside the workload it popped
	// (ClusterQueue.requeueIfNotPresent in pkg/cache/queue) and, with
	// SchedulingEquivalenceHashing, every pending workload of its queue
	// with the same scheduling hash (handleInadmissibleHash), and those
	// queued after until quota is released in the cohort tree
	// (hashToBulkMoveReason): the same shape and Equiv here. The next of
	// its queue, of its shape or not, is the head in the next cycle.
	// Past Controller.maxAlone workloads set aside so in a queue at one
	// instant, the rest of the shape goes with it (as if the hash saw
	// no more than the shape), so that a backlog costs a bounded number
	// of rounds.
	pq := &c.queues.pending[x.cq]
	if pq.aloneCycle != c.cycles {
		pq.aloneCycle, pq.alone = c.cycles, 0
	}
	pq.alone++
	x.bucket.setAside(x, c.epoch[c.treeOf(x.cq)]+1, !c.spec.Gates.NoEquivalenceHashing, pq.alone > c.maxAlone)
	return true
}

// defaultMaxAlone is how many workloads of a queue a Cycle sets aside one
// at a time before it sets aside the rest of each failing shape at once.
const defaultMaxAlone = 256

// nothingFits says, after a round that admitted nothing, whether every
// workload still pending in a queue not blocked would fail as things
// stand (with the round's reservations undone): each queue's head and,
// in a BestEffortFIFO queue, the first of each shape not set aside is tried
// (nominated, its failure recorded as if it were the head: Kueue would
// try it as its queue's head in a later cycle of this instant, against
// the same state, since nothing is admitted before), unless a workload of
// its shape already failed at this state.
func (c *Controller) nothingFits(blocked []bool, out *[]Decision) bool {
	ver := c.snap.ver
	// fails tries x, queue qi's head or the first of a shape not set
	// aside, unless it or one of its shape before it failed at this
	// state; false: it may be admitted or make room.
	fails := func(qi int, x *wl) bool {
		b := x.bucket
		c.keepScan(x)
		if !c.noShortcuts && !x.scanPending() && (b.failedBefore(x, ver) || x.failedAt == ver) {
			return true
		}
		h := c.nominate(qi, x)
		if h.fits || h.tN > 0 {
			return false
		}
		switch {
		case h.sameShape:
			x.reason = h.before
		case h.known:
		case !h.unavailable:
			if x.reason != h.before {
				*out = append(*out, Decision{ID: x.ID, Waiting: true, Reason: x.reason})
			}
			if !h.partial {
				x.failedAt = ver
				b.failed(x, ver)
			}
		}
		return true
	}
	c.probing = true
	defer func() {
		c.headAssign, c.headTargets = c.headAssign[:0], c.headTargets[:0]
		c.probing = false
	}()
	for w, word := range c.queues.busy {
		for ; word != 0; word &= word - 1 {
			qi := w<<6 | bits.TrailingZeros64(word)
			if blocked[qi] {
				continue // a StrictFIFO head that failed at this state
			}
			aside := c.epoch[c.treeOf(qi)] + 1
			// The head (a StrictFIFO queue's only; a sticky one; one
			// that no longer fitted after another's admission or
			// reservation, tried again).
			if x := c.queues.headAt(qi, c.cycles, aside); x != nil && !fails(qi, x) {
				return false
			}
			if c.snap.cqs[qi].Strategy == StrictFIFO {
				continue
			}
			for _, b := range c.queues.pending[qi].bucketsL {
				if x := b.firstFrom(aside); x != nil && !fails(qi, x) {
					return false
				}
			}
		}
	}
	return true
}

// reasonFresh gives each workload queued since the last cycle that is
// still pending in a BestEffortFIFO queue, with no reason of its own, its
// shape's: Kueue tries every workload of such a queue in a cycle of its
// own and sets its condition, where this cycle sets aside without a try
// those behind one of their shape that failed at this state (or all at
// once, when nothing would fit), which would fail for the same reason.
// Only new arrivals are looked at: a cycle costs no more for a backlog.
func (c *Controller) reasonFresh(out *[]Decision) {
	for _, x := range c.queues.fresh {
		if x.pending && x.reason == "" && x.bucket != nil && x.bucket.reason != "" && c.snap.cqs[x.cq].Strategy == BestEffortFIFO {
			x.reason = x.bucket.reason
			*out = append(*out, Decision{ID: x.ID, Waiting: true, Reason: x.reason})
		}
	}
	clear(c.queues.fresh)
	c.queues.fresh = c.queues.fresh[:0]
}

// setAllAside sets aside every pending workload of the BestEffortFIFO
// queues not blocked (nothingFits said none would be admitted).
func (c *Controller) setAllAside(blocked []bool) {
	for w, word := range c.queues.busy {
		for ; word != 0; word &= word - 1 {
			qi := w<<6 | bits.TrailingZeros64(word)
			if blocked[qi] || c.snap.cqs[qi].Strategy == StrictFIFO {
				continue
			}
			aside := c.epoch[c.treeOf(qi)] + 1
			for _, b := range c.queues.pending[qi].bucketsL {
				if x := b.firstFrom(aside); x != nil {
					b.setAside(x, aside, false, true)
				}
			}
		}
	}
}

// Standing is one ClusterQueue's GPUs (every nvidia.com/ resource, whole
// GPUs and MIG instances alike) at this moment.
type Standing struct {
	Nominal, Used int64
	// Demand is what it uses plus what its pending workloads ask for.
	Demand int64
	// Share is its weighted share, as Kueue's fair sharing counts it:
	// the largest, over resources, of what it borrows per thousand of
	// what its parent Cohort could use, per unit of weight (0 outside a
	// cohort or when it does not borrow; math.MaxInt64 for weight 0).
	Share int64
	// Borrowed is what the queue uses beyond its nominal quota; Lent the
	// part of the cohort's borrowing that comes out of this queue's unused
	// lendable quota (borrowing is shared among the lenders in proportion
	// to what each leaves unused).
	Borrowed, Lent float64
}

// Amount writes an amount in the simulator's units the Kubernetes way:
// cpu from milli-CPU, memory from MiB, counts as they are.
func Amount(resource string, v int64) string { return string(appendAmount(nil, resource, v)) }

// appendAmount appends Amount(resource, v) to b.
func appendAmount(b []byte, resource string, v int64) []byte {
	switch {
	case resource == "cpu" && v%1000 == 0:
		return strconv.AppendInt(b, v/1000, 10)
	case resource == "cpu":
		return append(strconv.AppendInt(b, v, 10), 'm')
	case resource == "memory" && v%1024 == 0:
		return append(strconv.AppendInt(b, v/1024, 10), "Gi"...)
	case resource == "memory":
		return append(strconv.AppendInt(b, v, 10), "Mi"...)
	}
	return strconv.AppendInt(b, v, 10)
}

// IsGPU says whether a resource counts as GPUs in Standing.
func IsGPU(resource string) bool { return strings.HasPrefix(resource, "nvidia.com/") }

// Standings returns every ClusterQueue's standing, in spec order, then
// each quota-holding Cohort's (as Queues lists them).
func (c *Controller) Standings() []Standing { return c.AppendStandings(nil) }

// AppendStandings is Standings written over dst's array when it has room.
func (c *Controller) AppendStandings(dst []Standing) []Standing {
	return c.appendStandings(dst, true)
}

// appendStandings is the snapshot's standings with the pending demand
// added.
func (c *Controller) appendStandings(dst []Standing, share bool) []Standing {
	out := c.snap.appendStandings(dst, share)
	for qi, pq := range c.queues.pending {
		out[qi].Demand += pq.gpus
	}
	return out
}

// AppendUsage is AppendStandings without the queues' Share (left 0):
// what admission's integrals read at every change (no allocation).
func (c *Controller) AppendUsage(dst []Standing) []Standing {
	return c.appendStandings(dst, false)
}

// Queues are the ClusterQueues, in spec order, then a row "cohort/NAME"
// for each Cohort that holds quota of its own; Cohort names each one's
// tree by its root.
func (c *Controller) Queues() []ClusterQueue {
	s := &c.snap
	out := make([]ClusterQueue, len(s.cqs), len(s.cqs)+len(s.lenders))
	for i, st := range s.cqs {
		out[i] = st.ClusterQueue
		if st.cohort >= 0 {
			out[i].Cohort = s.nodes[s.rootNode[st.cohort]].name
		}
	}
	for _, n := range s.lenders {
		out = append(out, ClusterQueue{Name: "cohort/" + s.nodes[n].name, Cohort: s.nodes[s.rootNode[s.rootIndex(n)]].name, Groups: s.nodes[n].groups})
	}
	return out
}

// QueueIndex is the position of the ClusterQueue a LocalQueue feeds (-1).
func (c *Controller) QueueIndex(localQueue string) int {
	if q := &c.queues; q.lastCQ >= 0 && localQueue == q.lastLQ {
		return q.lastCQ
	}
	if qi, ok := c.queues.lqIndex(localQueue); ok {
		return qi
	}
	return -1
}

// Covers says whether the ClusterQueue fed by a LocalQueue has quota for
// a resource.
func (c *Controller) Covers(localQueue, resource string) bool {
	qi, ok := c.queues.lqIndex(localQueue)
	if !ok {
		return false
	}
	ri, ok := c.snap.resIndex(resource)
	return ok && c.snap.cqs[qi].groupOf[ri] >= 0
}

// scratchAssign is a scratch assignment of the queue's groups.
func (c *Controller) scratchAssign(st *cqState) []int {
	c.assignBuf = slices.Grow(c.assignBuf[:0], len(st.Groups))[:len(st.Groups)]
	return c.assignBuf
}
