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
// resource) and are refused at that field, never run GPU-less; the TAS
// Jobs and JobSets load, their topology requests read and noted (what
// they are taken as) at their lines.
// Lines are the samples' own (a claim's "- name" line, an annotation's key).
func TestKueueSamples(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string // an error's text, or the notes that must be there
		err  bool
	}{
		{"sample-dra-rct-job.yaml", []string{`:35:9: spec.template.spec.resourceClaims[0]: pod resource claim "gpu": Dynamic Resource Allocation`}, true},
		{"sample-dra-counter-job.yaml", []string{`:36:9: spec.template.spec.resourceClaims[0]: pod resource claim "gpu"`}, true},
		{"sample-dra-capacity-job.yaml", []string{`spec.template.spec.resourceClaims[0]: pod resource claim "gpu"`}, true},
		{"sample-dra-extended-resource-job.yaml", []string{`:21:30: spec.template.spec.containers[0].resources.limits["example.com/gpu"]: resource "example.com/gpu" asks for a GPU`}, true},
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
