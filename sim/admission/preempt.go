package admission

import (
	"slices"
	"sort"
)

// preemptor is Kueue's Preemptor: it picks the admitted workloads whose
// eviction would let a pending one in, by what-ifs on the snapshot, and
// asks the flavor assigner whether the pending one then fits.
type preemptor struct {
	snap     *snapshot
	assigner *flavorAssigner
	// fair is the spec's fair sharing (nil: classic preemption).
	fair *FairSharing
	// assignBuf is scratch for the assignments it tries.
	assignBuf []int
	// A workload of several PodSets: the flavors of the PodSets before
	// the one that did not fit (prior), and what that one and they ask
	// of a flavor of its group (need).
	prior []int
	need  []int64
}

var _ preemptionOracle = &preemptor{}

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
// leave another group short is passed over. It returns the targets,
// released from the snapshot, and x's assignment with them gone (in the
// preemptor's scratch), or nil when nothing works.
//
// Among the flavors where preemption makes room, Kueue's flavor assigner
// (flavorassigner.go, findFlavorForPodSetResource with isPreferred, its
// default BorrowingOverPreemption) takes, under whenCanPreempt:
// TryNextFlavor, the best: one whose targets are all other queues'
// (reclaim) over one that evicts from x's own queue (preempt), then the
// one where x borrows from nearest (borrowing level 0: not at all), then
// the first; under MayStopSearch the first.
func (pr *preemptor) preempt(x *wl, g int) ([]*wl, []int) {
	st := pr.snap.cqs[x.cq]
	if g < 0 {
		return nil, nil
	}
	// A workload of several PodSets makes room for the PodSet that did
	// not fit, on a flavor its pods may use, where that PodSet's
	// requests and the earlier PodSets' there fall short (Kueue's
	// findFlavorForPodSets asks its preemption oracle the same).
	class, set := x.class, -1
	if len(x.sets) > 0 {
		fa := pr.assigner
		set = fa.failedSet
		class = x.sets[set].class
		pr.prior = append(pr.prior[:0], fa.failedPrior...)
		req := x.req
		defer func() { x.req = req }()
	}
	needOn := func(f int) {
		if set < 0 {
			return
		}
		fa := pr.assigner
		fa.prior, fa.own = pr.prior, x.sets[set].req
		fa.need(x, st, g, f)
		fa.prior, fa.own = nil, nil
		pr.need = append(pr.need[:0], x.req...)
		x.req = pr.need
	}
	best, bestReclaim, bestLevel := -1, false, 0
	for f := range st.flavors[g] {
		if st.classes[class][st.flat[g]+f] != candidate {
			continue
		}
		needOn(f)
		targets := pr.targetsFor(x, g, f)
		if targets == nil {
			continue
		}
		// The targets make room in group g: evict them only if x then
		// fits in every group.
		evict := pr.snap.simulateEviction(targets)
		assign := pr.scratch(st, x)
		if pr.assigner.assignment(x, true, assign, false).outcome != fit {
			evict.undo()
			continue
		}
		if st.Fungibility.StopOnPreempt {
			return targets, assign
		}
		reclaim := true
		for _, t := range targets {
			if t.cq == x.cq {
				reclaim = false
			}
		}
		level := pr.borrowLevel(x, g, f)
		evict.undo()
		if best < 0 || (reclaim && !bestReclaim) || (reclaim == bestReclaim && level < bestLevel) {
			best, bestReclaim, bestLevel = f, reclaim, level
		}
	}
	if best < 0 {
		return nil, nil
	}
	needOn(best)
	targets := pr.targetsFor(x, g, best)
	pr.snap.simulateEviction(targets)
	assign := pr.scratch(st, x)
	pr.assigner.assignment(x, true, assign, false)
	return targets, assign
}

// borrowLevel is how far up its cohort tree x would borrow on group g's
// flavor f as usage stands: the largest, over the resources x asks for,
// of Kueue's FindHeightOfLowestSubtreeThatFits (0 where the queue's own
// quota holds it, else the height of the lowest ancestor whose subtree
// holds what the nodes below leave unused short).
func (pr *preemptor) borrowLevel(x *wl, g, f int) int {
	st := pr.snap.cqs[x.cq]
	nodes := pr.snap.nodes
	n := nodes[st.node]
	level := 0
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g || n.parent < 0 {
			continue
		}
		k := st.keys[g][f][st.posOf[ri]]
		if n.usage[k]+a <= n.subtree[k] {
			continue
		}
		remaining := a - max(0, n.guaranteed(k)-n.usage[k])
		h := -1
		last := n.parent
		for i := n.parent; i >= 0; i = nodes[i].parent {
			m := nodes[i]
			last = i
			if m.usage[k]+remaining <= m.subtree[k] {
				h = m.height
				break
			}
			remaining -= max(0, m.guaranteed(k)-m.usage[k])
		}
		if h < 0 {
			h = nodes[last].height
		}
		level = max(level, h)
	}
	return level
}

// canPreempt says whether preempting admitted workloads would let x into
// group g's flavor f, the snapshot left as it was.
func (pr *preemptor) canPreempt(x *wl, g, f int) bool { return pr.targetsFor(x, g, f) != nil }

// scratch is a scratch assignment of x in its queue st.
func (pr *preemptor) scratch(st *cqState, x *wl) []int {
	n := x.alen(len(st.Groups))
	pr.assignBuf = slices.Grow(pr.assignBuf[:0], n)[:n]
	return pr.assignBuf
}

// assignLevel is how far up its cohort tree x would borrow with the
// flavors of assign, as usage stands: the largest borrowLevel of its
// flavors (several PodSets on one flavor: their requests together).
func (pr *preemptor) assignLevel(x *wl, assign []int) int {
	st := pr.snap.cqs[x.cq]
	level := 0
	if groups := len(st.Groups); len(assign) > groups {
		req := x.req
		defer func() { x.req = req }()
		for g := range groups {
			for f := range st.flavors[g] {
				if need := pr.snap.needOn(x, assign, g, f); need != nil {
					x.req = need
					level = max(level, pr.borrowLevel(x, g, f))
				}
			}
		}
		return level
	}
	for g, f := range assign {
		if f >= 0 {
			level = max(level, pr.borrowLevel(x, g, f))
		}
	}
	return level
}

// targetsFor are the workloads whose preemption would let x into group
// g's flavor f (nil: none would), the usage left as it was.
func (pr *preemptor) targetsFor(x *wl, g, f int) []*wl {
	st := pr.snap.cqs[x.cq]
	p := st.Preempt
	if !pr.mayPreemptOn(x, g, f) {
		return nil
	}
	if pr.fair != nil {
		if p.WithinClusterQueue == Never && p.ReclaimWithinCohort == Never {
			return nil
		}
		return pr.fairTargets(x, g, f, pr.candidates(x, g, f, pr.shortResources(x, g, f), p.ReclaimWithinCohort, p.WithinClusterQueue))
	}
	if p.WithinClusterQueue == Never && p.ReclaimWithinCohort == Never && p.BorrowWithinCohort == Never {
		return nil
	}
	return pr.classicTargets(x, g, f)
}

// mayPreemptOn is the gate of Kueue's flavor assigner before it simulates
// preemption on a flavor (fitsResourceQuota): for every resource x falls
// short of, x's request must be within its queue's nominal quota, or the
// queue may reclaim in its hierarchy (mayReclaimInHierarchy), or it may
// preempt while borrowing (borrowWithinCohort; under fair sharing,
// reclaimWithinCohort). Otherwise the flavor does not fit and x waits,
// even where evicting its queue's lower-priority workloads and borrowing
// would let it in.
func (pr *preemptor) mayPreemptOn(x *wl, g, f int) bool {
	st := pr.snap.cqs[x.cq]
	p := st.Preempt
	if p.BorrowWithinCohort != Never || (pr.fair != nil && p.ReclaimWithinCohort != Never) {
		return true
	}
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g {
			continue
		}
		r := st.posOf[ri]
		if ok, _ := pr.snap.fits(st, g, f, r, a, true); ok || a <= st.quota[g][f][r].Nominal {
			continue
		}
		if st.cohort >= 0 && pr.mayReclaimInHierarchy(st, st.keys[g][f][r], a) {
			continue
		}
		return false
	}
	return true
}

// mayReclaimInHierarchy is Kueue's FindHeightOfLowestSubtreeThatFits's
// second answer: the lowest node on the queue's path to its root that
// holds val more of key k without borrowing (what each node below keeps
// unused counted off on the way) has a parent.
func (pr *preemptor) mayReclaimInHierarchy(st *cqState, k int, val int64) bool {
	nodes := pr.snap.nodes
	n := nodes[st.node]
	if n.usage[k]+val <= n.subtree[k] {
		return n.parent >= 0
	}
	remaining := val - max(0, n.guaranteed(k)-n.usage[k])
	for i := n.parent; i >= 0; i = nodes[i].parent {
		m := nodes[i]
		if m.usage[k]+remaining <= m.subtree[k] {
			return m.parent >= 0
		}
		remaining -= max(0, m.guaranteed(k)-m.usage[k])
	}
	return false
}

// classicTargets is Kueue v0.17.0's classical preemption on group g's
// flavor f (pkg/scheduler/preemption: classicalPreemptions, with
// classical.NewCandidateIterator and collectCandidatesForHierarchicalReclaim):
//   - candidates: x's own queue's workloads as withinClusterQueue allows;
//     with reclaimWithinCohort, the workloads it allows of the other queues
//     of x's tree that use more than their subtree quota of a short
//     resource, as does every Cohort between them and the lowest Cohort
//     they share with x. Walking up from x's queue, a queue met at a
//     Cohort where x (what the nodes below leave unused counted off) fits
//     within the quota of x's side, or below it, is reclaimed from
//     whatever its priority (hierarchical advantage); otherwise it may be
//     preempted only while x does not borrow, unless borrowWithinCohort
//     allows it and it has the lower priority;
//   - order: the hierarchical ones, then the others' (each other queues
//     first, lower priority, newest), then x's own queue's;
//   - attempts: with borrowing, then without (without first where no
//     hierarchical candidate exists and borrowWithinCohort is off; only
//     with where only x's own queue has candidates, or borrowWithinCohort
//     is off and x's queue is not under its nominal quota);
//   - each attempt removes valid candidates in order until x fits, then
//     puts back, newest removal first, those x does not need.
func (pr *preemptor) classicTargets(x *wl, g, f int) []*wl {
	s := pr.snap
	st := s.cqs[x.cq]
	p := st.Preempt
	short := pr.shortResources(x, g, f)
	keys := make([]int, len(short))
	for i, r := range short {
		keys[i] = st.keys[g][f][r]
	}
	nodes := s.nodes
	within := func(i int) bool { // Kueue's IsWithinNominalInResources
		n := nodes[i]
		for _, k := range keys {
			if n.usage[k] > n.subtree[k] {
				return false
			}
		}
		return true
	}
	const (
		whileBorrowing = iota
		withoutBorrowing
		hierarchical
		sameQueue
	)
	type cand struct {
		t       *wl
		lca     int
		variant int
	}
	var hier, prio, same []cand
	if p.WithinClusterQueue != Never {
		for _, t := range pr.candidates(x, g, f, short, Never, p.WithinClusterQueue) {
			same = append(same, cand{t, -1, sameQueue})
		}
	}
	leaf := st.node
	if nodes[leaf].parent >= 0 && p.ReclaimWithinCohort != Never {
		// Each ancestor of x's queue, with whether x has the advantage
		// there (it fits the quota of its side below it).
		var anc []int
		var adv []bool
		type fr struct {
			k int
			v int64
		}
		var req []fr
		hasAdv := true
		n := nodes[leaf]
		for ri, a := range x.req {
			if a == 0 || st.groupOf[ri] != g {
				continue
			}
			k := st.keys[g][f][st.posOf[ri]]
			if n.usage[k]+a > n.subtree[k] {
				hasAdv = false
			}
			req = append(req, fr{k, max(0, a-max(0, n.guaranteed(k)-n.usage[k]))})
		}
		for i := n.parent; i >= 0; i = nodes[i].parent {
			anc = append(anc, i)
			adv = append(adv, hasAdv)
			m := nodes[i]
			fits := true
			for j := range req {
				if m.usage[req[j].k]+req[j].v > m.subtree[req[j].k] {
					fits = false
				}
				local := max(0, m.guaranteed(req[j].k)-m.usage[req[j].k])
				if m.parent < 0 {
					local = max(0, m.subtree[req[j].k]-m.usage[req[j].k])
				}
				req[j].v = max(0, req[j].v-local)
			}
			hasAdv = hasAdv || fits
		}
		// The other queues' candidates (in Kueue's order): each queue
		// under the lowest ancestor of x's queue that holds it, all the
		// nodes on its way up to that one over their quota.
		lcaOf := map[int]int{} // queue -> index in anc, -1: none
		for _, t := range pr.candidates(x, g, f, short, p.ReclaimWithinCohort, Never) {
			lca, seen := lcaOf[t.cq]
			if !seen {
				lca = -1
				for i := s.cqs[t.cq].node; i >= 0; i = nodes[i].parent {
					if at := slices.Index(anc, i); at >= 0 {
						lca = at
						break
					}
					if within(i) {
						break
					}
				}
				lcaOf[t.cq] = lca
			}
			if lca < 0 {
				continue
			}
			{
				c := cand{t, anc[lca], hierarchical}
				switch {
				case adv[lca]:
					hier = append(hier, c)
					continue
				case p.BorrowWithinCohort == Never || t.Priority >= x.Priority:
					c.variant = withoutBorrowing
				default:
					c.variant = whileBorrowing
				}
				prio = append(prio, c)
			}
		}
	}
	all := append(append(append([]cand{}, hier...), prio...), same...)
	if len(all) == 0 {
		return nil
	}
	forbidden := p.BorrowWithinCohort == Never
	under := true
	for _, r := range short {
		if st.usage[g][f][r] >= st.quota[g][f][r].Nominal {
			under = false
		}
	}
	var attempts []bool
	switch {
	case len(hier)+len(prio) == 0 || (forbidden && !under):
		attempts = []bool{true}
	case forbidden && len(hier) == 0:
		attempts = []bool{false, true}
	default:
		attempts = []bool{true, false}
	}
	valid := func(c cand, borrow bool) bool {
		if c.variant == sameQueue {
			return true
		}
		if borrow && c.variant == withoutBorrowing {
			return false
		}
		for i := s.cqs[c.t.cq].node; i >= 0 && i != c.lca; i = nodes[i].parent {
			if within(i) {
				return false
			}
		}
		return true
	}
	for _, borrow := range attempts {
		r := removal{s: s}
		for _, c := range all {
			if !valid(c, borrow) {
				continue
			}
			r.remove(c.t)
			if s.fitsIn(x, g, f, borrow) {
				targets := r.fillBack(func() bool { return s.fitsIn(x, g, f, borrow) })
				r.undo() // the caller releases the targets for good
				return targets
			}
		}
		r.undo()
	}
	return nil
}

// shortResources are the covered resources of group g, flavor f, that x
// does not fit.
func (pr *preemptor) shortResources(x *wl, g, f int) []int {
	st := pr.snap.cqs[x.cq]
	var out []int
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g {
			continue
		}
		r := st.posOf[ri]
		if ok, _ := pr.snap.fits(st, g, f, r, a, true); !ok {
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
func (pr *preemptor) candidates(x *wl, g, f int, short []int, cohort, within Policy) []*wl {
	st := pr.snap.cqs[x.cq]
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
			if tg, tf, _, ok := pr.snap.find(q, flavor, name); ok {
				where = append(where, at{tg, tf, pr.snap.res[name]})
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
				if t.uses(len(q.Groups), w.g, w.f, w.ri) {
					out = append(out, t)
					break
				}
			}
		}
	}
	scan(st, within)
	if st.cohort >= 0 && cohort != Never {
		for _, mi := range pr.snap.cohorts[st.cohort] {
			q := pr.snap.cqs[mi]
			if mi == x.cq || q.NotReclaimable {
				continue
			}
			if pr.snap.borrowingOn(q.node, flavor) {
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
		return evictsFirst(a, b)
	})
	return out
}

// evictsFirst is Kueue's victim order among workloads of one priority
// (CandidatesOrdering): the most recent quota reservation first, in whole
// seconds, then the lower UID (here the ID).
func evictsFirst(a, b *wl) bool {
	if a.reservedSec != b.reservedSec {
		return a.reservedSec > b.reservedSec
	}
	return a.ID < b.ID
}

// minimal removes candidates greedily until x fits, skipping a cohort
// candidate whose queue no longer borrows, then puts back those x does not
// need, newest first. nil: x does not fit even with all of them gone.
func (pr *preemptor) minimal(x *wl, g, f int, cands []*wl, allowBorrow bool) []*wl {
	if len(cands) == 0 {
		return nil
	}
	st := pr.snap.cqs[x.cq]
	flavor := st.flavors[g][f]
	r := removal{s: pr.snap}
	defer r.undo() // the caller releases the targets for good
	for _, t := range cands {
		if t.cq != x.cq && !pr.snap.borrowingOn(pr.snap.cqs[t.cq].node, flavor) {
			continue
		}
		r.remove(t)
		if pr.snap.fitsIn(x, g, f, allowBorrow) {
			return r.fillBack(func() bool { return pr.snap.fitsIn(x, g, f, allowBorrow) })
		}
	}
	return nil
}

// Kueue's flavor assigner's modes for a group's flavor where x does not
// fit as usage stands (fitsResourceQuota, then the preemption oracle):
// worst first.
const (
	modeNoFit = iota
	// modeNoCandidates: preemption is allowed there, but no workload
	// could be preempted.
	modeNoCandidates
	modePreempt
	modeReclaim
	modeFit
)

// modeOn is Kueue's mode for group g's flavor f for x and the height up
// its cohort tree it borrows at there (after preemption where there are
// candidates): fit where every resource fits; no fit where one asks for
// more than the queue could ever get (PotentialAvailable) or may not
// preempt there (mayPreemptOn); otherwise preempt (reclaim where the
// candidates are all other queues') or, without candidates, no
// candidates, which Kueue counts as preemption all the same.
func (pr *preemptor) modeOn(x *wl, g, f int) (mode, level int) {
	st := pr.snap.cqs[x.cq]
	n := pr.snap.nodes[st.node]
	fits := true
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g {
			continue
		}
		r := st.posOf[ri]
		if a > n.potential[st.keys[g][f][r]] {
			return modeNoFit, 0
		}
		if ok, _ := pr.snap.fits(st, g, f, r, a, true); !ok {
			fits = false
		}
	}
	if fits {
		return modeFit, pr.borrowLevel(x, g, f)
	}
	if !pr.mayPreemptOn(x, g, f) {
		return modeNoFit, 0
	}
	targets := pr.targetsFor(x, g, f)
	if targets == nil {
		return modeNoCandidates, pr.borrowLevel(x, g, f)
	}
	mode = modeReclaim
	for _, t := range targets {
		if t.cq == x.cq {
			mode = modePreempt
		}
	}
	ev := pr.snap.simulateEviction(targets)
	level = pr.borrowLevel(x, g, f)
	ev.undo()
	return mode, level
}

// reserveAssignment is, for a head that does not fit and has no targets
// to preempt, the flavors Kueue's flavor assigner gives it when every
// group's best flavor is one where it could preempt (written to assign,
// with the height it borrows at), or ok false when a group has none (Kueue:
// NoFit). As Kueue's isPreferred (BorrowingOverPreemption): the better
// mode, then the lower borrowing height, then the first; under
// whenCanPreempt: MayStopSearch the first where candidates exist.
func (pr *preemptor) reserveAssignment(x *wl, assign []int) (level int, ok bool) {
	st := pr.snap.cqs[x.cq]
	for g := range st.Groups {
		assign[g] = -1
		if !st.asks(x, g) {
			continue
		}
		bestMode, bestLevel := modeNoFit, 0
		for f := range st.flavors[g] {
			if pr.assigner.verdict(st, x, g, f) != candidate {
				continue
			}
			m, l := pr.modeOn(x, g, f)
			if m == modeNoFit {
				continue
			}
			if assign[g] < 0 || m > bestMode || (m == bestMode && l < bestLevel) {
				assign[g], bestMode, bestLevel = f, m, l
			}
			if m == modeFit && (l == 0 || !st.Fungibility.TryNextOnBorrow) {
				break
			}
			if st.Fungibility.StopOnPreempt && (m == modePreempt || m == modeReclaim) {
				break
			}
		}
		if assign[g] < 0 {
			return 0, false
		}
		level = max(level, bestLevel)
	}
	return level, true
}
