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
