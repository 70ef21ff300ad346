package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim"
)

// TestDRAClusterExampleRoundTrip: `gpuplan manifests --gpus dra` on the
// shipped dra-cluster example (its workload the user's own manifests,
// which are applied as they are) writes the policy's three DeviceClasses
// back as read in kubernetes/04-dra-deviceclasses.yaml and its Kueue
// Configuration's deviceClassMappings (h100 and l4 as nvidia.com/gpu,
// mig-1g.10gb as nvidia.com/mig-1g.10gb) in kubernetes/21-kueue-config.yaml;
// read back as the run's policy (the written Kueue objects, Configuration
// and DeviceClasses), the jobs' claims resolve to the written classes and
// the run gives the summary the example gave, as given and in its variant
// device-plugin. Without the DeviceClasses file the claims name classes
// defined nowhere: an input error at the template's deviceClassName.
func TestDRAClusterExampleRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the example four times")
	}
	s, err := scenarios.LoadFile("../../examples/dra-cluster/scenario.yaml")
	require.NoError(t, err)
	dp, err := s.Variant("device-plugin")
	require.NoError(t, err)
	for _, sc := range []*scenarios.Scenario{s, dp} {
		m, err := sc.Cluster()
		require.NoError(t, err)
		files, _, err := Generate(sc, m, Options{GPUs: GPUsDRA})
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, WriteDir(dir, files))
		var names []string
		for _, dc := range objectsOf[resourcev1.DeviceClass](t, files) {
			names = append(names, dc.Name)
		}
		require.Equal(t, []string{"h100", "mig-1g.10gb", "l4"}, names)
		cfg, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(PathKueueConfig)))
		require.NoError(t, err)
		require.Contains(t, string(cfg), "deviceClassMappings:\n      - deviceClassNames:\n        - h100\n        - l4\n        name: nvidia.com/gpu\n      - deviceClassNames:\n        - mig-1g.10gb\n        name: nvidia.com/mig-1g.10gb\n")
		var policy []string
		for _, f := range []string{PathKueue, PathKueueConfig, PathDRA} {
			policy = append(policy, filepath.Join(dir, filepath.FromSlash(f)))
		}
		want := summaryJSON(t, sc, pipeline.Options{})
		got := summaryJSON(t, sc, pipeline.Options{Build: scenarios.Options{PolicyManifests: policy}})
		require.Equal(t, want, got, "the DeviceClasses and Kueue objects read back")
		if sc == s {
			_, err := sc.Build(scenarios.Options{PolicyManifests: policy[:2]})
			require.Error(t, err)
			require.True(t, strings.Contains(err.Error(), `exactly.deviceClassName: ResourceClaimTemplate "train-gpus"`), err.Error())
		}
	}
}

// objectsOf is every object of type T the files hold, in order.
func objectsOf[T any](t *testing.T, files []File) []*T {
	t.Helper()
	var out []*T
	for _, f := range files {
		for _, o := range f.Objects {
			if x, ok := o.(*T); ok {
				out = append(out, x)
			}
		}
	}
	return out
}

// TestPolicyDeviceClassesAloneWrittenBack: a policy of DeviceClasses
// alone (no queues: nothing admits, the scheduler places) is the
// cluster's classes, and `gpuplan manifests` writes them back in
// kubernetes/04-dra-deviceclasses.yaml (before, a policy without
// ClusterQueues or Volcano Queues was not kept, and the file was not
// written). By hand: three copies of a one-pod Job claiming 4 devices of
// class a100 (productName NVIDIA A100-SXM4-80GB) on two H100 nodes and
// one A100 node: only the A100 node's 8 GPUs are of the class, so two
// run 0-1 h and the third 1-2 h; read back with the written file as the
// policy, the same summary.
func TestPolicyDeviceClassesAloneWrittenBack(t *testing.T) {
	dir := t.TempDir()
	const scenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: classes-alone}
spec:
  seed: 1
  cluster:
    pools:
    - {name: h100, count: 2, instanceType: p5.48xlarge}
    - {name: a100, count: 1, instanceType: p4de.24xlarge}
  policy: {manifests: [classes.yaml]}
  workload:
    manifests:
    - {path: jobs.yaml, count: 3}
`
	for _, name := range []string{"classes.yaml", "jobs.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "dra-a100-class", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(scenario), 0o644))
	s, err := scenarios.LoadFile(filepath.Join(dir, "scenario.yaml"))
	require.NoError(t, err)
	want := summaryJSON(t, s, pipeline.Options{})
	jobsRun := want["jobs"].(map[string]any)
	require.EqualValues(t, 3, jobsRun["total"])
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	classes := objectsOf[resourcev1.DeviceClass](t, files)
	require.Len(t, classes, 1)
	require.Equal(t, "a100", classes[0].Name)
	out := t.TempDir()
	require.NoError(t, WriteDir(out, files))
	got := summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: []string{filepath.Join(out, filepath.FromSlash(PathDRA))}}})
	require.Equal(t, want, got)
	// The placements by hand: every job on pool a100, two at once.
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	var starts []int64
	for _, j := range res.Jobs {
		require.Equal(t, "a100", res.Pools[j.Pool].Spec.Name, j.Name)
		starts = append(starts, j.Start)
	}
	slices.Sort(starts)
	require.Equal(t, []int64{0, 0, 3600_000}, starts)
}
