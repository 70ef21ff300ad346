package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// By hand, at 30% off. Three hours at $10 an hour of on-demand demand and
// one at $0: committing $7 an hour covers the $10 hours whole; the bill is
// 4 x 7 = $28 against $30 (saving $2), the commitment used 3 x 7 of 4 x 7
// (75%); it breaks even at 30 / 4 = $7.50 an hour (the bill is the level
// x 4 h), and costs more than no commitment once demand falls by more
// than 1 - 28 / 30 = 6.67% (at 10% down: $28 against $27).
func TestAdviseSpendCommitmentByHand(t *testing.T) {
	a := AdviseSpendCommitment([]float64{10, 10, 0, 10}, []float64{1, 1, 1, 1}, 0.3)
	require.InDelta(t, 7, a.Level, 1e-12)
	require.InDelta(t, 28, a.Bill, 1e-12)
	require.InDelta(t, 30, a.BillNone, 1e-12)
	require.InDelta(t, 2, a.Saving, 1e-12)
	require.InDelta(t, 0.75, a.Utilisation, 1e-12)
	require.InDelta(t, 1, a.Coverage, 1e-12)
	require.InDelta(t, 7.5, a.BreakEven, 1e-12)
	require.InDelta(t, 1.0/15, a.BreakEvenFall, 1e-9)
	require.Equal(t, 0.1, a.Risk[0].Fall)
	require.InDelta(t, 28, a.Risk[0].Bill, 1e-12)
	require.InDelta(t, 27, a.Risk[0].BillNone, 1e-12)

	// $10 and $5: committing $3.50 (covering $5) bills 7 + 5 = $12,
	// committing $7 bills $14, none $15: $3.50. It breaks even at $7.50
	// (every hour covered: 2 x level = 15).
	a = AdviseSpendCommitment([]float64{10, 5}, []float64{1, 1}, 0.3)
	require.InDelta(t, 3.5, a.Level, 1e-12)
	require.InDelta(t, 12, a.Bill, 1e-12)
	require.InDelta(t, 7.5, a.BreakEven, 1e-12)

	// A corner between: rates 10, 10, 2, 2 at 50% off. Level 1 (x 2):
	// 4 + 2 x 8 = 20; level 5 (x 10): 20 + 0 = 20; none 24. Equal bills:
	// the lower level. Break-even between 5 and above all rates: 24 / 4 = 6.
	a = AdviseSpendCommitment([]float64{10, 10, 2, 2}, []float64{1, 1, 1, 1}, 0.5)
	require.InDelta(t, 1, a.Level, 1e-12)
	require.InDelta(t, 20, a.Bill, 1e-12)
	require.InDelta(t, 6, a.BreakEven, 1e-12)

	// No demand: no commitment.
	require.Zero(t, AdviseSpendCommitment([]float64{0, 0}, []float64{1, 1}, 0.3).Level)
}
