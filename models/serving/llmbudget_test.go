package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// With a small token budget (vLLM's --max-num-batched-tokens 2048) the
// prompts that arrive together fill a step, and a prompt waits for those
// before it: once they are prefilled the whole budget is its own. The
// fast model's TTFT on Llama-3-8B on an A100-80GB at 12 requests/s (about
// 85% of its capacity) is within 5% of the exact model's on the mean and
// 10% on p95; a model that kept charging a later step for the others'
// prompts already done advanced a prompt one token a step behind them,
// and took seconds to evaluate.
func TestSteadyLLMSmallBudget(t *testing.T) {
	roof, _ := RooflineFor("A100-80GB")
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: roof, TP: 1}, MaxModelLen: 8192, MaxNumBatchedTokens: 2048}
	in := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	f, err := SteadyLLM(cfg, 12, in, out)
	require.NoError(t, err)
	ex, err := SimulateLLM(cfg, PoissonLLMRequests(rand.New(rand.NewPCG(5, 6)), 12, 10000, in, out))
	require.NoError(t, err)
	t.Logf("TTFT mean %.2f/%.2f p95 %.2f/%.2f TPOT mean %.2f/%.2f p95 %.2f/%.2f (fast/exact)", f.TTFTMeanMs, Mean(ex.TTFTMs), f.TTFTP95Ms, InterpQuantile(ex.TTFTMs, .95),
		f.TPOTMeanMs, Mean(ex.TPOTMs), f.TPOTP95Ms, InterpQuantile(ex.TPOTMs, .95))
	require.InEpsilon(t, Mean(ex.TTFTMs), f.TTFTMeanMs, 0.05)
	require.InEpsilon(t, InterpQuantile(ex.TTFTMs, .95), f.TTFTP95Ms, 0.10)
}
