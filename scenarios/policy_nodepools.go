package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// nodePool reads a Karpenter NodePool (karpenter.sh/v1) of the policy
// manifests into a scenario NodePool: instance types, capacity types and
// zone from its requirements, labels and taints from its template, GPU and
// node limits, consolidation. What it cannot model is noted.
func (p *Policy) nodePool(d policyDoc) error {
	var np karpv1.NodePool
	if err := d.strict(&np); err != nil {
		return err
	}
	out := NodePoolSpec{Name: np.Name, Labels: map[string]string{}}
	note := func(f string) { p.notModelled(d, np.Name, f) }
	for i, r := range np.Spec.Template.Spec.Requirements {
		switch {
		case r.Key == corev1.LabelInstanceTypeStable && r.Operator == corev1.NodeSelectorOpIn:
			out.InstanceTypes = append(out.InstanceTypes, r.Values...)
		case r.Key == karpv1.CapacityTypeLabelKey && r.Operator == corev1.NodeSelectorOpIn:
			for _, v := range r.Values {
				if v == "spot" || v == "on-demand" {
					out.CapacityTypes = append(out.CapacityTypes, v)
				} else {
					note(fmt.Sprintf("spec.template.spec.requirements[%d] capacity type %q", i, v))
				}
			}
		case r.Key == corev1.LabelTopologyZone && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) > 0:
			out.Zone = r.Values[0]
			if len(r.Values) > 1 {
				note(fmt.Sprintf("spec.template.spec.requirements[%d] zones beyond the first (%s)", i, strings.Join(r.Values[1:], ", ")))
			}
		default:
			note(fmt.Sprintf("spec.template.spec.requirements[%d] (%s %s)", i, r.Key, r.Operator))
		}
		if r.MinValues != nil {
			note(fmt.Sprintf("spec.template.spec.requirements[%d].minValues", i))
		}
	}
	if len(out.InstanceTypes) == 0 {
		return d.fieldErr("spec.template.spec.requirements", "NodePool %s: gpuplan needs a requirement %s In [instance types] to know what it launches", np.Name, corev1.LabelInstanceTypeStable)
	}
	slices.Sort(out.CapacityTypes)
	out.CapacityTypes = slices.Compact(out.CapacityTypes)
	for k, v := range np.Spec.Template.Labels {
		out.Labels[k] = v
	}
	for _, t := range np.Spec.Template.Spec.Taints {
		out.Taints = append(out.Taints, TaintSpec{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	if len(np.Spec.Template.Spec.StartupTaints) > 0 {
		note("spec.template.spec.startupTaints")
	}
	for _, r := range slices.Sorted(maps.Keys(np.Spec.Limits)) {
		q := np.Spec.Limits[r]
		at := fmt.Sprintf("spec.limits[%s]", strconv.Quote(string(r)))
		switch r {
		case "nvidia.com/gpu", "nodes":
			bound := int64(MaxNodes)
			if r == "nvidia.com/gpu" {
				bound = MaxNodes * MaxPodGPUs
			}
			f := q.AsApproximateFloat64()
			if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > float64(bound) {
				return d.fieldErr(at, "%s is not a whole number from 0 to %d", Quote(q.String()), bound)
			}
			if r == "nodes" {
				out.Limits.Nodes = int(q.Value())
			} else {
				out.Limits.GPUs = q.Value()
			}
		default:
			note("spec.limits." + string(r))
		}
	}
	if out.Limits.GPUs == 0 && out.Limits.Nodes == 0 {
		return d.fieldErr("spec.limits", "NodePool %s: give limits of nvidia.com/gpu or nodes so the simulation can bound it", np.Name)
	}
	dis := np.Spec.Disruption
	if ca := dis.ConsolidateAfter; ca.Duration != nil {
		out.Consolidation = &ConsolidationSpec{Policy: string(dis.ConsolidationPolicy), ConsolidateAfter: Duration{Duration: *ca.Duration}}
		if out.Consolidation.Policy == "" {
			out.Consolidation.Policy = string(karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized)
		}
	}
	if len(dis.Budgets) > 0 {
		note("spec.disruption.budgets")
	}
	if np.Spec.Weight != nil {
		note("spec.weight")
	}
	if np.Spec.Replicas != nil {
		note("spec.replicas (static NodePools)")
	}
	if len(out.Labels) == 0 {
		out.Labels = nil
	}
	p.NodePools = append(p.NodePools, out)
	return nil
}

// importNodePools adds the NodePools of spec.policy's manifests to the
// cluster (they are read when the scenario loads).
func (s *Scenario) importNodePools() error {
	ps := s.Spec.Policy
	if ps == nil || len(ps.Manifests) == 0 {
		return nil
	}
	var paths []string
	for _, m := range ps.Manifests {
		paths = append(paths, s.path(m))
	}
	pol, err := LoadPolicy(paths)
	if err != nil {
		return err
	}
	for _, np := range pol.NodePools {
		s.Spec.Cluster.NodePools = append(s.Spec.Cluster.NodePools, np)
		s.imported = append(s.imported, np.Name)
	}
	return nil
}
