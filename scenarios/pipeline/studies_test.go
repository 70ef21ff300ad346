package pipeline

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

func TestCheckpointStudyChecksEveryRun(t *testing.T) {
	// The engine calls the check on each run: 3 intervals x 2 jobs.
	calls := 0
	_, err := sim.StudyCheckpoints(sim.CheckpointStudy{Work: 4 * sim.Hour, MTBF: 10 * sim.Hour, CheckpointCost: sim.Minute,
		Restart: 5 * sim.Minute, Intervals: []sim.Time{10 * sim.Minute, 30 * sim.Minute, sim.Hour}, Jobs: 2, Seed: 1,
		Check: func(*sim.Result) error { calls++; return nil }})
	require.NoError(t, err)
	require.Equal(t, 6, calls)
	// A broken invariant stops the study and is exit 4.
	_, err = sim.StudyCheckpoints(sim.CheckpointStudy{Work: 4 * sim.Hour, MTBF: 10 * sim.Hour, Intervals: []sim.Time{sim.Hour}, Jobs: 2, Seed: 1,
		Check: func(*sim.Result) error { return &sim.InvariantError{Err: errors.New("books do not balance")} }})
	var ie *sim.InvariantError
	require.ErrorAs(t, err, &ie)

	// Through the pipeline (invariants checked): 5 intervals from a
	// quarter to four times 60 minutes, in log: 15, 30, 60, 120, 240.
	st, err := StudyCheckpoints(CheckpointStudy{Work: 4 * time.Hour, MTBF: 10 * time.Hour, CheckpointCost: time.Minute,
		Restart: 5 * time.Minute, AroundMinutes: 60, Points: 5, Jobs: 3, Seed: 1})
	require.NoError(t, err)
	require.Len(t, st.Points, 5)
	for i, want := range []float64{15, 30, 60, 120, 240} {
		require.InDelta(t, want, st.Points[i].IntervalMinutes, 1e-9)
		// A 4-hour job never finishes in under 4 hours.
		require.GreaterOrEqual(t, st.Points[i].MeanCompletionHours, 4.0)
	}
}
