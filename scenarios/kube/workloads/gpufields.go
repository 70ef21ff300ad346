package workloads

import (
	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
)

// checkGPUFields refuses or notes the pod template's GPU-bearing fields
// gpuplan does not model (DRA claims, HAMi shares, Kueue topology
// annotations: scenarios/kube/gpufields); dot prefixes the template's
// fields.
func checkGPUFields(d *doc, t *corev1.PodTemplateSpec, dot string) error {
	for _, f := range gpufields.Pod(t.Annotations, &t.Spec, dot+"metadata", dot+"spec") {
		if f.Err {
			return d.errAt(f.Field, "%s", f.Msg)
		}
		d.note(f.Field, "%s", f.Msg)
	}
	return nil
}
