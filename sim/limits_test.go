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
