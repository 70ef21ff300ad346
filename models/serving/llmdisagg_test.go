package serving

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func disagg8B(t *testing.T, p, d int, gbps float64) Disagg {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 16384}
	return Disagg{Prefill: cfg, Decode: cfg, PrefillReplicas: p, DecodeReplicas: d, Router: RoundRobin, KVTransferGBps: gbps}
}

// The transfer by hand: Llama-3-8B's KV cache is 2 x 32 layers x 8 KV
// heads x 128 (4096 / 32) x 2 bytes = 131,072 B a token, so an 8,192-token
// prompt's is 1,073,741,824 B (1 GiB): 21.475 ms at 50 GB/s, 85.899 ms at
// 12.5 GB/s (100 Gb/s), and 1 ms more with a latency of 1 ms.
//
// One such request of 2 output tokens on 1 prefill and 1 decode H100:
// its prefill is TestLLMPrefillRateComputeBound's 180.13 ms (compute-
// bound), so TTFT is 180.13 + 21.475 = 201.605 ms. The decode replica
// then runs one step of one decode over 8,193 cached tokens: the weights
// read once (4.8877 ms, memory-bound), 161 kernels of 24 us (3.864 ms),
// the cache 8,193 x 131,072 B = 1.0739e9 B at 3,070.8 GB/s (0.3497 ms)
// and a row of activations (0.0015 ms): 9.1029 ms, its TPOT; E2E
// 210.708 ms. A colocated replica's TPOT for the same request is the
// same step (its second token is one decode too), so disaggregation
// moves the transfer into TTFT and takes nothing from one request's
// TPOT.
func TestDisaggTransferByHand(t *testing.T) {
	require.Equal(t, 131072.0, Llama3_8B().KVBytesPerToken())
	require.Equal(t, float64(1<<30), Llama3_8B().KVTransferBytes(8192))
	d := disagg8B(t, 1, 1, 50)
	require.InEpsilon(t, 21.475, d.TransferMs(8192), 1e-4)
	d.KVTransferGBps, d.KVTransferLatencyMs = 12.5, 1
	require.InEpsilon(t, 86.899, d.TransferMs(8192), 1e-4)

	d = disagg8B(t, 1, 1, 50)
	r, err := SimulateLLMDisagg(d, same(1, 8192, 2))
	require.NoError(t, err)
	require.InEpsilon(t, 201.605, r.TTFTMs[0], 0.001)
	require.InEpsilon(t, 9.1029, r.TPOTMs[0], 0.001)
	require.InEpsilon(t, 210.708, r.E2EMs[0], 0.001)
	require.Equal(t, 1, r.Prefill.Steps)
	require.Equal(t, 1, r.Decode.Steps)
	require.Equal(t, 0, r.Decode.Replicas[0].Preemptions)
	// 8,193 tokens in blocks of 16: 513 blocks on the decode replica.
	require.Equal(t, int64(513), r.PeakBlocks)
}

// The decode pool's rate is memory-bound: TestLLMDecodeRateMemoryBound's
// 64 requests of 100 prompt and 1,001 output tokens, arriving together,
// are prefilled in one step and transferred alike (100 x 131,072 B at
// 50 GB/s: 0.262 ms each), so they reach the decode replica together and
// it decodes them 1,000 steps of 64: each step reads the weights once,
// 10.49 ms (TPOT), 6,100 tokens a second; 8.779 ms (114 tokens a
// second) for one alone. No step of the decode replica holds a prefill.
func TestDisaggDecodePoolMemoryBoundByHand(t *testing.T) {
	d := disagg8B(t, 1, 1, 50)
	d.Decode.RecordSteps = true
	one, err := SimulateLLMDisagg(d, same(1, 100, 1001))
	require.NoError(t, err)
	require.InEpsilon(t, 8.779, one.TPOTMs[0], 0.001)
	many, err := SimulateLLMDisagg(d, same(64, 100, 1001))
	require.NoError(t, err)
	require.Equal(t, 1000, many.Decode.Steps)
	for _, s := range many.Decode.Replicas[0].StepLog {
		require.Zero(t, s.PrefillTokens)
		require.Equal(t, 64, s.Decodes)
	}
	for i, tpot := range many.TPOTMs {
		require.InEpsilon(t, 10.49, tpot, 0.001)
		require.InEpsilon(t, many.Prefill.TTFTMs[i]+0.262144, many.TTFTMs[i], 1e-6)
	}
	rate := 64 * 1000 / many.Decode.BusyMs * 1e3
	require.InEpsilon(t, 6100, rate, 0.001)
}

// The fast model against the exact one (prompts 512 +- 256 and outputs
// 256 +- 128 tokens, round robin in each pool): 8B on H100s, transfers at
// 25 GB/s, on 1 prefill and 2 decode engines and on 2 and 4; 70B on
// four H100s an engine, at 50 GB/s, on 1 and 2; each at 30%, 50% and 70%
// of the fast model's capacity (112, 191 and 39.6 requests/s, the
// prefill pool's): mean and p95 TTFT, TPOT and E2E within 5% at every
// load (TPOT and E2E within 1.3%: the decode pool's steps are its decodes
// alone; TTFT within 4.3%, the prefill engine's steps followed one by
// one, prefillTTFTPoints).
func TestDisaggFastModelAgainstExact(t *testing.T) {
	in := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	for _, c := range []struct {
		name  string
		pools [2]int
	}{{"8B", [2]int{1, 2}}, {"8B", [2]int{2, 4}}, {"70B TP4", [2]int{1, 2}}} {
		pools := c.pools
		d := disagg8B(t, pools[0], pools[1], 25)
		if c.name != "8B" {
			// Llama-3-70B on four H100s an engine, at 50 GB/s.
			cfg := LLMConfig{Engine: Engine{Model: Llama3_70B(), GPU: h100(t), TP: 4}, MaxModelLen: 16384}
			d.Prefill, d.Decode, d.KVTransferGBps = cfg, cfg, 50
		}
		capacity, err := DisaggCapacity(d, in, out)
		require.NoError(t, err)
		for _, share := range []float64{0.3, 0.5, 0.7} {
			rate := share * capacity
			reqs := PoissonLLMRequests(rand.New(rand.NewPCG(1, 2)), rate, 6000*pools[1], in, out)
			f, err := SteadyLLMDisagg(d, rate, in, out)
			require.NoError(t, err)
			x, err := SimulateLLMDisagg(d, reqs)
			require.NoError(t, err)
			t.Logf("%s %dP%dD at %.1f/s (%.0f%% of %.1f): exact TTFT %.1f/%.1f TPOT %.2f/%.2f E2E %.0f/%.0f, fast %.1f/%.1f %.2f/%.2f %.0f/%.0f (mean/p95 ms)",
				c.name, pools[0], pools[1], rate, 100*share, capacity,
				Mean(x.TTFTMs), InterpQuantile(x.TTFTMs, .95), Mean(x.TPOTMs), InterpQuantile(x.TPOTMs, .95), Mean(x.E2EMs), InterpQuantile(x.E2EMs, .95),
				f.TTFTMeanMs, f.TTFTP95Ms, f.TPOTMeanMs, f.TPOTP95Ms, f.E2EMeanMs, f.E2EP95Ms)
			msg := fmt.Sprintf("%s %dP%dD at %.0f%%", c.name, pools[0], pools[1], 100*share)
			require.InEpsilon(t, Mean(x.TTFTMs), f.TTFTMeanMs, 0.05, msg)
			require.InEpsilon(t, InterpQuantile(x.TTFTMs, .95), f.TTFTP95Ms, 0.05, msg)
			require.InEpsilon(t, Mean(x.TPOTMs), f.TPOTMeanMs, 0.05, msg)
			require.InEpsilon(t, InterpQuantile(x.TPOTMs, .95), f.TPOTP95Ms, 0.05, msg)
			require.InEpsilon(t, Mean(x.E2EMs), f.E2EMeanMs, 0.05, msg)
			require.InEpsilon(t, InterpQuantile(x.E2EMs, .95), f.E2EP95Ms, 0.05, msg)
		}
	}
}

// Outputs of one token end at the prefill: the decode pool does nothing,
// TPOT is 0 and E2E is TTFT, in both models; the capacity is the
// prefill pool's (its replica's capacity of one-token outputs).
func TestDisaggOneTokenOutputs(t *testing.T) {
	in := TokenDist{Kind: Fixed, Mean: 512}
	one := TokenDist{Kind: Fixed, Mean: 1}
	d := disagg8B(t, 1, 2, 25)
	f, err := SteadyLLMDisagg(d, 20, in, one)
	require.NoError(t, err)
	require.Zero(t, f.TPOTMeanMs)
	// (E2E mixes every fifth of TTFT's points, e2e.go.)
	require.InEpsilon(t, f.TTFTMeanMs, f.E2EMeanMs, 0.02)
	x, err := SimulateLLMDisagg(d, PoissonLLMRequests(rand.New(rand.NewPCG(1, 2)), 20, 2000, in, one))
	require.NoError(t, err)
	require.Zero(t, x.Decode.Steps)
	require.Equal(t, x.TTFTMs, x.E2EMs)
	c, err := DisaggCapacity(d, in, one)
	require.NoError(t, err)
	p, err := LLMCapacity(d.Prefill, in, one)
	require.NoError(t, err)
	require.Equal(t, p, c)
}
