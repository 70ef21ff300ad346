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
// are steered to, and the taints they tolerate there.
type Flavor struct {
	Name        string
	NodeLabels  map[string]string
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
	// Tolerations are the workload's pods' (checked against flavors'
	// nodeTaints).
	Tolerations []cluster.Toleration
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
}

// bucket holds a queue's pending workloads of one shape (priority and
// requests) in queue order: they fit or fail together, so a cycle tries
// only the first of each.
type bucket struct {
	entries []entry
	head    int
	// reason is why the bucket's first workload last failed.
	reason string
}

type entry struct {
	x   *wl
	gen int64
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
	e := entry{x, x.gen}
	live := b.entries[b.head:]
	if n := len(live); n == 0 || !less(x, live[n-1].x) {
		b.entries = append(b.entries, e)
		return
	}
	i := b.head + sort.Search(len(live), func(i int) bool { return less(x, live[i].x) })
	b.entries = slices.Insert(b.entries, i, e)
}

type cqState struct {
	ClusterQueue
	cohort  int
	groupOf []int   // resource index -> group, -1 not covered
	flavors [][]int // group -> flavor indices in Spec.Flavors
	// quota and usage per [group][flavor in group][covered resource]
	quota    [][][]Quota
	usage    [][][]int64
	buckets  map[string]*bucket
	bucketsL []*bucket // in creation order
	admitted []*wl
	// pendingGPUs are the GPUs pending workloads ask for; gpuLend and
	// gpuBorrow (NoLimit: unbounded) sum the queue's lendable and
	// borrowable GPUs over flavors.
	pendingGPUs        int64
	gpuLend, gpuBorrow int64
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
	nodes    []*cnode
	// lenders are the Cohort nodes that hold quota of their own.
	lenders []int
	fair    fairDivision
	wls     map[int32]*wl
	seq     int64
	// evicted wait for the end of the cycle that evicted them.
	evicted []*wl
	// reqSlab is where workloads' per-resource requests are cut from, a
	// block at a time; scratchLenders and scratchLend are Standings'.
	reqSlab        []int64
	scratchLenders []int
	scratchLend    []float64
	// Cycle's scratch.
	cycSkip    map[*bucket]bool
	cycBlocked []bool
	cycHeads   []head
}

// New checks a spec and returns its controller.
func New(spec Spec) (*Controller, error) {
	c := &Controller{spec: spec, res: map[string]int{}, flavor: map[string]int{}, cqByName: map[string]int{}, lq: map[string]int{}, wls: map[int32]*wl{}}
	for i, f := range spec.Flavors {
		if _, dup := c.flavor[f.Name]; dup || f.Name == "" {
			return nil, fmt.Errorf("ResourceFlavor %q: missing or duplicate name", f.Name)
		}
		c.flavor[f.Name] = i
	}
	for qi, q := range spec.ClusterQueues {
		if _, dup := c.cqByName[q.Name]; dup || q.Name == "" {
			return nil, fmt.Errorf("ClusterQueue %q: missing or duplicate name", q.Name)
		}
		c.cqByName[q.Name] = qi
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
		c.cqs = append(c.cqs, st)
	}
	for _, st := range c.cqs {
		st.groupOf = make([]int, len(c.resName))
		for i := range st.groupOf {
			st.groupOf[i] = -1
		}
		for gi, g := range st.Groups {
			for _, r := range g.Covered {
				st.groupOf[c.res[r]] = gi
			}
		}
	}
	if err := c.buildTree(&c.spec); err != nil {
		return nil, err
	}
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
	qi, ok := c.lq[w.Queue]
	if !ok {
		return fmt.Errorf("%w %q", ErrNoQueue, w.Queue)
	}
	if _, dup := c.wls[w.ID]; dup {
		return fmt.Errorf("workload %d submitted twice", w.ID)
	}
	nr := len(c.resName)
	if len(c.reqSlab) < nr {
		c.reqSlab = make([]int64, 256*nr)
	}
	x := &wl{Workload: w, cq: qi, req: c.reqSlab[:nr:nr]}
	c.reqSlab = c.reqSlab[nr:]
	// The requests are summed into req: the caller may reuse its slice.
	x.Requests = nil
	st := c.cqs[qi]
	var missing []string
	for _, r := range w.Requests {
		if r.Amount <= 0 {
			continue
		}
		ri, ok := c.res[r.Resource]
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
	c.wls[w.ID] = x
	c.insert(st, x)
	return nil
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
		k := shapeKey(x)
		b, ok := st.buckets[k]
		if !ok {
			if st.buckets == nil {
				st.buckets = map[string]*bucket{}
			}
			b = &bucket{}
			st.buckets[k] = b
			st.bucketsL = append(st.bucketsL, b)
		}
		x.bucket = b
	}
	x.gen++
	x.pending = true
	st.pendingGPUs += x.gpus
	x.bucket.add(x)
}

func shapeKey(x *wl) string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(int(x.Priority)))
	for _, a := range x.req {
		sb.WriteByte(',')
		sb.WriteString(strconv.FormatInt(a, 10))
	}
	return sb.String()
}

// Finish forgets a workload that completed, failed or was deleted,
// releasing its quota if it was admitted.
func (c *Controller) Finish(id int32) {
	x, ok := c.wls[id]
	if !ok {
		return
	}
	if x.admitted {
		c.release(x)
	} else if x.pending {
		x.pending = false // its bucket entry goes stale
		c.cqs[x.cq].pendingGPUs -= x.gpus
	}
	delete(c.wls, id)
}

// Evict takes back an admitted workload's quota; it is then neither
// admitted nor pending until Requeue (waitForPodsReady's eviction).
func (c *Controller) Evict(id int32) {
	if x, ok := c.wls[id]; ok && x.admitted {
		c.release(x)
		x.reason = "Evicted: the workload did not reach PodsReady within waitForPodsReady's timeout"
	}
}

// Withdraw takes a pending workload out of the queue (not admitted, not
// pending) until Requeue: a preempted workload whose pods are still
// stopping.
func (c *Controller) Withdraw(id int32) {
	x, ok := c.wls[id]
	if !ok || x.admitted {
		return
	}
	if i := slices.Index(c.evicted, x); i >= 0 {
		c.evicted = slices.Delete(c.evicted, i, i+1)
		return
	}
	if x.pending {
		x.pending = false // its bucket entry goes stale
		c.cqs[x.cq].pendingGPUs -= x.gpus
	}
}

// Requeue makes an evicted workload pending again, queued as created at
// created.
func (c *Controller) Requeue(id int32, created int64) {
	x, ok := c.wls[id]
	if !ok || x.admitted || x.pending {
		return
	}
	x.Created = created
	c.insert(c.cqs[x.cq], x)
}

// Admitted says whether a workload holds quota.
func (c *Controller) Admitted(id int32) bool {
	x, ok := c.wls[id]
	return ok && x.admitted
}

// Reason is why a pending workload was not admitted at the last cycle
// (or, if it was never tried, why the first workload of its shape was not).
func (c *Controller) Reason(id int32) string {
	if x, ok := c.wls[id]; ok {
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

func (c *Controller) charge(x *wl, sign int64) {
	for g, f := range x.assign {
		if f >= 0 {
			c.chargeGroup(x, g, sign)
		}
	}
}

func (c *Controller) release(x *wl) {
	c.charge(x, -1)
	x.admitted = false
	st := c.cqs[x.cq]
	last := st.admitted[len(st.admitted)-1]
	st.admitted[x.admIdx] = last
	last.admIdx = x.admIdx
	st.admitted = st.admitted[:len(st.admitted)-1]
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
	avail := c.available(st.node, c.frKey(st.flavors[g][f], c.res[st.Groups[g].Covered[r]]))
	if extra > avail {
		return false, extra - avail
	}
	return true, 0
}

// assignment finds a flavor per group for x, in order, as the queue's
// flavorFungibility says. borrow reports whether it borrows; ok false
// gives a reason and the first group that did not fit (a group stopped at
// a flavor where preemption would make room also fails, so the caller
// preempts there).
func (c *Controller) assignment(x *wl, allowBorrow bool) (assign []int, borrow bool, failed int, reason string) {
	st := c.cqs[x.cq]
	assign = make([]int, len(st.Groups))
	failed = -1
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
		var why []string
		borrowAt := -1 // the first flavor that fits by borrowing, when trying on
		stopped := false
		for f := range st.flavors[g] {
			if t, bad := untolerated(&c.spec.Flavors[st.flavors[g][f]], x.Tolerations); bad {
				why = append(why, fmt.Sprintf("untolerated taint {%s} in flavor %s", t, c.spec.Flavors[st.flavors[g][f]].Name))
				continue
			}
			ok, b := true, false
			var shorts []string
			for r, name := range st.Groups[g].Covered {
				a := x.req[c.res[name]]
				if a == 0 {
					continue
				}
				fit, short := c.fits(st, g, f, r, a, allowBorrow)
				if !fit {
					ok = false
					shorts = append(shorts, fmt.Sprintf("%s (%s more needed)", name, Amount(name, short)))
					continue
				}
				if st.usage[g][f][r]+a > st.quota[g][f][r].Nominal {
					b = true
				}
			}
			if !ok {
				why = append(why, fmt.Sprintf("insufficient unused quota in flavor %s for %s", c.spec.Flavors[st.flavors[g][f]].Name, strings.Join(shorts, ", ")))
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
			borrow = borrow || b
			break
		}
		if assign[g] < 0 && borrowAt >= 0 && !stopped {
			assign[g] = borrowAt
			borrow = true
		}
		if assign[g] < 0 {
			if failed < 0 {
				failed = g
			}
			if len(why) == 0 {
				why = append(why, "no flavor")
			}
			reason = "couldn't assign flavors: " + strings.Join(why, "; ")
		}
	}
	if failed >= 0 {
		return nil, false, failed, reason
	}
	return assign, borrow, -1, ""
}

func (c *Controller) admit(x *wl, assign []int) Decision {
	x.assign = assign
	x.admitted = true
	c.seq++
	x.seq = c.seq
	x.reason = ""
	st := c.cqs[x.cq]
	x.pending = false // its bucket entry goes stale
	st.pendingGPUs -= x.gpus
	x.admIdx = len(st.admitted)
	st.admitted = append(st.admitted, x)
	c.charge(x, +1)
	d := Decision{ID: x.ID}
	for g, f := range assign {
		if f >= 0 {
			d.Flavors = append(d.Flavors, c.flavorIndex(st, g, f))
		}
	}
	return d
}

type head struct {
	x      *wl
	borrow bool
	// path and shares: the queue's tree path and the shares along it with
	// the workload admitted (fair sharing only).
	path   []int
	shares []int64
}

// Cycle admits what fits, preempting where the queues' policies allow,
// until nothing more can be admitted; it returns the decisions in order.
// Workloads it evicts wait until the next cycle.
func (c *Controller) Cycle() []Decision {
	var out []Decision
	// skip: buckets tried this cycle and set aside. It, blocked and heads
	// are the controller's scratch, cleared here.
	if c.cycSkip == nil {
		c.cycSkip = map[*bucket]bool{}
	}
	skip := c.cycSkip
	clear(skip)
	blocked := slices.Grow(c.cycBlocked[:0], len(c.cqs))[:len(c.cqs)]
	clear(blocked)
	c.cycBlocked = blocked
	fair := c.spec.FairSharing != nil
	// blockAdmission: one admission, then none until its pods are ready
	// (the caller holds the next cycle back).
	block := c.spec.WaitForPodsReady != nil && c.spec.WaitForPodsReady.BlockAdmission
loop:
	for {
		clear(c.cycHeads)
		heads := c.cycHeads[:0]
		for qi, st := range c.cqs {
			if blocked[qi] {
				continue
			}
			var first *wl
			for _, b := range st.bucketsL {
				if skip[b] {
					continue
				}
				if x := b.first(); x != nil && (first == nil || less(x, first)) {
					first = x
				}
			}
			if first != nil {
				as, bw, _, _ := c.assignment(first, true)
				h := head{x: first, borrow: bw}
				if fair {
					h.path, h.shares = c.headShares(first, as)
				}
				heads = append(heads, h)
			}
		}
		c.cycHeads = heads
		if len(heads) == 0 {
			break
		}
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
		for _, h := range heads {
			x := h.x
			st := c.cqs[x.cq]
			if !x.pending {
				continue
			}
			if strings.Contains(x.reason, ": resource ") && strings.HasSuffix(x.reason, " unavailable") {
				c.setAside(st, x, skip, blocked)
				continue
			}
			before := x.reason
			if assign, _, _, why := c.assignment(x, true); assign != nil {
				d := c.admit(x, assign)
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
			} else {
				x.reason = "ClusterQueue " + st.Name + ": " + why
				x.bucket.reason = x.reason
			}
			if ds := c.preempt(x); ds != nil {
				out = append(out, ds...)
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
			c.setAside(st, x, skip, blocked)
		}
	}
	for _, x := range c.evicted {
		c.insert(c.cqs[x.cq], x)
	}
	c.evicted = c.evicted[:0]
	return out
}

func (c *Controller) setAside(st *cqState, x *wl, skip map[*bucket]bool, blocked []bool) {
	if st.Strategy == StrictFIFO {
		blocked[x.cq] = true
		return
	}
	skip[x.bucket] = true
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

// untolerated finds a flavor taint the tolerations do not cover.
func untolerated(f *Flavor, tols []cluster.Toleration) (string, bool) {
	for _, t := range f.NodeTaints {
		if t.Effect != cluster.NoSchedule && t.Effect != cluster.NoExecute {
			continue
		}
		ok := false
		for _, tol := range tols {
			if tol.Tolerates(t) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect), true
		}
	}
	return "", false
}

// Amount writes an amount in the simulator's units the Kubernetes way:
// cpu from milli-CPU, memory from MiB, counts as they are.
func Amount(resource string, v int64) string {
	switch {
	case resource == "cpu" && v%1000 == 0:
		return fmt.Sprint(v / 1000)
	case resource == "cpu":
		return fmt.Sprintf("%dm", v)
	case resource == "memory" && v%1024 == 0:
		return fmt.Sprintf("%dGi", v/1024)
	case resource == "memory":
		return fmt.Sprintf("%dMi", v)
	}
	return fmt.Sprint(v)
}

// IsGPU says whether a resource counts as GPUs in Standing.
func IsGPU(resource string) bool { return strings.HasPrefix(resource, "nvidia.com/") }

// Standings returns every ClusterQueue's standing, in spec order, then
// each quota-holding Cohort's (as Queues lists them).
func (c *Controller) Standings() []Standing { return c.AppendStandings(nil) }

// AppendStandings is Standings written over dst's array when it has room
// (admission's integrals take them at every change: no allocation).
func (c *Controller) AppendStandings(dst []Standing) []Standing {
	n := len(c.cqs) + len(c.lenders)
	out := slices.Grow(dst[:0], n)[:n]
	clear(out)
	for qi, st := range c.cqs {
		out[qi].Share = c.share(st)
		out[qi].Demand = st.pendingGPUs
		for g, grp := range st.Groups {
			for f := range st.flavors[g] {
				for r, name := range grp.Covered {
					if !IsGPU(name) {
						continue
					}
					qt, u := st.quota[g][f][r], st.usage[g][f][r]
					out[qi].Nominal += qt.Nominal
					out[qi].Used += u
					out[qi].Demand += u
					out[qi].Borrowed += float64(max(0, u-qt.Nominal))
				}
			}
		}
	}
	for li, n := range c.lenders {
		out[len(c.cqs)+li].Nominal = c.ownGPUs(n)
	}
	// What the tree's queues borrow, per flavor and GPU resource, is lent
	// by those with lendable quota unused (queues, and Cohorts holding
	// quota) in proportion to it.
	for k, members := range c.cohorts {
		lenders := c.scratchLenders[:0]
		for li, n := range c.lenders {
			if c.rootIndex(n) == k {
				lenders = append(lenders, li)
			}
		}
		for fi := range c.spec.Flavors {
			for ri, name := range c.resName {
				if !IsGPU(name) {
					continue
				}
				key := c.frKey(fi, ri)
				var borrowed, unused float64
				lendOf := slices.Grow(c.scratchLend[:0], len(members)+len(lenders))[:len(members)+len(lenders)]
				clear(lendOf)
				c.scratchLend = lendOf
				for i, oi := range members {
					o := c.cqs[oi]
					og, of, or, ok := c.find(o, fi, name)
					if !ok {
						continue
					}
					qt, u := o.quota[og][of][or], o.usage[og][of][or]
					borrowed += float64(max(0, u-qt.Nominal))
					lendOf[i] = float64(min(lendable(qt), max(0, qt.Nominal-u)))
					unused += lendOf[i]
				}
				for j, li := range lenders {
					lendOf[len(members)+j] = float64(lendable(c.nodes[c.lenders[li]].own[key]))
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
		c.scratchLenders = lenders
	}
	return out
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
	if qi, ok := c.lq[localQueue]; ok {
		return qi
	}
	return -1
}

// Covers says whether the ClusterQueue fed by a LocalQueue has quota for
// a resource.
func (c *Controller) Covers(localQueue, resource string) bool {
	qi, ok := c.lq[localQueue]
	if !ok {
		return false
	}
	ri, ok := c.res[resource]
	return ok && c.cqs[qi].groupOf[ri] >= 0
}
