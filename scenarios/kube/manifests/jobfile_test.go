package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// A class's placement as written: the scenario's capacity-type key
// becomes Karpenter's, each affinity term is also pinned to the pools a
// MIG profile or a GPU share runs on, and an empty selector is left out.
func TestClassPlacement(t *testing.T) {
	c := scenarios.ClassSpec{
		NodeSelector: map[string]string{scenarios.LabelCapacityType: "spot", "team": "a"},
		Affinity: []scenarios.TermSpec{
			{MatchExpressions: []scenarios.RequirementSpec{{Key: "zone", Operator: "In", Values: []string{"us-east-1a"}}}},
			{MatchExpressions: []scenarios.RequirementSpec{{Key: "gpu", Operator: "Exists"}}},
		},
		Tolerations: []scenarios.TolerationSpec{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}},
	}
	sel, aff, tols := classPlacement(c, []string{"mig-a", "mig-b"})
	assert.Equal(t, map[string]string{"karpenter.sh/capacity-type": "spot", "team": "a"}, sel)
	pin := corev1.NodeSelectorRequirement{Key: cluster.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: []string{"mig-a", "mig-b"}}
	terms := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	assert.Equal(t, []corev1.NodeSelectorTerm{
		{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1a"}}, pin}},
		{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: corev1.NodeSelectorOpExists}, pin}},
	}, terms)
	assert.Equal(t, []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, tols)

	// No terms of its own: one term of the pin alone. Nothing to pin and
	// nothing written: no affinity, no selector.
	_, aff, _ = classPlacement(scenarios.ClassSpec{}, []string{"ts"})
	assert.Equal(t, []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: cluster.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: []string{"ts"}}}}},
		aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
	sel, aff, tols = classPlacement(scenarios.ClassSpec{}, nil)
	assert.Nil(t, sel)
	assert.Nil(t, aff)
	assert.Nil(t, tols)
}
