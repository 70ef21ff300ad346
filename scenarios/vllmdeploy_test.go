package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vllmDeploy is a vLLM Deployment as vLLM's Kubernetes guide writes one
// (the server in a shell script), serving Llama 3.1 8B on one A100.
const vllmDeploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
  namespace: serving
spec:
  replicas: 2
  selector:
    matchLabels: {app: chat}
  template:
    metadata:
      labels: {app: chat}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:latest
        command: ["/bin/sh", "-c"]
        args:
        - vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 128 --max-model-len 4096 --gpu-memory-utilization 0.85 --max-num-batched-tokens 1024 --enable-prefix-caching
        ports:
        - containerPort: 8000
        resources:
          limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "1"}
`

const vllmService = `    services:
    - name: chat
      manifests: [vllm.yaml]
      load: {constant: 5}
      llm:
        gpu: A100-80GB
        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
`

// A vLLM Deployment is an LLM service: the engine's limits are the
// server's arguments, the replicas and pod the Deployment's; the scenario
// gives the request lengths and may override an argument (it wins, and a
// note says so). Arguments the run does not model are noted.
func TestLLMServiceFromVLLMDeployment(t *testing.T) {
	_, write, build := vllmFiles(t)
	write(vllmDeploy)
	b, err := build(svcCluster + vllmService)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.EqualValues(t, 1, c.Pod.GPUs)
	require.Equal(t, 2, c.InitialReplicas)
	cfg := c.Spec.LLM.Config
	require.Equal(t, "llama-3-8b", cfg.Engine.Model.Name)
	require.Equal(t, 1, cfg.Engine.TP)
	require.Equal(t, 128, cfg.MaxNumSeqs)
	require.Equal(t, 4096, cfg.MaxModelLen)
	require.Equal(t, 0.85, cfg.GPUMemoryUtilization)
	require.Equal(t, 1024, cfg.MaxNumBatchedTokens)
	all := strings.Join(b.Assumptions, "\n")
	require.Contains(t, all, `vLLM server of Deployment chat (`)
	require.Contains(t, all, `container "vllm", model "meta-llama/Llama-3.1-8B-Instruct": model llama-3-8b, --max-num-seqs 128, --max-num-batched-tokens 1024, --max-model-len 4096, --gpu-memory-utilization 0.85; the rest vLLM's defaults`)
	require.Contains(t, all, "vLLM --enable-prefix-caching: the cluster run caches prefixes where llm.prefix says")

	// The scenario's maxNumSeqs wins over the argument.
	b, err = build(svcCluster + strings.Replace(vllmService, "        gpu: A100-80GB\n", "        gpu: A100-80GB\n        maxNumSeqs: 64\n", 1))
	require.NoError(t, err)
	require.Equal(t, 64, b.Config.Services[0].Spec.LLM.Config.MaxNumSeqs)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "the scenario's llm.maxNumSeqs 64 over --max-num-seqs 128 (the scenario wins)")

	// Tensor parallel 2 on a one-GPU pod is the pod's error, as vLLM
	// would not start.
	write(strings.Replace(vllmDeploy, "--max-num-seqs 128", "--max-num-seqs 128 -tp 2", 1))
	_, err = build(svcCluster + vllmService)
	requireInputError(t, err)
	require.ErrorContains(t, err, "spec.workload.services[0].pod.gpus: a replica of tensorParallel 2 holds 2 whole GPUs; the pod asks for 1")

	// Pipeline parallel is the engine's stages: two of one GPU need two.
	write(strings.Replace(vllmDeploy, "--max-num-seqs 128", "--max-num-seqs 128 --pipeline-parallel-size 2", 1))
	_, err = build(svcCluster + vllmService)
	requireInputError(t, err)
	require.ErrorContains(t, err, "spec.workload.services[0].pod.gpus: a replica of tensorParallel 1 x pipelineParallel 2 holds 2 whole GPUs; the pod asks for 1")

	// A model outside the catalog, and no llm.model: refused at the field.
	write(strings.Replace(vllmDeploy, "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct", 1))
	_, err = build(svcCluster + vllmService)
	requireInputError(t, err)
	require.ErrorContains(t, err, "spec.workload.services[0].llm.model: is not given (nor a vLLM server's model of the catalog in the service's manifests)")

	// Without an llm block the request lengths are missing: refused.
	write(vllmDeploy)
	_, err = build(svcCluster + "    services:\n    - name: chat\n      manifests: [vllm.yaml]\n      load: {constant: 5}\n      batching: {batchSize: 1, baseMs: 20, perItemMs: 1}\n")
	requireInputError(t, err)
	require.ErrorContains(t, err, `spec.workload.services[0]: Deployment chat runs a vLLM server (`)
	require.ErrorContains(t, err, `container "vllm"): give the service an llm block with the requests' inputTokens and outputTokens`)
}

// A KServe LLMInferenceService is an LLM service too: Llama 3.1 70B on 4
// GPUs a replica, 2 replicas, vLLM's limits from VLLM_ADDITIONAL_ARGS;
// with spec.scaling its autoscaler (KEDA or WVA) is not read, so the
// scenario must give one.
func TestLLMServiceFromLLMInferenceService(t *testing.T) {
	const isvc = `apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: chat
spec:
  model:
    uri: hf://meta-llama/Llama-3.1-70B-Instruct
  replicas: 2
  parallelism:
    tensor: 4
  template:
    containers:
    - name: main
      env:
      - name: VLLM_ADDITIONAL_ARGS
        value: --max-num-seqs 128 --max-model-len 8192
      resources:
        limits: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4"}
`
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vllm.yaml"), []byte(isvc), 0o644))
	build := func(body string) (*Built, error) { return buildIn(t, dir, body, Options{}) }
	b, err := build(svcCluster + vllmService)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.EqualValues(t, 4, c.Pod.GPUs)
	require.Equal(t, []int{2, 2, 2}, []int{c.MinReplicas, c.MaxReplicas, c.InitialReplicas})
	cfg := c.Spec.LLM.Config
	require.Equal(t, "llama-3-70b", cfg.Engine.Model.Name)
	require.Equal(t, 4, cfg.Engine.TP)
	require.Equal(t, 128, cfg.MaxNumSeqs)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "replicas from LLMInferenceService chat")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "vllm.yaml"), []byte(strings.Replace(isvc, "  replicas: 2\n", "  scaling: {minReplicas: 1, maxReplicas: 4}\n", 1)), 0o644))
	_, err = build(svcCluster + vllmService)
	requireInputError(t, err)
	require.ErrorContains(t, err, "spec.workload.services[0].manifests: LLMInferenceService chat scales by spec.scaling (KEDA or the workload variant autoscaler), which gpuplan does not read: give the service an autoscaler")
}

// vllmFiles gives a test a folder dir with its service's manifests file:
// write sets vllm.yaml, build builds a scenario read from the folder.
func vllmFiles(t *testing.T) (dir string, write func(body string), build func(body string) (*Built, error)) {
	dir = t.TempDir()
	write = func(body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "vllm.yaml"), []byte(body), 0o644))
	}
	build = func(body string) (*Built, error) {
		s, err := Parse("svc.yaml", dir, []byte(body))
		if err != nil {
			return nil, err
		}
		b, err := s.Build(Options{})
		if err == nil {
			t.Cleanup(func() { b.Close() })
		}
		return b, err
	}
	return dir, write, build
}
