package services

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

// A disaggregated service in the run, by hand. Each replica is one
// prefill and two decode engines of Llama-3-8B on H100s whose every step
// takes 20 ms (a fitted step of a fixed time), serving 512-token prompts
// and 101-token outputs at 20 requests/s on one ready replica for an
// hour. A prompt's KV cache is 512 x 131,072 B = 67,108,864 B: 1.342 ms
// at 50 GB/s, and TTFT is the prefill pool's and that. The prefill
// engine's steps take 20 ms whatever they hold: a busy spell goes on
// while a step sees an arrival (1 - e^-(lambda x 20 ms)), so it lasts 20
// e^(20 lambda) ms against 1/lambda idle, and an arrival finds it idle
// (TTFT 20 ms, its own step) or busy (10 ms of the step on average, then
// its own: 30) in those shares. The run serves 20/s at its grid's 19.88
// (2% apart): busy 20 e^0.3976 = 29.77 ms against 50.30 idle, a share
// of 0.3717, and the prefill TTFT 20 + 10 x 0.3717 = 23.72 ms. Each
// decode engine gets
// 10/s; a request's 100 other tokens are 100 steps, and it first waits
// for the step in progress (10 ms on average, the engine always busy):
// TPOT 20 + 10 / 100 = 20.1 ms, E2E TTFT + 2,010 ms. By Little's law 20
// requests decode on each decode engine, 35.66 blocks each (the context
// 513 to 612 tokens, 562.5 / 16 + 1/2): the pool holds 2 x 713.1 of its
// 2 x blocks. The report gives both pools: 3 GPUs a replica, the prefill
// TTFT and the transfer summing to the service's TTFT.
func TestLLMServiceDisaggregatedByHand(t *testing.T) {
	l := llm8B(t)
	l.Config.Engine.StepModel = serving.Fitted
	l.Config.Engine.Fit = serving.StepFit{PerStepUS: 20_000}
	l.Input = serving.TokenDist{Kind: serving.Fixed, Mean: 512}
	l.Output = serving.TokenDist{Kind: serving.Fixed, Mean: 101}
	l.Disagg = &serving.Disagg{Prefill: l.Config, Decode: l.Config, PrefillReplicas: 1, DecodeReplicas: 2, Router: serving.RoundRobin, KVTransferGBps: 50}
	s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 20}, LLM: l}, Fixed{Replicas: 1})
	require.NoError(t, err)
	s.Advance(0, 3_600_000, 1, 1)
	x := s.Report().LLM
	require.NotNil(t, x)
	require.NotNil(t, x.Disagg)
	d := x.Disagg
	t.Logf("TTFT %.2f (prefill %.2f, transfer %.3f), TPOT %.3f, E2E %.1f ms; KV %.4f of %d blocks", x.TTFTMeanMs, d.PrefillTTFTMeanMs, d.KVTransferMeanMs, x.TPOTMeanMs, x.E2EMeanMs, x.KVCacheMean, x.KVCacheBlocks)
	require.Equal(t, 3, x.GPUsPerReplica)
	require.Equal(t, []int{1, 1, 2, 1}, []int{d.PrefillReplicas, d.PrefillTP, d.DecodeReplicas, d.DecodeTP})
	require.InDelta(t, 1.342177, d.KVTransferMeanMs, 1e-6)
	require.InDelta(t, x.TTFTMeanMs, d.PrefillTTFTMeanMs+d.KVTransferMeanMs, 1e-9)
	require.InEpsilon(t, 23.717, d.PrefillTTFTMeanMs, 0.002)
	// The run's grid serves 20/s at 19.88 (the nearest 2% point).
	require.InEpsilon(t, 20.1, x.TPOTMeanMs, 0.002)
	require.InEpsilon(t, x.TTFTMeanMs+2010, x.E2EMeanMs, 0.005)
	blocks := 2 * l.Config.Blocks()
	require.Equal(t, blocks, x.KVCacheBlocks)
	require.InEpsilon(t, 2*20*(562.5/16+0.5)/float64(blocks), x.KVCacheMean, 0.015)
}
