package admission

import (
	"fmt"
	"slices"
)

// The usage a cycle decides against is a snapshot in Kueue's sense
// (pkg/cache/scheduler): each ClusterQueue's usage cells and the cohort
// tree's nodes (tree.go: one node type for queues and Cohorts, what a node
// may borrow worked out up the tree). Admission and release change it for
// good (charge); every other change is a what-if that returns its own
// undo, so a question ("would x fit without these?", "what would the
// shares be with x admitted?") leaves the snapshot exactly as it found it:
//
//	defer s.simulateRemoval(t).undo()
//
// (Usage passes up the tree by differences, so undoing several what-ifs in
// any order restores the same state.)

// snapshot is the quota side of admission: the resources and flavors,
// every ClusterQueue's quota, usage and admitted workloads, and the
// cohort trees.
type snapshot struct {
	// flavors are the spec's ResourceFlavors; flavor and res index the
	// flavors and resources by name, resName names the resources.
	flavors []Flavor
	flavor  map[string]int
	res     map[string]int
	resName []string
	cqs     []*cqState
	// cohorts lists each cohort tree's ClusterQueues (a queue's cohort
	// field indexes it); rootNode is each tree's root node.
	cohorts  [][]int
	rootNode []int
	tree
	// lenders are the Cohort nodes that hold quota of their own.
	lenders []int
	fair    fairDivision
	// fairScratch is appendFairShares' demands and scratch.
	fairScratch fairState
	// lending is per cohort tree (buildLending); scratchLend is
	// Standings' scratch.
	lending     []lending
	scratchLend []float64
	// ver counts changes of what admission decisions depend on (usage,
	// the admitted workloads).
	ver uint64
	// touch is told of every queue whose usage changes (the usage view).
	touch *touchSet
	// needBuf is needOn's scratch.
	needBuf []int64
}

// charge adds (sign +1) or takes away (-1) x's requests on its assigned
// flavors, in its queue's cells and up the cohort tree.
func (s *snapshot) charge(x *wl, sign int64) {
	st := s.cqs[x.cq]
	s.touch.mark(x.cq)
	groups := len(st.Groups)
	for i, f := range x.assign {
		if f < 0 {
			continue
		}
		g := i % groups
		for ri, a := range x.reqAt(x.assign, groups, i) {
			if a == 0 || st.groupOf[ri] != g {
				continue
			}
			r := st.posOf[ri]
			st.usage[g][f][r] += sign * a
			s.addUsage(st.node, st.keys[g][f][r], sign*a)
		}
	}
}

// whatIf is a what-if change to the snapshot: undo puts it back. (A
// value, not a closure, so that asking costs no allocation: the hot path
// of fair sharing asks for every head of every cycle.)
type whatIf struct {
	s *snapshot
	x *wl
	// sign is what the change charged x with (0: nothing to undo);
	// assign the flavors x had before.
	sign   int64
	assign []int
}

// undo takes the change back.
func (w whatIf) undo() {
	if w.sign != 0 {
		w.s.charge(w.x, -w.sign)
		w.x.assign = w.assign
	}
}

// simulateAdd charges x as if it were admitted with the flavors of assign
// (one per group of its queue, -1 unused): defer s.simulateAdd(x, a).undo().
func (s *snapshot) simulateAdd(x *wl, assign []int) whatIf {
	w := whatIf{s: s, x: x, sign: +1, assign: x.assign}
	x.assign = assign
	s.charge(x, +1)
	return w
}

// simulateRemoval takes an admitted workload's usage away as if it were
// released.
func (s *snapshot) simulateRemoval(x *wl) whatIf {
	s.charge(x, -1)
	return whatIf{s: s, x: x, sign: -1, assign: x.assign}
}

// eviction is a what-if release of admitted workloads.
type eviction struct {
	s       *snapshot
	targets []*wl
}

// simulateEviction releases the targets (they leave their queues'
// admitted lists, and the version moves on); undo readmits them with the
// flavors and admission order they had.
func (s *snapshot) simulateEviction(targets []*wl) eviction {
	for _, t := range targets {
		s.release(t)
	}
	return eviction{s, targets}
}

func (e eviction) undo() {
	for _, t := range e.targets {
		e.s.readmit(t)
	}
}

// removal is a what-if removal of workloads one by one (preemption's
// greedy search), each with its undo, and Kueue's fill-back over it.
type removal struct {
	s     *snapshot
	wls   []*wl
	undos []whatIf // the zero whatIf: put back
}

// remove takes t's usage away.
func (r *removal) remove(t *wl) {
	r.wls = append(r.wls, t)
	r.undos = append(r.undos, r.s.simulateRemoval(t))
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
		r.undos[i] = r.s.simulateRemoval(r.wls[i])
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

// asks reports whether x requests any resource that the queue's resource
// group g covers.
func (st *cqState) asks(x *wl, g int) bool {
	for ri, a := range x.req {
		if a > 0 && st.groupOf[ri] == g {
			return true
		}
	}
	return false
}

// slot is a position [group][flavor in group][covered resource] in a
// queue's quota and usage.
type slot struct{ g, f, r int }

type cqState struct {
	ClusterQueue
	cohort  int
	groupOf []int   // resource index -> group, -1 not covered
	posOf   []int   // resource index -> its position in its group's Covered
	resOf   [][]int // group -> covered position -> resource index
	flavors [][]int // group -> flavor indices in Spec.Flavors
	// labelKeys are each group's label keys (groupLabelKeys); flat[g]+f
	// is group g's flavor f's place in a class pattern, classes the
	// patterns of the queue's workloads (a verdict per flavor: flavors.go)
	// and classIdx finds one.
	labelKeys []map[string]bool
	flat      []int
	classes   [][]byte
	// gen counts the queue's admitted workloads that left it (finished,
	// evicted or preempted): Kueue's AllocatableResourceGeneration, past
	// which a kept flavor search (wl.scan) is stale.
	gen      uint64
	classIdx map[string]int32
	// keys are the tree's flavor-resource keys per [group][flavor in
	// group][covered resource]; gpuSlots the GPU resources' positions,
	// gpuUse their usage cells and gpuNominal their nominal quotas (for
	// Standings).
	keys       [][][]int
	gpuSlots   []slot
	gpuUse     []*int64
	gpuNominal []int64
	// quota and usage per [group][flavor in group][covered resource]
	quota    [][][]Quota
	usage    [][][]int64
	admitted []*wl
	// gpuLend and gpuBorrow (NoLimit: unbounded) sum the queue's
	// lendable and borrowable GPUs over flavors.
	gpuLend, gpuBorrow int64
	// path is its tree path (snapshot.path).
	path []int
	// node is the queue's leaf in its cohort tree.
	node int
}

// queueState checks a ClusterQueue's resource groups and quotas and makes
// its state: its flavors, quotas and (zero) usage per group, registering
// the resources it covers.
func (s *snapshot) queueState(q ClusterQueue) (*cqState, error) {
	st := &cqState{ClusterQueue: q, cohort: -1}
	seen := map[string]bool{}
	for gi, g := range q.Groups {
		var fl []int
		var quota [][]Quota
		var usage [][]int64
		for _, r := range g.Covered {
			if seen[r] {
				return nil, fmt.Errorf("ClusterQueue %s: resource %s is in two resource groups", q.Name, r)
			}
			seen[r] = true
			if _, ok := s.res[r]; !ok {
				s.res[r] = len(s.resName)
				s.resName = append(s.resName, r)
			}
		}
		for _, f := range g.Flavors {
			fi, ok := s.flavor[f.Flavor]
			if !ok {
				return nil, fmt.Errorf("ClusterQueue %s: resourceGroups[%d] names flavor %q, which no ResourceFlavor defines", q.Name, gi, f.Flavor)
			}
			if len(f.Resources) != len(g.Covered) {
				return nil, fmt.Errorf("ClusterQueue %s: flavor %s lists %d resources, the group covers %d", q.Name, f.Flavor, len(f.Resources), len(g.Covered))
			}
			for ri, rq := range f.Resources {
				if rq.Nominal < 0 || rq.BorrowingLimit < NoLimit || rq.LendingLimit < NoLimit {
					return nil, fmt.Errorf("ClusterQueue %s: flavor %s resource %s: negative quota", q.Name, f.Flavor, g.Covered[ri])
				}
				if rq.LendingLimit > rq.Nominal {
					return nil, fmt.Errorf("ClusterQueue %s: flavor %s resource %s: lendingLimit %d is more than nominalQuota %d", q.Name, f.Flavor, g.Covered[ri], rq.LendingLimit, rq.Nominal)
				}
				if q.Cohort == "" && (rq.BorrowingLimit != NoLimit || rq.LendingLimit != NoLimit) {
					return nil, fmt.Errorf("ClusterQueue %s: borrowingLimit and lendingLimit need a cohort", q.Name)
				}
			}
			fl = append(fl, fi)
			quota = append(quota, f.Resources)
			usage = append(usage, make([]int64, len(g.Covered)))
		}
		st.flavors = append(st.flavors, fl)
		st.quota = append(st.quota, quota)
		st.usage = append(st.usage, usage)
	}
	return st, nil
}

// indexQueue fills a queue's indices by resource (its group and
// position there), its groups' label keys and flavor patterns' places,
// its flavor-resource keys in the tree and its GPU slots.
func (s *snapshot) indexQueue(st *cqState) {
	st.groupOf = make([]int, len(s.resName))
	st.posOf = make([]int, len(s.resName))
	for i := range st.groupOf {
		st.groupOf[i], st.posOf[i] = -1, -1
	}
	st.resOf = make([][]int, len(st.Groups))
	st.keys = make([][][]int, len(st.Groups))
	n := 0
	for gi := range st.Groups {
		st.labelKeys = append(st.labelKeys, groupLabelKeys(s.flavors, st.flavors[gi]))
		st.flat = append(st.flat, n)
		n += len(st.flavors[gi])
	}
	for gi, g := range st.Groups {
		for r, name := range g.Covered {
			ri := s.res[name]
			st.groupOf[ri], st.posOf[ri] = gi, r
			st.resOf[gi] = append(st.resOf[gi], ri)
		}
		for f, fl := range st.flavors[gi] {
			keys := make([]int, len(g.Covered))
			for r, ri := range st.resOf[gi] {
				keys[r] = s.frKey(fl, ri)
				if IsGPU(g.Covered[r]) {
					st.gpuSlots = append(st.gpuSlots, slot{gi, f, r})
				}
			}
			st.keys[gi] = append(st.keys[gi], keys)
		}
	}
}

// resIndex is a resource's index.
func (s *snapshot) resIndex(name string) (int, bool) {
	if len(s.resName) > smallScan {
		ri, ok := s.res[name]
		return ri, ok
	}
	for ri, n := range s.resName {
		if n == name {
			return ri, true
		}
	}
	return 0, false
}

func (s *snapshot) release(x *wl) {
	s.charge(x, -1)
	s.ver++
	x.admitted = false
	st := s.cqs[x.cq]
	last := st.admitted[len(st.admitted)-1]
	st.admitted[x.admIdx] = last
	last.admIdx = x.admIdx
	st.admitted = st.admitted[:len(st.admitted)-1]
}

// readmit undoes release: x holds its quota again, with the flavors and
// admission order it had.
func (s *snapshot) readmit(x *wl) {
	st := s.cqs[x.cq]
	x.admitted = true
	x.admIdx = len(st.admitted)
	st.admitted = append(st.admitted, x)
	s.charge(x, +1)
	s.ver++
}

func lendable(q Quota) int64 {
	if q.LendingLimit == NoLimit {
		return q.Nominal
	}
	return q.LendingLimit
}

// find finds, in queue q, the position of a flavor and resource
// (by global flavor index and resource name) or ok false.
func (s *snapshot) find(q *cqState, flavor int, res string) (g, f, r int, ok bool) {
	ri, known := s.res[res]
	if !known {
		return 0, 0, 0, false
	}
	g = q.groupOf[ri]
	if g < 0 {
		return 0, 0, 0, false
	}
	f = slices.Index(q.flavors[g], flavor)
	if f < 0 {
		return 0, 0, 0, false
	}
	return g, f, slices.Index(q.Groups[g].Covered, res), true
}

// fits says whether extra more of one quota (queue st's resource r of
// group g's flavor f) fits: within the queue's
// nominal quota (allowBorrow false) or its borrowing limit, and within
// what its cohort tree has available to it (its unused guaranteed quota
// and what its ancestors have, within their limits). The second value is
// how much is missing.
func (s *snapshot) fits(st *cqState, g, f, r int, extra int64, allowBorrow bool) (bool, int64) {
	q := st.quota[g][f][r]
	u := st.usage[g][f][r] + extra
	if u > q.Nominal && (st.cohort < 0 || !allowBorrow) {
		return false, u - q.Nominal
	}
	if st.cohort < 0 {
		return true, 0
	}
	avail := s.available(st.node, st.keys[g][f][r])
	if extra > avail {
		return false, extra - avail
	}
	return true, 0
}

func (s *snapshot) appendStandings(dst []Standing, share bool) []Standing {
	n := len(s.cqs) + len(s.lenders)
	out := slices.Grow(dst[:0], n)[:n]
	clear(out)
	for qi, st := range s.cqs {
		o := &out[qi]
		if share {
			o.Share = s.share(st)
		}
		var used, borrowed, nominal int64
		for k, p := range st.gpuUse {
			u, nom := *p, st.gpuNominal[k]
			nominal += nom
			used += u
			borrowed += max(0, u-nom)
		}
		// (Whole numbers: the sum in float64 is the same in any order.)
		o.Nominal, o.Used, o.Demand, o.Borrowed = nominal, used, used, float64(borrowed)
	}
	for li, n := range s.lenders {
		out[len(s.cqs)+li].Nominal = s.ownGPUs(n)
	}
	// What the tree's queues borrow, per flavor and GPU resource, is lent
	// by those with lendable quota unused (queues, and Cohorts holding
	// quota) in proportion to it.
	for k, members := range s.cohorts {
		lenders := s.lending[k].lenders
		for _, lk := range s.lending[k].keys {
			var borrowed, unused float64
			lendOf := slices.Grow(s.scratchLend[:0], len(members)+len(lenders))[:len(members)+len(lenders)]
			clear(lendOf)
			s.scratchLend = lendOf
			for _, m := range lk.members {
				u := *m.use
				borrowed += float64(max(0, u-m.nominal))
				lendOf[m.i] = float64(min(m.lendable, max(0, m.nominal-u)))
				unused += lendOf[m.i]
			}
			for j, li := range lenders {
				lendOf[len(members)+j] = float64(lendable(s.nodes[s.lenders[li]].own[lk.key]))
				unused += lendOf[len(members)+j]
			}
			if borrowed == 0 || unused == 0 {
				continue
			}
			for i, oi := range members {
				out[oi].Lent += borrowed * lendOf[i] / unused
			}
			for j, li := range lenders {
				out[len(s.cqs)+li].Lent += borrowed * lendOf[len(members)+j] / unused
			}
		}
	}
	return out
}

// lending is what Standings needs of a cohort tree to share out its
// borrowing: its quota-holding Cohorts (indices into s.lenders) and, per
// GPU flavor-resource key in key order, where each member queue (index
// into the tree's members) holds quota for it.
type lending struct {
	lenders []int
	keys    []lendKey
}

type lendKey struct {
	key     int
	members []memberSlot
}

// memberSlot is a member queue's quota for a key: its index among the
// tree's members, its usage cell, nominal and lendable quota.
type memberSlot struct {
	i                 int
	use               *int64
	nominal, lendable int64
}

// buildLending fills s.lending once the queues know their slots.
func (s *snapshot) buildLending() {
	s.lending = make([]lending, len(s.cohorts))
	for k, members := range s.cohorts {
		l := &s.lending[k]
		for li, n := range s.lenders {
			if s.rootIndex(n) == k {
				l.lenders = append(l.lenders, li)
			}
		}
		for fi := range s.flavors {
			for ri, name := range s.resName {
				if !IsGPU(name) {
					continue
				}
				lk := lendKey{key: s.frKey(fi, ri)}
				for i, oi := range members {
					if g, f, r, ok := s.find(s.cqs[oi], fi, name); ok {
						st := s.cqs[oi]
						qt := st.quota[g][f][r]
						lk.members = append(lk.members, memberSlot{i: i, use: &st.usage[g][f][r], nominal: qt.Nominal, lendable: lendable(qt)})
					}
				}
				l.keys = append(l.keys, lk)
			}
		}
	}
}

// init checks the spec's flavors, ClusterQueues and Cohorts and builds
// the snapshot of them, nothing in use.
func (s *snapshot) init(spec *Spec) error {
	s.flavors, s.flavor, s.res, s.ver = spec.Flavors, map[string]int{}, map[string]int{}, 1
	for i, f := range spec.Flavors {
		if _, dup := s.flavor[f.Name]; dup || f.Name == "" {
			return fmt.Errorf("ResourceFlavor %q: missing or duplicate name", f.Name)
		}
		if len(f.NodeTaints) > maxFlavorTaints {
			return fmt.Errorf("ResourceFlavor %s: %d nodeTaints, more than %d", f.Name, len(f.NodeTaints), maxFlavorTaints)
		}
		s.flavor[f.Name] = i
	}
	names := map[string]bool{}
	for _, q := range spec.ClusterQueues {
		if names[q.Name] || q.Name == "" {
			return fmt.Errorf("ClusterQueue %q: missing or duplicate name", q.Name)
		}
		names[q.Name] = true
		st, err := s.queueState(q)
		if err != nil {
			return err
		}
		s.cqs = append(s.cqs, st)
	}
	if err := s.buildTree(spec); err != nil {
		return err
	}
	// (After the tree: a Cohort may name resources no queue covers.)
	for _, st := range s.cqs {
		s.indexQueue(st)
	}
	for _, st := range s.cqs {
		for _, p := range st.gpuSlots {
			st.gpuUse = append(st.gpuUse, &st.usage[p.g][p.f][p.r])
			st.gpuNominal = append(st.gpuNominal, st.quota[p.g][p.f][p.r].Nominal)
		}
	}
	s.buildLending()
	for _, st := range s.cqs {
		st.gpuBorrow = 0
		for g, grp := range st.Groups {
			for f := range st.flavors[g] {
				for r, name := range grp.Covered {
					qt := st.quota[g][f][r]
					if !IsGPU(name) {
						continue
					}
					st.gpuLend += lendable(qt)
					if qt.BorrowingLimit == NoLimit || st.gpuBorrow == NoLimit {
						st.gpuBorrow = NoLimit
					} else {
						st.gpuBorrow += qt.BorrowingLimit
					}
				}
			}
		}
		if st.cohort < 0 {
			st.gpuLend, st.gpuBorrow = 0, 0
		}
	}
	return nil
}

// fitsAssign says whether x fits the flavors of assign as the usage
// stands (several PodSets on one flavor: their requests together).
func (s *snapshot) fitsAssign(x *wl, assign []int, allowBorrow bool) bool {
	st := s.cqs[x.cq]
	groups := len(st.Groups)
	if len(assign) <= groups {
		for g, f := range assign {
			if f >= 0 && !s.fitsIn(x, g, f, allowBorrow) {
				return false
			}
		}
		return true
	}
	for g := range groups {
		for f := range st.flavors[g] {
			need := s.needOn(x, assign, g, f)
			if need == nil {
				continue
			}
			for ri, a := range need {
				if a == 0 || st.groupOf[ri] != g {
					continue
				}
				if ok, _ := s.fits(st, g, f, st.posOf[ri], a, allowBorrow); !ok {
					return false
				}
			}
		}
	}
	return true
}

// needOn is what x's PodSets assigned group g's flavor f by assign ask
// for together, per resource index (the snapshot's scratch; nil: none is
// assigned there).
func (s *snapshot) needOn(x *wl, assign []int, g, f int) []int64 {
	groups := len(s.cqs[x.cq].Groups)
	var need []int64
	for i := g; i < len(assign); i += groups {
		if assign[i] != f {
			continue
		}
		if need == nil {
			need = slices.Grow(s.needBuf[:0], len(x.req))[:len(x.req)]
			clear(need)
			s.needBuf = need
		}
		for ri, a := range x.reqAt(assign, groups, i) {
			need[ri] += a
		}
	}
	return need
}

// fitsIn says whether x fits group g's flavor f as the usage stands.
func (s *snapshot) fitsIn(x *wl, g, f int, allowBorrow bool) bool {
	st := s.cqs[x.cq]
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g {
			continue
		}
		r := st.posOf[ri]
		if ok, _ := s.fits(st, g, f, r, a, allowBorrow); !ok {
			return false
		}
	}
	return true
}
