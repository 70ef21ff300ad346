package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// holder is a queueHolder: true when the queue still points to a job
// that left it.
type holder bool

func (h holder) HoldsNoDone() bool { return !bool(h) }

// table is a job table builder: n jobs added, the table plain or not.
func table(t *testing.T, n int, plain bool) *jobTable {
	t.Helper()
	tb := &jobTable{plain: plain}
	for i := range n {
		j := tb.add(holder(false))
		require.Equal(t, int32(i), j.info.ID)
		j.spec = job("j", 0, 1, 1, 1)
	}
	return tb
}

func TestJobTableNumbersJobsAcrossChunks(t *testing.T) {
	// 64 jobs in the first chunk, 1024 in each next: job 63 is the first
	// chunk's last, 64 the second's first, 1087 its last, 1088 the third's
	// first.
	tb := table(t, 64+1024+1, false)
	require.Len(t, tb.chunks, 3)
	require.Len(t, tb.chunks[0], 64)
	require.Len(t, tb.chunks[1], 1024)
	for _, c := range []struct {
		id    int32
		chunk int
		index int
	}{{0, 0, 0}, {63, 0, 63}, {64, 1, 0}, {1087, 1, 1023}, {1088, 2, 0}} {
		require.Equal(t, c.chunk, chunkOf(c.id), "job %d", c.id)
		require.Same(t, &tb.chunks[c.chunk][c.index], tb.at(c.id), "job %d", c.id)
		require.Equal(t, c.id, tb.at(c.id).info.ID)
	}
	require.Equal(t, int32(1088), chunkEnd(1))
	// A new job starts with nothing: no start, end, pool or admission.
	j := tb.at(5)
	require.Equal(t, [2]Time{-1, -1}, [2]Time{j.start, j.end})
	require.Equal(t, [2]int32{-1, -1}, [2]int32{j.pool, j.usePool})
	require.Equal(t, Time(-1), j.admitAt)
	require.Same(t, &j.spec, j.info.Spec)
}

func TestJobTablePlainRunDropsRecordedChunks(t *testing.T) {
	tb := table(t, 64+1024+1, true)
	tb.recs.n = tb.njobs
	// Every job of the first chunk but one recorded: the chunk stays.
	for id := range int32(63) {
		tb.at(id).outcome = Completed
		tb.retire(tb.at(id), false)
	}
	require.False(t, tb.gone(0))
	require.True(t, tb.at(0).recorded)
	tb.retire(tb.at(63), false)
	require.True(t, tb.gone(0))
	require.True(t, tb.gone(63))
	require.False(t, tb.gone(64))
	// The first chunk (64 jobs) is too small to reuse: discarded.
	require.Equal(t, 1, tb.dropped)
	require.Equal(t, 1, tb.discarded)
	require.Empty(t, tb.spare)
	// The second, whole, is kept and given to the next chunk when the
	// queue holds no finished job.
	for id := int32(64); id < 1088; id++ {
		tb.retire(tb.at(id), false)
	}
	require.Equal(t, 2, tb.dropped)
	require.Len(t, tb.spare, 1)
	kept := &tb.spare[0][0]
	for range 1023 {
		tb.add(holder(false))
	}
	j := tb.add(holder(false))
	require.Equal(t, int32(2112), j.info.ID) // 64 + 2*1024: the fourth chunk's first
	require.Equal(t, 3, chunkOf(j.info.ID))
	require.Same(t, kept, j, "the dropped chunk is reused")
	require.False(t, j.recorded, "a reused chunk is zeroed")
	// Records are numbered as the jobs.
	require.Equal(t, int32(63), tb.recs.slot(63).ID)
	require.Equal(t, Completed, tb.recs.slot(63).Outcome)
}

func TestJobTableKeepsChunksWhileTheQueueHoldsFinishedJobs(t *testing.T) {
	tb := table(t, 64+1024, true)
	tb.recs.n = tb.njobs
	for id := range int32(64 + 1024) {
		tb.retire(tb.at(id), false)
	}
	require.Len(t, tb.spare, 1)
	j := tb.add(holder(true)) // 1088: a new chunk
	require.Len(t, tb.spare, 1, "not reused while the queue may point into it")
	require.NotSame(t, &tb.spare[0][0], j)
}

func TestJobTableNotPlainKeepsEveryJob(t *testing.T) {
	tb := table(t, 100, false)
	for id := range int32(100) {
		tb.retire(tb.at(id), false)
	}
	require.False(t, tb.gone(0))
	require.False(t, tb.at(0).recorded)
	require.Zero(t, tb.dropped)
}

func TestJobTableReusesPlacementSlices(t *testing.T) {
	tb := table(t, 2, false)
	a := tb.at(0)
	a.spec.Replicas = 3
	a.placed = tb.placements(3)
	require.Equal(t, 0, len(a.placed))
	require.Equal(t, 3, cap(a.placed))
	a.placed = append(a.placed, cluster.Placement{Node: 1}, cluster.Placement{Node: 2})
	first := &a.placed[0]
	tb.unplace(a)
	require.Nil(t, a.placed)
	b := tb.placements(3)
	require.Equal(t, 0, len(b))
	require.Same(t, first, &b[:1][0], "the released slice is given again")
	// Another size is a new slice.
	require.Equal(t, 4, cap(tb.placements(4)))
}

func TestWorkloadFeedReadsInSubmitOrderUpToTheHorizon(t *testing.T) {
	src := &SliceSource{Jobs: []cluster.JobSpec{job("a", 0, 10, 1, 1), job("b", 5, 10, 1, 1), job("c", 20, 10, 1, 1)}}
	var f workloadFeed
	require.NoError(t, f.read(src, 20, 0))
	require.True(t, f.hasNext)
	require.Equal(t, "a", f.next.Name)
	require.NoError(t, f.read(src, 20, 1))
	require.Equal(t, "b", f.next.Name)
	require.Equal(t, Time(5), f.lastSub)
	// c is submitted at the horizon: the feed ends there, truncated.
	require.NoError(t, f.read(src, 20, 2))
	require.False(t, f.hasNext)
	require.True(t, f.truncated)
}

func TestWorkloadFeedRefusesAJobOutOfOrder(t *testing.T) {
	src := &SliceSource{Jobs: []cluster.JobSpec{job("a", 50, 10, 1, 1), job("b", 40, 10, 1, 1)}}
	var f workloadFeed
	require.NoError(t, f.read(src, 0, 0))
	err := f.read(src, 0, 1)
	var we *WorkloadError
	require.ErrorAs(t, err, &we)
	require.Equal(t, 1, we.Job)
	require.Equal(t, "b", we.Name)
	require.ErrorContains(t, err, "submitted at 40 ms, before the previous job (50 ms)")
}
