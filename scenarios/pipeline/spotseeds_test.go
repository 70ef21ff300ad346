package pipeline

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// One spot node over a 10h horizon, relaunched at once (no notice, no
// provisioning): with exponential lifetimes its interruptions are a
// Poisson process of rate 1/MTBF, so at MTBF m the count has mean and
// variance 10h/m: 10 at 1h, 2 at 5h, 0.5 at 20h. Over n seeds the mean
// has standard error sqrt(10h/m / n): 0.5, 0.224 and 0.112 with n = 40;
// each mean is within 3.5 of those of 10h/m. The interval's half-width
// is t(0.975, n-1) x sd / sqrt(n), sd about sqrt(10h/m): at 1h, 2.023 x
// 3.162 / 6.325 = 1.01 with 40 seeds and 2.262 x 3.162 / 3.162 = 2.26
// with 10 (a ratio of 2.24), so it narrows as the seeds grow. Before the
// seeds, one path showed the same count at every MTBF its first lifetime
// fell under (one interruption from 33h to 2,170h).
func TestSpotSensitivityMeanOverSeeds(t *testing.T) {
	sc := load(t, "testdata/spot-sensitivity/poisson.yaml")
	grid := []time.Duration{time.Hour, 5 * time.Hour, 20 * time.Hour}
	want := []float64{10, 2, 0.5}
	curve, err := SpotSensitivity("poisson", sc, Options{SpotSeeds: 40}, grid, nil)
	require.NoError(t, err)
	require.Equal(t, 40, curve.Seeds)
	for i, p := range curve.Points {
		require.Empty(t, p.Failed)
		require.Equal(t, 40, p.Seeds)
		se := math.Sqrt(want[i] / 40)
		require.InDelta(t, want[i], p.Interruptions, 3.5*se, "MTBF %s", grid[i])
		t.Logf("MTBF %s: %.2f ± %.2f interruptions (want %.1f, se %.3f)", grid[i], p.Interruptions, p.InterruptionsHW95, want[i], se)
	}
	require.InEpsilon(t, 1.01, curve.Points[0].InterruptionsHW95, 0.3, "40 seeds at 1h")
	// Fewer interruptions at each longer MTBF: the means, unlike one path,
	// follow the rate.
	require.Greater(t, curve.Points[0].Interruptions, curve.Points[1].Interruptions)
	require.Greater(t, curve.Points[1].Interruptions, curve.Points[2].Interruptions)

	ten, err := SpotSensitivity("poisson", sc, Options{SpotSeeds: 10}, grid[:1], nil)
	require.NoError(t, err)
	require.InEpsilon(t, 2.26, ten.Points[0].InterruptionsHW95, 0.4, "10 seeds at 1h")
	require.Greater(t, ten.Points[0].InterruptionsHW95, curve.Points[0].InterruptionsHW95, "the interval narrows as the seeds grow")

	// The same curve on 1 and 2 workers.
	for _, w := range []int{1, 2} {
		again, err := SpotSensitivity("poisson", sc, Options{SpotSeeds: 40, Workers: w}, grid, nil)
		require.NoError(t, err)
		require.Equal(t, curve, again, "%d workers", w)
	}
}
