package serving

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Prefix-aware routing of shared prefixes in the fast model
// (SteadyLLMRouted with PrefixAware and LLMConfig.PrefixHitTokens).
//
// The llm-d endpoint picker scores a replica prefixWeight x m for a
// prefix it sent there before (m the share of the prompt's blocks the
// prefix is) plus the load scorers' (the queue scorer's, at most
// queueWeight; the Gateway API Inference Extension's default profile
// has prefix-cache-scorer 3 against queue-scorer 1 and kv-cache-scorer 1:
// the same 3 against at most 2). When 3m > 2 for every prompt, a replica
// holding the prefix outscores any other whatever their queues: the
// picker never sends that prefix anywhere else. Its first request goes
// where the load scorers say (the shortest queue, ties to the fewest
// outstanding), and from then on the prefix's requests all go there. So
// with G prefixes (groups), each a Poisson share 1/G of the service's
// Poisson stream, over c replicas:
//
//   - each replica holds only its own groups' prefixes (G/c of them, not
//     all G): more of its cache is left for decoding;
//   - every request but each group's first finds its prefix cached;
//   - a replica's arrivals are the sum of its groups' shares: Poisson at
//     the service's rate x (its groups / G), its decoding count Poisson
//     (SteadyLLM's replica at that rate, holding its groups' blocks);
//   - the load follows the groups: with G < c only G replicas get any
//     request (the rest idle: no load scorer outweighs the prefix), and
//     with G not a multiple of c some replicas hold one group more.
//
// With no more groups than replicas each group has a replica of its own
// (the even spread below: in the exact model in every seed). With more,
// a group's first request goes to the replica with the fewest
// outstanding, a noisy count, and the groups spread unevenly, less than
// at random (llmprefixplace.go follows the rule: the share of replicas
// holding each count of groups); the model cuts those replicas in order
// of their groups into six kinds (a quarter each up to 75%, then 15%,
// 7% and the busiest 3%), each at its mean groups, and mixes them by
// their requests. TestPrefixPlacementAgainstExactOverSeeds says where it
// holds (the exact model's figures averaged over 8 seeds: within 5% at
// 30-70% of capacity but three figures, up to 11%). A disaggregated
// service's prefill pool keeps the even spread (its placement, by
// prefills' short sojourns, is not followed). The service's latencies
// are the request-weighted mixture of its kinds of replica; its capacity
// the (expected) busiest's (PrefixAwareCapacity). A prefix under 2/3 of a prompt lets the queue scorer outweigh it, and
// the picker then spreads it over the replicas as their queues change,
// which the model does not follow (SteadyLLMRouted refuses it,
// ErrPrefixSpill).

// ErrPrefixSpill is prefix-aware routing of prefixes whose prefix score
// the queue scorer can outweigh (under 2/3 of a prompt's blocks).
var ErrPrefixSpill = errors.New("prefix-aware routing: a prefix under 2/3 of a prompt's blocks lets the queue scorer send its requests to replicas that do not hold it, which the fast model does not follow")

// PrefixGroups is the prefixes cfg's cache holds (PrefixCacheBlocks of
// PrefixHitTokens / BlockSize blocks each), 0 without a prefix cache.
func PrefixGroups(cfg LLMConfig) (int, error) {
	cfg = cfg.WithDefaults()
	per := int64(cfg.PrefixHitTokens / cfg.BlockSize)
	if cfg.PrefixHitTokens <= 0 || per == 0 {
		return 0, nil
	}
	if cfg.PrefixCacheBlocks < per || cfg.PrefixCacheBlocks%per != 0 {
		return 0, fmt.Errorf("prefixCacheBlocks: %d is not a whole number of prefixes of %d blocks", cfg.PrefixCacheBlocks, per)
	}
	return int(cfg.PrefixCacheBlocks / per), nil
}

// PrefixSticky reports whether the picker keeps every prefix of cfg on
// the replicas it sent it to: prefixScoreWeight x (the prefix's blocks
// over the longest prompt's) above queueScoreWeight.
func PrefixSticky(cfg LLMConfig, in TokenDist) bool {
	cfg = cfg.WithDefaults()
	bs := cfg.BlockSize
	prompt := in.Longest() / bs
	if cfg.PrefixHitTokens < bs || prompt < 1 {
		return false
	}
	return prefixScoreWeight*float64(cfg.PrefixHitTokens/bs)/float64(prompt) > queueScoreWeight
}

// PrefixShare is a kind of replica under prefix-aware routing: Replicas
// of them, each holding Groups prefixes.
type PrefixShare struct{ Groups, Replicas int }

// PrefixSpread is the even spread of groups prefixes over replicas (the
// picker's with no more groups than replicas; with more the fast model
// follows its placement, llmprefixplace.go), the replicas holding most
// first.
func PrefixSpread(groups, replicas int) []PrefixShare {
	if groups < replicas {
		return []PrefixShare{{1, groups}, {0, replicas - groups}}
	}
	q, r := groups/replicas, groups%replicas
	if r == 0 {
		return []PrefixShare{{q, replicas}}
	}
	return []PrefixShare{{q + 1, r}, {q, replicas - r}}
}

// prefixKind is cfg for a replica holding g of the prefixes.
func prefixKind(cfg LLMConfig, g int) LLMConfig {
	cfg.PrefixCacheBlocks = int64(g) * int64(cfg.PrefixHitTokens/cfg.WithDefaults().BlockSize)
	return cfg
}

// prefixAwareCheck is the groups of cfg under prefix-aware routing, or
// why the fast model does not follow them.
func prefixAwareCheck(cfg LLMConfig, in TokenDist) (int, error) {
	g, err := PrefixGroups(cfg)
	if err != nil {
		return 0, err
	}
	if !PrefixSticky(cfg, in) {
		return 0, ErrPrefixSpill
	}
	return g, nil
}

// steadyPrefixAware is SteadyLLMRouted with PrefixAware and a prefix
// cache on replicas (> 1) at rate a second each: the mixture of its kinds
// of replica, each SteadyLLM at its groups' share of the service's rate.
// Decoding and KVBlocks are a replica's mean over all of them (idle ones
// too), PrefixBlocks its mean cached prefixes'; the latencies, StepMs and
// preemptions are the requests' (weighted by each kind's share).
func steadyPrefixAware(cfg LLMConfig, rate float64, replicas int, in, out TokenDist) (LLMSteady, error) {
	return steadyPrefixAwareIn(cfg, rate, replicas, in, out, colocated)
}

// steadyPrefixAwareIn is steadyPrefixAware for replicas in mode
// (colocated, or a disaggregated service's prefill pool).
func steadyPrefixAwareIn(cfg LLMConfig, rate float64, replicas int, in, out TokenDist, mode steadyMode) (LLMSteady, error) {
	groups, err := prefixAwareCheck(cfg, in)
	if err != nil {
		return LLMSteady{}, err
	}
	total := rate * float64(replicas)
	per := float64(cfg.PrefixHitTokens / cfg.WithDefaults().BlockSize)
	var kinds []placedKind
	if groups <= replicas || mode != colocated {
		for _, k := range PrefixSpread(groups, replicas) {
			kinds = append(kinds, placedKind{float64(k.Groups), float64(k.Replicas) / float64(replicas)})
		}
	} else {
		// The picker's placement (llmprefixplace.go), its sojourns the
		// even spread's replica's.
		q := (groups + replicas - 1) / replicas
		even, _, err := steadyLLMParts(prefixKind(cfg, q), total*float64(q)/float64(groups), in, out, poissonArrivals, kvDriftZ, mode)
		if err != nil {
			return LLMSteady{}, err
		}
		p, _ := prefixPlacement(groups, replicas, total, even.E2EPoints, even.StepMs)
		kinds = placementKinds(p)
	}
	return steadyPrefixKinds(cfg, total, groups, replicas, per, kinds, in, out, mode)
}

// steadyPrefixKinds is the service's steady state with kinds of replica
// (their groups and share of the replicas) at total requests a second:
// a kind overloaded at its groups' share of total is taken as the next
// kind below that is not (the placements that overload a replica are
// past the service's capacity), ErrLLMOverload when none is.
func steadyPrefixKinds(cfg LLMConfig, total float64, groups, replicas int, per float64, kinds []placedKind, in, out TokenDist, mode steadyMode) (LLMSteady, error) {
	var res LLMSteady
	res.PrefixBlocks = float64(groups) * per / float64(replicas)
	sts := make([]LLMSteady, len(kinds))
	fold := 0.0
	for i := len(kinds) - 1; i >= 0; i-- {
		k := &kinds[i]
		if k.groups == 0 || k.share <= 0 {
			continue
		}
		st, _, err := steadyLLMParts(prefixKind(cfg, int(math.Round(k.groups))), total*k.groups/float64(groups), in, out, poissonArrivals, kvDriftZ, mode)
		if errors.Is(err, ErrLLMOverload) && i > 0 && kinds[i-1].groups > 0 {
			fold += k.share
			k.share = 0
			continue
		}
		if err != nil {
			return LLMSteady{}, err
		}
		k.share += fold
		fold = 0
		sts[i] = st
	}
	var parts []mixPart
	wsum := 0.0
	for _, k := range kinds {
		wsum += k.share * k.groups
	}
	for i, k := range kinds {
		if k.groups == 0 || k.share <= 0 {
			continue
		}
		st := sts[i]
		share := k.share * k.groups / wsum // of the requests
		res.Decoding += k.share * st.Decoding
		res.KVBlocks += k.share * st.KVBlocks
		res.StepMs += share * st.StepMs
		res.PreemptionsPer1k += share * st.PreemptionsPer1k
		res.PreemptionDelayMs += share * st.PreemptionDelayMs
		parts = append(parts, mixPart{share, st})
	}
	if len(parts) == 1 {
		st := parts[0].st
		st.Decoding, st.KVBlocks, st.PrefixBlocks = res.Decoding, res.KVBlocks, res.PrefixBlocks
		return st, nil
	}
	mixSteady(&res, parts)
	return res, nil
}

// mixPart is one kind of replica's steady state and its share of the
// requests.
type mixPart struct {
	w  float64
	st LLMSteady
}

// mixSteady sets res's TTFT, TPOT and E2E means, quantiles and points to
// the mixture of parts'.
func mixSteady(res *LLMSteady, parts []mixPart) {
	type dist struct {
		mean, p50, p95, p99 *float64
		points              *[]float64
		of                  func(s *LLMSteady) (float64, float64, float64, float64, []float64)
	}
	for _, d := range []dist{
		{&res.TTFTMeanMs, &res.TTFTP50Ms, &res.TTFTP95Ms, &res.TTFTP99Ms, &res.TTFTPoints, func(s *LLMSteady) (float64, float64, float64, float64, []float64) {
			return s.TTFTMeanMs, s.TTFTP50Ms, s.TTFTP95Ms, s.TTFTP99Ms, s.TTFTPoints
		}},
		{&res.TPOTMeanMs, &res.TPOTP50Ms, &res.TPOTP95Ms, &res.TPOTP99Ms, &res.TPOTPoints, func(s *LLMSteady) (float64, float64, float64, float64, []float64) {
			return s.TPOTMeanMs, s.TPOTP50Ms, s.TPOTP95Ms, s.TPOTP99Ms, s.TPOTPoints
		}},
		{&res.E2EMeanMs, &res.E2EP50Ms, &res.E2EP95Ms, &res.E2EP99Ms, &res.E2EPoints, func(s *LLMSteady) (float64, float64, float64, float64, []float64) {
			return s.E2EMeanMs, s.E2EP50Ms, s.E2EP95Ms, s.E2EP99Ms, s.E2EPoints
		}},
	} {
		var cdfs []quantileCDF
		mean := 0.0
		for _, p := range parts {
			m, a, b, c, pts := d.of(&p.st)
			mean += p.w * m
			cdfs = append(cdfs, newQuantileCDF(pts, a, b, c))
		}
		q := func(p float64) float64 { return mixQuantile(parts, cdfs, p) }
		*d.mean, *d.p50, *d.p95, *d.p99 = mean, q(0.50), q(0.95), q(0.99)
		pts := make([]float64, LLMQuantilePoints)
		for i := range pts {
			pts[i] = q((float64(i) + 0.5) / LLMQuantilePoints)
		}
		*d.points = pts
	}
}

// quantileCDF is a distribution known by its quantiles: LLMQuantilePoints
// points and p50, p95, p99, the CDF linear between them.
type quantileCDF struct{ x, p []float64 }

func newQuantileCDF(points []float64, p50, p95, p99 float64) quantileCDF {
	var c quantileCDF
	add := func(x, p float64) { c.x, c.p = append(c.x, x), append(c.p, p) }
	extra := []struct{ p, x float64 }{{0.50, p50}, {0.95, p95}, {0.99, p99}}
	for i, x := range points {
		p := (float64(i) + 0.5) / float64(len(points))
		for len(extra) > 0 && extra[0].p < p {
			add(extra[0].x, extra[0].p)
			extra = extra[1:]
		}
		add(x, p)
	}
	for _, e := range extra {
		add(e.x, e.p)
	}
	// Quantiles are not decreasing in p; make the x's so.
	for i := 1; i < len(c.x); i++ {
		c.x[i] = math.Max(c.x[i], c.x[i-1])
	}
	return c
}

// at is P(X <= x).
func (c quantileCDF) at(x float64) float64 {
	n := len(c.x)
	if x < c.x[0] {
		return 0
	}
	if x >= c.x[n-1] {
		return 1
	}
	i, _ := slices.BinarySearch(c.x, x)
	for i < n-1 && c.x[i] <= x {
		i++
	}
	// c.x[i-1] <= x < c.x[i]
	a, b := c.x[i-1], c.x[i]
	return c.p[i-1] + (x-a)/(b-a)*(c.p[i]-c.p[i-1])
}

// mixQuantile is the p-quantile of the mixture of cdfs weighted by
// parts' w.
func mixQuantile(parts []mixPart, cdfs []quantileCDF, p float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cdfs {
		lo, hi = math.Min(lo, c.x[0]), math.Max(hi, c.x[len(c.x)-1])
	}
	f := func(x float64) float64 {
		s := 0.0
		for i, c := range cdfs {
			s += parts[i].w * c.at(x)
		}
		return s
	}
	for range 60 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if f(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// PrefixAwareCapacity is the highest rate (requests a second, the whole
// service) replicas replicas of cfg serve behind the prefix-aware picker
// with cfg's prefixes (the fast model's, within 0.5%): with no more
// prefixes than replicas the busiest replica's (one prefix each) over its
// share; with more, the picker's placement's (llmprefixplace.go) expected
// busiest replica's: m groups on average, the capacity of a replica
// holding m (rounded up) over its share m/G. One replica holds every
// prefix (LLMCapacity). ErrPrefixSpill where the picker's prefixes
// spill.
func PrefixAwareCapacity(cfg LLMConfig, replicas int, in, out TokenDist) (float64, error) {
	if replicas <= 1 {
		return LLMCapacity(cfg, in, out)
	}
	groups, err := prefixAwareCheck(cfg, in)
	if err != nil {
		return 0, err
	}
	k := PrefixSpread(groups, replicas)[0] // the replicas holding most
	c, err := LLMCapacity(prefixKind(cfg, k.Groups), in, out)
	if err != nil {
		return 0, err
	}
	if groups <= replicas {
		return c * float64(groups) / float64(k.Groups), nil
	}
	// The placement at half the even spread's capacity (the spread of
	// the picker's placement hardly changes with the load: 30% and 60%
	// alike in the exact model), its sojourns that replica's.
	even := c * float64(groups) / float64(k.Groups)
	st, err := SteadyLLM(prefixKind(cfg, k.Groups), 0.5*c, in, out)
	if err != nil {
		return 0, err
	}
	_, m := prefixPlacement(groups, replicas, 0.5*even, st.E2EPoints, st.StepMs)
	if top := int(math.Ceil(m - 1e-9)); top != k.Groups {
		if c, err = LLMCapacity(prefixKind(cfg, top), in, out); err != nil {
			return 0, err
		}
	}
	return c * float64(groups) / m, nil
}
