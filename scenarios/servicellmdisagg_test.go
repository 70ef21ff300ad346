package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/serving"
)

// svcLLMDisagg is svcLLMA100 with each replica one prefill engine and two
// decode engines: a pod of three GPUs.
var svcLLMDisagg = strings.Replace(strings.Replace(svcLLMA100, "gpus: 1}", "gpus: 3}", 1),
	"        tensorParallel: 1\n", "        tensorParallel: 1\n        disaggregation:\n          prefill: {replicas: 1}\n          decode: {replicas: 2}\n", 1)

// A disaggregated LLM service builds into pools of the llm block's
// engine: one prefill and two decode engines of one A100 each in a pod
// of three GPUs, round robin in each pool, the KV cache sent over the
// A100's NVLink fabric (its bus bandwidth 234.29 GB/s and latency 39.67
// us, models.DefaultFabrics), the replica's capacity the fast model's of
// the two pools (serving.DisaggCapacity), its KV cache the decode pool's.
func TestLLMDisaggBuilds(t *testing.T) {
	b, err := buildSvc(t, svcCluster+svcLLMDisagg)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.EqualValues(t, 3, c.Pod.GPUs)
	l := c.Spec.LLM
	require.NotNil(t, l.Disagg)
	d := *l.Disagg
	require.Equal(t, 1, d.PrefillReplicas)
	require.Equal(t, 2, d.DecodeReplicas)
	require.Equal(t, serving.RoundRobin, d.Router)
	f := models.DefaultFabrics()["a100-nvswitch"]
	require.Equal(t, f.BusBWGBps, d.KVTransferGBps)
	require.InDelta(t, 0.03967, d.KVTransferLatencyMs, 1e-12)
	require.Equal(t, l.Config.MaxNumBatchedTokens, d.Prefill.MaxNumBatchedTokens)
	require.Equal(t, 2048, d.Decode.MaxNumBatchedTokens)
	want, err := serving.DisaggCapacity(d, l.Input, l.Output)
	require.NoError(t, err)
	require.Equal(t, want, l.CapacityPerReplica)
	notes := strings.Join(b.Assumptions, "\n")
	require.Contains(t, notes, "prefill/decode disaggregation: a replica is 1 prefill engines of 1 GPUs and 2 decode engines of 1, each pool's requests spread round-robin")
	require.Contains(t, notes, "over a100-nvswitch's bus bandwidth 234 GB/s")
	require.Contains(t, notes, "service chat: LLM engine llama-3-8b on 3 A100-80GB")

	// A bandwidth given (a 400 Gb/s NIC: 50 GB/s) and a pool of two-GPU
	// engines: a pod of 1 + 2 x 2 GPUs.
	body := strings.Replace(strings.Replace(svcCluster+svcLLMDisagg, "decode: {replicas: 2}", "decode: {replicas: 2, tensorParallel: 2}\n          kvTransfer: {bandwidthGBps: 50, latencyMs: 0.5}", 1), "gpus: 3}", "gpus: 5}", 1)
	b, err = buildSvc(t, body)
	require.NoError(t, err)
	d = *b.Config.Services[0].Spec.LLM.Disagg
	require.Equal(t, 50.0, d.KVTransferGBps)
	require.Equal(t, 0.5, d.KVTransferLatencyMs)
	require.Equal(t, 2, d.Decode.Engine.TP)
	require.NotNil(t, d.Decode.Engine.AllReduce)
	require.Equal(t, 5, d.GPUs())
}

// Bad disaggregation fields exit 2 at their file, line and field.
func TestLLMDisaggErrors(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"replicas-0", "prefill: {replicas: 1}", "prefill: {replicas: 0}", "svc.yaml:34:31: spec.workload.services[0].llm.disaggregation.prefill.replicas: 0: a pool's engines are from 1 to 64"},
		{"replicas-missing", "decode: {replicas: 2}", "decode: {tensorParallel: 1}", "svc.yaml:35:19: spec.workload.services[0].llm.disaggregation.decode.replicas: is not given"},
		{"pool-missing", "          decode: {replicas: 2}\n", "", "svc.yaml:34:11: spec.workload.services[0].llm.disaggregation.decode: is not given"},
		{"tp", "decode: {replicas: 2}", "decode: {replicas: 2, tensorParallel: -1}", "svc.yaml:35:49: spec.workload.services[0].llm.disaggregation.decode.tensorParallel: -1: GPUs of an engine are from 1 to 64"},
		{"unknown", "decode: {replicas: 2}", "decode: {replicas: 2, tp: 1}", "svc.yaml:35:33: spec.workload.services[0].llm.disaggregation.decode.tp: unknown field \"tp\""},
		{"router", "decode: {replicas: 2}", "decode: {replicas: 2}\n          router: fastest", "svc.yaml:36:19: spec.workload.services[0].llm.disaggregation.router: \"fastest\": a pool's requests are spread by round-robin (the default), least-outstanding or prefix-aware"},
		{"bandwidth", "decode: {replicas: 2}", "decode: {replicas: 2}\n          kvTransfer: {bandwidthGBps: -1}", "svc.yaml:36:39: spec.workload.services[0].llm.disaggregation.kvTransfer.bandwidthGBps: -1: GB/s, positive and at most 1e+06"},
		{"latency", "decode: {replicas: 2}", "decode: {replicas: 2}\n          kvTransfer: {latencyMs: -3}", "svc.yaml:36:35: spec.workload.services[0].llm.disaggregation.kvTransfer.latencyMs: -3 ms: from 0 to 10000"},
		{"fabric", "decode: {replicas: 2}", "decode: {replicas: 2}\n          kvTransfer: {fabric: ethernet}", "svc.yaml:36:32: spec.workload.services[0].llm.disaggregation.kvTransfer.fabric: \"ethernet\" is not a fabric (known: a100-nvswitch, b200-nvswitch, h100-nvls, h200-nvswitch, ib-ndr-400, pcie)"},
		{"fabric-and-bandwidth", "decode: {replicas: 2}", "decode: {replicas: 2}\n          kvTransfer: {fabric: ib-ndr-400, bandwidthGBps: 50}", "svc.yaml:36:23: spec.workload.services[0].llm.disaggregation.kvTransfer: give a fabric or a bandwidthGBps, not both"},
		{"pod-gpus", "gpus: 3}", "gpus: 1}", "svc.yaml:26:43: spec.workload.services[0].pod.gpus: a disaggregated replica of 1 prefill engines of 1 GPUs and 2 decode engines of 1 holds 3 whole GPUs; the pod asks for 1"},
		{"balancing", "      load: {constant: 5}", "      load: {constant: 5}\n      balancing: round-robin", "svc.yaml:28:18: spec.workload.services[0].balancing: round-robin with llm.disaggregation"},
		{"prefix", "        tensorParallel: 1\n", "        tensorParallel: 1\n        prefix: {tokens: 64}\n", "spec.workload.services[0].llm.disaggregation: with llm.prefix"},
	} {
		// Prompts of 128 tokens and more, to hold a prefix of full blocks.
		base := strings.Replace(svcCluster+svcLLMDisagg, "stdDev: 256, min: 16,", "stdDev: 256, min: 128,", 1)
		body := strings.Replace(base, c.from, c.to, 1)
		require.NotEqual(t, base, body, c.name)
		_, err := buildSvc(t, body)
		require.Error(t, err, c.name)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.name)
	}
}
