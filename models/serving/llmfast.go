package serving

import (
	"cmp"
	"errors"
	"fmt"
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
// within 5% on mean and p95 TTFT, TPOT and E2E up to 63-80% of a replica's
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
	// KVBlocks is the mean blocks held by the requests; PrefixBlocks
	// those the cached prefixes hold (LLMConfig.PrefixCacheBlocks: every
	// prefix; behind the prefix-aware picker a replica's own, averaged
	// over the replicas).
	KVBlocks, PrefixBlocks float64
	// End-to-end latency, arrival to last token, ms: TTFT, then the
	// output's other tokens at the request's TPOT (e2e.go's mixture over
	// output lengths), then the API server's finishing time.
	E2EMeanMs, E2EP50Ms, E2EP95Ms, E2EP99Ms float64
	// PreemptionsPer1k is the recompute preemptions per 1,000 requests
	// when the decoding requests' drift reaches the cache's blocks
	// (llmpreempt.go); PreemptionDelayMs the mean latency they add to a
	// request (every request's share of the preempted ones' wait and
	// recompute), not counted in TTFT, TPOT or E2E.
	PreemptionsPer1k, PreemptionDelayMs float64
	// PrefillTTFTMeanMs and KVTransferMeanMs are a disaggregated
	// replica's (SteadyLLMDisagg): the mean TTFT of its prefill pool
	// (queue and prefill) and of the KV cache's transfer; 0 otherwise.
	PrefillTTFTMeanMs, KVTransferMeanMs float64
	// TTFTPoints, TPOTPoints and E2EPoints are the distributions'
	// quantiles at (i + 0.5) / LLMQuantilePoints, i =
	// 0..LLMQuantilePoints-1: equally weighted points, so a run can mix
	// the distributions of many intervals into one histogram.
	TTFTPoints, TPOTPoints, E2EPoints []float64
}

// LLMQuantilePoints is how many quantiles LLMSteady gives of each
// distribution.
const LLMQuantilePoints = 100

// ErrLLMOverload is a rate above what the replica sustains.
var ErrLLMOverload = errors.New("the rate is above the replica's capacity")

// quantilePoints are n equally weighted points of a length distribution
// (an empirical one's: the means of its n equal shares, shortest to
// longest, so their mean is the lengths' own).
func (d TokenDist) quantilePoints(n int) []float64 {
	switch d.Kind {
	case Fixed:
		return []float64{d.Mean}
	case Empirical:
		return shareMeans(d.Values, n)
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

// shareMeans splits the ascending values v into n equal shares of
// weight (a value on a boundary split between the two shares) and gives
// each share's mean; fewer values than n give the values themselves.
func shareMeans(v []int, n int) []float64 {
	m := len(v)
	if m <= n {
		pts := make([]float64, m)
		for i, x := range v {
			pts[i] = float64(x)
		}
		return pts
	}
	// Share i is [i m/n, (i+1) m/n) of the values, in units of one value.
	pts := make([]float64, n)
	w := float64(m) / float64(n)
	for i := range pts {
		a, b := float64(i)*w, float64(i+1)*w
		sum := 0.0
		for j := int(a); j < m && float64(j) < b; j++ {
			lo, hi := math.Max(a, float64(j)), math.Min(b, float64(j+1))
			sum += float64(v[j]) * (hi - lo)
		}
		pts[i] = sum / w
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

// SteadyLLM is the fast model of one replica at rate requests a second,
// its requests arriving as a Poisson process (a Kubernetes Service
// spreading a Poisson stream at random).
func SteadyLLM(cfg LLMConfig, rate float64, in, out TokenDist) (LLMSteady, error) {
	return steadyLLM(cfg, rate, in, out, poissonArrivals, kvDriftZ)
}

// SteadyLLMRouted is SteadyLLM for one of replicas identical replicas
// behind router, rate the requests a second each receives of the
// service's Poisson stream (llmroutefast.go says how each router changes
// a replica's arrivals and its decoding count). Behind PrefixAware with a
// prefix cache it is the service's replicas mixed, each serving its own
// prefixes (llmprefixroute.go), or ErrPrefixSpill.
func SteadyLLMRouted(cfg LLMConfig, rate float64, replicas int, router Router, in, out TokenDist) (LLMSteady, error) {
	if replicas < 1 {
		return LLMSteady{}, fmt.Errorf("replicas: %d is below 1", replicas)
	}
	if router == PrefixAware && cfg.PrefixHitTokens > 0 && replicas > 1 {
		// The picker keeps each prefix where it sent it (llmprefixroute.go).
		return steadyPrefixAware(cfg, rate, replicas, in, out)
	}
	return steadyLLM(cfg, rate, in, out, routedArrivals(router, replicas, out), kvDriftZ)
}

// steadyLLM is SteadyLLM with the arrivals arr, overloaded where the
// cache does not hold the decoding requests' drift to kvZ deviations.
func steadyLLM(cfg LLMConfig, rate float64, in, out TokenDist, arr arrivals, kvZ float64) (LLMSteady, error) {
	res, _, err := steadyLLMParts(cfg, rate, in, out, arr, kvZ, colocated)
	return res, err
}

// steadyParts are what steadyLLMParts gives besides the steady state:
// a request's TPOT deviation by its output length, and (prefilled) the
// mean wait of an arriving request for the step in progress to end.
type steadyParts struct {
	sd      func(o float64) float64
	residMs float64
}

// steadyMode is what a replica runs: prefills and decodes (colocated),
// or one pool's part of a disaggregated service (llmdisagg.go).
type steadyMode int

const (
	colocated steadyMode = iota
	// decodePool replicas' requests arrive with their prompts computed
	// (LLMRequest.Prefilled): a step is its decodes alone, and neither
	// TTFT nor E2E is computed (the service's are the prefill pool's and
	// the transfer's).
	decodePool
	// prefillPool replicas run each prompt to its first token (outputs of
	// one token): steps of prompts alone, with idle time between them,
	// whose TTFT prefillTTFTPoints follows step by step.
	prefillPool
)

// steadyLLMParts is steadyLLM for a replica in mode.
func steadyLLMParts(cfg LLMConfig, rate float64, in, out TokenDist, arr arrivals, kvZ float64, mode steadyMode) (LLMSteady, steadyParts, error) {
	prefilled := mode == decodePool
	var parts steadyParts
	cfg = cfg.WithDefaults()
	if err := cfg.Check(); err != nil {
		return LLMSteady{}, parts, err
	}
	ins, outs := in.quantilePoints(16), out.quantilePoints(24)
	// With a prefix cache (LLMConfig.PrefixHitTokens) each prompt
	// prefills only what follows its cached prefix, attending to it: the
	// grid is of the tokens computed.
	hit := float64(cfg.PrefixHitTokens)
	if hit > 0 && slices.Min(ins) <= hit {
		return LLMSteady{}, parts, fmt.Errorf("prefixHitTokens: %d cached tokens leave nothing to prefill of a %.0f-token prompt", cfg.PrefixHitTokens, slices.Min(ins))
	}
	for i := range ins {
		ins[i] -= hit
	}
	eIn := meanOf(ins, func(x float64) float64 { return x })
	eDec := meanOf(outs, func(x float64) float64 { return x - 1 })
	// Mean context of a decoding request: its prompt and, weighted by
	// its decode steps, half its output.
	ctx := eIn + hit + meanOf(outs, func(x float64) float64 { return (x - 1) * x / 2 })/math.Max(eDec, 1e-9)
	lam := rate / 1e3 // per ms
	if lam <= 0 {
		return LLMSteady{}, parts, nil
	}
	// A request's own blocks hold its context but the cached prefix,
	// which the prefixes' blocks hold once for all.
	m := &steadyModel{prefilled: prefilled, arr: arr, kvZ: kvZ, cfg: cfg, ins: ins, outs: outs, eIn: eIn, eDec: eDec, ctx: ctx, lam: lam, hit: cfg.PrefixHitTokens,
		budget:       float64(cfg.MaxNumBatchedTokens * max(cfg.Engine.PP, 1)),
		chunk:        float64(cfg.MaxNumBatchedTokens),
		blocks:       float64(cfg.Blocks() - cfg.PrefixCacheBlocks),
		blocksPerReq: (ctx - hit + float64(cfg.BlockSize)/2) / float64(cfg.BlockSize)}
	s, mo, err := m.fixedPoint()
	if err != nil {
		return LLMSteady{}, parts, err
	}
	d := lam * eDec * s
	tpotMean := s
	if mo.dsum > 0 {
		tpotMean = mo.tpot / mo.dsum
	}
	res := LLMSteady{StepMs: s, Decoding: d, KVBlocks: d * m.blocksPerReq, PrefixBlocks: float64(cfg.PrefixCacheBlocks), TPOTMeanMs: tpotMean}
	dsdD, varD := m.drift(d)
	// The step-to-step variance, less the drift's (counted apart).
	varStep := math.Max(mo.second-s*s-dsdD*dsdD*varD, 0)
	// The drift reverts to the mean 1/(1 - g) slower than the
	// residual life.
	tau := meanOf(outs, func(x float64) float64 { return (x - 1) * (x - 1) }) / math.Max(2*eDec, 1e-9)
	tau /= 1 - math.Min(lam*eDec*dsdD, 0.9)
	sd := func(o float64) float64 { return tpotSD(o, varStep, dsdD, varD, tau) }
	res.PreemptionsPer1k, res.PreemptionDelayMs = m.preemptions(d, varD, tau*s)
	res.TPOTP50Ms, res.TPOTP95Ms, res.TPOTP99Ms, res.TPOTPoints = tpotQuantiles(res.TPOTMeanMs, m.tpotSpreads(sd))
	parts.sd = sd
	if prefilled {
		// An arrival waits for the step in progress (length-biased:
		// E[s^2] / 2E[s]) while the engine is busy.
		parts.residMs = mo.busy * mo.second / (2 * mo.mean)
		return res, parts, nil
	}
	var tt []wx
	if mode == prefillPool && d == 0 {
		tt = m.prefillTTFTPoints()
	} else {
		tt = m.ttftPoints(d, varD, mo.mean)
	}
	res.TTFTMeanMs, res.TTFTP50Ms, res.TTFTP95Ms, res.TTFTP99Ms, res.TTFTPoints = ttftQuantiles(tt)
	if c := cfg; c.RequestOverheadMs > 0 || c.TokenOverheadMs > 0 {
		// The API server's times outside the engine (LLMConfig): a
		// constant delay before queueing shifts every arrival alike, so
		// the engine's steady state is the same and each TTFT is later
		// by it; each token's streaming adds to TTFT and TPOT.
		res.shift(c.RequestOverheadMs+c.TokenOverheadMs, c.TokenOverheadMs)
	}
	res.e2e(out, sd, cfg.FinishOverheadMs)
	return res, parts, nil
}

// shift adds ttft to every TTFT figure and tpot to every TPOT figure.
func (s *LLMSteady) shift(ttft, tpot float64) {
	for _, p := range []*float64{&s.TTFTMeanMs, &s.TTFTP50Ms, &s.TTFTP95Ms, &s.TTFTP99Ms} {
		*p += ttft
	}
	for _, p := range []*float64{&s.TPOTMeanMs, &s.TPOTP50Ms, &s.TPOTP95Ms, &s.TPOTP99Ms} {
		*p += tpot
	}
	for i := range s.TTFTPoints {
		s.TTFTPoints[i] += ttft
	}
	for i := range s.TPOTPoints {
		s.TPOTPoints[i] += tpot
	}
}

// steadyModel is what the parts of SteadyLLM share: the replica, the
// grids of prompt and output lengths and their means, the rate (per ms),
// and, once the fixed point sets it, the Poisson count of the prompts a
// step holds. It reuses one Step and one slice of decodes between step
// times.
type steadyModel struct {
	// prefilled: a decode replica of a disaggregated service, whose
	// arrivals bring their prompts computed (no prefill in its steps).
	prefilled bool
	// arr is how the replica's requests arrive; kvZ the deviations of
	// the decoding requests' drift the cache must hold (kvDriftZ).
	arr       arrivals
	kvZ       float64
	cfg       LLMConfig
	ins, outs []float64
	// eIn is the mean prompt, eDec the mean decode steps (output - 1),
	// ctx a decoding request's mean context.
	eIn, eDec, ctx float64
	lam            float64
	budget         float64 // max_num_batched_tokens (x PP: PP batches in flight)
	chunk          float64 // a request's most tokens a step: max_num_batched_tokens
	blocksPerReq   float64 // a decoding request's mean blocks
	// hit is the prompt tokens found cached (LLMConfig.PrefixHitTokens);
	// blocks the cache's blocks less the cached prefixes'.
	hit     int
	blocks  float64
	pk      []float64
	st      Step
	decodes []int // every decode of the mean context
}

// stepMs is a step of prompts of total tokens p (as chunks of eIn)
// and d decodes (d fractional: interpolated).
func (m *steadyModel) stepMs(prompts []float64, d float64) float64 {
	if m.prefilled && d > 0 && d < 1 {
		// A decode replica runs no step with nothing decoding: a level
		// between none and one (drawn in by a router's smoothing) is a
		// step of one, not a fraction of one.
		d = 1
	}
	lo := math.Floor(d)
	a := m.stepOf(prompts, int(lo))
	if d == lo {
		return a
	}
	return a + (d-lo)*(m.stepOf(prompts, int(lo)+1)-a)
}

// stepOf is a step of prompts (each cut to the room left in the
// budget) beside n decodes of the mean context. Per kernel it is priced
// from the step's totals (Engine.perKernel, the same sums StepTime
// takes: n decodes of the mean context sum to n times it exactly), so
// it costs the same whatever n.
func (m *steadyModel) stepOf(prompts []float64, n int) float64 {
	if m.prefilled {
		prompts = nil
	}
	e := m.cfg.Engine
	if e.StepModel != PerKernel {
		return m.stepOfWhole(prompts, n)
	}
	hiddenTP := e.Model.Hidden / max(e.TP, 1)
	room := m.budget - float64(n)
	prefill, chunks, flops := 0, 0, 0.0
	big, bigFlops := 0, 0.0
	for _, p := range prompts {
		t := math.Min(math.Min(p, room), m.chunk)
		if t < 1 {
			break
		}
		f := prefillAttnFlops(hiddenTP, int(t), m.hit)
		prefill += int(t)
		chunks++
		flops += f
		if int(t) > big {
			big, bigFlops = int(t), f
		}
		room -= t
	}
	ctx := float64(n * int(m.ctx))
	if prefill+n == 0 {
		return m.cfg.StepOverheadMs
	}
	return e.perKernel(prefill, chunks, n, ctx, flops, big, bigFlops)*1e3 + m.cfg.StepOverheadMs
}

// stepOfWhole is stepOf through StepTime, for the other step models.
func (m *steadyModel) stepOfWhole(prompts []float64, n int) float64 {
	m.st.Prefill = m.st.Prefill[:0]
	room := m.budget - float64(n)
	if m.prefilled {
		prompts = nil
	}
	for _, p := range prompts {
		t := math.Min(math.Min(p, room), m.chunk)
		if t < 1 {
			break
		}
		m.st.Prefill = append(m.st.Prefill, Chunk{Tokens: int(t), Cached: m.hit})
		room -= t
	}
	for len(m.decodes) < n {
		m.decodes = append(m.decodes, int(m.ctx))
	}
	m.st.Decode = m.decodes[:n]
	return m.cfg.Engine.StepTime(m.st)*1e3 + m.cfg.StepOverheadMs
}

// prompts are k prompts of the mean length.
func (m *steadyModel) prompts(k int) []float64 {
	ps := make([]float64, k)
	for i := range ps {
		ps[i] = m.eIn
	}
	return ps
}

// kStep is a step of k prompts: one of each length of the grid with
// k - 1 of the mean length (the step is convex in its prompts' sizes:
// each kernel is the larger of its bytes and its FLOPs), averaged.
func (m *steadyModel) kStep(k int, d float64) float64 {
	if k == 0 {
		return m.stepMs(nil, d)
	}
	ps := m.prompts(k)
	return meanOf(m.ins, func(own float64) float64 { ps[0] = own; return m.stepMs(ps, d) })
}

// D drifts: the decoding requests are an M/G/infinity count (Poisson,
// variance d) whose lives stretch when it is high (the steps slow):
// the feedback g = lambda x E[output - 1] x dStep/dD amplifies the
// drift by 1/(1 - g). It is slow: its correlation time is the
// decode's mean residual life, tau = E[L^2] / 2E[L] steps.
//
// A longer step also gathers more prompts for the next (lambda x
// dStep/dk more), which lengthens it again: dStep/dD in full is
// the step's own slope over 1 - lambda x dStep/dk.
func (m *steadyModel) drift(d float64) (dsdD, varD float64) {
	var dsdk float64
	for k, p := range m.pk {
		x := m.kStep(k, d)
		dsdD += p * (m.kStep(k, d+1) - x)
		dsdk += p * (m.kStep(k+1, d) - x)
	}
	dsdD /= 1 - math.Min(m.lam*dsdk, 0.9)
	g := math.Min(m.lam*m.eDec*dsdD, 0.9)
	if m.arr.z != 1 {
		return dsdD, m.arr.z * d / ((1 - g) * (1 - g))
	}
	return dsdD, d / ((1 - g) * (1 - g))
}

// level is one level of the decoding count and its weight.
type level struct{ w, d float64 }

// decodeLevels are the decoding count's levels and weights: the Poisson
// distribution itself while it is small, else four of a normal of
// the drift's variance.
//
// Behind a router that smooths the count (arrivals.z below 1) the small
// count's levels are the Poisson's drawn in towards the mean by sqrt(z):
// the same mean, z times the variance.
func decodeLevels(d, varD, z float64) []level {
	if d < 30 {
		var ls []level
		for n, p := range poisson(d) {
			if p > 1e-4 {
				if z != 1 {
					ls = append(ls, level{p, math.Max(d+math.Sqrt(z)*(float64(n)-d), 0)})
					continue
				}
				ls = append(ls, level{p, float64(n)})
			}
		}
		return ls
	}
	sd := math.Sqrt(varD)
	return []level{{0.25, math.Max(d-1.5*sd, 0)}, {0.25, math.Max(d-0.5*sd, 0)}, {0.25, d + 0.5*sd}, {0.25, d + 1.5*sd}}
}

// stepMoments are the steps' moments over the prompts a step holds and
// the levels of D, over the steps that run: the mean and second moment,
// and the sums that weight the step by the requests decoding in it
// (tpot / dsum is the mean TPOT).
type stepMoments struct{ mean, second, tpot, dsum, busy float64 }

// fixedPoint is the mean step s: the fixed point of the mean step over
// the prompts a step holds and the levels of D, or ErrLLMOverload. It
// leaves m.pk the Poisson count of the prompts a step of s holds.
func (m *steadyModel) fixedPoint() (float64, stepMoments, error) {
	cfg, lam, eDec := m.cfg, m.lam, m.eDec
	s := m.stepMs(m.prompts(1), 0)
	if m.prefilled {
		s = m.stepMs(nil, 1)
	}
	var mo stepMoments
	for it := 0; ; it++ {
		d := lam * eDec * s
		prompts := lam * s * m.eIn
		if m.prefilled {
			prompts = 0
		}
		if d > float64(cfg.MaxNumSeqs) || d*m.blocksPerReq > m.blocks || prompts > m.budget-d || it > 200 {
			return 0, stepMoments{}, ErrLLMOverload
		}
		m.pk = m.arr.window(lam * s)
		if m.prefilled {
			// A decode replica's arrivals add no prefill to a step.
			m.pk = []float64{1}
		}
		_, varD := m.drift(d)
		// The cache must hold the decoding requests' drift too (two
		// deviations above the mean): beyond, requests queue for blocks
		// and are preempted, which this model does not follow.
		if (d+m.kvZ*math.Sqrt(varD))*m.blocksPerReq > m.blocks {
			return 0, stepMoments{}, ErrLLMOverload
		}
		// An engine with nothing to run does not step: the mean is over
		// the steps that run (busy their share).
		mo = stepMoments{}
		busy := 0.0
		for _, l := range decodeLevels(d, varD, m.arr.z) {
			for k, p := range m.pk {
				x := m.kStep(k, l.d)
				if x == 0 {
					continue
				}
				busy += l.w * p
				mo.mean += l.w * p * x
				mo.second += l.w * p * x * x
				mo.tpot += l.w * p * x * l.d
				mo.dsum += l.w * p * l.d
			}
		}
		mo.mean, mo.second, mo.busy = mo.mean/busy, mo.second/busy, busy
		if math.Abs(mo.mean-s) < 1e-5*s {
			return mo.mean, mo, nil
		}
		s = 0.5*s + 0.5*mo.mean
		if s > 1e7 {
			return 0, stepMoments{}, ErrLLMOverload
		}
	}
}

// tpotSpreads are the deviations of a request's TPOT, one per output
// length of the grid (over 1): per request the mean of its out - 1
// steps: the step-to-step variance averages over them, the drift over
// its life against tau.
func (m *steadyModel) tpotSpreads(sd func(o float64) float64) []float64 {
	var sds []float64
	for _, o := range m.outs {
		if o > 1 {
			sds = append(sds, sd(o))
		}
	}
	return sds
}

// tpotSD is the deviation of the TPOT of a request of o (> 1) output
// tokens: the step-to-step variance varStep averaged over its o - 1
// steps, and the drift's (dsdD^2 varD, correlation time tau steps) over
// its life. The mean of an Ornstein-Uhlenbeck drift over x = L/tau of
// its correlation times keeps 2(x - 1 + e^-x)/x^2 of its variance.
func tpotSD(o, varStep, dsdD, varD, tau float64) float64 {
	x := (o - 1) / math.Max(tau, 1e-9)
	keep := 1.0
	if x > 1e-6 {
		keep = 2 * (x - 1 + math.Exp(-x)) / (x * x)
	}
	return math.Sqrt(varStep/(o-1) + dsdD*dsdD*varD*keep)
}

// tpotQuantiles are TPOT's p50, p95, p99 and LLMQuantilePoints points:
// a mixture over outputs of normals about the mean, each quantile
// solving mean over outputs of Phi((x - mean) / sd) = p.
func tpotQuantiles(mean float64, sds []float64) (p50, p95, p99 float64, points []float64) {
	if len(sds) == 0 {
		return mean, mean, mean, slices.Repeat([]float64{mean}, LLMQuantilePoints)
	}
	cdf := func(x float64) float64 {
		return meanOf(sds, func(sd float64) float64 {
			return 0.5 * math.Erfc(-(x-mean)/(sd*math.Sqrt2))
		})
	}
	q := func(p float64) float64 {
		w := 6*slices.Max(sds) + 1e-9
		lo, hi := mean-w, mean+w
		for range 60 {
			l0, h0 := lo, hi
			if mid := (lo + hi) / 2; cdf(mid) < p {
				lo = mid
			} else {
				hi = mid
			}
			if lo == l0 && hi == h0 {
				// Down to adjacent floats: every step left would be
				// this one again.
				break
			}
		}
		return (lo + hi) / 2
	}
	points = make([]float64, LLMQuantilePoints)
	for i := range points {
		points[i] = q((float64(i) + 0.5) / LLMQuantilePoints)
	}
	return q(0.50), q(0.95), q(0.99), points
}

// ttftPoints are TTFT's weighted points: the rest of the step arrived in
// (length-biased: a step drawn in proportion to its length, the arrival
// uniform in it) and the steps of its own prompt beside the j others
// that arrived in the same step, at the levels of the drifting D. mean
// is the mean step.
// The prompts of a step vary in size too: k of them total k x E[in]
// give or take sqrt(k) x their deviation (two levels, -1 and +1).
func (m *steadyModel) ttftPoints(d, varD, mean float64) []wx {
	eIn := m.eIn
	sdIn := math.Sqrt(meanOf(m.ins, func(x float64) float64 { return (x - eIn) * (x - eIn) }))
	sized := func(ps []float64, from int, z float64) {
		k := float64(len(ps) - from)
		for i := from; i < len(ps); i++ {
			ps[i] = math.Max(eIn+z*sdIn/math.Sqrt(k), 1)
		}
	}
	var tt []wx
	var scratch []float64
	for _, l := range decodeLevels(d, varD, m.arr.z) {
		dz := l.d
		for k, p := range m.pk {
			for _, za := range []float64{-1, 1} {
				arr := m.prompts(k)
				sized(arr, 0, za)
				x := m.stepMs(arr, dz) // the step it arrives in
				// Arriving at an idle engine (x = 0, the share of
				// states with nothing to run) it starts at once.
				w := l.w * p * x / mean / 2
				if x == 0 {
					w = l.w * p / 2
				}
				if w < 1e-9 {
					continue
				}
				for j, q := range m.arr.others(m.lam * x) {
					if q < 1e-4 {
						continue
					}
					for _, zo := range []float64{-1, 1} {
						ps := m.prompts(j + 1)
						sized(ps, 1, zo)
						others := 0.0
						for _, o := range ps[1:] {
							others += o
						}
						for _, own := range m.ins {
							var ttft float64
							ttft, scratch = m.prefillMs(append(scratch[:0], ps...), own, others, dz)
							for _, u := range []float64{0.25, 0.75} {
								tt = append(tt, wx{w * q / float64(len(m.ins)) / 4, u*x + ttft})
							}
						}
					}
				}
			}
		}
	}
	return tt
}

// prefillMs is the steps that prefill a prompt of own tokens beside
// others' of others tokens at dz decodes: cur is the first step's
// prompts (own first; the slice is reused and returned). The others'
// prompts take the step's room first; once they are done the whole room
// is its own.
func (m *steadyModel) prefillMs(cur []float64, own, others, dz float64) (float64, []float64) {
	cur[0] = own
	var ttft float64
	for left, othersLeft := own, others; ; {
		ttft += m.stepMs(cur, dz)
		room := math.Max(m.budget-dz, 1)
		fromOthers := math.Min(othersLeft, room)
		othersLeft -= fromOthers
		left -= math.Max(math.Min(room-fromOthers, m.chunk), 1)
		if left <= 0 {
			break
		}
		cur = cur[:1]
		cur[0] = left
		if othersLeft >= 1 {
			cur = append(cur, othersLeft)
		}
	}
	return ttft, cur
}

// ttftQuantiles are TTFT's mean, p50, p95, p99 and LLMQuantilePoints
// points of the weighted points tt (sorted in place).
func ttftQuantiles(tt []wx) (mean, p50, p95, p99 float64, points []float64) {
	sum, tot := 0.0, 0.0
	for _, v := range tt {
		sum += v.w * v.x
		tot += v.w
	}
	mean = sum / tot
	slices.SortFunc(tt, func(a, b wx) int { return cmp.Compare(a.x, b.x) })
	p50 = sortedQuantile(tt, 0.50)
	p95 = sortedQuantile(tt, 0.95)
	p99 = sortedQuantile(tt, 0.99)
	points = make([]float64, LLMQuantilePoints)
	cum, k := 0.0, 0 // tt is sorted now
	for i := range points {
		p := (float64(i) + 0.5) / LLMQuantilePoints
		for k < len(tt)-1 && cum+tt[k].w < p*tot {
			cum += tt[k].w
			k++
		}
		points[i] = tt[k].x
	}
	return mean, p50, p95, p99, points
}

// wx is a weighted value.
type wx struct{ w, x float64 }

// sortedQuantile is the p-quantile of weighted points sorted by value.
func sortedQuantile(xs []wx, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
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
