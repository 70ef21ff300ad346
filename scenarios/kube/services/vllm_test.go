package services

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// The three ways a vLLM server is started in a pod: `vllm serve` in a
// shell script (vLLM's Kubernetes guide), the OpenAI API server module,
// and the vllm/vllm-openai image's entry point with the arguments alone.
func TestVLLMArgumentForms(t *testing.T) {
	for _, c := range []struct {
		name string
		c    corev1.Container
		tp   int
		hf   string
	}{
		{"shell", corev1.Container{Image: "vllm/vllm-openai:latest", Command: []string{"/bin/sh", "-c"},
			Args: []string{`vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --max_num_seqs=64 --trust-remote-code`}}, 4, "meta-llama/Llama-3.1-70B-Instruct"},
		{"module", corev1.Container{Image: "registry.local/serve:1", Command: []string{"python3", "-m", "vllm.entrypoints.openai.api_server"},
			Args: []string{"--model", "meta-llama/Llama-3.3-70B-Instruct", "-tp", "4", "--max-num-seqs", "64"}}, 4, "meta-llama/Llama-3.3-70B-Instruct"},
		{"entrypoint", corev1.Container{Image: "vllm/vllm-openai:v0.10.1", Args: []string{"--model=meta-llama/Meta-Llama-3.1-70B-Instruct", "--tensor-parallel-size=4", "--max-num-seqs=64"}}, 4, "meta-llama/Meta-Llama-3.1-70B-Instruct"},
	} {
		v, err := vllmOf("f.yaml", 1, nil, "spec.template.spec", []corev1.Container{{Name: "sidecar", Image: "busybox"}, c.c}, 0)
		require.NoError(t, err, c.name)
		require.NotNil(t, v, c.name)
		require.Equal(t, c.hf, v.HFModel, c.name)
		require.Equal(t, "llama-3-70b", v.Model, c.name)
		require.Equal(t, c.tp, *v.TensorParallel, c.name)
		require.Equal(t, 64, *v.MaxNumSeqs, c.name)
		require.Nil(t, v.MaxModelLen, c.name)
	}
	// A container that runs no vLLM server is none.
	v, err := vllmOf("f.yaml", 1, nil, "spec.template.spec", []corev1.Container{{Image: "nvcr.io/nvidia/tritonserver:24.05-py3", Args: []string{"tritonserver"}}}, 0)
	require.NoError(t, err)
	require.Nil(t, v)
}

// Model names: Llama 3, 3.1 and 3.3 of 8B and 70B are the catalog's; Llama
// 3 (not 3.1) has an 8,192-token context, vLLM's default max-model-len for
// it; any other model is named in a note for llm.model to stand in.
func TestVLLMModels(t *testing.T) {
	for hf, want := range map[string]string{"meta-llama/Meta-Llama-3-8B-Instruct": "llama-3-8b", "meta-llama/Llama-3.1-8B": "llama-3-8b",
		"/models/Llama-3.3-70B-Instruct": "llama-3-70b", "meta-llama/Llama-3.2-1B-Instruct": "", "mistralai/Mistral-7B-Instruct-v0.3": "",
		"meta-llama/Llama-3.1-405B-Instruct": ""} {
		v, err := parseVLLM([]string{hf}, 0)
		require.NoError(t, err, hf)
		require.Equal(t, want, v.Model, hf)
		if want == "" {
			require.Contains(t, v.Notes[0], "is not in gpuplan's catalog (llama-3-8b, llama-3-70b): llm.model must name the one of the same shape", hf)
		}
	}
	v, err := parseVLLM([]string{"meta-llama/Meta-Llama-3-8B-Instruct"}, 0)
	require.NoError(t, err)
	require.Equal(t, 8192, *v.MaxModelLen)
	v, err = parseVLLM([]string{"meta-llama/Llama-3.1-8B-Instruct"}, 0)
	require.NoError(t, err)
	require.Nil(t, v.MaxModelLen)
}

// What is not modelled is noted or refused, never dropped: pipeline and
// data parallel replicas are refused; quantization, prefix caching and
// unknown arguments are noted; shell variables are refused (their value
// is not in the manifest); a bad number names its flag.
func TestVLLMWhatIsNotModelled(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"m", "-dp", "2"}, "-dp 2: pipeline and data parallel replicas are not modelled"},
		{[]string{"m", "--max-num-seqs", "0"}, `--max-num-seqs "0" is not a whole number of at least 1`},
		{[]string{"m", "--gpu-memory-utilization", "1.5"}, `--gpu-memory-utilization "1.5" is not in (0, 1]`},
		{[]string{"m", "--max-model-len"}, "--max-model-len has no value"},
		{[]string{"--port", "8000"}, "the vLLM server names no model"},
		{[]string{"a", "b"}, `"b": a second positional argument after the model "a"`},
	} {
		_, err := parseVLLM(c.args, 0)
		require.ErrorContains(t, err, c.err, "%v", c.args)
	}
	v, err := parseVLLM([]string{"meta-llama/Llama-3.1-8B-Instruct", "--quantization", "fp8", "--enable-prefix-caching", "--port", "8000", "--made-up-flag", "3"}, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"vLLM --quantization fp8: not modelled, weights and KV cache taken as 16-bit",
		"vLLM --enable-prefix-caching: the cluster run caches prefixes where llm.prefix says what the prompts share; without it every prompt is prefilled whole",
		"vLLM arguments not read: --made-up-flag"}, v.Notes)
	_, err = vllmOf("f.yaml", 3, nil, "spec.template.spec", []corev1.Container{{Command: []string{"sh", "-c"}, Args: []string{"vllm serve $MODEL --max-num-seqs 8"}}}, 0)
	require.ErrorContains(t, err, "f.yaml:3: spec.template.spec.containers[0].command: the vLLM command line uses a shell variable or substitution")
}

// The argument reader never panics, and what it reads is in range.
func FuzzVLLMArgs(f *testing.F) {
	f.Add("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 128 --max-model-len=4096")
	f.Add("python -m vllm.entrypoints.openai.api_server --model m -tp 4 --gpu-memory-utilization 0.9")
	f.Add(`vllm serve "a b" --quantization fp8 -dp 1 --enable-prefix-caching`)
	f.Add("vllm serve m --max-num-seqs")
	f.Add("vllm serve $M")
	f.Fuzz(func(t *testing.T, script string) {
		v, err := vllmOf("f.yaml", 1, nil, "spec", []corev1.Container{{Command: []string{"sh", "-c"}, Args: []string{script}}}, 0)
		if err != nil || v == nil {
			return
		}
		for _, p := range []*int{v.TensorParallel, v.MaxNumSeqs, v.MaxNumBatchedTokens, v.MaxModelLen, v.BlockSize} {
			if p != nil && *p < 1 {
				t.Fatalf("%q read %d", script, *p)
			}
		}
		if g := v.GPUMemoryUtilization; g != nil && !(*g > 0 && *g <= 1) {
			t.Fatalf("%q read utilization %g", script, *g)
		}
	})
}
