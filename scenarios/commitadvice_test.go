package scenarios

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim"
)

// The commitment advice on the built-in default scenario with a week of
// demand, at 30% off, against a brute-force sweep: every level from $0 to
// the demand's peak in steps of a cent an hour, each billed hour by hour
// through the commitments' own arithmetic (models.ApplyCommitments, pool by
// pool), picks the same level to the cent and the same bill.
func TestCommitmentAdviceOnTheDefaultWeek(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	s.Spec.Horizon = &Duration{Duration: 168 * time.Hour}
	s.Spec.Pricing.CommitmentAdvice = &CommitmentAdviceSpec{Discount: 0.3}
	b, err := s.Build(Options{})
	require.NoError(t, err)
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	cs := reports.Cost(res, b.Pricing)
	a := cs.CommitmentAdvice
	require.NotNil(t, a)

	// The brute force: the pools' held GPU-hours as node-hours at the
	// node's on-demand price, a spend commitment of each level.
	tl := &res.Timeline
	var od []float64
	for p := range res.Pools {
		require.Equal(t, "on-demand", b.Pricing.Pools[p].CapacityType)
		od = append(od, b.Pricing.Pools[p].PerHour)
	}
	elig := [][]bool{make([]bool, len(od))}
	for k := range elig[0] {
		elig[0][k] = true
	}
	type bucket struct{ usage []float64 }
	var buckets []bucket
	peak := 0.0
	for i := range tl.Allocated[0] {
		h := float64(tl.Width(i, res.End)) / float64(sim.Hour)
		u := make([]float64, len(od))
		rate := 0.0
		for p := range od {
			u[p] = float64(tl.Allocated[p][i]) / 1000 / float64(sim.Hour) / float64(res.Pools[p].Spec.GPUsPerNode)
			rate += u[p] * od[p] / h
		}
		require.Equal(t, 1.0, h)
		buckets = append(buckets, bucket{u})
		peak = max(peak, rate)
	}
	bill := func(level float64) float64 {
		c := []models.Commitment{{Kind: models.CommitSpend, Hourly: level, Discount: 0.3, TermHours: 8760}}
		total := 0.0
		for _, bk := range buckets {
			if level == 0 {
				for p, u := range bk.usage {
					total += u * od[p]
				}
				continue
			}
			uses, left := models.ApplyCommitments(c, elig, bk.usage, od, 1)
			total += uses[0].Cost + left
		}
		return total
	}
	bestLevel, bestBill := 0.0, bill(0)
	for cents := 1; float64(cents)/100 <= peak*0.7+0.01; cents++ {
		if b := bill(float64(cents) / 100); b < bestBill {
			bestLevel, bestBill = float64(cents)/100, b
		}
	}
	t.Logf("week of demand: %d hours, peak %.2f $/h, on demand %.2f $", len(buckets), peak, a.BillNone)
	t.Logf("advice:      commit %.4f $/h, bill %.2f $, saving %.2f $, utilisation %.1f%%, coverage %.1f%%, break-even %.2f $/h, pays until demand falls %.1f%%",
		a.Level, a.Bill, a.Saving, 100*a.Utilisation, 100*a.Coverage, a.BreakEven, 100*a.BreakEvenFall)
	for _, r := range a.Risk {
		t.Logf("  demand down %.0f%%: %.2f $ with it, %.2f $ without", 100*r.Fall, r.Bill, r.BillNone)
	}
	t.Logf("brute force: commit %.2f $/h, bill %.2f $", bestLevel, bestBill)
	require.InDelta(t, bestLevel, a.Level, 0.01)
	require.InDelta(t, bestBill, a.Bill, 0.01)
	require.InDelta(t, bill(0), a.BillNone, 0.01)
	require.Greater(t, a.Saving, 0.0)
	// The break-even is where the bill meets on-demand's.
	require.InDelta(t, a.BillNone, bill(a.BreakEven), 0.5)
	require.False(t, math.IsNaN(a.BreakEvenFall))
}
