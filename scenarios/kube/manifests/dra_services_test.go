package manifests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim"
)

// TestDRAServicesAsTheDevicePluginForm: the inference services of
// testdata/scenarios/services.yaml written with --gpus dra ask for their
// GPUs by claim, as the training jobs do. By hand from the scenario:
// bert's replicas (one whole L4) claim 1 device of gpuplan-gpu, from
// ResourceClaimTemplate bert-gpus beside its Deployment; bert-keda's (one
// 1g.5gb instance on the mixed-strategy A100 pool) 1 of
// gpuplan-mig-1g.5gb; recommender's (one whole GPU, a KServe
// InferenceService under the KPA) 1 of gpuplan-gpu in its predictor's
// resourceClaims. No replica asks for a device-plugin resource. Each
// service read back from its file, listed after
// kubernetes/04-dra-deviceclasses.yaml (a service's files share their
// DeviceClasses), is the service the run built (replica pod, placement,
// bounds, scaler), and the scenario of the read-back services gives the
// original run's summary, as the device plugin's form does. Before, the DRA form's replicas asked for
// nvidia.com/gpu and nvidia.com/mig-1g.5gb.
func TestDRAServicesAsTheDevicePluginForm(t *testing.T) {
	s, err := scenarios.LoadFile(servicesScenario)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	plugin, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	claims, warnings, err := Generate(s, m, Options{GPUs: GPUsDRA})
	require.NoError(t, err)
	require.Empty(t, warnings)

	set := newSchemaSet()
	byPath := map[string]File{}
	for _, f := range claims {
		byPath[f.Path] = f
		if !strings.HasSuffix(f.Path, ".yaml") {
			continue
		}
		b := encode(t, f)
		_, err := Decode(f.Path, b)
		require.NoError(t, err, "%s:\n%s", f.Path, b)
		for _, o := range f.Objects {
			_, err := set.validate(t, o)
			require.NoError(t, err, f.Path)
		}
	}
	require.Contains(t, byPath, PathDRA)
	var classes []string
	for _, o := range byPath[PathDRA].Objects {
		classes = append(classes, o.(*resourcev1.DeviceClass).Name)
	}
	assert.Equal(t, []string{DeviceClassGPU, "gpuplan-mig-1g.5gb"}, classes)
	for name, class := range map[string]string{"bert": DeviceClassGPU, "bert-keda": "gpuplan-mig-1g.5gb", "recommender": DeviceClassGPU} {
		f, ok := byPath[DirServices+name+".yaml"]
		require.True(t, ok, name)
		rct, ok := f.Objects[0].(*resourcev1.ResourceClaimTemplate)
		require.True(t, ok, "%s: the claim template comes first, before what names it: %T", name, f.Objects[0])
		assert.Equal(t, name+"-gpus", rct.Name)
		require.Len(t, rct.Spec.Spec.Devices.Requests, 1)
		assert.Equal(t, resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
			*rct.Spec.Spec.Devices.Requests[0].Exactly, name)
		var y string
		for _, o := range f.Objects {
			b, err := marshal(o)
			require.NoError(t, err)
			y += string(b)
		}
		assert.Contains(t, y, "resourceClaimTemplateName: "+name+"-gpus", name)
		assert.NotContains(t, y, "nvidia.com/gpu:", name)
		assert.NotContains(t, y, "nvidia.com/mig-", name)
		for _, o := range f.Objects {
			if d, ok := o.(*appsv1.Deployment); ok {
				assert.Equal(t, rct.Namespace, d.Namespace, "%s: the template is in the replicas' namespace", name)
				assert.Equal(t, "gpus", d.Spec.Template.Spec.Containers[0].Resources.Claims[0].Name)
			}
		}
	}

	// Read back: each service lists the DeviceClasses' file before its
	// own (a service's files share their DeviceClasses).
	dpDir, draDir := t.TempDir(), t.TempDir()
	require.NoError(t, WriteDir(dpDir, plugin))
	require.NoError(t, WriteDir(draDir, claims))
	draReadBack := strings.ReplaceAll(servicesReadBackYAML, "      manifests: [kubernetes/40-services/", "      manifests: [kubernetes/04-dra-deviceclasses.yaml, kubernetes/40-services/")
	require.Equal(t, 3, strings.Count(draReadBack, "manifests: [kubernetes/04-dra-deviceclasses.yaml, "))
	built := func(sc *scenarios.Scenario) []sim.ServiceConfig {
		b, err := sc.Build(scenarios.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		return b.Config.Services
	}
	byPlugin, err := scenarios.Parse("read-back.yaml", dpDir, []byte(servicesReadBackYAML))
	require.NoError(t, err)
	byDRA, err := scenarios.Parse("read-back.yaml", draDir, []byte(draReadBack))
	require.NoError(t, err)
	want, got := built(s), built(byDRA)
	require.Len(t, got, 3)
	for i := range want {
		w, g := want[i], got[i]
		name := w.Spec.Name
		assert.Equal(t, w.Pod, g.Pod, name)
		assert.Equal(t, w.Constraints, g.Constraints, name)
		assert.Equal(t, []int{w.MinReplicas, w.MaxReplicas, w.InitialReplicas}, []int{g.MinReplicas, g.MaxReplicas, g.InitialReplicas}, name)
		assert.Equal(t, w.Spec.Batch, g.Spec.Batch, name)
	}
	dp, dr := summaryJSON(t, byPlugin, pipeline.Options{}), summaryJSON(t, byDRA, pipeline.Options{})
	orig := summaryJSON(t, s, pipeline.Options{})
	require.NotEmpty(t, orig["services"], "services ran")
	for _, k := range []string{"services", "gpus", "cost", "jobs"} {
		assert.Equal(t, orig[k], dr[k], "%s: the services by DRA claim run as the scenario's", k)
		assert.Equal(t, dp[k], dr[k], "%s: the services by DRA claim run as by the device plugin's resources", k)
	}
	// The DeviceClasses given as the cluster's (the scenario's policy)
	// instead of in each service's list: the replicas' claims resolve to
	// them alike (before, the policy's classes were not used: gpuplan-gpu
	// was defined nowhere, an input error).
	asPolicy := strings.Replace(servicesReadBackYAML, "  workload:\n", "  policy: {manifests: [kubernetes/04-dra-deviceclasses.yaml]}\n  workload:\n", 1)
	require.Contains(t, asPolicy, "policy: {manifests")
	byPolicy, err := scenarios.Parse("read-back.yaml", draDir, []byte(asPolicy))
	require.NoError(t, err)
	got = built(byPolicy)
	for i := range want {
		assert.Equal(t, want[i].Pod, got[i].Pod, want[i].Spec.Name)
		assert.Equal(t, want[i].Constraints, got[i].Constraints, want[i].Spec.Name)
	}
	pol := summaryJSON(t, byPolicy, pipeline.Options{})
	for _, k := range []string{"services", "gpus", "cost", "jobs"} {
		assert.Equal(t, dr[k], pol[k], "%s: the policy's DeviceClasses serve the services' claims", k)
	}
}
