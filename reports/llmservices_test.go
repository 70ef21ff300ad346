package reports

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// llmRun runs, for 10 hours on one node of 4 GPUs at $4 an hour ($1 a
// GPU-hour), one ready-at-once Llama-3-8B H100 replica whose every
// engine step takes 20 ms, serving 10 requests/s of 512-token prompts
// and 101-token outputs.
func llmRun(t *testing.T) (*sim.Result, *Pricing, serving.LLMConfig) {
	t.Helper()
	roof, ok := serving.RooflineFor("H100-80GB")
	require.True(t, ok)
	cfg := serving.LLMConfig{Engine: serving.Engine{Model: serving.Llama3_8B(), GPU: roof, TP: 1, StepModel: serving.Fitted,
		Fit: serving.StepFit{PerStepUS: 20_000}}, MaxModelLen: 8192}.WithDefaults()
	l := &services.LLM{Config: cfg, Input: serving.TokenDist{Kind: serving.Fixed, Mean: 512}, Output: serving.TokenDist{Kind: serving.Fixed, Mean: 101},
		TTFTSLOMs: 100, TPOTSLOMs: 25}
	svc := sim.ServiceConfig{Spec: services.Spec{Name: "chat", Load: serving.Load{Base: 10}, Balancing: serving.Random, LLM: l},
		Queue: "web", Pod: cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 16 << 10, GPUs: 1}, MinReplicas: 1, MaxReplicas: 1, InitialReplicas: 1}
	res, err := sim.Run(sim.Config{Pools: []cluster.PoolSpec{{Name: "p", Nodes: 1, GPUsPerNode: 4, MilliCPU: 64000, MemoryMiB: 256 << 10}},
		Horizon: 10 * sim.Hour, Services: []sim.ServiceConfig{svc}, Workload: &sim.SliceSource{}})
	require.NoError(t, err)
	return res, &Pricing{Pools: []PoolPricing{{PerHour: 4, CapacityType: models.OnDemand}}, BaseRates: models.BaseRates{GPU: 1}}, cfg
}

// The LLM figures of a run, by hand. 10 requests/s for 10 hours is
// 360,000 requests: 184.32M prompt and 36.36M output tokens. A request's
// prompt is one 20 ms step and its 100 other tokens 100 more: TPOT 20
// ms, E2E its TTFT (20 to 40 ms) and 2 s. By Little's law 10/s x 2 s =
// 20 requests decode, each holding a mean of 562.5 / 16 + 1/2 = 35.66
// blocks (its context runs 513 to 612 tokens): 713.1 blocks of the
// replica's cache, at every interval (mean and peak alike; within 1.5%:
// the run serves 10/s with its 2% grid's nearest rate, 9.94). The
// replica's GPU for 10 hours is $10: $0.0452 a million tokens,
// $0.275 a million output tokens. Summary, terminal, markdown and HTML
// all show them.
func TestLLMReportByHand(t *testing.T) {
	res, pr, cfg := llmRun(t)
	s := Summarize(res, Meta{Scenario: "llm", Pricing: pr})
	require.Len(t, s.Services, 1)
	l := s.Services[0].LLM
	require.NotNil(t, l)
	assert.InEpsilon(t, 360_000*512, l.InputTokens, 1e-9)
	assert.InEpsilon(t, 360_000*101, l.OutputTokens, 1e-9)
	assert.Equal(t, 20.0, l.TPOTMeanMs)
	assert.InDelta(t, l.TTFTMeanMs+2000, l.E2EMeanMs, 0.2)
	assert.InDelta(t, 2030, l.E2EP95Ms, 10+0.02*2030)
	blocks := cfg.Blocks()
	assert.Equal(t, blocks, l.KVCacheBlocks)
	kv := 20 * (562.5/16 + 0.5) / float64(blocks)
	assert.InEpsilon(t, kv, l.KVCacheMean, 0.015)
	assert.Equal(t, l.KVCacheMean, l.KVCachePeak)
	assert.InEpsilon(t, 10/(360_000*613e-6), l.CostPerMillionTokens, 1e-3)
	assert.InEpsilon(t, 10/(360_000*101e-6), l.CostPerMillionOutputTokens, 1e-3)

	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, s))
	var back struct {
		Services []struct {
			LLM map[string]any `json:"llm"`
		} `json:"services"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	for _, k := range []string{"e2eMeanMs", "e2eP50Ms", "e2eP95Ms", "e2eP99Ms", "kvCacheMean", "kvCachePeak", "kvCacheBlocks"} {
		assert.Contains(t, back.Services[0].LLM, k)
	}
	b.Reset()
	require.NoError(t, WriteTable(&b, s))
	out := b.String()
	assert.Contains(t, out, "LLM SERVICE  E2E MEAN")
	assert.Regexp(t, `chat\s+2\.0\d\d s\s+2\.0\d\d s\s+2\.0\d\d s\s+2\.0\d\d s\s+2\.5%\s+2\.5%\s+28095\s+0\.00\s+0\.00\s+184\.32M\s+36\.36M`, out)
	b.Reset()
	require.NoError(t, WriteMarkdown(&b, s))
	assert.Contains(t, b.String(), "| LLM service | E2E mean | p50 | p95 | p99 | KV cache mean | peak | of blocks | preempt/1k | +ms | input tokens | output tokens |")
	b.Reset()
	require.NoError(t, WriteHTML(&b, s, nil))
	assert.Contains(t, b.String(), "LLM services: end to end, KV cache and tokens served")
	assert.Contains(t, b.String(), "184.32M")

	// Each run's LLM figures side by side (what-if variants), a batch
	// server's none.
	f := Figures("as given", s)
	require.NotNil(t, f.Services[0].LLM)
	// TPOT's p95 is read from 2% buckets: 20.18 ms for 20.
	assert.InDelta(t, 20, l.TPOTP95Ms, 0.02*20)
	assert.Equal(t, LLMFigures{TTFTP95Ms: l.TTFTP95Ms, TPOTP95Ms: l.TPOTP95Ms, E2EP95Ms: l.E2EP95Ms, KVCachePeak: l.KVCachePeak,
		CostPerMillionOutputTokens: 0.275, CostPerMillionTokens: 0.0453}, *f.Services[0].LLM)
	rows := variantLLMRows([]RunFigures{f})
	require.Len(t, rows, 1)
	assert.Equal(t, []string{"as given", "chat", "20.2 ms", "2.5%", "0.00", "$0.28", "$0.05"}, append(rows[0][:2:2], rows[0][3], rows[0][5], rows[0][6], rows[0][7], rows[0][8]))
	s.Variants = []RunFigures{f}
	b.Reset()
	require.NoError(t, WriteTable(&b, s))
	assert.Contains(t, b.String(), "LLM services in each run:")
	res2, pr2 := servedSim(t)
	assert.Nil(t, Figures("", Summarize(res2, Meta{Scenario: "served", Pricing: pr2})).Services[0].LLM)
	assert.Empty(t, variantLLMRows([]RunFigures{Figures("", Summarize(res2, Meta{Scenario: "served", Pricing: pr2}))}))
}

// A service with shared prefixes gives its prefix-cache hit rate: in
// summary.json (prefixHitRate; absent without prefixes) and as a
// "prefix hits" column of the second LLM table, with a note, in the
// terminal and markdown; without prefixes the table is as it was.
func TestLLMReportPrefixHits(t *testing.T) {
	res, pr, _ := llmRun(t)
	plain := Summarize(res, Meta{Scenario: "llm", Pricing: pr})
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, plain))
	assert.NotContains(t, b.String(), "prefixHitRate")
	b.Reset()
	require.NoError(t, WriteTable(&b, plain))
	assert.NotContains(t, b.String(), "PREFIX HITS")
	assert.NotContains(t, b.String(), llmPrefixNote)

	// 256 of 512 prompt tokens cached.
	res.Services[0].LLM.PrefixHitRate = 0.5
	s := Summarize(res, Meta{Scenario: "llm", Pricing: pr})
	assert.Equal(t, 0.5, s.Services[0].LLM.PrefixHitRate)
	b.Reset()
	require.NoError(t, WriteJSON(&b, s))
	assert.Contains(t, b.String(), `"prefixHitRate": 0.5`)
	b.Reset()
	require.NoError(t, WriteTable(&b, s))
	out := b.String()
	assert.Contains(t, out, "OF BLOCKS  PREFIX HITS  PREEMPT/1K")
	assert.Regexp(t, `chat\s+2\.0\d\d s\s+2\.0\d\d s\s+2\.0\d\d s\s+2\.0\d\d s\s+2\.5%\s+2\.5%\s+28095\s+50\.0%\s+0\.00\s+0\.00\s+184\.32M\s+36\.36M`, out)
	assert.Contains(t, out, llmPrefixNote)
	b.Reset()
	require.NoError(t, WriteMarkdown(&b, s))
	assert.Contains(t, b.String(), "| of blocks | prefix hits | preempt/1k |")
}
