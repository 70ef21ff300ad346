package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// A SpotPreset is a spot supply process measured from public traces: each
// node's time to preemption, how long the capacity stays gone after one,
// and the share of a zone's other nodes a reclaim takes with it.
type SpotPreset struct {
	// Lifetime and Outage are in hours.
	Lifetime, Outage LifetimeDist
	// Wave is the chance that each other node of the pool (one zone) is
	// reclaimed together with a node whose lifetime ended.
	Wave float64
	// Source says where the figures come from, for the report.
	Source string
}

// The measured preset's parameters: maximum-likelihood fits (with right
// censoring; FitHyperExponential) to the four AWS p3.2xlarge (1 x V100)
// preemption traces of SkyPilot's spot-traces repository collected from
// 2023-04-22 in us-east-1c, us-east-1f, us-west-2b and us-west-2c (one
// instance kept running and relaunched, 32 s ticks, 177 h each; commit
// 221da1a of github.com/skypilot-org/spot-traces). Pooled over the four
// zones: 204 lifetimes (202 ended by a preemption, 431 node-hours) and
// 202 outages (200 ended, 275 h). By AIC the two-phase hyperexponential
// beats the Weibull (lifetimes 583 against 606, outages 380 against 427)
// and both beat the exponential (712, 530), which a Kolmogorov-Smirnov
// test rejects (p < 1e-12); the hyperexponential is not rejected
// (p 0.16 and 0.45).
//
// The wave is from the repository's three 4-instance preemption traces
// of 2023-08-03 (us-east-1f, us-east-2a, us-west-2c, 5 min ticks): of
// 315 ticks that lost nodes while more than one was held, the nodes lost
// beyond the first over the nodes that could have been: 0.30 (0.12 to
// 0.40 by zone).
var (
	MeasuredV100Lifetime = HyperExponential{Weights: []float64{0.629, 0.371}, Means: []float64{0.4354, 5.093}}
	MeasuredV100Outage   = HyperExponential{Weights: []float64{0.855, 0.145}, Means: []float64{0.513, 6.651}}
)

// MeasuredWave is the measured reclaim wave (see MeasuredV100Lifetime).
const MeasuredWave = 0.30

// MeasuredSpotSource names the measurements.
const MeasuredSpotSource = "SkyPilot spot-traces (github.com/skypilot-org/spot-traces, Wu et al., NSDI '24): AWS p3.2xlarge V100 preemption traces, 4 zones from 2023-04-22, and 4-instance traces of 2023-08-03 for the waves"

// MeasuredSpotPreset is the measured supply process for a GPU model's
// spot nodes. V100 is the only GPU class with public preemption traces;
// every other GPU model gets the V100 measurement, and the assumption
// says so.
func MeasuredSpotPreset(gpuModel string) (SpotPreset, string) {
	p := SpotPreset{Lifetime: MeasuredV100Lifetime, Outage: MeasuredV100Outage, Wave: MeasuredWave, Source: MeasuredSpotSource}
	of := "measured on V100"
	if gpuModel != "" && gpuModel != "V100" {
		of = fmt.Sprintf("measured on V100 (no public preemption trace of %s; the nearest measurement)", gpuModel)
	}
	why := fmt.Sprintf("spot supply %s: time to preemption %s (mean %.2f h), capacity back after %s (mean %.2f h), each other node of the pool reclaimed with one at %.0f%%; %s",
		of, p.Lifetime, p.Lifetime.Mean(), p.Outage, p.Outage.Mean(), p.Wave*100, p.Source)
	return p, why
}

// Empirical is the distribution of observed values: a draw is one of
// them, uniformly.
type Empirical struct {
	// Values, sorted.
	Values []float64
}

// NewEmpirical is the empirical distribution of xs (at least one, each
// positive and finite).
func NewEmpirical(xs []float64) (Empirical, error) {
	if len(xs) == 0 {
		return Empirical{}, ErrNoLifetimes
	}
	v := append([]float64(nil), xs...)
	for i, x := range v {
		if !(x > 0) || math.IsInf(x, 0) {
			return Empirical{}, fmt.Errorf("value %d is %g; a lifetime is positive and finite", i, x)
		}
	}
	sort.Float64s(v)
	return Empirical{Values: v}, nil
}

func (e Empirical) Sample(r *rand.Rand) float64 { return e.Values[r.IntN(len(e.Values))] }

func (e Empirical) Mean() float64 {
	s := 0.0
	for _, x := range e.Values {
		s += x
	}
	return s / float64(len(e.Values))
}

// CDF is the share of the values at or below x.
func (e Empirical) CDF(x float64) float64 {
	return float64(sort.SearchFloat64s(e.Values, math.Nextafter(x, math.Inf(1)))) / float64(len(e.Values))
}

func (e Empirical) String() string {
	return fmt.Sprintf("empirical(%d values, mean %.4g)", len(e.Values), e.Mean())
}
