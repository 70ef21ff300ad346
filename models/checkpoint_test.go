package models

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The golden values: Young sqrt(2 delta M) and Daly's eq. 37,
// worked by hand to one decimal of a minute.
func TestYoungAndDalyGolden(t *testing.T) {
	for _, c := range []struct{ delta, mtbf, young, daly float64 }{
		{5, 240, 49.0, 45.7},
		{5, 60, 24.5, 21.3},
		{15, 120, 60.0, 50.4},
	} {
		require.InDelta(t, c.young, YoungInterval(c.delta, c.mtbf), 0.05, "%+v", c)
		require.InDelta(t, c.daly, DalyInterval(c.delta, c.mtbf), 0.05, "%+v", c)
	}
	// Past delta = 2M Daly's optimum is M itself.
	require.Equal(t, 10.0, DalyInterval(25, 10))
}

// Daly's eq. 37 approximates the minimiser of his expected-time model: a
// numeric search over that model lands within 1% of it.
func TestDalyIntervalMinimisesExpectedTime(t *testing.T) {
	for _, c := range []struct{ delta, mtbf float64 }{{5, 240}, {5, 60}, {15, 120}} {
		best, bestT := 0.0, math.Inf(1)
		for tau := 1.0; tau < 4*c.mtbf; tau += 0.01 {
			if v := DalyExpectedTime(1440, tau, c.delta, 10, c.mtbf); v < bestT {
				best, bestT = tau, v
			}
		}
		require.InEpsilon(t, DalyInterval(c.delta, c.mtbf), best, 0.01, "%+v", c)
	}
	// With no interruptions to speak of, the time is the work plus the
	// checkpoints: 1440 min in 60-min segments with 1-min writes.
	require.InEpsilon(t, 1440.0*61/60, DalyExpectedTime(1440, 60, 1, 0, 1e12), 1e-6)
}

func TestSpotBandRate(t *testing.T) {
	rate, why, err := SpotBandRate("<5%")
	require.NoError(t, err)
	// -ln(0.95)/720 = 7.1241e-5 per hour: an MTBF of 14,037 h.
	require.InEpsilon(t, 7.1241e-5, rate, 1e-4)
	require.Contains(t, why, "MTBF 14037 h")
	r4, _, err := SpotBandRate("4")
	require.NoError(t, err)
	require.InEpsilon(t, -math.Log(0.75)/720, r4, 1e-12)
	_, _, err = SpotBandRate("30%")
	require.ErrorContains(t, err, "not one of")
}

// OpenCost's normalisation: base rates set the ratio, the parts add up to
// the node price. p4d.24xlarge at 21.957642/h: base 8 x 0.95 + 96 x
// 0.031611 + 1152 x 0.004237 = 7.6 + 3.034656 + 4.881024 = 15.51568, so
// each base rate is scaled by 21.957642 / 15.51568 = 1.4151904.
func TestBaseRatesSplit(t *testing.T) {
	s := DefaultBaseRates().Split(21.957642, 8, 96, 1152)
	require.InEpsilon(t, 0.95*1.4151904, s.PerGPU, 1e-6)
	require.InEpsilon(t, 0.031611*1.4151904, s.PerVCPU, 1e-6)
	require.InEpsilon(t, 21.957642, 8*s.PerGPU+96*s.PerVCPU+1152*s.PerGiB, 1e-12)
	require.Equal(t, NodePriceSplit{}, DefaultBaseRates().Split(1, 0, 0, 0))
}

func TestParabolaVertex(t *testing.T) {
	// y = 3 (x - 2)^2 + 1, sampled exactly: the vertex is 2.
	var x, y []float64
	for v := -1.0; v <= 5; v++ {
		x, y = append(x, v), append(y, 3*(v-2)*(v-2)+1)
	}
	v, ok := ParabolaVertex(x, y)
	require.True(t, ok)
	require.InDelta(t, 2, v, 1e-9)
	_, ok = ParabolaVertex([]float64{0, 1, 2}, []float64{0, 1, 0})
	require.False(t, ok, "opens downwards: no minimum")
}
