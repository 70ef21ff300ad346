package manifests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/scenarios"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
)

// An LLM service behind the prefix-aware router is written with an
// InferencePool (inference.networking.k8s.io/v1) selecting its vLLM pods
// on port 8000 through the endpoint picker Service NAME-epp; read back
// strictly, the pool selects the Deployment written beside it, and the
// service read back from the files with no balancing of its own is
// behind the prefix-aware router again. A service at random has none.
func TestInferencePoolRoundTrip(t *testing.T) {
	s, err := scenarios.LoadFile("../../examples/llm-serving/chat/scenario.yaml")
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	read := func(s *scenarios.Scenario) (string, []kubesvc.InferencePool) {
		files, _, err := Generate(s, m, Options{})
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, WriteDir(dir, files))
		y := filepath.Join(dir, filepath.FromSlash(DirServices), "chat.yaml")
		raw, err := os.ReadFile(y)
		require.NoError(t, err)
		pools, err := kubesvc.ReadInferencePools(y, raw)
		require.NoError(t, err)
		return dir, pools
	}
	_, pools := read(s)
	require.Empty(t, pools, "random: no gateway")

	s.Spec.Workload.Services[0].Balancing = "prefix-aware"
	dir, pools := read(s)
	require.Len(t, pools, 1)
	p := pools[0]
	require.Equal(t, map[string]string{"app.kubernetes.io/name": "chat"}, p.Selector)
	require.Equal(t, int32(8000), p.TargetPort)
	require.Equal(t, "chat-epp", p.EndpointPicker)
	require.Equal(t, int32(9002), p.EndpointPickerPort)
	require.Equal(t, "FailClose", p.FailureMode)
	y := filepath.Join(dir, filepath.FromSlash(DirServices), "chat.yaml")
	raw, err := os.ReadFile(y)
	require.NoError(t, err)
	wls, _, err := kubesvc.ReadServing(y, raw)
	require.NoError(t, err)
	require.Len(t, wls, 1)
	require.True(t, p.Selects(&wls[0]))

	back := servicesReadBack(t, s, dir)
	back.Spec.Workload.Services[0].Balancing = ""
	b, err := back.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	r := b.Config.Services[0].Spec.LLM.Router
	require.NotNil(t, r)
	require.Equal(t, serving.PrefixAware, *r)
}
