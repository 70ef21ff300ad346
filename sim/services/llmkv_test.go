package services

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

// By hand, on Llama-3-8B H100 replicas whose every step takes 20 ms (a
// fitted step of a fixed time), serving 20 requests/s of 512-token
// prompts and 101-token outputs: two ready replicas for an hour (10/s
// each), then one (20/s). A request's prompt is one step and its 100
// other tokens 100 more, so it decodes for 2 s: by Little's law 20
// requests decode on a replica at 10/s and 40 at 20/s. Each holds
// blocks of 16 tokens for its context, 513 to 612 tokens over its life:
// a mean of 562.5 / 16 + 1/2 (the last block half full) = 35.66 blocks.
// A replica's cache (cfg.Blocks(), from its memory) then holds 713.1
// blocks at 10/s and 1,426.3 at 20/s: the peak share is the second, the
// mean over the 3 replica-hours (2 x 713.1 + 1,426.3) / 3 = 950.8
// blocks. TPOT is the step, 20 ms; E2E is TTFT and 100 steps, 2 s more.
// Within 1.5%: the run serves a rate with the nearest rate of its 2%
// grid (9.94 for 10, 19.88 for 20), where fewer decode.
func TestLLMServiceKVAndE2EByHand(t *testing.T) {
	l := llm8B(t)
	l.Config.Engine.StepModel = serving.Fitted
	l.Config.Engine.Fit = serving.StepFit{PerStepUS: 20_000}
	l.Input = serving.TokenDist{Kind: serving.Fixed, Mean: 512}
	l.Output = serving.TokenDist{Kind: serving.Fixed, Mean: 101}
	s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 20}, LLM: l}, Fixed{Replicas: 2})
	require.NoError(t, err)
	s.Advance(0, 3_600_000, 2, 2)
	s.Advance(3_600_000, 7_200_000, 1, 1)
	x := s.Report().LLM
	require.NotNil(t, x)
	blocks := float64(l.Config.Blocks())
	require.Equal(t, int64(blocks), x.KVCacheBlocks)
	perReq := 562.5/16 + 0.5
	t.Logf("KV mean %.4f peak %.4f of %.0f blocks (by hand %.4f, %.4f); TPOT %.2f, TTFT %.2f, E2E %.1f p50 %.1f p99 %.1f ms",
		x.KVCacheMean, x.KVCachePeak, blocks, 950.8/blocks, 40*perReq/blocks, x.TPOTMeanMs, x.TTFTMeanMs, x.E2EMeanMs, x.E2EP50Ms, x.E2EP99Ms)
	require.InEpsilon(t, 40*perReq/blocks, x.KVCachePeak, 0.015)
	require.InEpsilon(t, (2*20*perReq+40*perReq)/3/blocks, x.KVCacheMean, 0.015)
	require.InDelta(t, 20, x.TPOTMeanMs, 1e-6)
	require.InDelta(t, x.TTFTMeanMs+2000, x.E2EMeanMs, 1)
	// Every E2E is TTFT (20 to 40 ms: the rest of the step it arrived
	// in, then its own) and 2 s; the run's histogram buckets are 2% wide.
	require.InDelta(t, 2030, x.E2EP50Ms, 10+0.02*2030)
	require.InDelta(t, 2030, x.E2EP99Ms, 10+0.02*2030)
}
