package reports

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// One precision a column: $2,642 beside $785 whole dollars, not $785.39;
// cents only while every value is below $1,000.
func TestMoneyFormatOnePrecisionPerColumn(t *testing.T) {
	f := MoneyFormat(2642.4, 785.39, 0.5)
	require.Equal(t, "$2,642", f(2642.4))
	require.Equal(t, "$785", f(785.39))
	require.Equal(t, "$1", f(0.5))
	require.Equal(t, "$0", f(-0.2), "no -$0")
	require.Equal(t, "$1,234,567", f(1234567))
	require.Equal(t, "-$15,050", f(-15050), "never 1.505e+04")
	g := MoneyFormat(785.39, 0.5)
	require.Equal(t, "$785.39", g(785.39))
	require.Equal(t, "$0.50", g(0.5))
	require.Equal(t, "$0.00", g(-0.001))
	// $999.996 rounds to $1,000.00: whole dollars for the column.
	require.Equal(t, "$1,000", MoneyFormat(999.996)(999.996))
}

// One unit a column, the one the largest value reads best in: 90 s
// beside 3 h is 0.03h, not 1.5m.
func TestDurationFormatOneUnitPerColumn(t *testing.T) {
	f := DurationFormat(90, 3*3600, 0)
	require.Equal(t, "0.03h", f(90))
	require.Equal(t, "3.00h", f(3*3600))
	require.Equal(t, "0.00h", f(0))
	require.Equal(t, "h", DurationUnit(90, 3*3600))
	require.Equal(t, "45.0s", DurationFormat(45, 12)(45))
	require.Equal(t, "1.5m", DurationFormat(90, 30)(90))
	// 3 days: 72 h is past two days, so days.
	require.Equal(t, "3.00d", DurationFormat(72*3600)(72*3600))
	require.Equal(t, "-0.50h", DurationFormat(-1800, 3600)(-1800))
}

func TestNumberFormat(t *testing.T) {
	f := NumberFormat(1362, 1356, -5.4)
	require.Equal(t, "1,362", f(1362))
	require.Equal(t, "-5", f(-5.4))
	require.Equal(t, "0", f(-0.2))
	g := NumberFormat(133.79, 2)
	require.Equal(t, "133.79", g(133.79))
	require.Equal(t, "2.00", g(2))
	require.Equal(t, "3", NumberFormat(3, 4)(3))
}

// A table's column keeps one precision and one unit whatever its rows:
// the issue's $2,642 beside $785.39 becomes $2,642 beside $785, and 42 s
// beside 3.4 h is 0.01h beside 3.40h.
func TestColumnsFormatEachColumnAsOne(t *testing.T) {
	rows := columns([][]any{
		{"a", usd(2642.37), durSecs(42), signedUSD(12.5), millis(6), millis(6)},
		{"b", usd(785.39), durSecs(12240), signedUSD(-3), millis(24200), millis(85.26)},
		{"c", "-", "-", signedUSD(0), "-", millis(999)},
	})
	require.Equal(t, [][]string{
		{"a", "$2,642", "0.01h", "+$12.50", "0.006 s", "6.0 ms"},
		{"b", "$785", "3.40h", "-$3.00", "24.200 s", "85.3 ms"},
		{"c", "-", "-", "$0.00", "-", "999.0 ms"},
	}, rows)
	// An MTBF column is in hours from 15 minutes to 10 days.
	require.Equal(t, [][]string{{"0.25h"}, {"240.00h"}}, columns([][]any{{inHours(900)}, {inHours(864000)}}))
	// Latencies from a minute up: the duration formatter's unit.
	f := latencyFormat(90000, 150000)
	require.Equal(t, []string{"1.5m", "2.5m"}, []string{f(90000), f(150000)})
}
