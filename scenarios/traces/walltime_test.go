package traces

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wallTimeByParse is parseWallTime as it was: time.Parse alone.
func wallTimeByParse(v string) (int64, bool) {
	t, err := time.Parse(TraceTimeLayout, v)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// sameAsTimeParse fails unless parseWallTime reads v as time.Parse does:
// the same ms, or an error for both.
func sameAsTimeParse(t *testing.T, v string) {
	t.Helper()
	want, ok := wallTimeByParse(v)
	got, err := parseWallTime(v)
	if ok != (err == nil) || got != want {
		t.Fatalf("%q: parseWallTime %d, %v; time.Parse %d, ok %v", v, got, err, want, ok)
	}
}

func TestWallTimeFastPathMatchesTimeParse(t *testing.T) {
	// Every day of the years 1900 to 2100 and every 13th of the years 0 to
	// 9999, at a time of day that moves with it and around the day's edges.
	for day := range 3652425 {
		d := time.Date(0, 1, 1+day, 0, 0, 0, 0, time.UTC)
		if y := d.Year(); (y < 1900 || y > 2100) && day%13 != 0 {
			continue
		}
		at := d.Add(time.Duration(day*7919%86400) * time.Second)
		for _, x := range []time.Time{at, d, d.Add(86399 * time.Second)} {
			v := x.Format(TraceTimeLayout)
			ms, ok := wallTimeFast(v)
			if !ok || ms != x.UnixMilli() {
				t.Fatalf("%s: fast %d %v, want %d", v, ms, ok, x.UnixMilli())
			}
		}
	}
	// Times the fast path leaves to time.Parse, which reads some and
	// refuses the rest; and a few it reads itself, worked out by hand.
	for _, v := range []string{
		"2017-10-03 04:52:56", "1970-01-01 00:00:00", "1969-12-31 23:59:59",
		"0000-02-29 00:00:00", "1900-02-29 00:00:00", "2000-02-29 12:00:00", "2100-02-29 00:00:00",
		"2017-02-30 00:00:00", "2017-04-31 00:00:00", "2017-13-01 00:00:00", "2017-00-01 00:00:00",
		"2017-10-00 00:00:00", "2017-10-03 24:00:00", "2017-10-03 23:60:00", "2017-10-03 23:59:60",
		"2017-10-03 04:52:56.5", "2017-10-03 04:52:56.123456789", "2017-10-03 04:52:56,5",
		"2017-10-03T04:52:56", "2017-10-3 04:52:56", "2017-10-03 4:52:56", " 2017-10-03 04:52:56",
		"+017-10-03 04:52:56", "-017-10-03 04:52:56", "2017-1a-03 04:52:56", "2017/10/03 04:52:56",
		"２017-10-03 04:52:56", "", "2017-10-03", "2017-10-03 04:52:5\x00",
	} {
		sameAsTimeParse(t, v)
	}
	ms, err := parseWallTime("2017-10-03 04:52:56")
	require.NoError(t, err)
	// 2017-10-03 is day 17,442 since 1970-01-01 (47 years with 12 leap
	// days, 17,167 days, to 2017-01-01; then 275 days to October 3).
	require.Equal(t, int64(17442*86400+4*3600+52*60+56)*1000, ms)
	// Random strings of the layout's shape, digits anywhere.
	r := rand.New(rand.NewPCG(3, 4))
	b := []byte(TraceTimeLayout)
	for range 200_000 {
		for i := range b {
			switch i {
			case 4, 7, 10, 13, 16:
			default:
				b[i] = '0' + byte(r.IntN(10))
			}
		}
		sameAsTimeParse(t, string(b))
	}
}

func FuzzParseWallTime(f *testing.F) {
	for _, v := range []string{"2017-10-03 04:52:56", "2000-02-29 23:59:59", "1900-02-29 00:00:00", "2017-10-03 04:52:56.25", "9999-12-31 23:59:60", "0000-01-01 00:00:00"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		sameAsTimeParse(t, v)
	})
}
