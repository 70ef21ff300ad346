package serving

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
)

func h100(t *testing.T) Roofline {
	r, ok := RooflineFor("H100-80GB")
	require.True(t, ok)
	return r
}

func same(n, in, out int) []LLMRequest {
	reqs := make([]LLMRequest, n)
	for i := range reqs {
		reqs[i] = LLMRequest{Input: in, Output: out}
	}
	return reqs
}

// Decode is memory-bound: each step reads the weights once. On an H100
// (3,350 GB/s published, 0.917 of it reached: 3,070.8 GB/s) Llama-3-8B's
// step reads every weight but the embedding table, (8,029,995,008 -
// 128,256 x 4096) x 2 B = 15,009,632,256 B: 4.8877 ms. Each layer's 4
// projections and its attention are kernels of 24 us, and the head one:
// 161 x 24 us = 3.864 ms. One sequence of a 100-token prompt and 1,001
// output tokens decodes 1,000 steps over 101 to 1,100 cached tokens
// (131,072 B each: 600.5 on average, 78.7 MB, 0.026 ms) with one row of
// activations (4.72 MB, 0.0015 ms): TPOT 8.779 ms, 114 tokens a second.
// 64 such sequences in step read the weights once still (their 2 x 64 x
// 218,103,808 FLOPs a layer, 37 us at 750 TFLOP/s, stay under the 142 us
// of reading the layer): the cache reads grow 64 times (1.64 ms) and the
// activations (0.10 ms): TPOT 10.49 ms, 6,100 tokens a second, 53 times
// one sequence's rate.
func TestLLMDecodeRateMemoryBound(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}}
	one, err := SimulateLLM(cfg, same(1, 100, 1001))
	require.NoError(t, err)
	require.InEpsilon(t, 8.779, one.TPOTMs[0], 0.001)
	many, err := SimulateLLM(cfg, same(64, 100, 1001))
	require.NoError(t, err)
	require.Equal(t, 1001, many.Steps, "one prefill step of 6,400 tokens, then 1,000 decode steps")
	for _, tpot := range many.TPOTMs {
		require.InEpsilon(t, 10.49, tpot, 0.001)
	}
	rate := 64 * 1000 / (many.EndMs - many.TTFTMs[0]) * 1e3 // after the first token
	require.InEpsilon(t, 6100, rate, 0.001)
}

// Prefill is compute-bound: an 8,192-token prompt on an H100 (989 TFLOP/s
// dense bf16 published, 0.758 of it reached: 750) costs 2 x 6,979,321,856
// layer weights x 8,192 tokens = 1.1435e14 FLOPs, 152.47 ms, plus causal
// attention's 4 x 4096 x 8192 x 8193/2 FLOPs a layer over 32 layers
// (1.7594e13, 23.46 ms), 161 kernels of 24 us (3.86 ms) and the head for
// the last token (0.34 ms): TTFT 180.13 ms, 45,500 prompt tokens a
// second. A token budget of 2,048 splits it into 4 chunks (chunked
// prefill): the projections cost the same, the later chunks' attention
// covers the cached tokens, and each step pays its kernels and head.
func TestLLMPrefillRateComputeBound(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}}
	r, err := SimulateLLM(cfg, same(1, 8192, 1))
	require.NoError(t, err)
	require.InEpsilon(t, 180.13, r.TTFTMs[0], 0.001)
	cfg.MaxNumBatchedTokens = 2048
	cfg.RecordSteps = true
	c, err := SimulateLLM(cfg, same(1, 8192, 1))
	require.NoError(t, err)
	require.Equal(t, 4, c.Steps)
	for _, s := range c.StepLog {
		require.Equal(t, 2048, s.PrefillTokens)
	}
	// Attention of chunk i: 4 x 4096 x 2048 x (2048 i + 2049/2) FLOPs a
	// layer; over the 4 chunks the same 1.7594e13 as in one step, so
	// only 3 more steps of kernels and heads are added: 3 x (3.864 +
	// 0.34) ms.
	require.InEpsilon(t, 180.13+3*(3.864+0.34), c.TTFTMs[0], 0.002)
}

// A load that fills the KV cache. 16 requests of 512 prompt tokens and
// 256 output tokens arrive together at a replica whose cache is 600
// blocks of 16 tokens (9,600 tokens). The first step prefills all of
// them (8,192 tokens, the whole budget): 16 x 32 = 512 blocks, and gives
// each its first token. Decode step j (step index j) needs room for
// 512 + j tokens each: 33 blocks from j = 1, 34 from j = 17, ... 38 from
// j = 81, when 16 x 38 = 608 > 600: the 8 blocks free go to the first 8
// requests, the 9th finds none and the last admitted (the 16th) is
// preempted, its 37 blocks freed, and it waits with 593 tokens to
// recompute (38 blocks, while 30 are free). Then 15 x 41 > 600 at j =
// 129, 14 x 43 at j = 161 and 13 x 47 at j = 225 each preempt the last
// running request; at each the head of the queue needs more blocks than
// are free (40 > 26, 42 > 41, 46 > 36), so the four wait (queueing)
// until the 12 others finish at step 255 (one token from the prefill,
// 255 decodes) and free 576 blocks; the four then recompute their prompt
// and generated tokens together in step 256 (38 + 41 + 43 + 47 blocks) and finish last.
func TestLLMKVCacheExhaustion(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, KVBlocks: 600, MaxModelLen: 1024, RecordSteps: true}
	r, err := SimulateLLM(cfg, same(16, 512, 256))
	require.NoError(t, err)
	require.Equal(t, int64(512), r.StepLog[0].UsedBlocks)
	require.Equal(t, int64(16*33), r.StepLog[1].UsedBlocks)
	var preempts []int
	for i, s := range r.StepLog {
		if s.Preempted > 0 {
			require.Equal(t, 1, s.Preempted)
			preempts = append(preempts, i)
		}
	}
	require.Equal(t, []int{81, 129, 161, 225}, preempts)
	require.Equal(t, 4, r.Preemptions)
	require.Equal(t, 0, r.StepLog[80].Waiting)
	require.Equal(t, 1, r.StepLog[81].Waiting)
	require.Equal(t, 15, r.StepLog[81].Running)
	require.Equal(t, 2, r.StepLog[129].Waiting)
	require.Equal(t, 3, r.StepLog[161].Waiting)
	require.Equal(t, 4, r.StepLog[254].Waiting)
	require.Equal(t, int64(600), r.PeakBlocks)
	// The 12 never preempted finish together at step 255; the four
	// preempted are re-admitted in step 256 and finish after.
	for i := range 12 {
		require.Equal(t, r.E2EMs[0], r.E2EMs[i])
	}
	require.Equal(t, r.StepLog[255].StartMs+r.StepLog[255].Ms, r.E2EMs[0])
	require.Equal(t, 0, r.StepLog[256].Waiting)
	require.Equal(t, 4, r.StepLog[256].Running)
	require.Equal(t, 4*512+81+129+161+225, r.StepLog[256].PrefillTokens) // 593 + 641 + 673 + 737
	for i := 12; i < 16; i++ {
		require.Greater(t, r.E2EMs[i], r.E2EMs[0])
	}
	require.Equal(t, int64(16*256), r.OutputTokens)

	// The same load with room for everyone (16 x 48 = 768 blocks) runs
	// without a preemption in 256 steps.
	cfg.KVBlocks = 768
	r, err = SimulateLLM(cfg, same(16, 512, 256))
	require.NoError(t, err)
	require.Zero(t, r.Preemptions)
	require.Equal(t, 256, r.Steps)
}

// max_num_seqs caps the running requests: 10 requests with a cap of 4
// run in three waves (4, 4, 2), each a prefill step and 9 decode steps.
func TestLLMMaxNumSeqs(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxNumSeqs: 4, RecordSteps: true}
	r, err := SimulateLLM(cfg, same(10, 100, 10))
	require.NoError(t, err)
	require.Equal(t, 30, r.Steps)
	for _, s := range r.StepLog {
		require.LessOrEqual(t, s.Running, 4)
	}
	require.Equal(t, 6, r.StepLog[0].Waiting)
	require.Greater(t, r.TTFTMs[9], r.TTFTMs[4])
	require.Greater(t, r.TTFTMs[4], r.TTFTMs[0])
}

// Llama-3-8B's KV cache on one H100 (79.6 GiB): 0.9 of it is
// 76,922,275,184 B; less 16,059,990,016 B of weights and the activation
// estimate for 8,192 tokens and 256 sequences (8192 x (2 x 14,336 + 4 x
// 4096) x 2 = 738,197,504 B, logits 256 x 128,256 x 4 = 131,334,144 B, and
// 1 GiB: 1,943,273,472 B): 58,919,011,696 B, 28,095 blocks of 2 MiB
// (449,520 tokens). 70B in bf16 (141 GB, 131.4 GiB, of weights) does not fit one, and
// on four each holds 35.3 GB of weights.
func TestLLMConfigMemory(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}}.WithDefaults()
	require.InDelta(t, 1_943_273_472, cfg.ReserveBytes, 1)
	require.Equal(t, int64(28_095), cfg.Blocks())
	require.NoError(t, cfg.Check())

	big := LLMConfig{Engine: Engine{Model: Llama3_70B(), GPU: h100(t), TP: 1}}.WithDefaults()
	require.ErrorContains(t, big.Check(), "model: llama-3-70b needs 131.4 GiB of weights")
	big.Engine.TP = 4
	big = LLMConfig{Engine: big.Engine}.WithDefaults()
	require.NoError(t, big.Check())

	long := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 200_000}.WithDefaults()
	require.ErrorContains(t, long.Check(), "maxModelLen: 200000 is above the model's 131072 tokens")
	small := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, KVBlocks: 100, MaxModelLen: 4096}.WithDefaults()
	require.ErrorContains(t, small.Check(), "maxModelLen: 4096 tokens do not fit the KV cache of 1600 tokens")

	_, err := SimulateLLM(LLMConfig{Engine: cfg.Engine}, []LLMRequest{{Input: 10, Output: -1}})
	require.ErrorContains(t, err, "request 0: input 10 and output -1 tokens are at least 1")
}

// Same requests, same result: nothing in the engine is random.
func TestLLMDeterministic(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, KVBlocks: 700, MaxModelLen: 2048}
	var reqs []LLMRequest
	for i := range 300 {
		reqs = append(reqs, LLMRequest{ArrivalMs: float64(i * 37), Input: 100 + i*13%900, Output: 20 + i*7%300})
	}
	a, err := SimulateLLM(cfg, reqs)
	require.NoError(t, err)
	b, err := SimulateLLM(cfg, reqs)
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Positive(t, a.Preemptions)
}

// Tensor parallelism's all-reduces priced by the fabric: Llama-3-70B on
// four H100s over NVLink (h100-nvls: 39.67 us latency, 479.7 GB/s bus
// bandwidth). A decode step of 32 sequences all-reduces 32 x 8192 x 2 B
// = 524,288 B twice a layer; a ring all-reduce over 4 moves 2 x 3/4 of
// it: 39.67 us + 786,432 B / 479.7 GB/s = 41.31 us, 82.62 us a layer,
// 6.61 ms over 80 layers, added to the step without all-reduces.
func TestTensorParallelAllReduceByFabric(t *testing.T) {
	nv := models.DefaultFabrics()["h100-nvls"]
	e := Engine{Model: Llama3_70B(), GPU: h100(t), TP: 4}
	without := e.StepTime(Step{Decode: make32(2000)})
	e.AllReduce = TPAllReduce(nv, 4)
	require.InEpsilon(t, 41.31e-6, e.AllReduce(524_288), 0.001)
	require.InEpsilon(t, without+6.609e-3, e.StepTime(Step{Decode: make32(2000)}), 0.001)
	require.Nil(t, TPAllReduce(nv, 1))
}
