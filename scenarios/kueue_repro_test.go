package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

// Kueue's flavor assignment honours a pod's nodeSelector (issue 26):
// testdata/repro/kueue-ignores-nodeselector's jobs select
// node.kubernetes.io/instance-type g5.2xlarge, a key both flavors label,
// so only the flavor "small" (the g5.2xlarge's, 1 GPU of quota) may be
// assigned, as Kueue's flavorassigner decides; gpuplan admitted 57 of the
// 59 to "big" (the g5.12xlarge's) and ran them there. Every job must run
// on the small pool, one at a time (its single GPU), and a job that
// waited must say the big flavor does not match its affinity.
func TestKueueFlavorHonoursNodeSelectorRepro(t *testing.T) {
	s, err := LoadFile("testdata/repro/kueue-ignores-nodeselector/scenario.yaml")
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.Equal(t, "small", res.Pools[1].Spec.Name)
	require.Len(t, res.Jobs, 59)
	pools := map[int32]int{}
	var prevEnd sim.Time
	waited := 0
	for i := range res.Jobs {
		j := &res.Jobs[i]
		require.Equal(t, sim.Completed, j.Outcome, "job %d", j.ID)
		pools[j.Pool]++
		require.GreaterOrEqual(t, j.Start, prevEnd, "job %d started before the one before it ended", j.ID)
		prevEnd = j.End
		if j.Start > j.Submit {
			waited++
			require.Equal(t, "ClusterQueue team: couldn't assign flavors: flavor big doesn't match node affinity; insufficient unused quota in flavor small for nvidia.com/gpu (1 more needed)",
				res.Reasons[j.Reason], "job %d", j.ID)
		}
	}
	require.Equal(t, map[int32]int{1: 59}, pools)
	require.Positive(t, waited)
}
