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

// One level for three seeds' demands, by hand, at 50% off (a level L
// covers up to 2L of on-demand dollars an hour), four 1-hour buckets each:
//
//	A: 10 10 10 10   bill 40 - 4L up to L = 5, 4L above; own best 5 ($20)
//	B: 10  2  2  2   16 - 4L up to 1, 10 + 2L up to 5; own best 1 ($12)
//	C:  2  2  2  0   6 - 2L up to 1, 4L above; own best 1 ($4)
//
// Each seed's own level with hindsight averages (5 + 1 + 1) / 3 = 2.33
// and a mean bill of (20 + 12 + 4) / 3 = $12: no level bought ahead gets
// that. One level for all three: the corners 1 and 5 (and none) bill
// (36 + 12 + 4) / 3 = $17.33, (20 + 20 + 20) / 3 = $20 and
// (40 + 16 + 6) / 3 = $20.67, so $1 an hour, saving 4, 4 and 2. Each
// seed's own break-even: A 40 / 4 = $10, B 10 + 2L = 16 at $3, C 4L = 6
// at $1.50. At $1 the demand may fall by 90% (A: 4 against 40s, s =
// 0.1), 2/3 (B: 10s + 2 against 16s) and 1/3 (C: 4 against 6s) before
// it stops paying.
func TestCommonSpendLevelByHand(t *testing.T) {
	h := []float64{1, 1, 1, 1}
	ds := []Demand{{[]float64{10, 10, 10, 10}, h}, {[]float64{10, 2, 2, 2}, h}, {[]float64{2, 2, 2, 0}, h}}
	for i, own := range []float64{5, 1, 1} {
		require.InDelta(t, own, CommonSpendLevel(ds[i:i+1], 0.5), 1e-12, "seed %d alone", i)
	}
	level := CommonSpendLevel(ds, 0.5)
	require.InDelta(t, 1, level, 1e-12)
	want := []struct{ bill, none, saving, breakEven, fall float64 }{
		{36, 40, 4, 10, 0.9}, {12, 16, 4, 3, 2.0 / 3}, {4, 6, 2, 1.5, 1.0 / 3},
	}
	mean := 0.0
	for i, w := range want {
		a := SpendCommitmentAt(ds[i].Rates, ds[i].Hours, 0.5, level)
		require.InDelta(t, w.bill, a.Bill, 1e-12, "seed %d", i)
		require.InDelta(t, w.none, a.BillNone, 1e-12, "seed %d", i)
		require.InDelta(t, w.saving, a.Saving, 1e-12, "seed %d", i)
		require.InDelta(t, w.breakEven, a.BreakEven, 1e-12, "seed %d", i)
		require.InDelta(t, w.fall, a.BreakEvenFall, 1e-9, "seed %d", i)
		mean += a.Bill / 3
	}
	require.InDelta(t, 52.0/3, mean, 1e-12)

	// A level above a seed's break-even does not pay there at all: $5 on
	// C bills $20 against $6, and survives no fall.
	a := SpendCommitmentAt(ds[2].Rates, ds[2].Hours, 0.5, 5)
	require.InDelta(t, 20, a.Bill, 1e-12)
	require.Zero(t, a.BreakEvenFall)
	require.InDelta(t, 1.5, a.BreakEven, 1e-12)
}
