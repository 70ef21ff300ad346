package scenarios

import "fmt"

// KueueVersion is the Kueue release whose API (sigs.k8s.io/kueue in
// go.mod) gpuplan reads Kueue's objects with.
const KueueVersion = "v0.17.0"

// kueueLaterFields are fields of Kueue releases after KueueVersion, by
// kind and path, with the release that added them.
var kueueLaterFields = map[string]string{
	// kueue.sigs.k8s.io/docs/tasks/manage/setup_concurrent_admission:
	// "Feature state alpha since Kueue v0.18".
	"ClusterQueue spec.concurrentAdmissionPolicy": "Kueue v0.18 (alpha, behind the ConcurrentAdmission feature gate)",
}

// kueueUnknownField says why a Kueue object's field is unknown: a field
// of a later Kueue release, named with it, or a field no Kueue release
// gpuplan knows of; either way with the version gpuplan reads.
func kueueUnknownField(api, kind, path string) string {
	if v, ok := kueueLaterFields[kind+" "+path]; ok {
		return fmt.Sprintf("a field of %s; gpuplan reads Kueue %s's API (%s), which has no such field: remove it to simulate without it", v, KueueVersion, api)
	}
	return fmt.Sprintf("not a field of Kueue %s's %s %s, the API gpuplan reads (a field of a later Kueue release is not read yet)", KueueVersion, api, kind)
}
