package scenarios

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

// The LLM serving example (scenarios/examples/llm-serving/chat): Llama-3-8B
// chat on H100s, KEDA on vllm:num_requests_waiting, 60 +- 40 requests/s
// over two days, and the same on B200s. Figures by hand:
//   - arrivals: the cosine integrates to 0 over whole days, so 60/s x
//     172,800 s = 10,368,000;
//   - dropped: the one initial replica is bound at 0 and serves after its
//     100 s cold start (60 s pull, 40 s load); until then the requests
//     find no endpoint: the integral of 60 + 40 cos(2 pi (t - 14 h) / 24 h)
//     over [0, 100 s], about 2,530;
//   - output tokens: a normal of mean 256 and deviation 128 clamped below
//     at 16 has mean 256 + 128 x 0.01179 = 257.51 tokens a request served;
//   - replicas: the 100/s peak needs at least 100 / 37.5 (a replica's
//     capacity) = 2.7 ready, so 3.
func TestExampleLLMServing(t *testing.T) {
	b, res := runExample(t, "examples/llm-serving/chat/scenario.yaml", "")
	r := res.Services[0]
	require.InEpsilon(t, 10_368_000, r.Arrived, 1e-6)
	day, peak := 86400.0, 14*3600.0
	dropped := 60*100 + 40*day/(2*math.Pi)*(math.Sin(2*math.Pi*(100-peak)/day)-math.Sin(2*math.Pi*(0-peak)/day))
	require.InEpsilon(t, dropped, r.Dropped, 0.01)
	x := r.LLM
	require.NotNil(t, x)
	require.InEpsilon(t, 257.51*r.Served, x.OutputTokens, 1e-3)
	require.Less(t, x.TTFTP95Ms, 500.0)
	require.Less(t, x.TPOTP95Ms, 50.0)
	require.InEpsilon(t, r.Served/r.Arrived, x.TTFTAttainment, 0.01)
	capacity := b.Config.Services[0].Spec.LLM.CapacityPerReplica
	require.InDelta(t, 37.5, capacity, 0.5)
	peakReady := 0.0
	for _, p := range r.Timeline {
		peakReady = math.Max(peakReady, p.Ready)
	}
	require.GreaterOrEqual(t, peakReady, 2.7)
	// The mean load needs 60 / 37.5 = 1.6 replicas ready on average.
	require.Greater(t, r.ReadyHours, 48*60/capacity)
	// End to end: a request's E2E is its TTFT and its other output
	// tokens at its TPOT, independent of its length, so the means add:
	// TTFT + (257.51 - 1) x TPOT.
	require.InEpsilon(t, x.TTFTMeanMs+256.51*x.TPOTMeanMs, x.E2EMeanMs, 0.005)
	require.Less(t, x.E2EP50Ms, x.E2EP95Ms)
	require.Less(t, x.E2EP95Ms, x.E2EP99Ms)
	// KV cache by Little's law: the requests served decode for 256.51
	// steps of about the mean TPOT each, holding 42.60 blocks on average
	// (a context of the prompt's 514.57 tokens and, weighted by the
	// decode steps, half the output's: E[(o - 1) o / 2] / E[o - 1] =
	// 159.0, plus half a block); over the ready replicas' time and their
	// caches' blocks, within 3% (the TPOT mean is a little above the mean
	// step). The peak is the busiest interval's, below a full cache.
	kv := r.Served * 256.51 * x.TPOTMeanMs / 1000 * 42.60 / (r.ReadyHours * 3600 * float64(x.KVCacheBlocks))
	require.InEpsilon(t, kv, x.KVCacheMean, 0.03)
	require.Greater(t, x.KVCachePeak, x.KVCacheMean)
	require.Less(t, x.KVCachePeak, 1.0)

	// A B200 replica serves more (its run's figures are in the README).
	v, err := LoadFile("examples/llm-serving/chat/scenario.yaml")
	require.NoError(t, err)
	v, err = v.Variant("b200")
	require.NoError(t, err)
	bb, err := v.Build(Options{})
	require.NoError(t, err)
	t.Cleanup(func() { bb.Close() })
	require.Greater(t, bb.Config.Services[0].Spec.LLM.CapacityPerReplica, capacity)
}

// The LLM service beside checkpointing training: with preemption its
// replicas evict training pods at the peaks, which lose the work since
// their last checkpoint; without, training loses nothing and the
// replicas wait for GPUs (replica pods held, pending ones included, above
// the GPU-hours they were bound to).
func TestExampleLLMBesideTraining(t *testing.T) {
	_, on := runExample(t, "examples/llm-serving/beside-training/scenario.yaml", "")
	_, off := runExample(t, "examples/llm-serving/beside-training/scenario.yaml", "no-preemption")
	require.Greater(t, lostGPUHours(on), 1.0)
	require.Equal(t, 0.0, lostGPUHours(off))
	gpuHours := func(r *sim.Result) float64 {
		var held int64
		for _, u := range r.Services[0].Usage {
			held += u.Held[sim.ResGPU]
		}
		return float64(held) / float64(sim.Hour) / 1000
	}
	require.InDelta(t, on.Services[0].ReplicaHours, gpuHours(on), 0.5, "with preemption the replicas are bound at once")
	require.Greater(t, off.Services[0].ReplicaHours-gpuHours(off), 2.0, "without, they wait")
	require.Greater(t, on.Services[0].LLM.TTFTAttainment, off.Services[0].LLM.TTFTAttainment)
}
