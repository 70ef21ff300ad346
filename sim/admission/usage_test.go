package admission

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// The usage view brings up to date only the queues touched since it was
// last read, yet gives what Standings (less the Share) and FairShares
// give, bit for bit (the run's integrals add these figures at every change:
// a last-bit difference would show in the output), and every row it does
// not list as active is zero. Over random policies, some with idle
// ClusterQueues added (no quota, or quota and nothing asked, in the
// cohort, in a Cohort of the tree or in none) and random submissions,
// cycles, completions, evictions, withdrawals and requeues, read at
// random moments (several changes may pass between two reads).
func TestUsageViewIsStandings(t *testing.T) {
	resources := []string{gpu, "cpu", "memory", "nvidia.com/mig-1g.10gb"}
	cons := []*cluster.Constraints{nil, nil, {Tolerations: []cluster.Toleration{{Key: "spot", Operator: "Exists"}}}}
	specs, reads, lent, fractional := 0, 0, 0, 0
	for seed := uint64(0); seed < 120; seed++ {
		r := rand.New(rand.NewPCG(seed, 34))
		spec := randomSpec(r)
		if r.IntN(2) == 0 {
			cohorts := []string{"", "org"}
			if len(spec.Cohorts) > 0 {
				cohorts = []string{"", "A", "B", "root"}
			}
			for i := 0; i < 1+r.IntN(6); i++ {
				idle := ClusterQueue{Name: fmt.Sprintf("idle%d", i), Cohort: cohorts[r.IntN(len(cohorts))], Groups: []ResourceGroup{{Covered: []string{gpu},
					Flavors: []FlavorQuotas{{Flavor: spec.Flavors[0].Name, Resources: []Quota{q(int64(r.IntN(2) * r.IntN(5)))}}}}}}
				if idle.Cohort == "" {
					idle.Groups[0].Flavors[0].Resources[0] = q(3)
				}
				spec.ClusterQueues = append(spec.ClusterQueues, idle)
			}
		}
		c, err := New(spec)
		if err != nil {
			continue // a random limit the spec refuses
		}
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
				w.Constraints = cons[r.IntN(len(cons))]
				require.NoError(t, c.Submit(w))
				ids = append(ids, id)
			case op < 6:
				settle(c)
			case op < 8 && len(ids) > 0:
				id := ids[r.IntN(len(ids))]
				switch r.IntN(4) {
				case 0:
					c.Finish(id)
				case 1:
					c.Evict(id)
				case 2:
					c.Withdraw(id)
				case 3:
					c.Requeue(id, now-int64(r.IntN(5)))
				}
			default:
				reads++
				want := c.Standings()
				for i := range want {
					want[i].Share = 0
				}
				wantFair := c.FairShares(want)
				v := c.Usage()
				require.Equal(t, want, v.Rows, "seed %d step %d", seed, step)
				require.Equal(t, wantFair, v.Fair, "seed %d step %d", seed, step)
				active := map[int]bool{}
				for _, i := range v.Active {
					require.False(t, active[i], "row %d listed twice", i)
					active[i] = true
				}
				for i, row := range v.Rows {
					if row.Lent > 0 {
						lent++
						if row.Lent != float64(int64(row.Lent)) {
							fractional++
						}
					}
					if !active[i] {
						require.Equal(t, Standing{Nominal: row.Nominal}, row, "seed %d step %d row %d", seed, step, i)
						require.Zero(t, v.Fair[i], "seed %d step %d row %d", seed, step, i)
					}
				}
			}
		}
	}
	t.Logf("%d policies, %d reads, %d rows lending (%d a fraction)", specs, reads, lent, fractional)
	require.Greater(t, specs, 100)
	require.Greater(t, reads, 3000)
	require.Greater(t, fractional, 100) // shares of a borrowing, as Standings works them out
}

// A read with nothing changed since the last costs nothing, and one after
// a change in one of 500 queues works out that queue's row and its tree
// only: it allocates nothing either way.
func TestUsageViewAllocatesNothing(t *testing.T) {
	var cqs []ClusterQueue
	for i := 0; i < 500; i++ {
		cqs = append(cqs, cq(fmt.Sprintf("q%d", i), "org", q(int64(i%3))))
	}
	c := controller(t, cqs...)
	submit(t, c, 1, "q7", 4, 0)
	settle(c)
	v := c.Usage()
	// q7 (nominal 1: 7 mod 3) borrows 3 GPUs; the others leave unused
	// 166 x 1 (i mod 3 = 1: 167 queues less q7) + 166 x 2 (i mod 3 = 2,
	// i = 2 ... 497) = 498, q7 none: q1, nominal 1, lends 3 x 1/498.
	require.Equal(t, Standing{Nominal: 1, Used: 4, Demand: 4, Borrowed: 3}, v.Rows[7])
	require.Equal(t, 3.0/498, v.Rows[1].Lent)
	w := Workload{ID: 1, Queue: "q7", Created: 1, Requests: []Request{{gpu, 4}}}
	allocs := testing.AllocsPerRun(50, func() {
		c.Finish(1)
		c.Usage()
		if c.Submit(w) != nil {
			panic("refused")
		}
		settle(c)
		c.Usage()
	})
	require.Zero(t, allocs)
}
