package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

const svcLLM = `    services:
    - name: chat
      pod: {cpu: "8", memory: 64Gi, gpus: 1}
      load: {constant: 5}
      llm:
        model: llama-3-8b
        gpu: H100-80GB
        tensorParallel: 1
        maxNumBatchedTokens: 2048
        maxModelLen: 8192
        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
`

func parseLLM(t *testing.T, body string) (*Scenario, error) {
	t.Helper()
	return Parse("svc.yaml", "testdata/services", []byte(body))
}

// An LLM service's fields build into the engine model: Llama-3-8B on one
// H100 with vLLM's limits as given and its defaults for the rest.
func TestLLMServiceFields(t *testing.T) {
	s, err := parseLLM(t, svcCluster+svcLLM)
	require.NoError(t, err)
	l, err := s.llmService("spec.workload.services[0]", &s.Spec.Workload.Services[0])
	require.NoError(t, err)
	require.Equal(t, 2048, l.Config.MaxNumBatchedTokens)
	require.Equal(t, 256, l.Config.MaxNumSeqs)
	require.Equal(t, 8192, l.Config.MaxModelLen)
	require.Equal(t, 0.9, l.Config.GPUMemoryUtilization)
	require.Equal(t, "H100-80GB", l.Config.Engine.GPU.Name)
	require.Equal(t, serving.TokenDist{Kind: serving.Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}, l.Input)
	// The cluster runs them on the GPUs named: here the cluster has
	// A100s, not H100s.
	_, err = buildSvc(t, svcCluster+svcLLM)
	require.ErrorContains(t, err, "spec.workload.services[0].llm.gpu: is H100-80GB, but a replica can run on pool a100's A100-80GB")
}

// Bad LLM definitions are errors at their file, line and field (exit 2):
// a model that does not fit the GPUs' memory (Llama-3-70B's 131.4 GiB of
// bf16 weights on one H100 of 79.6 GiB), a max-model-len above the
// model's context, negative token counts, and the rest.
func TestLLMServiceBadInput(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"too-big", "model: llama-3-8b", "model: llama-3-70b",
			`svc.yaml:29:16: spec.workload.services[0].llm.model: llama-3-70b needs 131.4 GiB of weights and 1.5 GiB of activations on each of 1 H100-80GB, which has 71.6 GiB at utilization 0.9; a larger tensorParallel splits it`},
		{"max-model-len", "maxModelLen: 8192", "maxModelLen: 200000",
			`svc.yaml:33:22: spec.workload.services[0].llm.maxModelLen: 200000 is above llama-3-8b's context of 131072 tokens`},
		{"negative-input", "inputTokens: {mean: 512,", "inputTokens: {mean: -512,",
			`svc.yaml:34:29: spec.workload.services[0].llm.inputTokens.mean: -512 tokens: a length is from 0 to 10000000`},
		{"negative-output-min", "min: 16, max: 1024", "min: -16, max: 1024",
			`svc.yaml:35:53: spec.workload.services[0].llm.outputTokens.min: -16 tokens: a length is from 1 to 10000000`},
		{"too-long", "max: 1024}", "max: 7000}",
			`svc.yaml:35:23: spec.workload.services[0].llm.outputTokens: a request of up to 2048 prompt and 7000 output tokens is above maxModelLen 8192`},
		{"unknown-model", "model: llama-3-8b", "model: gpt-5",
			`svc.yaml:29:16: spec.workload.services[0].llm.model: "gpt-5" is not a model of the catalog`},
		{"gpu", "gpu: H100-80GB", "gpu: T4",
			`svc.yaml:30:14: spec.workload.services[0].llm.gpu: "T4" has no LLM roofline defaults`},
		{"tp", "tensorParallel: 1", "tensorParallel: 0",
			`svc.yaml:31:25: spec.workload.services[0].llm.tensorParallel: 0: GPUs of a replica are from 1 to 64`},
		{"seqs", "maxNumBatchedTokens: 2048", "maxNumBatchedTokens: 2048\n        maxNumSeqs: -1",
			`spec.workload.services[0].llm.maxNumSeqs: -1: requests running at once are from 1 to 1048576`},
		{"util", "maxNumBatchedTokens: 2048", "maxNumBatchedTokens: 2048\n        gpuMemoryUtilization: 1.5",
			`spec.workload.services[0].llm.gpuMemoryUtilization: 1.5: a share of the GPU's memory, above 0 and at most 1`},
		{"half-dist", "outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}", "outputTokens: {stdDev: 128}",
			`spec.workload.services[0].llm.outputTokens: give mean (a fixed length), min and max (uniform), or mean and stdDev`},
		{"unknown-field", "maxNumBatchedTokens: 2048", "maxNumBatchedTokens: 2048\n        maxNumSeq: 3",
			`svc.yaml:33:9: spec.workload.services[0].llm.maxNumSeq: unknown field "maxNumSeq"`},
	} {
		body := strings.Replace(svcCluster+svcLLM, c.from, c.to, 1)
		require.NotEqual(t, svcCluster+svcLLM, body, c.name)
		_, err := parseLLM(t, body)
		require.Error(t, err, c.name)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.name)
	}
	// Seventy billion fit four H100s.
	body := strings.Replace(strings.Replace(svcCluster+svcLLM, "model: llama-3-8b", "model: llama-3-70b", 1), "tensorParallel: 1", "tensorParallel: 4", 1)
	_, err := parseLLM(t, body)
	require.NoError(t, err)
}

// A request trace: strict, each bad row an error at its line and column.
func TestReadLLMTraceCSV(t *testing.T) {
	reqs, err := ReadLLMTraceCSV("t.csv", []byte("\xef\xbb\xbftime,input_tokens,output_tokens\r\n0,512,256\r\n# later\r\n0.25,1024,128\r\n0.25,64,512\r\n"), 8192)
	require.NoError(t, err)
	require.Equal(t, []serving.LLMRequest{{ArrivalMs: 0, Input: 512, Output: 256}, {ArrivalMs: 250, Input: 1024, Output: 128}, {ArrivalMs: 250, Input: 64, Output: 512}}, reqs)
	for _, c := range []struct{ body, want string }{
		{"time,requests_per_second\n", `t.csv:1: header: is "time,requests_per_second"; a request trace starts with the header time,input_tokens,output_tokens`},
		{"time,input_tokens,output_tokens\n0,512,-3\n", `t.csv:2: output_tokens: "-3" is not a count of tokens from 1 to 10000000`},
		{"time,input_tokens,output_tokens\n0,-512,3\n", `t.csv:2: input_tokens: "-512" is not a count of tokens`},
		{"time,input_tokens,output_tokens\n1,5,3\n0.5,5,3\n", `t.csv:3: time: "0.5" is before the row before: requests must be in time order`},
		{"time,input_tokens,output_tokens\n0,8000,500\n", `t.csv:2: output_tokens: a request of 8000 prompt and 500 output tokens is above maxModelLen 8192`},
		{"time,input_tokens,output_tokens\n-1,5,3\n", `t.csv:2: time: "-1" is not a time in seconds`},
		{"time,input_tokens,output_tokens\n0,5\n", `t.csv:2: "0,5" has 2 fields`},
		{"time,input_tokens,output_tokens\n", `t.csv: has a header and no requests`},
	} {
		_, err := ReadLLMTraceCSV("t.csv", []byte(c.body), 8192)
		require.Error(t, err, c.body)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.body)
	}
}

// A service's trace is read when the scenario is built: its errors come
// from `scenario check` too.
func TestLLMServiceTrace(t *testing.T) {
	body := strings.Replace(svcCluster+svcLLM, `        inputTokens: {mean: 512, stdDev: 256, min: 16, max: 2048}
        outputTokens: {mean: 256, stdDev: 128, min: 16, max: 1024}
`, "        requestTrace: {path: llm-trace.csv}\n", 1)
	body = strings.Replace(body, "      load: {constant: 5}\n", "", 1)
	s, err := parseLLM(t, body)
	require.NoError(t, err)
	l, err := serviceBuilder{Scenario: s}.buildLLMService("spec.workload.services[0]", &s.Spec.Workload.Services[0])
	require.NoError(t, err)
	require.Len(t, l.Trace, 5)
	require.Equal(t, serving.LLMRequest{ArrivalMs: 1500, Input: 2048, Output: 1024}, l.Trace[3])
	// The cluster run serves it: with no load given, the trace's five
	// requests in the first 2 s are the load (bins of a minute: 5/60 a
	// second, then 0), their lengths the trace's (prompts 512, 1,024,
	// 64, 2,048 and 16: a mean of 732.8).
	h100 := strings.Replace(strings.Replace(body, "gpuModel: A100-80GB", "gpuModel: H100-80GB", 1), "count: 2\n      gpuModel: T4", "count: 0\n      gpuModel: T4", 1)
	b, err := buildSvc(t, h100)
	require.NoError(t, err)
	sp := b.Config.Services[0].Spec
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 5.0 / 60}, {AtMs: 60_000, Rate: 0}}, sp.Load.Points)
	require.Equal(t, serving.TokenDist{Kind: serving.Empirical, Mean: 732.8, Min: 16, Max: 2048, Values: []int{16, 64, 512, 1024, 2048}}, sp.LLM.Input)
	// A load beside the trace is refused, and a bin out of range.
	_, err = parseLLM(t, strings.Replace(body, "      llm:\n", "      load: {constant: 5}\n      llm:\n", 1))
	require.ErrorContains(t, err, "spec.workload.services[0].load: give a load or llm.requestTrace, not both")
	_, err = parseLLM(t, strings.Replace(body, "{path: llm-trace.csv}", "{path: llm-trace.csv, bin: 500ms}", 1))
	require.ErrorContains(t, err, "spec.workload.services[0].llm.requestTrace.bin: is 500ms: the arrivals are counted in bins of 1s to 24h")

	// maxModelLen 2048 refuses the trace's fourth request, at its line.
	_, err = buildSvc(t, strings.Replace(body, "maxModelLen: 8192", "maxModelLen: 2048", 1))
	require.ErrorContains(t, err, "llm-trace.csv:6: output_tokens: a request of 2048 prompt and 1024 output tokens is above maxModelLen 2048")
	// Lengths and a trace together are refused.
	_, err = parseLLM(t, strings.Replace(body, "        requestTrace:", "        inputTokens: {mean: 5}\n        requestTrace:", 1))
	require.ErrorContains(t, err, "spec.workload.services[0].llm.requestTrace: give the token lengths or a request trace, not both")
}

// stepFit and apiOverhead reach the engine: with every coefficient 0 but
// perStepUs 1000 and perSeqUs 50, a step of three decodes takes
// 1,000 + 3 x 50 = 1,150 us whatever their contexts; the API server's
// times are the config's.
func TestLLMServiceStepFit(t *testing.T) {
	body := strings.Replace(svcCluster+svcLLM, "        maxModelLen: 8192\n",
		"        maxModelLen: 8192\n        stepFit: {perStepUs: 1000, perSeqUs: 50}\n        apiOverhead: {requestMs: 15.6, tokenMs: 0.046, finishMs: 0.78}\n", 1)
	s, err := parseLLM(t, body)
	require.NoError(t, err)
	l, err := s.llmService("spec.workload.services[0]", &s.Spec.Workload.Services[0])
	require.NoError(t, err)
	e := l.Config.Engine
	require.Equal(t, serving.Fitted, e.StepModel)
	require.InDelta(t, 1150e-6, e.StepTime(serving.Step{Decode: []int{100, 2000, 7000}}), 1e-12)
	require.Equal(t, 15.6, l.Config.RequestOverheadMs)
	require.Equal(t, 0.046, l.Config.TokenOverheadMs)
	require.Equal(t, 0.78, l.Config.FinishOverheadMs)

	for _, c := range []struct{ to, want string }{
		{"stepFit: {perStepUs: -1}", `spec.workload.services[0].llm.stepFit.perStepUs: -1: from 0 to 1e+06`},
		{"stepFit: {weights: 0}", `spec.workload.services[0].llm.stepFit: every coefficient is 0: a step would take no time`},
		{"apiOverhead: {tokenMs: 20000}", `spec.workload.services[0].llm.apiOverhead.tokenMs: 20000 ms: from 0 to 10000`},
		{"stepFit: {perStep: 3}", `unknown field "perStep"`},
	} {
		bad := strings.Replace(svcCluster+svcLLM, "        maxModelLen: 8192\n", "        maxModelLen: 8192\n        "+c.to+"\n", 1)
		_, err := parseLLM(t, bad)
		require.Error(t, err, c.to)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.to)
	}
}
