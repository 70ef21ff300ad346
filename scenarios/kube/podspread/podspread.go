// Package podspread reads a pod template's topologySpreadConstraints into
// the scheduler's spread constraints, checked as the API server checks
// them, and notes what it reads but does not model.
package podspread

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// MaxConstraints bounds the constraints of one pod.
const MaxConstraints = 16

// Finding is an error or a note at a field, relative to the pod spec
// (topologySpreadConstraints[0].maxSkew).
type Finding struct {
	Field, Msg string
}

// Read turns a pod spec's topologySpreadConstraints into spread
// constraints. Notes say what is read but not modelled; err is the first
// value the API server would refuse.
func Read(tscs []corev1.TopologySpreadConstraint) (out []cluster.SpreadConstraint, notes []Finding, err *Finding) {
	if len(tscs) > MaxConstraints {
		return nil, nil, &Finding{"topologySpreadConstraints", fmt.Sprintf("%d constraints, more than %d", len(tscs), MaxConstraints)}
	}
	seen := map[string]bool{}
	for i, t := range tscs {
		at := fmt.Sprintf("topologySpreadConstraints[%d]", i)
		fail := func(f, format string, a ...any) *Finding {
			return &Finding{at + "." + f, fmt.Sprintf(format, a...)}
		}
		sc := cluster.SpreadConstraint{MaxSkew: t.MaxSkew, TopologyKey: t.TopologyKey}
		if t.MaxSkew <= 0 {
			return nil, nil, fail("maxSkew", "%d: must be greater than zero", t.MaxSkew)
		}
		if t.TopologyKey == "" {
			return nil, nil, fail("topologyKey", "is required (a node label: topology.kubernetes.io/zone, kubernetes.io/hostname, ...)")
		}
		if errs := validation.IsQualifiedName(t.TopologyKey); len(errs) > 0 {
			return nil, nil, fail("topologyKey", "%s is not a label key: %s", strict.Quote(t.TopologyKey), errs[0])
		}
		switch t.WhenUnsatisfiable {
		case corev1.DoNotSchedule:
			sc.DoNotSchedule = true
		case corev1.ScheduleAnyway:
		default:
			return nil, nil, fail("whenUnsatisfiable", "%s is not DoNotSchedule or ScheduleAnyway", strict.Quote(string(t.WhenUnsatisfiable)))
		}
		pair := t.TopologyKey + "\x00" + string(t.WhenUnsatisfiable)
		if seen[pair] {
			return nil, nil, fail("topologyKey", "a second constraint on %s with %s (the API server refuses the pair twice)", t.TopologyKey, t.WhenUnsatisfiable)
		}
		seen[pair] = true
		if t.MinDomains != nil {
			if *t.MinDomains <= 0 {
				return nil, nil, fail("minDomains", "%d: must be greater than zero", *t.MinDomains)
			}
			if !sc.DoNotSchedule {
				return nil, nil, fail("minDomains", "applies only with whenUnsatisfiable DoNotSchedule")
			}
			sc.MinDomains = *t.MinDomains
		}
		for _, p := range []struct {
			name string
			v    *corev1.NodeInclusionPolicy
			set  *bool
			on   corev1.NodeInclusionPolicy
		}{{"nodeAffinityPolicy", t.NodeAffinityPolicy, &sc.IgnoreNodeAffinity, corev1.NodeInclusionPolicyIgnore},
			{"nodeTaintsPolicy", t.NodeTaintsPolicy, &sc.HonorTaints, corev1.NodeInclusionPolicyHonor}} {
			if p.v == nil {
				continue
			}
			if *p.v != corev1.NodeInclusionPolicyHonor && *p.v != corev1.NodeInclusionPolicyIgnore {
				return nil, nil, fail(p.name, "%s is not Honor or Ignore", strict.Quote(string(*p.v)))
			}
			*p.set = *p.v == p.on
		}
		if len(t.MatchLabelKeys) > 0 {
			notes = append(notes, Finding{at + ".matchLabelKeys", "read but not modelled: the selector alone picks the pods counted (the same pods when the keys are pod-template-hash, as a workload has one revision here)"})
		}
		sel, f := selector(t.LabelSelector)
		if f != nil {
			f.Field = at + ".labelSelector" + f.Field
			return nil, nil, f
		}
		if t.LabelSelector == nil {
			sc.Nothing = true
			notes = append(notes, Finding{at + ".labelSelector", "none given: it matches no pod, so the constraint counts nothing (as in Kubernetes)"})
		}
		sc.Selector = sel
		out = append(out, sc)
	}
	return out, notes, nil
}

// selector reads a label selector's matchLabels (as In requirements, in
// key order) and matchExpressions.
func selector(ls *metav1.LabelSelector) ([]cluster.Requirement, *Finding) {
	if ls == nil {
		return nil, nil
	}
	var out []cluster.Requirement
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range ls.MatchLabels {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, cluster.Requirement{Key: k, Op: cluster.OpIn, Values: []string{ls.MatchLabels[k]}})
	}
	for i, e := range ls.MatchExpressions {
		at := fmt.Sprintf(".matchExpressions[%d]", i)
		op := cluster.SelectorOp(e.Operator)
		switch op {
		case cluster.OpIn, cluster.OpNotIn:
			if len(e.Values) == 0 {
				return nil, &Finding{at + ".values", fmt.Sprintf("%s needs values", op)}
			}
		case cluster.OpExists, cluster.OpDoesNotExist:
			if len(e.Values) != 0 {
				return nil, &Finding{at + ".values", fmt.Sprintf("%s takes no values", op)}
			}
		default:
			return nil, &Finding{at + ".operator", fmt.Sprintf("%s is not In, NotIn, Exists or DoesNotExist", strict.Quote(string(e.Operator)))}
		}
		out = append(out, cluster.Requirement{Key: e.Key, Op: op, Values: e.Values})
	}
	return out, nil
}

// Labels are a pod template's labels for the spread selectors to match
// (nil without labels).
func Labels(l map[string]string) *cluster.PodLabels {
	if len(l) == 0 {
		return nil
	}
	return &cluster.PodLabels{Labels: l}
}

// Describe is a short text of the constraints for notes.
func Describe(cs []cluster.SpreadConstraint) string {
	var parts []string
	for _, c := range cs {
		w := "ScheduleAnyway"
		if c.DoNotSchedule {
			w = "DoNotSchedule"
		}
		parts = append(parts, fmt.Sprintf("maxSkew %d over %s (%s)", c.MaxSkew, c.TopologyKey, w))
	}
	return strings.Join(parts, "; ")
}

// ReadAffinity turns a pod's required pod affinity and anti-affinity
// terms (requiredDuringSchedulingIgnoredDuringExecution) into terms for
// the InterPodAffinity plugin; preferred terms, namespaces and
// match/mismatchLabelKeys are noted. Fields are relative to the pod spec.
func ReadAffinity(a *corev1.Affinity) (out []cluster.PodAffinityTerm, notes []Finding, err *Finding) {
	if a == nil {
		return nil, nil, nil
	}
	type group struct {
		name string
		anti bool
		req  []corev1.PodAffinityTerm
		pref int
	}
	var gs []group
	if pa := a.PodAffinity; pa != nil {
		gs = append(gs, group{"podAffinity", false, pa.RequiredDuringSchedulingIgnoredDuringExecution, len(pa.PreferredDuringSchedulingIgnoredDuringExecution)})
	}
	if pa := a.PodAntiAffinity; pa != nil {
		gs = append(gs, group{"podAntiAffinity", true, pa.RequiredDuringSchedulingIgnoredDuringExecution, len(pa.PreferredDuringSchedulingIgnoredDuringExecution)})
	}
	for _, g := range gs {
		if g.pref > 0 {
			notes = append(notes, Finding{"affinity." + g.name + ".preferredDuringSchedulingIgnoredDuringExecution", "preferences are not modelled"})
		}
		if len(g.req) > MaxConstraints {
			return nil, nil, &Finding{"affinity." + g.name + ".requiredDuringSchedulingIgnoredDuringExecution", fmt.Sprintf("%d terms, more than %d", len(g.req), MaxConstraints)}
		}
		for i, t := range g.req {
			at := fmt.Sprintf("affinity.%s.requiredDuringSchedulingIgnoredDuringExecution[%d]", g.name, i)
			if t.TopologyKey == "" {
				return nil, nil, &Finding{at + ".topologyKey", "is required (a node label: kubernetes.io/hostname, topology.kubernetes.io/zone, ...)"}
			}
			if errs := validation.IsQualifiedName(t.TopologyKey); len(errs) > 0 {
				return nil, nil, &Finding{at + ".topologyKey", fmt.Sprintf("%s is not a label key: %s", strict.Quote(t.TopologyKey), errs[0])}
			}
			sel, f := selector(t.LabelSelector)
			if f != nil {
				f.Field = at + ".labelSelector" + f.Field
				return nil, nil, f
			}
			if len(t.Namespaces) > 0 || t.NamespaceSelector != nil {
				notes = append(notes, Finding{at, "namespaces are not modelled: the pods of every namespace count"})
			}
			if len(t.MatchLabelKeys) > 0 || len(t.MismatchLabelKeys) > 0 {
				notes = append(notes, Finding{at, "matchLabelKeys and mismatchLabelKeys are read but not modelled: the selector alone picks the pods"})
			}
			out = append(out, cluster.PodAffinityTerm{Anti: g.anti, TopologyKey: t.TopologyKey, Selector: sel, Nothing: t.LabelSelector == nil})
		}
	}
	return out, notes, nil
}

// ReadNodeAffinity reads a pod's required node affinity, checked as the API
// server checks it; preferences and matchFields are noted as not
// modelled.
func ReadNodeAffinity(aff *corev1.Affinity) ([]cluster.NodeSelectorTerm, []Finding, *Finding) {
	if aff == nil || aff.NodeAffinity == nil {
		return nil, nil, nil
	}
	const base = "affinity.nodeAffinity."
	var out []cluster.NodeSelectorTerm
	var notes []Finding
	na := aff.NodeAffinity
	if len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		notes = append(notes, Finding{Field: base + "preferredDuringSchedulingIgnoredDuringExecution", Msg: "preferences are not modelled"})
	}
	req := na.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil {
		return nil, notes, nil
	}
	if len(req.NodeSelectorTerms) == 0 {
		return nil, nil, &Finding{Field: base + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", Msg: "must have at least one term"}
	}
	if len(req.NodeSelectorTerms) > MaxConstraints {
		return nil, nil, &Finding{Field: base + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", Msg: fmt.Sprintf("%d terms, more than %d", len(req.NodeSelectorTerms), MaxConstraints)}
	}
	for i, term := range req.NodeSelectorTerms {
		at := fmt.Sprintf("%srequiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d]", base, i)
		if len(term.MatchExpressions) > MaxConstraints {
			return nil, nil, &Finding{Field: at + ".matchExpressions", Msg: fmt.Sprintf("%d requirements, more than %d", len(term.MatchExpressions), MaxConstraints)}
		}
		var t cluster.NodeSelectorTerm
		for j, r := range term.MatchExpressions {
			f := fmt.Sprintf("%s.matchExpressions[%d]", at, j)
			op := cluster.SelectorOp(r.Operator)
			switch op {
			case cluster.OpIn, cluster.OpNotIn:
				if len(r.Values) == 0 {
					return nil, nil, &Finding{Field: f + ".values", Msg: fmt.Sprintf("%s needs values", op)}
				}
			case cluster.OpExists, cluster.OpDoesNotExist:
				if len(r.Values) != 0 {
					return nil, nil, &Finding{Field: f + ".values", Msg: fmt.Sprintf("%s takes no values", op)}
				}
			case cluster.OpGt, cluster.OpLt:
				if len(r.Values) != 1 {
					return nil, nil, &Finding{Field: f + ".values", Msg: fmt.Sprintf("%s takes one value, got %d", op, len(r.Values))}
				}
				if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
					return nil, nil, &Finding{Field: f + ".values[0]", Msg: fmt.Sprintf("%s %s is not an integer; Gt and Lt compare a label as a whole number", op, strict.Quote(r.Values[0]))}
				}
			default:
				return nil, nil, &Finding{Field: f + ".operator", Msg: fmt.Sprintf("%s is not In, NotIn, Exists, DoesNotExist, Gt or Lt", strict.Quote(string(r.Operator)))}
			}
			if r.Key == "" {
				return nil, nil, &Finding{Field: f + ".key", Msg: "is required"}
			}
			t = append(t, cluster.Requirement{Key: r.Key, Op: op, Values: r.Values})
		}
		if len(term.MatchFields) > 0 {
			notes = append(notes, Finding{Field: at + ".matchFields", Msg: "not modelled (gpuplan's nodes have no metadata.name to match)"})
		}
		out = append(out, t)
	}
	return out, notes, nil
}
