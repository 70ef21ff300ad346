package admission

// The usage view: what a run's admission integrals read at every change
// (the used, borrowed and lent GPUs and the fair share of every
// ClusterQueue, integrated over time by the simulator). Standings and
// FairShares work every row out afresh, which costs every ClusterQueue at
// every change; the view keeps the rows and brings up to date only those
// of the ClusterQueues touched since the last read (whose usage or pending
// workloads changed), the lending of their cohort trees and, where a
// demand changed, their trees' fair division. It gives the same numbers,
// bit for bit, as Standings (less the Share) and FairShares would
// (TestUsageViewIsStandings).

// UsageView is the usage view's rows (Controller.Usage): valid until the
// controller's state next changes.
type UsageView struct {
	// Rows are Standings' rows, in its order, with Share left 0; Fair is
	// FairShares of them.
	Rows []Standing
	Fair []float64
	// Active lists the rows that may be non-zero, in no particular order:
	// the ClusterQueues with GPUs in use or asked for, and the queues and
	// Cohorts holding GPU quota their tree may borrow. Every other row's
	// Used, Demand, Borrowed, Lent and Fair are 0.
	Active []int
}

// touchSet lists the ClusterQueues whose usage or pending workloads
// changed since the view last read them.
type touchSet struct {
	on   []bool
	list []int
}

func (t *touchSet) mark(qi int) {
	if t == nil || t.on[qi] {
		return
	}
	t.on[qi] = true
	t.list = append(t.list, qi)
}

// usageState is the view and what keeps it up to date.
type usageState struct {
	view UsageView
	// nodeDemand is each tree node's demand (its subtree's queues' Demand)
	// and fs the division's state over them (fs.demand the same in
	// float64, fs.walk the children with demand or that reserve).
	nodeDemand []int64
	fs         fairState
	// pos is each row's place in view.Active (-1: not there); always the
	// rows that stay there.
	pos    []int
	always []bool
	// trees is each cohort tree's lending (snapshot.lending) as the view
	// last read it; slots each ClusterQueue's places in its tree's keys.
	trees []treeLending
	slots [][]lendPlace
	// lentDirty and fairDirty mark the trees whose lending or fair
	// division is to be worked out again; dirty lists them.
	lentDirty, fairDirty []bool
	dirty                []int
}

// treeLending is a cohort tree's borrowing and unused lendable quota per
// GPU key (in snapshot.lending's key order), each member's part as last
// read, the members and lenders that have lendable quota for each key, and
// the rows that may lend.
type treeLending struct {
	borrowed, unused []int64
	// memberB and memberU are, per key and member index, what it borrows
	// and its lendable quota left unused.
	memberB, memberU [][]int64
	lendingMembers   [][]int
	rows             []int
}

// lendPlace is a ClusterQueue's place in its tree's lending: key j, slot m
// of the key's members.
type lendPlace struct{ j, m int }

// initUsage makes the view of a controller with nothing in use.
func (c *Controller) initUsage() {
	s, u := &c.snap, &c.usage
	nq := len(s.cqs)
	nrows := nq + len(s.lenders)
	c.touched = touchSet{on: make([]bool, nq)}
	s.touch, c.queues.touch = &c.touched, &c.touched
	u.view.Rows = s.appendStandings(nil, false)
	u.view.Fair = make([]float64, nrows)
	u.nodeDemand = make([]int64, len(s.nodes))
	u.fs = s.newFairState()
	u.pos = make([]int, nrows)
	u.always = make([]bool, nrows)
	u.trees = make([]treeLending, len(s.cohorts))
	u.slots = make([][]lendPlace, nq)
	u.lentDirty, u.fairDirty = make([]bool, len(s.cohorts)), make([]bool, len(s.cohorts))
	for k, members := range s.cohorts {
		l, t := &s.lending[k], &u.trees[k]
		nk := len(l.keys)
		t.borrowed, t.unused = make([]int64, nk), make([]int64, nk)
		t.memberB, t.memberU = make([][]int64, nk), make([][]int64, nk)
		t.lendingMembers = make([][]int, nk)
		for j, lk := range l.keys {
			t.memberB[j], t.memberU[j] = make([]int64, len(members)), make([]int64, len(members))
			for mi, m := range lk.members {
				u.slots[members[m.i]] = append(u.slots[members[m.i]], lendPlace{j, mi})
				// Nothing in use: it lends up to its lendable quota.
				t.memberU[j][m.i] = min(m.lendable, max(0, m.nominal))
				t.unused[j] += t.memberU[j][m.i]
				if m.lendable > 0 {
					t.lendingMembers[j] = append(t.lendingMembers[j], m.i)
					u.always[members[m.i]] = true
				}
			}
			for _, li := range l.lenders {
				t.unused[j] += lendable(s.nodes[s.lenders[li]].own[lk.key])
			}
		}
		for _, qi := range members {
			if u.always[qi] {
				t.rows = append(t.rows, qi)
			}
		}
		for _, li := range l.lenders {
			u.always[nq+li] = true
			t.rows = append(t.rows, nq+li)
		}
	}
	for r := range u.pos {
		u.pos[r] = -1
		if u.always[r] {
			u.pos[r] = len(u.view.Active)
			u.view.Active = append(u.view.Active, r)
		}
	}
}

// Usage brings the usage view up to date and returns it.
func (c *Controller) Usage() *UsageView {
	s, u := &c.snap, &c.usage
	for _, qi := range c.touched.list {
		c.touched.on[qi] = false
		u.refresh(s, qi, c.queues.pending[qi].gpus)
	}
	c.touched.list = c.touched.list[:0]
	for _, k := range u.dirty {
		if u.lentDirty[k] {
			u.lend(s, k)
		}
		if u.fairDirty[k] {
			r := s.rootNode[k]
			s.divide(&u.fs, r, s.fair.quota[r], u.view.Fair)
		}
		u.lentDirty[k], u.fairDirty[k] = false, false
	}
	u.dirty = u.dirty[:0]
	return &u.view
}

// markTree notes that tree k's lending (lent) or fair division is to be
// worked out again.
func (u *usageState) markTree(k int, lent bool) {
	if !u.lentDirty[k] && !u.fairDirty[k] {
		u.dirty = append(u.dirty, k)
	}
	if lent {
		u.lentDirty[k] = true
	} else {
		u.fairDirty[k] = true
	}
}

// refresh works out queue qi's row again, with pending its pending GPUs,
// and passes the changes to its tree's demands and lending.
func (u *usageState) refresh(s *snapshot, qi int, pending int64) {
	st := s.cqs[qi]
	o := &u.view.Rows[qi]
	var used, borrowed int64
	for k, p := range st.gpuUse {
		v, nom := *p, st.gpuNominal[k]
		used += v
		borrowed += max(0, v-nom)
	}
	was := o.Demand
	o.Used, o.Demand, o.Borrowed = used, used+pending, float64(borrowed)
	if d := o.Demand - was; d != 0 {
		u.setActive(qi, o.Demand > 0)
		if st.cohort < 0 {
			u.view.Fair[qi] = float64(min(o.Demand, o.Nominal))
		} else {
			if o.Demand == 0 {
				u.view.Fair[qi] = 0 // min(Demand, Nominal): divide no longer reaches it
			}
			u.addDemand(s, st.node, d)
			u.markTree(st.cohort, false)
		}
	}
	if st.cohort < 0 {
		return
	}
	t := &u.trees[st.cohort]
	keys := s.lending[st.cohort].keys
	changed := false
	for _, p := range u.slots[qi] {
		m := &keys[p.j].members[p.m]
		v := *m.use
		b, un := max(0, v-m.nominal), min(m.lendable, max(0, m.nominal-v))
		if b != t.memberB[p.j][m.i] || un != t.memberU[p.j][m.i] {
			t.borrowed[p.j] += b - t.memberB[p.j][m.i]
			t.unused[p.j] += un - t.memberU[p.j][m.i]
			t.memberB[p.j][m.i], t.memberU[p.j][m.i] = b, un
			changed = true
		}
	}
	if changed {
		u.markTree(st.cohort, true)
	}
}

// addDemand adds d to the demand of node i and its ancestors, keeping each
// parent's walk (its children with demand or that reserve, in order).
func (u *usageState) addDemand(s *snapshot, i int, d int64) {
	for ; i >= 0; i = s.nodes[i].parent {
		was := u.nodeDemand[i]
		u.nodeDemand[i] += d
		// (Whole numbers: the same as appendFairShares' sums in float64.)
		u.fs.demand[i] = float64(u.nodeDemand[i])
		p := s.nodes[i].parent
		if p < 0 || s.fair.reserves[i] || (was == 0) == (u.nodeDemand[i] == 0) {
			continue
		}
		w := u.fs.walk[p]
		at := slotIndex(w, i)
		if was == 0 {
			w = append(w, 0)
			copy(w[at+1:], w[at:])
			w[at] = i
		} else {
			w = append(w[:at], w[at+1:]...)
		}
		u.fs.walk[p] = w
	}
}

// slotIndex is where node i is or goes in an ascending list.
func slotIndex(w []int, i int) int {
	lo, hi := 0, len(w)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if w[h] < i {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// setActive puts row r in the active list or takes it out (rows that are
// always there stay).
func (u *usageState) setActive(r int, on bool) {
	if u.always[r] || (u.pos[r] >= 0) == on {
		return
	}
	a := u.view.Active
	if on {
		u.pos[r] = len(a)
		u.view.Active = append(a, r)
		return
	}
	at := u.pos[r]
	last := a[len(a)-1]
	a[at], u.pos[last] = last, at
	u.view.Active = a[:len(a)-1]
	u.pos[r] = -1
}

// lend works out tree k's Lent rows again: what its queues borrow, per
// key, shared among those with lendable quota unused in proportion to it
// (as snapshot.appendStandings does, in the same order of sums).
func (u *usageState) lend(s *snapshot, k int) {
	t := &u.trees[k]
	rows := u.view.Rows
	for _, r := range t.rows {
		rows[r].Lent = 0
	}
	members := s.cohorts[k]
	l := &s.lending[k]
	nq := len(s.cqs)
	for j, lk := range l.keys {
		if t.borrowed[j] == 0 || t.unused[j] == 0 {
			continue
		}
		borrowed, unused := float64(t.borrowed[j]), float64(t.unused[j])
		for _, i := range t.lendingMembers[j] {
			rows[members[i]].Lent += borrowed * float64(t.memberU[j][i]) / unused
		}
		for _, li := range l.lenders {
			rows[nq+li].Lent += borrowed * float64(lendable(s.nodes[s.lenders[li]].own[lk.key])) / unused
		}
	}
}
