package serving

import (
	"cmp"
	"errors"
	"math"
	"slices"
)

// The fast model of an LLM replica: its steady state at a request rate,
// computed from the engine's step time without following requests, so
// one evaluation costs the same whatever the rate (the cluster run asks
// it once per interval and replica count).
//
// Why this shape. At a steady rate lambda the engine's state is, step
// after step, the requests decoding and the prompts that arrived during
// the last step. By Little's law the decoding requests number D =
// lambda x E[output - 1] x s, s the mean step, their mean context the
// prompt plus half the output (output-weighted). The prompts a step
// prefills are those that arrived while the step before it ran: Poisson
// with mean lambda x s. So s is the fixed point of s = E_k[StepTime(k
// prompts, D decodes)], k Poisson(lambda s), which a few damped
// iterations find; none exists (s grows without bound), or the decodes
// pass max_num_seqs or the cache's blocks, above the replica's capacity.
// A request's TPOT is the mean of its output's steps: the mean step,
// with the step-to-step variance over its output - 1 steps and the slower
// drift of D; its TTFT is the rest of the step it arrives in (length-
// biased) and the step(s) that prefill its own prompt beside the others
// that arrived with it. Percentiles come from a fixed grid over the
// prompt and output lengths and the other arrivals, not from samples, so
// the model is deterministic and smooth in the rate. One evaluation is
// about 10 ms (go test -bench SteadyLLM): cheap beside simulating the
// requests of an interval (a minute at 1,000 requests/s is 60,000), but a
// cluster run should keep it per (rate, replicas) rather than call it per
// interval. It is held to the exact model (TestSteadyLLMAgainstExact)
// within 5% on mean and p95 TTFT and TPOT up to 63-80% of a replica's
// capacity; nearer capacity it is optimistic (it does not model requests
// waiting for a seat among max_num_seqs), and above it says so.

// LLMSteady is one replica's steady state at a rate.
type LLMSteady struct {
	// StepMs is the mean step; Decoding the mean requests decoding.
	StepMs, Decoding float64
	// TTFT and TPOT mean and p95, ms; and p50 and p99 (held to the exact
	// model, p99 less tightly: see TestSteadyLLMAgainstExact).
	TTFTMeanMs, TTFTP95Ms, TPOTMeanMs, TPOTP95Ms float64
	TTFTP50Ms, TTFTP99Ms, TPOTP50Ms, TPOTP99Ms   float64
	// KVBlocks is the mean blocks held.
	KVBlocks float64
}

// ErrLLMOverload is a rate above what the replica sustains.
var ErrLLMOverload = errors.New("the rate is above the replica's capacity")

// quantilePoints are n equally weighted points of a length distribution.
func (d TokenDist) quantilePoints(n int) []float64 {
	switch d.Kind {
	case Fixed:
		return []float64{d.Mean}
	case Uniform:
		pts := make([]float64, n)
		for i := range pts {
			pts[i] = math.Round(float64(d.Min) + (float64(i)+0.5)/float64(n)*float64(d.Max-d.Min))
		}
		return pts
	}
	pts := make([]float64, n)
	for i := range pts {
		z := math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/float64(n)-1)
		pts[i] = math.Min(math.Max(math.Round(d.Mean+d.StdDev*z), float64(d.Min)), float64(d.Max))
	}
	return pts
}

func meanOf(xs []float64, f func(float64) float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += f(x)
	}
	return s / float64(len(xs))
}

// poisson is P(K = k) for k = 0.. until the tail is below 1e-6.
func poisson(mean float64) []float64 {
	p := math.Exp(-mean)
	out := []float64{p}
	cum := p
	for k := 1; cum < 1-1e-6 && k < 1000; k++ {
		p *= mean / float64(k)
		out = append(out, p)
		cum += p
	}
	return out
}

// SteadyLLM is the fast model of one replica at rate requests a second.
func SteadyLLM(cfg LLMConfig, rate float64, in, out TokenDist) (LLMSteady, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Check(); err != nil {
		return LLMSteady{}, err
	}
	ins, outs := in.quantilePoints(16), out.quantilePoints(24)
	eIn := meanOf(ins, func(x float64) float64 { return x })
	eDec := meanOf(outs, func(x float64) float64 { return x - 1 })
	// Mean context of a decoding request: its prompt and, weighted by
	// its decode steps, half its output.
	ctx := eIn + meanOf(outs, func(x float64) float64 { return (x - 1) * x / 2 })/math.Max(eDec, 1e-9)
	lam := rate / 1e3 // per ms
	if lam <= 0 {
		return LLMSteady{}, nil
	}
	budget := float64(cfg.MaxNumBatchedTokens)
	// stepMs is a step of prompts of total tokens p (as chunks of eIn)
	// and d decodes (d fractional: interpolated).
	var st Step
	var decodes []int // every decode of the mean context
	stepMs := func(prompts []float64, d float64) float64 {
		lo := math.Floor(d)
		one := func(n int) float64 {
			st.Prefill = st.Prefill[:0]
			room := budget - float64(n)
			for _, p := range prompts {
				t := math.Min(p, room)
				if t < 1 {
					break
				}
				st.Prefill = append(st.Prefill, Chunk{Tokens: int(t)})
				room -= t
			}
			for len(decodes) < n {
				decodes = append(decodes, int(ctx))
			}
			st.Decode = decodes[:n]
			return cfg.Engine.StepTime(st)*1e3 + cfg.StepOverheadMs
		}
		a := one(int(lo))
		if d == lo {
			return a
		}
		return a + (d-lo)*(one(int(lo)+1)-a)
	}
	prompts := func(k int) []float64 {
		ps := make([]float64, k)
		for i := range ps {
			ps[i] = eIn
		}
		return ps
	}
	// kStep is a step of k prompts: one of each length of the grid with
	// k - 1 of the mean length (the step is convex in its prompts' sizes:
	// each kernel is the larger of its bytes and its FLOPs), averaged.
	kStep := func(k int, d float64) float64 {
		if k == 0 {
			return stepMs(nil, d)
		}
		ps := prompts(k)
		return meanOf(ins, func(own float64) float64 { ps[0] = own; return stepMs(ps, d) })
	}
	// D drifts: the decoding requests are an M/G/infinity count (Poisson,
	// variance d) whose lives stretch when it is high (the steps slow):
	// the feedback g = lambda x E[output - 1] x dStep/dD amplifies the
	// drift by 1/(1 - g). It is slow: its correlation time is the
	// decode's mean residual life, tau = E[L^2] / 2E[L] steps.
	var pk []float64
	// A longer step also gathers more prompts for the next (lambda x
	// dStep/dk more), which lengthens it again: dStep/dD in full is
	// the step's own slope over 1 - lambda x dStep/dk.
	drift := func(d float64) (dsdD, varD float64) {
		var dsdk float64
		for k, p := range pk {
			x := kStep(k, d)
			dsdD += p * (kStep(k, d+1) - x)
			dsdk += p * (kStep(k+1, d) - x)
		}
		dsdD /= 1 - math.Min(lam*dsdk, 0.9)
		g := math.Min(lam*eDec*dsdD, 0.9)
		return dsdD, d / ((1 - g) * (1 - g))
	}
	// levels are the decoding count's levels and weights: the Poisson
	// distribution itself while it is small, else four of a normal of
	// the drift's variance.
	type level struct{ w, d float64 }
	levels := func(d, varD float64) []level {
		if d < 30 {
			var ls []level
			for n, p := range poisson(d) {
				if p > 1e-4 {
					ls = append(ls, level{p, float64(n)})
				}
			}
			return ls
		}
		sd := math.Sqrt(varD)
		return []level{{0.25, math.Max(d-1.5*sd, 0)}, {0.25, math.Max(d-0.5*sd, 0)}, {0.25, d + 0.5*sd}, {0.25, d + 1.5*sd}}
	}
	// The fixed point: the mean step over the prompts a step holds and
	// the levels of D.
	s := stepMs(prompts(1), 0)
	blocksPerReq := (ctx + float64(cfg.BlockSize)/2) / float64(cfg.BlockSize)
	// tpot is the mean step weighted by the requests decoding in it.
	var mean, second, tpot, dsum float64
	for it := 0; ; it++ {
		d := lam * eDec * s
		if d > float64(cfg.MaxNumSeqs) || d*blocksPerReq > float64(cfg.Blocks()) || lam*s*eIn > budget-d || it > 200 {
			return LLMSteady{}, ErrLLMOverload
		}
		pk = poisson(lam * s)
		_, varD := drift(d)
		// The cache must hold the decoding requests' drift too (two
		// deviations above the mean): beyond, requests queue for blocks
		// and are preempted, which this model does not follow.
		if (d+2*math.Sqrt(varD))*blocksPerReq > float64(cfg.Blocks()) {
			return LLMSteady{}, ErrLLMOverload
		}
		// An engine with nothing to run does not step: the mean is over
		// the steps that run (busy their share).
		mean, second, tpot, dsum = 0, 0, 0, 0
		busy := 0.0
		for _, l := range levels(d, varD) {
			for k, p := range pk {
				x := kStep(k, l.d)
				if x == 0 {
					continue
				}
				busy += l.w * p
				mean += l.w * p * x
				second += l.w * p * x * x
				tpot += l.w * p * x * l.d
				dsum += l.w * p * l.d
			}
		}
		mean, second = mean/busy, second/busy
		if math.Abs(mean-s) < 1e-5*s {
			s = mean
			break
		}
		s = 0.5*s + 0.5*mean
		if s > 1e7 {
			return LLMSteady{}, ErrLLMOverload
		}
	}
	d := lam * eDec * s
	tpotMean := s
	if dsum > 0 {
		tpotMean = tpot / dsum
	}
	res := LLMSteady{StepMs: s, Decoding: d, KVBlocks: d * blocksPerReq, TPOTMeanMs: tpotMean}
	dsdD, varD := drift(d)
	// The step-to-step variance, less the drift's (counted apart).
	varStep := math.Max(second-s*s-dsdD*dsdD*varD, 0)
	// The drift reverts to the mean 1/(1 - g) slower than the
	// residual life.
	tau := meanOf(outs, func(x float64) float64 { return (x - 1) * (x - 1) }) / math.Max(2*eDec, 1e-9)
	tau /= 1 - math.Min(lam*eDec*dsdD, 0.9)

	// TPOT: per request the mean of its out - 1 steps: the step-to-step
	// variance averages over them, the drift over its life against tau;
	// its p95 solves mean over outputs of Phi((x - mean) / sd) = 0.95.
	var sds []float64
	for _, o := range outs {
		if o > 1 {
			// The mean of an Ornstein-Uhlenbeck drift over x = L/tau
			// of its correlation times keeps 2(x - 1 + e^-x)/x^2 of its
			// variance.
			x := (o - 1) / math.Max(tau, 1e-9)
			keep := 1.0
			if x > 1e-6 {
				keep = 2 * (x - 1 + math.Exp(-x)) / (x * x)
			}
			sds = append(sds, math.Sqrt(varStep/(o-1)+dsdD*dsdD*varD*keep))
		}
	}
	res.TPOTP50Ms, res.TPOTP95Ms, res.TPOTP99Ms = res.TPOTMeanMs, res.TPOTMeanMs, res.TPOTMeanMs
	if len(sds) > 0 {
		cdf := func(x float64) float64 {
			return meanOf(sds, func(sd float64) float64 {
				return 0.5 * math.Erfc(-(x-res.TPOTMeanMs)/(sd*math.Sqrt2))
			})
		}
		q := func(p float64) float64 {
			w := 6*slices.Max(sds) + 1e-9
			lo, hi := res.TPOTMeanMs-w, res.TPOTMeanMs+w
			for range 60 {
				if mid := (lo + hi) / 2; cdf(mid) < p {
					lo = mid
				} else {
					hi = mid
				}
			}
			return (lo + hi) / 2
		}
		res.TPOTP50Ms, res.TPOTP95Ms, res.TPOTP99Ms = q(0.50), q(0.95), q(0.99)
	}

	// TTFT: the rest of the step arrived in (length-biased: a step drawn
	// in proportion to its length, the arrival uniform in it) and the
	// steps of its own prompt beside the j others that arrived in the
	// same step, at four levels of the drifting D.
	// The prompts of a step vary in size too: k of them total k x E[in]
	// give or take sqrt(k) x their deviation (two levels, -1 and +1).
	sdIn := math.Sqrt(meanOf(ins, func(x float64) float64 { return (x - eIn) * (x - eIn) }))
	sized := func(ps []float64, from int, z float64) {
		k := float64(len(ps) - from)
		for i := from; i < len(ps); i++ {
			ps[i] = math.Max(eIn+z*sdIn/math.Sqrt(k), 1)
		}
	}
	var tt []wx
	for _, l := range levels(d, varD) {
		dz := l.d
		for k, p := range pk {
			for _, za := range []float64{-1, 1} {
				arr := prompts(k)
				sized(arr, 0, za)
				x := stepMs(arr, dz) // the step it arrives in
				// Arriving at an idle engine (x = 0, the share of
				// states with nothing to run) it starts at once.
				w := l.w * p * x / mean / 2
				if x == 0 {
					w = l.w * p / 2
				}
				if w < 1e-9 {
					continue
				}
				for j, q := range poisson(lam * x) {
					if q < 1e-4 {
						continue
					}
					for _, zo := range []float64{-1, 1} {
						ps := prompts(j + 1)
						sized(ps, 1, zo)
						others := 0.0
						for _, o := range ps[1:] {
							others += o
						}
						for _, own := range ins {
							ps[0] = own
							var ttft float64
							for left := own; ; {
								ttft += stepMs(ps, dz)
								left -= math.Max(budget-dz-others, 1)
								if left <= 0 {
									break
								}
								ps[0] = left
							}
							for _, u := range []float64{0.25, 0.75} {
								tt = append(tt, wx{w * q / float64(len(ins)) / 4, u*x + ttft})
							}
						}
					}
				}
			}
		}
	}
	sum, tot := 0.0, 0.0
	for _, v := range tt {
		sum += v.w * v.x
		tot += v.w
	}
	res.TTFTMeanMs = sum / tot
	res.TTFTP50Ms = weightedQuantile(tt, 0.50)
	res.TTFTP95Ms = weightedQuantile(tt, 0.95)
	res.TTFTP99Ms = weightedQuantile(tt, 0.99)
	return res, nil
}

// wx is a weighted value.
type wx struct{ w, x float64 }

// weightedQuantile is the p-quantile of weighted points (sorted in place).
func weightedQuantile(xs []wx, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.SortFunc(xs, func(a, b wx) int { return cmp.Compare(a.x, b.x) })
	tot := 0.0
	for _, v := range xs {
		tot += v.w
	}
	cum := 0.0
	for _, v := range xs {
		cum += v.w
		if cum >= p*tot {
			return v.x
		}
	}
	return xs[len(xs)-1].x
}
