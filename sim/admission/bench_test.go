package admission

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkControllerPerJob is what admission costs a job in the 1M-job
// Kueue benchmark (benchmarks.BenchmarkScaleKueue): two ClusterQueues of
// a cohort (900 and 460 GPUs, reclaimWithinCohort Any), 70% of the jobs in
// the first, 1, 2, 4 or 8 GPUs; each job is submitted, admitted by a
// cycle and finished by another, the standings and fair shares read
// after each change as the simulator's integrals do. Jobs finish in a
// random order among the 250 held, so the queues sit near their quota.
func BenchmarkControllerPerJob(b *testing.B) {
	cq := func(name string, gpus int64) ClusterQueue {
		return ClusterQueue{Name: name, Cohort: "philly", Preempt: Preemption{ReclaimWithinCohort: Any}, Groups: []ResourceGroup{{
			Covered: []string{gpu},
			Flavors: []FlavorQuotas{{Flavor: "gpu", Resources: []Quota{q(gpus)}}},
		}}}
	}
	c, err := New(Spec{Flavors: []Flavor{{Name: "gpu"}}, ClusterQueues: []ClusterQueue{cq("vc1", 900), cq("vc2", 460)},
		LocalQueues: []LocalQueue{{Name: "vc1", ClusterQueue: "vc1"}, {Name: "vc2", ClusterQueue: "vc2"}}})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var held []int32
	var stand []Standing
	var fair []float64
	read := func() {
		stand = c.AppendUsage(stand)
		fair = c.AppendFairShares(fair, stand)
	}
	req := make([]Request, 3)
	preempted := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		queue := "vc1"
		if r.Float64() < 0.3 {
			queue = "vc2"
		}
		g := int64(1) << r.IntN(4)
		// A Philly job asks for no CPU or memory (the queues cover GPUs only).
		req[0], req[1], req[2] = Request{"cpu", 0}, Request{"memory", 0}, Request{gpu, g}
		read()
		if err := c.Submit(Workload{ID: int32(i), Queue: queue, Created: int64(i), Requests: req}); err != nil {
			b.Fatal(err)
		}
		for _, d := range settle(c) {
			switch {
			case d.Preempted:
				preempted++
			case !d.Waiting:
				held = append(held, d.ID)
			}
		}
		if len(held) > 250 {
			k := r.IntN(len(held))
			read()
			c.Finish(held[k])
			held[k] = held[len(held)-1]
			held = held[:len(held)-1]
			settle(c)
		}
	}
	b.ReportMetric(float64(preempted)/float64(b.N), "preempted/job")
	b.ReportMetric(float64(c.queues.pending[0].n+c.queues.pending[1].n), "pending-at-end")
}
