package sim

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// countingSource serves n jobs a second apart, then fails with err (nil:
// ends), and counts the calls to Next.
type countingSource struct {
	n, calls int
	err      error
}

func (s *countingSource) Next(j *cluster.JobSpec) (bool, error) {
	s.calls++
	if s.calls > s.n {
		return false, s.err
	}
	*j = job(fmt.Sprintf("j%d", s.calls), Time(s.calls)*Second, Minute, 1, 1)
	return true, nil
}

// Prefetching gives the run the same jobs, and the source the same calls,
// as reading it directly: to the end, to an error, or to the first job
// past the horizon.
func TestPrefetchReadsWhatTheRunWouldRead(t *testing.T) {
	broken := errors.New("row 700: broken")
	for _, c := range []struct {
		n       int
		err     error
		horizon Time
	}{
		{1000, nil, 0},            // four batches of 256, the last short
		{1024, nil, 0},            // batches exactly full
		{700, broken, 0},          // an error in the third batch
		{1000, nil, 300 * Second}, // the job at 300 s is the run's last read
		{0, nil, 0},
	} {
		direct := &countingSource{n: c.n, err: c.err}
		cfg := Config{Pools: []cluster.PoolSpec{pool("p", 4, 8)}, Horizon: c.horizon, Workload: direct}
		want, wantErr := Run(cfg)
		src := &countingSource{n: c.n, err: c.err}
		pf := Prefetch(src, c.horizon)
		cfg.Workload = pf
		got, err := Run(cfg)
		pf.Stop()
		require.Equal(t, wantErr, err, "%+v", c)
		require.Equal(t, direct.calls, src.calls, "%+v: calls to Next", c)
		if wantErr == nil {
			require.Equal(t, want.Jobs, got.Jobs, "%+v", c)
		}
	}
	// Stopped before the run has read everything, the reader lets go.
	src := &countingSource{n: 100000}
	pf := Prefetch(src, 0)
	var j cluster.JobSpec
	ok, err := pf.Next(&j)
	require.True(t, ok)
	require.NoError(t, err)
	require.Equal(t, "j1", j.Name)
	pf.Stop()
	pf.Stop()
	require.Less(t, src.calls, 100000)
}
