package admission

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func fairController(t *testing.T, strategies []FairStrategy, cqs ...ClusterQueue) *Controller {
	t.Helper()
	s := Spec{Flavors: []Flavor{{Name: "gpu"}}, ClusterQueues: cqs, FairSharing: &FairSharing{Strategies: strategies}}
	for _, c := range cqs {
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
	}
	c, err := New(s)
	require.NoError(t, err)
	return c
}

func weight(milli int64) func(*ClusterQueue) {
	return func(q *ClusterQueue) { q.FairWeight = milli }
}

func reclaimAny(q *ClusterQueue) { q.Preempt.ReclaimWithinCohort = Any }

// Share values: the cohort lends 6+2+2 = 10 GPUs; team-b running 5 on a
// nominal 2 borrows 3, 300 per thousand of what the cohort lends; with
// weight 2 its share is 150, with weight 0 infinite.
func TestShareValue(t *testing.T) {
	for _, tc := range []struct {
		weight int64
		want   int64
	}{{0, 300}, {1000, 300}, {2000, 150}, {500, 600}, {ZeroWeight, math.MaxInt64}} {
		c := fairController(t, nil, cq("a", "org", q(6)), cq("b", "org", q(2), weight(tc.weight)), cq("c", "org", q(2)))
		submit(t, c, 1, "b", 5, 0)
		a, _ := cycle(c)
		require.Equal(t, []int32{1}, a)
		s := c.Standings()
		require.Equal(t, tc.want, s[1].Share, "weight %d", tc.weight)
		require.Zero(t, s[0].Share, "a lends, it does not borrow")
	}
}

// Admission order: team-a (share 750 with 6 of the lender's 8 GPUs) and
// team-b (share 0) each have a 2-GPU head and 2 GPUs are free. Classic
// admission takes the older head, team-a's; fair sharing takes team-b's,
// whose share with it (250) is lower than team-a's would be (1000).
func TestFairAdmissionOrder(t *testing.T) {
	setup := func(c *Controller) {
		submit(t, c, 1, "a", 6, 0)
		a, _ := cycle(c)
		require.Equal(t, []int32{1}, a)
		submit(t, c, 2, "a", 2, 0)
		submit(t, c, 3, "b", 2, 0)
	}
	queues := []ClusterQueue{cq("lender", "org", q(8)), cq("a", "org", q(0)), cq("b", "org", q(0))}
	classic := controller(t, queues...)
	setup(classic)
	a, _ := cycle(classic)
	require.Equal(t, []int32{2}, a)

	fair := fairController(t, nil, queues...)
	setup(fair)
	a, _ = cycle(fair)
	require.Equal(t, []int32{3}, a)
	require.Equal(t, int64(250), fair.Standings()[2].Share)
}

// LessThanOrEqualToFinalShare evens out borrowing: team-a holds all 8 of
// the lender's GPUs in four 2-GPU workloads (share 1000). team-b's first
// 2-GPU workload would give it 250 <= 750, a's share without a workload,
// so a's newest goes; the second gives 500 <= 500 and another goes; the
// third would give 750 > 250 (and 750 is not below a's 500), so the
// cohort settles at 4 and 4. Classic preemption does nothing: team-b is
// not under its nominal quota and does not preempt to borrow.
func TestFairPreemptionEvensBorrowing(t *testing.T) {
	queues := []ClusterQueue{cq("lender", "org", q(8)), cq("a", "org", q(0), reclaimAny), cq("b", "org", q(0), reclaimAny)}
	run := func(c *Controller) (preempted []int32) {
		for id := int32(1); id <= 4; id++ {
			submit(t, c, id, "a", 2, 0)
		}
		a, _ := cycle(c)
		require.Equal(t, []int32{1, 2, 3, 4}, a)
		for id := int32(5); id <= 7; id++ {
			submit(t, c, id, "b", 2, 0)
			_, p := cycle(c)
			preempted = append(preempted, p...)
		}
		return preempted
	}
	for _, strategies := range [][]FairStrategy{{LessThanOrEqualToFinalShare}, nil} {
		fair := fairController(t, strategies, queues...)
		require.Equal(t, []int32{4, 3}, run(fair))
		s := fair.Standings()
		require.Equal(t, int64(4), s[1].Used)
		require.Equal(t, int64(4), s[2].Used)
		require.False(t, fair.Admitted(7))
		require.True(t, fair.Admitted(5) && fair.Admitted(6))
	}

	require.Empty(t, run(controller(t, queues...)))
}

// LessThanInitialShare lets a small workload break up a greedy one:
// team-a's single 8-GPU workload (share 1000) would leave a at 0 if
// preempted, and team-b's 250 is not <= 0, so LessThanOrEqualToFinalShare
// alone refuses; 250 < 1000 and the default pair of strategies preempts.
func TestFairPreemptionGreedyWorkload(t *testing.T) {
	queues := []ClusterQueue{cq("lender", "org", q(8)), cq("a", "org", q(0), reclaimAny), cq("b", "org", q(0), reclaimAny)}
	for _, tc := range []struct {
		strategies []FairStrategy
		preempted  []int32
	}{
		{[]FairStrategy{LessThanOrEqualToFinalShare}, nil},
		{[]FairStrategy{LessThanInitialShare}, []int32{1}},
		{nil, []int32{1}},
	} {
		c := fairController(t, tc.strategies, queues...)
		submit(t, c, 1, "a", 8, 0)
		cycle(c)
		submit(t, c, 2, "b", 2, 0)
		admitted, p := cycle(c)
		require.Equal(t, tc.preempted, p, "%v", tc.strategies)
		if p != nil {
			require.Equal(t, []int32{2}, admitted)
		}
	}
}

// Weights: team-a (weight 3) holds 8 borrowed GPUs, share 1000/3 = 333.
// team-b's first 2 GPUs give it 250, a without a workload 750/3 = 250:
// 250 <= 250, one goes. The second would give b 500 against a's 500/3 =
// 166 after: refused. a keeps 6 and b gets 2, 3 to 1.
func TestFairPreemptionWeights(t *testing.T) {
	c := fairController(t, []FairStrategy{LessThanOrEqualToFinalShare}, cq("lender", "org", q(8)), cq("a", "org", q(0), reclaimAny, weight(3000)), cq("b", "org", q(0), reclaimAny))
	for id := int32(1); id <= 4; id++ {
		submit(t, c, id, "a", 2, 0)
	}
	cycle(c)
	require.Equal(t, int64(333), c.Standings()[1].Share)
	submit(t, c, 5, "b", 2, 0)
	_, p := cycle(c)
	require.Equal(t, []int32{4}, p)
	submit(t, c, 6, "b", 2, 0)
	_, p = cycle(c)
	require.Empty(t, p)
	s := c.Standings()
	require.Equal(t, []int64{6, 2}, []int64{s[1].Used, s[2].Used})
}

// Reclaim under fair sharing: team-a, within its nominal 4, takes back
// what team-b borrowed whatever the shares; without reclaimWithinCohort it
// cannot.
func TestFairReclaim(t *testing.T) {
	for _, tc := range []struct {
		opts      []func(*ClusterQueue)
		preempted []int32
	}{{[]func(*ClusterQueue){reclaimAny}, []int32{4}}, {nil, nil}} {
		c := fairController(t, nil, cq("a", "org", q(4), tc.opts...), cq("b", "org", q(4)))
		for id := int32(1); id <= 4; id++ {
			submit(t, c, id, "b", 2, 0)
		}
		cycle(c)
		submit(t, c, 5, "a", 2, 0)
		_, p := cycle(c)
		require.Equal(t, tc.preempted, p)
	}
}

// FairShares: a cohort of a (nominal 4), b (2) and c (2, weight 2)
// asking for 1, 6 and 6 GPUs. Each first gets its demand up to its
// nominal quota (1, 2, 2); a leaves 3 unused, shared 1:2 between b and c
// (3 and 4). A lending limit of 2 on a leaves 2 to share (b 2+2/3, c
// 2+4/3); a borrowing limit of 1 on c gives it 3 and b the rest, 4.
func TestFairShares(t *testing.T) {
	demand := func(c *Controller) []Standing {
		submit(t, c, 1, "a", 1, 0)
		submit(t, c, 2, "b", 6, 0)
		submit(t, c, 3, "c", 6, 0)
		return c.Standings()
	}
	c := controller(t, cq("a", "org", q(4)), cq("b", "org", q(2)), cq("c", "org", q(2), weight(2000)))
	require.InDeltaSlice(t, []float64{1, 3, 4}, c.FairShares(demand(c)), 1e-9)

	lend := q(4)
	lend.LendingLimit = 2
	c = controller(t, cq("a", "org", lend), cq("b", "org", q(2)), cq("c", "org", q(2), weight(2000)))
	require.InDeltaSlice(t, []float64{1, 2 + 2.0/3, 2 + 4.0/3}, c.FairShares(demand(c)), 1e-9)
	// The same when a asks for nothing: it keeps back 4 - 2 = 2 all the
	// same (the division skips children asking nothing only where they
	// keep nothing back), b and c share 8 - 2 - 2 - 2 = 2 as 1:2.
	c = controller(t, cq("a", "org", lend), cq("b", "org", q(2)), cq("c", "org", q(2), weight(2000)))
	submit(t, c, 2, "b", 6, 0)
	submit(t, c, 3, "c", 6, 0)
	require.InDeltaSlice(t, []float64{0, 2 + 2.0/3, 2 + 4.0/3}, c.FairShares(c.Standings()), 1e-9)
	require.InDeltaSlice(t, []float64{0, 2 + 2.0/3, 2 + 4.0/3}, c.Usage().Fair, 1e-9)

	borrow := q(2)
	borrow.BorrowingLimit = 1
	c = controller(t, cq("a", "org", q(4)), cq("b", "org", q(2)), cq("c", "org", borrow, weight(2000)))
	require.InDeltaSlice(t, []float64{1, 4, 3}, c.FairShares(demand(c)), 1e-9)

	// Weight 0 gets only what the others leave: c asks for 6, b for 3.
	c = controller(t, cq("a", "org", q(4)), cq("b", "org", q(2)), cq("c", "org", q(2), weight(ZeroWeight)))
	submit(t, c, 1, "a", 1, 0)
	submit(t, c, 2, "b", 3, 0)
	submit(t, c, 3, "c", 6, 0)
	require.InDeltaSlice(t, []float64{1, 3, 4}, c.FairShares(c.Standings()), 1e-9)
}

// Hierarchical fair sharing, KEP-1714's story 3: a shared ClusterQueue
// holds 300 GPUs in Cohort CS; Cohort C1 holds queues 1a, 1b and 1c (1c
// weighs 3), Cohort C2 holds 2a, all with no quota of their own and long
// backlogs. Shares are compared root to leaves: the fair division gives C1
// and C2 150 each, and within C1 1a, 1b and 1c 30, 30 and 90. Admission
// without preemption does not reach it: Kueue's cycle takes one head a
// queue and orders the heads by share, so each cycle admits one 10-GPU
// workload in each of the four queues while they fit: 7 cycles, 70 GPUs
// each (280), and the 8th has room for two. Its tournament compares org's
// children: C2 with its head admitted (80) before C1 (210 + 10); then,
// within C1, 1c's (70 + 10) / 3 before 1a's and 1b's 80: 0, 70, 70, 80,
// 80. A flat comparison of the queues' own shares would give the last two
// to 1c and to 1a (the older head), not to 2a.
func TestHierarchicalFairSharing(t *testing.T) {
	s := Spec{
		Flavors: []Flavor{{Name: "gpu"}},
		Cohorts: []Cohort{{Name: "org"}, {Name: "CS", Parent: "org"}, {Name: "C1", Parent: "org"}, {Name: "C2", Parent: "org"}},
		ClusterQueues: []ClusterQueue{cq("shared", "CS", q(300)), cq("1a", "C1", q(0)), cq("1b", "C1", q(0)),
			cq("1c", "C1", q(0), weight(3000)), cq("2a", "C2", q(0))},
		FairSharing: &FairSharing{},
	}
	for _, c := range s.ClusterQueues {
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
	}
	c, err := New(s)
	require.NoError(t, err)
	id := int32(0)
	for n := 0; n < 40; n++ {
		for _, q := range []string{"1a", "1b", "1c", "2a"} {
			id++
			submit(t, c, id, q, 10, 0)
		}
	}
	// The reported fair division of the demand agrees, before any
	// admission.
	require.InDeltaSlice(t, []float64{0, 30, 30, 90, 150}, c.FairShares(c.Standings()), 1e-9)
	settle(c)
	st := c.Standings()
	require.Equal(t, []int64{0, 70, 70, 80, 80}, []int64{st[0].Used, st[1].Used, st[2].Used, st[3].Used, st[4].Used})
	// With the backlog left waiting, another tournament decides nothing
	// and allocates nothing.
	require.Zero(t, testing.AllocsPerRun(20, func() { require.Empty(t, settle(c)) }))

	// The forms that write over a buffer (the run's integrals take them at
	// every change) give the same, in the buffer, without allocating.
	buf, fair := make([]Standing, 0, 8), make([]float64, 0, 8)
	buf = c.AppendStandings(buf)
	require.Equal(t, st, buf)
	fair = c.AppendFairShares(fair, buf)
	require.Equal(t, c.FairShares(st), fair)
	allocs := testing.AllocsPerRun(100, func() {
		buf = c.AppendStandings(buf)
		fair = c.AppendFairShares(fair, buf)
	})
	require.Zero(t, allocs)
	require.Equal(t, st, buf)
}

// Preemption across subtrees compares the two sides of the common
// ancestor: Cohort D1 (weight 3) holds 1a, D2 (weight 1) holds 2a; a
// lender holds the 8 GPUs. 1a runs four 2-GPU workloads (D1's share
// 1000/3 = 333). 2a's first 2 GPUs give D2 250, and D1 without one
// workload 750/3 = 250: 250 <= 250, one goes. The second would give D2
// 500 against D1's 500/3 = 166 after (250 before): refused. D1 keeps 6
// to D2's 2, the Cohorts' 3 to 1; without Cohort weights it would be 4
// and 4.
func TestHierarchicalFairPreemption(t *testing.T) {
	for _, tc := range []struct {
		weight int64
		want   []int64
	}{{3000, []int64{6, 2}}, {0, []int64{4, 4}}} {
		s := Spec{
			Flavors:       []Flavor{{Name: "gpu"}},
			Cohorts:       []Cohort{{Name: "org"}, {Name: "CS", Parent: "org"}, {Name: "D1", Parent: "org", FairWeight: tc.weight}, {Name: "D2", Parent: "org"}},
			ClusterQueues: []ClusterQueue{cq("lender", "CS", q(8)), cq("1a", "D1", q(0), reclaimAny), cq("2a", "D2", q(0), reclaimAny)},
			FairSharing:   &FairSharing{Strategies: []FairStrategy{LessThanOrEqualToFinalShare}},
		}
		for _, c := range s.ClusterQueues {
			s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
		}
		c, err := New(s)
		require.NoError(t, err)
		for id := int32(1); id <= 4; id++ {
			submit(t, c, id, "1a", 2, 0)
		}
		settle(c)
		for id := int32(5); id <= 7; id++ {
			submit(t, c, id, "2a", 2, 0)
			settle(c)
		}
		st := c.Standings()
		require.Equal(t, tc.want, []int64{st[1].Used, st[2].Used}, "D1 weight %d", tc.weight)
	}
}

// FairShares with idle parts of the tree (a ClusterQueue per team, most
// with nothing to admit): KEP-1714's story 3 above plus Cohort C3 whose
// queues ask for nothing, 3a with 60 GPUs of quota (lent whole) and 3b
// with none. The tree then holds 360 GPUs; C1 (asking 1,200) and C2
// (400) get 180 each, and within C1 1a, 1b and 1c (weight 3) get 36, 36
// and 108; shared, 3a and 3b ask for nothing and get nothing.
func TestFairSharesIdleCohort(t *testing.T) {
	s := Spec{
		Flavors: []Flavor{{Name: "gpu"}},
		Cohorts: []Cohort{{Name: "org"}, {Name: "CS", Parent: "org"}, {Name: "C1", Parent: "org"}, {Name: "C2", Parent: "org"},
			{Name: "C3", Parent: "org"}},
		ClusterQueues: []ClusterQueue{cq("shared", "CS", q(300)), cq("1a", "C1", q(0)), cq("1b", "C1", q(0)),
			cq("1c", "C1", q(0), weight(3000)), cq("2a", "C2", q(0)), cq("3a", "C3", q(60)), cq("3b", "C3", q(0))},
		FairSharing: &FairSharing{},
	}
	for _, c := range s.ClusterQueues {
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
	}
	c, err := New(s)
	require.NoError(t, err)
	id := int32(0)
	for n := 0; n < 40; n++ {
		for _, q := range []string{"1a", "1b", "1c", "2a"} {
			id++
			submit(t, c, id, q, 10, 0)
		}
	}
	require.InDeltaSlice(t, []float64{0, 36, 36, 108, 180, 0, 0}, c.FairShares(c.Standings()), 1e-9)
}

// Fair sharing orders heads by their sides' shares first only among sides
// that borrow, or not, alike: a side that does not borrow on the
// flavor-resources its head asks for goes before one that does, whatever
// their shares (Kueue's FairSharingPrioritizeNonBorrowing, on by default
// in v0.17). Cohort org: lender L (spot 4), a (reserved 2), b (nothing).
// a runs 1 (3 GPUs, borrowing spot). Pending, 2 GPUs each: a's 3 and b's
// 4, both on reserved (1 spot GPU left). Shares with them in: a borrows 3
// of the 6 GPUs lent (500), b 2 (333). b's 4 would go first by share; but
// a does not borrow reserved, b would: a's 3 goes first and takes
// reserved, and 4 no longer fits.
func TestFairNonBorrowingSideFirst(t *testing.T) {
	s := Spec{Flavors: []Flavor{{Name: "reserved"}, {Name: "spot"}}, FairSharing: &FairSharing{},
		ClusterQueues: []ClusterQueue{twoFlavors("L", "org", 0, 4), twoFlavors("a", "org", 2, 0), twoFlavors("b", "org", 0, 0)}}
	for _, q := range s.ClusterQueues {
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: q.Name, ClusterQueue: q.Name})
	}
	c, err := New(s)
	require.NoError(t, err)
	submit(t, c, 1, "a", 3, 0)
	ds := settle(c)
	require.Equal(t, "spot", flavorOf(t, c, 1, ds))
	submit(t, c, 3, "a", 2, 0)
	submit(t, c, 4, "b", 2, 0)
	a, _ := cycle(c)
	require.Equal(t, []int32{3}, a)
}

// Fair sharing compares heads within a cohort tree only (Kueue's
// iterator takes some queue and runs its tree's tournament): a queue of
// no cohort (solo, listed first) does not stand between them. Tree org: a
// (nothing) and b (2 GPUs). Pending: solo's 1 (1 GPU), a's 2 (priority
// 100, 2 GPUs, borrowing b's), b's 3 (2 GPUs, its own). In org, b's 3
// (share 0) goes before a's 2 (share 1000) and takes the GPUs. Compared
// with solo's 1 on priority, a's 2 came first and took them.
func TestFairTournamentWithinItsTree(t *testing.T) {
	c := fairController(t, nil, cq("solo", "", q(4)), cq("b", "org", q(2)), cq("a", "org", q(0)))
	submit(t, c, 1, "solo", 1, 0)
	submit(t, c, 2, "a", 2, 100)
	submit(t, c, 3, "b", 2, 0)
	a, _ := cycle(c)
	require.ElementsMatch(t, []int32{1, 3}, a)
}

// Kueue's fair-sharing iterator picks a head by a tournament played level
// by level (runTournament in pkg/scheduler/fair_sharing_iterator.go): a
// Cohort compares only its children's winners, by their sides' shares at
// that Cohort (entryComparer.less). Tree org (no quota of its own): x
// (4 GPUs) and Cohort mid, of a (2, weight 8) and b (2). Heads: x's 1 (6
// GPUs), a's 2 (7), b's 3 (3); any two together exceed the tree's 8.
// Within mid, a's 2 borrows 5 and b's 3 borrows 1: shares 5/8 and 1 per
// unit of quota (a's weight is 8), so a's 2 wins mid. At org, mid with
// a's 2 uses 7 of its 4 (borrows 3) and x with its 1 uses 6 of 4 (borrows
// 2): x's 1 wins and is admitted; nothing else fits. Compared pairwise at
// their common ancestor, b's 3 (mid not borrowing with it) beats x's 1,
// which beat a's 2: b's 3 was admitted, though it lost in mid.
func TestFairTournamentLevelByLevel(t *testing.T) {
	for _, pairwise := range []bool{false, true} {
		s := Spec{Flavors: []Flavor{{Name: "gpu"}}, FairSharing: &FairSharing{},
			Cohorts: []Cohort{{Name: "org"}, {Name: "mid", Parent: "org"}},
			ClusterQueues: []ClusterQueue{cq("x", "org", q(4)), cq("a", "mid", q(2), weight(8000)),
				cq("b", "mid", q(2))}}
		for _, c := range s.ClusterQueues {
			s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
		}
		c, err := New(s)
		require.NoError(t, err)
		c.pairwise = pairwise
		submit(t, c, 1, "x", 6, 0)
		submit(t, c, 2, "a", 7, 0)
		submit(t, c, 3, "b", 3, 0)
		a, p := cycle(c)
		require.Empty(t, p)
		if pairwise {
			require.Equal(t, []int32{3}, a, "the pairwise pick, before")
		} else {
			require.Equal(t, []int32{1}, a)
		}
	}
}
