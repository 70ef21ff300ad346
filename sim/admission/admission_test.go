package admission

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

const gpu = "nvidia.com/gpu"

func q(nominal int64) Quota {
	return Quota{Nominal: nominal, BorrowingLimit: NoLimit, LendingLimit: NoLimit}
}

func cq(name, cohort string, quota Quota, opts ...func(*ClusterQueue)) ClusterQueue {
	c := ClusterQueue{Name: name, Cohort: cohort, Groups: []ResourceGroup{{
		Covered: []string{gpu},
		Flavors: []FlavorQuotas{{Flavor: "gpu", Resources: []Quota{quota}}},
	}}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func controller(t *testing.T, cqs ...ClusterQueue) *Controller {
	t.Helper()
	return controllerSpec(t, nil, cqs...)
}

// controllerSpec is controller with the spec changed by opt (nil: none).
func controllerSpec(t *testing.T, opt func(*Spec), cqs ...ClusterQueue) *Controller {
	t.Helper()
	s := Spec{Flavors: []Flavor{{Name: "gpu", NodeLabels: map[string]string{"pool": "gpu"}}}, ClusterQueues: cqs}
	if opt != nil {
		opt(&s)
	}
	for _, c := range cqs {
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
	}
	c, err := New(s)
	require.NoError(t, err)
	return c
}

func submit(t *testing.T, c *Controller, id int32, queue string, gpus int64, prio int32) {
	t.Helper()
	require.NoError(t, c.Submit(Workload{ID: id, Queue: queue, Priority: prio, Created: int64(id), Requests: []Request{{gpu, gpus}}}))
}

// settle runs admission at one instant as the simulator does: cycles
// while the last one issued preemptions (their preemptors are tried in
// the next); it returns every cycle's decisions, in order.
func settle(c *Controller) []Decision {
	ds := c.Cycle()
	if !c.Again() {
		return ds
	}
	out := append([]Decision(nil), ds...)
	for {
		out = append(out, c.Cycle()...)
		if !c.Again() {
			return out
		}
	}
}

// admitted lists the admitted ids of an instant's decisions (settle);
// preempted the evicted ones.
func cycle(c *Controller) (admitted, preempted []int32) { return ids(settle(c)) }

// ids lists the admitted and the preempted ids of decisions.
func ids(ds []Decision) (admitted, preempted []int32) {
	for _, d := range ds {
		if d.Waiting {
			continue
		}
		if d.Preempted {
			preempted = append(preempted, d.ID)
		} else {
			admitted = append(admitted, d.ID)
		}
	}
	return
}

// Borrowing: team-b (nominal 2) runs a 5-GPU job on 3 GPUs team-a
// (nominal 4) does not use; team-a's 2-GPU job then finds the cohort's 6
// GPUs holding 7 and waits until the borrower ends.
func TestBorrowing(t *testing.T) {
	c := controller(t, cq("team-a", "org", q(4)), cq("team-b", "org", q(2)))
	submit(t, c, 1, "team-b", 5, 0)
	a, _ := cycle(c)
	require.Equal(t, []int32{1}, a)
	submit(t, c, 2, "team-a", 2, 0)
	a, p := cycle(c)
	require.Empty(t, a)
	require.Empty(t, p, "no preemption configured")
	require.Equal(t, "ClusterQueue team-a: couldn't assign flavors: insufficient unused quota in flavor gpu for nvidia.com/gpu (1 more needed)", c.Reason(2))
	c.Finish(1)
	a, _ = cycle(c)
	require.Equal(t, []int32{2}, a)

	// Without a cohort there is nothing to borrow: 5 > 2.
	c = controller(t, cq("team-b", "", q(2)))
	submit(t, c, 1, "team-b", 5, 0)
	a, _ = cycle(c)
	require.Empty(t, a)
	require.Contains(t, c.Reason(1), "nvidia.com/gpu (3 more needed)")
}

// borrowingLimit 2 lets team-b reach 2 + 2 = 4 GPUs, not 5.
func TestBorrowingLimit(t *testing.T) {
	lim := q(2)
	lim.BorrowingLimit = 2
	c := controller(t, cq("team-a", "org", q(4)), cq("team-b", "org", lim))
	submit(t, c, 1, "team-b", 5, 0)
	a, _ := cycle(c)
	require.Empty(t, a)
	require.Contains(t, c.Reason(1), "(1 more needed)")
	c.Finish(1)
	submit(t, c, 2, "team-b", 4, 0)
	a, _ = cycle(c)
	require.Equal(t, []int32{2}, a)
}

// lendingLimit 1 keeps 3 of team-a's 4 GPUs for team-a: the cohort lends
// at most 1 (team-a) + 2 (team-b's own) = 3 to team-b, and team-a's 3-GPU
// job is admitted beside team-b's 3 without any preemption.
func TestLendingLimit(t *testing.T) {
	lend := q(4)
	lend.LendingLimit = 1
	c := controller(t, cq("team-a", "org", lend), cq("team-b", "org", q(2)))
	submit(t, c, 1, "team-b", 4, 0)
	a, _ := cycle(c)
	require.Empty(t, a, "4 > the 3 team-b can reach")
	c.Finish(1)
	submit(t, c, 2, "team-b", 3, 0)
	submit(t, c, 3, "team-a", 3, 0)
	a, _ = cycle(c)
	require.ElementsMatch(t, []int32{2, 3}, a)
	// All 6 GPUs are in use: team-a's fourth is the one it lends, and
	// team-b holds it; neither queue gets more.
	submit(t, c, 4, "team-b", 1, 0)
	submit(t, c, 5, "team-a", 1, 0)
	a, _ = cycle(c)
	require.Empty(t, a)
	require.Contains(t, c.Reason(5), "(1 more needed)")
	c.Finish(2) // team-b's 3 go: team-a's 1 and team-b's 1 both fit
	a, _ = cycle(c)
	require.ElementsMatch(t, []int32{4, 5}, a)
}

// Reclaim: team-a takes back what team-b borrowed, evicting only what it
// needs, newest admission first.
func TestReclaimWithinCohort(t *testing.T) {
	reclaim := func(c *ClusterQueue) { c.Preempt.ReclaimWithinCohort = Any }
	// team-b admitted a 1-GPU and then a 4-GPU job (5 of the 6, borrowing
	// 3); team-a's 2 GPUs: evicting the 4-GPU job (the newest) is enough.
	c := controller(t, cq("team-a", "org", q(4), reclaim), cq("team-b", "org", q(2)))
	submit(t, c, 1, "team-b", 1, 0)
	cycle(c)
	submit(t, c, 2, "team-b", 4, 0)
	cycle(c)
	submit(t, c, 3, "team-a", 2, 0)
	// Kueue's cycle issues the preemption and admits the preemptor in the
	// next cycle, once its victim's quota is back.
	a, p := ids(c.Cycle())
	require.Equal(t, []int32{2}, p)
	require.Empty(t, a)
	require.True(t, c.Again())
	require.Contains(t, c.Reason(2), "Preempted to accommodate a workload (UID: 3) due to reclamation within the cohort")
	a, p = cycle(c)
	require.Empty(t, p)
	require.Equal(t, []int32{3}, a)
	require.True(t, c.Admitted(1))

	// Admitted the other way round (4 then 1), the newest is the 1-GPU
	// job, and evicting it is enough: team-b keeps 4 (still borrowing 2),
	// team-a gets 2, the cohort's 6 are full.
	c = controller(t, cq("team-a", "org", q(4), reclaim), cq("team-b", "org", q(2)))
	submit(t, c, 1, "team-b", 4, 0)
	cycle(c)
	submit(t, c, 2, "team-b", 1, 0)
	cycle(c)
	submit(t, c, 3, "team-a", 2, 0)
	a, p = cycle(c)
	require.Equal(t, []int32{2}, p)
	require.Equal(t, []int32{3}, a)

	// team-a asking for more than its nominal quota cannot reclaim: it
	// would borrow itself.
	c = controller(t, cq("team-a", "org", q(4), reclaim), cq("team-b", "org", q(2)))
	submit(t, c, 1, "team-b", 4, 0)
	cycle(c)
	submit(t, c, 2, "team-a", 5, 0)
	a, p = cycle(c)
	require.Empty(t, a)
	require.Empty(t, p)
}

// StrictFIFO: a head that does not fit blocks the small job behind it;
// BestEffortFIFO admits the small one past it.
func TestStrictFIFOBlocksBestEffortDoesNot(t *testing.T) {
	for _, c := range []struct {
		s    Strategy
		want []int32
	}{{StrictFIFO, nil}, {BestEffortFIFO, []int32{3}}} {
		ctl := controller(t, cq("q", "", q(4), func(q *ClusterQueue) { q.Strategy = c.s }))
		submit(t, ctl, 1, "q", 3, 0)
		cycle(ctl)
		submit(t, ctl, 2, "q", 2, 0) // needs 2, 1 free
		submit(t, ctl, 3, "q", 1, 0)
		a, _ := cycle(ctl)
		require.Equal(t, c.want, a, c.s.String())
		ctl.Finish(1)
		a, _ = cycle(ctl)
		if c.s == StrictFIFO {
			require.Equal(t, []int32{2, 3}, a)
		} else {
			require.Equal(t, []int32{2}, a)
		}
	}
}

// withinClusterQueue LowerPriority: a priority-10 job evicts the newest
// of two priority-0 jobs; with Never it waits; equal priority never
// preempts under LowerPriority.
func TestPreemptionWithinClusterQueue(t *testing.T) {
	lower := func(c *ClusterQueue) { c.Preempt.WithinClusterQueue = LowerPriority }
	c := controller(t, cq("q", "", q(4), lower))
	submit(t, c, 1, "q", 2, 0)
	submit(t, c, 2, "q", 2, 0)
	cycle(c)
	submit(t, c, 3, "q", 2, 10)
	a, p := ids(c.Cycle())
	require.Equal(t, []int32{2}, p)
	require.Empty(t, a)
	require.Contains(t, c.Reason(2), "prioritization in the ClusterQueue")
	a, p = cycle(c)
	require.Empty(t, p)
	require.Equal(t, []int32{3}, a)
	// The evicted job is pending again, first in line when room frees.
	c.Finish(1)
	a, _ = cycle(c)
	require.Equal(t, []int32{2}, a)

	c = controller(t, cq("q", "", q(4), lower))
	submit(t, c, 1, "q", 2, 10)
	submit(t, c, 2, "q", 2, 10)
	cycle(c)
	submit(t, c, 3, "q", 2, 10)
	a, p = cycle(c)
	require.Empty(t, a, "equal priority does not preempt")
	require.Empty(t, p)

	c = controller(t, cq("q", "", q(4)))
	submit(t, c, 1, "q", 4, 0)
	cycle(c)
	submit(t, c, 2, "q", 2, 10)
	a, p = cycle(c)
	require.Empty(t, a)
	require.Empty(t, p)
}

// Heads that do not borrow go first: with one GPU free in the cohort,
// team-a's job within its quota is admitted before team-b's older job
// that would borrow.
func TestNonBorrowingHeadsFirst(t *testing.T) {
	c := controller(t, cq("team-a", "org", q(1)), cq("team-b", "org", q(1)))
	submit(t, c, 1, "team-b", 1, 0)
	cycle(c)
	submit(t, c, 2, "team-b", 1, 0)
	submit(t, c, 3, "team-a", 1, 0)
	a, _ := cycle(c)
	require.Equal(t, []int32{3}, a)
}

func TestFlavorsInOrderAndUncoveredResources(t *testing.T) {
	s := Spec{
		Flavors: []Flavor{{Name: "a100"}, {Name: "h100"}},
		ClusterQueues: []ClusterQueue{{Name: "q", Groups: []ResourceGroup{{
			Covered: []string{"cpu", gpu},
			Flavors: []FlavorQuotas{
				{Flavor: "a100", Resources: []Quota{q(100), q(2)}},
				{Flavor: "h100", Resources: []Quota{q(100), q(8)}},
			},
		}}}},
		LocalQueues: []LocalQueue{{Name: "lq", ClusterQueue: "q"}},
	}
	c, err := New(s)
	require.NoError(t, err)
	require.NoError(t, c.Submit(Workload{ID: 1, Queue: "lq", Requests: []Request{{"cpu", 10}, {gpu, 2}}}))
	require.NoError(t, c.Submit(Workload{ID: 2, Queue: "lq", Requests: []Request{{"cpu", 10}, {gpu, 2}}}))
	require.NoError(t, c.Submit(Workload{ID: 3, Queue: "lq", Requests: []Request{{"memory", 10}}}))
	var ds []Decision
	for _, d := range settle(c) {
		if !d.Waiting {
			ds = append(ds, d)
		}
	}
	require.Len(t, ds, 2)
	require.Equal(t, []int{0}, ds[0].Flavors, "first flavor that fits")
	require.Equal(t, []int{1}, ds[1].Flavors, "a100 full: the next flavor")
	require.Equal(t, "ClusterQueue q: resource memory unavailable", c.Reason(3))
	require.ErrorIs(t, c.Submit(Workload{ID: 4, Queue: "nope"}), ErrNoQueue)
}

func TestSpecErrors(t *testing.T) {
	bad := q(2)
	bad.LendingLimit = 3
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{ClusterQueues: []ClusterQueue{cq("a", "", q(1))}}, `names flavor "gpu", which no ResourceFlavor defines`},
		{Spec{Flavors: []Flavor{{Name: "gpu"}}, ClusterQueues: []ClusterQueue{cq("a", "org", bad)}}, "lendingLimit 3 is more than nominalQuota 2"},
		{Spec{Flavors: []Flavor{{Name: "gpu"}}, ClusterQueues: []ClusterQueue{cq("a", "", Quota{Nominal: 1, BorrowingLimit: 1, LendingLimit: NoLimit})}}, "need a cohort"},
		{Spec{Flavors: []Flavor{{Name: "gpu"}}, LocalQueues: []LocalQueue{{Name: "l", ClusterQueue: "x"}}}, `points at ClusterQueue "x"`},
	} {
		_, err := New(c.spec)
		require.ErrorContains(t, err, c.want)
	}
}

// Standings: team-b's 5 GPUs on a nominal 2 borrow 3, all lent by
// team-a, whose 4 are unused (a share of 3 of the cohort's 6 lendable,
// 500 per thousand); with team-a on 1 its 3 unused cover the 1 borrowed,
// and a pending 2-GPU workload of team-b adds to its demand.
func TestStandings(t *testing.T) {
	c := controller(t, cq("team-a", "org", q(4)), cq("team-b", "org", q(2)))
	submit(t, c, 1, "team-b", 5, 0)
	cycle(c)
	s := c.Standings()
	require.Equal(t, Standing{Nominal: 4, Used: 0, Borrowed: 0, Lent: 3}, s[0])
	require.Equal(t, Standing{Nominal: 2, Used: 5, Demand: 5, Share: 500, Borrowed: 3, Lent: 0}, s[1])
	c.Finish(1)
	submit(t, c, 2, "team-b", 3, 0)
	submit(t, c, 3, "team-a", 1, 0)
	cycle(c)
	before, u := c.Standings(), c.UsageVersion()
	submit(t, c, 4, "team-b", 2, 0)
	s = c.Standings()
	require.Equal(t, Standing{Nominal: 4, Used: 1, Demand: 1, Borrowed: 0, Lent: 1}, s[0])
	require.Equal(t, Standing{Nominal: 2, Used: 3, Demand: 5, Share: 166, Borrowed: 1, Lent: 0}, s[1])
	// A submission changes only the demand: standings read before it
	// catch up by RefreshDemand.
	require.Equal(t, u, c.UsageVersion())
	c.RefreshDemand(before)
	require.Equal(t, s, before)
}

// A flavor's nodeTaints keep workloads that do not tolerate them off it:
// the spot flavor is skipped for the intolerant workload, which takes
// on-demand; the tolerant one gets the first flavor, spot.
func TestFlavorTaints(t *testing.T) {
	spot := cluster.Taint{Key: "spot", Value: "true", Effect: cluster.NoSchedule}
	s := Spec{
		Flavors: []Flavor{{Name: "spot", NodeTaints: []cluster.Taint{spot}}, {Name: "on-demand"}},
		ClusterQueues: []ClusterQueue{{Name: "q", Groups: []ResourceGroup{{Covered: []string{gpu}, Flavors: []FlavorQuotas{
			{Flavor: "spot", Resources: []Quota{q(4)}}, {Flavor: "on-demand", Resources: []Quota{q(4)}},
		}}}}},
		LocalQueues: []LocalQueue{{Name: "q", ClusterQueue: "q"}},
	}
	c, err := New(s)
	require.NoError(t, err)
	require.NoError(t, c.Submit(Workload{ID: 1, Queue: "q", Requests: []Request{{gpu, 1}}}))
	require.NoError(t, c.Submit(Workload{ID: 2, Queue: "q", Created: 1, Requests: []Request{{gpu, 1}},
		Constraints: &cluster.Constraints{Tolerations: []cluster.Toleration{{Key: "spot", Operator: "Exists", Effect: cluster.NoSchedule}}}}))
	var flavors []int
	for _, d := range settle(c) {
		if !d.Waiting {
			flavors = append(flavors, d.Flavors[0])
		}
	}
	require.Equal(t, []int{1, 0}, flavors)
	// Only the spot flavor: the intolerant workload waits, saying why.
	s.ClusterQueues[0].Groups[0].Flavors = s.ClusterQueues[0].Groups[0].Flavors[:1]
	s.Flavors = s.Flavors[:1]
	c, err = New(s)
	require.NoError(t, err)
	require.NoError(t, c.Submit(Workload{ID: 1, Queue: "q", Requests: []Request{{gpu, 1}}}))
	settle(c)
	require.Equal(t, "ClusterQueue q: couldn't assign flavors: untolerated taint {spot=true:NoSchedule} in flavor spot", c.Reason(1))
}

// waitForPodsReady's controller side: an evicted workload frees its
// quota at once and waits outside the queue until requeued; requeued at
// its eviction time it queues behind a workload created before that. The
// backoff doubles from its base up to its cap.
func TestEvictAndRequeue(t *testing.T) {
	c := controller(t, cq("team", "", q(2)))
	submit(t, c, 1, "team", 2, 0)
	a, _ := cycle(c)
	require.Equal(t, []int32{1}, a)
	c.Evict(1)
	require.False(t, c.Admitted(1))
	submit(t, c, 2, "team", 2, 0) // created at 2
	a, _ = cycle(c)
	require.Equal(t, []int32{2}, a, "the evicted workload is not pending")
	c.Requeue(1, 5)
	c.Finish(2)
	submit(t, c, 3, "team", 2, 0) // created at 3, before the requeue at 5
	a, _ = cycle(c)
	require.Equal(t, []int32{3}, a)

	w := WaitForPodsReady{BackoffBase: 60, BackoffMax: 200}
	require.Equal(t, []int64{60, 120, 200, 200}, []int64{w.Backoff(1), w.Backoff(2), w.Backoff(3), w.Backoff(4)})
}

// A backlog costs nothing while nothing changes. Team (4 GPUs) runs a
// 4-GPU workload with 1,000 2-GPU workloads waiting, priorities 0 and 1
// alternating (two shapes): the first cycle tries each shape's first and
// says why it waits, then gives every other workload its shape's reason
// once, as Kueue's cycles would set each one's condition; a cycle after
// it, with nothing changed, decides nothing and allocates nothing. When
// the 4 GPUs are freed, the two oldest of priority 1 (ids 3 and 5) go in,
// in that order.
func TestBacklogCycleCostsNothingUntilAChange(t *testing.T) {
	c := controller(t, cq("team", "", q(4)))
	submit(t, c, 1, "team", 4, 0)
	a, _ := cycle(c)
	require.Equal(t, []int32{1}, a)
	for id := int32(2); id <= 1001; id++ {
		submit(t, c, id, "team", 2, id%2)
	}
	var waiting []int32
	for _, d := range settle(c) {
		require.True(t, d.Waiting)
		waiting = append(waiting, d.ID)
	}
	require.Len(t, waiting, 1000)
	require.Equal(t, []int32{3, 2, 4, 5}, waiting[:4], "each shape's first, priority 1 first, then the others in arrival order")
	require.Equal(t, "ClusterQueue team: couldn't assign flavors: insufficient unused quota in flavor gpu for nvidia.com/gpu (2 more needed)", c.Reason(1001))
	v := c.Version()
	allocs := testing.AllocsPerRun(100, func() {
		require.Empty(t, settle(c))
	})
	require.Zero(t, allocs)
	require.Equal(t, v, c.Version(), "a cycle that decides nothing changes nothing")
	c.Finish(1)
	require.NotEqual(t, v, c.Version())
	a, _ = cycle(c)
	require.Equal(t, []int32{3, 5}, a)
}

// A Cohort may hold quota of a resource no ClusterQueue covers: a
// workload asking for it is inadmissible in its queue, which does not
// cover it (it once indexed past the queue's resource table).
func TestCohortOnlyResource(t *testing.T) {
	fpga := "example.com/fpga"
	s := Spec{
		Flavors: []Flavor{{Name: "gpu"}},
		Cohorts: []Cohort{{Name: "org", Groups: []ResourceGroup{{Covered: []string{fpga},
			Flavors: []FlavorQuotas{{Flavor: "gpu", Resources: []Quota{q(4)}}}}}}},
		ClusterQueues: []ClusterQueue{cq("a", "org", q(4))},
		LocalQueues:   []LocalQueue{{Name: "a", ClusterQueue: "a"}},
	}
	c, err := New(s)
	require.NoError(t, err)
	require.NoError(t, c.Submit(Workload{ID: 1, Queue: "a", Requests: []Request{{fpga, 1}, {gpu, 1}}}))
	a, _ := cycle(c)
	require.Empty(t, a)
	require.Equal(t, "ClusterQueue a: resource example.com/fpga unavailable", c.Reason(1))
}

// Preemption that makes room in one resource group but leaves another
// short evicts nothing. Team has 4 cpu (milli-CPU here) in one group and
// 4 GPUs in another; workload 1 holds the GPUs, 2 the cpu, both priority
// 0. Workload 3 (priority 1) asks both: evicting 2 (the cpu group fails
// first) would still leave it 4 GPUs short, so it waits and 1 and 2 keep
// their quota (it once evicted 2 without saying so). Once 1 ends, evicting
// 2 is enough: 2 goes, 3 comes in.
func TestPreemptionMustMakeEveryGroupFit(t *testing.T) {
	s := Spec{
		Flavors: []Flavor{{Name: "cpu-f"}, {Name: "gpu"}},
		ClusterQueues: []ClusterQueue{{Name: "team", Preempt: Preemption{WithinClusterQueue: LowerPriority}, Groups: []ResourceGroup{
			{Covered: []string{"cpu"}, Flavors: []FlavorQuotas{{Flavor: "cpu-f", Resources: []Quota{q(4)}}}},
			{Covered: []string{gpu}, Flavors: []FlavorQuotas{{Flavor: "gpu", Resources: []Quota{q(4)}}}},
		}}},
		LocalQueues: []LocalQueue{{Name: "team", ClusterQueue: "team"}},
	}
	c, err := New(s)
	require.NoError(t, err)
	require.NoError(t, c.Submit(Workload{ID: 1, Queue: "team", Created: 1, Requests: []Request{{gpu, 4}}}))
	require.NoError(t, c.Submit(Workload{ID: 2, Queue: "team", Created: 2, Requests: []Request{{"cpu", 4}}}))
	a, _ := cycle(c)
	require.Equal(t, []int32{1, 2}, a)
	require.NoError(t, c.Submit(Workload{ID: 3, Queue: "team", Priority: 1, Created: 3, Requests: []Request{{gpu, 4}, {"cpu", 4}}}))
	for range 2 {
		a, p := cycle(c)
		require.Empty(t, a)
		require.Empty(t, p)
		require.True(t, c.Admitted(1))
		require.True(t, c.Admitted(2))
	}
	require.Equal(t, "ClusterQueue team: couldn't assign flavors: insufficient unused quota in flavor gpu for nvidia.com/gpu (4 more needed)", c.Reason(3))
	c.Finish(1)
	a, p := cycle(c)
	require.Equal(t, []int32{3}, a)
	require.Equal(t, []int32{2}, p)
}

// Kueue orders victims of one priority by when they reserved quota as its
// conditions stamp it, in whole seconds, newest first; reservations in the
// same second fall back to the lower UID (gpuplan: the lower ID). Found
// by the Kueue cross-check (validate/xcheck/kueue) on fair-sharing's
// policy-fair: two jobs admitted in the same second, Kueue evicted the
// other one.
func TestSameSecondVictimsByID(t *testing.T) {
	lower := func(c *ClusterQueue) { c.Preempt.WithinClusterQueue = LowerPriority }
	// admitAt admits job 1 at t1 and job 2 at t2 (ms), then job 3 of a
	// higher priority arrives and needs one of their places.
	victim := func(t1, t2 int64) []int32 {
		c := controller(t, cq("q", "", q(4), lower))
		c.SetClock(t1)
		submit(t, c, 1, "q", 2, 0)
		if t2 != t1 {
			a, _ := cycle(c)
			require.Equal(t, []int32{1}, a)
			c.SetClock(t2)
		}
		submit(t, c, 2, "q", 2, 0)
		cycle(c)
		c.SetClock(t2 + 60_000)
		submit(t, c, 3, "q", 2, 10)
		a, p := cycle(c)
		require.Equal(t, []int32{3}, a)
		return p
	}
	require.Equal(t, []int32{1}, victim(5_200, 5_200), "one cycle, one second: the lower ID")
	require.Equal(t, []int32{1}, victim(5_100, 5_900), "two cycles in one second: the lower ID")
	require.Equal(t, []int32{2}, victim(5_900, 6_100), "the newer second first")
}

// Kueue's flavor assigner considers preemption on a flavor only if the
// request is within the queue's nominal quota, the queue may reclaim in
// its cohort tree, or it may preempt while borrowing (fitsResourceQuota).
// Queue a (nominal 3, withinClusterQueue LowerPriority) in a flat cohort
// with b's idle GPU: a 4-GPU job of a higher priority does not evict a's
// 2-GPU job to borrow b's GPU; it waits for it to end. With
// borrowWithinCohort it does. Found by the Kueue cross-check
// (validate/xcheck/kueue, random policy r005).
func TestNoPreemptionBeyondNominalWithoutBorrowWithinCohort(t *testing.T) {
	run := func(opts ...func(*ClusterQueue)) (admitted, preempted []int32) {
		c := controller(t, cq("a", "org", q(3), opts...), cq("b", "org", q(1)))
		submit(t, c, 1, "a", 2, 0)
		a, _ := cycle(c)
		require.Equal(t, []int32{1}, a)
		submit(t, c, 2, "a", 4, 10)
		return cycle(c)
	}
	lower := func(c *ClusterQueue) { c.Preempt.WithinClusterQueue = LowerPriority }
	a, p := run(lower)
	require.Empty(t, a, "4 > nominal 3: no preemption to borrow")
	require.Empty(t, p)
	_, p = run(lower, func(c *ClusterQueue) { c.Preempt.BorrowWithinCohort = LowerPriority })
	require.Equal(t, []int32{1}, p, "borrowWithinCohort: it may preempt while borrowing")
}

// Hierarchical reclaim (Kueue v0.17.0's classical preemption,
// collectCandidatesForHierarchicalReclaim in
// pkg/scheduler/preemption/classical/hierarchical_preemption.go; issue 26,
// Kueue cross-check r005 and r151). Cohort mid (under root) holds
// ClusterQueues a (6 GPUs) and team (5); other (3) sits at root. Subtree
// quotas: mid 11, root 14. a runs 5 GPUs; other borrows 3 for a 6-GPU
// workload: 11 of 14 used. team's 6-GPU workload needs 6 > its 5 and finds
// 3 free. By hand: it does not fit team's quota, but with a's 5 it fits
// mid's 11 (5 + 6 = 11), so it has the advantage over every queue outside
// mid that uses more than its quota: other's workload is reclaimed
// (reclaimWithinCohort: Any) though team then borrows 1 within mid. The
// former rule (reclaim only without borrowing, the queue below its
// nominal quota) left it waiting.
func TestHierarchicalReclaimFromOutsideTheSubtree(t *testing.T) {
	reclaimAny := func(c *ClusterQueue) { c.Preempt.ReclaimWithinCohort = Any }
	s := Spec{Flavors: []Flavor{{Name: "gpu"}},
		Cohorts:       []Cohort{{Name: "root"}, {Name: "mid", Parent: "root"}},
		ClusterQueues: []ClusterQueue{cq("a", "mid", q(6)), cq("team", "mid", q(5), reclaimAny), cq("other", "root", q(3))}}
	for _, c := range s.ClusterQueues {
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
	}
	c, err := New(s)
	require.NoError(t, err)
	submit(t, c, 1, "a", 5, 0)
	submit(t, c, 2, "other", 6, 0)
	a, p := cycle(c)
	require.Equal(t, []int32{1, 2}, a)
	require.Empty(t, p)
	submit(t, c, 3, "team", 6, 0)
	a, p = cycle(c)
	require.Equal(t, []int32{2}, p, "other's borrowing workload is reclaimed")
	require.Equal(t, []int32{3}, a)
}

// A cycle looks for heads only in the queues with pending workloads. Of
// 500 ClusterQueues (1 GPU of quota each, no cohort) q17 and q400 have a
// 1-GPU workload each. Cycle 1: the first search for heads walks those two
// and both are admitted; the second search walks none (nothing is pending)
// and the cycle ends: 2 walked. Then q17 gets a 2-GPU workload. Cycle 2:
// the first search walks q17, its head does not fit (1 GPU of quota, 1 in
// use; withinClusterQueue Never) and is set aside; nothing else is left
// to try and the cycle ends without a second search: 1 more, 3 in all.
// Walking every queue at each search would make it 2 x 500 per cycle,
// 2,000.
func TestCycleHeadsOfManyQueues(t *testing.T) {
	var cqs []ClusterQueue
	for i := 0; i < 500; i++ {
		cqs = append(cqs, cq(fmt.Sprintf("q%d", i), "", q(1)))
	}
	c := controller(t, cqs...)
	submit(t, c, 1, "q400", 1, 0)
	submit(t, c, 2, "q17", 1, 1)
	admitted, _ := cycle(c)
	require.ElementsMatch(t, []int32{1, 2}, admitted)
	require.Equal(t, Stats{Cycles: 1, QueuesWalked: 2}, c.Stats())

	submit(t, c, 3, "q17", 2, 0)
	admitted, _ = cycle(c)
	require.Empty(t, admitted)
	// One search: q17's head (3) does not fit its 1 GPU, set aside;
	// nothing else is pending: 1 more.
	require.Equal(t, Stats{Cycles: 2, QueuesWalked: 3}, c.Stats())
}

// Heads that borrow go in order of how far up the cohort tree they borrow
// (Kueue's classical iterator compares Assignment.Borrows(), the height of
// the lowest subtree that holds the workload), then in queue order. Tree:
// root holds Cohort mid (a: 2 GPUs, b: none) and c (2). c's w2 (3 GPUs,
// created 0) borrows 1 from root (height 2: it has a child Cohort); b's
// w1 (2 GPUs, created 1) borrows a's 2 within mid (height 1). Both cannot
// fit the tree's 4: w1 goes first though it is younger, and w2 then finds
// 4 - 2 = 2 GPUs for its 3. Ordering borrowers by age alone admitted w2.
func TestBorrowersByHeightOfTheirBorrowing(t *testing.T) {
	s := Spec{Flavors: []Flavor{{Name: "gpu"}},
		Cohorts:       []Cohort{{Name: "root"}, {Name: "mid", Parent: "root"}},
		ClusterQueues: []ClusterQueue{cq("a", "mid", q(2)), cq("b", "mid", q(0)), cq("c", "root", q(2))}}
	for _, c := range s.ClusterQueues {
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
	}
	c, err := New(s)
	require.NoError(t, err)
	require.NoError(t, c.Submit(Workload{ID: 2, Queue: "c", Created: 0, Requests: []Request{{gpu, 3}}}))
	require.NoError(t, c.Submit(Workload{ID: 1, Queue: "b", Created: 1, Requests: []Request{{gpu, 2}}}))
	a, p := cycle(c)
	require.Equal(t, []int32{1}, a)
	require.Empty(t, p)
}
