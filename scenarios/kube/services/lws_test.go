package services

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vLLM's multi-node serving on a LeaderWorkerSet (testdata/lws-vllm.yaml,
// after vLLM's LWS guide) reads as two replicas, each a group of two pods
// of 8 GPUs; the leader's vllm serve, with LWS's $(LWS_GROUP_SIZE)
// expanded as Kubernetes expands it, is Llama 3.1 70B at tensor parallel
// 8 x pipeline parallel 2, modelled as tensor parallel 16 and said so.
func TestLWSvLLMGuide(t *testing.T) {
	data, err := os.ReadFile("testdata/lws-vllm.yaml")
	require.NoError(t, err)
	ws, skipped, err := ReadServing("lws-vllm.yaml", data)
	require.NoError(t, err)
	require.Empty(t, skipped)
	require.Len(t, ws, 1)
	w := ws[0]
	require.Equal(t, "LeaderWorkerSet", w.Kind)
	require.Equal(t, "vllm", w.Name)
	require.Equal(t, "serving", w.Namespace)
	require.Equal(t, 2, w.Replicas)
	require.Equal(t, 2, w.Size)
	require.EqualValues(t, 8, w.Pod.GPUs)
	require.EqualValues(t, 64000, w.Pod.MilliCPU)
	require.Equal(t, map[string]string{"role": "leader"}, w.Pod.Labels)
	require.NotNil(t, w.VLLM)
	require.Equal(t, "vllm-leader", w.VLLM.Container)
	require.Equal(t, "llama-3-70b", w.VLLM.Model)
	require.Equal(t, 8, *w.VLLM.TensorParallel)
	require.Equal(t, 2, *w.VLLM.PipelineParallel)
}

// What a group cannot be is refused at its file, line and field.
func TestLWSRefusals(t *testing.T) {
	data, err := os.ReadFile("testdata/lws-vllm.yaml")
	require.NoError(t, err)
	body := string(data)
	for _, c := range []struct{ name, from, to, want string }{
		{"restart", "restartPolicy: RecreateGroupOnPodRestart", "restartPolicy: None", "lws-vllm.yaml:14:20: spec.leaderWorkerTemplate.restartPolicy: None (a pod restarted alone, its group kept) is not modelled"},
		{"size", "size: 2", "size: 0", "lws-vllm.yaml:13:11: spec.leaderWorkerTemplate.size: is 0; a group is 1 to 1024 pods"},
		{"unknown", "  replicas: 2\n", "  replicas: 2\n  replica: 3\n", `unknown field "replica"`},
		{"startup", "  replicas: 2\n", "  replicas: 2\n  startupPolicy: Whenever\n", `spec.startupPolicy: is "Whenever"; want LeaderCreated or LeaderReady`},
	} {
		b := strings.Replace(body, c.from, c.to, 1)
		require.NotEqual(t, body, b, c.name)
		_, _, err := ReadServing("lws-vllm.yaml", []byte(b))
		require.ErrorContains(t, err, c.want, c.name)
	}
	// Workers of other GPUs than their leader's.
	k := strings.LastIndex(body, `nvidia.com/gpu: "8"`)
	b := body[:k] + `nvidia.com/gpu: "4"` + body[k+len(`nvidia.com/gpu: "8"`):]
	_, _, err = ReadServing("lws-vllm.yaml", []byte(b))
	require.ErrorContains(t, err, "spec.leaderWorkerTemplate.workerTemplate.spec.containers: ask for 4 GPUs and the leader for 8")
}

// Pipeline parallel is the engine's stages, in one pod (a Deployment) or
// across a group's.
func TestPipelineParallelRead(t *testing.T) {
	v, err := parseVLLM([]string{"meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4", "-pp", "2"}, 0)
	require.NoError(t, err)
	require.Equal(t, 4, *v.TensorParallel)
	require.Equal(t, 2, *v.PipelineParallel)
	v, err = parseVLLM([]string{"meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4", "-pp", "2", "--nnodes", "2", "--node-rank", "0", "--master-addr", "x"}, 2)
	require.NoError(t, err)
	require.Equal(t, 2, *v.PipelineParallel)
	require.NotContains(t, strings.Join(v.Notes, "\n"), "not read", "a multi-node engine's rank arguments are known")
}

// Kubernetes' $(VAR) expansion of LWS's variables: $$ escapes, an unknown
// variable stays.
func TestExpandEnv(t *testing.T) {
	env := lwsEnv("vllm", "", 3)
	got := expandEnv([]string{"--pp $(LWS_GROUP_SIZE) --addr=$(LWS_LEADER_ADDRESS) $$(LWS_GROUP_SIZE) $(HOME) $"}, env)
	require.Equal(t, []string{"--pp 3 --addr=vllm-0.vllm.default $(LWS_GROUP_SIZE) $(HOME) $"}, got)
}
