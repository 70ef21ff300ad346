package admission

import "slices"

// The usage a cycle decides against is a snapshot in Kueue's sense
// (pkg/cache/scheduler): each ClusterQueue's usage cells and the cohort
// tree's nodes (tree.go: one node type for queues and Cohorts, what a node
// may borrow worked out up the tree). Admission and release change it for
// good (charge); every other change is a what-if that returns its own
// undo, so a question ("would x fit without these?", "what would the
// shares be with x admitted?") leaves the snapshot exactly as it found it:
//
//	defer c.simulateRemoval(t).undo()
//
// (Usage passes up the tree by differences, so undoing several what-ifs in
// any order restores the same state.)

// charge adds (sign +1) or takes away (-1) x's requests on its assigned
// flavors, in its queue's cells and up the cohort tree.
func (c *Controller) charge(x *wl, sign int64) {
	st := c.cqs[x.cq]
	for g, f := range x.assign {
		if f < 0 {
			continue
		}
		for ri, a := range x.req {
			if a == 0 || st.groupOf[ri] != g {
				continue
			}
			r := st.posOf[ri]
			st.usage[g][f][r] += sign * a
			c.addUsage(st.node, st.keys[g][f][r], sign*a)
		}
	}
}

// whatIf is a what-if change to the snapshot: undo puts it back. (A
// value, not a closure, so that asking costs no allocation: the hot path
// of fair sharing asks for every head of every cycle.)
type whatIf struct {
	c *Controller
	x *wl
	// sign is what the change charged x with (0: nothing to undo);
	// assign the flavors x had before.
	sign   int64
	assign []int
}

// undo takes the change back.
func (w whatIf) undo() {
	if w.sign != 0 {
		w.c.charge(w.x, -w.sign)
		w.x.assign = w.assign
	}
}

// simulateAdd charges x as if it were admitted with the flavors of assign
// (one per group of its queue, -1 unused): defer c.simulateAdd(x, a).undo().
func (c *Controller) simulateAdd(x *wl, assign []int) whatIf {
	w := whatIf{c: c, x: x, sign: +1, assign: x.assign}
	x.assign = assign
	c.charge(x, +1)
	return w
}

// simulateRemoval takes an admitted workload's usage away as if it were
// released.
func (c *Controller) simulateRemoval(x *wl) whatIf {
	c.charge(x, -1)
	return whatIf{c: c, x: x, sign: -1, assign: x.assign}
}

// eviction is a what-if release of admitted workloads.
type eviction struct {
	c       *Controller
	targets []*wl
}

// simulateEviction releases the targets (they leave their queues'
// admitted lists, and the version moves on); undo readmits them with the
// flavors and admission order they had.
func (c *Controller) simulateEviction(targets []*wl) eviction {
	for _, t := range targets {
		c.release(t)
	}
	return eviction{c, targets}
}

func (e eviction) undo() {
	for _, t := range e.targets {
		e.c.readmit(t)
	}
}

// removal is a what-if removal of workloads one by one (preemption's
// greedy search), each with its undo, and Kueue's fill-back over it.
type removal struct {
	c     *Controller
	wls   []*wl
	undos []whatIf // the zero whatIf: put back
}

// remove takes t's usage away.
func (r *removal) remove(t *wl) {
	r.wls = append(r.wls, t)
	r.undos = append(r.undos, r.c.simulateRemoval(t))
}

// undo puts back every workload still removed.
func (r *removal) undo() {
	for i := len(r.undos) - 1; i >= 0; i-- {
		r.undos[i].undo()
		r.undos[i] = whatIf{}
	}
}

// fillBack puts back, newest removal first, the removed workloads the
// preemptor does not need (fits says whether it fits as the snapshot
// stands; the last removed is needed, since it made the preemptor fit) and
// returns those that stay removed, in removal order.
func (r *removal) fillBack(fits func() bool) []*wl {
	n := len(r.wls)
	keep := []*wl{r.wls[n-1]}
	for i := n - 2; i >= 0; i-- {
		r.undos[i].undo()
		r.undos[i] = whatIf{}
		if fits() {
			continue // not needed
		}
		r.undos[i] = r.c.simulateRemoval(r.wls[i])
		keep = append(keep, r.wls[i])
	}
	slices.Reverse(keep)
	return keep
}

// outcome is what the flavor assigner makes of a workload as the snapshot
// stands, ordered worst first as Kueue's FlavorAssignmentMode
// (pkg/scheduler/flavorassigner): a workload's outcome is the worst of
// its resource groups'.
type outcome uint8

const (
	// noFit: some group has no flavor with room (preemption has not been
	// looked at).
	noFit outcome = iota
	// preemptFit: the flavor search stopped at a flavor where preemption
	// would make room (flavorFungibility whenCanPreempt: MayStopSearch).
	preemptFit
	// fit: every group has a flavor with room.
	fit
)

var outcomeNames = [...]string{"NoFit", "Preempt", "Fit"}

func (o outcome) String() string { return outcomeNames[o] }

// assignResult is the flavor assigner's answer: the outcome, whether the
// assignment borrows (fit only) and the first group that did not fit
// (-1 when it fits), where preemption is to make room.
type assignResult struct {
	outcome outcome
	borrow  bool
	failed  int
}
