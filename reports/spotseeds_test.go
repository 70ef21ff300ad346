package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A point over three replays that cost $9, $8 and $7 a useful GPU-hour
// against $10 all on-demand saves 10%, 20% and 30%: a mean of 20%, a
// standard deviation of 10 points, and a 95% half-width of t(0.975, 2) x
// 10 / sqrt(3) = 4.3027 x 5.7735 = 24.84 points. Its interruptions, 3, 5
// and 7, are 5 ± 4.97 the same way (sd 2). Services: the worst service's
// share within its SLO, 0.9 and 0.8 in two replays, means 0.85; drops add
// up over services (10 + 20 = 30 and 0) and average 15.
func TestSpotPointOfSeeds(t *testing.T) {
	od := SpotOnDemand{CostPerUsefulGPUHour: 10}
	p := SpotPointOf(2, []SpotSample{
		{Interruptions: 3, Completed: 4, CostPerUsefulGPUHour: 9},
		{Interruptions: 5, Completed: 4, CostPerUsefulGPUHour: 8},
		{Interruptions: 7, Completed: 5, CostPerUsefulGPUHour: 7},
	}, od)
	require.Equal(t, 3, p.Seeds)
	require.InDelta(t, 20, p.SavingPct, 1e-9)
	require.InDelta(t, 24.84, p.SavingHW95, 0.005)
	require.InDelta(t, 5, p.Interruptions, 1e-9)
	require.InDelta(t, 4.968, p.InterruptionsHW95, 0.001)
	require.InDelta(t, 4.333, p.Completed, 0.001)
	require.InDelta(t, 8, p.CostPerUsefulGPUHour, 1e-9)

	s := SpotSampleOf(&Summary{})
	require.Zero(t, s.Interruptions)
	svc := SpotPointOf(2, []SpotSample{
		{CostPerMillionRequests: 1, SLOAttainment: 0.9, HasSLO: true, Dropped: 30},
		{CostPerMillionRequests: 1, SLOAttainment: 0.8, HasSLO: true},
	}, SpotOnDemand{CostPerMillionRequests: 2})
	require.InDelta(t, 0.85, svc.SLOAttainment, 1e-9)
	require.InDelta(t, 15, svc.Dropped, 1e-9)
	require.InDelta(t, 50, svc.ServedSavingPct, 1e-9)
	// sd of (30, 0) is 21.21; t(0.975, 1) = 12.706: 12.706 x 21.21 / 1.414 = 190.6.
	require.InDelta(t, 190.6, svc.DroppedHW95, 0.1)
}

// The break-even and its interval, each where a saving crosses zero in
// log MTBF: with savings -50 ± 10, -10 ± 20 and +30 ± 20 at 1h, 2h and 8h,
// the mean crosses a quarter of the way from 2h to 8h (10/40), at
// 2 x 4^0.25 = 2.828h; the upper ends (-40, +10, +50) between 1h and 2h,
// 4/5 of the way, at 2^0.8 = 1.741h; the lower ends (-60, -30, +10)
// 3/4 of the way from 2h to 8h, at 2 x 4^0.75 = 5.657h.
func TestSpotBreakEvenRange(t *testing.T) {
	c := &SpotCurve{Run: "r", Seeds: 5, OnDemand: SpotOnDemand{CostPerUsefulGPUHour: 4, Completed: 3}, Points: []SpotPoint{
		{MTBFHours: 1, SavingPct: -50, SavingHW95: 10},
		{MTBFHours: 2, SavingPct: -10, SavingHW95: 20},
		{MTBFHours: 8, SavingPct: 30, SavingHW95: 20},
	}}
	require.InDelta(t, 2.828, c.BreakEven(), 0.001)
	lo, hi := c.BreakEvenRange()
	require.InDelta(t, 1.741, lo, 0.001)
	require.InDelta(t, 5.657, hi, 0.001)
	c.BreakEvenHours, c.BreakEvenLoHours, c.BreakEvenHiHours = c.BreakEven(), lo, hi
	text := spotCurveText(c)
	require.Contains(t, text, "more often than every 2.83h on average (95% interval 1.74h to 5.66h over 5 seeds)")
	rows := spotCurveRows(c)
	require.Equal(t, "-10.0% ± 20.0%", rows[1][4])
	// An end that never crosses over the curve is said so.
	c.Points[0].SavingHW95 = 60
	lo, _ = c.BreakEvenRange()
	require.InDelta(t, 0, lo, 0, "upper ends +10, +10, +50: never negative")
	c.BreakEvenLoHours = lo
	require.True(t, strings.Contains(spotCurveText(c), "below the curve's shortest MTBF to 5.66h"), spotCurveText(c))
}
