package traces

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Seconds' shortcut for decimals ("46.849") gives what parsing the value
// as a float and rounding its thousandfold gives: checked on random values
// of every length it takes (1 to 12 digits, 1 to 3 decimals, zeros
// included) and at its edges; what it does not take (no digit before or
// after the point, a sign, more decimals) goes the float way.
func TestSecondsDecimalsAsFloats(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 1))
	check := func(v string) {
		t.Helper()
		got, err := Seconds(v, true)
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f < 0 || f > maxTraceSeconds {
			if err == nil {
				t.Fatalf("Seconds(%q) = %d, want an error", v, got)
			}
			return
		}
		if want := int64(math.Round(f * 1000)); err != nil || got != want {
			t.Fatalf("Seconds(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for range 200_000 {
		whole := r.Int64N(int64(math.Pow10(1 + r.IntN(12))))
		dec := 1 + r.IntN(3)
		frac := r.Int64N(int64(math.Pow10(dec)))
		v := strconv.FormatInt(whole, 10) + "." + leftPad(strconv.FormatInt(frac, 10), dec)
		check(v)
	}
	for _, v := range []string{"0.001", "0.0", "999999999999.999", "123456789012.5", "46.849", "0.1", "1.10",
		"1.", ".5", "-1.5", "+1.5", "1.2345", "1e3", "1.5x", "0x1.8p1", "1_0.5", "9999999999999.5"} {
		check(v)
	}
	if ms, ok := decimalMs("46.849"); !ok || ms != 46849 {
		t.Fatalf("decimalMs(46.849) = %d, %v; want 46849 by the shortcut", ms, ok)
	}
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}
