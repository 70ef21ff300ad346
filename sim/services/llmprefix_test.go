package services

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

// A chat of 2 system prompts of 1,024 tokens (64 blocks) and 64 to 448
// tokens more behind the llm-d picker on four ready 8B H100 replicas:
// the picker keeps each prompt's prefix on the replica it first sent it
// to, so two replicas serve everything and two idle. At 1.5 replicas'
// worth of load (75% of the two busy replicas' capacity) the run's TTFT,
// TPOT and E2E are the exact routed model's (SimulateLLMRouted of 16,000
// requests) within 5% on mean and p95, where spreading the load over all
// four (as the fast model did, holding every prefix on every replica)
// is a third or more below on TTFT; above two replicas' capacity a
// backlog forms though four replicas are ready (the run was not
// overloaded). The KV cache holds a replica's own prefix on the busy two
// and none on the idle: 32 blocks a replica on average, not 128. Every
// prompt finds 1,024 of its 1,280 tokens (mean) cached: 80%.
func TestLLMServicePrefixAware(t *testing.T) {
	l := llm8B(t)
	l.Input = serving.TokenDist{Kind: serving.Uniform, Min: 1024 + 64, Max: 1024 + 448}
	l.Output = serving.TokenDist{Kind: serving.Uniform, Min: 64, Max: 256}
	l.Config.PrefixHitTokens, l.Config.PrefixCacheBlocks = 1024, 2*64
	pa := serving.PrefixAware
	l.Router = &pa
	one, err := serving.LLMCapacity(func() serving.LLMConfig { c := l.Config; c.PrefixCacheBlocks = 64; return c }(), l.Input, l.Output)
	require.NoError(t, err)
	rate := 1.5 * one
	run := func(rate float64) *LLMReport {
		s, err := New(Spec{Name: "chat", Load: serving.Load{Base: rate}, LLM: l}, Fixed{Replicas: 4})
		require.NoError(t, err)
		s.Advance(0, 3_600_000, 4, 4)
		r := s.Report()
		require.NotNil(t, r.LLM)
		return r.LLM
	}
	got := run(rate)
	rng := rand.New(rand.NewPCG(5, 6))
	reqs := serving.PoissonLLMRequests(rng, rate, 16000, l.Input, l.Output)
	for i := range reqs {
		reqs[i].PrefixID, reqs[i].PrefixTokens = 1+rng.IntN(2), 1024
	}
	ex, err := serving.SimulateLLMRouted(l.Config, 4, pa, reqs)
	require.NoError(t, err)
	spread, err := serving.SteadyLLM(l.Config, rate/4, l.Input, l.Output)
	require.NoError(t, err)
	want := []float64{serving.Mean(ex.TTFTMs), serving.InterpQuantile(ex.TTFTMs, .95), serving.Mean(ex.TPOTMs), serving.InterpQuantile(ex.TPOTMs, .95),
		serving.Mean(ex.E2EMs), serving.InterpQuantile(ex.E2EMs, .95)}
	have := []float64{got.TTFTMeanMs, got.TTFTP95Ms, got.TPOTMeanMs, got.TPOTP95Ms, got.E2EMeanMs, got.E2EP95Ms}
	t.Logf("at %.1f/s: TTFT %.1f/%.1f p95 %.1f/%.1f, TPOT %.2f/%.2f p95 %.2f/%.2f, E2E %.0f/%.0f p95 %.0f/%.0f (run/exact ms); spread over four %.1f/%.1f; KV %.4f, hits %.4f",
		rate, have[0], want[0], have[1], want[1], have[2], want[2], have[3], want[3], have[4], want[4], have[5], want[5], spread.TTFTMeanMs, spread.TTFTP95Ms, got.KVCacheMean, got.PrefixHitRate)
	for i, what := range []string{"mean TTFT", "p95 TTFT", "mean TPOT", "p95 TPOT", "mean E2E", "p95 E2E"} {
		require.InEpsilon(t, want[i], have[i], 0.05, what)
	}
	require.Less(t, spread.TTFTMeanMs, 0.75*want[0])
	require.InDelta(t, 1024/1280.0, got.PrefixHitRate, 1e-9)
	st, err := serving.SteadyLLMRouted(l.Config, rate/4, 4, pa, l.Input, l.Output)
	require.NoError(t, err)
	require.InDelta(t, 32, st.PrefixBlocks, 1e-9)
	require.InEpsilon(t, (st.KVBlocks+32)/float64(l.Config.Blocks()), got.KVCacheMean, 0.02)
	// Above the two busy replicas' capacity, four ready replicas fall
	// behind.
	s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 2.2 * one}, LLM: l}, Fixed{Replicas: 4})
	require.NoError(t, err)
	require.True(t, s.overloaded(2.2*one, 4))
	require.False(t, s.overloaded(1.9*one, 4))
}

// TestLLMServiceDisaggregatedByHand's replica with a shared prefix: the
// prompts' first 256 tokens (16 blocks) are one of 2 system prompts,
// which the prefill engine caches. Its steps take 20 ms whatever they
// hold, so TTFT and TPOT are as without the prefix (23.72 ms of prefill,
// 20.1 ms a token); the transfer still carries the whole 512-token
// prompt (1.342 ms at 50 GB/s), and the decode engines hold each
// request's whole context as their own: 20 requests decoding on each at
// 562.5 / 16 + 1/2 blocks, none for prefixes. Half the prompt tokens
// served come from the prefill engine's cache.
func TestLLMServiceDisaggregatedPrefixByHand(t *testing.T) {
	l := llm8B(t)
	l.Config.Engine.StepModel = serving.Fitted
	l.Config.Engine.Fit = serving.StepFit{PerStepUS: 20_000}
	l.Input = serving.TokenDist{Kind: serving.Fixed, Mean: 512}
	l.Output = serving.TokenDist{Kind: serving.Fixed, Mean: 101}
	l.Config.PrefixHitTokens, l.Config.PrefixCacheBlocks = 256, 2*16
	l.Disagg = &serving.Disagg{Prefill: l.Config, Decode: l.Config, PrefillReplicas: 1, DecodeReplicas: 2, Router: serving.RoundRobin, KVTransferGBps: 50}
	s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 20}, LLM: l}, Fixed{Replicas: 1})
	require.NoError(t, err)
	s.Advance(0, 3_600_000, 1, 1)
	x := s.Report().LLM
	require.NotNil(t, x)
	d := x.Disagg
	t.Logf("TTFT %.2f (prefill %.2f, transfer %.3f), TPOT %.3f; KV %.4f of %d blocks; hits %.3f", x.TTFTMeanMs, d.PrefillTTFTMeanMs, d.KVTransferMeanMs, x.TPOTMeanMs, x.KVCacheMean, x.KVCacheBlocks, x.PrefixHitRate)
	require.InDelta(t, 1.342177, d.KVTransferMeanMs, 1e-6)
	require.InEpsilon(t, 23.717, d.PrefillTTFTMeanMs, 0.002)
	require.InEpsilon(t, 20.1, x.TPOTMeanMs, 0.002)
	blocks := 2 * l.Config.Blocks()
	require.InEpsilon(t, 2*20*(562.5/16+0.5)/float64(blocks), x.KVCacheMean, 0.015)
	require.Equal(t, 0.5, x.PrefixHitRate)
}
