package models

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The preset's means by hand: lifetimes 0.629 x 0.4354 + 0.371 x 5.093 =
// 2.1634 h (the traces' 431.17 node-hours over 202 preemptions is 2.135 h),
// outages 0.855 x 0.513 + 0.145 x 6.651 = 1.4030 h (275.41 h over 200:
// 1.377 h). A GPU model other than V100 is told it borrows V100's.
func TestMeasuredSpotPreset(t *testing.T) {
	p, why := MeasuredSpotPreset("V100")
	require.InDelta(t, 2.1634, p.Lifetime.Mean(), 1e-4)
	require.InDelta(t, 1.4030, p.Outage.Mean(), 1e-4)
	require.Equal(t, 0.30, p.Wave)
	require.NotContains(t, why, "no public preemption trace")
	_, why = MeasuredSpotPreset("H100")
	require.Contains(t, why, "no public preemption trace of H100")
	require.Contains(t, why, "spot-traces")
}

// An empirical distribution draws its values uniformly: of {1, 2, 2, 5},
// 2 half the time; CDF 0.75 at 2 and 4.
func TestEmpirical(t *testing.T) {
	e, err := NewEmpirical([]float64{5, 2, 1, 2})
	require.NoError(t, err)
	require.Equal(t, 2.5, e.Mean())
	require.Equal(t, 0.0, e.CDF(0.5))
	require.Equal(t, 0.75, e.CDF(2))
	require.Equal(t, 0.75, e.CDF(4))
	require.Equal(t, 1.0, e.CDF(5))
	r := rand.New(rand.NewPCG(1, 2))
	twos := 0
	for i := 0; i < 10000; i++ {
		if e.Sample(r) == 2 {
			twos++
		}
	}
	require.InDelta(t, 5000, twos, 200) // sd 50
	_, err = NewEmpirical(nil)
	require.Error(t, err)
	_, err = NewEmpirical([]float64{1, 0})
	require.ErrorContains(t, err, "positive and finite")
}
