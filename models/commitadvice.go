package models

import (
	"math"
	"sort"
)

// CommitmentAdvice is the spend commitment that makes a stretch of demand
// cheapest, with its break-even and its risk.
type CommitmentAdvice struct {
	// Discount is the commitment's share off on-demand.
	Discount float64 `json:"discount"`
	// Level is the recommended commitment, dollars an hour; Bill the bill
	// of the demand with it and BillNone without (all at on-demand);
	// Saving the difference. Utilisation and Coverage are as in a bill.
	Level       float64 `json:"level"`
	Bill        float64 `json:"bill"`
	BillNone    float64 `json:"billNone"`
	Saving      float64 `json:"saving"`
	Utilisation float64 `json:"utilisation"`
	Coverage    float64 `json:"coverage"`
	// BreakEven is the highest level that costs no more than no
	// commitment at all: above it a commitment loses money on this
	// demand.
	BreakEven float64 `json:"breakEven"`
	// BreakEvenFall is the share by which the demand may fall, every
	// hour alike, before Level costs more than no commitment; Risk is the
	// bill with Level against the bill without at each fall of Falls.
	BreakEvenFall float64    `json:"breakEvenFall"`
	Risk          []FallRisk `json:"risk"`
}

// FallRisk is the bill with the recommended commitment when demand falls
// by Fall, and without any.
type FallRisk struct {
	Fall     float64 `json:"fall"`
	Bill     float64 `json:"bill"`
	BillNone float64 `json:"billNone"`
}

// Falls are the demand falls the risk is shown at.
var Falls = []float64{0.1, 0.25, 0.5}

// spendBill is the bill of demand rates (on-demand dollars an hour,
// bucket i lasting hours[i]) under a spend commitment of level dollars an
// hour at discount d, scaled by s: each hour the commitment is paid and
// covers up to level / (1 - d) of on-demand usage; the rest is paid at
// on-demand.
func spendBill(rates, hours []float64, level, d, s float64) (bill, covered float64) {
	x := level / (1 - d)
	for i, r := range rates {
		r *= s
		c := math.Min(r, x)
		bill += hours[i] * (level + r - c)
		covered += hours[i] * c
	}
	return bill, covered
}

// AdviseSpendCommitment recommends a spend commitment (a Savings Plan, a
// spend-based committed-use discount) at discount d for a demand of
// rates: the on-demand dollars an hour of bucket i, which lasts hours[i].
// The bill is convex and piecewise linear in the level, with its corners
// where the level covers a bucket's whole rate, so the cheapest level is
// one of those (r x (1 - d)) or none: the one whose bill is least (the
// level at which the hours the demand exceeds what it covers are a share
// (1 - d) of all, the classic rule); among equal bills the lowest. The
// break-even is where the bill's rising side meets the bill without.
func AdviseSpendCommitment(rates, hours []float64, d float64) CommitmentAdvice {
	return SpendCommitmentAt(rates, hours, d, CommonSpendLevel([]Demand{{rates, hours}}, d))
}

// A Demand is a stretch of on-demand demand: Rates[i] dollars an hour for
// Hours[i] hours.
type Demand struct {
	Rates, Hours []float64
}

// CommonSpendLevel is the one spend commitment at discount d that makes
// the mean bill of the demands least: the level to buy when each demand is
// one seed's run of the same work, so the level is chosen before the
// seed's demand is known, not with hindsight for each. The mean of convex
// piecewise linear bills is convex and piecewise linear with its corners
// at every demand's corners (r x (1 - d) for each rate r of each), so
// every corner is tried and the least mean bill kept; among equal bills
// the lowest level; none when no level beats none. With one demand it is
// that demand's own best level.
func CommonSpendLevel(ds []Demand, d float64) float64 {
	var cand []float64
	for _, dm := range ds {
		for _, r := range dm.Rates {
			if r > 0 {
				cand = append(cand, r)
			}
		}
	}
	sort.Float64s(cand)
	sum := func(level float64) float64 {
		t := 0.0
		for _, dm := range ds {
			b, _ := spendBill(dm.Rates, dm.Hours, level, d, 1)
			t += b
		}
		return t
	}
	best, bestBill := 0.0, sum(0)
	for k, r := range cand {
		if k > 0 && r == cand[k-1] {
			continue
		}
		if b := sum(r * (1 - d)); b < bestBill-1e-9 {
			best, bestBill = r*(1-d), b
		}
	}
	return best
}

// SpendCommitmentAt is the advice's figures for a spend commitment of
// level dollars an hour at discount d on a demand of rates (bucket i
// lasting hours[i]): its bill, saving, utilisation and coverage; the
// break-even (the demand's own: the highest level that costs no more than
// none, whatever level is bought), the fall in demand at which level stops
// paying (0 when it does not pay on this demand at all) and the bills at
// Falls.
func SpendCommitmentAt(rates, hours []float64, d, level float64) CommitmentAdvice {
	a := CommitmentAdvice{Discount: d}
	total := 0.0
	for i, r := range rates {
		a.BillNone += r * hours[i]
		total += hours[i]
	}
	if a.BillNone <= 0 || total <= 0 {
		return a
	}
	a.Level = level
	var covered float64
	a.Bill, covered = spendBill(rates, hours, level, d, 1)
	a.Saving = a.BillNone - a.Bill
	a.Coverage = covered / a.BillNone
	if level > 0 {
		a.Utilisation = covered * (1 - d) / (level * total)
	}
	// The break-even: the bill rises linearly between corners above the
	// demand's own best level; find the corner pair the bill without
	// falls between.
	cand := append([]float64(nil), rates...)
	sort.Float64s(cand)
	own := CommonSpendLevel([]Demand{{rates, hours}}, d)
	over := func(level float64) float64 { b, _ := spendBill(rates, hours, level, d, 1); return b - a.BillNone }
	lo := own
	for _, r := range cand {
		l := r * (1 - d)
		if l <= lo {
			continue
		}
		if over(l) > 0 {
			a.BreakEven = lo + (l-lo)*(-over(lo))/(over(l)-over(lo))
			break
		}
		lo = l
	}
	if a.BreakEven == 0 {
		// Above every rate the whole demand is covered: the bill is
		// level x hours.
		a.BreakEven = math.Max(lo, a.BillNone/total)
	}
	// The risk: the demand scaled by 1 - fall.
	risk := func(f float64) float64 {
		b, _ := spendBill(rates, hours, level, d, 1-f)
		return b - (1-f)*a.BillNone
	}
	for _, f := range Falls {
		b, _ := spendBill(rates, hours, level, d, 1-f)
		a.Risk = append(a.Risk, FallRisk{Fall: f, Bill: b, BillNone: (1 - f) * a.BillNone})
	}
	if level > 0 {
		lo, hi := 0.0, 1.0
		for range 60 {
			m := (lo + hi) / 2
			if risk(m) > 0 {
				hi = m
			} else {
				lo = m
			}
		}
		a.BreakEvenFall = lo
	}
	return a
}
