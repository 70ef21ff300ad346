package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/engine"
)

// sink is an eventSink over a queue of its own.
type sink struct {
	q    *engine.Queue[event]
	live int
}

func (s *sink) push(at Time, ev event) engine.Handle { s.live++; return s.q.Push(at, ev) }
func (s *sink) cancel(h engine.Handle) bool {
	if s.q.Cancel(h) {
		s.live--
		return true
	}
	return false
}

// finishes pops every event left: the finish time of each job.
func (s *sink) finishes() map[int32]Time {
	out := map[int32]Time{}
	for s.q.Len() > 0 {
		at, ev, _ := s.q.Pop()
		if ev.kind == evFinish {
			out[ev.job] = at
		}
	}
	return out
}

// slicedRun is a GPU-sharing builder: one node with one T4 advertised 4
// times (slice overhead over), and a job table of the given jobs, none
// placed.
func slicedRun(t *testing.T, overhead float64, jobs ...cluster.JobSpec) (*gpuSharing, *jobTable, *sink) {
	t.Helper()
	p := pool("ts", 1, 1)
	p.GPUModel = "T4"
	p.Sharing.TimeSlicing = 4
	p.Sharing.SliceOverhead = overhead
	c, err := cluster.New([]cluster.PoolSpec{p})
	require.NoError(t, err)
	tb := &jobTable{}
	for _, s := range jobs {
		tb.add(holder(nil)).spec = s
	}
	return &gpuSharing{c: c, jobs: tb, onGPU: make([][]int32, c.GPUs().PhysGPUs())}, tb, &sink{q: engine.New[event](0)}
}

// place binds job j's one pod at t and starts it on its shared GPU.
func place(t *testing.T, g *gpuSharing, j *jobState, at Time, ev eventSink) {
	t.Helper()
	pl, err := g.c.Allocate(at, 0, &j.spec.Pod, -1)
	require.NoError(t, err)
	j.placed = []cluster.Placement{pl}
	j.sliced, j.running = true, true
	g.start(at, j, slicedGPUs(g.c, j), ev)
}

// The by-hand case of TestTimeSlicingSlowdownAndOOM, on the subsystem
// alone: A (10 min) alone from 0; B (4 min) joins at 2 min and both run
// at half speed: A has 8 min left (16 at half speed), B ends at
// 2 + 8 = 10 min; then A, alone, has 8 - 4 = 4 min left: it ends at 14.
func TestGPUSharingRetimesTheSharers(t *testing.T) {
	g, tb, ev := slicedRun(t, 0, job("A", 0, 10*Minute, 1, 1), job("B", 0, 4*Minute, 1, 1))
	a, b := tb.at(0), tb.at(1)
	place(t, g, a, 0, ev)
	require.Equal(t, [][]int32{{0}}, g.onGPU)
	place(t, g, b, 2*Minute, ev)
	require.Equal(t, [][]int32{{0, 1}}, g.onGPU)
	require.Equal(t, 0.5, a.x.slice.rate)
	require.Equal(t, float64(8*Minute), a.x.slice.work)
	require.True(t, a.slowed)
	require.Equal(t, 2, ev.live, "A's first finish was cancelled")
	// B finishes at 10 min: it stops and A is re-timed alone.
	require.NoError(t, g.c.Release(10*Minute, b.placed[0], &b.spec.Pod))
	g.stop(10*Minute, b, slicedGPUs(g.c, b), ev)
	require.Equal(t, [][]int32{{0}}, g.onGPU)
	require.Equal(t, 1.0, a.x.slice.rate)
	require.Equal(t, float64(4*Minute), a.x.slice.work)
	// B's finish at 10 is still queued (the run pops it; here nothing
	// does) and A's is at 14.
	require.Equal(t, map[int32]Time{0: 14 * Minute, 1: 10 * Minute}, ev.finishes())
}

// With a 10% context-switch overhead two sharers run at 0.45 each: A's
// 10 min need 10/0.45 = 22.2 min, rounded up to the millisecond.
func TestGPUSharingOverheadAndDeadline(t *testing.T) {
	g, tb, ev := slicedRun(t, 0.1, job("A", 0, 10*Minute, 1, 1), job("B", 0, 10*Minute, 1, 1))
	a, b := tb.at(0), tb.at(1)
	b.dl.at = 15 * Minute // B's deadline comes first
	place(t, g, a, 0, ev)
	place(t, g, b, 0, ev)
	require.Equal(t, 0.45, a.x.slice.rate)
	require.Equal(t, map[int32]Time{0: 1_333_334, 1: 15 * Minute}, ev.finishes())
}
