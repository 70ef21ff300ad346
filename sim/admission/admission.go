package admission

import (
	"errors"
	"fmt"
	"slices"
	"sort"
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

type wl struct {
	Workload
	cq       int
	class    int32   // its flavors' verdicts (cqState.classes)
	req      []int64 // per resource index
	gpus     int64   // of every nvidia.com/ resource
	admitted bool
	assign   []int // per group of its queue: flavor index in the group, -1 unused
	seq      int64 // admission order
	reason   string
	// Pending: its bucket and the generation of its live entry there;
	// admitted: its index in the queue's admitted list.
	bucket  *bucket
	gen     int64
	pending bool
	admIdx  int
	// failedAt is the controller's state (Controller.ver) at which the
	// workload was last tried and neither admitted nor made room for by
	// preemption: while the state stays the same, trying it again would
	// fail the same way (0: not known).
	failedAt uint64
}

// bucket holds a queue's pending workloads of one shape (priority and
// requests) in queue order: they fit or fail together, so a cycle tries
// only the first of each.
type bucket struct {
	entries []entry
	head    int
	// reason is why the bucket's first workload last failed.
	reason string
	// The shape: priority, requests per resource index and the class
	// (which flavors may be assigned); next chains shapes whose hashes
	// collide.
	prio  int32
	req   []int64
	class int32
	next  *bucket
	// skipped is the cycle (Controller.cycles) that set the bucket aside.
	skipped uint64
}

// entry is a workload in a bucket, with its generation and queue order
// (less's keys) when added: a stale entry's workload may since have been
// requeued at another time, or finished and reused for another workload
// (Controller.free), and the entries must stay in the order a search
// assumes.
type entry struct {
	x       *wl
	gen     int64
	created int64
	prio    int32
	id      int32
}

// after says e's workload, as added, comes after x in queue order (less).
func (e *entry) after(x *wl) bool {
	if x.Priority != e.prio {
		return x.Priority > e.prio
	}
	if x.Created != e.created {
		return x.Created < e.created
	}
	return x.ID < e.id
}

// first is the bucket's first live workload, or nil.
func (b *bucket) first() *wl {
	for b.head < len(b.entries) {
		e := b.entries[b.head]
		if e.x.pending && e.x.gen == e.gen {
			return e.x
		}
		b.head++
	}
	if b.head > 0 {
		b.entries, b.head = b.entries[:0], 0
	}
	return nil
}

func (b *bucket) add(x *wl) {
	b.first()
	if b.head > 64 && b.head > len(b.entries)/2 {
		n := copy(b.entries, b.entries[b.head:])
		b.entries, b.head = b.entries[:n], 0
	}
	e := entry{x: x, gen: x.gen, created: x.Created, prio: x.Priority, id: x.ID}
	live := b.entries[b.head:]
	if n := len(live); n == 0 || !live[n-1].after(x) {
		b.entries = append(b.entries, e)
		return
	}
	i := b.head + sort.Search(len(live), func(i int) bool { return live[i].after(x) })
	b.entries = slices.Insert(b.entries, i, e)
}

// slot is a position [group][flavor in group][covered resource] in a
// queue's quota and usage.
type slot struct{ g, f, r int }

type cqState struct {
	ClusterQueue
	cohort  int
	groupOf []int   // resource index -> group, -1 not covered
	posOf   []int   // resource index -> its position in its group's Covered
	resOf   [][]int // group -> covered position -> resource index
	flavors [][]int // group -> flavor indices in Spec.Flavors
	// labelKeys are each group's label keys (groupLabelKeys); flat[g]+f
	// is group g's flavor f's place in a class pattern, classes the
	// patterns of the queue's workloads (a verdict per flavor: flavors.go)
	// and classIdx finds one.
	labelKeys []map[string]bool
	flat      []int
	classes   [][]byte
	classIdx  map[string]int32
	// keys are the tree's flavor-resource keys per [group][flavor in
	// group][covered resource]; gpuSlots the GPU resources' positions,
	// gpuUse their usage cells and gpuNominal their nominal quotas (for
	// Standings).
	keys       [][][]int
	gpuSlots   []slot
	gpuUse     []*int64
	gpuNominal []int64
	// quota and usage per [group][flavor in group][covered resource]
	quota    [][][]Quota
	usage    [][][]int64
	buckets  map[uint64]*bucket // by shape hash
	bucketsL []*bucket          // in creation order
	admitted []*wl
	// pendingGPUs are the GPUs pending workloads ask for; gpuLend and
	// gpuBorrow (NoLimit: unbounded) sum the queue's lendable and
	// borrowable GPUs over flavors.
	pendingGPUs        int64
	gpuLend, gpuBorrow int64
	// pendingN counts its pending workloads (a cycle skips a queue with
	// none).
	pendingN int
	// path is its tree path (Controller.path).
	path []int
	// node is the queue's leaf in its cohort tree.
	node int
}

// Controller admits workloads against the quotas.
type Controller struct {
	spec     Spec
	res      map[string]int
	resName  []string
	flavor   map[string]int
	cqs      []*cqState
	cqByName map[string]int
	lq       map[string]int
	// cohorts lists each cohort tree's ClusterQueues (a queue's cohort
	// field indexes it); rootNode is each tree's root node.
	cohorts  [][]int
	rootNode []int
	tree
	// lenders are the Cohort nodes that hold quota of their own.
	lenders []int
	fair    fairDivision
	wls     wlIndex
	lookups
	seq int64
	// evicted wait for the end of the cycle that evicted them.
	evicted []*wl
	// lending is per cohort tree (buildLending).
	lending []lending
	slabs
	// ver counts changes of what admission decisions depend on (usage,
	// the admitted workloads), pver changes of pending demand; Version
	// is their sum.
	ver, pver uint64
	// noShortcuts makes every cycle try every head afresh (tests hold
	// the shortcuts to the decisions they would take without).
	noShortcuts bool
	cycleScratch
}

// lookups remember the last answers of Submit's lookups, which a run's
// jobs mostly repeat.
type lookups struct {
	// lastLQ and lastCQ: the LocalQueue last submitted to and its queue.
	lastLQ string
	lastCQ int
	// lastClassCQ, lastClassCons and lastClass: the queue and constraints
	// a class was last worked out for, and the class (classOf); classBuf
	// is its scratch.
	lastClassCQ   *cqState
	lastClassCons *cluster.Constraints
	lastClass     int32
	classBuf      []byte
	// lqNames and lqCQ list the LocalQueues and their queues when there
	// are few (lookup scans them: cheaper than hashing a name each job).
	lqNames []string
	lqCQ    []int
}

// slabs are what a controller's workloads are cut from.
type slabs struct {
	// reqSlab, wlSlab and intSlab are where workloads' per-resource
	// requests, the workloads themselves and their flavor assignments
	// (and decisions' flavors) are cut from, a block at a time;
	// scratchLend is Standings'.
	reqSlab     []int64
	wlSlab      []wl
	intSlab     []int
	scratchLend []float64
	// free holds finished workloads for Submit to reuse (with their
	// requests' and assignment's arrays): stale bucket entries may point
	// to them, but a reused workload's generation goes on from where it
	// was, so they stay stale. noReuse turns it off (tests).
	free    []*wl
	noReuse bool
}

// cycleScratch is Cycle's scratch, kept between cycles so that a cycle
// allocates nothing unless it decides something.
type cycleScratch struct {
	// cycles numbers the cycles (bucket.skipped), why
	// and whyCur are assignment's reasons, reason the one being written.
	cycles     uint64
	cycBlocked []bool
	cycHeads   []head
	cycOut     []Decision
	headAssign []int
	shareBuf   []int64
	assignBuf  []int
	why        []byte
	whyCur     []byte
	reasonBuf  []byte
}

// New checks a spec and returns its controller.
func New(spec Spec) (*Controller, error) {
	c := &Controller{spec: spec, res: map[string]int{}, flavor: map[string]int{}, cqByName: map[string]int{}, lq: map[string]int{}, ver: 1}
	c.lastCQ = -1
	for i, f := range spec.Flavors {
		if _, dup := c.flavor[f.Name]; dup || f.Name == "" {
			return nil, fmt.Errorf("ResourceFlavor %q: missing or duplicate name", f.Name)
		}
		if len(f.NodeTaints) > maxFlavorTaints {
			return nil, fmt.Errorf("ResourceFlavor %s: %d nodeTaints, more than %d", f.Name, len(f.NodeTaints), maxFlavorTaints)
		}
		c.flavor[f.Name] = i
	}
	for qi, q := range spec.ClusterQueues {
		if _, dup := c.cqByName[q.Name]; dup || q.Name == "" {
			return nil, fmt.Errorf("ClusterQueue %q: missing or duplicate name", q.Name)
		}
		c.cqByName[q.Name] = qi
		st, err := c.queueState(q)
		if err != nil {
			return nil, err
		}
		c.cqs = append(c.cqs, st)
	}
	if err := c.buildTree(&c.spec); err != nil {
		return nil, err
	}
	// (After the tree: a Cohort may name resources no queue covers.)
	for _, st := range c.cqs {
		c.indexQueue(st)
	}
	for _, st := range c.cqs {
		for _, p := range st.gpuSlots {
			st.gpuUse = append(st.gpuUse, &st.usage[p.g][p.f][p.r])
			st.gpuNominal = append(st.gpuNominal, st.quota[p.g][p.f][p.r].Nominal)
		}
	}
	c.buildLending()
	for _, st := range c.cqs {
		st.gpuBorrow = 0
		for g, grp := range st.Groups {
			for f := range st.flavors[g] {
				for r, name := range grp.Covered {
					qt := st.quota[g][f][r]
					if !IsGPU(name) {
						continue
					}
					st.gpuLend += lendable(qt)
					if qt.BorrowingLimit == NoLimit || st.gpuBorrow == NoLimit {
						st.gpuBorrow = NoLimit
					} else {
						st.gpuBorrow += qt.BorrowingLimit
					}
				}
			}
		}
		if st.cohort < 0 {
			st.gpuLend, st.gpuBorrow = 0, 0
		}
	}
	if f := spec.FairSharing; f != nil && len(f.Strategies) == 0 {
		c.spec.FairSharing = &FairSharing{Strategies: []FairStrategy{LessThanOrEqualToFinalShare, LessThanInitialShare}}
	}
	for _, q := range spec.ClusterQueues {
		if q.FairWeight < ZeroWeight {
			return nil, fmt.Errorf("ClusterQueue %s: negative fair-sharing weight", q.Name)
		}
	}
	for _, l := range spec.LocalQueues {
		qi, ok := c.cqByName[l.ClusterQueue]
		if !ok {
			return nil, fmt.Errorf("LocalQueue %s points at ClusterQueue %q, which is not defined", l.Name, l.ClusterQueue)
		}
		if _, dup := c.lq[l.Name]; dup {
			return nil, fmt.Errorf("LocalQueue %q is defined twice", l.Name)
		}
		c.lq[l.Name] = qi
	}
	if len(spec.LocalQueues) <= smallScan {
		for _, l := range spec.LocalQueues {
			c.lqNames = append(c.lqNames, l.Name)
			c.lqCQ = append(c.lqCQ, c.lq[l.Name])
		}
	}
	return c, nil
}

// queueState checks a ClusterQueue's resource groups and quotas and makes
// its state: its flavors, quotas and (zero) usage per group, registering
// the resources it covers.
func (c *Controller) queueState(q ClusterQueue) (*cqState, error) {
	st := &cqState{ClusterQueue: q, cohort: -1}
	seen := map[string]bool{}
	for gi, g := range q.Groups {
		var fl []int
		var quota [][]Quota
		var usage [][]int64
		for _, r := range g.Covered {
			if seen[r] {
				return nil, fmt.Errorf("ClusterQueue %s: resource %s is in two resource groups", q.Name, r)
			}
			seen[r] = true
			if _, ok := c.res[r]; !ok {
				c.res[r] = len(c.resName)
				c.resName = append(c.resName, r)
			}
		}
		for _, f := range g.Flavors {
			fi, ok := c.flavor[f.Flavor]
			if !ok {
				return nil, fmt.Errorf("ClusterQueue %s: resourceGroups[%d] names flavor %q, which no ResourceFlavor defines", q.Name, gi, f.Flavor)
			}
			if len(f.Resources) != len(g.Covered) {
				return nil, fmt.Errorf("ClusterQueue %s: flavor %s lists %d resources, the group covers %d", q.Name, f.Flavor, len(f.Resources), len(g.Covered))
			}
			for ri, rq := range f.Resources {
				if rq.Nominal < 0 || rq.BorrowingLimit < NoLimit || rq.LendingLimit < NoLimit {
					return nil, fmt.Errorf("ClusterQueue %s: flavor %s resource %s: negative quota", q.Name, f.Flavor, g.Covered[ri])
				}
				if rq.LendingLimit > rq.Nominal {
					return nil, fmt.Errorf("ClusterQueue %s: flavor %s resource %s: lendingLimit %d is more than nominalQuota %d", q.Name, f.Flavor, g.Covered[ri], rq.LendingLimit, rq.Nominal)
				}
				if q.Cohort == "" && (rq.BorrowingLimit != NoLimit || rq.LendingLimit != NoLimit) {
					return nil, fmt.Errorf("ClusterQueue %s: borrowingLimit and lendingLimit need a cohort", q.Name)
				}
			}
			fl = append(fl, fi)
			quota = append(quota, f.Resources)
			usage = append(usage, make([]int64, len(g.Covered)))
		}
		st.flavors = append(st.flavors, fl)
		st.quota = append(st.quota, quota)
		st.usage = append(st.usage, usage)
	}
	return st, nil
}

// indexQueue fills a queue's indices by resource (its group and
// position there), its groups' label keys and flavor patterns' places,
// its flavor-resource keys in the tree and its GPU slots.
func (c *Controller) indexQueue(st *cqState) {
	st.groupOf = make([]int, len(c.resName))
	st.posOf = make([]int, len(c.resName))
	for i := range st.groupOf {
		st.groupOf[i], st.posOf[i] = -1, -1
	}
	st.resOf = make([][]int, len(st.Groups))
	st.keys = make([][][]int, len(st.Groups))
	n := 0
	for gi := range st.Groups {
		st.labelKeys = append(st.labelKeys, groupLabelKeys(c.spec.Flavors, st.flavors[gi]))
		st.flat = append(st.flat, n)
		n += len(st.flavors[gi])
	}
	for gi, g := range st.Groups {
		for r, name := range g.Covered {
			ri := c.res[name]
			st.groupOf[ri], st.posOf[ri] = gi, r
			st.resOf[gi] = append(st.resOf[gi], ri)
		}
		for f, fl := range st.flavors[gi] {
			keys := make([]int, len(g.Covered))
			for r, ri := range st.resOf[gi] {
				keys[r] = c.frKey(fl, ri)
				if IsGPU(g.Covered[r]) {
					st.gpuSlots = append(st.gpuSlots, slot{gi, f, r})
				}
			}
			st.keys[gi] = append(st.keys[gi], keys)
		}
	}
}

// Spec returns the policy the controller enforces.
func (c *Controller) Spec() *Spec { return &c.spec }

// smallScan is how many names a lookup scans rather than hashes.
const smallScan = 8

// lqIndex is the queue a LocalQueue feeds.
func (c *Controller) lqIndex(name string) (int, bool) {
	if c.lqNames == nil {
		qi, ok := c.lq[name]
		return qi, ok
	}
	for i, n := range c.lqNames {
		if n == name {
			return c.lqCQ[i], true
		}
	}
	return 0, false
}

// resIndex is a resource's index.
func (c *Controller) resIndex(name string) (int, bool) {
	if len(c.resName) > smallScan {
		ri, ok := c.res[name]
		return ri, ok
	}
	for ri, n := range c.resName {
		if n == name {
			return ri, true
		}
	}
	return 0, false
}

// ErrNoQueue is returned by Submit for a workload whose LocalQueue does
// not exist.
var ErrNoQueue = errors.New("no such LocalQueue")

// Submit adds a pending workload (or one preempted before, re-added by
// the caller: it keeps its creation time).
func (c *Controller) Submit(w Workload) error {
	qi := c.lastCQ
	if qi < 0 || w.Queue != c.lastLQ {
		var ok bool
		if qi, ok = c.lqIndex(w.Queue); !ok {
			return fmt.Errorf("%w %q", ErrNoQueue, w.Queue)
		}
		c.lastLQ, c.lastCQ = w.Queue, qi
	}
	if c.wls.get(w.ID) != nil {
		return fmt.Errorf("workload %d submitted twice", w.ID)
	}
	nr := len(c.resName)
	var x *wl
	if n := len(c.free); n > 0 {
		x = c.free[n-1]
		c.free[n-1] = nil
		c.free = c.free[:n-1]
		clear(x.req)
		*x = wl{Workload: w, cq: qi, req: x.req, assign: x.assign[:0], gen: x.gen}
	} else {
		if len(c.reqSlab) < nr {
			c.reqSlab = make([]int64, 256*nr)
		}
		if len(c.wlSlab) == 0 {
			c.wlSlab = make([]wl, 256)
		}
		x = &c.wlSlab[0]
		c.wlSlab = c.wlSlab[1:]
		*x = wl{Workload: w, cq: qi, req: c.reqSlab[:nr:nr]}
		c.reqSlab = c.reqSlab[nr:]
	}
	// The requests are summed into req: the caller may reuse its slice.
	x.Requests = nil
	st := c.cqs[qi]
	x.class = c.classOf(st, w.Constraints)
	var missing []string
	for _, r := range w.Requests {
		if r.Amount <= 0 {
			continue
		}
		ri, ok := c.resIndex(r.Resource)
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
	c.wls.put(w.ID, x)
	c.insert(st, x)
	return nil
}

// wlIndex finds workloads by id: ids from 0 up to a bound that grows
// with the ids seen (a run's job ids are dense) in a slice, any other in
// a map.
type wlIndex struct {
	dense  []*wl
	sparse map[int32]*wl
}

func (w *wlIndex) get(id int32) *wl {
	if id >= 0 && int(id) < len(w.dense) && w.dense[id] != nil {
		return w.dense[id]
	}
	if w.sparse != nil {
		return w.sparse[id]
	}
	return nil
}

func (w *wlIndex) put(id int32, x *wl) {
	if id >= 0 && int(id) >= len(w.dense) && int(id) < 2*len(w.dense)+1024 {
		// Doubling: a million ids copy 8 MB of index once, not five times.
		w.dense = slices.Grow(w.dense, max(int(id)+1, 2*len(w.dense))-len(w.dense))
		w.dense = w.dense[:cap(w.dense)]
	}
	if id >= 0 && int(id) < len(w.dense) {
		w.dense[id] = x
		return
	}
	if w.sparse == nil {
		w.sparse = map[int32]*wl{}
	}
	w.sparse[id] = x
}

func (w *wlIndex) del(id int32) {
	if id >= 0 && int(id) < len(w.dense) {
		w.dense[id] = nil
	}
	if w.sparse != nil {
		delete(w.sparse, id)
	}
}

// less is queue order: higher priority first, then older, then by id.
func less(a, b *wl) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.Created != b.Created {
		return a.Created < b.Created
	}
	return a.ID < b.ID
}

func (c *Controller) insert(st *cqState, x *wl) {
	if x.bucket == nil {
		h := shapeHash(x.Priority, x.class, x.req)
		b := st.buckets[h]
		for b != nil && (b.prio != x.Priority || b.class != x.class || !slices.Equal(b.req, x.req)) {
			b = b.next
		}
		if b == nil {
			if st.buckets == nil {
				st.buckets = map[uint64]*bucket{}
			}
			b = &bucket{prio: x.Priority, req: slices.Clone(x.req), class: x.class, next: st.buckets[h]}
			st.buckets[h] = b
			st.bucketsL = append(st.bucketsL, b)
		}
		x.bucket = b
	}
	x.gen++
	x.pending = true
	x.failedAt = 0
	st.pendingGPUs += x.gpus
	st.pendingN++
	c.pver++
	x.bucket.add(x)
}

// shapeHash hashes a shape (priority, class and requests) for
// cqState.buckets (FNV-1a over 64-bit words; collisions are chained).
func shapeHash(prio, class int32, req []int64) uint64 {
	h := uint64(14695981039346656037)
	h = (h ^ uint64(uint32(prio))) * 1099511628211
	h = (h ^ uint64(uint32(class))) * 1099511628211
	for _, a := range req {
		h = (h ^ uint64(a)) * 1099511628211
	}
	return h
}

// Version changes whenever what Standings reports may have changed (a
// workload admitted, released, submitted, requeued or withdrawn): a
// caller may keep the standings it read while the version stays the
// same.
func (c *Controller) Version() uint64 { return c.ver + c.pver }

// UsageVersion changes whenever a workload is admitted or released: while
// it stays the same, standings read before differ from today's only in
// their Demand (RefreshDemand).
func (c *Controller) UsageVersion() uint64 { return c.ver }

// RefreshDemand brings the Demand of standings read at the current
// UsageVersion up to date.
func (c *Controller) RefreshDemand(s []Standing) {
	for qi, st := range c.cqs {
		s[qi].Demand = st.pendingGPUs + s[qi].Used
	}
}

// Finish forgets a workload that completed, failed or was deleted,
// releasing its quota if it was admitted.
func (c *Controller) Finish(id int32) {
	x := c.wls.get(id)
	if x == nil {
		return
	}
	if x.admitted {
		c.release(x)
	} else if x.pending {
		x.pending = false // its bucket entry goes stale
		c.cqs[x.cq].pendingGPUs -= x.gpus
		c.cqs[x.cq].pendingN--
		c.pver++
	}
	c.wls.del(id)
	if !c.noReuse {
		c.free = append(c.free, x)
	}
}

// Evict takes back an admitted workload's quota; it is then neither
// admitted nor pending until Requeue (waitForPodsReady's eviction).
func (c *Controller) Evict(id int32) {
	if x := c.wls.get(id); x != nil && x.admitted {
		c.release(x)
		x.reason = "Evicted: the workload did not reach PodsReady within waitForPodsReady's timeout"
	}
}

// Withdraw takes a pending workload out of the queue (not admitted, not
// pending) until Requeue: a preempted workload whose pods are still
// stopping.
func (c *Controller) Withdraw(id int32) {
	x := c.wls.get(id)
	if x == nil || x.admitted {
		return
	}
	if i := slices.Index(c.evicted, x); i >= 0 {
		c.evicted = slices.Delete(c.evicted, i, i+1)
		return
	}
	if x.pending {
		x.pending = false // its bucket entry goes stale
		c.cqs[x.cq].pendingGPUs -= x.gpus
		c.cqs[x.cq].pendingN--
		c.pver++
	}
}

// Requeue makes an evicted workload pending again, queued as created at
// created.
func (c *Controller) Requeue(id int32, created int64) {
	x := c.wls.get(id)
	if x == nil || x.admitted || x.pending {
		return
	}
	x.Created = created
	c.insert(c.cqs[x.cq], x)
}

// Admitted says whether a workload holds quota.
func (c *Controller) Admitted(id int32) bool {
	x := c.wls.get(id)
	return x != nil && x.admitted
}

// Reason is why a pending workload was not admitted at the last cycle
// (or, if it was never tried, why the first workload of its shape was not).
func (c *Controller) Reason(id int32) string {
	if x := c.wls.get(id); x != nil {
		if x.reason == "" && x.pending && x.bucket != nil {
			return x.bucket.reason
		}
		return x.reason
	}
	return ""
}

// ClusterQueueOf names the ClusterQueue a LocalQueue feeds ("" if none).
func (c *Controller) ClusterQueueOf(localQueue string) string {
	if qi, ok := c.lq[localQueue]; ok {
		return c.cqs[qi].Name
	}
	return ""
}

func (c *Controller) release(x *wl) {
	c.charge(x, -1)
	c.ver++
	x.admitted = false
	st := c.cqs[x.cq]
	last := st.admitted[len(st.admitted)-1]
	st.admitted[x.admIdx] = last
	last.admIdx = x.admIdx
	st.admitted = st.admitted[:len(st.admitted)-1]
}

// readmit undoes release: x holds its quota again, with the flavors and
// admission order it had.
func (c *Controller) readmit(x *wl) {
	st := c.cqs[x.cq]
	x.admitted = true
	x.admIdx = len(st.admitted)
	st.admitted = append(st.admitted, x)
	c.charge(x, +1)
	c.ver++
}

func lendable(q Quota) int64 {
	if q.LendingLimit == NoLimit {
		return q.Nominal
	}
	return q.LendingLimit
}

// flavorIndex is the flavor's position in Spec.Flavors.
func (c *Controller) flavorIndex(st *cqState, g, f int) int { return st.flavors[g][f] }

// find finds, in queue q, the position of a flavor and resource
// (by global flavor index and resource name) or ok false.
func (c *Controller) find(q *cqState, flavor int, res string) (g, f, r int, ok bool) {
	ri, known := c.res[res]
	if !known {
		return 0, 0, 0, false
	}
	g = q.groupOf[ri]
	if g < 0 {
		return 0, 0, 0, false
	}
	f = slices.Index(q.flavors[g], flavor)
	if f < 0 {
		return 0, 0, 0, false
	}
	return g, f, slices.Index(q.Groups[g].Covered, res), true
}

// fits says whether extra more of one quota (queue st's resource r of
// group g's flavor f) fits: within the queue's
// nominal quota (allowBorrow false) or its borrowing limit, and within
// what its cohort tree has available to it (its unused guaranteed quota
// and what its ancestors have, within their limits). The second value is
// how much is missing.
func (c *Controller) fits(st *cqState, g, f, r int, extra int64, allowBorrow bool) (bool, int64) {
	q := st.quota[g][f][r]
	u := st.usage[g][f][r] + extra
	if u > q.Nominal && (st.cohort < 0 || !allowBorrow) {
		return false, u - q.Nominal
	}
	if st.cohort < 0 {
		return true, 0
	}
	avail := c.available(st.node, st.keys[g][f][r])
	if extra > avail {
		return false, extra - avail
	}
	return true, 0
}

// assignment is the flavor assigner: it finds a flavor per group for x,
// in order, as the queue's flavorFungibility says, and writes it to
// assign (one per group of the queue, -1 unused). The result's outcome is
// the worst of the groups' (a group stopped at a flavor where preemption
// would make room is preemptFit), its failed the first group that did
// not fit, where the caller preempts; with why, the reason goes to c.why.
func (c *Controller) assignment(x *wl, allowBorrow bool, assign []int, why bool) assignResult {
	st := c.cqs[x.cq]
	res := assignResult{outcome: fit, failed: -1}
	for g := range st.Groups {
		assign[g] = -1
		asks := false
		for ri, a := range x.req {
			if a > 0 && st.groupOf[ri] == g {
				asks = true
			}
		}
		if !asks {
			continue
		}
		cur := c.whyCur[:0]
		borrowAt := -1 // the first flavor that fits by borrowing, when trying on
		stopped := false
		for f := range st.flavors[g] {
			fl := &c.spec.Flavors[st.flavors[g][f]]
			if v := c.flavorVerdict(st, x, g, f); v != candidate {
				// Not a candidate for its pods (Kueue's
				// checkFlavorForPodSets): tried no further.
				if why {
					cur = appendVerdict(cur, fl, v)
				}
				continue
			}
			fits, b := true, false
			shorts := 0
			for r, ri := range st.resOf[g] {
				a := x.req[ri]
				if a == 0 {
					continue
				}
				name := st.Groups[g].Covered[r]
				fit, short := c.fits(st, g, f, r, a, allowBorrow)
				if !fit {
					if why {
						if shorts == 0 {
							cur = appendWhy(cur, "insufficient unused quota in flavor ", fl.Name, " for ")
						} else {
							cur = append(cur, ", "...)
						}
						cur = append(cur, name...)
						cur = append(cur, " ("...)
						cur = appendAmount(cur, name, short)
						cur = append(cur, " more needed)"...)
					}
					fits = false
					shorts++
					continue
				}
				if st.usage[g][f][r]+a > st.quota[g][f][r].Nominal {
					b = true
				}
			}
			if !fits {
				if st.Fungibility.StopOnPreempt && borrowAt < 0 && c.targetsFor(x, g, f) != nil {
					stopped = true
					break
				}
				continue
			}
			if b && st.Fungibility.TryNextOnBorrow {
				if borrowAt < 0 {
					borrowAt = f
				}
				continue
			}
			assign[g] = f
			res.borrow = res.borrow || b
			break
		}
		if assign[g] < 0 && borrowAt >= 0 && !stopped {
			assign[g] = borrowAt
			res.borrow = true
		}
		if assign[g] < 0 {
			o := noFit
			if stopped {
				o = preemptFit
			}
			res.outcome = min(res.outcome, o)
			if res.failed < 0 {
				res.failed = g
			}
			if why {
				if len(cur) == 0 {
					cur = append(cur, "no flavor"...)
				}
				c.why = append(append(c.why[:0], "couldn't assign flavors: "...), cur...)
			}
		}
		c.whyCur = cur
	}
	if res.outcome != fit {
		res.borrow = false
	}
	return res
}

// appendWhy appends one flavor's part of a reason, "; " after another's.
func appendWhy(b []byte, parts ...string) []byte {
	if len(b) > 0 {
		b = append(b, "; "...)
	}
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// scratchAssign is a scratch assignment of the queue's groups.
func (c *Controller) scratchAssign(st *cqState) []int {
	c.assignBuf = slices.Grow(c.assignBuf[:0], len(st.Groups))[:len(st.Groups)]
	return c.assignBuf
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
	x.admitted = true
	c.seq++
	c.ver++
	x.seq = c.seq
	x.reason = ""
	st := c.cqs[x.cq]
	x.pending = false // its bucket entry goes stale
	st.pendingGPUs -= x.gpus
	st.pendingN--
	x.admIdx = len(st.admitted)
	st.admitted = append(st.admitted, x)
	c.charge(x, +1)
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
				d.Flavors = append(d.Flavors, c.flavorIndex(st, g, f))
			}
		}
	}
	return d
}

type head struct {
	x      *wl
	borrow bool
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
	blocked := slices.Grow(c.cycBlocked[:0], len(c.cqs))[:len(c.cqs)]
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
			st := c.cqs[x.cq]
			if !x.pending {
				continue
			}
			if strings.Contains(x.reason, ": resource ") && strings.HasSuffix(x.reason, " unavailable") {
				c.setAside(st, x, blocked)
				continue
			}
			if x.failedAt == c.ver && !c.noShortcuts {
				// Tried since the last change: it would fail again, for
				// the same reason.
				x.bucket.reason = x.reason
				c.setAside(st, x, blocked)
				continue
			}
			before, tried := x.reason, c.ver
			var as []int
			res := assignResult{outcome: fit, failed: -1}
			if h.fits && h.ver == c.ver && !c.noShortcuts {
				// Nothing changed since its head was found: it fits as
				// found then.
				as = c.headAssign[h.at : h.at+len(st.Groups)]
			} else {
				as = c.scratchAssign(st)
				res = c.assignment(x, true, as, true)
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
			r = append(r, c.why...)
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
		c.insert(c.cqs[x.cq], x)
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
// valid until the next call).
func (c *Controller) heads(blocked []bool, fair bool) []head {
	clear(c.cycHeads)
	heads := c.cycHeads[:0]
	c.headAssign = c.headAssign[:0]
	c.shareBuf = c.shareBuf[:0]
	for qi, st := range c.cqs {
		if blocked[qi] || st.pendingN == 0 {
			continue
		}
		var first *wl
		for _, b := range st.bucketsL {
			if b.skipped == c.cycles {
				continue
			}
			if x := b.first(); x != nil && (first == nil || less(x, first)) {
				first = x
			}
		}
		if first != nil {
			// A workload known to fail as things stand has no
			// assignment (and does not borrow).
			var as []int
			h := head{x: first, ver: c.ver, at: len(c.headAssign)}
			if first.failedAt != c.ver || c.noShortcuts {
				c.headAssign = slices.Grow(c.headAssign, len(st.Groups))[:h.at+len(st.Groups)]
				as = c.headAssign[h.at:]
				r := c.assignment(first, true, as, false)
				if h.fits, h.borrow = r.outcome == fit, r.borrow; !h.fits {
					as = nil
				}
			}
			if fair {
				h.path, h.shares = c.headShares(first, as)
			}
			heads = append(heads, h)
		}
	}
	c.cycHeads = heads
	return heads
}

// sortHeads puts the heads in the order they are tried: under fair
// sharing by the shares of their sides of their lowest common ancestor,
// otherwise those that do not borrow first; then in queue order.
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
		} else if a.borrow != b.borrow {
			return !a.borrow
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

// AppendUsage is AppendStandings without the queues' Share (left 0):
// what admission's integrals read at every change (no allocation).
func (c *Controller) AppendUsage(dst []Standing) []Standing {
	return c.appendStandings(dst, false)
}

func (c *Controller) appendStandings(dst []Standing, share bool) []Standing {
	n := len(c.cqs) + len(c.lenders)
	out := slices.Grow(dst[:0], n)[:n]
	clear(out)
	for qi, st := range c.cqs {
		o := &out[qi]
		if share {
			o.Share = c.share(st)
		}
		var used, borrowed, nominal int64
		for k, p := range st.gpuUse {
			u, nom := *p, st.gpuNominal[k]
			nominal += nom
			used += u
			borrowed += max(0, u-nom)
		}
		// (Whole numbers: the sum in float64 is the same in any order.)
		o.Nominal, o.Used, o.Demand, o.Borrowed = nominal, used, st.pendingGPUs+used, float64(borrowed)
	}
	for li, n := range c.lenders {
		out[len(c.cqs)+li].Nominal = c.ownGPUs(n)
	}
	// What the tree's queues borrow, per flavor and GPU resource, is lent
	// by those with lendable quota unused (queues, and Cohorts holding
	// quota) in proportion to it.
	for k, members := range c.cohorts {
		lenders := c.lending[k].lenders
		for _, lk := range c.lending[k].keys {
			var borrowed, unused float64
			lendOf := slices.Grow(c.scratchLend[:0], len(members)+len(lenders))[:len(members)+len(lenders)]
			clear(lendOf)
			c.scratchLend = lendOf
			for _, m := range lk.members {
				u := *m.use
				borrowed += float64(max(0, u-m.nominal))
				lendOf[m.i] = float64(min(m.lendable, max(0, m.nominal-u)))
				unused += lendOf[m.i]
			}
			for j, li := range lenders {
				lendOf[len(members)+j] = float64(lendable(c.nodes[c.lenders[li]].own[lk.key]))
				unused += lendOf[len(members)+j]
			}
			if borrowed == 0 || unused == 0 {
				continue
			}
			for i, oi := range members {
				out[oi].Lent += borrowed * lendOf[i] / unused
			}
			for j, li := range lenders {
				out[len(c.cqs)+li].Lent += borrowed * lendOf[len(members)+j] / unused
			}
		}
	}
	return out
}

// lending is what Standings needs of a cohort tree to share out its
// borrowing: its quota-holding Cohorts (indices into c.lenders) and, per
// GPU flavor-resource key in key order, where each member queue (index
// into the tree's members) holds quota for it.
type lending struct {
	lenders []int
	keys    []lendKey
}

type lendKey struct {
	key     int
	members []memberSlot
}

// memberSlot is a member queue's quota for a key: its index among the
// tree's members, its usage cell, nominal and lendable quota.
type memberSlot struct {
	i                 int
	use               *int64
	nominal, lendable int64
}

// buildLending fills c.lending once the queues know their slots.
func (c *Controller) buildLending() {
	c.lending = make([]lending, len(c.cohorts))
	for k, members := range c.cohorts {
		l := &c.lending[k]
		for li, n := range c.lenders {
			if c.rootIndex(n) == k {
				l.lenders = append(l.lenders, li)
			}
		}
		for fi := range c.spec.Flavors {
			for ri, name := range c.resName {
				if !IsGPU(name) {
					continue
				}
				lk := lendKey{key: c.frKey(fi, ri)}
				for i, oi := range members {
					if g, f, r, ok := c.find(c.cqs[oi], fi, name); ok {
						st := c.cqs[oi]
						qt := st.quota[g][f][r]
						lk.members = append(lk.members, memberSlot{i: i, use: &st.usage[g][f][r], nominal: qt.Nominal, lendable: lendable(qt)})
					}
				}
				l.keys = append(l.keys, lk)
			}
		}
	}
}

// Queues are the ClusterQueues, in spec order, then a row "cohort/NAME"
// for each Cohort that holds quota of its own; Cohort names each one's
// tree by its root.
func (c *Controller) Queues() []ClusterQueue {
	out := make([]ClusterQueue, len(c.cqs), len(c.cqs)+len(c.lenders))
	for i, st := range c.cqs {
		out[i] = st.ClusterQueue
		if st.cohort >= 0 {
			out[i].Cohort = c.nodes[c.rootNode[st.cohort]].name
		}
	}
	for _, n := range c.lenders {
		out = append(out, ClusterQueue{Name: "cohort/" + c.nodes[n].name, Cohort: c.nodes[c.rootNode[c.rootIndex(n)]].name, Groups: c.nodes[n].groups})
	}
	return out
}

// QueueIndex is the position of the ClusterQueue a LocalQueue feeds (-1).
func (c *Controller) QueueIndex(localQueue string) int {
	if c.lastCQ >= 0 && localQueue == c.lastLQ {
		return c.lastCQ
	}
	if qi, ok := c.lqIndex(localQueue); ok {
		return qi
	}
	return -1
}

// Covers says whether the ClusterQueue fed by a LocalQueue has quota for
// a resource.
func (c *Controller) Covers(localQueue, resource string) bool {
	qi, ok := c.lqIndex(localQueue)
	if !ok {
		return false
	}
	ri, ok := c.resIndex(resource)
	return ok && c.cqs[qi].groupOf[ri] >= 0
}
