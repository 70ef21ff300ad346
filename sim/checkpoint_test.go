package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
)

// Under exponential failures the simulated optimum interval lands within
// 10% of Daly's (eq. 37): checkpoint cost 5 min, MTBF 4 h, a 24 h job,
// 5 min to replace a node. Daly's optimum is 45.7 min; the grid (20 to
// 120 min) does not contain it, so the fit has to find it. The simulated
// mean completion times also follow his expected-time model within 1%.
func TestSimulatedCheckpointOptimumMatchesDaly(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 11 x 600 jobs")
	}
	daly := models.DalyInterval(5, 240) * float64(Minute)
	grid := CheckpointGrid(20*Minute, 120*Minute, 11)
	pts, err := StudyCheckpoints(CheckpointStudy{Work: 24 * Hour, MTBF: 4 * Hour, CheckpointCost: 5 * Minute,
		Restart: 5 * Minute, Intervals: grid, Jobs: 600, Seed: 1})
	require.NoError(t, err)
	for _, p := range pts {
		require.InEpsilon(t, p.Daly, p.MeanCompletion, 0.01, "interval %d min", p.Interval/Minute)
	}
	gridBest, fitted := CheckpointOptimum(pts)
	t.Logf("Daly %.1f min; simulated best %.1f min (grid), %.1f min (fit)", daly/float64(Minute), float64(gridBest)/float64(Minute), float64(fitted)/float64(Minute))
	require.InEpsilon(t, daly, float64(fitted), 0.10)
	require.Contains(t, []Time{grid[4], grid[5]}, gridBest, "the best grid point is one of the two around 45.7 min")
}

func TestCheckpointGrid(t *testing.T) {
	g := CheckpointGrid(10*Minute, 40*Minute, 3)
	require.Equal(t, []Time{10 * Minute, 20 * Minute, 40 * Minute}, g)
}
