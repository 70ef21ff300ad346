package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/services"
)

// svcLLMA100 is svcLLM on the test cluster's A100s, with an SLO.
var svcLLMA100 = strings.Replace(svcLLM, "gpu: H100-80GB", "gpu: A100-80GB\n        slo: {ttft: 500ms, tpot: 50ms}", 1)

// An LLM service builds into a service of the cluster run: its replica a
// one-GPU pod, the engine and SLO in its Spec, requests spread at random,
// the replica's capacity found by the fast model (serving.LLMCapacity of
// the same engine), and the assumption listed.
func TestLLMServiceBuilds(t *testing.T) {
	b, err := buildSvc(t, svcCluster+svcLLMA100)
	require.NoError(t, err)
	require.Len(t, b.Config.Services, 1)
	c := b.Config.Services[0]
	require.EqualValues(t, 1, c.Pod.GPUs)
	l := c.Spec.LLM
	require.NotNil(t, l)
	require.Equal(t, serving.Random, c.Spec.Balancing)
	require.Equal(t, 500.0, l.TTFTSLOMs)
	require.Equal(t, 50.0, l.TPOTSLOMs)
	require.Equal(t, "A100-80GB", l.Config.Engine.GPU.Name)
	want, err := serving.LLMCapacity(l.Config, l.Input, l.Output)
	require.NoError(t, err)
	require.Equal(t, want, l.CapacityPerReplica)
	require.Contains(t, b.Assumptions, LLMServingNote)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "service chat: LLM engine llama-3-8b on 1 A100-80GB")
	_, ok := c.Scaler.(services.Scaler)
	require.True(t, ok || c.Scaler == nil)
}

// What a cluster run cannot do with an LLM service is an error at its
// field: a pod whose GPUs are not the tensor parallel, a batch server's
// fields, a request trace, a target that is not positive.
func TestLLMServiceBuildErrors(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"pod-gpus", "gpus: 1}", "gpus: 2}", "spec.workload.services[0].pod.gpus: a replica of tensorParallel 1 holds 1 whole GPUs; the pod asks for 2"},
		{"batch-slo", "      load: {constant: 5}", "      load: {constant: 5}\n      slo: {latency: 1s}", "spec.workload.services[0].slo: is a batch server's latency; give an LLM service's targets as llm.slo.ttft and llm.slo.tpot"},
		{"batching", "      load: {constant: 5}", "      load: {constant: 5}\n      batching: {batchSize: 4}", "spec.workload.services[0].batching: is a batch server's"},
		{"balancing", "      load: {constant: 5}", "      load: {constant: 5}\n      balancing: leastRequest", "spec.workload.services[0].balancing: \"leastRequest\": an LLM service's requests are spread at random (a Kubernetes Service) or by a gateway's round-robin, least-outstanding or prefix-aware router"},
		{"ttft", "ttft: 500ms", "ttft: -5ms", "spec.workload.services[0].llm.slo.ttft: is -5ms: a target is positive"},
	} {
		body := strings.Replace(svcCluster+svcLLMA100, c.from, c.to, 1)
		require.NotEqual(t, svcCluster+svcLLMA100, body, c.name)
		_, err := buildSvc(t, body)
		require.Error(t, err, c.name)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.name)
	}
}

// An LLM service scales on vLLM's KV-cache usage or running requests; a
// batch server, whose replicas export neither, is refused.
func TestLLMOnlyMetrics(t *testing.T) {
	llm := strings.Replace(svcCluster+svcLLMA100, "      load: {constant: 5}\n", "      load: {constant: 5}\n      autoscaler:\n        hpa: {metric: kvCacheUsage, target: 0.6, type: Value}\n      replicas: {min: 1, max: 4}\n", 1)
	require.NotEqual(t, svcCluster+svcLLMA100, llm)
	b, err := buildSvc(t, llm)
	require.NoError(t, err)
	h, ok := b.Config.Services[0].Scaler.(services.HPA)
	require.True(t, ok)
	require.Equal(t, services.KVCacheUsage, h.Metric)

	batch := strings.Replace(svcCluster+svcBERT, "hpa: {metric: requestsPerReplica, target: 50}", "hpa: {metric: requestsRunning, target: 4}", 1)
	require.NotEqual(t, svcCluster+svcBERT, batch)
	_, err = buildSvc(t, batch)
	requireInputError(t, err)
	require.ErrorContains(t, err, "spec.workload.services[0].autoscaler: scales on requestsRunning, which only an LLM service's engines export")
}

// An LLM service's balancing names the gateway's router (serving's
// names): the run's replicas are then the fast model's behind it, and
// the assumptions say how; random, or none, is a Kubernetes Service.
func TestLLMServiceRouterBuilds(t *testing.T) {
	for _, c := range []struct {
		balancing string
		want      *serving.Router
	}{{"", nil}, {"random", nil}, {"round-robin", ptr(serving.RoundRobin)}, {"least-outstanding", ptr(serving.LeastOutstanding)}, {"prefix-aware", ptr(serving.PrefixAware)}} {
		if testing.Short() && c.balancing != "prefix-aware" && c.balancing != "" {
			continue // make test; make longtest builds every router
		}
		body := svcCluster + svcLLMA100
		if c.balancing != "" {
			body = strings.Replace(body, "      load: {constant: 5}", "      load: {constant: 5}\n      balancing: "+c.balancing, 1)
		}
		b, err := buildSvc(t, body)
		require.NoError(t, err, c.balancing)
		require.Equal(t, c.want, b.Config.Services[0].Spec.LLM.Router, c.balancing)
		if c.want != nil {
			require.Contains(t, strings.Join(b.Assumptions, "\n"), "service chat: balancing "+c.balancing+": ", c.balancing)
		}
	}
	// A shared prefix of 2/3 or less of the longest prompt lets the
	// picker's queue scorer outweigh its prefix scorer and spread the
	// prefix, which the fast model does not follow: refused (2 blocks
	// of 128). Above 2/3 (64 blocks of 95: 3 x 64/95 = 2.02 > 2) the
	// picker keeps each prefix where it sent it, and the run follows it.
	body := strings.Replace(svcCluster+svcLLMA100, "      load: {constant: 5}", "      load: {constant: 5}\n      balancing: prefix-aware", 1)
	body = strings.Replace(body, "min: 16, max: 2048}", "min: 64, max: 2048}\n        prefix: {tokens: 32}", 1)
	_, err := buildSvc(t, body)
	requireInputError(t, err)
	require.ErrorContains(t, err, "spec.workload.services[0].llm.prefix.tokens: 32 with balancing prefix-aware: the prefix's 2 blocks are 2/3 or less of the longest prompt's 128")
	_, err = buildSvc(t, strings.Replace(body, "prefix-aware", "round-robin", 1))
	require.NoError(t, err)
	sticky := strings.Replace(body, "min: 64, max: 2048}\n        prefix: {tokens: 32}", "min: 1088, max: 1535}\n        prefix: {tokens: 1024, groups: 6}", 1)
	b, err := buildSvc(t, sticky)
	require.NoError(t, err)
	l := b.Config.Services[0].Spec.LLM
	require.Equal(t, serving.PrefixAware, *l.Router)
	require.EqualValues(t, 6*64, l.Config.PrefixCacheBlocks)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "the picker keeps each of the 6 prefixes on the replica it first sent it to")
	_, err = buildSvc(t, strings.Replace(sticky, "max: 1535}", "max: 1536}", 1))
	require.ErrorContains(t, err, "llm.prefix.tokens: 1024 with balancing prefix-aware: the prefix's 64 blocks are 2/3 or less of the longest prompt's 96")
}

func ptr[T any](v T) *T { return &v }

// A replica's model load from its weights: Llama-3-8B's 8,029,995,008
// parameters (32 layers of 4,096 x 6,144 + 4,096 x 4,096 + 4,096 x
// 28,672 + 14,336 x 4,096, and 2 x 128,256 x 4,096 of embedding and
// head) in bf16 are 16.06 GB, 8.03 s at 2 GB/s, and the engine's init
// 30 s after: 38.03 s before every new replica serves (after its image
// pull). coldStart.modelLoad beside it, or no bandwidth, is refused.
func TestLLMWeightLoadColdStart(t *testing.T) {
	body := strings.Replace(svcCluster+svcLLMA100, "        slo: {ttft", "        weightLoad: {bandwidthGBps: 2, engineInit: 30s}\n        slo: {ttft", 1)
	require.NotEqual(t, svcCluster+svcLLMA100, body)
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	require.EqualValues(t, 38_030, b.Config.Services[0].ModelLoad)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "model load 38.03s a replica (every start and scale-up): 16.06 GB of llama-3-8b weights at 2 GB/s and the engine's init 30s")
	for _, c := range []struct{ from, to, want string }{
		{"{bandwidthGBps: 2, engineInit: 30s}", "{engineInit: 30s}", "spec.workload.services[0].llm.weightLoad.bandwidthGBps: the weights' read bandwidth in GB/s"},
		{"{bandwidthGBps: 2, engineInit: 30s}", "{bandwidthGBps: 2, engineInit: -1s}", "spec.workload.services[0].llm.weightLoad.engineInit: is -1s"},
		{"      load: {constant: 5}", "      load: {constant: 5}\n      coldStart: {modelLoad: 40s}", "spec.workload.services[0].llm.weightLoad: give coldStart.modelLoad or llm.weightLoad, not both"},
	} {
		bad := strings.Replace(body, c.from, c.to, 1)
		require.NotEqual(t, body, bad, c.want)
		_, err := buildSvc(t, bad)
		requireInputError(t, err)
		require.ErrorContains(t, err, c.want)
	}
}
