package admission

import (
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
