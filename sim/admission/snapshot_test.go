package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// queueBuilder builds a one-group ClusterQueue over GPU flavors.
type queueBuilder struct{ q ClusterQueue }

func queue(name string) *queueBuilder {
	return &queueBuilder{ClusterQueue{Name: name, Groups: []ResourceGroup{{Covered: []string{gpu}}}}}
}

func (b *queueBuilder) cohort(name string) *queueBuilder { b.q.Cohort = name; return b }

// flavor adds a flavor with a nominal quota and limits (NoLimit: none).
func (b *queueBuilder) flavor(name string, nominal, borrowing, lending int64) *queueBuilder {
	g := &b.q.Groups[0]
	g.Flavors = append(g.Flavors, FlavorQuotas{Flavor: name, Resources: []Quota{{Nominal: nominal, BorrowingLimit: borrowing, LendingLimit: lending}}})
	return b
}

func (b *queueBuilder) within(p Policy) *queueBuilder { b.q.Preempt.WithinClusterQueue = p; return b }

func (b *queueBuilder) stopOnPreempt() *queueBuilder { b.q.Fungibility.StopOnPreempt = true; return b }

// build makes a controller of the queues, one LocalQueue per queue named
// as it, and the flavors the queues name, in order of first use.
func build(t *testing.T, qs ...*queueBuilder) *Controller {
	t.Helper()
	var s Spec
	seen := map[string]bool{}
	for _, b := range qs {
		for _, f := range b.q.Groups[0].Flavors {
			if !seen[f.Flavor] {
				seen[f.Flavor] = true
				s.Flavors = append(s.Flavors, Flavor{Name: f.Flavor})
			}
		}
		s.ClusterQueues = append(s.ClusterQueues, b.q)
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: b.q.Name, ClusterQueue: b.q.Name})
	}
	c, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// try asks the flavor assigner about a pending workload as things stand.
func try(c *Controller, id int32) (assignResult, []int) {
	x := c.queues.wls.get(id)
	as := make([]int, len(c.snap.cqs[x.cq].Groups))
	return c.assigner.assignment(x, true, as, false), as
}

var cmpResult = cmp.AllowUnexported(assignResult{})

// usage is the snapshot's usage: every queue's cells and every tree
// node's, by name.
func usage(c *Controller) map[string][]int64 {
	out := map[string][]int64{}
	for _, st := range c.snap.cqs {
		for _, fl := range st.usage[0] {
			out["queue/"+st.Name] = append(out["queue/"+st.Name], fl...)
		}
	}
	for _, n := range c.snap.nodes {
		out["node/"+n.name] = append([]int64(nil), n.usage...)
	}
	return out
}

// A cohort of two queues: team-a holds 6 GPUs and lends at most 4 (it
// keeps 2 for itself), team-b holds 2 and lends all. team-a runs 3: the 1
// beyond its kept 2 comes out of what it lends. The cohort has 4 + 2 = 6
// GPUs to share, 1 of them in use, so team-b may use 5: its 2 and a
// borrow of 3, exactly the lendable remainder (4 lendable - 1 in use). A
// 6-GPU workload in team-b falls short by 1.
func TestBorrowIsTheLendableRemainder(t *testing.T) {
	c := build(t,
		queue("team-a").cohort("org").flavor("gpu", 6, NoLimit, 4),
		queue("team-b").cohort("org").flavor("gpu", 2, NoLimit, NoLimit))
	submit(t, c, 1, "team-a", 3, 0)
	submit(t, c, 2, "team-b", 6, 0)
	submit(t, c, 3, "team-b", 5, 0)
	if a, _ := cycle(c); !cmp.Equal(a, []int32{1, 3}) {
		t.Fatalf("admitted %v, want [1 3]", a)
	}
	got, _ := try(c, 2)
	if d := cmp.Diff(assignResult{outcome: noFit, failed: 0}, got, cmpResult); d != "" {
		t.Errorf("6-GPU workload in team-b (-want +got):\n%s", d)
	}
	want := "ClusterQueue team-b: couldn't assign flavors: insufficient unused quota in flavor gpu for nvidia.com/gpu (1 more needed)"
	if d := cmp.Diff(want, c.Reason(2)); d != "" {
		t.Errorf("reason (-want +got):\n%s", d)
	}
	s := c.Standings()
	if d := cmp.Diff([]Standing{
		{Nominal: 6, Used: 3, Demand: 3, Lent: 3},
		{Nominal: 2, Used: 5, Demand: 11, Borrowed: 3, Share: 500}, // 3 borrowed per 1000 of the cohort's 6
	}, s); d != "" {
		t.Errorf("standings (-want +got):\n%s", d)
	}

	// With team-a's workload gone, the borrow may be the whole 4 team-a
	// lends: a 6-GPU workload fits (2 + 4) once the 5 is released too.
	c.Finish(1)
	c.Finish(3)
	got, _ = try(c, 2)
	if d := cmp.Diff(assignResult{outcome: fit, borrow: true, failed: -1}, got, cmpResult); d != "" {
		t.Errorf("6 GPUs with team-a idle (-want +got):\n%s", d)
	}
}

// The assigner's outcomes are ordered as Kueue's modes, and a queue that
// stops at a flavor where preemption would make room says so: queue q
// has flavors a (2 GPUs) and b (2 GPUs); a low-priority 2-GPU workload
// fills a; a high-priority 2-GPU workload then fits b, unless the queue
// stops on preemption, when it is Preempt on a (group 0).
func TestOutcome(t *testing.T) {
	if !(noFit < preemptFit && preemptFit < fit) {
		t.Fatal("outcomes out of order: want NoFit < Preempt < Fit")
	}
	if d := cmp.Diff("NoFit Preempt Fit", noFit.String()+" "+preemptFit.String()+" "+fit.String()); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		name   string
		stop   bool
		want   assignResult
		assign []int
	}{
		{"tries the next flavor", false, assignResult{outcome: fit, failed: -1}, []int{1}},
		{"stops where preemption makes room", true, assignResult{outcome: preemptFit, failed: 0}, []int{-1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := queue("q").flavor("a", 2, NoLimit, NoLimit).flavor("b", 2, NoLimit, NoLimit).within(LowerPriority)
			if tc.stop {
				b.stopOnPreempt()
			}
			c := build(t, b)
			submit(t, c, 1, "q", 2, 0)
			cycle(c)
			submit(t, c, 2, "q", 2, 10)
			got, as := try(c, 2)
			if d := cmp.Diff(tc.want, got, cmpResult); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.assign, as); d != "" {
				t.Errorf("assignment (-want +got):\n%s", d)
			}
		})
	}
	// Nothing fits and nothing may be preempted: NoFit.
	c := build(t, queue("q").flavor("a", 2, NoLimit, NoLimit))
	submit(t, c, 1, "q", 3, 0)
	if got, _ := try(c, 1); got.outcome != noFit {
		t.Errorf("3 GPUs in a 2-GPU queue: %v, want NoFit", got.outcome)
	}
}

// Every what-if leaves the snapshot as it found it, and shows the change
// while it holds: neither queue keeps quota back (no lendingLimit), so
// the cohort node counts every GPU in use: team-a's 1 + 2 and, with
// team-b's 3-GPU workload added, 3 more: 6. Removing team-a's 1-GPU
// workload takes 1 off team-a's cells.
func TestWhatIfsUndo(t *testing.T) {
	c := build(t,
		queue("team-a").cohort("org").flavor("gpu", 4, NoLimit, NoLimit),
		queue("team-b").cohort("org").flavor("gpu", 2, NoLimit, NoLimit))
	submit(t, c, 1, "team-a", 1, 0)
	submit(t, c, 2, "team-a", 2, 0)
	cycle(c)
	submit(t, c, 3, "team-b", 3, 0)
	before := usage(c)

	a := c.snap.simulateAdd(c.queues.wls.get(3), []int{0})
	if got := usage(c); got["node/org"][0] != 6 || got["queue/team-b"][0] != 3 {
		t.Errorf("with team-b's 3 added: cohort %d, team-b %d; want 6 and 3", got["node/org"][0], got["queue/team-b"][0])
	}
	a.undo()
	if d := cmp.Diff(before, usage(c)); d != "" {
		t.Errorf("after simulateAdd's undo (-want +got):\n%s", d)
	}

	r := c.snap.simulateRemoval(c.queues.wls.get(1))
	if got := usage(c)["queue/team-a"][0]; got != 2 {
		t.Errorf("team-a without its 1-GPU workload uses %d, want 2", got)
	}
	r.undo()
	if d := cmp.Diff(before, usage(c)); d != "" {
		t.Errorf("after simulateRemoval's undo (-want +got):\n%s", d)
	}

	e := c.snap.simulateEviction([]*wl{c.queues.wls.get(1), c.queues.wls.get(2)})
	if c.Admitted(1) || c.Admitted(2) {
		t.Error("evicted workloads still admitted during the what-if")
	}
	e.undo()
	if !c.Admitted(1) || !c.Admitted(2) {
		t.Error("eviction's undo did not readmit")
	}
	if d := cmp.Diff(before, usage(c)); d != "" {
		t.Errorf("after simulateEviction's undo (-want +got):\n%s", d)
	}
}

// Fill-back keeps only the removals the preemptor needs: queue q (8 GPUs)
// runs workloads of 2, 1, 4 and 1 GPUs; a 6-GPU preemptor removes 2, 1
// and 4 (free 2, 3, then 7 >= 6). Putting the 1 back leaves 6 free: not
// needed. Putting the 2 back leaves 4: needed. So 2 and 4 go, in removal
// order, and the snapshot is as before once the removal is undone.
func TestFillBack(t *testing.T) {
	c := build(t, queue("q").flavor("gpu", 8, NoLimit, NoLimit))
	for i, g := range []int64{2, 1, 4, 1} {
		submit(t, c, int32(i+1), "q", g, 0)
	}
	cycle(c)
	before := usage(c)
	submit(t, c, 5, "q", 6, 0)
	x := c.queues.wls.get(5)
	fits := func() bool { return c.snap.fitsIn(x, 0, 0, false) }
	r := removal{s: &c.snap}
	for _, id := range []int32{1, 2, 3} {
		if fits() {
			t.Fatalf("fits before workload %d is removed", id)
		}
		r.remove(c.queues.wls.get(id))
	}
	if !fits() {
		t.Fatal("does not fit with 7 GPUs free")
	}
	var got []int32
	for _, k := range r.fillBack(fits) {
		got = append(got, k.ID)
	}
	if d := cmp.Diff([]int32{1, 3}, got); d != "" {
		t.Errorf("kept out (-want +got):\n%s", d)
	}
	if u := usage(c)["queue/q"][0]; u != 2 {
		t.Errorf("usage with 2 and 4 removed: %d, want 8-2-4 = 2", u)
	}
	r.undo()
	if d := cmp.Diff(before, usage(c)); d != "" {
		t.Errorf("after the removal's undo (-want +got):\n%s", d)
	}
}

// The preemptor picks the fewest newest lower-priority workloads that make
// room, and leaves them released: queue q (4 GPUs, withinClusterQueue
// LowerPriority) runs workloads 1, 2 and 3 of 1, 2 and 1 GPUs at priority
// 0 (admitted in that order). A 2-GPU workload at priority 5 finds no
// room. Candidates newest first: 3 (1 GPU: 1 free, short), then 2 (3
// free: fits); putting 3 back leaves 2 free, enough: the target is 2
// alone, and x's assignment is the queue's one flavor.
func TestPreemptorTargets(t *testing.T) {
	c := build(t, queue("q").flavor("gpu", 4, NoLimit, NoLimit).within(LowerPriority))
	for i, g := range []int64{1, 2, 1} {
		submit(t, c, int32(i+1), "q", g, 0)
	}
	cycle(c)
	submit(t, c, 4, "q", 2, 5)
	x := c.queues.wls.get(4)
	if got, _ := try(c, 4); got.outcome != noFit {
		t.Fatalf("outcome before preemption %v, want NoFit", got.outcome)
	}
	if !c.preemptor.canPreempt(x, 0, 0) {
		t.Fatal("canPreempt: false, want true")
	}
	if d := cmp.Diff([]int64{4}, usage(c)["queue/q"]); d != "" {
		t.Fatalf("canPreempt changed the usage (-want +got):\n%s", d)
	}
	targets, assign := c.preemptor.preempt(x, 0)
	var ids []int32
	for _, t := range targets {
		ids = append(ids, t.ID)
	}
	if d := cmp.Diff([]int32{2}, ids); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{0}, assign); d != "" {
		t.Errorf("assignment (-want +got):\n%s", d)
	}
	if c.Admitted(2) || !c.Admitted(1) || !c.Admitted(3) {
		t.Errorf("admitted after preempt: 1 %v, 2 %v, 3 %v; want true, false, true", c.Admitted(1), c.Admitted(2), c.Admitted(3))
	}
	if u := usage(c)["queue/q"][0]; u != 2 {
		t.Errorf("usage with 2 released: %d, want 4-2 = 2", u)
	}
}

// No lower-priority workload may go: an equal-priority preemptor gets no
// targets and the snapshot is left as it was.
func TestPreemptorNothingToTake(t *testing.T) {
	c := build(t, queue("q").flavor("gpu", 4, NoLimit, NoLimit).within(LowerPriority))
	submit(t, c, 1, "q", 4, 0)
	cycle(c)
	submit(t, c, 2, "q", 2, 0)
	before := usage(c)
	if targets, assign := c.preemptor.preempt(c.queues.wls.get(2), 0); targets != nil || assign != nil {
		t.Errorf("preempt: %v, %v; want nothing", targets, assign)
	}
	if d := cmp.Diff(before, usage(c)); d != "" {
		t.Errorf("usage changed (-want +got):\n%s", d)
	}
}
