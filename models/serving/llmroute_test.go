package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func routeCfg(t *testing.T) LLMConfig {
	return LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, StepOverheadMs: 2, MaxModelLen: 8192}
}

// One replica behind any router is the single-replica model, request for
// request.
func TestRoutedOneReplicaIsSimulateLLM(t *testing.T) {
	cfg := routeCfg(t)
	reqs := PoissonLLMRequests(rand.New(rand.NewPCG(7, 8)), 20, 1500,
		TokenDist{Kind: Uniform, Min: 50, Max: 3000}, TokenDist{Kind: Uniform, Min: 1, Max: 600})
	one, err := SimulateLLM(cfg, reqs)
	require.NoError(t, err)
	for _, r := range []Router{RoundRobin, LeastOutstanding, PrefixAware} {
		got, err := SimulateLLMRouted(cfg, 1, r, reqs)
		require.NoError(t, err)
		require.Equal(t, one.TTFTMs, got.TTFTMs, r.String())
		require.Equal(t, one.TPOTMs, got.TPOTMs, r.String())
		require.Equal(t, one.E2EMs, got.E2EMs, r.String())
		require.Equal(t, one.Steps, got.Steps, r.String())
		require.Equal(t, one.Preemptions, got.Preemptions, r.String())
	}
}

// Round robin over two replicas is two independent replicas, one serving
// the even requests and one the odd.
func TestRoundRobinIsIndependentReplicas(t *testing.T) {
	cfg := routeCfg(t)
	reqs := PoissonLLMRequests(rand.New(rand.NewPCG(9, 10)), 40, 1000,
		TokenDist{Kind: Uniform, Min: 50, Max: 3000}, TokenDist{Kind: Uniform, Min: 1, Max: 600})
	got, err := SimulateLLMRouted(cfg, 2, RoundRobin, reqs)
	require.NoError(t, err)
	for k := range 2 {
		var part []LLMRequest
		for i := k; i < len(reqs); i += 2 {
			part = append(part, reqs[i])
		}
		alone, err := SimulateLLM(cfg, part)
		require.NoError(t, err)
		for j, i := 0, k; i < len(reqs); j, i = j+1, i+2 {
			require.Equal(t, k, got.Routed[i])
			require.Equal(t, alone.TTFTMs[j], got.TTFTMs[i])
			require.Equal(t, alone.E2EMs[j], got.E2EMs[i])
		}
		require.Equal(t, alone.Steps, got.Replicas[k].Steps)
	}
}

// A long request (2,000 output tokens: about 2,000 decode steps of 10 ms)
// holds replica 0; a short one goes to replica 1 and is done within
// 50 ms. A third arriving at 1 s finds replica 0 with one request
// outstanding and replica 1 with none: least-outstanding sends it to
// replica 1, where it runs alone, so its TTFT is one step of its
// 100-token prefill plus the 2 ms step overhead; round robin sends it to
// replica 0 (request 2 mod 2), where it shares steps with the long
// decode and its first token comes later.
func TestLeastOutstandingByHand(t *testing.T) {
	cfg := routeCfg(t)
	reqs := []LLMRequest{{ArrivalMs: 0, Input: 100, Output: 2000}, {ArrivalMs: 10, Input: 100, Output: 2}, {ArrivalMs: 1000, Input: 100, Output: 2}}
	lo, err := SimulateLLMRouted(cfg, 2, LeastOutstanding, reqs)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 1}, lo.Routed)
	alone := cfg.Engine.StepTime(Step{Prefill: []Chunk{{Tokens: 100}}})*1e3 + 2
	require.InDelta(t, alone, lo.TTFTMs[2], 1e-9)
	rr, err := SimulateLLMRouted(cfg, 2, RoundRobin, reqs)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 0}, rr.Routed)
	require.Greater(t, rr.TTFTMs[2], lo.TTFTMs[2])
}

// Prefix caching: the second request with the same 1,024-token prefix
// (64 blocks of 16) prefills only its last 76 of 1,100 tokens, attending
// to the 1,024 cached; a 1,030-token prefix caches its 64 full blocks
// only (1,024 tokens); a prompt that is all prefix keeps its last block
// to compute (vLLM recomputes the last token: 63 blocks, 1,008 tokens).
func TestPrefixCacheSkipsTheCachedBlocks(t *testing.T) {
	cfg := routeCfg(t)
	cfg.RecordSteps = true
	step := func(tokens, cached int) float64 {
		return cfg.Engine.StepTime(Step{Prefill: []Chunk{{Tokens: tokens, Cached: cached}}})*1e3 + 2
	}
	for _, c := range []struct {
		input, prefix, hit int
	}{{1100, 1024, 1024}, {1100, 1030, 1024}, {1024, 1024, 1008}, {1100, 15, 0}} {
		reqs := []LLMRequest{{ArrivalMs: 0, Input: c.input, Output: 1, PrefixID: 1, PrefixTokens: c.prefix},
			{ArrivalMs: 10_000, Input: c.input, Output: 1, PrefixID: 1, PrefixTokens: c.prefix}}
		r, err := SimulateLLM(cfg, reqs)
		require.NoError(t, err)
		require.EqualValues(t, c.hit, r.PrefixHitTokens, "%+v", c)
		require.InDelta(t, step(c.input, 0), r.TTFTMs[0], 1e-9, "%+v", c)
		require.InDelta(t, step(c.input-c.hit, c.hit), r.TTFTMs[1], 1e-9, "%+v", c)
		require.Equal(t, c.input-c.hit, r.StepLog[1].PrefillTokens)
	}
	// Another prefix, or none, finds nothing.
	r, err := SimulateLLM(cfg, []LLMRequest{{Input: 1100, Output: 1, PrefixID: 1, PrefixTokens: 1024},
		{ArrivalMs: 10_000, Input: 1100, Output: 1, PrefixID: 2, PrefixTokens: 1024}, {ArrivalMs: 20_000, Input: 1100, Output: 1}})
	require.NoError(t, err)
	require.Zero(t, r.PrefixHitTokens)
}

// A cached prefix no request reads gives its blocks up when they are
// needed. A cache of 100 blocks of 16: A (1,100 tokens, prefix 1 of
// 1,024) holds 69 blocks and leaves prefix 1's 64 cached, 36 free; C
// (prefix 2) needs 69, so prefix 1 is evicted and C runs, leaving prefix
// 2's 64 cached; B (prefix 1 again) misses and evicts prefix 2. No hit,
// no preemption.
func TestPrefixCacheEvictsWhenBlocksAreNeeded(t *testing.T) {
	cfg := routeCfg(t)
	cfg.KVBlocks, cfg.MaxModelLen = 100, 1200
	r, err := SimulateLLM(cfg, []LLMRequest{{Input: 1100, Output: 1, PrefixID: 1, PrefixTokens: 1024},
		{ArrivalMs: 10_000, Input: 1100, Output: 1, PrefixID: 2, PrefixTokens: 1024},
		{ArrivalMs: 20_000, Input: 1100, Output: 1, PrefixID: 1, PrefixTokens: 1024}})
	require.NoError(t, err)
	require.Zero(t, r.PrefixHitTokens)
	require.Zero(t, r.Preemptions)
	require.EqualValues(t, 69, r.PeakBlocks, "64 cached and 5 of the running request's own")
}

// Eight system prompts of 2,000 tokens (125 blocks) before 100 tokens of
// question (131 blocks a prompt) over four replicas, one request every
// 2 s (each done before the next: no queue anywhere). Every request after
// the first on a replica that holds its prefix hits its 2,000 tokens, so
// the hits are exactly 2,000 x (requests - distinct replica and prefix
// pairs). Prefix-aware routing keeps each prefix on one replica: a
// holder scores at least 3 x 125/131 = 2.86 against at most 2 for any
// other replica, so there are 8 pairs; round robin spreads each prefix
// over every replica.
func TestPrefixAwareRoutingKeepsEachPrefixOnOneReplica(t *testing.T) {
	cfg := routeCfg(t)
	rng := rand.New(rand.NewPCG(11, 12))
	reqs := make([]LLMRequest, 400)
	for i := range reqs {
		reqs[i] = LLMRequest{ArrivalMs: float64(i) * 2000, Input: 2100, Output: 50, PrefixID: 1 + rng.IntN(8), PrefixTokens: 2000}
	}
	pairs := func(r RoutedResult) int {
		seen := map[[2]int]bool{}
		for i, k := range r.Routed {
			seen[[2]int{k, reqs[i].PrefixID}] = true
		}
		return len(seen)
	}
	pa, err := SimulateLLMRouted(cfg, 4, PrefixAware, reqs)
	require.NoError(t, err)
	rr, err := SimulateLLMRouted(cfg, 4, RoundRobin, reqs)
	require.NoError(t, err)
	require.Equal(t, 8, pairs(pa))
	require.Greater(t, pairs(rr), 8)
	require.EqualValues(t, 2000*(400-8), pa.PrefixHitTokens)
	require.EqualValues(t, 2000*(400-pairs(rr)), rr.PrefixHitTokens)
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	require.Less(t, mean(pa.TTFTMs), mean(rr.TTFTMs))
	t.Logf("pairs: prefix-aware %d, round robin %d; mean TTFT %.2f ms against %.2f ms", pairs(pa), pairs(rr), mean(pa.TTFTMs), mean(rr.TTFTMs))
}

func TestRoutedRefusesBadInput(t *testing.T) {
	cfg := routeCfg(t)
	_, err := SimulateLLMRouted(cfg, 0, RoundRobin, nil)
	require.ErrorContains(t, err, "replicas: 0 is below 1")
	_, err = SimulateLLMRouted(cfg, 2, Router(9), nil)
	require.ErrorContains(t, err, "router")
	_, err = SimulateLLMRouted(cfg, 2, RoundRobin, []LLMRequest{{Input: 10, Output: 1, PrefixID: 1, PrefixTokens: 11}})
	require.ErrorContains(t, err, "prefixTokens 11 is not in [0, input 10]")
	_, err = ParseRouter("random")
	require.ErrorContains(t, err, "round-robin, least-outstanding, prefix-aware")
}
