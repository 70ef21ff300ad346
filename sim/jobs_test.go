package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// holder is a queueHolder: it holds the jobs of the ids set.
type holder map[int32]bool

func (h holder) Holds(j *scheduler.JobInfo) bool { return h[j.ID] }

// table is a job table builder: n jobs added, the table plain or not.
func table(t *testing.T, n int, plain bool) *jobTable {
	t.Helper()
	tb := &jobTable{plain: plain}
	for i := range n {
		j := tb.add(holder(nil))
		require.Equal(t, int32(i), j.info.ID)
		j.spec = job("j", 0, 1, 1, 1)
	}
	return tb
}

func TestJobTableNumbersJobsAcrossChunks(t *testing.T) {
	// Nothing freed: job i in slot i, 64 slots in the first chunk, 1024
	// in each next: job 63 is the first chunk's last, 64 the second's
	// first, 1087 its last, 1088 the third's first.
	tb := table(t, 64+1024+1, false)
	require.Len(t, tb.chunks, 3)
	require.Len(t, tb.chunks[0], 64)
	require.Len(t, tb.chunks[1], 1024)
	for _, c := range []struct {
		id    int32
		chunk int
		index int
	}{{0, 0, 0}, {63, 0, 63}, {64, 1, 0}, {1087, 1, 1023}, {1088, 2, 0}} {
		require.Same(t, &tb.chunks[c.chunk][c.index], tb.at(c.id), "job %d", c.id)
		require.Equal(t, c.id, tb.at(c.id).info.ID)
	}
	// A new job starts with nothing: no start, end, pool or admission.
	j := tb.at(5)
	require.Equal(t, [2]Time{-1, -1}, [2]Time{j.start, j.end})
	require.Equal(t, [2]int32{-1, -1}, [2]int32{j.pool, j.usePool})
	require.Equal(t, Time(-1), j.admitAt)
	require.Same(t, &j.spec, j.info.Spec)
}

func TestJobTablePlainRunReusesRecordedJobsSlots(t *testing.T) {
	// 1,100 jobs: ids 0-1023 in the first id chunk, 1024-1099 in the
	// second; 1,100 slots.
	tb := table(t, 1100, true)
	tb.recs.n = tb.njobs
	// Every job of the first id chunk but one recorded: gone, the chunk
	// kept for the one.
	for id := range int32(1023) {
		tb.at(id).outcome = Completed
		tb.retire(tb.at(id), false)
	}
	require.True(t, tb.gone(0))
	require.False(t, tb.gone(1023))
	require.NotNil(t, tb.ids[0])
	tb.retire(tb.at(1023), false)
	require.True(t, tb.gone(1023))
	require.Nil(t, tb.ids[0], "every job of the id chunk gone: dropped")
	require.False(t, tb.gone(1024))
	// Job 1100 takes the slot of the last job retired, 1023 (slot 1023),
	// reset; no new slot is made.
	kept := &tb.chunks[1][1023-64]
	j := tb.add(holder(nil))
	require.Equal(t, int32(1100), j.info.ID)
	require.Same(t, kept, j, "a recorded job's slot is reused")
	require.Same(t, j, tb.at(1100))
	require.False(t, j.recorded, "a reused slot is reset")
	require.Equal(t, Time(-1), j.start)
	require.Same(t, &j.spec, j.info.Spec)
	require.Equal(t, int32(1100), tb.nslots)
	require.Equal(t, 1, tb.reused)
	// Records are numbered as the jobs.
	require.Equal(t, int32(63), tb.recs.slot(63).ID)
	require.Equal(t, Completed, tb.recs.slot(63).Outcome)
}

func TestJobTableKeepsSlotsTheQueueHolds(t *testing.T) {
	tb := table(t, 300, true)
	tb.recs.n = tb.njobs
	for id := range int32(300) {
		tb.retire(tb.at(id), false)
	}
	// The queue holds every recorded job but 17: job 300 takes 17's slot;
	// job 301 a new one, though 299 jobs are recorded.
	held := holder{}
	for id := range int32(300) {
		held[id] = id != 17
	}
	require.Same(t, &tb.chunks[0][17], tb.add(held))
	require.Equal(t, int32(300), tb.nslots)
	tb.add(held)
	require.Equal(t, int32(301), tb.nslots)
}

func TestJobTableNotPlainKeepsEveryJob(t *testing.T) {
	tb := table(t, 100, false)
	for id := range int32(100) {
		tb.retire(tb.at(id), false)
	}
	require.False(t, tb.gone(0))
	require.False(t, tb.at(0).recorded)
	tb.add(holder(nil))
	require.Zero(t, tb.reused)
	require.Equal(t, int32(101), tb.nslots)
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
