package admission

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// twoFlavors is a queue with quota in flavor reserved, then spot.
func twoFlavors(name, cohort string, reserved, spot int64, opts ...func(*ClusterQueue)) ClusterQueue {
	c := ClusterQueue{Name: name, Cohort: cohort, Groups: []ResourceGroup{{
		Covered: []string{gpu},
		Flavors: []FlavorQuotas{{Flavor: "reserved", Resources: []Quota{q(reserved)}}, {Flavor: "spot", Resources: []Quota{q(spot)}}},
	}}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func fungible(t *testing.T, cqs ...ClusterQueue) *Controller {
	t.Helper()
	s := Spec{Flavors: []Flavor{{Name: "reserved"}, {Name: "spot"}}, ClusterQueues: cqs}
	for _, c := range cqs {
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
	}
	c, err := New(s)
	require.NoError(t, err)
	return c
}

func flavorOf(t *testing.T, c *Controller, id int32, ds []Decision) string {
	t.Helper()
	for _, d := range ds {
		if d.ID == id && !d.Preempted && !d.Waiting {
			return c.Spec().Flavors[d.Flavors[0]].Name
		}
	}
	t.Fatalf("workload %d not admitted in %+v", id, ds)
	return ""
}

// whenCanBorrow: team has 2 reserved and 4 spot GPUs; the cohort's lender
// has 4 reserved. A 3-GPU workload fits in reserved by borrowing 1: by
// default it stops there; with TryNextFlavor it goes on to spot, where it
// fits without borrowing.
func TestFungibilityWhenCanBorrow(t *testing.T) {
	for _, tc := range []struct {
		tryNext bool
		want    string
	}{{false, "reserved"}, {true, "spot"}} {
		c := fungible(t, twoFlavors("team", "org", 2, 4, func(q *ClusterQueue) { q.Fungibility.TryNextOnBorrow = tc.tryNext }),
			twoFlavors("lender", "org", 4, 0))
		submit(t, c, 1, "team", 3, 0)
		require.Equal(t, tc.want, flavorOf(t, c, 1, settle(c)))
	}
	// With spot full as well, TryNextFlavor falls back to borrowing in
	// reserved.
	c := fungible(t, twoFlavors("team", "org", 2, 4, func(q *ClusterQueue) { q.Fungibility.TryNextOnBorrow = true }), twoFlavors("lender", "org", 4, 0))
	submit(t, c, 1, "team", 4, 0)
	require.Equal(t, "spot", flavorOf(t, c, 1, settle(c)))
	submit(t, c, 2, "team", 3, 0)
	require.Equal(t, "reserved", flavorOf(t, c, 2, settle(c)))
}

// whenCanPreempt: team has 2 reserved and 2 spot GPUs and preempts lower
// priority within the queue. A low-priority 2-GPU workload holds
// reserved. A high-priority 2-GPU workload, by default, takes spot; with
// MayStopSearch it preempts the low one in reserved, which then goes to
// spot.
func TestFungibilityWhenCanPreempt(t *testing.T) {
	for _, tc := range []struct {
		stop      bool
		preempted []int32
		want      string
	}{{false, nil, "spot"}, {true, []int32{1}, "reserved"}} {
		c := fungible(t, twoFlavors("team", "", 2, 2, func(q *ClusterQueue) {
			q.Preempt.WithinClusterQueue = LowerPriority
			q.Fungibility.StopOnPreempt = tc.stop
		}))
		submit(t, c, 1, "team", 2, 0)
		require.Equal(t, "reserved", flavorOf(t, c, 1, settle(c)))
		submit(t, c, 2, "team", 2, 100)
		ds := settle(c)
		var preempted []int32
		for _, d := range ds {
			if d.Preempted {
				preempted = append(preempted, d.ID)
			}
		}
		require.Equal(t, tc.preempted, preempted)
		require.Equal(t, tc.want, flavorOf(t, c, 2, ds))
		if tc.stop {
			// In the cycle after the preemption, beside its preemptor.
			require.Equal(t, "spot", flavorOf(t, c, 1, ds), "the preempted workload finds spot")
		}
	}
}

// Where preemption would make room in more than one flavor, Kueue's flavor
// assigner (whenCanPreempt: TryNextFlavor, the default) prefers the flavor
// whose targets are all other queues' borrowed quota (reclaim) to one
// where it evicts from its own queue (isPreferred in
// pkg/scheduler/flavorassigner/flavorassigner.go: preemption modes
// preempt < reclaim), though it comes later (issue 26, Kueue cross-check
// r027). team has 2 reserved and 2 spot GPUs and may evict its own lower
// priority and any borrower; lender has 2 spot GPUs and borrows team's 2
// for its 4-GPU workload 2; team's workload 1 (priority 0) holds reserved.
// team's 2-GPU workload 3 (priority 10) fits neither flavor: in reserved
// it would evict 1 (its own queue's), in spot 2 (lender's, borrowed): it
// evicts 2 and takes spot. Before, it took the first flavor and evicted 1.
func TestPreemptionPrefersReclaimToOwnQueue(t *testing.T) {
	c := fungible(t, twoFlavors("team", "org", 2, 2, func(q *ClusterQueue) {
		q.Preempt.WithinClusterQueue = LowerPriority
		q.Preempt.ReclaimWithinCohort = Any
	}), twoFlavors("lender", "org", 0, 2))
	submit(t, c, 1, "team", 2, 0)
	require.Equal(t, "reserved", flavorOf(t, c, 1, settle(c)))
	submit(t, c, 2, "lender", 4, 0)
	require.Equal(t, "spot", flavorOf(t, c, 2, settle(c)))
	submit(t, c, 3, "team", 2, 10)
	ds := settle(c)
	require.Equal(t, "spot", flavorOf(t, c, 3, ds))
	var preempted []int32
	for _, d := range ds {
		if d.Preempted {
			preempted = append(preempted, d.ID)
		}
	}
	require.Equal(t, []int32{2}, preempted)
}

// FlavorFungibilityPreserveScanProgress (on by default in Kueue v0.19): a
// head nominated to a flavor and skipped in its cycle ("no longer fits
// after processing another workload") keeps where its flavor search
// stopped, and the next cycle searches on from the flavor after it
// (Kueue's LastTriedFlavorIdx, lastAssignmentOutdated); without the gate
// it starts over from the first. Cohort org: team (reserved 0, spot 2,
// BestEffortFIFO) and owner (reserved 4, StrictFIFO, reclaims Never).
// team's 1 (3 GPUs) borrows 3 of owner's reserved. Then owner's 2 (4)
// needs its quota back, may not reclaim: it has nothing to preempt and
// reserves owner's 4 reserved GPUs for each cycle it is tried in
// (resourcesToReserve); team's 3 (1 GPU), nominated to reserved (1 left,
// borrowing: it stops there), goes after 2 (which does not borrow) and
// no longer fits. Next cycle, with the gate: 3 searches on from spot,
// fits there and is admitted. Without it: reserved again, skipped again;
// nothing changes and 3 waits.
func TestFungibilityPreserveScanProgress(t *testing.T) {
	for _, gateOff := range []bool{false, true} {
		s := Spec{Flavors: []Flavor{{Name: "reserved"}, {Name: "spot"}}, ClusterQueues: []ClusterQueue{
			twoFlavors("team", "org", 0, 2),
			twoFlavors("owner", "org", 4, 0, func(q *ClusterQueue) { q.Strategy = StrictFIFO }),
		}, Gates: Gates{NoPreserveScanProgress: gateOff}}
		for _, q := range s.ClusterQueues {
			s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: q.Name, ClusterQueue: q.Name})
		}
		c, err := New(s)
		require.NoError(t, err)
		submit(t, c, 1, "team", 3, 0)
		require.Equal(t, "reserved", flavorOf(t, c, 1, settle(c)))
		submit(t, c, 2, "owner", 4, 0)
		submit(t, c, 3, "team", 1, 0)
		ds := settle(c)
		require.False(t, c.Admitted(2))
		if gateOff {
			require.False(t, c.Admitted(3), "%+v", ds)
			continue
		}
		require.Equal(t, "spot", flavorOf(t, c, 3, ds))
	}
}
