package gpufields_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
)

// Kueue's published DRA and TAS samples (testdata/kueue, PROVENANCE.md):
// the DRA Jobs ask for their GPU by claim (or a DRA-backed extended
// resource) and run with it (scenarios/kube/dra), each noted with what it
// was taken as; the TAS Jobs and JobSets load, their topology requests
// read and noted (what they are taken as) at their lines. Lines are the
// samples' own (a claim's "- name" line, an annotation's key).
func TestKueueSamples(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string // an error's text, or the notes that must be there
		err  bool
	}{
		// One device of the example driver's class: one whole GPU.
		{"sample-dra-rct-job.yaml", []string{`:35: Job sample-dra-rct-job: spec.template.spec.resourceClaims[0]: ResourceClaimTemplate "single-gpu" (testdata/kueue/sample-dra-rct-job.yaml:1): request "gpu" (line 10) of DeviceClass "gpu.example.com": taken as 1 whole GPU(s)`}, false},
		{"sample-dra-counter-job.yaml", []string{`:36: Job sample-dra-counter-job: spec.template.spec.resourceClaims[0]: ResourceClaimTemplate "gpu-partition"`, `taken as 1 whole GPU(s)`}, false},
		// 4Gi of a simulated GPU's 80Gi: 4/80 = 50/1000 of a GPU.
		{"sample-dra-capacity-job.yaml", []string{`:39: Job sample-dra-capacity-job: spec.template.spec.resourceClaims[0]: ResourceClaimTemplate "gpu-share"`, `capacity request (line 16): consumable capacity gpu.example.com/memory: 4Gi of a device: taken as a 50/1000 share of one GPU`}, false},
		{"sample-dra-extended-resource-job.yaml", []string{`:19: Job sample-dra-extended-job: spec.template.spec.containers[0].resources.requests["example.com/gpu"]: "example.com/gpu" 1: a DRA-backed extended resource of DeviceClass "gpu.example.com"`}, false},
		{"sample-job-required.yaml", []string{`:14: Job tas-sample-required: spec.template.metadata.annotations["kueue.x-k8s.io/podset-required-topology"]: Kueue topology-aware scheduling: every pod in one "cloud.provider.com/topology-rack" domain`}, false},
		{"sample-job-preferred.yaml", []string{`spec.template.metadata.annotations["kueue.x-k8s.io/podset-preferred-topology"]: Kueue topology-aware scheduling: the pods in the fewest "cloud.provider.com/topology-block" domains`}, false},
		{"sample-job-unconstrained.yaml", []string{`spec.template.metadata.annotations["kueue.x-k8s.io/podset-unconstrained-topology"]`}, false},
		{"sample-jobset-tas-sliced.yaml", []string{
			`:20: JobSet jobset-tas-sliced: spec.replicatedJobs[0].template.spec.template.metadata.annotations["kueue.x-k8s.io/podset-slice-required-topology"]`,
			`:21: JobSet jobset-tas-sliced: spec.replicatedJobs[0].template.spec.template.metadata.annotations["kueue.x-k8s.io/podset-slice-size"]: Kueue topology-aware scheduling: slices of "4" pods`}, false},
		{"sample-jobset-tas-required.yaml", []string{`podset-required-topology"]: Kueue topology-aware scheduling: every pod in one`}, false},
		{"sample-jobset-tas-combined.yaml", []string{`podset-required-topology"]`, `podset-slice-required-topology"]`, `podset-slice-size"]`}, false},
	} {
		objs, _, err := workloads.Load(filepath.Join("testdata", "kueue", c.file))
		if c.err {
			require.Error(t, err, c.file)
			require.Contains(t, err.Error(), c.want[0], c.file)
			require.Contains(t, err.Error(), "nvidia.com/gpu: N", c.file)
			continue
		}
		require.NoError(t, err, c.file)
		require.Len(t, objs, 1, c.file)
		notes := strings.Join(objs[0].Notes, "\n")
		for _, w := range c.want {
			require.Contains(t, notes, w, c.file)
		}
	}
}
