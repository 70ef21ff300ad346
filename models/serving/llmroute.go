package serving

import (
	"fmt"
	"math"
)

// Router names how a gateway spreads requests over an LLM service's
// replicas (SimulateLLMRouted). Each request is routed when it arrives,
// from the replicas' state at that moment.
type Router int

const (
	// RoundRobin sends request k to replica k mod c (Envoy's and IPVS's
	// round robin).
	RoundRobin Router = iota
	// LeastOutstanding sends a request to the replica with the fewest
	// requests routed to it and not finished (a least-request balancer
	// that sees every replica); ties to the lowest index.
	LeastOutstanding
	// PrefixAware is the llm-d endpoint picker's default profile: each
	// replica scores 3 x its prefix-cache score plus 2 x its queue score
	// and the highest score wins (weights 3 and 2 as Red Hat OpenShift
	// AI 3.4's "Configuring scheduler settings" documents the default).
	// The prefix-cache score is the share of the prompt's blocks the
	// picker believes the replica holds: the picker remembers where it
	// sent each prefix, not what the replica's cache still holds (the
	// Gateway API Inference Extension's prefix-cache-scorer); the queue
	// score is (most waiting - the replica's waiting) / (most - fewest),
	// 1 when all wait alike (its queue-scorer, on vllm:num_requests_waiting).
	// The picker breaks ties at random; here the fewest outstanding, then
	// the lowest index, so that runs repeat.
	PrefixAware
)

// String is the router's name in scenarios and reports.
func (r Router) String() string {
	switch r {
	case RoundRobin:
		return "round-robin"
	case LeastOutstanding:
		return "least-outstanding"
	case PrefixAware:
		return "prefix-aware"
	}
	return fmt.Sprintf("Router(%d)", int(r))
}

// ParseRouter reads a router's name (String's).
func ParseRouter(s string) (Router, error) {
	for _, r := range []Router{RoundRobin, LeastOutstanding, PrefixAware} {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("router %q is not one of round-robin, least-outstanding, prefix-aware", s)
}

// Prefix-aware routing's weights (PrefixAware).
const (
	prefixScoreWeight = 3.0
	queueScoreWeight  = 2.0
)

// RoutedResult is what a service of several replicas served.
type RoutedResult struct {
	// LLMResult is the service's whole: per-request TTFT, TPOT and E2E in
	// request order; counts, tokens, blocks and busy time summed over the
	// replicas; PeakBlocks the most one replica held; EndMs the last
	// finish. Its StepLog is empty (each replica's is in Replicas).
	LLMResult
	// Replicas are each replica's own result (their per-request slices
	// are the service's).
	Replicas []LLMResult
	// Routed is the replica each request was sent to.
	Routed []int
}

// SimulateLLMRouted serves reqs (sorted by arrival) on replicas identical
// replicas of cfg behind router. Between arrivals the replicas run on
// their own; a request is routed from their state at its arrival: the
// steps that started before it have run.
func SimulateLLMRouted(cfg LLMConfig, replicas int, router Router, reqs []LLMRequest) (RoutedResult, error) {
	cfg = cfg.WithDefaults()
	if replicas < 1 {
		return RoutedResult{}, fmt.Errorf("replicas: %d is below 1", replicas)
	}
	if router < RoundRobin || router > PrefixAware {
		return RoutedResult{}, fmt.Errorf("router %d is not one of round-robin, least-outstanding, prefix-aware", int(router))
	}
	if err := checkLLMRun(cfg, reqs); err != nil {
		return RoutedResult{}, err
	}
	out := newLLMOutcomes(len(reqs))
	reps := make([]*llmReplica, replicas)
	for k := range reps {
		reps[k] = newLLMReplica(&cfg, reqs, out)
	}
	// sent[k] are the prefixes the picker sent to replica k.
	sent := make([]map[int]bool, replicas)
	for k := range sent {
		sent[k] = map[int]bool{}
	}
	res := RoutedResult{Routed: make([]int, len(reqs))}
	bs := cfg.BlockSize
	for i, q := range reqs {
		for _, p := range reps {
			if err := p.advance(q.ArrivalMs); err != nil {
				return res, err
			}
		}
		k := 0
		switch router {
		case RoundRobin:
			k = i % replicas
		case LeastOutstanding:
			for j := 1; j < replicas; j++ {
				if reps[j].outstanding(q.ArrivalMs) < reps[k].outstanding(q.ArrivalMs) {
					k = j
				}
			}
		case PrefixAware:
			lo, hi := math.MaxInt, math.MinInt
			for _, p := range reps {
				lo, hi = min(lo, p.queueLen()), max(hi, p.queueLen())
			}
			match := 0.0
			if total := q.Input / bs; q.PrefixID != 0 && total > 0 {
				match = float64(q.PrefixTokens/bs) / float64(total)
			}
			best := math.Inf(-1)
			for j, p := range reps {
				s := queueScoreWeight
				if hi > lo {
					s = queueScoreWeight * float64(hi-p.queueLen()) / float64(hi-lo)
				}
				if sent[j][q.PrefixID] {
					s += prefixScoreWeight * match
				}
				if s > best || s == best && p.outstanding(q.ArrivalMs) < reps[k].outstanding(q.ArrivalMs) {
					best, k = s, j
				}
			}
			if q.PrefixID != 0 {
				sent[k][q.PrefixID] = true
			}
		}
		reps[k].route(i)
		res.Routed[i] = k
	}
	for _, p := range reps {
		if err := p.advance(math.Inf(1)); err != nil {
			return res, err
		}
	}
	res.TTFTMs, res.TPOTMs, res.E2EMs = out.ttft, out.tpot, out.e2e
	for _, p := range reps {
		r := p.result()
		res.Replicas = append(res.Replicas, r)
		res.Preemptions += r.Preemptions
		res.Steps += r.Steps
		res.Blocks += r.Blocks
		res.PeakBlocks = max(res.PeakBlocks, r.PeakBlocks)
		res.EndMs = max(res.EndMs, r.EndMs)
		res.BusyMs += r.BusyMs
		res.InputTokens += r.InputTokens
		res.OutputTokens += r.OutputTokens
		res.PrefixHitTokens += r.PrefixHitTokens
	}
	return res, nil
}
