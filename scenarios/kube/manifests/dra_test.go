package manifests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

const draScenario = "testdata/scenarios/dra.yaml"

// classFile is one file holding what a class's job template needs, in
// the order kubectl applies them: the DeviceClasses, the class's shared
// objects (its ResourceClaimTemplate, a gang's Service), the template
// (gpuplan's readers take a pod's claims from its own file).
func classFile(t *testing.T, dir, out, class string) string {
	t.Helper()
	var all []byte
	for _, p := range []string{PathDRA, DirJobs + class + ".yaml", DirJobTemplates + class + ".yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if os.IsNotExist(err) && p != DirJobTemplates+class+".yaml" {
			continue
		}
		require.NoError(t, err)
		if len(all) > 0 {
			all = append(all, "---\n"...)
		}
		all = append(all, b...)
	}
	path := filepath.Join(out, class+".yaml")
	require.NoError(t, os.WriteFile(path, all, 0o644))
	return path
}

// TestDRAJobsAsTheDevicePluginForm: the dra test scenario written with
// --gpus dra asks for the same GPUs by claim as the device plugin's form
// asks by resource. By hand: train's pods claim 8 devices of gpuplan-gpu
// (NVIDIA's driver's devices of type gpu), single's 1, mig-small's 1 of
// gpuplan-mig-1g.5gb (type mig, profile 1g.5gb); Kueue charges them, by
// the Configuration's deviceClassMappings, as nvidia.com/gpu and
// nvidia.com/mig-1g.5gb, the resources of the ClusterQueue's quota. Read
// back, each template is the same pod (8 whole GPUs; 1; one 1g.5gb
// instance), and the jobs submitted from the templates (the class's
// arrivals and durations, the written Kueue objects as the policy) run
// alike in both forms: the same summary.
func TestDRAJobsAsTheDevicePluginForm(t *testing.T) {
	s, err := scenarios.LoadFile(draScenario)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	plugin, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	claims, warnings, err := Generate(s, m, Options{GPUs: GPUsDRA})
	require.NoError(t, err)
	require.Empty(t, warnings)

	gpu := find[resourcev1.DeviceClass](t, claims, DeviceClassGPU)
	require.Equal(t, "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", gpu.Spec.Selectors[0].CEL.Expression)
	mig := find[resourcev1.DeviceClass](t, claims, "gpuplan-mig-1g.5gb")
	require.Contains(t, mig.Spec.Selectors[0].CEL.Expression, ".type == 'mig' && device.attributes['gpu.nvidia.com'].profile == '1g.5gb'")
	for class, want := range map[string]struct {
		n       int64
		devices string
	}{"train": {8, DeviceClassGPU}, "single": {1, DeviceClassGPU}, "mig-small": {1, "gpuplan-mig-1g.5gb"}} {
		rct := find[resourcev1.ResourceClaimTemplate](t, claims, class+"-gpus")
		require.Equal(t, "gpuplan", rct.Namespace)
		rq := rct.Spec.Spec.Devices.Requests
		require.Len(t, rq, 1)
		require.Equal(t, resourcev1.ExactDeviceRequest{DeviceClassName: want.devices, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: want.n}, *rq[0].Exactly, class)
	}

	dpDir, draDir := t.TempDir(), t.TempDir()
	require.NoError(t, WriteDir(dpDir, plugin))
	require.NoError(t, WriteDir(draDir, claims))
	cfg, err := os.ReadFile(filepath.Join(draDir, filepath.FromSlash(PathKueueConfig)))
	require.NoError(t, err)
	require.Contains(t, string(cfg), "deviceClassMappings:\n      - deviceClassNames:\n        - gpuplan-gpu\n        name: nvidia.com/gpu\n      - deviceClassNames:\n        - gpuplan-mig-1g.5gb\n        name: nvidia.com/mig-1g.5gb\n")
	for _, f := range claims {
		for _, o := range f.Objects {
			if job, ok := o.(interface{ GetGenerateName() string }); ok && job.GetGenerateName() != "" {
				b, err := marshal(o)
				require.NoError(t, err)
				require.NotContains(t, string(b), "nvidia.com/", "%s: the DRA form asks for no device-plugin resource", f.Path)
			}
		}
	}

	out := t.TempDir()
	var dpEntries, draEntries []scenarios.ManifestsSpec
	for _, c := range s.Spec.Workload.Synthetic.Classes {
		dpPath := classFile(t, dpDir, mkdir(t, out, "plugin"), c.Name)
		draPath := classFile(t, draDir, out, c.Name)
		dp, _, err := workloads.LoadIn(dpPath, m.Pools)
		require.NoError(t, err)
		byClaim, _, err := workloads.LoadIn(draPath, m.Pools)
		require.NoError(t, err)
		require.Len(t, dp, 1)
		require.Len(t, byClaim, 1)
		a, b := dp[0].Groups[0], byClaim[0].Groups[0]
		require.NotNil(t, b.DRA, "%s: the DRA form's GPUs come by claim", c.Name)
		require.Equal(t, a.Pods, b.Pods)
		require.Equal(t, a.Pod, b.Pod, "%s: the same pod in both forms", c.Name)
		require.Equal(t, a.Constraints, b.Constraints, c.Name)
		arr := c.Arrival
		dpEntries = append(dpEntries, scenarios.ManifestsSpec{Path: dpPath, Arrival: &arr, Duration: c.Duration})
		draEntries = append(draEntries, scenarios.ManifestsSpec{Path: draPath, Arrival: &arr, Duration: c.Duration})
	}
	policy := func(dir string) []string {
		ps := []string{filepath.Join(dir, filepath.FromSlash(PathKueue))}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(PathKueueConfig))); err == nil {
			ps = append(ps, filepath.Join(dir, filepath.FromSlash(PathKueueConfig)))
		}
		return ps
	}
	byPlugin, byDRA := withManifests(t, s, dpEntries, policy(dpDir)), withManifests(t, s, draEntries, policy(draDir))
	// Kueue charges the claims' devices through the written mappings.
	b, err := byDRA.Build(scenarios.Options{})
	require.NoError(t, err)
	require.NoError(t, b.Close())
	for _, w := range []string{"(DeviceClass gpuplan-gpu) are charged to Kueue quota as \"nvidia.com/gpu\"", "(DeviceClass gpuplan-mig-1g.5gb) are charged to Kueue quota as \"nvidia.com/mig-1g.5gb\""} {
		require.True(t, slices.ContainsFunc(b.Assumptions, func(a string) bool { return strings.Contains(a, w) }), "%s in %q", w, b.Assumptions)
	}
	want, got := summaryJSON(t, byPlugin, pipeline.Options{}), summaryJSON(t, byDRA, pipeline.Options{})
	// The workload's line names the files read, in two folders.
	delete(want["scenario"].(map[string]any), "workload")
	delete(got["scenario"].(map[string]any), "workload")
	require.Equal(t, want, got, "the jobs by DRA claim run as by the device plugin's resources")
	require.NotZero(t, want["jobs"].(map[string]any)["total"], "jobs ran")
}

func mkdir(t *testing.T, parent, name string) string {
	t.Helper()
	p := filepath.Join(parent, name)
	require.NoError(t, os.MkdirAll(p, 0o755))
	return p
}

// withManifests is s with its workload the given manifest files and its
// policy the given Kueue files.
func withManifests(t *testing.T, s *scenarios.Scenario, entries []scenarios.ManifestsSpec, policy []string) *scenarios.Scenario {
	t.Helper()
	spec := s.Spec
	spec.Variants = nil
	spec.Workload = scenarios.WorkloadSpec{Manifests: entries}
	spec.Policy = &scenarios.PolicySpec{Manifests: policy}
	doc := map[string]any{"apiVersion": "gpuplan.dev/v1alpha1", "kind": "Scenario", "metadata": s.Metadata, "spec": spec}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	back, err := scenarios.Parse(s.File(), filepath.Dir(s.File()), b)
	require.NoError(t, err)
	return back
}
