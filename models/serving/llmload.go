package serving

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// TokenDist is a distribution of a request's prompt or output length in
// tokens: Fixed (Mean), Uniform integers in [Min, Max], Normal (Mean,
// StdDev) rounded and clamped to [Min, Max] (BLIS's and vLLM's
// benchmarks' "gaussian" lengths), or Empirical: the lengths of a
// request trace (Values, ascending, each equally likely; Mean their
// mean, Min and Max the shortest and longest).
type TokenDist struct {
	Kind         TokenDistKind
	Mean, StdDev float64
	Min, Max     int
	Values       []int
}

// TokenDistKind names a TokenDist's shape.
type TokenDistKind int

const (
	Fixed TokenDistKind = iota
	Uniform
	Normal
	Empirical
)

// EmpiricalTokens is the empirical distribution of lengths (in any
// order; they are copied and sorted).
func EmpiricalTokens(lengths []int) TokenDist {
	v := slices.Clone(lengths)
	slices.Sort(v)
	d := TokenDist{Kind: Empirical, Values: v}
	if len(v) > 0 {
		sum := 0.0
		for _, x := range v {
			sum += float64(x)
		}
		d.Mean, d.Min, d.Max = sum/float64(len(v)), v[0], v[len(v)-1]
	}
	return d
}

// MaxTokens bounds a request's prompt or output.
const MaxTokens = 10_000_000

// Check refuses a distribution of no tokens, negative ones or above
// MaxTokens.
func (d TokenDist) Check() error {
	switch d.Kind {
	case Fixed:
		if !(d.Mean >= 1 && d.Mean <= MaxTokens) || d.Mean != math.Trunc(d.Mean) {
			return fmt.Errorf("mean: %g tokens: a fixed length is a whole number from 1 to %d", d.Mean, MaxTokens)
		}
	case Uniform, Normal:
		if d.Min < 1 || d.Max > MaxTokens || d.Min > d.Max {
			return fmt.Errorf("min: %d to max %d tokens: lengths are from 1 to %d, min at most max", d.Min, d.Max, MaxTokens)
		}
		if d.Kind == Normal && (!(d.Mean > 0 && d.Mean <= MaxTokens) || !(d.StdDev >= 0 && d.StdDev <= MaxTokens)) {
			return fmt.Errorf("mean: %g and stdDev %g tokens: the mean is positive and the deviation not negative", d.Mean, d.StdDev)
		}
	case Empirical:
		if len(d.Values) == 0 {
			return fmt.Errorf("values: an empirical distribution of no lengths")
		}
		if !slices.IsSorted(d.Values) || d.Values[0] < 1 || d.Values[len(d.Values)-1] > MaxTokens {
			return fmt.Errorf("values: empirical lengths are from 1 to %d tokens, in ascending order", MaxTokens)
		}
	default:
		return fmt.Errorf("kind %d is not a token distribution", d.Kind)
	}
	return nil
}

// Longest is the most tokens the distribution gives.
func (d TokenDist) Longest() int {
	if d.Kind == Fixed {
		return int(d.Mean)
	}
	return d.Max
}

// Sample draws one length.
func (d TokenDist) Sample(r *rand.Rand) int {
	switch d.Kind {
	case Uniform:
		return d.Min + r.IntN(d.Max-d.Min+1)
	case Normal:
		x := int(math.Round(d.Mean + d.StdDev*r.NormFloat64()))
		return min(max(x, d.Min), d.Max)
	case Empirical:
		return d.Values[r.IntN(len(d.Values))]
	}
	return int(d.Mean)
}

// PoissonLLMRequests draws n requests arriving as a Poisson process of
// rate (per second) with prompt and output lengths from in and out.
func PoissonLLMRequests(r *rand.Rand, rate float64, n int, in, out TokenDist) []LLMRequest {
	reqs := make([]LLMRequest, n)
	t := 0.0
	for i := range reqs {
		t += r.ExpFloat64() / rate * 1e3
		reqs[i] = LLMRequest{ArrivalMs: t, Input: in.Sample(r), Output: out.Sample(r)}
	}
	return reqs
}
