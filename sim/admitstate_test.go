package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/engine"
)

// The admission adapter alone: team-b (2 GPUs nominal, no cohort) gets a
// one-pod two-GPU job at 0, admitted by the first cycle; a second one at
// 10 s waits for the quota. The first finishes at 60 s: its quota goes
// back, and the second is admitted by the next cycle. team-b used 2 GPUs
// for 60 s by then: 120,000 GPU x ms.
func TestAdmissionAdapterChargesAndReleasesQuota(t *testing.T) {
	a, err := newAdmState(twoTeams("", admission.BestEffortFIFO, admission.Never))
	require.NoError(t, err)
	tb := table(t, 2, false)
	j1, j2 := tb.at(0), tb.at(1)
	j1.spec = queued(job("b1", 0, Minute, 1, 2), "team-b")
	j2.spec = queued(job("b2", 10*Second, Minute, 1, 2), "team-b")
	ev := &sink{q: engine.New[event](0)}

	require.NoError(t, a.submit(0, j1))
	require.True(t, j1.awaiting)
	require.True(t, a.dirty)
	ds := a.ctl.Cycle()
	require.Len(t, ds, 1)
	require.Equal(t, int32(0), ds[0].ID)
	require.False(t, ds[0].Waiting || ds[0].Preempted)

	require.NoError(t, a.submit(10*Second, j2))
	ds = a.ctl.Cycle()
	require.Len(t, ds, 1)
	require.True(t, ds[0].Waiting, "team-b's 2 GPUs are taken")

	a.dirty = false
	a.finish(Minute, j1, ev)
	require.True(t, a.dirty)
	ds = a.ctl.Cycle()
	require.Len(t, ds, 1)
	require.Equal(t, int32(1), ds[0].ID)
	require.False(t, ds[0].Waiting)

	res := a.result(Minute)
	require.Equal(t, "team-b", res.Queues[1].Name)
	require.Equal(t, int64(2), res.Queues[1].NominalGPUs)
	require.Equal(t, float64(2*Minute), res.Queues[1].UsedGPUMs)
	require.Zero(t, res.Queues[0].UsedGPUMs)
	require.Zero(t, ev.q.Len(), "no waitForPodsReady: nothing scheduled")
}

// A run without admission has no adapter: finishing a job there is a
// no-op.
func TestNoAdmissionFinishIsANoOp(t *testing.T) {
	var a *admState
	a.finish(0, &jobState{}, &sink{q: engine.New[event](0)})
}
