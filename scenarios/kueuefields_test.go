package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A field of a Kueue release after the one compiled in names that
// release and the one read. None exists at Kueue's main branch of
// 2026-08-22 (kueueLaterFields is empty), so the table is given here: the
// entry v0.17.0 had for v0.18's concurrentAdmissionPolicy.
func TestKueueLaterFieldNamesItsRelease(t *testing.T) {
	require.Empty(t, kueueLaterFields)
	later := map[string]string{"ClusterQueue spec.concurrentAdmissionPolicy": "Kueue v0.18 (alpha)"}
	require.Equal(t, "a field of Kueue v0.18 (alpha); gpuplan reads up to Kueue v0.19.2's API (kueue.x-k8s.io/v1beta2), which has no such field: remove it to simulate without it",
		kueueUnknownField(later, "kueue.x-k8s.io/v1beta2", "ClusterQueue", "spec.concurrentAdmissionPolicy"))
	require.Equal(t, "not a field of Kueue v0.19.2's kueue.x-k8s.io/v1beta2 ClusterQueue, the API gpuplan reads (a field of a later Kueue release is not read yet)",
		kueueUnknownField(later, "kueue.x-k8s.io/v1beta2", "ClusterQueue", "spec.other"))
}
