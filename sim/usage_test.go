package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

func TestBookKeepsTheFirstPoolInTheJobAndTheRestAside(t *testing.T) {
	tb := table(t, 1, true)
	j := tb.at(0)
	res := [3]int64{1000, 4000, 8192} // one GPU, 4 CPUs, 8 GiB
	// 100 ms in pool 2, nothing lost: the job's own counters.
	j.book(2, res, 100, 0, 0)
	require.Equal(t, int32(2), j.usePool)
	require.Equal(t, [3]int64{100_000, 400_000, 819_200}, j.useHeld)
	require.Nil(t, j.x, "a job that lost nothing needs no extra state")
	// 50 ms more, of which 80 lost (capped at the 50 held) and 10 spent
	// writing checkpoints.
	j.book(2, res, 50, 80, 10)
	require.Equal(t, [3]int64{150_000, 600_000, 1_228_800}, j.useHeld)
	require.Equal(t, [3]int64{50_000, 200_000, 409_600}, j.x.lost0)
	require.Equal(t, [3]int64{10_000, 40_000, 81_920}, j.x.ckpt0)
	// 30 ms of two GPUs, a CPU and 100 MiB in pool 0, 5 of them writing.
	j.book(0, [3]int64{2000, 1000, 100}, 30, 0, 5)
	require.Equal(t, []PoolUsage{{Pool: 0, Held: [3]int64{60_000, 30_000, 3000}, Checkpoint: [3]int64{10_000, 5000, 500}}}, j.x.more)

	// The record has both pools, the first first; its GPU time is the sum.
	j.outcome = Completed
	tb.retire(j, false)
	rec := tb.recs.slot(0)
	require.Equal(t, int64(150_000+60_000), rec.HeldMilliMs)
	require.Equal(t, []PoolUsage{
		{Pool: 2, Held: [3]int64{150_000, 600_000, 1_228_800}, Lost: [3]int64{50_000, 200_000, 409_600}, Checkpoint: [3]int64{10_000, 40_000, 81_920}},
		{Pool: 0, Held: [3]int64{60_000, 30_000, 3000}, Checkpoint: [3]int64{10_000, 5000, 500}},
	}, slices.Collect(rec.Usage()))
}

func TestOnNodeListsEachJobOncePerNode(t *testing.T) {
	d := disruption{onNode: make([][]int32, 3)}
	a, b := &jobState{}, &jobState{}
	a.info.ID, b.info.ID = 7, 9
	// a has two pods on node 1 and one on node 2; b one on node 1.
	a.placed = []cluster.Placement{{Node: 1}, {Node: 1}, {Node: 2}}
	b.placed = []cluster.Placement{{Node: 1}}
	d.placedOn(0, a, a.placed[:2])
	d.placedOn(0, b, b.placed)
	d.placedOn(0, a, a.placed[2:])
	require.Equal(t, [][]int32{nil, {7, 9}, {7}}, d.onNode)
	d.releasedFrom(10, a)
	require.Equal(t, [][]int32{nil, {9}, {}}, d.onNode)
}

func TestHeldOnCountsThePodsOnTheNode(t *testing.T) {
	v := &jobState{spec: job("v", 0, 10, 3, 2)}
	v.placed = []cluster.Placement{{Node: 3, Milli: 2000}, {Node: 4, Milli: 2000}, {Node: 3, Milli: 2000}}
	// Two pods of 2 GPUs, 1 CPU and 1 GiB each on node 3.
	require.Equal(t, res3{cpu: 2000, mem: 2048, gpu: 4}, heldOn(v, 3))
	require.Equal(t, res3{cpu: 1000, mem: 1024, gpu: 2}, heldOn(v, 4))
	require.Equal(t, res3{}, heldOn(v, 5))
}
