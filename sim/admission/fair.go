package admission

import (
	"math"
	"slices"
	"sort"
	"strconv"
)

// Fair sharing (Spec.FairSharing) follows Kueue's design (KEP-1714): a
// queue's share is the largest, over resources, of what it uses above its
// nominal quota (over every flavor) per thousand of what its parent
// cohort's subtree holds, divided by its weight. Shares are compared
// across the whole tree (Kueue holds a tournament level by level, with
// Cohort weights; for a tree of depth one the two agree). A cycle admits the
// head whose queue would have the lowest share with it first. When a
// workload does not fit, candidates come from its own queue (as
// withinClusterQueue allows) and from borrowing queues of the cohort (as
// reclaimWithinCohort allows); the queue with the highest share gives up
// a workload first. Another queue's workload goes when the preemptor would
// then stay within its nominal quota (reclaim), or when the strategy
// allows it; those the first strategy refuses are tried with the next.

// share is a queue's weighted share as its usage stands.
func (c *Controller) share(st *cqState) int64 {
	if st.cohort < 0 {
		return 0
	}
	w := st.weight()
	if w == 0 {
		return math.MaxInt64
	}
	var drs int64
	lend := st.shareDen
	for g, grp := range st.Groups {
		for r, name := range grp.Covered {
			var borrowed int64
			for f := range st.flavors[g] {
				borrowed += max(0, st.usage[g][f][r]-st.quota[g][f][r].Nominal)
			}
			if l := lend[c.res[name]]; borrowed > 0 && l > 0 {
				drs = max(drs, borrowed*1000/l)
			}
		}
	}
	return drs * 1000 / w
}

// shareWith is x's queue's share with x admitted to assign (nil: as the
// usage stands).
func (c *Controller) shareWith(x *wl, assign []int) int64 {
	st := c.cqs[x.cq]
	if assign == nil {
		return c.share(st)
	}
	saved := x.assign
	x.assign = assign
	c.charge(x, +1)
	s := c.share(st)
	c.charge(x, -1)
	x.assign = saved
	return s
}

// shareWithIn is x's queue's share with x's group g resources on flavor f.
func (c *Controller) shareWithIn(x *wl, g, f int) int64 {
	st := c.cqs[x.cq]
	assign := make([]int, len(st.Groups))
	for i := range assign {
		assign[i] = -1
	}
	assign[g] = f
	saved := x.assign
	x.assign = assign
	c.chargeGroup(x, g, +1)
	s := c.share(st)
	c.chargeGroup(x, g, -1)
	x.assign = saved
	return s
}

// chargeGroup adds (or takes away) x's requests of group g on its
// assigned flavor there.
func (c *Controller) chargeGroup(x *wl, g int, sign int64) {
	st := c.cqs[x.cq]
	f := x.assign[g]
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g {
			continue
		}
		st.usage[g][f][slices.Index(st.Groups[g].Covered, c.resName[ri])] += sign * a
	}
}

// withinNominal says whether x, added to group g's flavor f, would keep
// its queue within its nominal quota there.
func (c *Controller) withinNominal(x *wl, g, f int) bool {
	st := c.cqs[x.cq]
	for ri, a := range x.req {
		if a == 0 || st.groupOf[ri] != g {
			continue
		}
		r := slices.Index(st.Groups[g].Covered, c.resName[ri])
		if st.usage[g][f][r]+a > st.quota[g][f][r].Nominal {
			return false
		}
	}
	return true
}

// preemptFair is preempt under fair sharing.
func (c *Controller) preemptFair(x *wl) []Decision {
	st := c.cqs[x.cq]
	assign, _, g, _ := c.assignment(x, true)
	if assign != nil || g < 0 {
		return nil
	}
	p := st.Preempt
	if p.WithinClusterQueue == Never && p.ReclaimWithinCohort == Never {
		return nil
	}
	for f := range st.flavors[g] {
		if _, bad := untolerated(&c.spec.Flavors[st.flavors[g][f]], x.Tolerations); bad {
			continue
		}
		targets := c.targetsFor(x, g, f)
		if targets == nil {
			continue
		}
		var out []Decision
		for _, t := range targets {
			reclaim := t.cq != x.cq
			c.release(t)
			why := "prioritization in the ClusterQueue"
			if reclaim {
				why = "fair sharing within the cohort"
			}
			t.reason = "Preempted to accommodate a workload (UID: " + strconv.Itoa(int(x.ID)) + ") due to " + why
			c.evicted = append(c.evicted, t)
			out = append(out, Decision{ID: t.ID, Preempted: true, By: x.ID, Reclaim: reclaim})
		}
		if assign, _, _, _ := c.assignment(x, true); assign != nil {
			return append(out, c.admit(x, assign))
		}
		return nil // cannot happen: fairTargets checked the fit
	}
	return nil
}

// fairTargets picks, from the candidates, workloads to preempt so that x
// fits group g's flavor f, and trims the set to what x needs. The
// candidates' usage is left as it was; nil: x does not fit.
func (c *Controller) fairTargets(x *wl, g, f int, cands []*wl) []*wl {
	if len(cands) == 0 {
		return nil
	}
	st := c.cqs[x.cq]
	flavor := st.flavors[g][f]
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
			return l[i].seq > l[j].seq
		})
	}
	var removed []*wl
	take := func(t *wl) bool {
		c.charge(t, -1)
		removed = append(removed, t)
		return c.fitsIn(x, g, f, true)
	}
	fit := false
	for si, strat := range c.spec.FairSharing.Strategies {
		retry := map[int][]*wl{}
		for !fit {
			// The queue with the highest share that still has candidates.
			order := make([]int, 0, len(queues))
			for _, q := range queues {
				if len(byQueue[q]) > 0 {
					order = append(order, q)
				}
			}
			if len(order) == 0 {
				break
			}
			sh := make(map[int]int64, len(order))
			for _, q := range order {
				sh[q] = c.share(c.cqs[q])
			}
			sort.SliceStable(order, func(i, j int) bool { return sh[order[i]] > sh[order[j]] })
			progressed := false
			for _, q := range order {
				l := byQueue[q]
				if q == x.cq {
					byQueue[q] = l[1:]
					fit, progressed = take(l[0]), true
					break
				}
				if !c.cqs[q].borrowsOn(flavor) {
					byQueue[q] = nil
					continue
				}
				reclaim := c.withinNominal(x, g, f)
				mine := c.shareWithIn(x, g, f)
				for len(l) > 0 {
					t := l[0]
					l = l[1:]
					old := sh[q]
					c.charge(t, -1)
					after := c.share(c.cqs[q])
					c.charge(t, +1)
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
		if fit || si == len(c.spec.FairSharing.Strategies)-1 {
			break
		}
		for q, l := range retry {
			byQueue[q] = append(l, byQueue[q]...)
		}
	}
	if !fit {
		for _, t := range removed {
			c.charge(t, +1)
		}
		return nil
	}
	keep := fillBack(c, x, g, f, removed)
	for _, t := range keep {
		c.charge(t, +1) // the caller releases them for good
	}
	return keep
}

// fillBack puts back, newest removal first, the removed workloads x does
// not need (all but the last removed are tried); it returns those kept
// out, in removal order, still uncharged.
func fillBack(c *Controller, x *wl, g, f int, removed []*wl) []*wl {
	keep := removed[len(removed)-1:]
	for i := len(removed) - 2; i >= 0; i-- {
		t := removed[i]
		c.charge(t, +1)
		if c.fitsIn(x, g, f, true) {
			continue // not needed
		}
		c.charge(t, -1)
		keep = append(keep, t)
	}
	slices.Reverse(keep)
	return keep
}

// FairShares gives each ClusterQueue the GPUs a weighted max-min division
// of its cohort tree would give it at this moment, from the standings
// (quota-holding Cohorts' rows get none): every
// queue first gets its demand up to its nominal quota; what the others
// leave unused of their lendable quota then goes to queues with unmet
// demand in proportion to their weights, each up to its demand and
// borrowing limit (weight-0 queues share only what the rest leave); what
// Cohorts hold of their own joins what is shared. A queue outside any
// cohort gets min(demand, nominal). Limits of inner Cohorts are not
// applied.
func (c *Controller) FairShares(s []Standing) []float64 {
	out := make([]float64, len(s))
	for qi := range c.cqs {
		out[qi] = float64(min(s[qi].Demand, s[qi].Nominal))
	}
	for k, members := range c.cohorts {
		var pool float64
		for _, n := range c.lenders {
			if c.rootIndex(n) == k {
				_, lend := c.ownGPUs(n)
				pool += float64(lend)
			}
		}
		want := map[int]float64{}
		for _, mi := range members {
			st := c.cqs[mi]
			g := out[mi]
			pool += math.Min(float64(st.gpuLend), float64(s[mi].Nominal)-g)
			limit := math.Inf(1)
			if st.gpuBorrow != NoLimit {
				limit = float64(st.gpuBorrow)
			}
			if w := math.Min(float64(s[mi].Demand)-g, limit); w > 0 && float64(s[mi].Demand) > float64(s[mi].Nominal) {
				want[mi] = w
			}
		}
		for _, zero := range []bool{false, true} {
			for pool > 1e-9 {
				var active []int
				var wsum float64
				for _, mi := range members {
					w := c.cqs[mi].weight()
					if want[mi] <= 1e-9 || (w == 0) != zero {
						continue
					}
					if zero {
						w = 1
					}
					active = append(active, mi)
					wsum += float64(w)
				}
				if len(active) == 0 {
					break
				}
				given := 0.0
				for _, mi := range active {
					w := float64(c.cqs[mi].weight())
					if zero {
						w = 1
					}
					d := math.Min(pool*w/wsum, want[mi])
					out[mi] += d
					want[mi] -= d
					given += d
				}
				pool -= given
			}
		}
	}
	return out
}
