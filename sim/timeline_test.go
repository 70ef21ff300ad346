package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// newTimeline is a timeline builder over cluster c's pools.
func newTimeline(c *cluster.Cluster) *timeline {
	n := len(c.Pools)
	return &timeline{
		tl:      Timeline{Allocated: make([][]int64, n), Supplied: make([][]int64, n)},
		tlAlloc: make([]int64, n), tlSup: make([]int64, n),
	}
}

func TestTimelineIntegratesWorkloadJobsNotReplicas(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{pool("p", 1, 8)})
	require.NoError(t, err)
	l := newTimeline(c)
	a, b, rep := &jobState{}, &jobState{}, &jobState{svc: 1}
	// a pending 0..30 then running 30..100; b pending 10..50 (expires);
	// a replica pod pending from 5 and running from 20 counts for nothing.
	l.addPending(0, a, 1)
	l.addPending(5, rep, 1)
	l.addPending(10, b, 1)
	l.addRunning(20, rep, 1)
	l.started(30) // a
	// The first bucket ends at 40: pending a 30 + b 30 = 60 job-ms,
	// running a 10.
	l.integrate(40)
	c.Advance(40)
	l.close(c)
	l.addPending(50, b, -1)
	l.addRunning(100, a, -1)
	// The second ends at 100: pending b 10, running a 60.
	l.integrate(100)
	c.Advance(100)
	l.close(c)
	require.Equal(t, []int64{60, 10}, l.tl.PendingJobMs)
	require.Equal(t, []int64{10, 60}, l.tl.RunningJobMs)
	require.Equal(t, int64(70), l.pendInt)
	require.Equal(t, int64(70), l.runInt)
	require.Zero(t, l.pending)
	require.Zero(t, l.running)
	// Nothing allocated; 8 GPUs supplied: 8000 milli-GPU x 40 ms, then x 60.
	require.Equal(t, []int64{0, 0}, l.tl.Allocated[0])
	require.Equal(t, []int64{320_000, 480_000}, l.tl.Supplied[0])
}

func TestTimelineIntegrateNeverGoesBack(t *testing.T) {
	l := &timeline{}
	l.addPending(100, &jobState{}, 1)
	// An earlier time (a count changed at an instant already integrated)
	// adds nothing.
	l.integrate(50)
	require.Equal(t, Time(100), l.qLast)
	require.Zero(t, l.pendInt)
	l.integrate(130)
	require.Equal(t, int64(30), l.pendInt)
}
