package admission

import (
	"fmt"
	"slices"
	"sort"
)

// The queue manager (Kueue's pkg/queue.Manager): the pending workloads of
// every ClusterQueue in queue order, the index of every workload the
// controller knows by id, and what workloads are cut from. It decides
// nothing: the cycle asks it for each queue's head and tells it what left
// the queue.

// queueManager holds the pending side of admission.
type queueManager struct {
	// lq maps a LocalQueue to its ClusterQueue's index.
	lq map[string]int
	lookups
	wls wlIndex
	// pending is each ClusterQueue's pending workloads, in spec order.
	pending []pendingQueue
	slabs
	// pver counts changes of pending demand (Controller.Version).
	pver uint64
	// busy has a bit set for each ClusterQueue with pending workloads
	// (pendingQueue.n > 0): a cycle looks for heads in those only.
	busy []uint64
	// fresh are the workloads queued since the last cycle
	// (Controller.reasonFresh).
	fresh []*wl
	// touch is told of every queue whose pending workloads change (the
	// usage view).
	touch *touchSet
}

// pendingQueue is one ClusterQueue's pending workloads, in buckets of one
// shape.
type pendingQueue struct {
	buckets  map[uint64]*bucket // by shape hash
	bucketsL []*bucket          // in creation order
	// gpus are the GPUs its pending workloads ask for, n how many there
	// are (a cycle skips a queue with none).
	gpus int64
	n    int
	// sticky is the workload that issued preemptions at the head of a
	// BestEffortFIFO queue: it stays the head, ahead of workloads of
	// higher priority and of those its preemptions brought back from
	// being set aside, until it is admitted or leaves the queue (Kueue's
	// stickyWorkload, set when the scheduler requeues a head with
	// RequeueReasonPendingPreemption; nil: none).
	sticky *wl
	// alone counts the workloads a Cycle (aloneCycle: Controller.cycles)
	// set aside one at a time (Controller.setAside).
	aloneCycle uint64
	alone      int
}

type wl struct {
	Workload
	cq       int
	class    int32   // its flavors' verdicts (cqState.classes)
	req      []int64 // per resource index
	gpus     int64   // of every nvidia.com/ resource
	admitted bool
	assign   []int // per group of its queue: flavor index in the group, -1 unused (sets: per PodSet and group, assign[s*groups+g])
	// sets are a workload of several PodSets' PodSets (nil: one), each
	// assigned its own flavors (flavorAssigner.assignSets).
	sets []podSet
	seq  int64 // admission order
	// reservedSec is when it last reserved quota, in whole seconds (the
	// resolution of Kueue's condition timestamps).
	reservedSec int64
	reason      string
	// Pending: its bucket and the generation of its live entry there;
	// admitted: its index in the queue's admitted list.
	bucket  *bucket
	gen     int64
	pending bool
	admIdx  int
	// asideAt is, plus one, the release epoch at which a BestEffortFIFO
	// cycle set it aside alone (bucket.aside).
	asideAt uint64
	// scan is where its last flavor search stopped (Kueue's
	// LastTriedFlavorIdx, kept under FlavorFungibilityPreserveScanProgress):
	// per entry of its assignment, the flavor index in the group the
	// search stopped at, -1 where the next search starts from the first
	// (it went through the last flavor, or found none); scanOn says it is
	// kept, scanRound and scanGen the round (Controller.rounds) and its
	// queue's generation (cqState.gen) it was recorded at.
	scan      []int
	scanOn    bool
	scanRound uint64
	scanGen   uint64
	// failedAt is the controller's state (snapshot.ver) at which the
	// workload was last tried and neither admitted nor made room for by
	// preemption: while the state stays the same, trying it again would
	// fail the same way (0: not known).
	failedAt uint64
	// resVer is the state (snapshot.ver) at which its reservation as a
	// head with nothing to preempt was worked out (nominateReserve):
	// resAssign and resLevel, resLevel -1 where it reserves nothing.
	resVer    uint64
	resLevel  int
	resAssign []int
}

// podSet is one PodSet of a workload of several: its requests per
// resource index and its class (which flavors its pods may go to).
type podSet struct {
	req   []int64
	class int32
}

func (a podSet) equal(b podSet) bool { return a.class == b.class && slices.Equal(a.req, b.req) }

// reqAt is what assign[i] of an assignment of x carries: x's requests
// where the assignment has one entry per group (every PodSet on one
// flavor per group), else PodSet i/groups's.
func (x *wl) reqAt(assign []int, groups, i int) []int64 {
	if len(assign) <= groups {
		return x.req
	}
	return x.sets[i/groups].req
}

// alen is the length of x's assignments in a queue of groups resource
// groups: one flavor per group, or per PodSet and group.
func (x *wl) alen(groups int) int { return groups * max(1, len(x.sets)) }

// uses says whether x, admitted, holds quota of resource ri on group g's
// flavor f.
func (x *wl) uses(groups, g, f, ri int) bool {
	for i := g; i < len(x.assign); i += groups {
		if x.assign[i] == f && x.reqAt(x.assign, groups, i)[ri] > 0 {
			return true
		}
	}
	return false
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
	sets  []podSet // a workload of several PodSets: each one's requests and class
	next  *bucket
	// skipped is the cycle (Controller.cycles) that set the bucket aside.
	skipped uint64
	// aside is, plus one, the release epoch of its queue's cohort tree
	// (Controller.epoch) when a BestEffortFIFO cycle last set one of its
	// workloads aside as inadmissible; asideEnd is how far, in entries,
	// its workloads are aside at that epoch: they stay aside, over
	// cycles, until quota is released in the tree (Kueue's
	// inadmissibleWorkloads, moved back to the heap by
	// QueueAssociatedInadmissibleWorkloadsAfter when a workload of the
	// cohort finishes, is evicted or goes back to pending; an admission
	// moves nothing back). A workload set aside alone carries the epoch
	// too (wl.asideAt). A workload queued inside the aside entries (one
	// older than some of them: it comes back with a release anyway) is
	// aside with them. aside 0: never set aside.
	aside    uint64
	asideEnd int
	// hashes are the equivalences (Workload.Equiv) set aside whole at epoch
	// aside (Kueue's hashToBulkMoveReason, cleared when quota is released
	// in the cohort tree): a workload of the bucket with one of them is
	// aside, pending before or queued since.
	hashes []uint64
	// failVer is the state (snapshot.ver) at which a workload of the
	// bucket (created at failCreated, id failID) was last tried and
	// neither admitted nor made room for: those of its shape after it in
	// queue order would fail the same way while the state stays (a newer
	// preemptor may preempt no more than an older one; an older one, as
	// a sticky head's elders are, may).
	failVer     uint64
	failCreated int64
	failID      int32
}

// failed records that x, of the bucket, failed at state ver.
func (b *bucket) failed(x *wl, ver uint64) {
	b.failVer, b.failCreated, b.failID = ver, x.Created, x.ID
}

// failedBefore says whether a workload of the bucket before x in queue
// order failed at state ver.
func (b *bucket) failedBefore(x *wl, ver uint64) bool {
	return ver != 0 && b.failVer == ver && (x.Created > b.failCreated || (x.Created == b.failCreated && x.ID > b.failID))
}

// entry is a workload in a bucket, with its generation and queue order
// (less's keys) when added: a stale entry's workload may since have been
// requeued at another time, or finished and reused for another workload
// (queueManager.free), and the entries must stay in the order a search
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
		b.entries, b.head, b.asideEnd = b.entries[:0], 0, 0
	}
	return nil
}

// firstFrom is the bucket's first live workload not set aside at epoch
// aside (0: first), or nil.
func (b *bucket) firstFrom(aside uint64) *wl {
	x := b.first()
	if x == nil || aside == 0 || b.aside != aside {
		return x
	}
	i := max(b.head, b.asideEnd)
	for ; i < len(b.entries); i++ {
		e := b.entries[i]
		if e.x.pending && e.x.gen == e.gen && e.x.asideAt != aside && !slices.Contains(b.hashes, e.x.Equiv) {
			break
		}
	}
	b.asideEnd = i // everything before is gone or aside
	if i == len(b.entries) {
		return nil
	}
	return b.entries[i].x
}

// isAside says whether x, a workload of the bucket, is set aside at
// epoch aside (0: none is).
func (b *bucket) isAside(x *wl, aside uint64) bool {
	if aside == 0 || b.aside != aside {
		return false
	}
	return x.asideAt == aside || b.asideEnd >= len(b.entries) || slices.Contains(b.hashes, x.Equiv)
}

// setAside sets x, the bucket's first workload not yet aside at epoch
// aside, aside alone; alike: with every workload of the bucket Kueue's
// scheduling hash finds alike, pending or queued before the epoch ends
// (SchedulingEquivalenceHashing); all: with every other workload of the
// bucket.
func (b *bucket) setAside(x *wl, aside uint64, alike, all bool) {
	if b.aside != aside {
		b.aside, b.asideEnd = aside, b.head
		b.hashes = b.hashes[:0]
	}
	x.asideAt = aside
	if alike && !slices.Contains(b.hashes, x.Equiv) {
		b.hashes = append(b.hashes, x.Equiv)
	}
	if all {
		b.asideEnd = len(b.entries)
	}
}

func (b *bucket) add(x *wl) {
	b.first()
	if b.head > 64 && b.head > len(b.entries)/2 {
		n := copy(b.entries, b.entries[b.head:])
		b.asideEnd = max(0, b.asideEnd-b.head)
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
	if i < b.asideEnd {
		b.asideEnd++ // the entries aside stay aside (and x with them)
	}
}

// lookups remember the last LocalQueue looked up, which a run's jobs
// mostly repeat.
type lookups struct {
	// lastLQ and lastCQ: the LocalQueue last submitted to and its queue.
	lastLQ string
	lastCQ int
	// lqNames and lqCQ list the LocalQueues and their queues when there
	// are few (lookup scans them: cheaper than hashing a name each job).
	lqNames []string
	lqCQ    []int
}

// slabs are what a controller's workloads are cut from.
type slabs struct {
	// reqSlab and wlSlab are where workloads' per-resource requests and
	// the workloads themselves are cut from, a block at a time.
	reqSlab []int64
	wlSlab  []wl
	// free holds finished workloads for Submit to reuse (with their
	// requests' and assignment's arrays): stale bucket entries may point
	// to them, but a reused workload's generation goes on from where it
	// was, so they stay stale. noReuse turns it off (tests).
	free    []*wl
	noReuse bool
}

// smallScan is how many names a lookup scans rather than hashes.
const smallScan = 8

// lqIndex is the queue a LocalQueue feeds.
func (c *queueManager) lqIndex(name string) (int, bool) {
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

// insert queues x (new, requeued or back from an eviction) in its queue.
func (c *queueManager) insert(x *wl) {
	st := &c.pending[x.cq]
	if x.bucket == nil {
		h := shapeHash(x.Priority, x.class, x.req)
		b := st.buckets[h]
		for b != nil && (b.prio != x.Priority || b.class != x.class || !slices.Equal(b.req, x.req) || !slices.EqualFunc(b.sets, x.sets, podSet.equal)) {
			b = b.next
		}
		if b == nil {
			if st.buckets == nil {
				st.buckets = map[uint64]*bucket{}
			}
			b = &bucket{prio: x.Priority, req: slices.Clone(x.req), class: x.class, sets: x.sets, next: st.buckets[h]}
			st.buckets[h] = b
			st.bucketsL = append(st.bucketsL, b)
		}
		x.bucket = b
	}
	x.gen++
	x.pending = true
	x.failedAt = 0
	x.asideAt = 0
	c.fresh = append(c.fresh, x)
	st.gpus += x.gpus
	st.n++
	if st.n == 1 {
		c.busy[x.cq>>6] |= 1 << (x.cq & 63)
	}
	c.touch.mark(x.cq)
	c.pver++
	x.bucket.add(x)
}

// shapeHash hashes a shape (priority, class and requests) for
// pendingQueue.buckets (FNV-1a over 64-bit words; collisions are chained).
func shapeHash(prio, class int32, req []int64) uint64 {
	h := uint64(14695981039346656037)
	h = (h ^ uint64(uint32(prio))) * 1099511628211
	h = (h ^ uint64(uint32(class))) * 1099511628211
	for _, a := range req {
		h = (h ^ uint64(a)) * 1099511628211
	}
	return h
}

// dequeue takes x out of its queue: its bucket entry goes stale.
func (c *queueManager) dequeue(x *wl) {
	x.pending = false
	st := &c.pending[x.cq]
	if st.sticky == x {
		st.sticky = nil // Kueue clears it when the workload leaves the queue
	}
	st.gpus -= x.gpus
	st.n--
	if st.n == 0 {
		c.busy[x.cq>>6] &^= 1 << (x.cq & 63)
	}
	c.touch.mark(x.cq)
}

// withdraw takes x out of its queue, and the pending demand changes
// (dequeue's admission changes the usage instead).
func (c *queueManager) withdraw(x *wl) {
	c.dequeue(x)
	c.pver++
}

// newWorkload cuts a workload for w in queue qi over nr resources, from
// a finished one when there is one, else from the slabs.
func (c *queueManager) newWorkload(w Workload, qi, nr int) *wl {
	var x *wl
	if n := len(c.free); n > 0 {
		x = c.free[n-1]
		c.free[n-1] = nil
		c.free = c.free[:n-1]
		clear(x.req)
		*x = wl{Workload: w, cq: qi, req: x.req, assign: x.assign[:0], resAssign: x.resAssign[:0], scan: x.scan[:0], gen: x.gen}
		return x
	}
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
	return x
}

// forget drops a finished workload, keeping it for reuse.
func (c *queueManager) forget(x *wl) {
	c.wls.del(x.ID)
	if !c.noReuse {
		c.free = append(c.free, x)
	}
}

// head is queue qi's first pending workload among the buckets not set
// aside in this cycle (nil: none).
func (c *queueManager) head(qi int, cycle uint64) *wl { return c.headAt(qi, cycle, 0) }

// headAt is head, also passing over the buckets set aside at release
// epoch aside-1 (aside 0: none).
func (c *queueManager) headAt(qi int, cycle, aside uint64) *wl {
	pq := &c.pending[qi]
	if x := pq.sticky; x != nil && x.pending && x.bucket.skipped != cycle && !x.bucket.isAside(x, aside) {
		return x
	}
	var first *wl
	for _, b := range pq.bucketsL {
		if b.skipped == cycle {
			continue
		}
		if x := b.firstFrom(aside); x != nil && (first == nil || less(x, first)) {
			first = x
		}
	}
	return first
}

// init indexes the LocalQueues by name to their ClusterQueues' indices.
func (c *queueManager) init(lqs []LocalQueue, cqs []ClusterQueue) error {
	c.lq, c.lastCQ = map[string]int{}, -1
	c.pending = make([]pendingQueue, len(cqs))
	c.busy = make([]uint64, (len(cqs)+63)/64)
	byName := make(map[string]int, len(cqs))
	for qi, q := range cqs {
		byName[q.Name] = qi
	}
	for _, l := range lqs {
		qi, ok := byName[l.ClusterQueue]
		if !ok {
			return fmt.Errorf("LocalQueue %s points at ClusterQueue %q, which is not defined", l.Name, l.ClusterQueue)
		}
		if _, dup := c.lq[l.Name]; dup {
			return fmt.Errorf("LocalQueue %q is defined twice", l.Name)
		}
		c.lq[l.Name] = qi
	}
	if len(lqs) <= smallScan {
		for _, l := range lqs {
			c.lqNames = append(c.lqNames, l.Name)
			c.lqCQ = append(c.lqCQ, c.lq[l.Name])
		}
	}
	return nil
}
