package admission

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// randomSpec is a random policy: one to three flavors (some tainted, some
// labelled with one of two zones),
// two to four queues in a flat cohort, a tree with a quota-holding
// Cohort, or none; gpu alone or with cpu and memory, sometimes a MIG
// group; random limits, preemption policies, strategies, fungibility and
// weights; sometimes fair sharing or waitForPodsReady.
func randomSpec(r *rand.Rand) Spec {
	var s Spec
	nf := 1 + r.IntN(3)
	for i := 0; i < nf; i++ {
		f := Flavor{Name: fmt.Sprintf("f%d", i)}
		if r.IntN(4) == 0 {
			f.NodeTaints = []cluster.Taint{{Key: "spot", Value: "true", Effect: cluster.NoSchedule}}
		}
		if r.IntN(2) == 0 {
			f.NodeLabels = map[string]string{"zone": fmt.Sprintf("z%d", r.IntN(2))}
		}
		s.Flavors = append(s.Flavors, f)
	}
	quota := func(cohort bool) Quota {
		qt := Quota{Nominal: int64(r.IntN(12)), BorrowingLimit: NoLimit, LendingLimit: NoLimit}
		if cohort && r.IntN(4) == 0 {
			qt.BorrowingLimit = int64(r.IntN(6))
		}
		if cohort && r.IntN(4) == 0 {
			qt.LendingLimit = int64(r.IntN(int(qt.Nominal) + 1))
		}
		return qt
	}
	tree := r.IntN(3) == 0
	if tree {
		s.Cohorts = []Cohort{{Name: "root"}, {Name: "A", Parent: "root", FairWeight: int64(r.IntN(3)) * 1000}, {Name: "B", Parent: "root"}}
		if r.IntN(2) == 0 {
			s.Cohorts[2].Groups = []ResourceGroup{{Covered: []string{gpu}, Flavors: []FlavorQuotas{{Flavor: "f0", Resources: []Quota{q(int64(r.IntN(8)))}}}}}
		}
	}
	policies := []Policy{Never, LowerPriority, LowerOrNewerEqualPriority, Any}
	for i := 0; i < 2+r.IntN(3); i++ {
		c := ClusterQueue{Name: fmt.Sprintf("q%d", i)}
		switch {
		case tree:
			c.Cohort = []string{"A", "B", "root"}[r.IntN(3)]
		case r.IntN(5) != 0:
			c.Cohort = "org"
		}
		if r.IntN(4) == 0 {
			c.Strategy = StrictFIFO
		}
		c.Preempt = Preemption{WithinClusterQueue: policies[r.IntN(3)], ReclaimWithinCohort: policies[r.IntN(4)], BorrowWithinCohort: policies[r.IntN(2)]}
		c.NotReclaimable = r.IntN(6) == 0
		c.Fungibility = Fungibility{TryNextOnBorrow: r.IntN(3) == 0, StopOnPreempt: r.IntN(3) == 0}
		c.FairWeight = []int64{0, 0, 500, 2000, ZeroWeight}[r.IntN(5)]
		g := ResourceGroup{Covered: []string{gpu}}
		if r.IntN(2) == 0 {
			g.Covered = append(g.Covered, "cpu", "memory")
		}
		for _, fi := range r.Perm(nf)[:1+r.IntN(nf)] {
			fq := FlavorQuotas{Flavor: s.Flavors[fi].Name}
			for range g.Covered {
				fq.Resources = append(fq.Resources, quota(c.Cohort != ""))
			}
			g.Flavors = append(g.Flavors, fq)
		}
		c.Groups = append(c.Groups, g)
		if r.IntN(3) == 0 {
			c.Groups = append(c.Groups, ResourceGroup{Covered: []string{"nvidia.com/mig-1g.10gb"},
				Flavors: []FlavorQuotas{{Flavor: s.Flavors[r.IntN(nf)].Name, Resources: []Quota{quota(c.Cohort != "")}}}})
		}
		s.ClusterQueues = append(s.ClusterQueues, c)
		s.LocalQueues = append(s.LocalQueues, LocalQueue{Name: c.Name, ClusterQueue: c.Name})
	}
	if r.IntN(3) == 0 {
		s.FairSharing = &FairSharing{}
		if r.IntN(2) == 0 {
			s.FairSharing.Strategies = []FairStrategy{FairStrategy(r.IntN(2))}
		}
	}
	if r.IntN(5) == 0 {
		s.WaitForPodsReady = &WaitForPodsReady{Timeout: 10, BackoffBase: 1, BackoffMax: 8, BackoffLimit: 3, BlockAdmission: r.IntN(2) == 0}
	}
	return s
}

// A cycle sets aside, untried, a first that failed while nothing was
// admitted or released since, and admits a head with the flavors found
// when the heads were gathered if nothing changed since, and reuses a
// finished workload's memory for the next submitted (stale bucket entries
// may still point to it): shortcuts that must never change a decision.
// Over random policies and random submissions, cycles, completions,
// evictions, withdrawals and requeues, a controller taking them and one
// trying every head afresh with fresh memory for every workload agree on
// every decision, reason and standing.
func TestCycleShortcutsChangeNoDecision(t *testing.T) {
	resources := []string{gpu, "cpu", "memory", "nvidia.com/mig-1g.10gb"}
	tol := []cluster.Toleration{{Key: "spot", Operator: "Exists"}}
	cons := []*cluster.Constraints{nil, nil, nil, {Tolerations: tol},
		{NodeSelector: map[string]string{"zone": "z0"}},
		{NodeSelector: map[string]string{"zone": "z1"}, Tolerations: tol}}
	specs, admissions, preemptions, reused := 0, 0, 0, 0
	for seed := uint64(0); seed < 120; seed++ {
		r := rand.New(rand.NewPCG(seed, 17))
		spec := randomSpec(r)
		fast, err := New(spec)
		if err != nil {
			continue // a random limit the spec refuses
		}
		slow, err := New(spec)
		require.NoError(t, err)
		slow.noShortcuts, slow.queues.noReuse = true, true
		specs++
		var ids []int32
		now := int64(0)
		for step := 0; step < 300; step++ {
			now += int64(r.IntN(3))
			switch op := r.IntN(10); {
			case op < 4:
				id := int32(len(ids) + 1)
				w := Workload{ID: id, Queue: spec.LocalQueues[r.IntN(len(spec.LocalQueues))].Name, Priority: int32(r.IntN(3)), Created: now}
				for k := 0; k < 1+r.IntN(3); k++ {
					res := resources[r.IntN(len(resources))]
					if k == 0 {
						res = gpu
					}
					w.Requests = append(w.Requests, Request{res, int64(r.IntN(6))})
				}
				// Constraints from a few shared ones (as a run shares
				// them): a toleration, a zone selector, both.
				w.Constraints = cons[r.IntN(len(cons))]
				if len(fast.queues.free) > 0 {
					reused++
				}
				require.NoError(t, fast.Submit(w))
				require.NoError(t, slow.Submit(w))
				ids = append(ids, id)
			case op < 7:
				a := append([]Decision(nil), settle(fast)...)
				b := settle(slow)
				require.Equal(t, b, a, "seed %d step %d", seed, step)
				for _, d := range a {
					if d.Preempted {
						preemptions++
					} else if !d.Waiting {
						admissions++
					}
				}
			case op < 9 && len(ids) > 0:
				id := ids[r.IntN(len(ids))]
				switch r.IntN(4) {
				case 0:
					fast.Finish(id)
					slow.Finish(id)
				case 1:
					fast.Evict(id)
					slow.Evict(id)
				case 2:
					fast.Withdraw(id)
					slow.Withdraw(id)
				case 3:
					at := now - int64(r.IntN(5))
					fast.Requeue(id, at)
					slow.Requeue(id, at)
				}
			default:
				require.Equal(t, slow.Standings(), fast.Standings(), "seed %d step %d", seed, step)
			}
			for _, id := range ids {
				if a, b := fast.Reason(id), slow.Reason(id); a != b {
					require.Equal(t, b, a, "seed %d step %d workload %d", seed, step, id)
				}
			}
		}
	}
	t.Logf("%d policies, %d admissions, %d preemptions, %d workloads reused", specs, admissions, preemptions, reused)
	// The random policies exercise what the shortcuts skip.
	require.Greater(t, specs, 100)
	require.Greater(t, admissions, 2000)
	require.Greater(t, preemptions, 300)
	require.Greater(t, reused, 1000)
}
