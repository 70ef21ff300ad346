package capacity

import (
	"math/rand/v2"

	"gpuplan.dev/gpuplan/models"
)

// interruptions is the state of the interruption process: the random
// streams of the nodes' drawn lifetimes and failures (one per node slot,
// so the same slot sees the same sequence whatever the jobs do, made on
// first use), and per pool its capacity outage, where its availability
// trace stands, and whether a restock is due.
type interruptions struct {
	seed       uint64
	life, fail []*rand.Rand // per node slot
	gone       []*rand.Rand // per pool: outage lengths
	outage     []Time       // per pool: the end of its capacity outage (Process.Outage)
	availAt    []int32      // per pool: the availability trace's current tick
	restocking []bool       // per pool: an EvRestock is due
}

func newInterruptions(seed uint64, nodes, pools int) interruptions {
	return interruptions{
		seed: seed, life: make([]*rand.Rand, nodes), fail: make([]*rand.Rand, nodes),
		gone: make([]*rand.Rand, pools), outage: make([]Time, pools),
		availAt: make([]int32, pools), restocking: make([]bool, pools),
	}
}

// lifeStream is node slot n's stream of spot lifetimes.
func (s *interruptions) lifeStream(n int32) *rand.Rand { return stream(s.life, n, s.seed, streamLife) }

// failStream is node slot n's stream of times to failure.
func (s *interruptions) failStream(n int32) *rand.Rand { return stream(s.fail, n, s.seed, streamFail) }

// interrupted notes a spot interruption in pool p at now under the outage
// process d: an outage starts unless one is going on, and the end of the
// current one is returned.
func (s *interruptions) interrupted(now Time, p int32, d models.LifetimeDist) Time {
	if now >= s.outage[p] {
		s.outage[p] = now + hoursMs(d.Sample(stream(s.gone, p, s.seed, streamGone)))
	}
	return s.outage[p]
}

// allowed is how many nodes pool p's availability trace lets it hold now.
func (s *interruptions) allowed(ps *Pool, p int32) int32 {
	return ps.Interruptions.Available[s.availAt[p]]
}
