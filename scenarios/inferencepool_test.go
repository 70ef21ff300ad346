package scenarios

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

// inferencePool routes to vllmDeploy's pods, as the Gateway API
// Inference Extension's guide writes one (its GA version).
const inferencePool = `---
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata:
  name: chat
  namespace: serving
spec:
  selector:
    matchLabels: {app: chat}
  targetPorts:
  - number: 8000
  endpointPickerRef:
    name: chat-epp
    portNumber: 9002
    failureMode: FailClose
`

// An InferencePool beside a vLLM Deployment puts the llm-d endpoint
// picker in front of its replicas: the service's router is the picker's
// default prefix-aware scoring, unless the scenario's balancing says
// otherwise (it wins, and the note says so). A pool that selects no
// replica, or one of a batch server, is an error at its file and line;
// so are its bad fields.
func TestLLMServiceBehindInferencePool(t *testing.T) {
	dir, write, build := vllmFiles(t)
	write(vllmDeploy)
	b, err := build(svcCluster + vllmService)
	require.NoError(t, err)
	require.Nil(t, b.Config.Services[0].Spec.LLM.Router, "no pool: at random")

	write(vllmDeploy + inferencePool)
	b, err = build(svcCluster + vllmService)
	require.NoError(t, err)
	r := b.Config.Services[0].Spec.LLM.Router
	require.NotNil(t, r)
	require.Equal(t, serving.PrefixAware, *r)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "InferencePool chat ("+filepath.Join(dir, "vllm.yaml")+":25), selecting app=chat on port 8000 through endpoint picker chat-epp:9002 (FailClose): requests routed by the endpoint picker's default scoring, balancing prefix-aware")

	b, err = build(svcCluster + strings.Replace(vllmService, "      load: {constant: 5}", "      load: {constant: 5}\n      balancing: round-robin", 1))
	require.NoError(t, err)
	require.Equal(t, serving.RoundRobin, *b.Config.Services[0].Spec.LLM.Router)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "the scenario's balancing round-robin over the endpoint picker's prefix-aware scoring (the scenario wins)")

	for _, c := range []struct{ name, from, to, want string }{
		{"selects-none", "matchLabels: {app: chat}\n  targetPorts", "matchLabels: {app: other}\n  targetPorts", "vllm.yaml:25: spec.selector.matchLabels: InferencePool chat"},
		{"namespace", "  name: chat\n  namespace: serving\nspec:\n  selector", "  name: chat\n  namespace: web\nspec:\n  selector", "selects no replica of Deployment chat"},
		{"port", "  - number: 8000", "  - number: 0", "vllm.yaml:34:13: spec.targetPorts[0].number: 0 is not a port (1 to 65535)"},
		{"ports", "  - number: 8000\n", "  - number: 8000\n  - number: 8001\n", "vllm.yaml:34:3: spec.targetPorts: has 2 ports; an InferencePool exposes exactly one"},
		{"picker", "    name: chat-epp\n", "", "vllm.yaml:25: spec.endpointPickerRef.name: is not given"},
		{"failure", "failureMode: FailClose", "failureMode: Retry", "vllm.yaml:38:18: spec.endpointPickerRef.failureMode: \"Retry\" is not FailOpen or FailClose"},
		{"unknown", "    portNumber: 9002", "    port: 9002", "vllm.yaml:37:5: spec.endpointPickerRef.port: unknown field \"port\""},
		{"alpha", "inference.networking.k8s.io/v1", "inference.networking.x-k8s.io/v1alpha2", "vllm.yaml:25: apiVersion: \"inference.networking.x-k8s.io/v1alpha2\" InferencePool: gpuplan reads inference.networking.k8s.io/v1"},
	} {
		body := strings.Replace(vllmDeploy+inferencePool, c.from, c.to, 1)
		require.NotEqual(t, vllmDeploy+inferencePool, body, c.name)
		write(body)
		_, err := build(svcCluster + vllmService)
		require.Error(t, err, c.name)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.name)
	}
}
