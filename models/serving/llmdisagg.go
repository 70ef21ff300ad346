package serving

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Prefill/decode disaggregation (llm-d's P/D, vLLM's disaggregated
// prefilling with a KV connector such as NIXL): a service's prompts are
// prefilled on one pool of replicas and decoded on another. A request
// queues for and runs its prefill on a prefill replica, which gives its
// first token; its prompt's KV cache, 2 x layers x KV heads x head
// dimension x bytes an element a token (Transformer.KVBytesPerToken), is
// then sent to a decode replica over the fabric between them; the decode
// replica decodes the rest of the output. So
//
//	TTFT = queue + prefill (the prefill pool's TTFT) + KV transfer
//	TPOT = the decode pool's alone (its steps hold no prefill chunk)
//
// and a request's end-to-end latency is its TTFT, the wait of the decode
// replica's step in progress, and its other tokens at the decode pool's
// TPOT. Assumptions: the transfer starts when the prefill ends and the
// decode replica takes the request when the transfer ends (its blocks
// are allocated then, not reserved during the transfer, and the prefill
// replica frees its own at once); transfers do not contend with each
// other for the fabric (each at KVTransferGBps); the whole prompt's KV is
// sent, a shared prefix's too (LLMRequest.PrefixID: the prefill replica
// that holds the prefix skips its prefill, but the decode replica needs
// all of the prompt's KV and holds it as its own, caching no prefix:
// Decode's PrefixHitTokens and PrefixCacheBlocks are taken as 0); a preempted decode recomputes its prompt on the decode replica
// (vLLM's local recompute); the API server's request time is the prefill
// pool's, its per-token and finishing times the decode pool's.

// Disagg is a disaggregated LLM service's two pools.
type Disagg struct {
	// Prefill and Decode are each pool's replica (the same model).
	Prefill, Decode LLMConfig
	// PrefillReplicas and DecodeReplicas are the pools' sizes.
	PrefillReplicas, DecodeReplicas int
	// Router spreads each pool's requests over its replicas.
	Router Router
	// KVTransferGBps is the bandwidth a transfer reaches between a
	// prefill and a decode replica (GB/s, 10^9 bytes): the replicas'
	// network (RDMA NICs, NVLink within a node) as models/comm's fabrics
	// give it; KVTransferLatencyMs a transfer's fixed time.
	KVTransferGBps, KVTransferLatencyMs float64
}

// withDefaults fills both pools' zero fields and moves the API server's
// times where a disaggregated request meets them: the request's before
// the prefill, the tokens' and the finish's on the decode replica.
func (d Disagg) withDefaults() Disagg {
	d.Prefill, d.Decode = d.Prefill.WithDefaults(), d.Decode.WithDefaults()
	d.Prefill.TokenOverheadMs, d.Prefill.FinishOverheadMs = 0, 0
	d.Decode.RequestOverheadMs = 0
	// A decode engine's requests arrive with their whole prompt's KV
	// cache, a shared prefix's too, held as their own: it caches no
	// prefix.
	d.Decode.PrefixHitTokens, d.Decode.PrefixCacheBlocks = 0, 0
	return d
}

// Check refuses pools that cannot serve: each replica's LLMConfig.Check
// (field names prefixed by the pool's), a model that is not the same in
// both, pools below one replica, a bandwidth that is not positive.
func (d Disagg) Check() error {
	d = d.withDefaults()
	if err := d.Prefill.Check(); err != nil {
		return fmt.Errorf("prefill.%w", err)
	}
	if err := d.Decode.Check(); err != nil {
		return fmt.Errorf("decode.%w", err)
	}
	switch {
	case d.Prefill.Engine.Model != d.Decode.Engine.Model:
		return fmt.Errorf("decode.model: %s is not the prefill pool's %s", d.Decode.Engine.Model.Name, d.Prefill.Engine.Model.Name)
	case d.PrefillReplicas < 1:
		return fmt.Errorf("prefill.replicas: %d is below 1", d.PrefillReplicas)
	case d.DecodeReplicas < 1:
		return fmt.Errorf("decode.replicas: %d is below 1", d.DecodeReplicas)
	case !(d.KVTransferGBps > 0) || math.IsInf(d.KVTransferGBps, 0):
		return fmt.Errorf("kvTransfer.bandwidthGBps: %g is not positive", d.KVTransferGBps)
	case !(d.KVTransferLatencyMs >= 0) || math.IsInf(d.KVTransferLatencyMs, 0):
		return fmt.Errorf("kvTransfer.latencyMs: %g is negative", d.KVTransferLatencyMs)
	case d.Router < RoundRobin || d.Router > PrefixAware:
		return fmt.Errorf("router %d is not one of round-robin, least-outstanding, prefix-aware", int(d.Router))
	}
	return nil
}

// KVTransferBytes is the KV cache of a prompt of tokens: 2 (a key and a
// value) x layers x KV heads x head dimension x bytes an element, a
// token.
func (t Transformer) KVTransferBytes(tokens int) float64 {
	return t.KVBytesPerToken() * float64(tokens)
}

// TransferMs is the time to send a prompt of tokens' KV cache from a
// prefill replica to a decode replica.
func (d Disagg) TransferMs(tokens int) float64 {
	return d.KVTransferLatencyMs + d.Prefill.Engine.Model.KVTransferBytes(tokens)/(d.KVTransferGBps*1e9)*1e3
}

// GPUs is the GPUs of the two pools together.
func (d Disagg) GPUs() int {
	return d.PrefillReplicas*max(d.Prefill.Engine.TP, 1) + d.DecodeReplicas*max(d.Decode.Engine.TP, 1)
}

// DisaggResult is what a disaggregated service served in the exact
// model: the service's per-request figures (LLMResult's TTFT, TPOT, E2E
// in request order; tokens; the decode pool's blocks and preemptions),
// each pool's RoutedResult, and each request's transfer.
type DisaggResult struct {
	LLMResult
	Prefill, Decode RoutedResult
	TransferMs      []float64
}

// SimulateLLMDisagg serves reqs (sorted by arrival) on d's two pools:
// the prefill pool runs each request to its first token (SimulateLLMRouted
// of the requests with one output token); each request then reaches the
// decode pool after its transfer (Prefilled, in the order they arrive
// there), which decodes the rest. A request's shared prefix is the
// prefill pool's (its replicas' prefix caches, routed by d.Router as
// SimulateLLMRouted routes); its transfer is of its whole prompt. A request of one output token ends
// with its transfer.
func SimulateLLMDisagg(d Disagg, reqs []LLMRequest) (DisaggResult, error) {
	if err := d.Check(); err != nil {
		return DisaggResult{}, err
	}
	d = d.withDefaults()
	if err := checkLLMRun(d.Prefill, reqs); err != nil {
		return DisaggResult{}, err
	}
	pre := make([]LLMRequest, len(reqs))
	for i, q := range reqs {
		if q.Prefilled {
			return DisaggResult{}, fmt.Errorf("request %d: is prefilled already", i)
		}
		pre[i] = q
		pre[i].Output = 1
	}
	p, err := SimulateLLMRouted(d.Prefill, d.PrefillReplicas, d.Router, pre)
	if err != nil {
		return DisaggResult{}, fmt.Errorf("prefill pool: %w", err)
	}
	n := len(reqs)
	res := DisaggResult{Prefill: p, TransferMs: make([]float64, n)}
	res.TTFTMs, res.TPOTMs, res.E2EMs = make([]float64, n), make([]float64, n), make([]float64, n)
	// The prefill pool's TTFT is without the API server's per-token
	// time (withDefaults): the first token leaves from the decode pool.
	var dec []LLMRequest
	var idx []int
	for i, q := range reqs {
		res.TransferMs[i] = d.TransferMs(q.Input)
		first := p.TTFTMs[i] + res.TransferMs[i]
		res.TTFTMs[i] = first + d.Decode.TokenOverheadMs
		if q.Output == 1 {
			res.E2EMs[i] = res.TTFTMs[i] + d.Decode.FinishOverheadMs
			continue
		}
		dec = append(dec, LLMRequest{ArrivalMs: q.ArrivalMs + first, Input: q.Input, Output: q.Output, Prefilled: true})
		idx = append(idx, i)
	}
	order := make([]int, len(dec))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return dec[order[a]].ArrivalMs < dec[order[b]].ArrivalMs })
	sorted := make([]LLMRequest, len(dec))
	for k, o := range order {
		sorted[k] = dec[o]
	}
	if len(sorted) > 0 {
		r, err := SimulateLLMRouted(d.Decode, d.DecodeReplicas, d.Router, sorted)
		if err != nil {
			return res, fmt.Errorf("decode pool: %w", err)
		}
		res.Decode = r
		for k, o := range order {
			i := idx[o]
			res.TPOTMs[i] = r.TPOTMs[k]
			// The decode pool's E2E is from its arrival, the first
			// token's time, which the TTFT counts with its own token.
			res.E2EMs[i] = res.TTFTMs[i] - d.Decode.TokenOverheadMs + r.E2EMs[k]
		}
	}
	res.Steps = p.Steps + res.Decode.Steps
	res.Preemptions = p.Preemptions + res.Decode.Preemptions
	res.Blocks, res.PeakBlocks = res.Decode.Blocks, res.Decode.PeakBlocks
	res.EndMs = max(p.EndMs, res.Decode.EndMs)
	res.BusyMs = p.BusyMs + res.Decode.BusyMs
	res.InputTokens, res.PrefixHitTokens = p.InputTokens, p.PrefixHitTokens
	for _, q := range reqs {
		res.OutputTokens += int64(q.Output)
	}
	return res, nil
}

// LLMDisaggSteady is a disaggregated service's steady state at a rate:
// the service's request figures (LLMSteady: TTFT with the transfer, TPOT
// and E2E; StepMs the prefill replica's step and the mean transfer, so
// that TTFT less it is the prefill queue's wait; KVBlocks the decode
// pool's blocks held, all its replicas'), and one replica of each pool.
type LLMDisaggSteady struct {
	LLMSteady
	Prefill, Decode LLMSteady
	// TransferMeanMs and TransferP95Ms are the KV transfer's.
	TransferMeanMs, TransferP95Ms float64
}

// Whole is the replica's steady state as one (LLMSteady, with the
// prefill pool's mean TTFT and the transfer's).
func (s LLMDisaggSteady) Whole() LLMSteady { return s.LLMSteady }

// SteadyLLMDisagg is the fast model of d at rate requests a second to
// the whole service, a Poisson stream: the prefill pool's replica at its
// share with one-token outputs (SteadyLLMRouted), the transfer of each
// prompt of the grid, and the decode pool's replica at its share with
// its requests' prompts computed (its steps the decodes alone). A
// decode replica's arrivals are the prefills' completions delayed by
// their transfers, taken as the router's share of a Poisson stream
// (the completions of a step's prompts come together: the exact model
// holds this to 5%, TestDisaggFastModelAgainstExact). With a prefix
// cache (Prefill.PrefixHitTokens) a prefill replica prefills what
// follows the prefix, and behind PrefixAware each prefix stays on the
// prefill replica it first went to (llmprefixroute.go); the transfer is
// of the whole prompt (TestDisaggPrefixFastModelAgainstExact). The prefill
// replica's TTFT follows its steps one by one (prefillTTFTPoints). TTFT's points are
// the prefill's and the transfers' (independent: a longer prompt's
// longer prefill and transfer are a small part of its TTFT's spread);
// a request's TPOT is the decode step's mean and spread over its output
// with the wait for the step in progress shared over its output - 1
// tokens; E2E the mixture of e2e.go with that wait added. ErrLLMOverload
// where either pool is past its capacity.
func SteadyLLMDisagg(d Disagg, rate float64, in, out TokenDist) (LLMDisaggSteady, error) {
	if err := d.Check(); err != nil {
		return LLMDisaggSteady{}, err
	}
	d = d.withDefaults()
	var res LLMDisaggSteady
	if !(rate > 0) {
		return res, nil
	}
	one := TokenDist{Kind: Fixed, Mean: 1}
	cp, cd := d.PrefillReplicas, d.DecodeReplicas
	var p LLMSteady
	var err error
	if d.Router == PrefixAware && d.Prefill.PrefixHitTokens > 0 && cp > 1 {
		// The picker keeps each prefix on the prefill engine it first
		// sent it to (llmprefixroute.go).
		p, err = steadyPrefixAwareIn(d.Prefill, rate/float64(cp), cp, in, one, prefillPool)
	} else {
		p, _, err = steadyLLMParts(d.Prefill, rate/float64(cp), in, one, routedArrivals(d.Router, cp, one), kvDriftZ, prefillPool)
	}
	if err != nil {
		return res, err
	}
	// Outputs of one token all end at the prefill: the decode pool idles.
	dec, parts := LLMSteady{}, steadyParts{sd: func(float64) float64 { return 0 }}
	if out.Longest() > 1 {
		dec, parts, err = steadyLLMParts(d.Decode, rate/float64(cd), in, out, routedArrivals(d.Router, cd, out), kvDriftZ, decodePool)
		if err != nil {
			return res, err
		}
	}
	res.Prefill, res.Decode = p, dec
	ins := in.quantilePoints(LLMQuantilePoints)
	xfer := make([]float64, len(ins))
	for i, x := range ins {
		xfer[i] = d.TransferMs(int(x))
	}
	res.TransferMeanMs = meanOf(xfer, func(x float64) float64 { return x })
	res.TransferP95Ms = InterpQuantile(xfer, 0.95)
	// TTFT: each prefill point with each transfer point.
	tok := d.Decode.TokenOverheadMs
	tt := make([]float64, 0, len(p.TTFTPoints)*len(xfer))
	for _, a := range p.TTFTPoints {
		for _, x := range xfer {
			tt = append(tt, a+x+tok)
		}
	}
	slices.Sort(tt)
	at := func(q float64) float64 { return tt[min(int(q*float64(len(tt))), len(tt)-1)] }
	s := &res.LLMSteady
	s.TTFTMeanMs = p.TTFTMeanMs + res.TransferMeanMs + tok
	s.TTFTP50Ms, s.TTFTP95Ms, s.TTFTP99Ms = at(0.50), at(0.95), at(0.99)
	s.TTFTPoints = make([]float64, LLMQuantilePoints)
	for i := range s.TTFTPoints {
		s.TTFTPoints[i] = at((float64(i) + 0.5) / LLMQuantilePoints)
	}
	s.PrefillTTFTMeanMs, s.KVTransferMeanMs = p.TTFTMeanMs, res.TransferMeanMs
	s.StepMs = p.StepMs + res.TransferMeanMs
	s.Decoding = dec.Decoding * float64(cd)
	s.KVBlocks = dec.KVBlocks * float64(cd)
	s.PreemptionsPer1k, s.PreemptionDelayMs = dec.PreemptionsPer1k, dec.PreemptionDelayMs
	// E2E: TTFT, the step in progress at the decode replica, the other
	// tokens at the decode step's TPOT (decode's figures already hold
	// the per-token time).
	s.TPOTMeanMs = dec.TPOTMeanMs
	s.e2e(out, parts.sd, d.Decode.FinishOverheadMs+parts.residMs)
	// TPOT: an output of o tokens waits the step in progress once over
	// its o - 1 gaps.
	var means, sds []float64
	for _, o := range out.quantilePoints(24) {
		if o > 1 {
			means = append(means, dec.TPOTMeanMs+parts.residMs/(o-1))
			sds = append(sds, parts.sd(o))
		}
	}
	s.TPOTMeanMs, s.TPOTP50Ms, s.TPOTP95Ms, s.TPOTP99Ms, s.TPOTPoints = tpotMixture(means, sds, dec.TPOTMeanMs)
	return res, nil
}

// tpotMixture is the mean, p50, p95, p99 and LLMQuantilePoints points of
// an equal mixture of normals (means[i], sds[i]); with none, fixed at
// fallback.
func tpotMixture(means, sds []float64, fallback float64) (mean, p50, p95, p99 float64, points []float64) {
	if len(means) == 0 {
		return fallback, fallback, fallback, fallback, slices.Repeat([]float64{fallback}, LLMQuantilePoints)
	}
	mean = meanOf(means, func(x float64) float64 { return x })
	w := 0.0
	for i := range means {
		w = max(w, math.Abs(means[i]-mean)+6*sds[i])
	}
	w += 1e-9
	cdf := func(x float64) float64 {
		c := 0.0
		for i := range means {
			c += 0.5 * math.Erfc(-(x-means[i])/(math.Max(sds[i], 1e-12)*math.Sqrt2))
		}
		return c / float64(len(means))
	}
	q := func(p float64) float64 {
		lo, hi := mean-w, mean+w
		for range 80 {
			mid := (lo + hi) / 2
			if mid == lo || mid == hi {
				break
			}
			if cdf(mid) < p {
				lo = mid
			} else {
				hi = mid
			}
		}
		return (lo + hi) / 2
	}
	points = make([]float64, LLMQuantilePoints)
	for i := range points {
		points[i] = q((float64(i) + 0.5) / LLMQuantilePoints)
	}
	return mean, q(0.50), q(0.95), q(0.99), points
}

// DisaggCapacity is the highest rate (requests a second, the whole
// service) d serves in the fast model (SteadyLLMDisagg without
// ErrLLMOverload), within 0.5%: the lower of its pools'.
func DisaggCapacity(d Disagg, in, out TokenDist) (float64, error) {
	return capacityOf(func(rate float64) (bool, error) {
		_, err := SteadyLLMDisagg(d, rate, in, out)
		if errors.Is(err, ErrLLMOverload) {
			return false, nil
		}
		return err == nil, err
	})
}

// prefillTTFTPoints are a prefill replica's TTFT points (its outputs
// one token: no decodes). Its steps hold the prompts that arrived during
// the step before, so the count of a step follows the last's length: a
// chain over k, the prompts of a step, from k to the count of a window
// of T(k) (the router's arrivals, arrivals.window), from none (the
// engine idle until the next arrival) to a step of that one arrival,
// whose window counts the arrivals after one (arrivals.after). T(k) is
// taken at k prompts of the mean less and more sqrt(k) deviations of a
// prompt, half the steps each. An arrival finds the engine idle once an
// idle time, and a step of k as often as the next step holds prompts;
// in a step it waits the rest of it (a quarter or three quarters of it,
// as ttftPoints takes), then the step of its own prompt and the others
// that arrived in the same step (arrivals.others), split by the token
// budget as prefillMs does; at an idle engine it starts at once, alone.
// The mean step's window (ttftPoints) misses that a long step gathers
// more prompts for the next: 22% optimistic on the p95 at 70% of a
// replica's capacity, against 2% here (TestDisaggFastModelAgainstExact).
func (m *steadyModel) prefillTTFTPoints() []wx {
	const maxK = 256
	eIn := m.eIn
	sdIn := math.Sqrt(meanOf(m.ins, func(x float64) float64 { return (x - eIn) * (x - eIn) }))
	// steps[k] are a step of k prompts whose total is k x the mean
	// less and more sqrt(k) deviations of a prompt (each half the
	// steps): a step's length varies with its prompts' sizes, and an
	// arrival is likelier to find a long one.
	steps := [][2]float64{{0, 0}}
	step := func(k, z int) float64 {
		for len(steps) <= k {
			n := len(steps)
			var st [2]float64
			for i, za := range []float64{-1, 1} {
				ps := m.prompts(n)
				for j := range ps {
					ps[j] = math.Max(eIn+za*sdIn/math.Sqrt(float64(n)), 1)
				}
				st[i] = m.stepMs(ps, 0)
			}
			steps = append(steps, st)
		}
		return steps[k][z]
	}
	// State fresh is a step of one prompt begun at its arrival, the
	// engine idle: the count of its window is of the arrivals after one
	// (arrivals.after), fewer than a window's from a random phase when
	// the gaps are Erlang (round robin).
	fresh := maxK + 1
	both := func(f func(float64) []float64, k int) []float64 {
		a, b := f(m.lam*step(k, 0)), f(m.lam*step(k, 1))
		n := make([]float64, max(len(a), len(b)))
		for j, q := range a {
			n[j] += q / 2
		}
		for j, q := range b {
			n[j] += q / 2
		}
		return n
	}
	next := make([][]float64, maxK+2)
	for k := 1; k <= maxK; k++ {
		next[k] = both(m.arr.window, k)
	}
	next[fresh] = both(m.arr.after, 1)
	pi := make([]float64, maxK+2)
	pi[fresh] = 1
	nv := make([]float64, maxK+2)
	for it := 0; it < 2000; it++ {
		clear(nv)
		for k, p := range pi {
			if p == 0 {
				continue
			}
			if k == 0 {
				nv[fresh] += p
				continue
			}
			for j, q := range next[k] {
				nv[min(j, maxK)] += p * q
			}
		}
		diff := 0.0
		for k := range pi {
			diff += math.Abs(nv[k] - pi[k])
		}
		pi, nv = nv, pi
		if diff < 1e-12 {
			break
		}
	}
	// The arrivals that find each state: one ends each idle time, and a
	// step holds as many as the next step's prompts (its window's
	// count), which for Poisson arrivals is the time in it (PASTA) and
	// for round robin's regular ones fewer in short steps.
	countMean := func(ps []float64) float64 {
		s := 0.0
		for j, q := range ps {
			s += float64(j) * q
		}
		return s
	}
	type seen struct {
		w, x float64
	}
	var found []seen
	z := pi[0]
	for k := 1; k <= maxK+1; k++ {
		kk, f := k, m.arr.window
		if k == fresh {
			kk, f = 1, m.arr.after
		}
		for za := range 2 {
			x := step(kk, za)
			n := pi[k] / 2 * countMean(f(m.lam*x))
			z += n
			found = append(found, seen{n, x})
		}
	}
	var tt []wx
	var scratch []float64
	own := func(w float64, wait float64, others []float64) {
		for j, q := range others {
			if q < 1e-4 {
				continue
			}
			for _, zo := range []float64{-1, 1} {
				ps := m.prompts(j + 1)
				tot := 0.0
				for i := 1; i < len(ps); i++ {
					ps[i] = math.Max(eIn+zo*sdIn/math.Sqrt(float64(j)), 1)
					tot += ps[i]
				}
				for _, in := range m.ins {
					var ttft float64
					ttft, scratch = m.prefillMs(append(scratch[:0], ps...), in, tot, 0)
					tt = append(tt, wx{w * q / 2 / float64(len(m.ins)), wait + ttft})
				}
			}
		}
	}
	if w := pi[0] / z; w > 1e-9 {
		own(w, 0, []float64{1})
	}
	for _, f := range found {
		w := f.w / z
		if w < 1e-9 {
			continue
		}
		others := m.arr.others(m.lam * f.x)
		for _, u := range []float64{0.25, 0.75} {
			own(w/2, u*f.x, others)
		}
	}
	return tt
}

// after is the distribution of the arrivals in a window that holds mean
// of them on average, starting at an arrival: floor(M / k), M Poisson of
// mean k x mean.
func (a arrivals) after(mean float64) []float64 {
	if a.k == 1 {
		return poisson(mean)
	}
	var out []float64
	for m, p := range poisson(float64(a.k) * mean) {
		q := m / a.k
		for len(out) <= q {
			out = append(out, 0)
		}
		out[q] += p
	}
	return out
}
