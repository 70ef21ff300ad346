package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// constStep is Llama-3-8B on an H100 whose every step takes ms, whatever
// it runs (a fitted step of a fixed time and nothing else): the
// latencies follow from the step by hand.
func constStep(t *testing.T, ms float64) LLMConfig {
	return LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1, StepModel: Fitted, Fit: StepFit{PerStepUS: ms * 1000}}, MaxModelLen: 8192}
}

// By hand, on an engine whose every step takes 20 ms, at 0.5 requests/s
// of 512-token prompts and outputs uniform over 1..201 tokens, with 5 ms
// of API time after the last token: a request's first token comes with
// its prompt's one step, after the rest of the step it arrived in (0 to
// 20 ms), so TTFT is 20 to 40 ms; each later token is one step (TPOT 20
// ms exactly); E2E is TTFT + (o - 1) x 20 + 5. (o - 1) x 20 is uniform
// over 0..4,000 ms: mean 2,000, p50 2,000, p95 3,800, p99 3,960, each
// plus 25 to 45 ms, and the grid of output lengths 2 tokens (40 ms)
// apart. The exact model on 4,000 such requests agrees within 3%.
func TestSteadyLLME2EByHand(t *testing.T) {
	cfg := constStep(t, 20)
	cfg.FinishOverheadMs = 5
	in := TokenDist{Kind: Fixed, Mean: 512}
	out := TokenDist{Kind: Uniform, Min: 1, Max: 201}
	f, err := SteadyLLM(cfg, 0.5, in, out)
	require.NoError(t, err)
	require.InDelta(t, 20, f.TPOTMeanMs, 1e-9)
	require.InDelta(t, 20, f.TPOTP99Ms, 1e-9)
	require.GreaterOrEqual(t, f.TTFTP50Ms, 20.0)
	require.LessOrEqual(t, f.TTFTP99Ms, 40.0)
	require.InDelta(t, f.TTFTMeanMs+2000+5, f.E2EMeanMs, 1)
	for _, c := range []struct {
		got, out float64
	}{{f.E2EP50Ms, 2000}, {f.E2EP95Ms, 3800}, {f.E2EP99Ms, 3960}} {
		require.GreaterOrEqual(t, c.got, c.out+25-40)
		require.LessOrEqual(t, c.got, c.out+45+40)
	}
	require.Len(t, f.E2EPoints, LLMQuantilePoints)
	ex, err := SimulateLLM(cfg, PoissonLLMRequests(rand.New(rand.NewPCG(5, 6)), 0.5, 4000, in, out))
	require.NoError(t, err)
	t.Logf("E2E mean %.0f/%.0f p50 %.0f/%.0f p95 %.0f/%.0f p99 %.0f/%.0f (fast/exact, ms)", f.E2EMeanMs, Mean(ex.E2EMs),
		f.E2EP50Ms, InterpQuantile(ex.E2EMs, .5), f.E2EP95Ms, InterpQuantile(ex.E2EMs, .95), f.E2EP99Ms, InterpQuantile(ex.E2EMs, .99))
	require.InEpsilon(t, Mean(ex.E2EMs), f.E2EMeanMs, 0.03)
	require.InEpsilon(t, InterpQuantile(ex.E2EMs, .95), f.E2EP95Ms, 0.03)
	require.InEpsilon(t, InterpQuantile(ex.E2EMs, .99), f.E2EP99Ms, 0.03)
}
