package serving

import "math"

// Recompute preemptions in the fast model. vLLM admits a waiting request
// when its prompt's blocks are free and reserves nothing for its output:
// a running request that needs a block when none is free preempts the
// request admitted last (its blocks freed, its prompt and output so far
// recomputed when it is admitted again). The fast model's steady state
// holds the decoding requests' count D about its mean d with variance
// varD (drift, in llmfast.go); the cache holds Dmax = blocks /
// blocksPerReq of them. Preemptions are the pushes of D against Dmax:
// as a diffusion of D reflected at Dmax (an M/G/infinity count moves by
// one at each arrival and each departure, rate lambda each: an
// infinitesimal variance of 2 lambda) its stationary density is the
// normal's truncated at Dmax, and the barrier pushes back at the rate
// lambda p(Dmax) = lambda phi(z) / (sqrt(varD) Phi(z)), z = (Dmax - d) /
// sqrt(varD), in requests' worth of blocks a unit of time. A preemption
// frees the victim's blocks, the newest request's: its prompt's, v =
// E[prompt] / blockSize + 1/2 blocks, blocksPerReq / v requests' worth.
// So a request is preempted phi(z) / (Phi(z) sqrt(varD)) x blocksPerReq /
// v times on average, times preemptRepeat (the victim, readmitted the
// newest, is the next one's too). The fast model calls a rate overload
// below z = kvDriftZ (the cache must hold the drift's two deviations),
// so a run counts the rare preemptions short of that; nearer the cache,
// where they come in storms and requests queue for blocks, what vLLM
// does is what the exact model (SimulateLLM) follows.
//
// The latency a preemption adds: the victim, and the requests queued
// behind it (none is admitted in a step that preempts), wait until the
// excursion of D above the cache's reverts, which it does over the
// drift's correlation time tau (the decodes' mean residual life, slowed
// by the feedback: llmfast.go's drift): half of it on average. Spread
// over all requests: the preemptions per request times tau / 2.

// preemptions are the preemptions per 1,000 requests and the mean
// latency they add to a request, ms, at d decoding with variance varD,
// its drift's correlation time tauMs.
func (m *steadyModel) preemptions(d, varD, tauMs float64) (per1k, delayMs float64) {
	if varD <= 0 || m.blocksPerReq <= 0 || m.lam <= 0 {
		return 0, 0
	}
	sd := math.Sqrt(varD)
	z := (m.blocks/m.blocksPerReq - d) / sd
	phi := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
	Phi := 0.5 * math.Erfc(-z/math.Sqrt2)
	v := m.eIn/float64(m.cfg.BlockSize) + 0.5
	per := preemptRepeat * phi / (Phi * sd) * m.blocksPerReq / v
	return 1000 * per, per * tauMs / 2
}

// kvDriftZ is the deviations of the decoding requests' drift a
// replica's cache must hold below its capacity.
const kvDriftZ = 2.0

// preemptRepeat is how many times the barrier's pushes preempt: a victim
// is admitted again as soon as its prompt's blocks are free, the newest
// once more, and is preempted again while the cache stays full. Fitted to
// the exact model (TestSteadyLLMPreemptionsAgainstExact: 3.5 to 5 over
// 13 to 16 requests/s on an 8B replica of 2,500 blocks).
const preemptRepeat = 4.0
