package admission

import (
	"math"
	"slices"
	"sort"
)

// Fair sharing (Spec.FairSharing) follows Kueue's design (KEP-1714). A
// node's share (a ClusterQueue's or a Cohort's) is the largest, over
// resources, of what it uses above its subtree quota (over every flavor)
// per thousand of what its parent could use at most, divided by its weight.
// Decisions go root to leaves: two heads are ordered by the shares, each
// with its workload admitted, of the two different children of their
// lowest common ancestor (the lower first), as Kueue's tournament does;
// in a flat cohort that is the queues' own shares. When a workload does
// not fit, candidates come from its own queue (as withinClusterQueue
// allows) and from queues of the tree that borrow all the way up to just
// below the common ancestor (as reclaimWithinCohort allows); the queue
// whose path from the root has the highest shares gives up a workload
// first. Another queue's workload goes when the preemptor's side of the
// common ancestor would not borrow with the new workload (reclaim), or
// when the strategy allows it, comparing the two sides' shares; those the
// first strategy refuses are tried with the next.

// nodeWeight is a tree node's fair-sharing weight in thousandths.
func (s *snapshot) nodeWeight(i int) int64 {
	n := s.nodes[i]
	if n.cq >= 0 {
		return s.cqs[n.cq].weight()
	}
	return n.weight
}

// nodeShare is a node's weighted share as the usage stands: per resource,
// what it uses beyond its subtree quota over every flavor, per thousand
// of what its parent could use at most (its potential available, Kueue's
// calculateLendable); the largest over resources, divided by its weight
// (weight 0: infinite, once it borrows).
func (s *snapshot) nodeShare(i int) int64 {
	n := s.nodes[i]
	if n.parent < 0 {
		return 0
	}
	var drs int64
	borrowing := false
	nr := len(s.resName)
	for ri := 0; ri < nr; ri++ {
		var borrowed, den int64
		for k := ri; k < len(n.usage); k += nr {
			borrowed += max(0, n.usage[k]-n.subtree[k])
			den += s.nodes[n.parent].potential[k]
		}
		if borrowed > 0 {
			borrowing = true
			if den > 0 {
				drs = max(drs, borrowed*1000/den)
			}
		}
	}
	if !borrowing {
		return 0
	}
	w := s.nodeWeight(i)
	if w == 0 {
		return math.MaxInt64
	}
	return drs * 1000 / w
}

// share is a queue's weighted share as its usage stands.
func (s *snapshot) share(st *cqState) int64 {
	if st.cohort < 0 {
		return 0
	}
	return s.nodeShare(st.node)
}

// path lists a queue's tree nodes from just below the root down to its
// leaf (made once: callers only read it).
func (s *snapshot) path(st *cqState) []int {
	if st.path == nil {
		st.path = []int{}
		for i := st.node; s.nodes[i].parent >= 0; i = s.nodes[i].parent {
			st.path = append(st.path, i)
		}
		slices.Reverse(st.path)
	}
	return st.path
}

// pathShares are the shares of a path's nodes as the usage stands.
func (s *snapshot) pathShares(p []int) []int64 {
	out := make([]int64, len(p))
	for k, i := range p {
		out[k] = s.nodeShare(i)
	}
	return out
}

// headShares are the shares along x's queue's path with x admitted to
// assign (as they stand when assign is nil), appended to c.shareBuf (the
// cycle's scratch).
//
// borrows says, per node of the path, whether the node then uses more
// than its subtree quota of a flavor-resource x asks for there (Kueue's
// DRS.IsBorrowingOn with the workload's requested flavor-resources; none
// when assign is nil), appended to c.borrowBuf.
func (c *Controller) headShares(x *wl, assign []int) (path []int, shares []int64, borrows []bool) {
	s := &c.snap
	st := s.cqs[x.cq]
	path = s.path(st)
	if assign != nil {
		defer s.simulateAdd(x, assign).undo()
	}
	start := len(c.shareBuf)
	for _, i := range path {
		c.shareBuf = append(c.shareBuf, s.nodeShare(i))
		b := false
		groups := len(st.Groups)
		for j, f := range assign {
			if f < 0 || b {
				continue
			}
			g := j % groups
			n := s.nodes[i]
			for ri, a := range x.reqAt(assign, groups, j) {
				if a == 0 || st.groupOf[ri] != g {
					continue
				}
				if k := s.frKey(st.flavors[g][f], ri); n.usage[k] > n.subtree[k] {
					b = true
					break
				}
			}
		}
		c.borrowBuf = append(c.borrowBuf, b)
	}
	end := len(c.shareBuf)
	return path, c.shareBuf[start:end:end], c.borrowBuf[start:end:end]
}

// fairBefore orders two heads by their sides of their lowest common
// ancestor: one that does not borrow on the flavor-resources its head
// asks for first (Kueue's FairSharingPrioritizeNonBorrowing, on by
// default in v0.17), then the lower share.
func fairBefore(a, b *head) bool {
	for k := 0; k < len(a.path) && k < len(b.path); k++ {
		if a.path[k] != b.path[k] {
			if a.borrows[k] != b.borrows[k] {
				return !a.borrows[k]
			}
			return a.shares[k] < b.shares[k]
		}
	}
	return false
}

// groupAssign is an assignment of x's group g to flavor f only.
func groupAssign(st *cqState, g, f int) []int {
	assign := make([]int, len(st.Groups))
	for i := range assign {
		assign[i] = -1
	}
	assign[g] = f
	return assign
}

// lca gives the positions in the two paths of the children of their
// lowest common ancestor (its own two sides).
func lca(px, py []int) (int, int) {
	k := 0
	for k < len(px) && k < len(py) && px[k] == py[k] {
		k++
	}
	return min(k, len(px)-1), min(k, len(py)-1)
}

// borrowingOn says whether a node uses more than its subtree quota of any
// resource in the flavor.
func (t *tree) borrowingOn(i, flavor int) bool {
	n := t.nodes[i]
	for ri := range t.nres {
		if k := t.frKey(flavor, ri); n.usage[k] > n.subtree[k] {
			return true
		}
	}
	return false
}

// fairTargets picks, from the candidates, workloads to preempt so that x
// fits group g's flavor f, and trims the set to what x needs. The
// candidates' usage is left as it was; nil: x does not fit.
func (pr *preemptor) fairTargets(x *wl, g, f int, cands []*wl) []*wl {
	if len(cands) == 0 {
		return nil
	}
	st := pr.snap.cqs[x.cq]
	flavor := st.flavors[g][f]
	assign := groupAssign(st, g, f)
	xPath := pr.snap.path(st)
	// Each queue's candidates, lowest priority then newest first.
	byQueue := map[int][]*wl{}
	var queues []int
	for _, t := range cands {
		if _, ok := byQueue[t.cq]; !ok {
			queues = append(queues, t.cq)
		}
		byQueue[t.cq] = append(byQueue[t.cq], t)
	}
	for _, l := range byQueue {
		sort.SliceStable(l, func(i, j int) bool {
			if l[i].Priority != l[j].Priority {
				return l[i].Priority < l[j].Priority
			}
			return evictsFirst(l[i], l[j])
		})
	}
	paths := map[int][]int{}
	for _, q := range queues {
		paths[q] = pr.snap.path(pr.snap.cqs[q])
	}
	// eligible: a queue of the tree gives up workloads only while it and
	// every Cohort above it up to its side of the common ancestor borrow.
	eligible := func(q int) bool {
		_, ky := lca(xPath, paths[q])
		for k := len(paths[q]) - 1; k >= ky; k-- {
			if !pr.snap.borrowingOn(paths[q][k], flavor) {
				return false
			}
		}
		return true
	}
	r := removal{s: pr.snap}
	defer r.undo() // the caller releases the targets for good
	fits := func() bool { return pr.snap.fitsIn(x, g, f, true) }
	take := func(t *wl) bool {
		r.remove(t)
		return fits()
	}
	fit := false
	for si, strat := range pr.fair.Strategies {
		retry := map[int][]*wl{}
		for !fit {
			// The queue whose path from the root has the highest shares.
			order := make([]int, 0, len(queues))
			for _, q := range queues {
				if len(byQueue[q]) > 0 {
					order = append(order, q)
				}
			}
			if len(order) == 0 {
				break
			}
			sh := make(map[int][]int64, len(order))
			for _, q := range order {
				sh[q] = pr.snap.pathShares(paths[q])
			}
			sort.SliceStable(order, func(i, j int) bool {
				return slices.Compare(sh[order[i]], sh[order[j]]) > 0
			})
			progressed := false
			for _, q := range order {
				l := byQueue[q]
				if q == x.cq {
					byQueue[q] = l[1:]
					fit, progressed = take(l[0]), true
					break
				}
				if !eligible(q) {
					byQueue[q] = nil
					continue
				}
				kx, ky := lca(xPath, paths[q])
				mySide, theirSide := xPath[kx], paths[q][ky]
				reclaim, mine := pr.snap.sideWith(x, assign, mySide, flavor)
				for len(l) > 0 {
					t := l[0]
					l = l[1:]
					old, after := pr.snap.nodeShare(theirSide), pr.snap.shareWithout(t, theirSide)
					if reclaim || strat.allows(mine, old, after) {
						fit, progressed = take(t), true
						break
					}
					retry[q] = append(retry[q], t)
				}
				byQueue[q] = l
				if progressed {
					break
				}
			}
			if !progressed {
				break
			}
		}
		if fit || si == len(pr.fair.Strategies)-1 {
			break
		}
		for q, l := range retry {
			byQueue[q] = append(l, byQueue[q]...)
		}
	}
	if !fit {
		return nil
	}
	return r.fillBack(fits)
}

// sideWith says, with x admitted to assign, whether the preemptor's side
// of the common ancestor (node side) would not borrow on the flavor (a
// reclaim) and what its share would be.
func (s *snapshot) sideWith(x *wl, assign []int, side, flavor int) (reclaim bool, share int64) {
	defer s.simulateAdd(x, assign).undo()
	return !s.borrowingOn(side, flavor), s.nodeShare(side)
}

// shareWithout is node i's share with t's usage taken away.
func (s *snapshot) shareWithout(t *wl, i int) int64 {
	defer s.simulateRemoval(t).undo()
	return s.nodeShare(i)
}

// FairShares gives each ClusterQueue the GPUs a weighted max-min division
// of its cohort tree would give it at this moment, from the standings
// (quota-holding Cohorts' rows get none). It works root to leaves: a
// node's GPUs (the root's: the whole tree's quota) go first to each child
// up to its demand within its own quota (a child's unused guaranteed part,
// what a lending limit keeps back, stays with it); the rest goes to the
// children still short, in proportion to their weights, each up to its
// demand and its quota plus borrowing limit (weight-0 nodes share only
// what the rest leave); each child then divides what it got among its own
// children. A queue outside any cohort gets min(demand, nominal).
func (c *Controller) FairShares(s []Standing) []float64 { return c.AppendFairShares(nil, s) }

// AppendFairShares is FairShares written over dst's array when it has
// room.
func (c *Controller) AppendFairShares(dst []float64, s []Standing) []float64 {
	return c.snap.appendFairShares(dst, s)
}

// appendFairShares is AppendFairShares.
func (s *snapshot) appendFairShares(dst []float64, stand []Standing) []float64 {
	out := slices.Grow(dst[:0], len(stand))[:len(stand)]
	clear(out)
	for qi := range s.cqs {
		out[qi] = float64(min(stand[qi].Demand, stand[qi].Nominal))
	}
	f, d := &s.fair, &s.fairScratch
	// Demands bottom up (deepest first).
	for _, i := range f.order {
		n := s.nodes[i]
		d.demand[i] = 0
		if n.cq >= 0 {
			d.demand[i] = float64(stand[n.cq].Demand)
		}
		for _, ch := range f.children[i] {
			d.demand[i] += d.demand[ch]
		}
	}
	for i, kids := range f.children {
		d.walk[i] = d.walk[i][:0]
		for _, ch := range kids {
			if d.demand[ch] > 0 || f.reserves[ch] {
				d.walk[i] = append(d.walk[i], ch)
			}
		}
	}
	for _, r := range s.rootNode {
		s.divide(d, r, f.quota[r], out)
	}
	return out
}

// divide hands node i's have GPUs down its subtree (see FairShares),
// setting out[q] for each ClusterQueue q under it, with the demands of d.
// It walks only the children in d.walk[i]: those asking for something and
// those that keep an unused guaranteed part; any other child (nothing
// asked, nothing kept back) would be given nothing and change nothing, so
// the cost follows the children with demand, not every child of a cohort
// of hundreds of ClusterQueues.
func (s *snapshot) divide(d *fairState, i int, have float64, out []float64) {
	f := &s.fair
	if len(f.children[i]) == 0 {
		if q := s.nodes[i].cq; q >= 0 {
			out[q] = have
		}
		return
	}
	kids := d.walk[i]
	give, want := d.give, d.want
	pool := have
	wants := false
	for _, ch := range kids {
		give[ch] = min(d.demand[ch], f.quota[ch])
		reserved := max(0, f.quota[ch]-f.lend[ch]-give[ch]) // unused guaranteed
		pool -= give[ch] + reserved
		want[ch] = max(0, min(d.demand[ch], f.limit[ch])-give[ch])
		wants = wants || want[ch] > 1e-9
	}
	// (No child wanting more than its quota, the rounds below give none.)
	for _, zero := range [2]bool{false, true} {
		if !wants {
			break
		}
		for pool > 1e-9 {
			var wsum float64
			for _, ch := range kids {
				if want[ch] > 1e-9 && (s.nodeWeight(ch) == 0) == zero {
					wsum += max(float64(s.nodeWeight(ch)), 1)
				}
			}
			if wsum == 0 {
				break
			}
			given := 0.0
			for _, ch := range kids {
				w := float64(s.nodeWeight(ch))
				if want[ch] <= 1e-9 || (w == 0) != zero {
					continue
				}
				dd := min(pool*max(w, 1)/wsum, want[ch])
				give[ch] += dd
				want[ch] -= dd
				given += dd
			}
			pool -= given
		}
	}
	for _, ch := range kids {
		if d.demand[ch] == 0 {
			// Nothing asked for below ch: it was given nothing, and each
			// ClusterQueue under it keeps appendFairShares' min(Demand,
			// Nominal) = 0. Not visiting it makes the cost follow the
			// queues with demand, not every queue of the tree.
			continue
		}
		s.divide(d, ch, give[ch], out)
	}
}

// fairDivision holds what FairShares needs of the tree, all fixed by the
// quotas: per node, its GPU quota over its subtree, what of it it lends,
// its quota plus borrowing limit, whether it keeps part of its quota back
// from its siblings (reserves: quota above what it lends), its children
// and the nodes deepest first.
type fairDivision struct {
	quota, lend, limit []float64
	reserves           []bool
	children           [][]int
	order              []int
}

// fairState is a division's demands and scratch: per node, its demand
// (what its subtree's ClusterQueues use and ask for), what the division
// gives it and what it still wants, and the children divide walks
// (walk[i] in children[i]'s order: those with demand or that reserve).
type fairState struct {
	demand, give, want []float64
	walk               [][]int
}

// newFairState makes a fairState for the snapshot's tree, nothing asked
// for: each node's walk holds its children that reserve.
func (s *snapshot) newFairState() fairState {
	nn := len(s.nodes)
	f := &s.fair
	d := fairState{demand: make([]float64, nn), give: make([]float64, nn), want: make([]float64, nn), walk: make([][]int, nn)}
	for i, kids := range f.children {
		d.walk[i] = make([]int, 0, len(kids))
		for _, ch := range kids {
			if f.reserves[ch] {
				d.walk[i] = append(d.walk[i], ch)
			}
		}
	}
	return d
}

// buildFairDivision fills s.fair once the tree is built.
func (s *snapshot) buildFairDivision() {
	nn := len(s.nodes)
	f := &s.fair
	f.quota, f.lend, f.limit = make([]float64, nn), make([]float64, nn), make([]float64, nn)
	f.reserves = make([]bool, nn)
	f.children = make([][]int, nn)
	f.order = make([]int, nn)
	for i, n := range s.nodes {
		f.order[i] = i
		if n.parent >= 0 {
			f.children[n.parent] = append(f.children[n.parent], i)
		}
	}
	slices.SortStableFunc(f.order, func(a, b int) int { return s.nodes[b].depth - s.nodes[a].depth })
	for _, i := range f.order {
		n := s.nodes[i]
		var own, ll, bl float64
		llSet, blUnbounded := false, false
		for fi := range s.flavors {
			for ri, name := range s.resName {
				if !IsGPU(name) {
					continue
				}
				q := n.own[s.frKey(fi, ri)]
				own += float64(q.Nominal)
				if q.LendingLimit != NoLimit {
					llSet = true
					ll += float64(q.LendingLimit)
				}
				if q.BorrowingLimit == NoLimit {
					blUnbounded = true
				} else {
					bl += float64(q.BorrowingLimit)
				}
			}
		}
		f.quota[i] = own
		for _, ch := range f.children[i] {
			f.quota[i] += f.quota[ch]
		}
		f.lend[i] = f.quota[i]
		if llSet {
			f.lend[i] = min(f.quota[i], ll)
		}
		// (Exactly when divide's reserved is above 0 for a child given
		// nothing.)
		f.reserves[i] = f.quota[i]-f.lend[i]-0 > 0
		f.limit[i] = math.Inf(1)
		if !blUnbounded && n.parent >= 0 {
			f.limit[i] = f.quota[i] + bl
		}
	}
	s.fairScratch = s.newFairState()
}
