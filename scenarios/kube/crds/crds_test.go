package crds

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every embedded Kueue schema compiles, which also means gpuplan has an
// evaluator for each of its CEL rules (16 distinct rules over the ten
// schemas of v0.19.2, four of them transition rules that run only on
// update).
func TestEveryKueueSchemaCompiles(t *testing.T) {
	for _, v := range []string{"v1beta1", "v1beta2"} {
		for _, k := range []string{"ClusterQueue", "Cohort", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass"} {
			c, err := Kueue("kueue.x-k8s.io/"+v, k)
			require.NoError(t, err)
			require.NotNil(t, c, "%s %s", v, k)
		}
	}
	c, err := Kueue("kueue.x-k8s.io/v1beta2", "Workload")
	require.NoError(t, err)
	require.Nil(t, c, "no schema embedded for Workload")
	c, err = Kueue("karpenter.sh/v1", "NodePool")
	require.NoError(t, err)
	require.Nil(t, c)
}

// Karpenter's NodePool and EC2NodeClass schemas compile: gpuplan has an
// evaluator for each of their rules that creation can break (NodePool:
// 20 rules, 3 of them transition rules, 15 distinct texts among the rest;
// EC2NodeClass: 54 rules, 45 distinct texts; 59 distinct in all, `self !=
// ”` being in both).
func TestKarpenterSchemasCompile(t *testing.T) {
	for _, k := range [][2]string{{"karpenter.sh/v1", "NodePool"}, {"karpenter.k8s.aws/v1", "EC2NodeClass"}} {
		c, err := Karpenter(k[0], k[1])
		require.NoError(t, err)
		require.NotNil(t, c, k[1])
		require.Empty(t, c.Unevaluated(), k[1])
	}
	c, err := Karpenter("karpenter.sh/v1beta1", "NodePool")
	require.NoError(t, err)
	require.Nil(t, c)
}
