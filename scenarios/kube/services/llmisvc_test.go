package services

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// KServe's own LLMInferenceService samples: those of one replica pod load
// with their replicas, GPUs, model and vLLM arguments (Qwen is not in the
// catalog: named in a note for llm.model to stand in); multi-node workers
// and prefill/decode disaggregation are refused at their field; a field
// the CRD does not have is refused as the API server's strict field
// validation refuses it.
func TestKServeLLMInferenceServiceSamples(t *testing.T) {
	dir := "testdata/kserve-llmisvc"
	for _, c := range []struct {
		file     string
		replicas int
		hf, err  string
	}{
		{"single-node-gpu_llm-inference-service-qwen2-7b-gpu.yaml", 3, "Qwen/Qwen2.5-7B-Instruct", ""},
		{"agentic-tool-calling_llmisvc-single-gpu.yaml", 1, "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", ""},
		{"single-node-gpu_llm-inference-service-pd-qwen2-7b-gpu.yaml", 1, "Qwen/Qwen2.5-7B-Instruct", ""},
		{"dp-ep_deepseek-r1-gpu-rdma-roce_llm-inference-service-dp-ep-deepseek-r1-gpu-naive.yaml", 0, "", ":103:5: spec.worker: multi-node replicas"},
		{"kv-cache-offloading_llm-inference-service-kv-cache-offloading.yaml", 0, "", `:25:3: spec.workload: unknown field "workload"`},
	} {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		require.NoError(t, err)
		ws, _, err := ReadServing(c.file, data)
		if c.err != "" {
			require.ErrorContains(t, err, c.file+c.err)
			continue
		}
		require.NoError(t, err, c.file)
		require.Len(t, ws, 1)
		w := ws[0]
		require.Equal(t, "LLMInferenceService", w.Kind)
		require.Equal(t, c.replicas, w.Replicas, c.file)
		require.EqualValues(t, 1, w.Pod.GPUs, c.file)
		require.NotNil(t, w.VLLM)
		require.Equal(t, c.hf, w.VLLM.HFModel)
		require.Equal(t, "", w.VLLM.Model)
		require.Equal(t, "main", w.VLLM.Container)
		if strings.Contains(c.file, "-pd-") {
			// Its decode Deployment of 1 pod (spec.replicas) and prefill
			// Deployment of 2 (spec.prefill.replicas), a GPU each: one
			// replica of 2 prefill and 1 decode engines.
			require.NotNil(t, w.Disagg)
			require.Equal(t, Disagg{Prefill: 2, Decode: 1, PrefillTP: 1, PrefillPod: w.Disagg.PrefillPod}, *w.Disagg)
			require.EqualValues(t, 1, w.Disagg.PrefillPod.GPUs)
			require.EqualValues(t, 2000, w.Disagg.PrefillPod.MilliCPU)
		} else {
			require.Nil(t, w.Disagg)
		}
	}
}

// A disaggregated LLMInferenceService's prefill pool is read strictly, at
// file, line and field: what is not modelled is refused.
func TestLLMInferenceServicePrefillErrors(t *testing.T) {
	pd := llamaISVC + `  prefill:
    replicas: 2
    parallelism: {tensor: 4}
    template:
      containers:
      - name: main
        resources:
          limits: {cpu: "16", memory: 128Gi, nvidia.com/gpu: "4"}
`
	ws, _, err := ReadServing("pd.yaml", []byte(pd))
	require.NoError(t, err)
	require.Equal(t, Disagg{Prefill: 2, Decode: 2, PrefillTP: 4, PrefillPod: ws[0].Disagg.PrefillPod}, *ws[0].Disagg)
	require.Equal(t, 1, ws[0].Replicas)
	require.EqualValues(t, 16000, ws[0].Disagg.PrefillPod.MilliCPU)
	for _, c := range []struct{ name, from, to, want string }{
		{"tensor", "parallelism: {tensor: 4}", "parallelism: {tensor: 2}", "pd.yaml:27:27: spec.prefill.parallelism.tensor: 2, but the prefill pod asks for 4 GPUs"},
		{"pipeline", "parallelism: {tensor: 4}", "parallelism: {tensor: 4, pipeline: 2}", "spec.prefill.parallelism.pipeline: 2: pipeline and data parallel engines are not modelled"},
		{"scaling", "    replicas: 2\n    parallelism", "    scaling: {maxReplicas: 3}\n    parallelism", "spec.prefill.scaling: each pool scaling on its own is not modelled"},
		{"worker", "    replicas: 2\n    parallelism", "    worker: {containers: [{name: w}]}\n    parallelism", "spec.prefill.worker: a prefill engine over a group of pods is not modelled"},
		{"no-gpu", `memory: 128Gi, nvidia.com/gpu: "4"}`, "memory: 128Gi}", "spec.prefill.template.containers: ask for no whole nvidia.com/gpu"},
		{"selector", "    template:\n      containers:", "    template:\n      nodeSelector: {pool: a}\n      containers:", "spec.prefill.template: places its pods otherwise than spec.template"},
		{"unknown", "    replicas: 2\n", "    replicas: 2\n    size: 3\n", `spec.prefill.size: unknown field "size"`},
	} {
		body := strings.Replace(pd, c.from, c.to, 1)
		require.NotEqual(t, pd, body, c.name)
		_, _, err := ReadServing("pd.yaml", []byte(body))
		require.ErrorContains(t, err, c.want, c.name)
	}
}

const llamaISVC = `apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: chat
  namespace: serving
spec:
  model:
    uri: hf://meta-llama/Llama-3.1-70B-Instruct
    name: meta-llama/Llama-3.1-70B-Instruct
  replicas: 2
  parallelism:
    tensor: 4
  router:
    scheduler: {}
    route: {}
    gateway: {}
  template:
    containers:
    - name: main
      env:
      - name: VLLM_ADDITIONAL_ARGS
        value: --max-num-seqs 128 --max-model-len 8192 --enable-log-outputs
      resources:
        limits: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4"}
`

// A Llama 3.1 70B LLMInferenceService as KServe's samples write one:
// tensor parallel from spec.parallelism, vLLM's limits from the main
// container's VLLM_ADDITIONAL_ARGS, the router noted; and what the CRD's
// CEL rule and gpuplan refuse.
func TestLLMInferenceService(t *testing.T) {
	ws, _, err := ReadServing("isvc.yaml", []byte(llamaISVC))
	require.NoError(t, err)
	w := ws[0]
	require.Equal(t, 2, w.Replicas)
	require.EqualValues(t, 4, w.Pod.GPUs)
	require.Equal(t, "llama-3-70b", w.VLLM.Model)
	require.Equal(t, 4, *w.VLLM.TensorParallel)
	require.Equal(t, 128, *w.VLLM.MaxNumSeqs)
	require.Equal(t, 8192, *w.VLLM.MaxModelLen)
	require.Contains(t, w.Notes[0], "isvc.yaml:1: LLMInferenceService chat: spec.router.scheduler: the endpoint picker routes requests (prefix-aware by default); the cluster run spreads them at random")
	for _, c := range []struct{ from, to, want string }{
		{"  replicas: 2\n", "  replicas: 2\n  scaling: {minReplicas: 1, maxReplicas: 4}\n", "isvc.yaml:7:3: spec: replicas and scaling are mutually exclusive"},
		{"    tensor: 4\n", "    tensor: 4\n    pipeline: 2\n", "spec.parallelism.pipeline: 2: pipeline and data parallel replicas are not modelled"},
		{"nvidia.com/gpu: \"4\"", "nvidia.com/gpu: \"0\"", "spec.template.containers: ask for no nvidia.com/gpu"},
		{"--max-num-seqs 128", "--max-num-seqs $SEQS", "spec.template.containers[0].env[0].value: the vLLM command line uses a shell variable"},
		{"    uri: hf://meta-llama/Llama-3.1-70B-Instruct\n    name: meta-llama/Llama-3.1-70B-Instruct\n", "    name: \"\"\n", "spec.model: names no model"},
	} {
		body := replaceOnce(t, llamaISVC, c.from, c.to)
		_, _, err := ReadServing("isvc.yaml", []byte(body))
		require.ErrorContains(t, err, c.want)
	}
	// With spec.scaling in place of replicas: its bounds, starting at min.
	ws, _, err = ReadServing("isvc.yaml", []byte(replaceOnce(t, llamaISVC, "  replicas: 2\n", "  scaling: {minReplicas: 1, maxReplicas: 4}\n")))
	require.NoError(t, err)
	require.Equal(t, []int{1, 4, 1}, []int{ws[0].MinReplicas, ws[0].MaxReplicas, ws[0].Replicas})
}

func replaceOnce(t *testing.T, s, from, to string) string {
	t.Helper()
	i := len(s)
	for k := 0; k+len(from) <= len(s); k++ {
		if s[k:k+len(from)] == from {
			i = k
			break
		}
	}
	require.Less(t, i, len(s), "%q not in the manifest", from)
	return s[:i] + to + s[i+len(from):]
}

// An LLMInferenceService with spec.worker and parallelism.pipeline is a
// multi-node replica as KServe runs it: a LeaderWorkerSet group of
// pipeline pods (spec.template the leader, spec.worker each worker), its
// engine 2 pipeline stages of tensor parallel 4. Workers of other GPUs, a worker without pipeline
// parallel, or data-parallel ranks across nodes are refused.
func TestLLMInferenceServiceWorker(t *testing.T) {
	worker := "  worker:\n    containers:\n    - name: main\n      resources:\n        limits: {cpu: \"32\", memory: 256Gi, nvidia.com/gpu: \"4\"}\n"
	group := replaceOnce(t, llamaISVC+worker, "    tensor: 4\n", "    tensor: 4\n    pipeline: 2\n")
	ws, _, err := ReadServing("isvc.yaml", []byte(group))
	require.NoError(t, err)
	w := ws[0]
	require.Equal(t, 2, w.Replicas)
	require.Equal(t, 2, w.Size)
	require.EqualValues(t, 4, w.Pod.GPUs)
	require.Equal(t, 4, *w.VLLM.TensorParallel)
	require.Equal(t, 2, *w.VLLM.PipelineParallel)
	require.Contains(t, strings.Join(w.VLLM.Notes, "\n"), "spec.parallelism tensor 4 and pipeline 2: a replica is a LeaderWorkerSet group of 2 pods (spec.template the leader, spec.worker the workers), its engine 2 pipeline stages of tensor parallel 4")

	_, _, err = ReadServing("isvc.yaml", []byte(llamaISVC+worker))
	require.ErrorContains(t, err, "spec.worker: multi-node replicas are modelled as pipeline-parallel groups")
	_, _, err = ReadServing("isvc.yaml", []byte(replaceOnce(t, group, "    pipeline: 2\n", "    pipeline: 2\n    data: 4\n")))
	require.ErrorContains(t, err, "spec.worker: multi-node replicas are modelled as pipeline-parallel groups")
	k := strings.LastIndex(group, `nvidia.com/gpu: "4"`)
	_, _, err = ReadServing("isvc.yaml", []byte(group[:k]+`nvidia.com/gpu: "2"`+group[k+len(`nvidia.com/gpu: "4"`):]))
	require.ErrorContains(t, err, "spec.worker.containers: ask for 2 GPUs and spec.template for 4")
}
