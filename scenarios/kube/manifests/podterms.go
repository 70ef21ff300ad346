package manifests

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// podTerms writes a pod's topology spread constraints and its required pod
// affinity and anti-affinity as a pod template's fields, the terms added
// to aff (which holds the node affinity, if any); read back, they are the
// same constraints.
func podTerms(c *cluster.Constraints, aff *corev1.Affinity) ([]corev1.TopologySpreadConstraint, *corev1.Affinity) {
	if c == nil {
		return nil, aff
	}
	var spread []corev1.TopologySpreadConstraint
	for _, s := range c.Spread {
		t := corev1.TopologySpreadConstraint{MaxSkew: s.MaxSkew, TopologyKey: s.TopologyKey,
			WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: labelSelector(s.Selector, s.Nothing)}
		if s.DoNotSchedule {
			t.WhenUnsatisfiable = corev1.DoNotSchedule
		}
		if s.MinDomains > 0 {
			t.MinDomains = ptr(s.MinDomains)
		}
		if s.IgnoreNodeAffinity {
			t.NodeAffinityPolicy = ptr(corev1.NodeInclusionPolicyIgnore)
		}
		if s.HonorTaints {
			t.NodeTaintsPolicy = ptr(corev1.NodeInclusionPolicyHonor)
		}
		spread = append(spread, t)
	}
	for _, p := range c.PodAffinity {
		if aff == nil {
			aff = &corev1.Affinity{}
		}
		term := corev1.PodAffinityTerm{LabelSelector: labelSelector(p.Selector, p.Nothing), TopologyKey: p.TopologyKey}
		if p.Anti {
			if aff.PodAntiAffinity == nil {
				aff.PodAntiAffinity = &corev1.PodAntiAffinity{}
			}
			aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
			continue
		}
		if aff.PodAffinity == nil {
			aff.PodAffinity = &corev1.PodAffinity{}
		}
		aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
	}
	return spread, aff
}

// labelSelector writes requirements as a label selector: an In of one
// value as matchLabels, the rest as matchExpressions; nothing (no
// selector, which matches no pod) as none.
func labelSelector(reqs []cluster.Requirement, nothing bool) *metav1.LabelSelector {
	if nothing {
		return nil
	}
	sel := &metav1.LabelSelector{}
	for _, r := range reqs {
		if r.Op == cluster.OpIn && len(r.Values) == 1 {
			if _, dup := sel.MatchLabels[r.Key]; !dup {
				if sel.MatchLabels == nil {
					sel.MatchLabels = map[string]string{}
				}
				sel.MatchLabels[r.Key] = r.Values[0]
				continue
			}
		}
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Op), Values: r.Values})
	}
	return sel
}

// withPodLabels adds a pod's own labels (those its selectors and others'
// match) to labels.
func withPodLabels(labels map[string]string, p *cluster.PodLabels) map[string]string {
	if p == nil || len(p.Labels) == 0 {
		return labels
	}
	out := maps.Clone(labels)
	for k, v := range p.Labels {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}
