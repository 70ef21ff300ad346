package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A failed point reads "failed" in the curve's table and is named with its
// reason in the text; a curve whose all-on-demand run failed says so and
// gives no break-even.
func TestSpotCurveFailuresReported(t *testing.T) {
	c := &SpotCurve{Run: "as given", Note: "note.", OnDemand: SpotOnDemand{CostPerUsefulGPUHour: 4, Completed: 2},
		Points: []SpotPoint{
			{MTBFHours: 0.25, Failed: "the workload does not drain"},
			{MTBFHours: 0.5, SavingPct: -20, Completed: 2, CostPerUsefulGPUHour: 4.8},
			{MTBFHours: 2, SavingPct: 40, Completed: 2, CostPerUsefulGPUHour: 2.4},
		}}
	rows := spotCurveRows(c)
	// One unit in the MTBF column, hours: 15 min = 0.25h.
	require.Equal(t, []string{"0.25h", "failed", "-", "-", "-"}, rows[0])
	require.Equal(t, "2.00h", rows[2][0])
	require.Equal(t, "-20.0%", rows[1][4])
	// Zero a third of the way from 30m (-20%) to 2h (+40%) in log MTBF:
	// 0.5 x 4^(1/3) = 0.794h = 47.6m.
	c.BreakEvenHours = c.BreakEven()
	require.InDelta(t, 0.794, c.BreakEvenHours, 0.001)
	txt := spotCurveText(c)
	require.Contains(t, txt, "1 of 3 points failed and are left out (MTBF 15.0m: failed: the workload does not drain)")
	require.Contains(t, txt, "more often than every 47.6m")

	c.Failed = "planted"
	require.True(t, strings.HasPrefix(spotCurveText(c), "as given: no curve: its all-on-demand run failed: planted."))
}
