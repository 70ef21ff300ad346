package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

// svcGroupCluster is two 8-GPU H100 nodes on the default network.
const svcGroupCluster = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: lws
spec:
  horizon: 24h
  cluster:
    pools:
    - name: h100
      count: 2
      gpuModel: H100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
  workload:
`

// svcGroup is Llama-3-70B on a LeaderWorkerSet group of two pods of 8
// H100s: one engine of tensor parallel 16.
const svcGroup = `    services:
    - name: big
      pod: {cpu: "32", memory: 256Gi, gpus: 8}
      leaderWorker: {size: 2}
      load: {constant: 2}
      llm:
        model: llama-3-70b
        gpu: H100-80GB
        tensorParallel: 16
        weightLoad: {bandwidthGBps: 2, engineInit: 60s}
        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
`

// A group of two 8-GPU pods builds into a replica of two pods whose
// engine is tensor parallel over the 16 GPUs, its all-reduces across the
// two nodes on InfiniBand NDR 400 (nccl-tests' fit on 2 nodes of 8 H100:
// 50 us, 155.66 GB/s bus bandwidth; NVLink's 479.7 GB/s is faster, so the
// network prices it). By hand, a decode of one sequence of 1,024 tokens
// on one of the 16 H100s (3,350 GB/s x 0.917, 24 us a kernel): per
// layer the four projections split 16 ways (each the kernel time plus
// its weights and the token's activations over the bandwidth), the read
// of its KV cache share, and two all-reduces of the token's 16 KiB
// (50 us + 16,384 x 2 x 15/16 B / 155.66 GB/s); then the output head's
// sixteenth. Each pod loads its half of the 141 GB of weights at 2 GB/s
// (35.3 s) before the engine's 60 s init.
func TestGroupReplicaBuilds(t *testing.T) {
	b, err := buildSvc(t, svcGroupCluster+svcGroup)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.Equal(t, 2, c.PodsPerReplica)
	require.EqualValues(t, 8, c.Pod.GPUs)
	e := c.Spec.LLM.Config.Engine
	require.Equal(t, 16, e.TP)

	bw := 3350e9 * 4400 / 4800 // the datasheet's 3,350 GB/s at the H200 fit's share, 4,400 of 4,800
	kernel := 24e-6
	gemm := func(k, n int) float64 { return kernel + 2*float64(k*n+k+n)/bw }
	h, kv, ff := 8192, 2*8*128, 28672
	layer := gemm(h, (h+kv)/16) + gemm(h/16, h) + gemm(h, 2*ff/16) + gemm(ff/16, h)
	layer += kernel + 1024*2*8*128*2/16.0/bw
	ar := 50e-6 + 16384*2*15/16.0/155.66e9
	layer += 2 * ar
	want := 80*layer + gemm(h, 128256/16)
	got := e.StepTime(serving.Step{Decode: []int{1024}})
	require.InEpsilon(t, want, got, 1e-9)
	require.InEpsilon(t, ar, e.AllReduce(16384), 1e-12)

	weights := (80*float64(h*(h+kv)+h*h+h*2*ff+ff*h) + 2*128256*8192) * 2
	require.Equal(t, int64(weights/2/2e9*1e3+0.5)+60_000, c.ModelLoad)

	cap16, err := serving.LLMCapacity(c.Spec.LLM.Config, c.Spec.LLM.Input, c.Spec.LLM.Output)
	require.NoError(t, err)
	require.Equal(t, cap16, c.Spec.LLM.CapacityPerReplica)
	all := strings.Join(b.Assumptions, "\n")
	require.Contains(t, all, "a replica is a LeaderWorkerSet group of 2 pods of 8 GPUs")
	require.Contains(t, all, "priced on ib-ndr-400")
}

// What a group cannot be is an error at its field.
func TestGroupReplicaErrors(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"gpus", "tensorParallel: 16", "tensorParallel: 8", "spec.workload.services[0].pod.gpus: a replica of tensorParallel 8 holds 8 whole GPUs; the pod asks for 8, 2 pods a replica"},
		{"size", "size: 2", "size: 0", "spec.workload.services[0].leaderWorker.size: 0: the pods of a replica are from 1 to 1024"},
		{"restart", "size: 2}", "size: 2, restartPolicy: None}", "spec.workload.services[0].leaderWorker.restartPolicy: None (a pod restarted alone, its group kept) is not modelled"},
		{"restart-typo", "size: 2}", "size: 2, restartPolicy: Recreate}", `spec.workload.services[0].leaderWorker.restartPolicy: is "Recreate"; want RecreateGroupOnPodRestart`},
		{"field", "size: 2}", "size: 2, sizes: 3}", "sizes"},
	} {
		body := strings.Replace(svcGroupCluster+svcGroup, c.from, c.to, 1)
		require.NotEqual(t, svcGroupCluster+svcGroup, body, c.name)
		_, err := buildSvc(t, body)
		require.Error(t, err, c.name)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.name)
	}
	// A batch server's replica is one pod.
	bert := strings.Replace(svcCluster+svcBERT, "      queue: inference\n", "      queue: inference\n      leaderWorker: {size: 2}\n", 1)
	require.NotEqual(t, svcCluster+svcBERT, bert)
	_, err := buildSvc(t, bert)
	requireInputError(t, err)
	require.ErrorContains(t, err, "spec.workload.services[0].leaderWorker.size: 2 pods a replica: a batch server's replica is one pod")
}

// vLLM's LeaderWorkerSet (testdata/services/lws-vllm.yaml, after vLLM's
// LWS guide) given in the services slot: two replicas, each a group of two
// 8-GPU pods, the engine Llama 3.1 70B at tensor 8 x pipeline 2 read as
// such; the same service as leaderWorker {size: 2} with tensorParallel 8
// and pipelineParallel 2 written in the scenario.
func TestGroupReplicaFromLeaderWorkerSet(t *testing.T) {
	lws := `    services:
    - name: vllm
      manifests: [lws-vllm.yaml]
      load: {constant: 2}
      llm:
        gpu: H100-80GB
        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
`
	b, err := buildSvc(t, svcGroupCluster+lws)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.Equal(t, 2, c.PodsPerReplica)
	require.Equal(t, 2, c.InitialReplicas)
	require.EqualValues(t, 8, c.Pod.GPUs)
	require.Equal(t, 8, c.Spec.LLM.Config.Engine.TP)
	require.Equal(t, 2, c.Spec.LLM.Config.Engine.PP)
	require.Equal(t, "llama-3-70b", c.Spec.LLM.Config.Engine.Model.Name)
	require.Equal(t, "serving", c.Queue)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "its engine is pipeline parallel 2 (layers 40,40 a stage, vLLM's split) of tensor parallel 8")

	own, err := buildSvc(t, svcGroupCluster+strings.Replace(strings.Replace(strings.Replace(svcGroup, "name: big", "name: vllm", 1), "weightLoad: {bandwidthGBps: 2, engineInit: 60s}\n        ", "", 1),
		"tensorParallel: 16", "tensorParallel: 8\n        pipelineParallel: 2", 1))
	require.NoError(t, err)
	o := own.Config.Services[0]
	require.Equal(t, o.Spec.LLM.CapacityPerReplica, c.Spec.LLM.CapacityPerReplica)
	require.Equal(t, o.Spec.LLM.Config.Engine.StepTime(serving.Step{Decode: []int{512, 2048}}), c.Spec.LLM.Config.Engine.StepTime(serving.Step{Decode: []int{512, 2048}}))
}
