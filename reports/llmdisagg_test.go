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

// A disaggregated LLM service's pools in every report: one replica of
// one prefill and two decode engines (a pod of 3 GPUs) whose steps take
// 20 ms, serving 20 requests/s of 512-token prompts and 101-token
// outputs for 10 hours, the KV cache sent at 50 GB/s (512 x 131,072 B:
// 1.342 ms). TPOT is the decode pool's: 20 ms a step and the step in
// progress shared over 100 tokens, 20.1 ms; 3 GPUs a replica; the
// decode pool's 2 x blocks. The summary's llm.disaggregation, the
// terminal's, markdown's and HTML's pools table show them; a service
// that is not disaggregated has neither.
func TestLLMDisaggReportByHand(t *testing.T) {
	roof, ok := serving.RooflineFor("H100-80GB")
	require.True(t, ok)
	cfg := serving.LLMConfig{Engine: serving.Engine{Model: serving.Llama3_8B(), GPU: roof, TP: 1, StepModel: serving.Fitted,
		Fit: serving.StepFit{PerStepUS: 20_000}}, MaxModelLen: 8192}.WithDefaults()
	l := &services.LLM{Config: cfg, Input: serving.TokenDist{Kind: serving.Fixed, Mean: 512}, Output: serving.TokenDist{Kind: serving.Fixed, Mean: 101},
		Disagg: &serving.Disagg{Prefill: cfg, Decode: cfg, PrefillReplicas: 1, DecodeReplicas: 2, Router: serving.RoundRobin, KVTransferGBps: 50}}
	svc := sim.ServiceConfig{Spec: services.Spec{Name: "chat", Load: serving.Load{Base: 20}, Balancing: serving.Random, LLM: l},
		Queue: "web", Pod: cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 16 << 10, GPUs: 3}, MinReplicas: 1, MaxReplicas: 1, InitialReplicas: 1}
	res, err := sim.Run(sim.Config{Pools: []cluster.PoolSpec{{Name: "p", Nodes: 1, GPUsPerNode: 4, MilliCPU: 64000, MemoryMiB: 256 << 10}},
		Horizon: 10 * sim.Hour, Services: []sim.ServiceConfig{svc}, Workload: &sim.SliceSource{}})
	require.NoError(t, err)
	s := Summarize(res, Meta{Scenario: "pd", Pricing: &Pricing{Pools: []PoolPricing{{PerHour: 4, CapacityType: models.OnDemand}}, BaseRates: models.BaseRates{GPU: 1}}})
	x := s.Services[0].LLM
	require.NotNil(t, x.Disaggregation)
	d := *x.Disaggregation
	assert.Equal(t, LLMDisaggSummary{PrefillReplicas: 1, PrefillGPUs: 1, DecodeReplicas: 2, DecodeGPUs: 1, KVTransferGBps: 50, KVTransferMeanMs: 1.342,
		PrefillTTFTMeanMs: d.PrefillTTFTMeanMs}, d)
	assert.InDelta(t, x.TTFTMeanMs, d.PrefillTTFTMeanMs+d.KVTransferMeanMs, 0.02)
	assert.Equal(t, 3, x.GPUsPerReplica)
	assert.InDelta(t, 20.1, x.TPOTMeanMs, 0.01)
	assert.Equal(t, 2*cfg.Blocks(), x.KVCacheBlocks)

	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, s))
	var back struct {
		Services []struct {
			LLM struct {
				Disaggregation map[string]any `json:"disaggregation"`
			} `json:"llm"`
		} `json:"services"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, 2.0, back.Services[0].LLM.Disaggregation["decodeReplicas"])
	assert.Equal(t, 1.342, back.Services[0].LLM.Disaggregation["kvTransferMeanMs"])
	b.Reset()
	require.NoError(t, WriteTable(&b, s))
	assert.Contains(t, b.String(), "LLM SERVICE (P/D)  PREFILL ENGINES  DECODE ENGINES  KV TRANSFER")
	assert.Regexp(t, `chat\s+1 x 1 GPU\s+2 x 1 GPU\s+50 GB/s\s+\d\d\.\d ms\s+1\.3 ms\s+\d\d\.\d ms\s+20\.1 ms`, b.String())
	b.Reset()
	require.NoError(t, WriteMarkdown(&b, s))
	assert.Contains(t, b.String(), "| LLM service (P/D) | prefill engines | decode engines |")
	b.Reset()
	require.NoError(t, WriteHTML(&b, s, nil))
	assert.Contains(t, b.String(), "LLM services: prefill and decode pools")

	res2, _, _ := llmRun(t)
	s2 := Summarize(res2, Meta{Scenario: "llm"})
	assert.Nil(t, s2.Services[0].LLM.Disaggregation)
	assert.Nil(t, llmDisaggTable(s2))
	b.Reset()
	require.NoError(t, WriteJSON(&b, s2))
	assert.NotContains(t, b.String(), "disaggregation")
}
