package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Volcano's network-topology-aware placement on the HyperNode tree of its
// user guide (docs/user-guide/how_to_use_network_topology_aware_scheduling.md):
// tier 3 s6 = {s4, s5}; tier 2 s4 = {s0, s1}, s5 = {s2, s3}; tier 1
// s0 = {node0, node1}, s1 = {node2, node3}, s2 = {node4, node5},
// s3 = {node6, node7}. Levels widest first: tier 3, tier 2, tier 1, node.
// node0 is full, every other node holds one more pod.
func volcanoGuideLeaves() []TASLeaf {
	var out []TASLeaf
	for n := int64(0); n < 8; n++ {
		pods := int32(1)
		if n == 0 {
			pods = 0
		}
		// s6 = 0; s4 = 0, s5 = 1; s0..s3 = 0..3.
		out = append(out, TASLeaf{Path: []int64{0, n / 4, n / 2, n}, Pods: pods})
	}
	return out
}

// hard, highestTierAllowed 2, 4 pods: Volcano tries tier 1 first (s0 holds
// 1, s1..s3 2 each: none holds 4), then tier 2 (s4 holds 3, s5 4): s5,
// node4..node7 one each.
func TestVolcanoHardClimbsToItsTier(t *testing.T) {
	got, why := TASAssign(4, volcanoGuideLeaves(), TASRequest{Mode: TASPreferred, Level: 2, SliceLevel: 3, SliceSize: 1, Count: 4, Bounded: true, Highest: 1})
	require.Empty(t, why)
	require.Equal(t, []int32{0, 0, 0, 0, 1, 1, 1, 1}, got)
}

// hard, highestTierAllowed 1, the same 4 pods: no tier-1 HyperNode holds
// more than 2, and the job may not go wider: it waits.
func TestVolcanoHardWaitsAboveItsTier(t *testing.T) {
	got, why := TASAssign(4, volcanoGuideLeaves(), TASRequest{Mode: TASPreferred, Level: 2, SliceLevel: 3, SliceSize: 1, Count: 4, Bounded: true, Highest: 2})
	require.Nil(t, got)
	require.Equal(t, "the topology fits only 2 out of 4 pod(s)", why)

	// 7 pods under tier 2: s4 holds 3, s5 4: waits too.
	got, why = TASAssign(4, volcanoGuideLeaves(), TASRequest{Mode: TASPreferred, Level: 2, SliceLevel: 3, SliceSize: 1, Count: 7, Bounded: true, Highest: 1})
	require.Nil(t, got)
	require.Equal(t, "the topology fits only 4 out of 7 pod(s)", why)
}

// soft, 7 pods: no bound, the climb reaches tier 3 (s6 holds 7): every
// free node one pod.
func TestVolcanoSoftGoesAsWideAsNeeded(t *testing.T) {
	got, why := TASAssign(4, volcanoGuideLeaves(), TASRequest{Mode: TASPreferred, Level: 2, SliceLevel: 3, SliceSize: 1, Count: 7})
	require.Empty(t, why)
	require.Equal(t, []int32{0, 1, 1, 1, 1, 1, 1, 1}, got)
}
