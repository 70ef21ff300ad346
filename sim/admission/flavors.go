package admission

import (
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Which flavors of a queue a workload may be assigned, as Kueue v0.17.0's
// flavor assigner decides it before it looks at any quota
// (FlavorAssigner.checkFlavorForPodSets, pkg/scheduler/flavorassigner):
// a flavor is a candidate for the workload's pods only if they tolerate
// its nodeTaints and their node selector and required node affinity,
// narrowed to the label keys the resource group's flavors set, match
// its nodeLabels. The answer depends on the workload's constraints and
// the queue only, never on usage, so Submit works it out once per
// workload and files it as the workload's class (a pattern of verdicts,
// one per flavor of each group, shared by every workload that gets the
// same); the cycle then reads it.

// Verdicts of a flavor for a workload, in a class pattern.
const (
	// candidate: the flavor may be assigned.
	candidate byte = 0
	// noAffinity: the pods' selector or required affinity does not
	// match the flavor's nodeLabels.
	noAffinity byte = 1
	// untoleratedTaint + i: the pods do not tolerate the flavor's
	// nodeTaints[i] (New refuses a flavor with more taints than a byte
	// counts; Kueue allows 8).
	untoleratedTaint byte = 2
	maxFlavorTaints       = 255 - int(untoleratedTaint)
)

// flavorAssigner is Kueue's FlavorAssigner: it files a workload's class
// when it is submitted and, at each cycle, finds a flavor per resource
// group against the snapshot (assignment).
type flavorAssigner struct {
	snap *snapshot
	// oracle says whether preemption would make room on a flavor (for
	// flavorFungibility's whenCanPreempt: MayStopSearch).
	oracle preemptionOracle
	// lastClassCQ, lastClassCons and lastClass: the queue and constraints
	// a class was last worked out for, and the class (classOf); classBuf
	// is its scratch.
	lastClassCQ   *cqState
	lastClassCons *cluster.Constraints
	lastClass     int32
	classBuf      []byte
	// why is the last failed assignment's reason (assignment with why),
	// whyCur the group's being written.
	why, whyCur []byte
	// prior and own: while a PodSet of several is assigned
	// (assignSets), the earlier PodSets' flavors and its own requests;
	// needBuf is what they ask of a flavor (need).
	prior   []int
	own     []int64
	needBuf []int64
	// failedSet is the PodSet the last assignSets stopped at, failedPrior
	// the flavors of the PodSets before it (where preemption makes room).
	failedSet   int
	failedPrior []int
	// at is the entry of the assignment pick is finding (the group, or
	// PodSet*groups+group); tried is, per entry of the last assignment,
	// where its search stopped, as Kueue records LastTriedFlavorIdx: the
	// flavor it took (or stopped at to preempt) when flavors were left
	// after it, else -1 (the next search starts from the first).
	at    int
	tried []int
}

// preemptionOracle is what the flavor assigner asks of preemption (as
// Kueue's flavorassigner.PreemptionOracle).
type preemptionOracle interface {
	// canPreempt says whether preempting admitted workloads would let x
	// into group g's flavor f.
	canPreempt(x *wl, g, f int) bool
}

// groupLabelKeys is a queue's resource group's label keys: every key of
// the nodeLabels of the group's flavors (Kueue's
// clusterQueue.updateLabelKeys, pkg/cache/scheduler/clusterqueue.go;
// empty: no flavor of the group sets a label, and selectors and affinity
// are not looked at).
func groupLabelKeys(flavors []Flavor, group []int) map[string]bool {
	keys := map[string]bool{}
	for _, fi := range group {
		for k := range flavors[fi].NodeLabels {
			keys[k] = true
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return keys
}

// verdict is what flavor f makes of pods with constraints c in a group
// with label keys keys: the taints first, then the selector and affinity,
// in the order of Kueue's checkFlavorForPodSets.
func verdict(f *Flavor, keys map[string]bool, c *cluster.Constraints) byte {
	var tols []cluster.Toleration
	if c != nil {
		tols = c.Tolerations
	}
	if i, bad := untolerated(f, tols); bad {
		return untoleratedTaint + byte(i)
	}
	if !flavorMatches(c, keys, f.NodeLabels) {
		return noAffinity
	}
	return candidate
}

// untolerated finds the first of the flavor's NoSchedule and NoExecute
// taints that neither the pods' tolerations nor the flavor's own
// tolerations cover (Kueue's checkFlavorForPodSets calls
// corev1helpers.FindMatchingUntoleratedTaint with the pod's tolerations
// and then the flavor's, filtered to those two effects).
func untolerated(f *Flavor, tols []cluster.Toleration) (int, bool) {
	for i, t := range f.NodeTaints {
		if t.Effect != cluster.NoSchedule && t.Effect != cluster.NoExecute {
			continue
		}
		ok := slices.ContainsFunc(tols, func(tol cluster.Toleration) bool { return tol.Tolerates(t) })
		if !ok {
			ok = slices.ContainsFunc(f.Tolerations, func(tol Toleration) bool {
				return cluster.Toleration{Key: tol.Key, Operator: tol.Operator, Value: tol.Value, Effect: cluster.TaintEffect(tol.Effect)}.Tolerates(t)
			})
		}
		if !ok {
			return i, true
		}
	}
	return 0, false
}

// flavorMatches says whether pods with constraints c may go to nodes
// labelled labels, looking only at the label keys keys, as Kueue's
// flavorSelector (pkg/scheduler/flavorassigner/flavorassigner.go) builds
// its RequiredNodeAffinity and matches it against a node carrying the
// flavor's nodeLabels:
//   - the node selector keeps only the keys in keys, and each kept key
//     must be labelled with its value;
//   - each required affinity term keeps only its requirements on keys in
//     keys; if a term keeps none (or had none), the affinity matches any
//     flavor (terms are ORed, and that term no longer constrains);
//     otherwise some term must have every kept requirement hold
//     (In/NotIn/Exists/DoesNotExist/Gt/Lt on the flavor's labels).
func flavorMatches(c *cluster.Constraints, keys map[string]bool, labels map[string]string) bool {
	if c == nil || len(keys) == 0 {
		return true
	}
	for k, v := range c.NodeSelector {
		if !keys[k] {
			continue
		}
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	if len(c.Affinity) == 0 {
		return true
	}
	for _, term := range c.Affinity {
		if !slices.ContainsFunc(term, func(r cluster.Requirement) bool { return keys[r.Key] }) {
			return true // an emptied term: the affinity is dropped
		}
	}
	for _, term := range c.Affinity {
		all := true
		for _, r := range term {
			if keys[r.Key] && !r.Matches(labels) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// classOf files a workload with constraints c in queue st: the index of
// its verdict pattern in st.classes (one verdict per flavor of each
// group, at st.flat[g]+f), added when new.
func (fa *flavorAssigner) classOf(st *cqState, cons *cluster.Constraints) int32 {
	if fa.lastClassCQ == st && fa.lastClassCons == cons {
		return fa.lastClass
	}
	p := fa.classBuf[:0]
	for g := range st.Groups {
		for _, fi := range st.flavors[g] {
			p = append(p, verdict(&fa.snap.flavors[fi], st.labelKeys[g], cons))
		}
	}
	fa.classBuf = p
	cl, ok := st.classIdx[string(p)]
	if !ok {
		cl = int32(len(st.classes))
		st.classes = append(st.classes, slices.Clone(p))
		if st.classIdx == nil {
			st.classIdx = map[string]int32{}
		}
		st.classIdx[string(p)] = cl
	}
	fa.lastClassCQ, fa.lastClassCons, fa.lastClass = st, cons, cl
	return cl
}

// classOfSets is classOf for a workload of several PodSets: a flavor's
// verdict is the first PodSet's that asks for a resource of its group and
// is not a candidate there (candidate when every such PodSet is one).
func (fa *flavorAssigner) classOfSets(st *cqState, sets []PodSet) int32 {
	p := fa.classBuf[:0]
	for g := range st.Groups {
		for _, fi := range st.flavors[g] {
			v := candidate
			for i := range sets {
				if v != candidate {
					break
				}
				if fa.setAsks(st, &sets[i], g) {
					v = verdict(&fa.snap.flavors[fi], st.labelKeys[g], sets[i].Constraints)
				}
			}
			p = append(p, v)
		}
	}
	fa.classBuf = p
	cl, ok := st.classIdx[string(p)]
	if !ok {
		cl = int32(len(st.classes))
		st.classes = append(st.classes, slices.Clone(p))
		if st.classIdx == nil {
			st.classIdx = map[string]int32{}
		}
		st.classIdx[string(p)] = cl
	}
	// The last single-constraints class stays valid: fa.lastClass* are
	// not touched.
	return cl
}

// setAsks says whether PodSet ps asks for a resource group g covers.
func (fa *flavorAssigner) setAsks(st *cqState, ps *PodSet, g int) bool {
	for _, r := range ps.Requests {
		if r.Amount <= 0 {
			continue
		}
		if ri, ok := fa.snap.resIndex(r.Resource); ok && st.groupOf[ri] == g {
			return true
		}
	}
	return false
}

// verdict is what group g's flavor f makes of workload x.
func (fa *flavorAssigner) verdict(st *cqState, x *wl, g, f int) byte {
	return st.classes[x.class][st.flat[g]+f]
}

// appendVerdict appends the reason a flavor is not a candidate, in
// Kueue's words.
func appendVerdict(b []byte, fl *Flavor, v byte) []byte {
	if v == noAffinity {
		return appendWhy(b, "flavor ", fl.Name, " doesn't match node affinity")
	}
	t := fl.NodeTaints[v-untoleratedTaint]
	return appendWhy(b, "untolerated taint {", t.Key, "=", t.Value, ":", string(t.Effect), "} in flavor ", fl.Name)
}

// assignment is the flavor assigner: it finds a flavor per group for x,
// in order, as the queue's flavorFungibility says, and writes it to
// assign (one per group of the queue, -1 unused; a workload of several
// PodSets: one per PodSet and group, assignSets). The result's outcome is
// the worst of the groups' (a group stopped at a flavor where preemption
// would make room is preemptFit), its failed the first group that did
// not fit, where the caller preempts; with why, the reason goes to fa.why.
func (fa *flavorAssigner) assignment(x *wl, allowBorrow bool, assign []int, why bool) assignResult {
	if len(x.sets) > 0 {
		return fa.assignSets(x, allowBorrow, assign, why)
	}
	st := fa.snap.cqs[x.cq]
	res := assignResult{outcome: fit, failed: -1}
	fa.tried = slices.Grow(fa.tried[:0], len(assign))[:len(assign)]
	for g := range st.Groups {
		assign[g] = -1
		fa.tried[g] = -1
		if !st.asks(x, g) {
			continue
		}
		fa.at = g
		fa.pick(x, st, g, x.class, allowBorrow, why, assign[g:g+1], &res)
	}
	if res.failed >= 0 {
		// Kueue drops a PodSet's flavors, and what it tried, when a
		// group of it gets none.
		for i := range fa.tried {
			fa.tried[i] = -1
		}
	}
	if res.outcome != fit {
		res.borrow = false
	}
	return res
}

// assignSets is the flavor assigner for a workload of several PodSets,
// as Kueue v0.17.0's FlavorAssigner.assignFlavors: PodSet by PodSet, in
// order, each gets its own flavor per resource group it asks for
// (findFlavorForPodSets), a flavor's quota checked against the PodSet's
// requests plus what the PodSets before it were assigned there
// (fitsResourceQuota's assumedUsage, Assignment.Usage). assign[s*groups+g]
// is PodSet s's flavor in group g (-1: it asks nothing of the group). It
// stops at the first PodSet that gets no flavor in a group; the outcome
// is the worst of the PodSets'.
func (fa *flavorAssigner) assignSets(x *wl, allowBorrow bool, assign []int, why bool) assignResult {
	st := fa.snap.cqs[x.cq]
	groups := len(st.Groups)
	res := assignResult{outcome: fit, failed: -1}
	fa.tried = slices.Grow(fa.tried[:0], len(assign))[:len(assign)]
	for i := range assign {
		assign[i] = -1
		fa.tried[i] = -1
	}
	req := x.req
	defer func() { x.req = req }()
	for s := range x.sets {
		ps := &x.sets[s]
		for g := range groups {
			x.req = ps.req
			if !st.asks(x, g) {
				continue
			}
			// The PodSet's requests plus the earlier PodSets' on each
			// flavor, as pick tries it (fa.prior).
			fa.prior, fa.own = assign[:s*groups], ps.req
			fa.at = s*groups + g
			fa.pick(x, st, g, ps.class, allowBorrow, why, assign[s*groups+g:s*groups+g+1], &res)
			fa.prior, fa.own = nil, nil
		}
		if res.failed >= 0 {
			for g := range groups {
				fa.tried[s*groups+g] = -1
			}
			fa.failedSet = s
			fa.failedPrior = append(fa.failedPrior[:0], assign[:s*groups]...)
			break
		}
	}
	if res.outcome != fit {
		res.borrow = false
	}
	return res
}

// need sets x.req, for a PodSet being assigned (fa.own), to what it and
// the PodSets before it assigned group g's flavor f ask for there.
func (fa *flavorAssigner) need(x *wl, st *cqState, g, f int) {
	if fa.own == nil {
		return
	}
	groups := len(st.Groups)
	need := slices.Grow(fa.needBuf[:0], len(fa.own))[:len(fa.own)]
	copy(need, fa.own)
	for i := g; i < len(fa.prior); i += groups {
		if fa.prior[i] == f {
			for ri, a := range x.sets[i/groups].req {
				need[ri] += a
			}
		}
	}
	fa.needBuf = need
	x.req = need
}

// pick finds group g's flavor for x (class: the verdicts its pods get)
// and writes it to out[0] (-1: none), its borrowing, outcome and failed
// group to res.
func (fa *flavorAssigner) pick(x *wl, st *cqState, g int, class int32, allowBorrow, why bool, out []int, res *assignResult) {
	out[0] = -1
	cur := fa.whyCur[:0]
	borrowAt := -1 // the first flavor that fits by borrowing, when trying on
	stopped := false
	// Where the last search stopped, kept (x.scanOn): this one starts
	// after it (Kueue's NextFlavorToTryForPodSetResource).
	from := 0
	if x.scanOn && fa.at < len(x.scan) {
		from = x.scan[fa.at] + 1
	}
	last := len(st.flavors[g]) - 1
	fa.tried[fa.at] = -1
	for f := from; f <= last; f++ {
		fl := &fa.snap.flavors[st.flavors[g][f]]
		if v := st.classes[class][st.flat[g]+f]; v != candidate {
			// Not a candidate for its pods (Kueue's
			// checkFlavorForPodSets): tried no further.
			if why {
				cur = appendVerdict(cur, fl, v)
			}
			continue
		}
		fa.need(x, st, g, f)
		fits, b := true, false
		shorts := 0
		for r, ri := range st.resOf[g] {
			a := x.req[ri]
			if a == 0 {
				continue
			}
			name := st.Groups[g].Covered[r]
			fit, short := fa.snap.fits(st, g, f, r, a, allowBorrow)
			if !fit {
				if why {
					if shorts == 0 {
						cur = appendWhy(cur, "insufficient unused quota in flavor ", fl.Name, " for ")
					} else {
						cur = append(cur, ", "...)
					}
					cur = append(cur, name...)
					cur = append(cur, " ("...)
					cur = appendAmount(cur, name, short)
					cur = append(cur, " more needed)"...)
				}
				fits = false
				shorts++
				continue
			}
			if st.usage[g][f][r]+a > st.quota[g][f][r].Nominal {
				b = true
			}
		}
		if !fits {
			if st.Fungibility.StopOnPreempt && borrowAt < 0 && fa.oracle.canPreempt(x, g, f) {
				stopped = true
				if f < last {
					fa.tried[fa.at] = f
				}
				break
			}
			continue
		}
		if b && st.Fungibility.TryNextOnBorrow {
			if borrowAt < 0 {
				borrowAt = f
			}
			continue
		}
		out[0] = f
		res.borrow = res.borrow || b
		if f < last {
			fa.tried[fa.at] = f
		}
		break
	}
	if out[0] < 0 && borrowAt >= 0 && !stopped {
		out[0] = borrowAt
		res.borrow = true
	}
	if out[0] < 0 {
		o := noFit
		if stopped {
			o = preemptFit
		}
		res.outcome = min(res.outcome, o)
		if res.failed < 0 {
			res.failed = g
		}
		if why {
			if len(cur) == 0 {
				cur = append(cur, "no flavor"...)
			}
			fa.why = append(append(fa.why[:0], "couldn't assign flavors: "...), cur...)
		}
	}
	fa.whyCur = cur
}

// appendWhy appends one flavor's part of a reason, "; " after another's.
func appendWhy(b []byte, parts ...string) []byte {
	if len(b) > 0 {
		b = append(b, "; "...)
	}
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
