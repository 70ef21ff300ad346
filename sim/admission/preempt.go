package admission

import (
	"sort"
	"strconv"
)

// preempt tries to make room for x by evicting admitted workloads, in the
// first flavor (in order, tolerated) where preemption makes room: the
// targets are fair sharing's (fairTargets) or, by default, those of
// Kueue's classic preemption (classicTargets): when x's queue is under its nominal
// quota where x falls short, it may take back what other queues of the
// cohort borrowed (reclaimWithinCohort) and evict lower-priority
// workloads of its own queue (withinClusterQueue), x then staying within
// its nominal quota; otherwise only its own queue's workloads (and, with
// borrowWithinCohort, lower-priority borrowers of the cohort) are
// candidates and x may borrow. Candidates from other queues go first, then
// lower priority, then the most recently admitted; the greedy set is then
// trimmed of those x does not need. g is the first of x's groups that
// does not fit as things stand; a flavor whose targets make room there but
// leave another group short is passed over. It appends the evictions and
// x's admission to out, or returns false when nothing works.
func (c *Controller) preempt(x *wl, g int, out *[]Decision) bool {
	st := c.cqs[x.cq]
	if g < 0 {
		return false
	}
	cross := "reclamation within the cohort"
	if c.spec.FairSharing != nil {
		cross = "fair sharing within the cohort"
	}
	for f := range st.flavors[g] {
		if c.flavorVerdict(st, x, g, f) != candidate {
			continue
		}
		targets := c.targetsFor(x, g, f)
		if targets == nil {
			continue
		}
		// The targets make room in group g: evict them only if x then
		// fits in every group.
		evict := c.simulateEviction(targets)
		assign := c.scratchAssign(st)
		if c.assignment(x, true, assign, false).outcome != fit {
			evict.undo()
			continue
		}
		for _, t := range targets {
			reclaim := t.cq != x.cq
			why := "prioritization in the ClusterQueue"
			if reclaim {
				why = cross
			}
			t.reason = "Preempted to accommodate a workload (UID: " + strconv.Itoa(int(x.ID)) + ") due to " + why
			c.evicted = append(c.evicted, t)
			*out = append(*out, Decision{ID: t.ID, Preempted: true, By: x.ID, Reclaim: reclaim})
		}
		*out = append(*out, c.admit(x, assign))
		return true
	}
	return false
}

// targetsFor are the workloads whose preemption would let x into group
// g's flavor f (nil: none would), the usage left as it was.
func (c *Controller) targetsFor(x *wl, g, f int) []*wl {
	st := c.cqs[x.cq]
	p := st.Preempt
	if c.spec.FairSharing != nil {
		if p.WithinClusterQueue == Never && p.ReclaimWithinCohort == Never {
			return nil
		}
		return c.fairTargets(x, g, f, c.candidates(x, g, f, c.shortResources(x, g, f), p.ReclaimWithinCohort, p.WithinClusterQueue))
	}
	if p.WithinClusterQueue == Never && p.ReclaimWithinCohort == Never && p.BorrowWithinCohort == Never {
		return nil
	}
	return c.classicTargets(x, g, f)
}

// classicTargets is classic preemption's choice on group g's flavor f:
// reclaim (x within its nominal quota where it falls short), else within
// the queue and, with borrowWithinCohort, from lower-priority borrowers.
func (c *Controller) classicTargets(x *wl, g, f int) []*wl {
	st := c.cqs[x.cq]
	p := st.Preempt
	short := c.shortResources(x, g, f)
	under := true
	for _, r := range short {
		if st.usage[g][f][r] >= st.quota[g][f][r].Nominal {
			under = false
		}
	}
	var targets []*wl
	if under && st.cohort >= 0 && p.ReclaimWithinCohort != Never {
		targets = c.minimal(x, g, f, c.candidates(x, g, f, short, p.ReclaimWithinCohort, p.WithinClusterQueue), false)
	}
	if targets == nil {
		cohortPolicy := Never
		if p.BorrowWithinCohort != Never {
			cohortPolicy = LowerPriority
		}
		targets = c.minimal(x, g, f, c.candidates(x, g, f, short, cohortPolicy, p.WithinClusterQueue), true)
	}
	return targets
}

// shortResources are the covered resources of group g, flavor f, that x
// does not fit.
func (c *Controller) shortResources(x *wl, g, f int) []int {
	st := c.cqs[x.cq]
	var out []int
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g {
			continue
		}
		r := st.posOf[ri]
		if ok, _ := c.fits(st, g, f, r, a, true); !ok {
			out = append(out, r)
		}
	}
	return out
}

func allowed(p Policy, x, t *wl) bool {
	switch p {
	case LowerPriority:
		return t.Priority < x.Priority
	case LowerOrNewerEqualPriority:
		return t.Priority < x.Priority || (t.Priority == x.Priority && t.Created > x.Created)
	case Any:
		return true
	}
	return false
}

// candidates are the admitted workloads on group g's flavor f of x's
// queue that use a short resource: x's own queue's as within allows, the
// cohort's as cohort allows.
func (c *Controller) candidates(x *wl, g, f int, short []int, cohort, within Policy) []*wl {
	st := c.cqs[x.cq]
	flavor := st.flavors[g][f]
	var out []*wl
	scan := func(q *cqState, p Policy) {
		if p == Never {
			return
		}
		// Where each short resource sits in q: workloads use it when
		// they were assigned that flavor in that group.
		type at struct{ g, f, ri int }
		var where []at
		for _, r := range short {
			name := st.Groups[g].Covered[r]
			if tg, tf, _, ok := c.find(q, flavor, name); ok {
				where = append(where, at{tg, tf, c.res[name]})
			}
		}
		if len(where) == 0 {
			return
		}
		for _, t := range q.admitted {
			if t == x || !allowed(p, x, t) {
				continue
			}
			for _, w := range where {
				if t.assign[w.g] == w.f && t.req[w.ri] > 0 {
					out = append(out, t)
					break
				}
			}
		}
	}
	scan(st, within)
	if st.cohort >= 0 && cohort != Never {
		for _, mi := range c.cohorts[st.cohort] {
			q := c.cqs[mi]
			if mi == x.cq || q.NotReclaimable {
				continue
			}
			if c.borrowingOn(q.node, flavor) {
				scan(q, cohort)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.cq != x.cq) != (b.cq != x.cq) {
			return a.cq != x.cq
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		if a.seq != b.seq {
			return a.seq > b.seq
		}
		return a.ID < b.ID
	})
	return out
}

// minimal removes candidates greedily until x fits, skipping a cohort
// candidate whose queue no longer borrows, then puts back those x does not
// need, newest first. nil: x does not fit even with all of them gone.
func (c *Controller) minimal(x *wl, g, f int, cands []*wl, allowBorrow bool) []*wl {
	if len(cands) == 0 {
		return nil
	}
	st := c.cqs[x.cq]
	flavor := st.flavors[g][f]
	r := removal{c: c}
	defer r.undo() // the caller releases the targets for good
	for _, t := range cands {
		if t.cq != x.cq && !c.borrowingOn(c.cqs[t.cq].node, flavor) {
			continue
		}
		r.remove(t)
		if c.fitsIn(x, g, f, allowBorrow) {
			return r.fillBack(func() bool { return c.fitsIn(x, g, f, allowBorrow) })
		}
	}
	return nil
}

// fitsIn says whether x fits group g's flavor f as the usage stands.
func (c *Controller) fitsIn(x *wl, g, f int, allowBorrow bool) bool {
	st := c.cqs[x.cq]
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g {
			continue
		}
		r := st.posOf[ri]
		if ok, _ := c.fits(st, g, f, r, a, allowBorrow); !ok {
			return false
		}
	}
	return true
}
