package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/kube/manifests"
)

// TestManifestsCommand writes the gpu-sharing example's manifests and
// reads every file back strictly; the files themselves are golden-tested
// in scenarios/kube/manifests.
func TestManifestsCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := gpuplan(t, "manifests", "../../scenarios/examples/gpu-sharing.yaml", "--out", dir, "--namespace", "inference", "--cluster-name", "prod-gpu")
	require.Equal(t, 0, code, errOut)
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	require.Len(t, files, strings.Count(out, "wrote "))
	for _, want := range []string{manifests.PathNodePools, manifests.PathEC2NodeClass, manifests.PathGPUOperator, manifests.PathKueue, manifests.PathPrometheusRule, manifests.DirJobTemplates + "inference-small.yaml"} {
		require.Contains(t, out, filepath.Join(dir, filepath.FromSlash(want)))
	}
	for _, p := range files {
		require.NotContains(t, filepath.Base(p), ".tmp-", "no temporary file left behind")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		_, err = manifests.Decode(p, b)
		require.NoError(t, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(manifests.PathEC2NodeClass)))
	require.NoError(t, err)
	require.Contains(t, string(b), "karpenter.sh/discovery: prod-gpu")
	b, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(manifests.PathKueue)))
	require.NoError(t, err)
	require.Contains(t, string(b), "namespace: inference")
}

// The flags reach the files, and warnings reach stderr.
func TestManifestsFlags(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "manifests", "../../scenarios/examples/spot-what-if.yaml", "--out", dir,
		"--training-api", "pytorchjob", "--access-mode", "ReadWriteMany", "--storage-class", "efs-sc", "--prometheus-release", "monitoring")
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(manifests.PathPrometheusRule)))
	require.NoError(t, err)
	require.Contains(t, string(b), "release: monitoring")
	code, _, errOut = gpuplan(t, "manifests", "--out", t.TempDir(), "--training-api", "mpijob")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--training-api "mpijob" is not one of job, pytorchjob, tfjob`)
}

func TestManifestsBadInputExits2(t *testing.T) {
	code, _, errOut := gpuplan(t, "manifests")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--out DIR is required")
	code, _, errOut = gpuplan(t, "manifests", "../../scenarios/examples/openb-replay.yaml", "--out", t.TempDir())
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "spec.cluster.nodeList")
	code, _, errOut = gpuplan(t, "manifests", "--out", t.TempDir(), "--variant", "nope")
	require.Equal(t, 2, code, errOut)
}
