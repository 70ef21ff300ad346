package sim

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// A timeline interval of 1 ms over 30 days would be 2.6 billion buckets
// (15.6 GB when a user tried it): refused before anything is allocated,
// saying what interval would fit.
func TestTimelineTooFineIsRefusedBeforeAllocating(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cfg := Config{Pools: []cluster.PoolSpec{pool("p", 1, 8)}, Horizon: 30 * 24 * Hour, TimelineInterval: 1,
		Workload: &SliceSource{Jobs: []cluster.JobSpec{job("a", 0, Hour, 1, 1)}}}
	_, err := Run(cfg)
	runtime.ReadMemStats(&after)
	var te *TimelineError
	require.True(t, errors.As(err, &te), "%v", err)
	// One pool: 8 Mi cells / (2x1+2) = 2,097,152 buckets.
	require.EqualError(t, err, "output.timelineInterval 1ms makes more than 2097152 timeline buckets by 720h0m0s of simulated time; use an interval of at least 1.236s")
	require.Equal(t, 2, te.ExitCode())
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))

	// Without a horizon the run stops when it reaches the bound.
	cfg.Horizon = 0
	cfg.Workload = &SliceSource{Jobs: []cluster.JobSpec{job("a", 0, 3*Hour, 1, 1)}}
	_, err = Run(cfg)
	require.True(t, errors.As(err, &te), "%v", err)
	require.Equal(t, Time(2097152+1), te.Reached, "buckets closed at 1..2097152 ms, the next tick refuses")
}

// A broken invariant from the engine is exit status 4, wherever it
// surfaces (inflate and the checkpoint study call the engine directly).
func TestEngineInvariantExitCode(t *testing.T) {
	err := invariant(errors.New("boom"))
	var ec interface{ ExitCode() int }
	require.True(t, errors.As(err, &ec))
	require.Equal(t, 4, ec.ExitCode())
}

// MaxEvents stops a run that makes more events than its budget allows
// (plus EventsPerJob for each job submitted): a 1 ms timeline without a
// horizon makes one tick a millisecond, so a budget of 1,000 and one job
// (1,008 events) is passed about a second into the run, with exit status 2.
func TestMaxEventsStopsARunPastItsBudget(t *testing.T) {
	cfg := Config{Pools: []cluster.PoolSpec{pool("p", 1, 8)}, TimelineInterval: 1, MaxEvents: 1000,
		Workload: &SliceSource{Jobs: []cluster.JobSpec{job("a", 0, Hour, 1, 1)}}}
	_, err := Run(cfg)
	var be *BudgetError
	require.True(t, errors.As(err, &be), "%v", err)
	require.Equal(t, 2, be.ExitCode())
	require.Equal(t, uint64(1009), be.Events, "the first event past 1,000 + 8")
	require.EqualValues(t, 1, be.Jobs)
	require.InDelta(t, 1008, float64(be.Reached), 2, "one tick a ms, the job's arrival at 0")
	require.Contains(t, err.Error(), "the run made 1009 events by ")

	// The same run with a budget that holds it finishes.
	cfg.MaxEvents = 1 << 30
	cfg.TimelineInterval = Minute
	cfg.Workload = &SliceSource{Jobs: []cluster.JobSpec{job("a", 0, Hour, 1, 1)}}
	res, err := Run(cfg)
	require.NoError(t, err)
	require.Less(t, res.Stats.Events, uint64(100))
}
