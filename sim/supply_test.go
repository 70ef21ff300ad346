package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// supplyRun is a run over one pool of two 8-GPU nodes with no job yet,
// and the capacity controller's view of it.
func supplyRun(t *testing.T) (*runner, capacityHost) {
	t.Helper()
	r, err := newRunner(Config{Pools: []cluster.PoolSpec{pool("p", 2, 8)}, Workload: &SliceSource{}})
	require.NoError(t, err)
	return r, capacityHost{r}
}

// The controller's events go on the run's clock: a scale-up (live: the
// run waits for it) counts as pending progress, an interruption far ahead
// does not, and both pop at their time as capacity events.
func TestCapacityHostSchedulesOnTheRunsClock(t *testing.T) {
	r, h := supplyRun(t)
	h.Schedule(7*Minute, capacity.Event{Kind: capacity.EvScaleUp})
	h.Schedule(3*Minute, capacity.Event{Kind: capacity.EvNotice, Index: 1, Stamp: 4})
	require.Equal(t, 1, r.st.live, "only the scale-up keeps the run going")
	at, ev, ok := r.q.Pop()
	require.True(t, ok)
	require.Equal(t, 3*Minute, at)
	require.Equal(t, event{kind: evCapacity, sub: uint8(capacity.EvNotice), job: 1, stamp: 4}, ev)
	at, ev, _ = r.q.Pop()
	require.Equal(t, 7*Minute, at)
	require.Equal(t, uint8(capacity.EvScaleUp), ev.sub)
}

// A node becoming Ready asks for a scheduling pass that may place what
// could not be placed before; a node without jobs is movable and its
// eviction stops nothing.
func TestCapacityHostEmptyNode(t *testing.T) {
	r, h := supplyRun(t)
	r.disr.onNode = make([][]int32, len(r.c.Nodes))
	require.False(t, r.st.dirty || r.st.freed)
	h.CapacityChanged()
	require.True(t, r.st.dirty && r.st.freed)
	require.True(t, h.Movable(0, 1))
	require.NoError(t, h.Evict(0, 1, capacity.CauseSpot))
	waiting := 0
	h.Waiting(func(*scheduler.JobInfo) bool { waiting++; return true })
	require.Zero(t, waiting, "no job has arrived")
}
