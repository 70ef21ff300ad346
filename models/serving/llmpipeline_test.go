package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
)

// pp70b is Llama-3-70B on two nodes of 8 H100: tensor parallel 8 inside
// each node (h100-nvls's all-reduce), pipeline parallel 2 across them
// (ib-ndr-400's latency and bus bandwidth for the activations' send).
func pp70b(t *testing.T) Engine {
	f := models.DefaultFabrics()
	return Engine{Model: Llama3_70B(), GPU: h100(t), TP: 8, PP: 2, AllReduce: TPAllReduce(f["h100-nvls"], 8), Send: PPSend(f["ib-ndr-400"], 1)}
}

// vLLM's split of the layers (get_pp_indices): Layers/PP a stage, the
// remainder one a stage from the last but one backwards.
func TestPipelineStages(t *testing.T) {
	e := Engine{Model: Llama3_70B()}
	require.Equal(t, []int{80}, e.Stages())
	e.PP = 2
	require.Equal(t, []int{40, 40}, e.Stages())
	e.PP = 3 // 80 = 26 x 3 + 2: the first two stages take one more
	require.Equal(t, []int{27, 27, 26}, e.Stages())
	e.Model.Layers, e.PP = 10, 4 // vLLM's own example: 2,3,3,2
	require.Equal(t, []int{2, 3, 3, 2}, e.Stages())
	require.Equal(t, 32, Engine{TP: 8, PP: 4}.GPUs())
}

// By hand: a decode step of one sequence (context 1,000) on TP8 x PP2 is
// the two stages' 40 layers each at TP8 (the four projections a GEMM of
// one row with the weights split eight ways, the KV read of its context,
// two all-reduces of a hidden vector on NVLink), the output head on the
// last stage, and one send of the hidden vector (8,192 x 2 bytes) over
// InfiniBand: 50 us + 16 KiB at 155.66 GB/s. Two sequences are two
// micro-batches in flight, each a row a layer: the last stage (its 40
// layers and the head, 110 us) works on both in turn, which takes longer
// than one's pass (the send is 50 us), so the step is twice the last
// stage. Four are two rows a micro-batch, likewise.
func TestPipelineDecodeStepByHand(t *testing.T) {
	e := pp70b(t)
	g := e.GPU
	nv := models.DefaultFabrics()["h100-nvls"]
	layer := func(rows int, ctx float64) float64 {
		return g.GEMM(rows, 8192, (8192+2*8*128)/8, 2) + g.GEMM(rows, 8192/8, 8192, 2) + g.GEMM(rows, 8192, 2*28672/8, 2) + g.GEMM(rows, 28672/8, 8192, 2) +
			g.Read(ctx*2*8*128*2/8) + 2*nv.Time(models.AllReduce, int64(rows)*8192*2, 8, 1)
	}
	head := func(rows int) float64 { return g.GEMM(rows, 8192, 128256/8, 2) }
	send := 50e-6 + 8192*2/155.66e9
	one := e.StepTime(Step{Decode: []int{1000}})
	require.InEpsilon(t, 40*layer(1, 1000)+(40*layer(1, 1000)+head(1))+send, one, 1e-12)
	require.InEpsilon(t, 2*(40*layer(1, 1000)+head(1)), e.StepTime(Step{Decode: []int{1000, 1000}}), 1e-12)
	require.InEpsilon(t, 2*(40*layer(2, 2000)+head(2)), e.StepTime(Step{Decode: []int{1000, 1000, 1000, 1000}}), 1e-12)
	// One sequence's pass is the TP8 engine's step on one node and the send.
	tp8 := Engine{Model: e.Model, GPU: g, TP: 8, AllReduce: e.AllReduce}
	require.InEpsilon(t, tp8.StepTime(Step{Decode: []int{1000}})+send, one, 1e-12)
	// Without the head's imbalance (a send slower than the head) two
	// sequences' step is one's pass.
	e.Send = func(float64) float64 { return 1e-3 }
	require.InEpsilon(t, 80*layer(1, 1000)+head(1)+1e-3, e.StepTime(Step{Decode: []int{1000, 1000}}), 1e-12)
}

// Each GPU of TP8 x PP2 holds a 16th of the layers (40 of 80 over 8) and
// the embedding or the output head over 8, and the keys and values of 40
// layers over 8 a token.
func TestPipelineMemory(t *testing.T) {
	e := pp70b(t)
	m := e.Model
	perLayer := 8192.0*(8192+2*1024) + 8192*8192 + 8192*2*28672 + 28672*8192
	require.InEpsilon(t, (40*perLayer+128256*8192)*2/8, e.WeightBytesPerGPU(), 1e-12)
	free := 0.9*e.GPU.MemoryGiB*(1<<30) - (40*perLayer+128256*8192)*2/8 - 2<<30
	blockBytes := 16 * 2 * 40 * 1024 * 2 / 8.0
	require.Equal(t, int64(free/blockBytes)*16, e.KVCacheTokens(0.9, 2<<30, 16))
	require.Equal(t, 2*40*1024*2/8.0*80/40, m.KVBytesPerToken()/8)
}

// A long prompt alone is not pipelined with itself: its chunks of
// max_num_batched_tokens go one a pass, each the whole chunk in one
// micro-batch.
func TestPipelineLonePrefill(t *testing.T) {
	cfg := LLMConfig{Engine: pp70b(t), MaxModelLen: 8192, MaxNumBatchedTokens: 2048, RecordSteps: true}
	res, err := SimulateLLM(cfg, []LLMRequest{{Input: 4096, Output: 2}})
	require.NoError(t, err)
	require.Equal(t, 3, res.Steps)
	require.Equal(t, 2048, res.StepLog[0].PrefillTokens)
	require.InEpsilon(t, cfg.Engine.StepTime(Step{Prefill: []Chunk{{Tokens: 2048}}})*1e3, res.StepLog[0].Ms, 1e-9)
}

// The fast model against the exact one on TP8 x PP2 (chat lengths as
// TestSteadyLLMAgainstExact's, 20,000 Poisson requests a rate): where
// each step is PP micro-batches' pass (the same StepTime in both models,
// the fast one from the step's totals), SteadyLLM's mean and p95 TTFT,
// TPOT and end-to-end latency are within 5% of the exact model's at 2, 8
// and 16 requests/s (the fast model's capacity is between 24 and 32; at 24
// its p95 TTFT is 6% low, as TestSteadyLLMAgainstExact's near capacity).
func TestSteadyLLMPipelineAgainstExact(t *testing.T) {
	in := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	cfg := LLMConfig{Engine: pp70b(t), MaxModelLen: 8192}
	for _, rate := range []float64{2, 8, 16} {
		reqs := PoissonLLMRequests(rand.New(rand.NewPCG(1, 2)), rate, 20000, in, out)
		ex, err := SimulateLLM(cfg, reqs)
		require.NoError(t, err)
		f, err := SteadyLLM(cfg, rate, in, out)
		require.NoError(t, err)
		want := []float64{Mean(ex.TTFTMs), InterpQuantile(ex.TTFTMs, .95), Mean(ex.TPOTMs), InterpQuantile(ex.TPOTMs, .95), Mean(ex.E2EMs), InterpQuantile(ex.E2EMs, .95)}
		got := []float64{f.TTFTMeanMs, f.TTFTP95Ms, f.TPOTMeanMs, f.TPOTP95Ms, f.E2EMeanMs, f.E2EP95Ms}
		t.Logf("at %g/s: TTFT %.2f/%.2f p95 %.2f/%.2f, TPOT %.2f/%.2f p95 %.2f/%.2f, E2E %.0f/%.0f p95 %.0f/%.0f (fast/exact, ms)", rate,
			got[0], want[0], got[1], want[1], got[2], want[2], got[3], want[3], got[4], want[4], got[5], want[5])
		for i, what := range []string{"mean TTFT", "p95 TTFT", "mean TPOT", "p95 TPOT", "mean E2E", "p95 E2E"} {
			require.InEpsilon(t, want[i], got[i], 0.05, "at %g/s: %s", rate, what)
		}
	}
	_, err := SteadyLLM(cfg, 32, in, out)
	require.ErrorIs(t, err, ErrLLMOverload)
}
