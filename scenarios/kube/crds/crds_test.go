package crds

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every embedded Kueue schema compiles, which also means gpuplan has an
// evaluator for each of its CEL rules (13 distinct rules over the ten
// schemas, two of them transition rules that run only on update).
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
