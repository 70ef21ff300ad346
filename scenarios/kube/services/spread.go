package services

import (
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/podspread"
	"gpuplan.dev/gpuplan/sim/cluster"
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
	na, more, f := nodeAffinity(aff)
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

// nodeAffinity reads a pod's required node affinity, checked as the API
// server checks it; preferences and matchFields are noted as not
// modelled.
func nodeAffinity(aff *corev1.Affinity) ([]cluster.NodeSelectorTerm, []podspread.Finding, *podspread.Finding) {
	if aff == nil || aff.NodeAffinity == nil {
		return nil, nil, nil
	}
	const base = "affinity.nodeAffinity."
	var out []cluster.NodeSelectorTerm
	var notes []podspread.Finding
	na := aff.NodeAffinity
	if len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		notes = append(notes, podspread.Finding{Field: base + "preferredDuringSchedulingIgnoredDuringExecution", Msg: "preferences are not modelled"})
	}
	req := na.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil {
		return nil, notes, nil
	}
	if len(req.NodeSelectorTerms) == 0 {
		return nil, nil, &podspread.Finding{Field: base + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", Msg: "must have at least one term"}
	}
	if len(req.NodeSelectorTerms) > podspread.MaxConstraints {
		return nil, nil, &podspread.Finding{Field: base + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", Msg: fmt.Sprintf("%d terms, more than %d", len(req.NodeSelectorTerms), podspread.MaxConstraints)}
	}
	for i, term := range req.NodeSelectorTerms {
		at := fmt.Sprintf("%srequiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d]", base, i)
		if len(term.MatchExpressions) > podspread.MaxConstraints {
			return nil, nil, &podspread.Finding{Field: at + ".matchExpressions", Msg: fmt.Sprintf("%d requirements, more than %d", len(term.MatchExpressions), podspread.MaxConstraints)}
		}
		var t cluster.NodeSelectorTerm
		for j, r := range term.MatchExpressions {
			f := fmt.Sprintf("%s.matchExpressions[%d]", at, j)
			op := cluster.SelectorOp(r.Operator)
			switch op {
			case cluster.OpIn, cluster.OpNotIn:
				if len(r.Values) == 0 {
					return nil, nil, &podspread.Finding{Field: f + ".values", Msg: fmt.Sprintf("%s needs values", op)}
				}
			case cluster.OpExists, cluster.OpDoesNotExist:
				if len(r.Values) != 0 {
					return nil, nil, &podspread.Finding{Field: f + ".values", Msg: fmt.Sprintf("%s takes no values", op)}
				}
			case cluster.OpGt, cluster.OpLt:
				if len(r.Values) != 1 {
					return nil, nil, &podspread.Finding{Field: f + ".values", Msg: fmt.Sprintf("%s takes one value, got %d", op, len(r.Values))}
				}
				if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
					return nil, nil, &podspread.Finding{Field: f + ".values[0]", Msg: fmt.Sprintf("%s %s is not an integer; Gt and Lt compare a label as a whole number", op, strict.Quote(r.Values[0]))}
				}
			default:
				return nil, nil, &podspread.Finding{Field: f + ".operator", Msg: fmt.Sprintf("%s is not In, NotIn, Exists, DoesNotExist, Gt or Lt", strict.Quote(string(r.Operator)))}
			}
			if r.Key == "" {
				return nil, nil, &podspread.Finding{Field: f + ".key", Msg: "is required"}
			}
			t = append(t, cluster.Requirement{Key: r.Key, Op: op, Values: r.Values})
		}
		if len(term.MatchFields) > 0 {
			notes = append(notes, podspread.Finding{Field: at + ".matchFields", Msg: "not modelled (gpuplan's nodes have no metadata.name to match)"})
		}
		out = append(out, t)
	}
	return out, notes, nil
}
