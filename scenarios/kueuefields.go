package scenarios

import "fmt"

// KueueVersion is the Kueue release whose API (sigs.k8s.io/kueue in
// go.mod) gpuplan reads Kueue's objects with: the newest release
// (2026-08-20); Kueue's main branch (v0.20.0-devel, 2026-08-22) still
// serves v1beta1 beside v1beta2.
const KueueVersion = "v0.19.2"

// kueueLaterFields are fields of Kueue releases after KueueVersion, by
// kind and path, with the release that added them. At Kueue's main branch
// of 2026-08-22 (v0.20.0-devel) no kind gpuplan reads has a field that
// v0.19.2 lacks, so none is listed; the last one listed,
// ClusterQueue spec.concurrentAdmissionPolicy (v0.18), is now read.
var kueueLaterFields = map[string]string{}

// kueueVersionFields are fields of one Kueue API version given in an
// object of the other, by apiVersion, kind and path, with what the
// object's version has instead (Kueue's v1beta1-to-v1beta2 conversion,
// apis/kueue/v1beta1/*_conversion.go).
var kueueVersionFields = map[string]string{
	"kueue.x-k8s.io/v1beta2 ClusterQueue spec.cohort":                    "v1beta1's name of the field; in kueue.x-k8s.io/v1beta2 it is spec.cohortName",
	"kueue.x-k8s.io/v1beta2 ClusterQueue spec.admissionChecks":           "a v1beta1 field; kueue.x-k8s.io/v1beta2 lists admission checks in spec.admissionChecksStrategy.admissionChecks ({name, onFlavors})",
	"kueue.x-k8s.io/v1beta1 ClusterQueue spec.cohortName":                "v1beta2's name of the field; in kueue.x-k8s.io/v1beta1 it is spec.cohort",
	"kueue.x-k8s.io/v1beta1 ClusterQueue spec.concurrentAdmissionPolicy": "a field of kueue.x-k8s.io/v1beta2 only (since Kueue v0.18): write the ClusterQueue as v1beta2",
}

// kueueUnknownField says why a Kueue object's field is unknown: a field
// of the other API version (what this one has instead), a field of a
// later Kueue release (in later, by "kind path"), named with it, or a
// field no Kueue release gpuplan knows of; either way with the version
// gpuplan reads.
func kueueUnknownField(later map[string]string, api, kind, path string) string {
	if v, ok := kueueVersionFields[api+" "+kind+" "+path]; ok {
		return fmt.Sprintf("%s (gpuplan reads Kueue %s's API)", v, KueueVersion)
	}
	if v, ok := later[kind+" "+path]; ok {
		return fmt.Sprintf("a field of %s; gpuplan reads up to Kueue %s's API (%s), which has no such field: remove it to simulate without it", v, KueueVersion, api)
	}
	return fmt.Sprintf("not a field of Kueue %s's %s %s, the API gpuplan reads (a field of a later Kueue release is not read yet)", KueueVersion, api, kind)
}
