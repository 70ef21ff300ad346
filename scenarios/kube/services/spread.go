package services

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/podspread"
	"gpuplan.dev/gpuplan/validate/strict"
)

// spreadOf reads the replica pods' labels, topology spread constraints,
// required node affinity and required pod (anti-)affinity
// (fields under at, such as "spec.template.spec.") into w; notes go to
// w.Notes.
func spreadOf(file string, line int, pos strict.Positions, at string, w *Workload, labels map[string]string, tscs []corev1.TopologySpreadConstraint, aff *corev1.Affinity) error {
	w.Pod.Labels = labels
	spread, notes, f := podspread.Read(tscs)
	if f != nil {
		return strict.At(file, line, pos, at+f.Field, "%s", f.Msg)
	}
	terms, more, f := podspread.ReadAffinity(aff)
	if f != nil {
		return strict.At(file, line, pos, at+f.Field, "%s", f.Msg)
	}
	notes = append(notes, more...)
	na, more, f := podspread.ReadNodeAffinity(aff)
	if f != nil {
		return strict.At(file, line, pos, at+f.Field, "%s", f.Msg)
	}
	notes = append(notes, more...)
	w.Pod.NodeAffinity = na
	w.Pod.PodAffinity = terms
	for _, n := range notes {
		l := line
		if p, ok := pos[at+n.Field]; ok {
			l = p[0]
		}
		w.Notes = append(w.Notes, fmt.Sprintf("%s:%d: %s %s: %s%s: %s", file, l, w.Kind, w.Name, at, n.Field, n.Msg))
	}
	w.Pod.Spread = spread
	return nil
}

// isvcPodLabels are the labels of an InferenceService's predictor pods:
// the InferenceService's, the predictor's own, and the one KServe sets on
// every pod of the service (serving.kserve.io/inferenceservice: NAME).
func isvcPodLabels(name string, meta, predictor map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, meta)
	maps.Copy(out, predictor)
	out["serving.kserve.io/inferenceservice"] = name
	return out
}
