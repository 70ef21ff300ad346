package plugins

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Kueue topology-aware scheduling, cases worked by hand with Kueue's rules
// (site/content/en/docs/concepts/topology_aware_scheduling.md and
// pkg/cache/scheduler/tas_flavor_snapshot.go's findTopologyAssignment,
// default feature gates: BestFit for required and preferred).
//
// The cluster: 8 nodes of 8 GPUs, racks of 2 nodes, 2 racks a block:
//
//	block 0: rack 0 = nodes 0, 1; rack 1 = nodes 2, 3
//	block 1: rack 2 = nodes 4, 5; rack 3 = nodes 6, 7
//
// levels block, rack, hostname; each pod asks for 2 GPUs (4 to an empty
// node, 8 to an empty rack). used[n] is the GPUs already taken on node n.
func tasCluster(t *testing.T, used [8]int32) *cluster.Cluster {
	t.Helper()
	c, err := cluster.New([]cluster.PoolSpec{{Name: "h100", GPUModel: "H100-80GB", Nodes: 8, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20,
		Topology: topology.Spec{NodesPerRack: 2, RacksPerBlock: 2}}})
	require.NoError(t, err)
	for n, g := range used {
		if g > 0 {
			_, err := c.Allocate(0, int32(n), &cluster.PodSpec{GPUs: g}, -1)
			require.NoError(t, err)
		}
	}
	require.NoError(t, c.SetTASLevels([]string{cluster.LabelTopologyBlock, cluster.LabelTopologyRack, cluster.LabelHostname}))
	return c
}

// tasAttempt places a job of pods 2-GPU pods asking for req under the
// default profile: the pods per node, or the status that held it.
func tasAttempt(t *testing.T, c *cluster.Cluster, pods int32, req *cluster.TASRequest) (map[int32]int, *scheduler.Status) {
	t.Helper()
	prof, err := NewProfile(Default(), nil)
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	spec := &cluster.JobSpec{Name: "tas", Replicas: pods, Duration: 1, Pod: cluster.PodSpec{GPUs: 2, MilliCPU: 1000, MemoryMiB: 1024},
		Constraints: &cluster.Constraints{TAS: req}}
	var b binds
	placed, st, err := fw.Attempt(0, &scheduler.JobInfo{Spec: spec}, &b)
	require.NoError(t, err)
	if !st.IsSuccess() {
		require.Zero(t, placed)
		return nil, st
	}
	require.Equal(t, pods, placed)
	got := map[int32]int{}
	for _, n := range b.nodes {
		got[n]++
	}
	return got, nil
}

// The state of the first two cases: free pods per node 2, 3 | 0, 0 || 4, 4
// | 2, 2, so racks hold 5, 0, 8 and 4 pods, blocks 5 and 12.
var usedA = [8]int32{4, 2, 8, 8, 0, 0, 4, 4}

// Fits in one rack: 5 pods, required rack. Racks sorted BestFit (most
// pods first): rack 2 (8), rack 0 (5), rack 3 (4), rack 1 (0); rack 2
// holds all 5, so Kueue takes the tightest rack that does: rack 0 (5,
// none to spare), not the emptiest. Inside it nodes sorted most first:
// node 1 (3) takes 3, the last 2 go to the best fit among the rest, node
// 0 (2). Without the request the default profile (MostAllocated) fills
// the fullest nodes wherever they are: node 0 (4 used, first of the ties
// with nodes 6 and 7) takes 2, then node 6 2 and node 7 1: both blocks.
func TestTASFitsInOneRack(t *testing.T) {
	got, st := tasAttempt(t, tasCluster(t, usedA), 5, &cluster.TASRequest{Mode: topology.TASRequired, Level: cluster.LabelTopologyRack})
	require.Nil(t, st)
	require.Equal(t, map[int32]int{0: 2, 1: 3}, got)

	got, st = tasAttempt(t, tasCluster(t, usedA), 5, nil)
	require.Nil(t, st)
	require.Equal(t, map[int32]int{0: 2, 6: 2, 7: 1}, got)
}

// Needs two racks under preferred: 10 pods, preferred rack. No rack holds
// 10 (the most is rack 2's 8), so Kueue goes one level up: blocks 0 (5)
// and 1 (12); block 1 holds them and is the tightest that does. Down a
// level, block 1's racks most first: rack 2 (8) takes 8, 2 are left and
// rack 3 (4) is the best fit. In rack 2 nodes 4 and 5 (4 each) take 4
// each; in rack 3 nodes 6 and 7 hold 2 each, a tie broken by name: node 6
// takes both. Two racks of one block: the all-reduce crosses the spine.
func TestTASNeedsTwoRacksUnderPreferred(t *testing.T) {
	got, st := tasAttempt(t, tasCluster(t, usedA), 10, &cluster.TASRequest{Mode: topology.TASPreferred, Level: cluster.LabelTopologyRack})
	require.Nil(t, st)
	require.Equal(t, map[int32]int{4: 4, 5: 4, 6: 2}, got)
}

// Refused (waits) under required: with 2 more GPUs taken on node 5, the
// racks hold 5, 0, 7 and 4 pods. 8 pods, required rack: the first rack
// in BestFit order (rack 2, 7 pods) does not hold 8, and a required
// request does not go up a level: Kueue leaves the workload pending
// ("fits only 7 out of 8 pods"). The job can fit later (an empty rack
// holds 8), so it is unschedulable now, not refused for good; preferred,
// the same job is placed now across racks of block 1 (7 + 4 >= 8).
func TestTASRequiredWaitsWhenNoRackFits(t *testing.T) {
	used := usedA
	used[5] = 2
	req := &cluster.TASRequest{Mode: topology.TASRequired, Level: cluster.LabelTopologyRack}
	c := tasCluster(t, used)
	got, st := tasAttempt(t, c, 8, req)
	require.Nil(t, got)
	require.Equal(t, scheduler.Unschedulable, st.Code)
	require.Contains(t, st.Message(), "fits only 7 out of 8 pod(s)")

	prof, err := NewProfile(Default(), nil)
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	ok, why := fw.FitsEmpty(&scheduler.JobInfo{Spec: &cluster.JobSpec{Replicas: 8, Pod: cluster.PodSpec{GPUs: 2}, Constraints: &cluster.Constraints{TAS: req}}})
	require.True(t, ok, why)
	// 10 pods can never be in one rack of 8: refused for good.
	ok, why = fw.FitsEmpty(&scheduler.JobInfo{Spec: &cluster.JobSpec{Replicas: 10, Pod: cluster.PodSpec{GPUs: 2}, Constraints: &cluster.Constraints{TAS: req}}})
	require.False(t, ok)
	require.Contains(t, why, "can never place")

	got, st = tasAttempt(t, tasCluster(t, used), 8, &cluster.TASRequest{Mode: topology.TASPreferred, Level: cluster.LabelTopologyRack})
	require.Nil(t, st)
	// Block 1 holds 11: rack 2 (7) takes 7 (node 4: 4, node 5: 3), rack 3
	// the last one on node 6.
	require.Equal(t, map[int32]int{4: 4, 5: 3, 6: 1}, got)
}

// Slices of 4 within a rack: 8 pods, required block, slices of 4 pods
// each within one rack (podset-slice-required-topology rack, slice-size
// 4). Free pods per node: 2, 4 | 1, 1 || 1, 4 | 4, 4; racks hold 6, 2, 5
// and 8 pods, so 1, 0, 1 and 2 slices; block 0 has 8 pods but 1 slice,
// block 1 13 pods and 3 slices. Without slices Kueue takes block 0, the
// tightest block holding 8 pods (its 4 nodes, pieces of 1 and 2); with
// slices block 0 holds only 1 of the 2, so block 1; its racks by slices:
// rack 3 (2) holds both, and is the best fit: all 8 pods in rack 3.
func TestTASSlicesOfFourWithinARack(t *testing.T) {
	used := [8]int32{4, 0, 6, 6, 6, 0, 0, 0}
	got, st := tasAttempt(t, tasCluster(t, used), 8, &cluster.TASRequest{Mode: topology.TASRequired, Level: cluster.LabelTopologyBlock})
	require.Nil(t, st)
	require.Equal(t, map[int32]int{0: 2, 1: 4, 2: 1, 3: 1}, got)

	got, st = tasAttempt(t, tasCluster(t, used), 8, &cluster.TASRequest{Mode: topology.TASRequired, Level: cluster.LabelTopologyBlock,
		SliceLevel: cluster.LabelTopologyRack, SliceSize: 4})
	require.Nil(t, st)
	require.Equal(t, map[int32]int{6: 4, 7: 4}, got)
}
