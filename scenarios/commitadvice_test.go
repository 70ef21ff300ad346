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

// One level across seeds on the built-in default week at 30% off: seeds
// 42 to 46, each its own week of demand. reports.OneLevel's level (the one
// whose mean bill over the five is least) against a brute force over every
// level in cents, each seed's week billed hour by hour through the
// commitments' own arithmetic (pool by pool) and the bills averaged: the
// same level to the cent, the same mean bill; the level is the same at
// every seed, unlike each seed's own level chosen with hindsight.
func TestOneCommitmentLevelOnTheDefaultWeek(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	s.Spec.Horizon = &Duration{Duration: 168 * time.Hour}
	s.Spec.Pricing.CommitmentAdvice = &CommitmentAdviceSpec{Discount: 0.3}
	type week struct {
		od    []float64   // each pool's node price
		usage [][]float64 // usage[hour][pool], node-hours
	}
	var weeks []week
	var advice []*reports.CommitmentAdvice
	peak := 0.0
	for seed := uint64(42); seed <= 46; seed++ {
		sd := seed
		b, err := s.Build(Options{Seed: &sd})
		require.NoError(t, err)
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		a := reports.Cost(res, b.Pricing).CommitmentAdvice
		require.NotNil(t, a)
		advice = append(advice, a)
		var w week
		for p := range res.Pools {
			w.od = append(w.od, b.Pricing.Pools[p].PerHour)
		}
		tl := &res.Timeline
		for i := range tl.Allocated[0] {
			require.Equal(t, sim.Hour, tl.Width(i, res.End))
			u := make([]float64, len(w.od))
			rate := 0.0
			for p := range w.od {
				u[p] = float64(tl.Allocated[p][i]) / 1000 / float64(sim.Hour) / float64(res.Pools[p].Spec.GPUsPerNode)
				rate += u[p] * w.od[p]
			}
			w.usage = append(w.usage, u)
			peak = max(peak, rate)
		}
		weeks = append(weeks, w)
		t.Logf("seed %d alone: commit %.2f $/h, bill %.2f $ against %.2f $", seed, a.Level, a.Bill, a.BillNone)
	}
	meanBill := func(level float64) float64 {
		c := []models.Commitment{{Kind: models.CommitSpend, Hourly: level, Discount: 0.3, TermHours: 8760}}
		total := 0.0
		for _, w := range weeks {
			elig := [][]bool{make([]bool, len(w.od))}
			for k := range elig[0] {
				elig[0][k] = true
			}
			for _, u := range w.usage {
				if level == 0 {
					for p := range u {
						total += u[p] * w.od[p]
					}
					continue
				}
				uses, left := models.ApplyCommitments(c, elig, u, w.od, 1)
				total += uses[0].Cost + left
			}
		}
		return total / float64(len(weeks))
	}
	bestLevel, bestMean := 0.0, meanBill(0)
	for cents := 1; float64(cents)/100 <= peak*0.7+0.01; cents++ {
		if m := meanBill(float64(cents) / 100); m < bestMean {
			bestLevel, bestMean = float64(cents)/100, m
		}
	}
	one, err := reports.OneLevel(advice)
	require.NoError(t, err)
	var bills, savings, breakEvens, falls []float64
	for _, a := range one {
		require.Equal(t, one[0].Level, a.Level, "one level for every seed")
		bills, savings = append(bills, a.Bill), append(savings, a.Saving)
		breakEvens, falls = append(breakEvens, a.BreakEven), append(falls, a.BreakEvenFall)
	}
	mean, half := meanHalf(bills)
	t.Logf("one level:   commit %.4f $/h, mean bill %.2f $ (95%% +- %.2f)", one[0].Level, mean, half)
	m, h := meanHalf(savings)
	t.Logf("  saving %.2f $ (95%% [%.2f, %.2f])", m, m-h, m+h)
	m, h = meanHalf(breakEvens)
	t.Logf("  break-even %.2f $/h (95%% [%.2f, %.2f])", m, m-h, m+h)
	m, h = meanHalf(falls)
	t.Logf("  pays until demand falls %.1f%% (95%% [%.1f%%, %.1f%%])", 100*m, 100*(m-h), 100*(m+h))
	t.Logf("brute force: commit %.2f $/h, mean bill %.2f $", bestLevel, bestMean)
	require.InDelta(t, bestLevel, one[0].Level, 0.01)
	require.InDelta(t, bestMean, mean, 0.01)
}

// meanHalf is x's mean and the half-width of its 95% interval (Student's
// t with n - 1 degrees of freedom; for n = 5, t = 2.7764).
func meanHalf(x []float64) (mean, half float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v / n
	}
	ss := 0.0
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	tq := map[int]float64{5: 2.776445}[len(x)]
	return mean, tq * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
}
