package admission

import (
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
	// intSlab is where workloads' flavor assignments and decisions'
	// flavors are cut from, a block at a time.
	intSlab []int
	// noShortcuts makes every cycle try every head afresh (tests hold
	// the shortcuts to the decisions they would take without).
	noShortcuts bool
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
	// cycles numbers the cycles (bucket.skipped); reasonBuf is the
	// reason being written.
	cycles     uint64
	cycBlocked []bool
	cycHeads   []head
	cycOut     []Decision
	headAssign []int
	shareBuf   []int64
	assignBuf  []int
	reasonBuf  []byte
}

// New checks a spec and returns its controller.
func New(spec Spec) (*Controller, error) {
	if f := spec.FairSharing; f != nil && len(f.Strategies) == 0 {
		spec.FairSharing = &FairSharing{Strategies: []FairStrategy{LessThanOrEqualToFinalShare, LessThanInitialShare}}
	}
	c := &Controller{spec: spec}
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
	x.class = c.assigner.classOf(st, w.Constraints)
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
	} else if x.pending {
		c.queues.withdraw(x)
	}
	c.queues.forget(x)
}

// Evict takes back an admitted workload's quota; it is then neither
// admitted nor pending until Requeue (waitForPodsReady's eviction).
func (c *Controller) Evict(id int32) {
	if x := c.queues.wls.get(id); x != nil && x.admitted {
		c.snap.release(x)
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
}

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

// preempt asks the preemptor to make room for x, whose group g did not
// fit; when it does, it appends the evictions and x's admission to out.
func (c *Controller) preempt(x *wl, g int, out *[]Decision) bool {
	targets, assign := c.preemptor.preempt(x, g)
	if targets == nil {
		return false
	}
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
	*out = append(*out, c.admit(x, assign))
	return true
}

type head struct {
	x *wl
	// level is how far up its cohort tree the head borrows where it fits
	// as found (0: not at all; Kueue's Assignment.Borrowing, the height
	// of the lowest subtree that holds it).
	level int
	// fits: as the state stood at version ver, x fitted with the flavors
	// at c.headAssign[at:].
	fits bool
	ver  uint64
	at   int
	// path and shares: the queue's tree path and the shares along it with
	// the workload admitted (fair sharing only).
	path   []int
	shares []int64
}

// SetClock sets the time (ms) the next cycles' admissions are stamped
// with. Kueue orders preemption victims of one priority by when they
// reserved quota, newest first, as its conditions stamp it: in whole
// seconds; reservations in the same second fall back to the Workload's UID
// (lowest first), for which gpuplan uses the workload's ID.
// Without a clock, each admission counts as a moment of its own.
func (c *Controller) SetClock(ms int64) { c.now, c.clocked = ms, true }

// Cycle admits what fits, preempting where the queues' policies allow,
// until nothing more can be admitted; it returns the decisions in order
// (in the controller's scratch: valid until the next Cycle). Workloads it
// evicts wait until the next cycle.
func (c *Controller) Cycle() []Decision {
	out := c.cycOut[:0]
	// Buckets tried this cycle and set aside are marked with the cycle's
	// number; blocked and heads are the controller's scratch, cleared
	// here.
	c.cycles++
	nq := len(c.snap.cqs)
	blocked := slices.Grow(c.cycBlocked[:0], nq)[:nq]
	clear(blocked)
	c.cycBlocked = blocked
	fair := c.spec.FairSharing != nil
	// blockAdmission: one admission, then none until its pods are ready
	// (the caller holds the next cycle back).
	block := c.spec.WaitForPodsReady != nil && c.spec.WaitForPodsReady.BlockAdmission
loop:
	for {
		heads := c.heads(blocked, fair)
		if len(heads) == 0 {
			break
		}
		sortHeads(heads, fair)
		for _, h := range heads {
			x := h.x
			st := c.snap.cqs[x.cq]
			if !x.pending {
				continue
			}
			if strings.Contains(x.reason, ": resource ") && strings.HasSuffix(x.reason, " unavailable") {
				c.setAside(st, x, blocked)
				continue
			}
			if x.failedAt == c.snap.ver && !c.noShortcuts {
				// Tried since the last change: it would fail again, for
				// the same reason.
				x.bucket.reason = x.reason
				c.setAside(st, x, blocked)
				continue
			}
			before, tried := x.reason, c.snap.ver
			var as []int
			res := assignResult{outcome: fit, failed: -1}
			if h.fits && h.ver == c.snap.ver && !c.noShortcuts {
				// Nothing changed since its head was found: it fits as
				// found then.
				as = c.headAssign[h.at : h.at+len(st.Groups)]
			} else {
				as = c.scratchAssign(st)
				res = c.assigner.assignment(x, true, as, true)
			}
			if res.outcome == fit {
				d := c.admit(x, as)
				if before == "" {
					d.Reason = x.bucket.reason
				}
				out = append(out, d)
				if block {
					break loop
				}
				if fair {
					continue loop // shares changed: a new tournament
				}
				continue
			}
			r := append(append(append(c.reasonBuf[:0], "ClusterQueue "...), st.Name...), ": "...)
			r = append(r, c.assigner.why...)
			c.reasonBuf = r
			if string(r) != x.reason {
				x.reason = string(r)
			}
			x.bucket.reason = x.reason
			if c.preempt(x, res.failed, &out) {
				if block {
					break loop
				}
				if fair {
					continue loop
				}
				continue
			}
			if x.reason != before {
				out = append(out, Decision{ID: x.ID, Waiting: true, Reason: x.reason})
			}
			// (A preemption that released its targets and still failed
			// changed the state: the version moved on.)
			x.failedAt = tried
			c.setAside(st, x, blocked)
		}
	}
	for _, x := range c.evicted {
		c.queues.insert(x)
	}
	c.evicted = c.evicted[:0]
	c.cycOut = out
	if len(out) == 0 {
		return nil
	}
	return out
}

// heads are the first pending workload of every queue not blocked this
// cycle, each with what the flavor assigner makes of it as things stand
// (its flavors at c.headAssign[at:]) and, under fair sharing, the shares
// along its queue's path with it admitted (in the controller's scratch:
// valid until the next call). It walks only the queues with pending
// workloads (queueManager.busy), in spec order: a cycle's cost does not
// grow with the queues that have nothing to admit.
func (c *Controller) heads(blocked []bool, fair bool) []head {
	clear(c.cycHeads)
	heads := c.cycHeads[:0]
	c.headAssign = c.headAssign[:0]
	c.shareBuf = c.shareBuf[:0]
	for w, word := range c.queues.busy {
		for ; word != 0; word &= word - 1 {
			qi := w<<6 | bits.TrailingZeros64(word)
			c.walked++
			if blocked[qi] {
				continue
			}
			if h, ok := c.headOf(qi, fair); ok {
				heads = append(heads, h)
			}
		}
	}
	c.cycHeads = heads
	return heads
}

// headOf is queue qi's head (ok false: every bucket of it was set aside
// this cycle).
func (c *Controller) headOf(qi int, fair bool) (head, bool) {
	st := c.snap.cqs[qi]
	first := c.queues.head(qi, c.cycles)
	if first == nil {
		return head{}, false
	}
	// A workload known to fail as things stand has no assignment (and
	// does not borrow).
	var as []int
	h := head{x: first, ver: c.snap.ver, at: len(c.headAssign)}
	if first.failedAt != c.snap.ver || c.noShortcuts {
		c.headAssign = slices.Grow(c.headAssign, len(st.Groups))[:h.at+len(st.Groups)]
		as = c.headAssign[h.at:]
		r := c.assigner.assignment(first, true, as, false)
		if h.fits = r.outcome == fit; !h.fits {
			as = nil
		} else if r.borrow {
			for g, f := range as {
				if f >= 0 {
					h.level = max(h.level, c.preemptor.borrowLevel(first, g, f))
				}
			}
		}
	}
	if fair {
		h.path, h.shares = c.headShares(first, as)
	}
	return h, true
}

// sortHeads puts the heads in the order they are tried: under fair
// sharing by the shares of their sides of their lowest common ancestor,
// otherwise those that do not borrow first, then those that borrow from
// nearer up their cohort tree (Kueue's classical iterator compares
// Assignment.Borrows(), a height); then in queue order.
func sortHeads(heads []head, fair bool) {
	// Heads in order; less orders workloads totally, so the order is
	// the one sort.SliceStable gave.
	before := func(a, b *head) bool {
		if fair {
			if fairBefore(a, b) {
				return true
			}
			if fairBefore(b, a) {
				return false
			}
		} else if a.level != b.level {
			return a.level < b.level
		}
		return less(a.x, b.x)
	}
	slices.SortStableFunc(heads, func(a, b head) int {
		switch {
		case before(&a, &b):
			return -1
		case before(&b, &a):
			return 1
		}
		return 0
	})
}

func (c *Controller) setAside(st *cqState, x *wl, blocked []bool) {
	if st.Strategy == StrictFIFO {
		blocked[x.cq] = true
		return
	}
	x.bucket.skipped = c.cycles
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
