package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
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
