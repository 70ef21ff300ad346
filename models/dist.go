package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Sampler draws one value from a distribution using the caller's source.
type Sampler interface {
	Sample(r *rand.Rand) float64
	// Mean is the distribution's expectation (before any clamping).
	Mean() float64
}

// Constant always returns Value.
type Constant struct{ Value float64 }

func (c Constant) Sample(*rand.Rand) float64 { return c.Value }
func (c Constant) Mean() float64             { return c.Value }

// Exponential has the given mean (rate 1/mean).
type Exponential struct{ MeanValue float64 }

func (e Exponential) Sample(r *rand.Rand) float64 {
	return distuv.Exponential{Rate: 1 / e.MeanValue, Src: r}.Rand()
}
func (e Exponential) Mean() float64 { return e.MeanValue }

// LogNormal is parameterised by its median exp(mu) and shape sigma, the
// way job-duration fits are usually quoted.
type LogNormal struct{ Median, Sigma float64 }

func (l LogNormal) Sample(r *rand.Rand) float64 {
	return distuv.LogNormal{Mu: math.Log(l.Median), Sigma: l.Sigma, Src: r}.Rand()
}
func (l LogNormal) Mean() float64 { return l.Median * math.Exp(l.Sigma*l.Sigma/2) }

// Uniform is continuous on [Min, Max).
type Uniform struct{ Min, Max float64 }

func (u Uniform) Sample(r *rand.Rand) float64 {
	return distuv.Uniform{Min: u.Min, Max: u.Max, Src: r}.Rand()
}
func (u Uniform) Mean() float64 { return (u.Min + u.Max) / 2 }

// Pareto (type I) with scale Xm and shape Alpha: heavy-tailed durations.
type Pareto struct{ Xm, Alpha float64 }

func (p Pareto) Sample(r *rand.Rand) float64 {
	return distuv.Pareto{Xm: p.Xm, Alpha: p.Alpha, Src: r}.Rand()
}
func (p Pareto) Mean() float64 {
	if p.Alpha <= 1 {
		return math.Inf(1)
	}
	return p.Alpha * p.Xm / (p.Alpha - 1)
}

// Choice picks one of Values with probability proportional to Weights
// (equal weights when Weights is empty).
type Choice struct {
	values []float64
	cum    []float64
}

// NewChoice validates the values and weights and builds a Choice.
func NewChoice(values, weights []float64) (Choice, error) {
	if len(values) == 0 {
		return Choice{}, fmt.Errorf("choice needs at least one value")
	}
	if len(weights) != 0 && len(weights) != len(values) {
		return Choice{}, fmt.Errorf("choice has %d values but %d weights", len(values), len(weights))
	}
	cum := make([]float64, len(values))
	total := 0.0
	for i := range values {
		w := 1.0
		if len(weights) != 0 {
			w = weights[i]
		}
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return Choice{}, fmt.Errorf("choice weight %d is %g; weights must be finite and non-negative", i, w)
		}
		total += w
		cum[i] = total
	}
	if total <= 0 {
		return Choice{}, fmt.Errorf("choice weights sum to zero")
	}
	for i := range cum {
		cum[i] /= total
	}
	return Choice{values: append([]float64(nil), values...), cum: cum}, nil
}

func (c Choice) Sample(r *rand.Rand) float64 {
	u := r.Float64()
	i := sort.SearchFloat64s(c.cum, u)
	for i < len(c.cum)-1 && c.cum[i] <= u { // skip zero-weight entries at the boundary
		i++
	}
	return c.values[i]
}

func (c Choice) Mean() float64 {
	m, prev := 0.0, 0.0
	for i, v := range c.values {
		m += v * (c.cum[i] - prev)
		prev = c.cum[i]
	}
	return m
}

// Clamped limits another sampler to [Min, Max]; a zero bound is no bound.
type Clamped struct {
	S        Sampler
	Min, Max float64
}

func (c Clamped) Sample(r *rand.Rand) float64 {
	v := c.S.Sample(r)
	if c.Min != 0 && v < c.Min {
		v = c.Min
	}
	if c.Max != 0 && v > c.Max {
		v = c.Max
	}
	return v
}
func (c Clamped) Mean() float64 { return c.S.Mean() }

// NewStream returns the random source for one named stream of a run: every
// stream of a seeded run is independent and reproducible.
func NewStream(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}
