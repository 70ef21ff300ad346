package admission

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Kueue nominates every queue's head against the state the cycle starts
// from and, admitting them in turn, only checks that a head's nominated
// flavors still fit: one that no longer fits is skipped and nominated
// afresh in the next cycle, against the next heads of the other queues.
// Queue a (cohort org) has 2 reserved and 2 spot GPUs, queue b none and
// borrows a's. Pending: b's workload 1, a's 2 and 3, 2 GPUs each. Cycle
// 1: a's 2 takes reserved without borrowing; b's 1, nominated to borrow
// reserved too, is tried after it (borrowers last) and no longer fits.
// Cycle 2: a's 3 (spot, its own) goes before b's 1 (spot, borrowing) and
// takes spot; b's 1 waits. Assigning b's 1 afresh in cycle 1 would have
// given it spot, and a's 3 nothing.
func TestCycleAdmitsTheNominatedFlavorsOnly(t *testing.T) {
	c := fungible(t, twoFlavors("a", "org", 2, 2), twoFlavors("b", "org", 0, 0))
	submit(t, c, 1, "b", 2, 0)
	submit(t, c, 2, "a", 2, 0)
	submit(t, c, 3, "a", 2, 0)
	ds := settle(c)
	require.Equal(t, "reserved", flavorOf(t, c, 2, ds))
	require.Equal(t, "spot", flavorOf(t, c, 3, ds))
	require.False(t, c.Admitted(1))
}

// A BestEffortFIFO workload that did not fit stays set aside, over
// cycles, until quota is released in its cohort tree: an admission does
// not bring it back (Kueue's inadmissible workloads are moved back to the
// queue when a workload of the cohort finishes, is evicted or requeued).
// Queue q holds 4 GPUs; workload 1 (3 GPUs) runs; 2 (2 GPUs) finds 1 free
// ("1 more needed") and is set aside; 3 (1 GPU) is admitted. The next
// cycle does not try 2 again (it would now find 0 free: "2 more
// needed"); once 1 finishes, 2 is tried and admitted.
func TestCycleInadmissibleUntilARelease(t *testing.T) {
	c := controller(t, cq("q", "", q(4)))
	submit(t, c, 1, "q", 3, 0)
	a, _ := cycle(c)
	require.Equal(t, []int32{1}, a)
	submit(t, c, 2, "q", 2, 0)
	a, _ = cycle(c)
	require.Empty(t, a)
	require.Contains(t, c.Reason(2), "(1 more needed)")
	submit(t, c, 3, "q", 1, 0)
	a, _ = cycle(c)
	require.Equal(t, []int32{3}, a)
	require.Empty(t, settle(c))
	require.Contains(t, c.Reason(2), "(1 more needed)")
	c.Finish(1)
	a, _ = cycle(c)
	require.Equal(t, []int32{2}, a)
}

// A BestEffortFIFO head that issued preemptions stays its queue's head
// (Kueue's sticky workload) until it is admitted: its victims' eviction
// brings back every workload set aside in the cohort tree, those of
// higher priority in its own queue included, and they do not go before it.
// Queue a (cohort org) holds 1 GPU and reclaims; b holds none and has
// borrowed a's GPU for workload 1. Pending in a: 2 (priority 100, 4 GPUs:
// more than the cohort has) and 3 (priority 0, 1 GPU). Cycle 1: a's head
// 2 does not fit and steps aside; 3 preempts 1. Cycle 2 (1 is back, 2
// with it): a's head is 3, which fits without borrowing and goes before
// b's 1 (borrowing), which then no longer fits. Once: 1 preempted, 3
// admitted, 1 waiting. With 2 a's head in cycle 2, b's 1 took the GPU back
// and 3 preempted it again, cycle after cycle.
func TestCyclePreemptorStaysTheHead(t *testing.T) {
	reclaim := func(c *ClusterQueue) { c.Preempt.ReclaimWithinCohort = Any }
	c := controller(t, cq("a", "org", q(1), reclaim), cq("b", "org", q(0)))
	submit(t, c, 1, "b", 1, 0)
	a, _ := cycle(c)
	require.Equal(t, []int32{1}, a)
	submit(t, c, 2, "a", 4, 100)
	submit(t, c, 3, "a", 1, 0)
	ds := c.Cycle()
	a, p := ids(ds)
	require.Empty(t, a)
	require.Equal(t, []int32{1}, p)
	require.True(t, c.Again())
	a, p = ids(c.Cycle())
	require.Equal(t, []int32{3}, a)
	require.Empty(t, p)
	require.False(t, c.Again())
	require.False(t, c.Admitted(1))
	require.False(t, c.Admitted(2))

	// StrictFIFO has no sticky head: 2 blocks a, and 3 never preempts.
	strict := func(c *ClusterQueue) { c.Strategy = StrictFIFO }
	c = controller(t, cq("a", "org", q(1), reclaim, strict), cq("b", "org", q(0)))
	submit(t, c, 1, "b", 1, 0)
	cycle(c)
	submit(t, c, 2, "a", 4, 100)
	submit(t, c, 3, "a", 1, 0)
	a, p = cycle(c)
	require.Empty(t, a)
	require.Empty(t, p)
}

// A head that needs preemption is ordered by how far up it borrows once
// its targets are gone (Kueue's flavor assigner takes the preemption
// oracle's borrowAfterPreemptions into Assignment.Borrowing), not as one
// that does not borrow. Cohort org: a holds 3 GPUs and preempts lower
// priorities in itself, b holds 1. a runs 1 (priority 0) and 2
// (priority 10), 1 GPU each: 2 of the cohort's 4 used. Pending, priority
// 10: b's 3 (2 GPUs, created 3) fits borrowing 1; a's 4 (3 GPUs,
// created 4) fits only with 1 preempted, a then at 4 of its 3: borrowing
// too. Both borrow from org: the older, 3, goes first and takes the 2
// free GPUs; 4 then no longer fits and 1 is not preempted. Ordered as if
// it did not borrow, 4 went first and preempted 1 for nothing: 3 was
// admitted in the next cycle all the same, and 4 waited.
func TestCyclePreemptorOrderedByItsBorrowing(t *testing.T) {
	within := func(c *ClusterQueue) { c.Preempt.WithinClusterQueue = LowerPriority }
	c := controller(t, cq("a", "org", q(3), within), cq("b", "org", q(1)))
	submit(t, c, 1, "a", 1, 0)
	submit(t, c, 2, "a", 1, 10)
	a, _ := cycle(c)
	require.ElementsMatch(t, []int32{1, 2}, a)
	submit(t, c, 3, "b", 2, 10)
	submit(t, c, 4, "a", 3, 10)
	a, p := cycle(c)
	require.Equal(t, []int32{3}, a)
	require.Empty(t, p)
	require.True(t, c.Admitted(1))
	require.False(t, c.Admitted(4))
}

// A head that Kueue's flavor assigner finds room for only by preemption,
// with nothing it may preempt, reserves quota for the rest of the cycle
// unless its queue reclaims from any priority (Kueue's
// resourcesToReserve: where it borrows, its whole request within its
// borrowing limit). Cohort org: a (2 GPUs, StrictFIFO, preempts lower
// priorities in itself, reclaims never) runs 1 (priority 10, 1 GPU); b (2
// GPUs) runs 2 (2 GPUs): 3 of 4 used. Pending: a's 3 (priority 10, 2
// GPUs) has 1 free: within a's nominal quota, so preemption is allowed,
// but 1 has its priority: no candidates; with 3 GPUs a would borrow, so
// it reserves all 2. b's 4 (1 GPU), nominated to borrow the free GPU,
// goes after 3 (same borrowing height, lower priority) and no longer
// fits. StrictFIFO keeps 3 the head: 4 waits until 1 ends, and then 3 is
// admitted. BestEffortFIFO sets 3 aside after its cycle, and 4 is
// admitted in the next; reclaimWithinCohort Any reserves nothing.
func TestCycleReservesForAPreemptorWithoutTargets(t *testing.T) {
	within := func(c *ClusterQueue) { c.Preempt.WithinClusterQueue = LowerPriority }
	strict := func(c *ClusterQueue) { c.Strategy = StrictFIFO }
	reclaimAny := func(c *ClusterQueue) { c.Preempt.ReclaimWithinCohort = Any }
	run := func(opts ...func(*ClusterQueue)) *Controller {
		c := controller(t, cq("a", "org", q(2), opts...), cq("b", "org", q(2)))
		submit(t, c, 1, "a", 1, 10)
		submit(t, c, 2, "b", 2, 0)
		a, _ := cycle(c)
		require.ElementsMatch(t, []int32{1, 2}, a)
		submit(t, c, 3, "a", 2, 10)
		submit(t, c, 4, "b", 1, 0)
		return c
	}
	c := run(within, strict)
	a, p := cycle(c)
	require.Empty(t, a)
	require.Empty(t, p)
	a, _ = cycle(c)
	require.Empty(t, a)
	c.Finish(1)
	a, _ = cycle(c)
	require.Equal(t, []int32{3}, a)
	require.False(t, c.Admitted(4))

	for _, opts := range [][]func(*ClusterQueue){{within}, {within, strict, reclaimAny}} {
		c = run(opts...)
		a, p = cycle(c)
		require.Equal(t, []int32{4}, a)
		require.Empty(t, p)
	}
}

// Kueue's BestEffortFIFO queue sets aside the workload it popped
// (ClusterQueue.requeueIfNotPresent, pkg/cache/queue/cluster_queue.go)
// and, with SchedulingEquivalenceHashing (on by default since v0.18),
// every pending workload of its queue with the same scheduling hash
// (handleInadmissibleHash); without it, alone: each cycle pops the next
// head of every queue (Manager.heads), of the same shape or not. Cohort
// org: a and b, 2 GPUs each, no preemption. Queue a: 1 and 2 (priority
// 5, 8 GPUs: never fit in the tree's 4), 3 (priority 1, 2 GPUs); queue
// b: 4 and 5 (2 GPUs each). Cycle 1: heads 1 (no fit) and 4 (fits in b's
// quota): 4 is admitted. With the gate on, 2 (alike: Equiv 0 both) goes
// aside with 1: cycle 2's heads are 3, which fits in a's quota, and 5,
// which would borrow a's 2 GPUs: 3 goes first (it does not borrow) and
// takes them; 5 waits. With the gate off, or 2 told apart by its Equiv,
// cycle 2's heads are 2 (no fit) and 5, which borrows a's 2 GPUs: 5 is
// admitted; cycle 3: head 3 finds a's quota lent and waits.
func TestCycleSetsAsideOneWorkloadAtATime(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gateOff   bool
		equiv2    uint64
		admitted  []int32
		maxAlone0 bool
	}{
		{name: "hashing on, 1 and 2 alike", admitted: []int32{4, 3}},
		{name: "hashing on, 2 told apart", equiv2: 7, admitted: []int32{4, 5}},
		{name: "hashing off", gateOff: true, admitted: []int32{4, 5}},
		{name: "hashing off, whole shapes aside", gateOff: true, maxAlone0: true, admitted: []int32{4, 3}},
	} {
		c := controllerSpec(t, func(s *Spec) { s.Gates.NoEquivalenceHashing = tc.gateOff }, cq("a", "org", q(2)), cq("b", "org", q(2)))
		if tc.maxAlone0 {
			c.maxAlone = 0
		}
		submit(t, c, 1, "a", 8, 5)
		require.NoError(t, c.Submit(Workload{ID: 2, Queue: "a", Priority: 5, Created: 2, Requests: []Request{{gpu, 8}}, Equiv: tc.equiv2}))
		submit(t, c, 3, "a", 2, 1)
		submit(t, c, 4, "b", 2, 0)
		submit(t, c, 5, "b", 2, 0)
		a, p := cycle(c)
		require.Empty(t, p, tc.name)
		require.Equal(t, tc.admitted, a, tc.name)
		if !slices.Contains(a, 3) {
			// Nothing more is tried until quota is released: 3 keeps
			// its reason from cycle 3.
			require.Contains(t, c.Reason(3), "insufficient unused quota", tc.name)
		}
	}
}

// With SchedulingEquivalenceHashing, a workload queued after its hash was
// set aside goes aside at once (Kueue's PushOrUpdate finds the hash in
// hashToBulkMoveReason), untried, until quota is released in the cohort
// tree (queueInadmissibleWorkloads clears the hashes). Cohort org: a and
// b, 2 GPUs each. a's 1 (2 GPUs) is admitted; a's 2 (4 GPUs) fails, 2
// more needed (b's 2 are free), and is set aside. b's 3 (2 GPUs) is
// admitted: the tree is full, an admission, not a release. a's 4 (4 GPUs,
// alike to 2) comes: aside untried, it keeps 2's reason (2 more needed);
// tried, as with the gate off, it needs 4 more. 1 finishes: the hashes
// are cleared, 2 is tried again, fails for 2 more and 4 goes aside with
// it.
func TestCycleSetsAsideLaterWorkloadsAlike(t *testing.T) {
	for _, gateOff := range []bool{false, true} {
		c := controllerSpec(t, func(s *Spec) { s.Gates.NoEquivalenceHashing = gateOff }, cq("a", "org", q(2)), cq("b", "org", q(2)))
		submit(t, c, 1, "a", 2, 0)
		a, _ := cycle(c)
		require.Equal(t, []int32{1}, a)
		submit(t, c, 2, "a", 4, 0)
		a, _ = cycle(c)
		require.Empty(t, a)
		require.Contains(t, c.Reason(2), "(2 more needed)")
		submit(t, c, 3, "b", 2, 0)
		a, _ = cycle(c)
		require.Equal(t, []int32{3}, a)
		submit(t, c, 4, "a", 4, 0)
		a, _ = cycle(c)
		require.Empty(t, a)
		if gateOff {
			require.Contains(t, c.Reason(4), "(4 more needed)")
			continue
		}
		require.Contains(t, c.Reason(4), "(2 more needed)")
		c.Finish(1)
		a, _ = cycle(c)
		require.Empty(t, a)
		require.Contains(t, c.Reason(4), "(2 more needed)")
	}
}

// The cost of setting workloads aside one at a time is bounded: queue a
// has 10,000 workloads of 8 GPUs (never fit in its 4) ahead of one of 1
// GPU. With SchedulingEquivalenceHashing on, the first sets aside the
// 10,000 (alike), the last is admitted in the next round and the one
// after finds nothing: 3 searches of its one queue. With it off, Kueue
// would spend a cycle on each of the 10,000 before trying the last; the
// cycle here sets aside defaultMaxAlone (256) of them one at a time, then
// with the 257th the rest of their shape at once: 257 + 1 + 1 searches;
// so too when each is told apart by its Equiv.
func TestCycleSetsAsideABacklogInBoundedRounds(t *testing.T) {
	for _, tc := range []struct {
		gateOff, apart bool
		walked         uint64
	}{{walked: 3}, {gateOff: true, walked: 259}, {apart: true, walked: 259}} {
		c := controllerSpec(t, func(s *Spec) { s.Gates.NoEquivalenceHashing = tc.gateOff }, cq("a", "", q(4)))
		for id := int32(1); id <= 10_000; id++ {
			w := Workload{ID: id, Queue: "a", Created: int64(id), Requests: []Request{{gpu, 8}}}
			if tc.apart {
				w.Equiv = uint64(id)
			}
			require.NoError(t, c.Submit(w))
		}
		submit(t, c, 10_001, "a", 1, 0)
		a, _ := cycle(c)
		require.Equal(t, []int32{10_001}, a)
		require.Equal(t, Stats{Cycles: 1, QueuesWalked: tc.walked}, c.Stats())
	}
}

// A head that no longer fits after another head's reservation is tried
// again in the next cycle (Kueue requeues it FailedAfterNomination,
// immediately, pkg/cache/queue/cluster_queue.go RequeueIfNotPresent),
// when the reserving head is set aside and its reservation gone
// (resourcesToReserve lasts one cycle). Cohort org: s (StrictFIFO,
// nothing of its own), r (3 GPUs, reclaims only from lower priorities),
// x (3). s's 1 (priority 100) borrows 4. Then r's 2 (3 GPUs) would need
// its quota back from s's 1, of higher priority: no target, it reserves
// r's 3 for the cycle; s's 3 (2 GPUs, the 2 left), nominated as fitting,
// goes after r's 2 (which does not borrow) and no longer fits. Next
// cycle: r's 2 is aside, s's 3 is admitted.
func TestCycleHeadBlockedByAReservationTriedAgain(t *testing.T) {
	strict := func(q *ClusterQueue) { q.Strategy = StrictFIFO }
	reclaimLower := func(q *ClusterQueue) { q.Preempt.ReclaimWithinCohort = LowerPriority }
	c := controller(t, cq("s", "org", q(0), strict), cq("r", "org", q(3), reclaimLower), cq("x", "org", q(3)))
	submit(t, c, 1, "s", 4, 100)
	a, _ := cycle(c)
	require.Equal(t, []int32{1}, a)
	submit(t, c, 2, "r", 3, 0)
	submit(t, c, 3, "s", 2, 100)
	a, p := cycle(c)
	require.Empty(t, p)
	require.Equal(t, []int32{3}, a)
}
