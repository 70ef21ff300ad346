package models

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Three lifetimes of 1, 2 and 3 h and a node still alive after 4 h: the
// exponential's fit is 10 h observed over 3 preemptions, a mean of 10/3 h;
// log L = -3 ln(10/3) - 3 = -6.611918. Kaplan-Meier, the censored node at
// risk until 4 h: the CDF steps from 0 to 1/4 at 1 h (1 of 4 at risk), to
// 1/2 at 2 h (1 of 3), to 3/4 at 3 h (1 of 2). The fit's CDF
// 1 - exp(-0.3 x) at 1, 2 and 3 h is 0.259182, 0.451188 and 0.593430; the
// largest gap is just before 1 h: 0.259182 - 0.
func TestFitExponentialByHand(t *testing.T) {
	fit, err := FitExponential([]Lifetime{{1, false}, {2, false}, {3, false}, {4, true}})
	require.NoError(t, err)
	require.InDelta(t, 10.0/3, fit.Dist.Mean(), 1e-12)
	require.InDelta(t, -6.611918, fit.LogLik, 1e-6)
	require.InDelta(t, 2-2*-6.611918, fit.AIC, 1e-5)
	require.InDelta(t, 0.259182, fit.KS, 1e-6)
}

func TestLifetimeMeans(t *testing.T) {
	require.InDelta(t, 2.0, Weibull{Shape: 1, Scale: 2}.Mean(), 1e-12)   // the exponential
	require.InDelta(t, 2.0, Weibull{Shape: 0.5, Scale: 1}.Mean(), 1e-12) // Gamma(3) = 2
	require.InDelta(t, 0.7*0.5+0.3*6, HyperExponential{Weights: []float64{0.7, 0.3}, Means: []float64{0.5, 6}}.Mean(), 1e-12)
	// CDFs at the scale: 1 - 1/e for any Weibull shape.
	require.InDelta(t, 1-1/math.E, Weibull{Shape: 0.63, Scale: 1.8}.CDF(1.8), 1e-12)
}

// Kolmogorov's distribution: the 5% and 1% critical values of the
// published tables, 1.3581 and 1.6276.
func TestKolmogorovQ(t *testing.T) {
	require.InDelta(t, 0.05, kolmogorovQ(1.3581), 1e-4)
	require.InDelta(t, 0.01, kolmogorovQ(1.6276), 1e-4)
	require.Equal(t, 1.0, kolmogorovQ(0.1))
}

func sample(d LifetimeDist, n int, seed uint64, censorAt float64) []Lifetime {
	r := NewStream(seed, 1)
	out := make([]Lifetime, n)
	for i := range out {
		x := d.Sample(r)
		out[i] = Lifetime{Value: x}
		if censorAt > 0 && x > censorAt {
			out[i] = Lifetime{Value: censorAt, Censored: true}
		}
	}
	return out
}

// 20,000 draws from a Weibull of shape 0.63 (the shape published spot
// traces show) and scale 1.8 h: the fit's standard errors are about
// 0.78 k / sqrt(n) = 0.0035 for the shape and 1.1 scale / (k sqrt(n)) =
// 1.2% for the scale, so 0.02 and 5% are wide of chance. The
// exponential at the same data is rejected outright; the Weibull is not.
// With every lifetime past 5 h censored (about 13% of them), the fit
// still finds the shape.
func TestFitWeibullRecoversTheShape(t *testing.T) {
	truth := Weibull{Shape: 0.63, Scale: 1.8}
	for _, censor := range []float64{0, 5} {
		obs := sample(truth, 20000, 7, censor)
		fit, err := FitWeibull(obs)
		require.NoError(t, err)
		w := fit.Dist.(Weibull)
		require.InDelta(t, 0.63, w.Shape, 0.02, "censored at %g", censor)
		require.InEpsilon(t, 1.8, w.Scale, 0.05, "censored at %g", censor)
		require.Greater(t, fit.KSP, 0.01, "censored at %g", censor)
		exp, err := FitExponential(obs)
		require.NoError(t, err)
		require.Less(t, exp.KSP, 1e-6, "censored at %g", censor)
		require.Less(t, fit.AIC, exp.AIC)
	}
}

// Exponential data fit a Weibull of shape 1 and pass the test.
func TestFitWeibullOnExponentialData(t *testing.T) {
	obs := sample(Exponential{MeanValue: 2.5}, 20000, 11, 0)
	fit, err := FitWeibull(obs)
	require.NoError(t, err)
	require.InDelta(t, 1.0, fit.Dist.(Weibull).Shape, 0.03)
	require.InEpsilon(t, 2.5, fit.Dist.(Weibull).Scale, 0.03)
	exp, err := FitExponential(obs)
	require.NoError(t, err)
	require.Greater(t, exp.KSP, 0.01)
}

// A population of short-lived (70%, mean 0.5 h) and long-lived (30%,
// mean 6 h) nodes: expectation maximisation finds both phases, and the
// hyperexponential ranks first by AIC.
func TestFitHyperExponential(t *testing.T) {
	truth := HyperExponential{Weights: []float64{0.7, 0.3}, Means: []float64{0.5, 6}}
	obs := sample(truth, 20000, 3, 0)
	fits, err := FitLifetimes(obs)
	require.NoError(t, err)
	h, ok := fits[0].Dist.(HyperExponential)
	require.True(t, ok, "best fit %s", fits[0].Dist)
	require.InDelta(t, 0.7, h.Weights[0], 0.03)
	require.InEpsilon(t, 0.5, h.Means[0], 0.08)
	require.InEpsilon(t, 6, h.Means[1], 0.08)
	require.Greater(t, fits[0].KSP, 0.01)
}

func TestFitLifetimesRefuses(t *testing.T) {
	_, err := FitLifetimes([]Lifetime{{2, true}, {3, true}})
	require.ErrorIs(t, err, ErrNoLifetimes)
	_, err = FitWeibull([]Lifetime{{0, false}})
	require.ErrorContains(t, err, "lifetime 0 is 0")
	_, err = FitExponential([]Lifetime{{math.Inf(1), false}})
	require.ErrorContains(t, err, "positive and finite")
}

// Without censoring the Kaplan-Meier distance is the plain
// Kolmogorov-Smirnov one.
func TestKaplanMeierKSWithoutCensoring(t *testing.T) {
	obs := sample(Weibull{Shape: 0.8, Scale: 2}, 500, 5, 0)
	xs := make([]float64, len(obs))
	for i, o := range obs {
		xs[i] = o.Value
	}
	cdf := Exponential{MeanValue: 2}.CDF
	d1, p1 := KolmogorovSmirnov(xs, cdf)
	d2, p2 := kaplanMeierKS(obs, cdf)
	require.InDelta(t, d1, d2, 1e-12)
	require.InDelta(t, p1, p2, 1e-12)
}
