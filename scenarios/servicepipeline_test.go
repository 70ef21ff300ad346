package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

// A group of two 8-GPU pods as vLLM's multi-node recipe runs it: tensor
// parallel 8 within each node, pipeline parallel 2 across them. By hand,
// a decode of one sequence of 1,024 tokens: each stage's 40 layers on
// one of its 8 H100s (3,350 GB/s x 0.917, 24 us a kernel: the four
// projections split 8 ways, its KV cache share, two all-reduces of the
// token's 16 KiB on h100-nvls, 39.67 us + 2 x 7/8 of the bytes at 479.7
// GB/s), the output head on the last, and one send of the 16 KiB between
// the nodes on InfiniBand NDR 400 (50 us + the bytes at 155.66 GB/s).
func TestGroupReplicaPipeline(t *testing.T) {
	body := strings.Replace(svcGroupCluster+svcGroup, "tensorParallel: 16", "tensorParallel: 8\n        pipelineParallel: 2", 1)
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	c := b.Config.Services[0]
	e := c.Spec.LLM.Config.Engine
	require.Equal(t, 8, e.TP)
	require.Equal(t, 2, e.PP)

	bw := 3350e9 * 4400 / 4800
	kernel := 24e-6
	gemm := func(k, n int) float64 { return kernel + 2*float64(k*n+k+n)/bw }
	h, kv, ff := 8192, 2*8*128, 28672
	layer := gemm(h, (h+kv)/8) + gemm(h/8, h) + gemm(h, 2*ff/8) + gemm(ff/8, h)
	layer += kernel + 1024*2*8*128*2/8.0/bw
	layer += 2 * (39.67e-6 + 16384*2*7/8.0/479.7e9)
	send := 50e-6 + 16384/155.66e9
	want := 40*layer + 40*layer + gemm(h, 128256/8) + send
	require.InEpsilon(t, want, e.StepTime(serving.Step{Decode: []int{1024}}), 1e-9)

	all := strings.Join(b.Assumptions, "\n")
	require.Contains(t, all, "a replica is a LeaderWorkerSet group of 2 pods of 8 GPUs")
	require.Contains(t, all, "its engine is pipeline parallel 2 (layers 40,40 a stage, vLLM's split) of tensor parallel 8, each stage's two all-reduces a layer on h100-nvls")
	require.Contains(t, all, "activations sent from stage to stage on ib-ndr-400 (50 us + bytes at 156 GB/s)")
	require.Contains(t, all, "LLM engine llama-3-70b on 16 H100-80GB")

	for _, c := range []struct{ name, from, to, want string }{
		{"gpus", "pipelineParallel: 2", "pipelineParallel: 3", "spec.workload.services[0].pod.gpus: a replica of tensorParallel 8 x pipelineParallel 3 holds 24 whole GPUs; the pod asks for 8, 2 pods a replica"},
		{"range", "pipelineParallel: 2", "pipelineParallel: 0", "spec.workload.services[0].llm.pipelineParallel: 0: pipeline stages of a replica are from 1 to 64"},
	} {
		_, err := buildSvc(t, strings.Replace(body, c.from, c.to, 1))
		require.Error(t, err, c.name)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.name)
	}
}
