package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kueuecfg "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuefeatures "sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim"
)

// kueueDRAConfig is the Kueue Configuration of Kueue's "Set Up Dynamic
// Resource Allocation" page: the example driver's DeviceClass charged as
// example.com/gpu.
const kueueDRAConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: example.com/gpu
    deviceClassNames: [gpu.example.com]
`

// exampleDeviceClass is the DRA example driver's DeviceClass, as its Helm
// chart installs it, given with the policy.
const exampleDeviceClass = `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
  labels: {app.kubernetes.io/name: dra-example-driver}
spec:
  selectors:
  - cel:
      expression: device.driver == 'gpu.example.com'
`

// TestPolicyDeviceClassMappingsWrittenBack: a Kueue policy whose
// Configuration maps DeviceClass gpu.example.com to example.com/gpu
// (Kueue's DRA samples: sample-dra-queues.yaml covers example.com/gpu with
// a nominal quota of 8, and ten copies of sample-dra-rct-job.yaml each
// claim one gpu.example.com device) gets the mapping written back in
// kubernetes/21-kueue-config.yaml. By hand, on 16 A100s: with the mapping
// Kueue charges each claim as one example.com/gpu, so 8 of the 10 jobs
// start at once and 2 wait for quota; read back, the written policy runs
// the same (8 at once, the same summary). Before, the mapping was dropped
// (no Configuration was written), and the jobs read back under the
// written policy were never admitted (Kueue v0.19.2 refuses a class no
// mapping names; v0.17 counted nothing: all 10 at once). The policy's
// DeviceClass (the example driver's) is written back as read in
// kubernetes/04-dra-deviceclasses.yaml, which read back with the policy
// gives the same summary; before, it was not read (a note) nor written.
func TestPolicyDeviceClassMappingsWrittenBack(t *testing.T) {
	queues, err := filepath.Abs("../published/testdata/kueue/site/static/examples/dra/sample-dra-queues.yaml")
	require.NoError(t, err)
	job, err := filepath.Abs("../published/testdata/kueue/site/static/examples/dra/sample-dra-rct-job.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(kueueDRAConfig), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "classes.yaml"), []byte(exampleDeviceClass), 0o644))
	body := strings.NewReplacer("QUEUES", queues, "JOB", job).Replace(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: kueue-dra-mapping}
spec:
  seed: 1
  horizon: 2h
  cluster:
    pools:
    - {name: a100, count: 2, instanceType: p4de.24xlarge, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "96", memory: 1152Gi}
  policy: {manifests: [QUEUES, config.yaml, classes.yaml]}
  workload:
    manifests:
    - {path: JOB, count: 10, duration: 10m}
`)
	path := filepath.Join(dir, "scenario.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	s, err := scenarios.LoadFile(path)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	out := t.TempDir()
	require.NoError(t, WriteDir(out, files))
	cfg, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(PathKueueConfig)))
	require.NoError(t, err, "the policy's mapping needs Kueue's Configuration")
	require.Contains(t, string(cfg), "deviceClassMappings:\n      - deviceClassNames:\n        - gpu.example.com\n        name: example.com/gpu\n")
	require.Contains(t, string(cfg), "KueueDRAIntegration: true")
	requireKueueStarts(t, cfg)
	classes, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(PathDRA)))
	require.NoError(t, err, "the policy's DeviceClass is written back")
	objs, err := Decode(PathDRA, classes)
	require.NoError(t, err)
	require.Len(t, objs, 1)
	dc := objs[0].(*resourcev1.DeviceClass)
	require.Equal(t, "gpu.example.com", dc.Name)
	require.Equal(t, map[string]string{"app.kubernetes.io/name": "dra-example-driver"}, dc.Labels)
	require.Equal(t, "device.driver == 'gpu.example.com'", dc.Spec.Selectors[0].CEL.Expression)

	atOnce := func(o scenarios.Options) int {
		b, err := s.Build(o)
		require.NoError(t, err)
		defer b.Close()
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		require.Len(t, res.Jobs, 10)
		n := 0
		for _, j := range res.Jobs {
			require.Equal(t, sim.Completed, j.Outcome)
			if j.Start == 0 {
				n++
			}
		}
		return n
	}
	written := []string{filepath.Join(out, filepath.FromSlash(PathKueue)), filepath.Join(out, filepath.FromSlash(PathKueueConfig))}
	require.Equal(t, 8, atOnce(scenarios.Options{}), "the policy as given: 8 of example.com/gpu's quota")
	require.Equal(t, 8, atOnce(scenarios.Options{PolicyManifests: written}), "the written policy read back")
	_, err = s.Build(scenarios.Options{PolicyManifests: written[:1]})
	require.ErrorContains(t, err, "is not mapped", "without the mapping Kueue v0.19.2 never admits the claims")
	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: written}})
	require.Equal(t, want, got)
	withClasses := append(written, filepath.Join(out, filepath.FromSlash(PathDRA)))
	require.Equal(t, 8, atOnce(scenarios.Options{PolicyManifests: withClasses}))
	require.Equal(t, want, summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: withClasses}}))
}

// requireKueueStarts says the written kueue-manager-config's feature
// gates are ones the Kueue gpuplan reads knows: Kueue's manager sets them
// with its feature gate's SetFromMap at start and exits on a name it does
// not know (v0.19.2 no longer knows v0.17's DynamicResourceAllocation).
func requireKueueStarts(t *testing.T, configMap []byte) {
	t.Helper()
	var cm corev1.ConfigMap
	require.NoError(t, yaml.UnmarshalStrict(configMap, &cm))
	var cfg kueuecfg.Configuration
	require.NoError(t, yaml.UnmarshalStrict([]byte(cm.Data["controller_manager_config.yaml"]), &cfg))
	require.NotEmpty(t, cfg.FeatureGates)
	require.True(t, kueuefeatures.Enabled(kueuefeatures.KueueDRAIntegration), "Kueue's gates registered")
	require.NoError(t, utilfeature.DefaultMutableFeatureGate.DeepCopy().SetFromMap(cfg.FeatureGates))
}
