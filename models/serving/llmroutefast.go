package serving

import "math"

// How a router changes one replica's arrivals in the fast model
// (SteadyLLMRouted). The service's requests are a Poisson stream of rate
// c x lambda over c replicas.
//
//   - Random (SteadyLLM): each replica's share is Poisson(lambda): the
//     prompts a step of s gathers are Poisson(lambda s), and the requests
//     decoding (an M/G/infinity count) Poisson too, variance d.
//   - RoundRobin: a replica gets every c-th request, so its arrivals are
//     a renewal process of Erlang-c gaps (squared coefficient of
//     variation 1/c). The prompts a step gathers are that process's count
//     in a window: with the underlying Poisson stream's count M (mean c
//     lambda s) and the phase J uniform over 0..c-1, floor((J + M) / c);
//     the others that arrive in a request's own step are floor(M / c),
//     counted from an arrival. The decoding count of a GI/G/infinity
//     queue has Whitt's peakedness z = 1 + (ca^2 - 1) eta, eta =
//     integral of P(L > t)^2 dt / E[L] = E[min(L1, L2)] / E[L] over the
//     requests' decode lives L (W. Whitt, "Heavy-traffic approximations
//     for service systems with blocking", AT&T Bell Labs Tech. J. 63(5),
//     1984): its variance is z d, below Poisson's.
//   - LeastOutstanding: a request joins the replica with the fewest
//     outstanding, which keeps the replicas' counts within about one of
//     each other: each holds a c-th of the service's M/G/infinity count
//     (Poisson, variance c d), so its own varies as d / c (z = 1/c, the
//     shared queue's bound: c replicas pooled as one). Its arrivals do
//     not smooth: they follow its departures, which a step ends in
//     bursts (a step that finishes three requests makes its replica the
//     least loaded by three, and the next three requests go there,
//     gathering in its next step), so a step's prompts are counted as
//     Poisson, as at random (the exact model agrees: its TTFT is within
//     5% of random's, TestRoutedFastModelAgainstExact).
//   - PrefixAware: without shared prefixes the llm-d picker's scores are
//     its queue scorer's, which sends a request away from a replica
//     whose queue holds one not yet scheduled (the next arrivals of a
//     step go elsewhere), ties to the fewest outstanding: round robin's
//     Erlang-c counts with least outstanding's z = 1/c. With shared
//     prefixes (LLMConfig.PrefixHitTokens) the picker keeps each on the
//     replica it first sent it to: llmprefixroute.go.
//
// The counts' order is bounded by maxErlang: an Erlang-32 gap varies by
// 18% of its mean, as good as regular for the prompts of a step.

// arrivals is how a replica's requests arrive: k the order of the
// Erlang gaps between them (1: Poisson), z the decoding count's variance
// over its mean's (1: Poisson).
type arrivals struct {
	k int
	z float64
}

var poissonArrivals = arrivals{k: 1, z: 1}

// maxErlang bounds the Erlang order of a replica's arrivals.
const maxErlang = 32

// routedArrivals is the arrivals of one of c replicas behind router with
// output lengths out.
func routedArrivals(router Router, c int, out TokenDist) arrivals {
	if c <= 1 {
		return poissonArrivals
	}
	a := arrivals{k: min(c, maxErlang), z: 1 / float64(c)}
	switch router {
	case RoundRobin:
		a.z = 1 + (1/float64(c)-1)*decodeLifeEta(out.quantilePoints(24))
	case LeastOutstanding:
		a.k = 1
	}
	return a
}

// decodeLifeEta is E[min(L1, L2)] / E[L] of independent decode lives L =
// output - 1 over the equally weighted output lengths outs (1 when none
// decodes).
func decodeLifeEta(outs []float64) float64 {
	var num, den float64
	for _, a := range outs {
		den += a - 1
		for _, b := range outs {
			num += math.Min(a, b) - 1
		}
	}
	if den <= 0 {
		return 1
	}
	return num / float64(len(outs)) / den
}

// window is the distribution of the arrivals in a window that holds mean
// of them on average, starting at a random time.
func (a arrivals) window(mean float64) []float64 {
	if a.k == 1 {
		return poisson(mean)
	}
	k := a.k
	var out []float64
	for m, p := range poisson(float64(k) * mean) {
		// floor((J + m) / k) is q for k - r phases J, q + 1 for r.
		q, r := m/k, m%k
		for len(out) <= q+1 {
			out = append(out, 0)
		}
		out[q] += p * float64(k-r) / float64(k)
		out[q+1] += p * float64(r) / float64(k)
	}
	return trimZeros(out)
}

// others is the distribution of the other arrivals in a window that
// holds mean of them on average, about an arrival at its middle: those
// of each half, counted from the arrival (floor(M / k), M Poisson of mean
// k x mean / 2), summed.
func (a arrivals) others(mean float64) []float64 {
	if a.k == 1 {
		return poisson(mean)
	}
	var half []float64
	for m, p := range poisson(float64(a.k) * mean / 2) {
		q := m / a.k
		for len(half) <= q {
			half = append(half, 0)
		}
		half[q] += p
	}
	out := make([]float64, 2*len(half)-1)
	for i, p := range half {
		for j, q := range half {
			out[i+j] += p * q
		}
	}
	return out
}

func trimZeros(xs []float64) []float64 {
	for len(xs) > 1 && xs[len(xs)-1] == 0 {
		xs = xs[:len(xs)-1]
	}
	return xs
}
