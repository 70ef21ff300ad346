package reports

import (
	"fmt"
	"math"
)

// MoneyFormat is the one money formatter for a column (or a row, a plot
// axis, a page's set of figures that sit together): one precision for
// every value in it, chosen from the largest. Cents while every value is
// below $1,000; whole dollars with thousands separators ($23,777) from
// $1,000 up; never scientific notation.
func MoneyFormat(xs ...float64) func(float64) string {
	whole := false
	for _, x := range xs {
		whole = whole || math.Abs(x) >= 999.995
	}
	return func(x float64) string { return moneyIn(x, whole) }
}

func moneyIn(x float64, whole bool) string {
	// No "-$0.00": a value that rounds to zero has no sign.
	if (whole && math.Round(x) == 0) || (!whole && math.Round(100*x) == 0) {
		x = 0
	}
	if x < 0 {
		return "-" + moneyIn(-x, whole)
	}
	if !whole {
		return fmt.Sprintf("$%.2f", x)
	}
	return "$" + thousands(int64(math.Round(x)))
}

// A duration unit: its suffix, its length in seconds and the decimals
// printed.
type durationUnit struct {
	suffix   string
	seconds  float64
	decimals int
}

var durationUnits = []durationUnit{{"s", 1, 1}, {"m", 60, 1}, {"h", 3600, 2}, {"d", 86400, 2}}

// durationUnitFor is the unit a duration of s seconds is written in:
// seconds under a minute, minutes under an hour, hours under two days,
// then days (Human's choice for one value).
func durationUnitFor(s float64) durationUnit {
	s = math.Abs(s)
	switch {
	case s < 60:
		return durationUnits[0]
	case s < 3600:
		return durationUnits[1]
	case s < 48*3600:
		return durationUnits[2]
	}
	return durationUnits[3]
}

// DurationFormat is the one duration formatter for a column (or a row, a
// plot axis): one unit for every value in it, the unit Human would pick
// for the largest (seconds, minutes, hours or days), so that a column
// never mixes s, m, h and d. Negative values keep their sign.
func DurationFormat(xs ...float64) func(float64) string {
	var top float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			top = math.Max(top, math.Abs(x))
		}
	}
	u := durationUnitFor(top)
	return func(x float64) string {
		return fmt.Sprintf("%.*f%s", u.decimals, x/u.seconds, u.suffix)
	}
}

// DurationUnit is the suffix DurationFormat(xs...) writes (s, m, h or d).
func DurationUnit(xs ...float64) string {
	var top float64
	for _, x := range xs {
		top = math.Max(top, math.Abs(x))
	}
	return durationUnitFor(top).suffix
}

// NumberFormat writes plain numbers (counts, GPU-hours) of a column or a
// row in one precision: whole numbers with thousands separators from
// 1,000 up or when every value is whole, else two decimals.
func NumberFormat(xs ...float64) func(float64) string {
	whole := true
	for _, x := range xs {
		if math.Abs(x) < 999.5 && x != math.Trunc(x) {
			whole = false
		}
	}
	for _, x := range xs {
		if math.Abs(x) >= 999.5 {
			whole = true
		}
	}
	return func(x float64) string {
		if !whole {
			if math.Round(100*x) == 0 {
				x = 0
			}
			return fmt.Sprintf("%.2f", x)
		}
		n := int64(math.Round(x))
		if n < 0 {
			return "-" + thousands(-n)
		}
		return thousands(n)
	}
}
