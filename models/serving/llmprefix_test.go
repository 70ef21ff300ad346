package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fast model's prefix cache against the exact model's: a chat whose
// prompts are one of 4 system prompts of 1,024 tokens (64 blocks) then a
// question of 64 to 512 tokens, outputs 64 to 256, on Llama-3-8B on one
// H100. The exact model follows each request's prefix through the cache
// (the first of each prefix misses; the rest hit 1,024 tokens); the fast
// model takes every prompt as hitting 1,024 tokens, with the four
// prefixes' 256 blocks held. 20,000 requests at each rate: within 5% on
// mean and p95 TTFT and TPOT from a trickle to 80% of the fast model's
// capacity with the cache, which is above its capacity without it.
func TestSteadyLLMPrefixAgainstExact(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	in := TokenDist{Kind: Uniform, Min: 1024 + 64, Max: 1024 + 512}
	out := TokenDist{Kind: Uniform, Min: 64, Max: 256}
	fast := cfg
	fast.PrefixHitTokens, fast.PrefixCacheBlocks = 1024, 4*64
	capWith, err := LLMCapacity(fast, in, out)
	require.NoError(t, err)
	capWithout, err := LLMCapacity(cfg, in, out)
	require.NoError(t, err)
	t.Logf("capacity %.1f requests/s with the prefix cache, %.1f without", capWith, capWithout)
	require.Greater(t, capWith, capWithout)
	for _, share := range []float64{0.05, 0.3, 0.6, 0.8} {
		rate := share * capWith
		rng := rand.New(rand.NewPCG(21, 22))
		reqs := PoissonLLMRequests(rng, rate, 20000, in, out)
		for i := range reqs {
			reqs[i].PrefixID, reqs[i].PrefixTokens = 1+rng.IntN(4), 1024
		}
		ex, err := SimulateLLM(cfg, reqs)
		require.NoError(t, err)
		// Every request but each prefix's first hits, and but the few
		// that arrive while the prefix's first is still prefilling.
		require.LessOrEqual(t, ex.PrefixHitTokens, int64(1024*(20000-4)))
		require.GreaterOrEqual(t, ex.PrefixHitTokens, int64(1024*(20000-4-20)))
		f, err := SteadyLLM(fast, rate, in, out)
		require.NoError(t, err)
		want := []float64{Mean(ex.TTFTMs), InterpQuantile(ex.TTFTMs, .95), Mean(ex.TPOTMs), InterpQuantile(ex.TPOTMs, .95)}
		got := []float64{f.TTFTMeanMs, f.TTFTP95Ms, f.TPOTMeanMs, f.TPOTP95Ms}
		t.Logf("at %.1f/s (%.0f%%): TTFT %.2f/%.2f p95 %.2f/%.2f, TPOT %.2f/%.2f p95 %.2f/%.2f (fast/exact, ms)", rate, 100*share,
			got[0], want[0], got[1], want[1], got[2], want[2], got[3], want[3])
		for i, what := range []string{"mean TTFT", "p95 TTFT", "mean TPOT", "p95 TPOT"} {
			require.InEpsilon(t, want[i], got[i], 0.05, "at %.0f%%: %s", 100*share, what)
		}
	}
}

// A cached prefix as long as a prompt leaves nothing to prefill: refused;
// prefixes that leave no room for one request: refused.
func TestSteadyLLMPrefixRefusals(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192, PrefixHitTokens: 1024}
	_, err := SteadyLLM(cfg, 1, TokenDist{Kind: Uniform, Min: 500, Max: 2000}, TokenDist{Mean: 100})
	require.ErrorContains(t, err, "prefixHitTokens: 1024 cached tokens leave nothing to prefill of a")
	cfg.PrefixCacheBlocks = cfg.WithDefaults().Blocks()
	_, err = SteadyLLM(cfg, 1, TokenDist{Mean: 2000}, TokenDist{Mean: 100})
	require.ErrorContains(t, err, "prefix: the cached prefixes'")
}
