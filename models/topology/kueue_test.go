package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Two of Kueue's own cases (pkg/cache/scheduler/tas_cache_test.go,
// kubernetes-sigs/kueue at ff69552), 1-CPU pods on nodes of the CPUs
// given; domain values are the names' numbers (b1 -> 1, x3 -> 3).

// "minimize the number of used racks before optimizing the number of
// nodes; BestFit": block b1 of racks r1 {x3: 2}, r2 {x5: 2}, r3 {x1, x6,
// x2, x4: 1 each}; 4 pods, required block. Kueue's answer: x1, x2, x4 and
// x6 one each (one rack, r3, rather than the two nodes x3 and x5).
func TestTASKueueMinimizesRacksFirst(t *testing.T) {
	leaves := []TASLeaf{
		{Path: []int64{1, 1, 3}, Pods: 2}, {Path: []int64{1, 2, 5}, Pods: 2},
		{Path: []int64{1, 3, 1}, Pods: 1}, {Path: []int64{1, 3, 6}, Pods: 1}, {Path: []int64{1, 3, 2}, Pods: 1}, {Path: []int64{1, 3, 4}, Pods: 1},
	}
	got, why := TASAssign(3, leaves, TASRequest{Mode: TASRequired, Level: 0, SliceLevel: 2, SliceSize: 1, Count: 4})
	require.Empty(t, why)
	require.Equal(t, []int32{0, 0, 1, 1, 1, 1}, got)
}

// "block preferred; Pods fit in 2 blocks; BestFit": blocks b1 (2 CPUs),
// b2 (1), b3 (4), one level; 5 pods preferred block. Kueue's answer:
// b3 4 and b2 1 (the last pod best-fitted into the smallest block that
// holds it, not b1).
func TestTASKueuePreferredTwoBlocks(t *testing.T) {
	leaves := []TASLeaf{{Path: []int64{1}, Pods: 2}, {Path: []int64{2}, Pods: 1}, {Path: []int64{3}, Pods: 4}}
	got, why := TASAssign(1, leaves, TASRequest{Mode: TASPreferred, Level: 0, SliceLevel: 0, SliceSize: 1, Count: 5})
	require.Empty(t, why)
	require.Equal(t, []int32{0, 1, 4}, got)

	// Required, the same 5 pods do not fit one block: Kueue's reason.
	got, why = TASAssign(1, leaves, TASRequest{Mode: TASRequired, Level: 0, SliceLevel: 0, SliceSize: 1, Count: 5})
	require.Nil(t, got)
	require.Equal(t, "the topology fits only 4 out of 5 pod(s)", why)
}
