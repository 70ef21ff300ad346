package published_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim"
)

const appwrappers = "testdata/kueue/site/static/examples/appwrapper"

// Kueue's AppWrapper samples (CodeFlare's workload.codeflare.dev/v1beta2)
// read as one object of every component's pods, in the AppWrapper's
// Kueue queue (user-queue):
//   - pytorch-sample: the wrapped PyTorchJob's Master and Worker, one pod
//     each of cpu 1 (its podSets inferred, as AppWrapper does for a
//     PyTorchJob);
//   - deployment-sample: declared podSet template.spec.template, 3
//     replicas of cpu 100m;
//   - leaderworkerset-sample: declared leaderTemplate x 2 (cpu 100m) and
//     workerTemplate x 3 (cpu 200m).
//
// Before, an AppWrapper was not a workload ("no workload in the file").
func TestAppWrapperSamples(t *testing.T) {
	type group struct {
		name     string
		pods     int32
		milliCPU int64
	}
	for _, c := range []struct {
		file string
		want []group
	}{
		{"pytorch-sample.yaml", []group{{"Master", 1, 1000}, {"Worker", 1, 1000}}},
		{"deployment-sample.yaml", []group{{"deployment-0", 3, 100}}},
		{"leaderworkerset-sample.yaml", []group{{"leaderworkerset-0", 2, 100}, {"leaderworkerset-1", 3, 200}}},
	} {
		objs, _, err := workloads.Load(filepath.Join(appwrappers, c.file))
		require.NoError(t, err, c.file)
		require.Len(t, objs, 1, c.file)
		require.Equal(t, "AppWrapper", objs[0].Kind)
		require.Equal(t, "user-queue", objs[0].Queue)
		var got []group
		for _, g := range objs[0].Groups {
			got = append(got, group{g.Name, g.Pods, g.Pod.MilliCPU})
		}
		require.Equal(t, c.want, got, c.file)
	}
}

// A wrapped PyTorchJob of Master + 3 Workers of 8 GPUs is one gang of 32
// GPUs: on four 8-GPU nodes it runs 0-1 h, on three it waits whole.
func TestAppWrapperGPUGang(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(appwrappers, "pytorch-sample.yaml"))
	require.NoError(t, err)
	gpu := strings.ReplaceAll(string(data), "                    requests:\n                      cpu: 1\n",
		"                    requests:\n                      cpu: 1\n                    limits:\n                      nvidia.com/gpu: 8\n")
	gpu = strings.Replace(gpu, "          Worker:\n            replicas: 1\n", "          Worker:\n            replicas: 3\n", 1)
	for _, c := range []struct {
		nodes      string
		start, end int64
	}{{"4", 0, 3_600_000}, {"3", -1, -1}} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "aw.yaml"), []byte(gpu), 0o644))
		body := "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: aw}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n" +
			"    - {name: gpu, count: " + c.nodes + ", gpuModel: A100-80GB, gpusPerNode: 8, cpu: \"96\", memory: 1152Gi}\n" +
			"  workload:\n    manifests:\n    - {path: aw.yaml, count: 1, duration: {distribution: constant, value: 1h}}\n"
		s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(body))
		require.NoError(t, err)
		b, err := s.Build(scenarios.Options{})
		require.NoError(t, err)
		res, err := sim.Run(b.Config)
		b.Close()
		require.NoError(t, err)
		require.Len(t, res.Jobs, 1, c.nodes)
		j := res.Jobs[0]
		require.EqualValues(t, 4, j.Replicas)
		require.EqualValues(t, 8, j.Pod.GPUs)
		require.Equal(t, c.start, j.Start, c.nodes)
		require.Equal(t, c.end, j.End, c.nodes)
		if c.start < 0 {
			require.Zero(t, j.PodsBound)
		}
	}
}

// Refused at the wrapped field's line, named by its path in the
// AppWrapper.
func TestAppWrapperRefusals(t *testing.T) {
	dep, err := os.ReadFile(filepath.Join(appwrappers, "deployment-sample.yaml"))
	require.NoError(t, err)
	pt, err := os.ReadFile(filepath.Join(appwrappers, "pytorch-sample.yaml"))
	require.NoError(t, err)
	for _, c := range []struct{ name, in, from, to, want string }{
		{"path", string(dep), `path: "template.spec.template"`, `path: "template.spec.podTemplate"`,
			`aw.yaml:10:13: spec.components[0].podSets[0].path: "template.spec.podTemplate" names no PodTemplateSpec in the wrapped Deployment`},
		{"no podSets, kind not read", string(dep), "  - podSets:\n    - path: \"template.spec.template\"\n      replicas: 3\n    template:\n", "  - template:\n",
			`spec.components[0].podSets: gpuplan cannot infer the pods of a wrapped "apps/v1" "Deployment": declare the component's podSets (path and replicas)`},
		{"unknown field in a declared template", string(dep), "              - name: nginx\n", "              - name: nginx\n                gpus: 1\n",
			`aw.yaml:31:17: spec.components[0].template.spec.template.spec.containers[0].gpus: unknown field "gpus"`},
		{"wrapped field", string(pt), "                    requests:\n                      cpu: 1\n", "                    limits:\n                      amd.com/gpu: 1\n",
			`aw.yaml:30:36: spec.components[0].template.spec.pytorchReplicaSpecs["Master"].template.spec.containers[0].resources.limits["amd.com/gpu"]`},
	} {
		bad := strings.Replace(c.in, c.from, c.to, 1)
		require.NotEqual(t, c.in, bad, c.name)
		_, _, err := workloads.Parse("aw.yaml", []byte(bad))
		require.ErrorContains(t, err, c.want, c.name)
	}
}
