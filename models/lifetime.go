package models

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// A LifetimeDist is a distribution of times to an event (a spot node's
// time to preemption, a zone's time until capacity is back): a Sampler
// with its cumulative distribution function.
type LifetimeDist interface {
	Sampler
	CDF(x float64) float64
	// String names the distribution and its parameters.
	String() string
}

// CDF of the exponential: 1 - exp(-x/mean).
func (e Exponential) CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return -math.Expm1(-x / e.MeanValue)
}

func (e Exponential) String() string { return fmt.Sprintf("exponential(mean %.4g)", e.MeanValue) }

// CDF of a constant: 0 below its value, 1 from it.
func (c Constant) CDF(x float64) float64 {
	if x < c.Value {
		return 0
	}
	return 1
}

func (c Constant) String() string { return fmt.Sprintf("constant(%.4g)", c.Value) }

// Weibull lifetimes with shape K and scale Lambda: a shape below 1 is a
// hazard that falls with age (many early losses and a long tail, as spot
// preemptions show), 1 the exponential, above 1 wear-out.
type Weibull struct{ Shape, Scale float64 }

func (w Weibull) Sample(r *rand.Rand) float64 {
	return distuv.Weibull{K: w.Shape, Lambda: w.Scale, Src: r}.Rand()
}

func (w Weibull) Mean() float64 { return w.Scale * math.Gamma(1+1/w.Shape) }

func (w Weibull) CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return -math.Expm1(-math.Pow(x/w.Scale, w.Shape))
}

func (w Weibull) String() string {
	return fmt.Sprintf("weibull(shape %.4g, scale %.4g)", w.Shape, w.Scale)
}

// HyperExponential is a mixture of exponentials: with probability
// Weights[i] a lifetime is exponential with mean Means[i]. Two phases fit
// a population of short-lived and long-lived nodes.
type HyperExponential struct{ Weights, Means []float64 }

func (h HyperExponential) Sample(r *rand.Rand) float64 {
	u, i := r.Float64(), 0
	for ; i < len(h.Weights)-1; i++ {
		if u < h.Weights[i] {
			break
		}
		u -= h.Weights[i]
	}
	return r.ExpFloat64() * h.Means[i]
}

func (h HyperExponential) Mean() float64 {
	m := 0.0
	for i, w := range h.Weights {
		m += w * h.Means[i]
	}
	return m
}

func (h HyperExponential) CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	c := 0.0
	for i, w := range h.Weights {
		c += w * -math.Expm1(-x/h.Means[i])
	}
	return c
}

func (h HyperExponential) String() string {
	s := "hyperexponential("
	for i, w := range h.Weights {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.3g x mean %.4g", w, h.Means[i])
	}
	return s + ")"
}

// A Lifetime is one observed time to an event; Censored when the
// observation ended first (a node still alive when its trace ends): it
// says the lifetime was at least Value.
type Lifetime struct {
	Value    float64
	Censored bool
}

// A LifetimeFit is a distribution fitted by maximum likelihood to
// observed lifetimes, with how well it fits.
type LifetimeFit struct {
	Dist LifetimeDist
	// LogLik is the log-likelihood of the observations (censored ones by
	// the survival function); Params the parameters fitted; AIC is
	// 2 x Params - 2 x LogLik, lower is better.
	LogLik float64
	Params int
	AIC    float64
	// KS is the Kolmogorov-Smirnov distance between the lifetimes'
	// Kaplan-Meier CDF and the fitted one, and KSP its p-value by
	// Kolmogorov's limiting distribution (with Stephens' correction for
	// the sample size). The parameters come from the same data, so the
	// p-value is conservative (Lilliefors): a fit it rejects is rejected.
	KS, KSP float64
}

// ErrNoLifetimes: a fit needs at least one completed lifetime.
var ErrNoLifetimes = errors.New("no completed lifetime to fit")

// FitLifetimes fits the exponential, the Weibull and a two-phase
// hyperexponential to the observations, best (lowest AIC) first.
func FitLifetimes(obs []Lifetime) ([]LifetimeFit, error) {
	e, err := FitExponential(obs)
	if err != nil {
		return nil, err
	}
	w, err := FitWeibull(obs)
	if err != nil {
		return nil, err
	}
	h, err := FitHyperExponential(obs)
	if err != nil {
		return nil, err
	}
	fits := []LifetimeFit{e, w, h}
	sort.SliceStable(fits, func(i, j int) bool { return fits[i].AIC < fits[j].AIC })
	return fits, nil
}

// check counts the completed lifetimes and refuses values that are not
// positive and finite.
func checkLifetimes(obs []Lifetime) (failures int, total float64, err error) {
	for i, o := range obs {
		if !(o.Value > 0) || math.IsInf(o.Value, 0) {
			return 0, 0, fmt.Errorf("lifetime %d is %g; a lifetime is positive and finite", i, o.Value)
		}
		if !o.Censored {
			failures++
		}
		total += o.Value
	}
	if failures == 0 {
		return 0, 0, ErrNoLifetimes
	}
	return failures, total, nil
}

func newFit(d LifetimeDist, logLik float64, params int, obs []Lifetime) LifetimeFit {
	f := LifetimeFit{Dist: d, LogLik: logLik, Params: params, AIC: 2*float64(params) - 2*logLik}
	f.KS, f.KSP = kaplanMeierKS(obs, d.CDF)
	return f
}

// kaplanMeierKS is the Kolmogorov-Smirnov distance between the
// Kaplan-Meier estimate of the lifetimes' CDF (which counts a censored
// lifetime as at risk until it was last seen) and cdf, just before and at
// each completed lifetime; without censoring, the plain empirical CDF.
// The p-value takes the completed lifetimes as the sample size, an
// approximation when many are censored.
func kaplanMeierKS(obs []Lifetime, cdf func(float64) float64) (d, p float64) {
	s := append([]Lifetime(nil), obs...)
	// Completed before censored at the same value, as Kaplan-Meier counts.
	sort.Slice(s, func(i, j int) bool {
		if s[i].Value != s[j].Value {
			return s[i].Value < s[j].Value
		}
		return !s[i].Censored && s[j].Censored
	})
	surv, atRisk, done := 1.0, len(s), 0
	for i := 0; i < len(s); {
		j, deaths := i, 0
		for ; j < len(s) && s[j].Value == s[i].Value; j++ {
			if !s[j].Censored {
				deaths++
			}
		}
		if deaths > 0 {
			f := cdf(s[i].Value)
			before := 1 - surv
			surv *= 1 - float64(deaths)/float64(atRisk)
			d = max(d, math.Abs(before-f), math.Abs(1-surv-f))
			done += deaths
		}
		atRisk -= j - i
		i = j
	}
	rn := math.Sqrt(float64(done))
	return d, kolmogorovQ((rn + 0.12 + 0.11/rn) * d)
}

// FitExponential is the exponential's maximum-likelihood fit: the mean is
// the total time observed over the lifetimes completed.
func FitExponential(obs []Lifetime) (LifetimeFit, error) {
	r, total, err := checkLifetimes(obs)
	if err != nil {
		return LifetimeFit{}, err
	}
	mean := total / float64(r)
	// log L = -r ln(mean) - total/mean = -r ln(mean) - r.
	return newFit(Exponential{MeanValue: mean}, -float64(r)*math.Log(mean)-float64(r), 1, obs), nil
}

// FitWeibull is the Weibull's maximum-likelihood fit with right
// censoring. With r lifetimes completed and S(k) = sum of x^k over all
// observations, the scale is (S(k)/r)^(1/k) and the shape solves
//
//	r/k + sum over completed of ln x - r S'(k)/S(k) = 0,
//
// whose left side falls with k: it is found by bisection. Values are
// divided by their largest first (the shape does not change; the scale
// is multiplied back).
func FitWeibull(obs []Lifetime) (LifetimeFit, error) {
	r, _, err := checkLifetimes(obs)
	if err != nil {
		return LifetimeFit{}, err
	}
	top := 0.0
	for _, o := range obs {
		top = max(top, o.Value)
	}
	rf := float64(r)
	sumLn := 0.0
	for _, o := range obs {
		if !o.Censored {
			sumLn += math.Log(o.Value / top)
		}
	}
	sums := func(k float64) (s, sd float64) {
		for _, o := range obs {
			x := o.Value / top
			xk := math.Pow(x, k)
			s += xk
			sd += xk * math.Log(x)
		}
		return s, sd
	}
	score := func(k float64) float64 {
		s, sd := sums(k)
		return rf/k + sumLn - rf*sd/s
	}
	lo, hi := 1e-3, 1e3
	if score(lo) <= 0 || score(hi) >= 0 {
		// Every completed lifetime equal and none censored longer: no
		// finite shape; the closest Weibull is the widest bracket's end.
		if score(hi) >= 0 {
			lo = hi
		} else {
			hi = lo
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		if score(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	k := (lo + hi) / 2
	s, _ := sums(k)
	scale := math.Pow(s/rf, 1/k) // in units of top
	// log L = r ln k - r k ln scale + (k-1) sum ln x - sum (x/scale)^k,
	// where sum (x/scale)^k = S(k)/scale^k = r.
	logLik := rf*math.Log(k) - rf*k*math.Log(scale) + (k-1)*sumLn - rf
	logLik -= rf * math.Log(top) // the density's unit: x = top x'
	return newFit(Weibull{Shape: k, Scale: scale * top}, logLik, 2, obs), nil
}

// FitHyperExponential fits a two-phase hyperexponential by expectation
// maximisation with right censoring (each observation's share of a phase
// by its density, or its survival when censored), from phases at a third
// of and three times the exponential fit's mean, until the
// log-likelihood gains less than 1e-9 (at most 5,000 rounds).
func FitHyperExponential(obs []Lifetime) (LifetimeFit, error) {
	r, total, err := checkLifetimes(obs)
	if err != nil {
		return LifetimeFit{}, err
	}
	mean := total / float64(r)
	p := [2]float64{0.5, 0.5}
	mu := [2]float64{mean / 3, mean * 3}
	logLik := math.Inf(-1)
	w := make([][2]float64, len(obs))
	for round := 0; round < 5000; round++ {
		ll := 0.0
		for j, o := range obs {
			var f [2]float64
			for i := range f {
				f[i] = p[i] * math.Exp(-o.Value/mu[i])
				if !o.Censored {
					f[i] /= mu[i]
				}
			}
			sum := f[0] + f[1]
			if sum == 0 || math.IsNaN(sum) {
				// Both phases give it no weight (far in the tail): the
				// longer phase takes it.
				sum, f = 1, [2]float64{0, 1}
				if mu[0] > mu[1] {
					f = [2]float64{1, 0}
				}
			} else {
				ll += math.Log(sum)
			}
			w[j] = [2]float64{f[0] / sum, f[1] / sum}
		}
		if round > 0 && ll-logLik < 1e-9 {
			break
		}
		logLik = ll
		for i := range p {
			var sw, swx, swd float64
			for j, o := range obs {
				sw += w[j][i]
				swx += w[j][i] * o.Value
				if !o.Censored {
					swd += w[j][i]
				}
			}
			p[i] = sw / float64(len(obs))
			if swd > 0 && swx > 0 {
				mu[i] = swx / swd
			}
		}
	}
	if mu[0] > mu[1] {
		p[0], p[1], mu[0], mu[1] = p[1], p[0], mu[1], mu[0]
	}
	h := HyperExponential{Weights: []float64{p[0], p[1]}, Means: []float64{mu[0], mu[1]}}
	return newFit(h, logLikelihood(h, obs), 3, obs), nil
}

// logLikelihood of the observations under h: the density of each
// completed lifetime, the survival function of each censored one.
func logLikelihood(h HyperExponential, obs []Lifetime) float64 {
	ll := 0.0
	for _, o := range obs {
		v := 0.0
		for i, w := range h.Weights {
			t := w * math.Exp(-o.Value/h.Means[i])
			if !o.Censored {
				t /= h.Means[i]
			}
			v += t
		}
		ll += math.Log(v)
	}
	return ll
}

// KolmogorovSmirnov is the largest distance between the empirical CDF of
// xs and cdf, and its p-value by Kolmogorov's limiting distribution at
// (sqrt(n) + 0.12 + 0.11/sqrt(n)) x D (Stephens, 1970).
func KolmogorovSmirnov(xs []float64, cdf func(float64) float64) (d, p float64) {
	n := len(xs)
	if n == 0 {
		return 0, 1
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	for i, x := range s {
		f := cdf(x)
		d = max(d, float64(i+1)/float64(n)-f, f-float64(i)/float64(n))
	}
	rn := math.Sqrt(float64(n))
	return d, kolmogorovQ((rn + 0.12 + 0.11/rn) * d)
}

// kolmogorovQ is P(K > l) for Kolmogorov's distribution:
// 2 sum over k >= 1 of (-1)^(k-1) exp(-2 k^2 l^2).
func kolmogorovQ(l float64) float64 {
	if l < 0.2 {
		return 1
	}
	sum, sign := 0.0, 1.0
	for k := 1; k <= 100; k++ {
		t := sign * 2 * math.Exp(-2*float64(k*k)*l*l)
		sum += t
		if math.Abs(t) < 1e-12 {
			break
		}
		sign = -sign
	}
	return min(max(sum, 0), 1)
}
