package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
)

// svcDisaggPods is a cluster of two nodes of 8 H100 and an LLM service
// whose replica is one prefill and two decode engines of Llama-3-8B at
// tensor parallel 4 (12 GPUs), placed as llm-d places them: one pod an
// engine, each of 4 GPUs.
const svcDisaggPods = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: svc
spec:
  horizon: 2h
  cluster:
    pools:
    - name: h100
      count: 2
      gpuModel: H100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
  workload:
    services:
    - name: chat
      pod: {cpu: "8", memory: 64Gi, gpus: 4}
      load: {constant: 2}
      llm:
        model: llama-3-8b
        gpu: H100-80GB
        tensorParallel: 4
        maxNumBatchedTokens: 2048
        maxModelLen: 8192
        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
        disaggregation:
          prefill: {replicas: 1}
          decode: {replicas: 2}
`

// A 1P2D replica of 4 + 4 + 4 GPUs on nodes of 8 is three pods of 4 GPUs,
// one gang: 12 GPUs are more than a node holds, so the pods span the two
// nodes and the KV cache goes over the pools' network, InfiniBand NDR 400
// (nccl-tests' bus bandwidth 155.66 GB/s on nodes of 8 GPUs, latency 50
// us), an engine of 4 GPUs using 4 of a node's 8 rails: 77.83 GB/s. By
// hand, a prompt of 1,000 tokens of Llama-3-8B (2 x 32 layers x 8 KV
// heads x 128 x 2 bytes = 131,072 bytes a token) takes 131,072,000 /
// 77.83e9 s = 1.68408 ms + 0.05 ms = 1.73408 ms (over the H100's NVLink,
// 479.70 GB/s and 39.67 us, 0.31291 ms). Run for 2 h the replica binds at
// 0 on both nodes and holds 12 GPUs throughout: 24 GPU-hours. With one
// node it waits whole (two of its pods would fit the free node): no GPU
// held, no cold start, every request dropped.
func TestLLMDisaggPodsSpanNodes(t *testing.T) {
	b, err := buildSvc(t, svcDisaggPods)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.EqualValues(t, 4, c.Pod.GPUs)
	require.Equal(t, 3, c.PodsPerReplica)
	require.Empty(t, c.Groups, "every engine asks for 4 GPUs: one pod shape")
	d := *c.Spec.LLM.Disagg
	require.InDelta(t, 77.83, d.KVTransferGBps, 1e-9)
	require.InDelta(t, 0.05, d.KVTransferLatencyMs, 1e-12)
	require.InDelta(t, 1.73408, d.TransferMs(1000), 1e-5)
	notes := strings.Join(b.Assumptions, "\n")
	require.Contains(t, notes, "over ib-ndr-400's bus bandwidth 78 GB/s and latency 0.050 ms")
	require.Contains(t, notes, "its 12 GPUs are more than a node of 8 holds, so its pods span nodes")

	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	r := res.Services[0]
	require.Equal(t, 1, r.ColdStarts)
	require.Equal(t, int64(12*1000*2*sim.Hour), r.Usage[0].Held[sim.ResGPU])
	require.InDelta(t, r.Arrived, r.Served, 1e-6*r.Arrived)

	one, err := buildSvc(t, strings.Replace(svcDisaggPods, "count: 2", "count: 1", 1))
	require.NoError(t, err)
	res, err = sim.Run(one.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	r = res.Services[0]
	require.Zero(t, r.ColdStarts)
	for _, u := range r.Usage {
		require.Zero(t, u.Held[sim.ResGPU])
	}
	require.Zero(t, r.Served)
	require.Positive(t, r.Dropped)
}

// A replica that fits one node keeps the NVLink transfer: 1P1D of 4 + 4
// GPUs on nodes of 8 prices the KV cache on the H100's NVLink (479.70
// GB/s, 39.67 us), as one pod does, and says the pods may be spread. A
// fabric given is kept. Engines of different GPUs are pod groups of
// their own: a decode engine of 2 GPUs is the replica's decode group.
func TestLLMDisaggPodsOneNode(t *testing.T) {
	body := strings.Replace(svcDisaggPods, "decode: {replicas: 2}", "decode: {replicas: 1}", 1)
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	d := *b.Config.Services[0].Spec.LLM.Disagg
	require.Equal(t, 479.70, d.KVTransferGBps)
	require.InDelta(t, 0.03967, d.KVTransferLatencyMs, 1e-12)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "its 8 GPUs fit one node of every pool it may run on, so the KV transfer is priced on the GPUs' NVLink")

	b, err = buildSvc(t, strings.Replace(svcDisaggPods, "decode: {replicas: 2}", "decode: {replicas: 2}\n          kvTransfer: {fabric: h100-nvls}", 1))
	require.NoError(t, err)
	require.Equal(t, 479.70, b.Config.Services[0].Spec.LLM.Disagg.KVTransferGBps)

	b, err = buildSvc(t, strings.Replace(svcDisaggPods, "decode: {replicas: 2}", "decode: {replicas: 2, tensorParallel: 2}", 1))
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.Equal(t, 3, c.PodsPerReplica)
	require.Len(t, c.Groups, 1)
	require.EqualValues(t, 2, c.Groups[0].Pod.GPUs)
	require.EqualValues(t, 2, c.Groups[0].Replicas)
	require.Equal(t, c.Pod.MilliCPU, c.Groups[0].Pod.MilliCPU)
	// 4 + 2 + 2 = 8 GPUs: one node.
	require.Equal(t, 479.70, c.Spec.LLM.Disagg.KVTransferGBps)
}
