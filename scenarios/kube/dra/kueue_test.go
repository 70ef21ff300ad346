package dra_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// kueueFixturePools are the node pools the Kueue fixtures
// (testdata/kueue/*.yaml) are read in: one node of 8 whole H100s and one
// of 8 H100s cut all-1g.10gb (56 instances); selectors-short.yaml is read
// in a cluster of one 8-A100 node. validate/xcheck/kueue's TestDRA gives
// Kueue the same devices as ResourceSlices.
func kueueFixturePools(file string) []cluster.PoolSpec {
	if file == "selectors-short.yaml" {
		return []cluster.PoolSpec{{Name: "a100", Nodes: 1, GPUModel: "A100-80GB", GPUsPerNode: 8}}
	}
	mig := slices.Repeat([]string{"1g.10gb"}, 7)
	return []cluster.PoolSpec{
		{Name: "h100", Nodes: 1, GPUModel: "H100-80GB", GPUsPerNode: 8},
		{Name: "h100-mig", Nodes: 1, GPUModel: "H100-80GB", GPUsPerNode: 8, Sharing: cluster.Sharing{MIGStrategy: cluster.MIGMixed, MIGLayout: mig}},
	}
}

// TestKueueCountsAsV0192 reads each Kueue fixture's Job and checks what
// gpuplan says Kueue v0.19.2 counts of a pod's claims (pkg/dra
// countDevicesPerClass, then validateCELSelectorsAgainstDevices), worked
// out by hand from Kueue's rule in each fixture's comment: a
// ResourceClaimTemplate request's count added to its DeviceClass (1 when
// unset), constraints, config and CEL selectors counted (v0.17 refused
// them: before, Unsupported named them and no count was kept);
// firstAvailable, adminAccess and allocationMode All refused (a pod whose
// only claim is adminAccess holds no GPU, and before had no view at all);
// a CEL-selected request
// for more devices than the cluster's pools ever publish refused.
func TestKueueCountsAsV0192(t *testing.T) {
	for _, c := range []struct {
		file   string
		counts []dra.ClassCount
		refuse string
	}{
		{"constraints.yaml", []dra.ClassCount{{Class: "gpu.nvidia.com", Count: 3}}, ""},
		{"config.yaml", []dra.ClassCount{{Class: "gpu.nvidia.com", Count: 1}}, ""},
		{"selectors.yaml", []dra.ClassCount{{Class: "mig.nvidia.com", Count: 2}}, ""},
		{"two-templates.yaml", []dra.ClassCount{{Class: "gpu.nvidia.com", Count: 3}}, ""},
		{"selectors-short.yaml", nil, `a CEL-selected request at devices.requests[0] for 8 device(s) (8 whole GPU(s) of H100-80GB), of which the cluster's node pools publish 0 at most`},
		{"first-available.yaml", nil, `firstAvailable at devices.requests[0] ("FirstAvailable device selection is not supported")`},
		{"all.yaml", nil, `allocationMode All at devices.requests[0] ("AllocationMode 'All' is not supported")`},
		{"admin-access.yaml", nil, `adminAccess at devices.requests[0] ("AdminAccess is not supported")`},
	} {
		t.Run(c.file, func(t *testing.T) {
			v := kueueFixtureView(t, c.file)
			if c.refuse != "" {
				require.Contains(t, v.Unsupported, c.refuse)
				require.Equal(t, "spec.template.spec.resourceClaims[0]", v.Field)
				return
			}
			require.Empty(t, v.Unsupported)
			require.Equal(t, c.counts, v.Counts)
			require.Empty(t, v.Named)
		})
	}
}

// kueueFixtureView is what gpuplan says Kueue counts of the pod of a Kueue
// fixture's Job.
func kueueFixtureView(t *testing.T, file string) dra.KueueView {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "kueue", file))
	require.NoError(t, err)
	objs, _, err := workloads.ParseIn(file, data, kueueFixturePools(file))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	require.Len(t, objs[0].Groups, 1)
	require.NotNil(t, objs[0].Groups[0].DRA, "the pod's claims are Kueue's to count")
	return objs[0].Groups[0].DRA.KueueView
}

// A pod naming a ResourceClaim: Kueue v0.19.2 marks its workload
// inadmissible, whatever else it claims; the view names the claim and the
// field (before: Named was a bool, and nothing refused it).
func TestKueueViewNamesTheResourceClaim(t *testing.T) {
	o, err := parse(t, job(`apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: ml}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: gpu.nvidia.com, count: 1}`, "resourceClaimName: shared"), nil)
	require.NoError(t, err)
	v := o.Groups[0].DRA.KueueView
	require.Equal(t, `ResourceClaim "shared" (w.yaml:1)`, v.Named)
	require.Equal(t, "spec.template.spec.resourceClaims[0].resourceClaimName", v.NamedField)
	require.Empty(t, v.Counts)
}
