package dra_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// cd is a ComputeDomain whose channel's template is train-channel, with
// extra spec lines.
func cd(extra string) string {
	return `apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: train-cd, namespace: ml}
spec:
  numNodes: 2
  channel:
    resourceClaimTemplate: {name: train-channel}
` + extra
}

// A pod naming the channel's template asks for no GPU by it: the Job's
// GPUs are its nvidia.com/gpu limits; its pods get required pod affinity
// on nvidia.com/gpu.clique to the Job's own pods (so they share one
// NVLink domain), and the ComputeDomain is noted as read.
func TestComputeDomainChannelIsAffinityNotGPUs(t *testing.T) {
	doc := job(cd(""), "resourceClaimTemplateName: train-channel")
	o, err := parse(t, doc, nil)
	require.NoError(t, err)
	require.Len(t, o.Groups, 1)
	g := o.Groups[0]
	require.Equal(t, int32(0), g.Pod.GPUs)
	require.NotNil(t, g.Constraints)
	require.Len(t, g.Constraints.PodAffinity, 1)
	term := g.Constraints.PodAffinity[0]
	require.False(t, term.Anti)
	require.Equal(t, cluster.LabelGPUClique, term.TopologyKey)
	require.Len(t, term.Selector, 1)
	key := term.Selector[0].Key
	require.Equal(t, []string{g.Pod.Labels.Labels[key]}, term.Selector[0].Values)
	require.Equal(t, "train", g.Pod.Labels.Labels[key])
	require.Contains(t, joined(o.Notes), `ComputeDomain "train-cd" (w.yaml:1)`)
}

func joined(ss []string) string {
	out := ""
	for _, s := range ss {
		out += s + "\n"
	}
	return out
}

// The ComputeDomain is read strictly, at file:line:field.
func TestComputeDomainErrors(t *testing.T) {
	for _, c := range []struct{ doc, field, msg string }{
		{cd("  numNode: 2\n"), "spec.numNode", "unknown"},
		{cd("  channel2: {}\n"), "spec.channel2", "unknown"},
		{cd("") + "    extra: 1\n", "spec.channel.extra", "unknown"},
		{cd("") + "    allocationMode: Some\n", "spec.channel.allocationMode", `"Some" is not Single or All`},
		{"apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {name: x}\nspec: {numNodes: 1}\n", "spec.channel.resourceClaimTemplate.name", "needs the name"},
		{"apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {name: x}\nspec: {numNodes: -1, channel: {resourceClaimTemplate: {name: c}}}\n", "spec.numNodes", "zero or greater"},
	} {
		_, err := parse(t, job(c.doc, "resourceClaimTemplateName: train-channel"), nil)
		ie := inputErr(t, err)
		require.Equal(t, "w.yaml", ie.File, c.field)
		require.Equal(t, c.field, ie.Field, c.doc)
		require.Contains(t, ie.Msg+ie.Error(), c.msg, c.field)
	}
	// With pools whose NVLink domains are single nodes: refused, naming
	// the claim.
	_, err := parse(t, job(cd(""), "resourceClaimTemplateName: train-channel"), []cluster.PoolSpec{{Name: "h", Nodes: 4, GPUsPerNode: 8}})
	ie := inputErr(t, err)
	require.Equal(t, "spec.template.spec.resourceClaims[0].resourceClaimTemplateName", ie.Field)
	require.Contains(t, ie.Msg, `ComputeDomain "train-cd"`)
}
