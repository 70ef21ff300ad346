package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/serving"
)

// svcLLMDisagg is svcLLMA100 with each replica one prefill engine and two
// decode engines: a pod of three GPUs (placement pod, the single-pod form).
var svcLLMDisagg = strings.Replace(strings.Replace(svcLLMA100, "gpus: 1}", "gpus: 3}", 1),
	"        tensorParallel: 1\n", "        tensorParallel: 1\n        disaggregation:\n          prefill: {replicas: 1}\n          decode: {replicas: 2}\n          placement: pod\n", 1)

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
		{"placement", "placement: pod", "placement: node", "svc.yaml:36:22: spec.workload.services[0].llm.disaggregation.placement: is \"node\"; want pods (one pod an engine, as llm-d deploys them; the default) or pod (one pod holding every engine)"},
		{"pods-gpus", "placement: pod", "placement: pods", "svc.yaml:26:43: spec.workload.services[0].pod.gpus: a disaggregated replica placed as pods (llm.disaggregation.placement pods, the default) is one pod an engine: the pod is an engine's, a prefill engine's 1 whole GPUs or a decode engine's 1 (the other pool's pods ask for their own); the pod asks for 3; give placement pod for one pod holding all 3"},
		{"balancing", "      load: {constant: 5}", "      load: {constant: 5}\n      balancing: round-robin", "svc.yaml:28:18: spec.workload.services[0].balancing: round-robin with llm.disaggregation"},
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

// A shared prefix in a disaggregated replica is its prefill engines'
// cache: prompts of one of 3 system prompts of 1,000 tokens (62 full
// blocks, 992 tokens) and up to 500 more prefill only what follows it,
// so the prefill pool serves more than without the prefix; the decode
// engines receive each prompt's whole KV cache and cache no prefix. The
// llm-d picker in the pools keeps each prefix on the prefill engine it
// first sent it to (62 blocks of a prompt of up to 92: 3 x 62/92 =
// 2.02, above the queue scorer's 2); at 93 blocks (3 x 62/93 = 2) it is
// refused: the queue scorer can outweigh it.
func TestLLMDisaggPrefix(t *testing.T) {
	body := strings.NewReplacer("inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}", "inputTokens: {min: 1100, max: 1500}\n        prefix: {tokens: 1000, groups: 3}",
		"outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}", "outputTokens: {min: 64, max: 256}").Replace(svcCluster + svcLLMDisagg)
	require.Contains(t, body, "prefix:")
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	l := b.Config.Services[0].Spec.LLM
	d := *l.Disagg
	require.Equal(t, 992, d.Prefill.PrefixHitTokens)
	require.EqualValues(t, 3*62, d.Prefill.PrefixCacheBlocks)
	require.Zero(t, d.Decode.PrefixHitTokens)
	require.Zero(t, d.Decode.PrefixCacheBlocks)
	want, err := serving.DisaggCapacity(d, l.Input, l.Output)
	require.NoError(t, err)
	require.Equal(t, want, l.CapacityPerReplica)
	one := serving.TokenDist{Kind: serving.Fixed, Mean: 1}
	without := d.Prefill
	without.PrefixHitTokens, without.PrefixCacheBlocks = 0, 0
	pWith, err := serving.LLMCapacity(d.Prefill, l.Input, one)
	require.NoError(t, err)
	pWithout, err := serving.LLMCapacity(without, l.Input, one)
	require.NoError(t, err)
	require.Greater(t, pWith, 2*pWithout)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "every prefill engine holds the 3 prefixes' 186 blocks and skips their prefill; the KV cache sent to a decode engine is the whole prompt's")

	two := strings.NewReplacer("prefill: {replicas: 1}", "prefill: {replicas: 2}", "gpus: 3}", "gpus: 4}", "decode: {replicas: 2}", "decode: {replicas: 2}\n          router: prefix-aware", "max: 1500}", "max: 1480}").Replace(body)
	b, err = buildSvc(t, two)
	require.NoError(t, err)
	require.Equal(t, serving.PrefixAware, b.Config.Services[0].Spec.LLM.Disagg.Router)
	_, err = buildSvc(t, strings.Replace(two, "max: 1480}", "max: 1488}", 1))
	requireInputError(t, err)
	require.ErrorContains(t, err, "llm.disaggregation.router: prefix-aware with llm.prefix of 1000 tokens: the prefix's 62 blocks are 2/3 or less of the longest prompt's 93")
}

// A disaggregated service written before placement existed (no
// placement, its pod holding all three engines' GPUs) still means the
// single pod: one engine a pod would ask for 1 GPU, and 3 is the whole
// replica's 1 + 2 x 1, so it builds as placement pod, with a note,
// rather than being refused.
func TestLLMDisaggPlacementFromThePod(t *testing.T) {
	body := strings.Replace(svcLLMDisagg, "          placement: pod\n", "", 1)
	require.NotEqual(t, svcLLMDisagg, body)
	b, err := buildSvc(t, svcCluster+body)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.EqualValues(t, 3, c.Pod.GPUs)
	require.LessOrEqual(t, c.PodsPerReplica, 1, "one pod a replica")
	require.Empty(t, c.Groups)
	notes := strings.Join(b.Assumptions, "\n")
	require.Contains(t, notes, "llm.disaggregation.placement pod: the service's pod asks for all 3 GPUs of the replica's engines (one pod an engine would ask for 1 or 1)")
	require.Contains(t, notes, "one pod holding every engine's GPUs (placement pod)")
}
