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
