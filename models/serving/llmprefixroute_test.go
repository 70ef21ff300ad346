package serving

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The llm-d picker keeps each prefix on the replica it first sent it
// to: the exact model's routes of G groups over R replicas (8B on an
// H100, prompts of a 1,024-token prefix and 64 to 448 more, outputs 64 to
// 256) against the fast model's (SteadyLLMRouted with PrefixAware and the
// prefixes' cache), on 4 and 8 replicas, at 10% to 80% of the service's
// capacity under the picker (PrefixAwareCapacity). With G <= R the
// picker gives each group a replica of its own (G < R: the other R - G
// replicas get no request) and the fast model is within 5% of the exact
// one on mean and p95 TTFT, TPOT and end-to-end latency at every load.
// With more groups than replicas (4R, 100) the fast model's even spread
// holds at 10% of capacity only: the picker's first placements (the
// fewest outstanding when a group's first request arrives) are uneven
// (6/3/5/4/4/6/2/2 of 32 groups on 8 replicas), and its busiest replica
// leads the service's latency as the load grows, where the fast model is
// optimistic (logged, not held): 100 on 4 within 5% to 60% and 9% under
// on p95 TPOT at 80%; 16 on 4 and 100 on 8 14% and 13% under on p95
// TPOT at 60%; 32 on 8 10% and 37% under at 30% and 60%; at 80% of the
// even spread's capacity 16 on 4 and 32 on 8 overload a replica.
// Before the fast model followed the picker it held every prefix on every
// replica and spread the load over all R: G = 1 on 4 replicas at 80% of
// one replica's capacity was a fourth of the load a replica.
func TestPrefixAwareFastModelAgainstExact(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	in := TokenDist{Kind: Uniform, Min: 1024 + 64, Max: 1024 + 448}
	out := TokenDist{Kind: Uniform, Min: 64, Max: 256}
	for _, r := range []int{4, 8} {
		for _, g := range []int{1, r / 2, r, 4 * r, 100} {
			fc := cfg
			fc.PrefixHitTokens, fc.PrefixCacheBlocks = 1024, int64(g)*64
			capS, err := PrefixAwareCapacity(fc, r, in, out)
			require.NoError(t, err)
			for _, share := range []float64{0.1, 0.3, 0.6, 0.8} {
				held := g <= r || share <= 0.1
				if !held && testing.Short() {
					continue
				}
				rate := share * capS
				rng := rand.New(rand.NewPCG(21, 22))
				reqs := PoissonLLMRequests(rng, rate, 4000*min(r, g), in, out)
				for i := range reqs {
					reqs[i].PrefixID, reqs[i].PrefixTokens = 1+rng.IntN(g), 1024
				}
				x, err := SimulateLLMRouted(cfg, r, PrefixAware, reqs)
				require.NoError(t, err)
				per := make([]int, r)
				for _, k := range x.Routed {
					per[k]++
				}
				f, err := SteadyLLMRouted(fc, rate/float64(r), r, PrefixAware, in, out)
				require.NoError(t, err)
				want := []float64{Mean(x.TTFTMs), InterpQuantile(x.TTFTMs, .95), Mean(x.TPOTMs), InterpQuantile(x.TPOTMs, .95), Mean(x.E2EMs), InterpQuantile(x.E2EMs, .95)}
				got := []float64{f.TTFTMeanMs, f.TTFTP95Ms, f.TPOTMeanMs, f.TPOTP95Ms, f.E2EMeanMs, f.E2EP95Ms}
				msg := fmt.Sprintf("R %d, G %d, %.0f%% (%.1f/s)", r, g, 100*share, rate)
				t.Logf("%s requests a replica %v: TTFT %.1f/%.1f p95 %.1f/%.1f, TPOT %.2f/%.2f p95 %.2f/%.2f, E2E %.0f/%.0f p95 %.0f/%.0f (fast/exact ms)", msg, per,
					got[0], want[0], got[1], want[1], got[2], want[2], got[3], want[3], got[4], want[4], got[5], want[5])
				if g < r {
					// The picker never sends a request to a replica
					// holding none of the groups.
					for k := g; k < r; k++ {
						require.Zero(t, per[k], msg)
					}
				}
				if !held {
					continue
				}
				for i, what := range []string{"mean TTFT", "p95 TTFT", "mean TPOT", "p95 TPOT", "mean E2E", "p95 E2E"} {
					require.InEpsilon(t, want[i], got[i], 0.05, "%s: %s", msg, what)
				}
			}
		}
	}
}

// The picker's spread by hand: 10 groups on 4 replicas are 3, 3, 2, 2;
// 2 on 4 leave two replicas idle; 8 on 4 are 2 each. A prefix of 64
// blocks is sticky below 96 blocks of prompt (3 x 64/95 = 2.02 > 2) and
// not at 96 (3 x 64/96 = 2: a replica without it and the shortest queue
// ties one holding it with the longest).
func TestPrefixSpreadByHand(t *testing.T) {
	require.Equal(t, []PrefixShare{{3, 2}, {2, 2}}, PrefixSpread(10, 4))
	require.Equal(t, []PrefixShare{{1, 2}, {0, 2}}, PrefixSpread(2, 4))
	require.Equal(t, []PrefixShare{{2, 4}}, PrefixSpread(8, 4))
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192, PrefixHitTokens: 1024, PrefixCacheBlocks: 3 * 64}
	require.True(t, PrefixSticky(cfg, TokenDist{Kind: Uniform, Min: 1100, Max: 1535}))
	require.False(t, PrefixSticky(cfg, TokenDist{Kind: Uniform, Min: 1100, Max: 1536}))
	g, err := PrefixGroups(cfg)
	require.NoError(t, err)
	require.Equal(t, 3, g)
	_, err = SteadyLLMRouted(cfg, 1, 4, PrefixAware, TokenDist{Kind: Uniform, Min: 1100, Max: 2048}, TokenDist{Mean: 100})
	require.ErrorIs(t, err, ErrPrefixSpill)
}

// The service's capacity under the picker follows its groups: one group
// is one replica's whatever the replicas (the rest idle); R groups on R
// replicas R times that; 4R groups R times a replica holding 4 of them,
// which serves no less than one holding all 4R (more of its cache free). A replica holds its own groups' blocks, averaged over all R
// (idle ones none).
func TestPrefixAwareCapacityByHand(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192, PrefixHitTokens: 1024}
	in := TokenDist{Kind: Uniform, Min: 1024 + 64, Max: 1024 + 448}
	out := TokenDist{Kind: Uniform, Min: 64, Max: 256}
	with := func(g int) LLMConfig { c := cfg; c.PrefixCacheBlocks = int64(g) * 64; return c }
	one, err := LLMCapacity(with(1), in, out)
	require.NoError(t, err)
	four, err := LLMCapacity(with(4), in, out)
	require.NoError(t, err)
	all, err := LLMCapacity(with(16), in, out)
	require.NoError(t, err)
	require.GreaterOrEqual(t, four, all)
	for _, c := range []struct {
		g, r int
		want float64
	}{{1, 4, one}, {2, 4, 2 * one}, {4, 4, 4 * one}, {16, 4, 4 * four}} {
		got, err := PrefixAwareCapacity(with(c.g), c.r, in, out)
		require.NoError(t, err)
		require.InDelta(t, c.want, got, 1e-9, "G %d R %d", c.g, c.r)
		st, err := SteadyLLMRouted(with(c.g), 0.5*got/float64(c.r), c.r, PrefixAware, in, out)
		require.NoError(t, err)
		require.InDelta(t, float64(c.g*64)/float64(c.r), st.PrefixBlocks, 1e-9)
	}
}
