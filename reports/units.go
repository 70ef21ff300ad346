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

// Table cells that hold a figure until their column is written: a
// column's money in one precision (MoneyFormat over the column), its
// durations in one unit (DurationFormat), its latencies in one unit
// (latencyFormat). Any other cell is a string, written as is.
type (
	usd       float64 // dollars
	signedUSD float64 // dollars, + written on a positive amount
	durSecs   float64 // a duration in seconds
	millis    float64 // a latency in milliseconds
	// inHours is a duration in seconds written in hours whatever its
	// size: a column spread over decades (an MTBF from 15 minutes to 10
	// days) would read 0.01d in days.
	inHours float64
)

// columns writes rows of cells (strings, usd, signedUSD, durSecs, millis):
// each column's figures of one kind with one formatter built over them
// all, so that no column mixes $2,642 with $785.39 or 42.0s with 3.40h.
func columns(rows [][]any) [][]string {
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	type fmts struct {
		money, dur, lat func(float64) string
	}
	col := make([]fmts, width)
	for j := range width {
		var money, dur, lat []float64
		for _, r := range rows {
			if j >= len(r) {
				continue
			}
			switch v := r[j].(type) {
			case usd:
				money = append(money, float64(v))
			case signedUSD:
				money = append(money, float64(v))
			case durSecs:
				dur = append(dur, float64(v))
			case millis:
				lat = append(lat, float64(v))
			}
		}
		col[j] = fmts{MoneyFormat(money...), DurationFormat(dur...), latencyFormat(lat...)}
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, c := range r {
			switch v := c.(type) {
			case string:
				out[i][j] = v
			case usd:
				out[i][j] = col[j].money(float64(v))
			case signedUSD:
				s := col[j].money(float64(v))
				if s != col[j].money(0) && v > 0 {
					s = "+" + s
				}
				out[i][j] = s
			case durSecs:
				out[i][j] = col[j].dur(float64(v))
			case millis:
				out[i][j] = col[j].lat(float64(v))
			case inHours:
				u := durationUnits[2]
				out[i][j] = fmt.Sprintf("%.*f%s", u.decimals, float64(v)/u.seconds, u.suffix)
			default:
				out[i][j] = fmt.Sprint(v)
			}
		}
	}
	return out
}

// latencyFormat writes latencies of a column in one unit: milliseconds
// (85.3 ms) while every one is under a second, seconds to the millisecond
// (0.006 s, 24.200 s) under a minute, else as DurationFormat.
func latencyFormat(ms ...float64) func(float64) string {
	var top float64
	for _, x := range ms {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			top = math.Max(top, math.Abs(x))
		}
	}
	switch {
	case top < 999.95:
		return func(x float64) string { return fmt.Sprintf("%.1f ms", x) }
	case top < 59999.5:
		return func(x float64) string { return fmt.Sprintf("%.3f s", x/1000) }
	}
	s := make([]float64, len(ms))
	for i, x := range ms {
		s[i] = x / 1000
	}
	d := DurationFormat(s...)
	return func(x float64) string { return d(x / 1000) }
}

// UnitFormat is the one formatter for a column of figures of a unit
// (validate's names: usd, seconds, milliseconds, ratio, number) holding
// the values xs: MoneyFormat, DurationFormat, latencies in one unit,
// percentages with one decimal, or NumberFormat.
func UnitFormat(unit string, xs ...float64) func(float64) string {
	return unitColumn(unit, xs).f
}

// UnitClip keeps an interval inside the values a figure of the unit can
// take: no negative dollars or durations, no share outside 0..100%
// (Student's t knows nothing of bounds).
func UnitClip(unit string, lo, hi float64) (float64, float64) {
	switch unit {
	case UnitUSD, UnitSeconds, UnitMilliseconds:
		lo = math.Max(lo, 0)
	case UnitRatio:
		lo, hi = math.Max(lo, 0), math.Min(hi, 1)
	}
	return lo, hi
}
