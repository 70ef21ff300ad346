package serving

import (
	"container/heap"
	"math"
	"math/rand/v2"
)

// The picker's first placements of more prefixes (groups) than replicas.
//
// A group's first request goes to the replica with the fewest requests
// waiting for its engine (the queue scorer), then the fewest outstanding,
// ties to the first. Below capacity a request waits only for the step in
// progress to end, so the outstanding counts decide most. A replica holding
// more groups has more requests outstanding on average, so the rule
// corrects towards an even spread, but the counts are noisy (Poisson
// arrivals, sojourns of seconds), so it corrects only partly: in the
// exact model (SimulateLLMRouted, 16 seeds) the variance of a replica's
// groups is 0.2 to 0.4 of Binomial(G, 1/R)'s (the groups placed at
// random), whatever the load from 30% to 60% of capacity, and with G <= R
// each group has a replica of its own in every seed.
//
// prefixPlacement follows that rule: it runs the placement alone, the
// service's Poisson stream at rate with each request a group drawn
// uniformly, each request waiting at its replica for a uniform share of
// a step and outstanding for a sojourn drawn from the steady state's
// end-to-end latency, until every group has been placed, over a fixed
// number of runs from a fixed seed (deterministic). It gives the share of
// replicas holding n groups, p[n], and the mean count of the busiest
// replica. Its variances against the exact model's (16 seeds, 30% and
// 60% of capacity): 8 groups on 4 replicas 0.41 (0.25 to 0.28: the exact
// picker spreads a few groups' first requests, arriving together, more
// evenly), 16 on 4 0.78 to 0.86 (1.03 to 1.12), 32 on 8 0.85 to 0.94
// (0.89 to 1.02), 100 on 4 5.1 to 5.9 (4.4 to 5.3), 100 on 8 3.0 to 3.3
// (2.2 to 2.3); its busiest replica 2.76 of 8 on 4 (2.44 to 2.50), 5.1
// of 16 on 4 (5.25 to 5.38), 5.4 of 32 on 8 (5.50 to 5.62), 27.7 to 27.9
// of 100 on 4 (27.6 to 27.8), 15.3 to 15.5 of 100 on 8 (14.8 to 15.0).

// placementRuns is the runs of the placement prefixPlacement averages
// (a replica's share of each count within about 3%).
const placementRuns = 256

// departure is a request's end at a replica.
type departure struct {
	at      float64
	replica int
}

type departures []departure

func (d departures) Len() int           { return len(d) }
func (d departures) Less(i, j int) bool { return d[i].at < d[j].at }
func (d departures) Swap(i, j int)      { d[i], d[j] = d[j], d[i] }
func (d *departures) Push(x any)        { *d = append(*d, x.(departure)) }
func (d *departures) Pop() any {
	old := *d
	x := old[len(old)-1]
	*d = old[:len(old)-1]
	return x
}

// prefixPlacement is the distribution of a replica's groups when the
// picker places groups groups over replicas replicas, the service's
// requests arriving at rate a second, waiting up to stepMs and staying
// sojourn ms (quantile points, drawn uniformly): p[n] the share of
// replicas holding n, and busiest the mean of the most any replica holds.
func prefixPlacement(groups, replicas int, rate float64, sojourn []float64, stepMs float64) (p []float64, busiest float64) {
	p = make([]float64, groups+1)
	rng := rand.New(rand.NewPCG(31, uint64(groups*1000+replicas)))
	out := make([]int, replicas)
	waiting := make([]int, replicas)
	held := make([]int, replicas)
	where := make([]int, groups)
	var deps, admits departures
	lam := rate / 1e3 // per ms
	for range placementRuns {
		clear(out)
		clear(held)
		clear(waiting)
		admits = admits[:0]
		for g := range where {
			where[g] = -1
		}
		deps = deps[:0]
		t, left := 0.0, groups
		for left > 0 {
			t += rng.ExpFloat64() / lam
			for len(deps) > 0 && deps[0].at <= t {
				out[heap.Pop(&deps).(departure).replica]--
			}
			for len(admits) > 0 && admits[0].at <= t {
				waiting[heap.Pop(&admits).(departure).replica]--
			}
			g := rng.IntN(groups)
			k := where[g]
			if k < 0 {
				k = 0
				for j := 1; j < replicas; j++ {
					if waiting[j] < waiting[k] || waiting[j] == waiting[k] && out[j] < out[k] {
						k = j
					}
				}
				where[g], left = k, left-1
				held[k]++
			}
			out[k]++
			waiting[k]++
			heap.Push(&admits, departure{t + stepMs*rng.Float64(), k})
			s := sojourn
			if len(s) > 0 {
				heap.Push(&deps, departure{t + s[rng.IntN(len(s))], k})
			}
		}
		most := 0
		for _, h := range held {
			p[h]++
			most = max(most, h)
		}
		busiest += float64(most)
	}
	for n := range p {
		p[n] /= float64(placementRuns * replicas)
	}
	return p, busiest / placementRuns
}

// placedKind is a kind of replica of a placement: those holding groups
// groups (a mean over the replicas it stands for), share of the
// replicas.
type placedKind struct {
	groups float64
	share  float64
}

// placementKinds are p's kinds of replica: the replicas in order of
// their groups cut at cuts (the share of replicas below: finer at the
// top, where the busiest replicas lead the service's p95), each run of
// them a kind holding their mean groups; those holding none dropped
// (they serve nothing).
func placementKinds(p []float64) []placedKind {
	placementCuts := [...]float64{0.25, 0.5, 0.75, 0.9, 0.97, 1}
	var kinds []placedKind
	acc, sum, done, c := 0.0, 0.0, 0.0, 0
	for n, pn := range p {
		for pn > 1e-12 && c < len(placementCuts) {
			take := math.Min(pn, placementCuts[c]-done)
			acc, sum, done, pn = acc+take, sum+take*float64(n), done+take, pn-take
			if done >= placementCuts[c]-1e-12 {
				if acc > 0 && sum > 0 {
					kinds = append(kinds, placedKind{sum / acc, acc})
				}
				acc, sum = 0, 0
				c++
			}
		}
	}
	if acc > 0 && sum > 0 {
		kinds = append(kinds, placedKind{sum / acc, acc})
	}
	return kinds
}
