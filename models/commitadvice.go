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
	a := CommitmentAdvice{Discount: d}
	total := 0.0
	for i, r := range rates {
		a.BillNone += r * hours[i]
		total += hours[i]
	}
	if a.BillNone <= 0 || total <= 0 {
		return a
	}
	cand := append([]float64(nil), rates...)
	sort.Float64s(cand)
	best, bestBill := 0.0, a.BillNone
	for k, r := range cand {
		if r <= 0 || (k > 0 && r == cand[k-1]) {
			continue
		}
		b, _ := spendBill(rates, hours, r*(1-d), d, 1)
		if b < bestBill-1e-9 {
			best, bestBill = r*(1-d), b
		}
	}
	a.Level = best
	var covered float64
	a.Bill, covered = spendBill(rates, hours, best, d, 1)
	a.Saving = a.BillNone - a.Bill
	a.Coverage = covered / a.BillNone
	if best > 0 {
		a.Utilisation = covered * (1 - d) / (best * total)
	}
	// The break-even: the bill rises linearly between corners above the
	// best level; find the corner pair the bill without falls between.
	over := func(level float64) float64 { b, _ := spendBill(rates, hours, level, d, 1); return b - a.BillNone }
	lo := best
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
		b, _ := spendBill(rates, hours, best, d, 1-f)
		return b - (1-f)*a.BillNone
	}
	for _, f := range Falls {
		b, _ := spendBill(rates, hours, best, d, 1-f)
		a.Risk = append(a.Risk, FallRisk{Fall: f, Bill: b, BillNone: (1 - f) * a.BillNone})
	}
	if best > 0 {
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
