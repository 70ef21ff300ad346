package serving

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadCurves(t *testing.T) {
	const h = 3600_000
	// Diurnal: 1,000 +- 600, peak at 20:00: 1,600 then, 400 at 08:00,
	// 1,000 at 14:00 (a quarter day from the peak).
	d := Load{Base: 1000, Amplitude: 600, PeakMs: 20 * h}
	for _, c := range []struct {
		at   int64
		want float64
	}{{20 * h, 1600}, {8 * h, 400}, {14 * h, 1000}, {44 * h, 1600}} {
		if got := d.At(c.at); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("diurnal at %d h: %g, want %g", c.at/h, got, c.want)
		}
	}
	// A flash sale: 5x for two hours from 12:00.
	d.Spikes = []Spike{{StartMs: 12 * h, LengthMs: 2 * h, Factor: 5}}
	if got, want := d.At(13*h), 5*(1000+600*math.Cos(2*math.Pi*-7/24)); math.Abs(got-want) > 1e-9 {
		t.Errorf("in the sale: %g, want %g", got, want)
	}
	if got := d.At(14 * h); math.Abs(got-1000) > 1e-9 {
		t.Errorf("after the sale: %g", got)
	}
	// Points: held until the next; the mean over [0, 3 s) of 10, 20 (from
	// 1 s), 40 (from 2 s) is 70/3.
	p := Load{Points: []Point{{0, 10}, {1000, 20}, {2000, 40}}}
	if got := p.Mean(0, 3000); math.Abs(got-70.0/3) > 1e-9 {
		t.Errorf("mean %g", got)
	}
}

func TestLoadValidate(t *testing.T) {
	bad := []Load{
		{Base: -1},
		{Base: 100, Amplitude: 150},
		{Points: []Point{{0, 5}, {0, 6}}},
		{Points: []Point{{1000, 5}, {500, 6}}},
		{Points: []Point{{0, -2}}},
		{Base: 10, Spikes: []Spike{{StartMs: 0, LengthMs: 0, Factor: 2}}},
		{Base: math.NaN()},
	}
	for i, l := range bad {
		if l.Validate() == nil {
			t.Errorf("curve %d accepted: %+v", i, l)
		}
	}
}

// A diurnal curve's mean is its integral: over a whole day the base; over
// the half day around the peak base + 2A/pi; with a 5x spike of two hours
// inside a day, base + 4 x (the spike window's integral) / day. Windows
// of any length agree with a 10 ms midpoint sum.
func TestDiurnalMeanIsExact(t *testing.T) {
	const h = 3600_000
	d := Load{Base: 1000, Amplitude: 600, PeakMs: 20 * h}
	checks := []struct {
		from, to int64
		want     float64
	}{
		{0, 24 * h, 1000},
		{14 * h, 26 * h, 1000 + 2*600/math.Pi},
	}
	for _, c := range checks {
		if got := d.Mean(c.from, c.to); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("mean over [%d, %d) h: %g, want %g", c.from/h, c.to/h, got, c.want)
		}
	}
	d.Spikes = []Spike{{StartMs: 12 * h, LengthMs: 2 * h, Factor: 5}, {StartMs: 13 * h, LengthMs: h, Factor: 2}}
	w := 2 * math.Pi / (24 * h)
	window := func(a, b float64) float64 { // the unspiked integral
		return 1000*(b-a) + 600/w*(math.Sin(w*(b-20*h))-math.Sin(w*(a-20*h)))
	}
	want := (window(0, 24*h) + 4*window(12*h, 14*h) + 5*window(13*h, 14*h)) / (24 * h)
	if got := d.Mean(0, 24*h); math.Abs(got-want) > 1e-9*want {
		t.Errorf("mean of the day with spikes: %g, want %g", got, want)
	}
	for _, c := range [][2]int64{{0, 15_000}, {12*h - 7_000, 12*h + 8_000}, {13*h - 1, 14*h + 1}, {5 * h, 47 * h}} {
		const step = 10
		sum := 0.0
		for a := c[0]; a < c[1]; a += step {
			b := min(a+step, c[1])
			sum += d.At((a+b)/2) * float64(b-a)
		}
		ref := sum / float64(c[1]-c[0])
		if got := d.Mean(c[0], c[1]); math.Abs(got-ref) > 1e-6*ref {
			t.Errorf("mean over [%d, %d): %g, the 10 ms sum %g", c[0], c[1], got, ref)
		}
	}
}

// FirstOutside jumps over the times where the rate cannot have left the
// band: it must find the time a scan of every step finds, for diurnal
// curves with spikes, rate points with spikes and a constant rate with a
// spike, bands around the rate and steps off the curve's changes.
func TestFirstOutsideIsTheScan(t *testing.T) {
	const h = 3600_000
	spikes := []Spike{{StartMs: 5*h + 1234, LengthMs: 2 * h, Factor: 1.7}, {StartMs: 30 * h, LengthMs: 20 * 60_000, Factor: 0.5}}
	loads := []Load{
		{Base: 2000, Amplitude: 1000, PeakMs: 14 * h},
		{Base: 2000, Amplitude: 1000, PeakMs: 14 * h, Spikes: spikes},
		{Base: 500, Amplitude: 500, PeakMs: 3 * h, PeriodMs: 5 * h, Spikes: spikes},
		{Points: []Point{{AtMs: 0, Rate: 100}, {AtMs: 2*h + 7, Rate: 180}, {AtMs: 9 * h, Rate: 95}, {AtMs: 20 * h, Rate: 0}}, Spikes: spikes},
		{Base: 300, Spikes: spikes},
	}
	checked := 0
	for li, l := range loads {
		for _, band := range [][2]float64{{1800, 2200}, {1000, 2200}, {2000, 3300}, {90, 150}, {0.001, 1e9}, {250, 400}, {2500, 2501}} {
			for _, step := range []int64{15_000, 60_000, 7_001} {
				for _, from := range []int64{0, 15_000, 6*h + 3, 29 * h} {
					until := from + 48*h
					want := from
					for want < until {
						if r := l.At(want); r < band[0] || r > band[1] {
							break
						}
						want += step
					}
					got := l.FirstOutside(from, step, until, band[0], band[1])
					if got != want {
						t.Fatalf("load %d, band %v, step %d, from %d: first outside at %d, the scan says %d", li, band, step, from, got, want)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d cases", checked)
}

// PieceEnd cuts a diurnal curve where the rate has moved by at most the
// tolerance (never past a change): checked against the rate at every
// second of each piece.
func TestPieceEndKeepsTheRateWithinTolerance(t *testing.T) {
	const h = 3600_000
	l := Load{Base: 2000, Amplitude: 1000, PeakMs: 14 * h, Spikes: []Spike{{StartMs: 5*h + 1234, LengthMs: 2 * h, Factor: 1.7}}}
	pieces := 0
	for a := int64(0); a < 48*h; pieces++ {
		b := l.PieceEnd(a, 48*h, 15_000, 0.01)
		if b <= a {
			t.Fatalf("piece from %d ends at %d", a, b)
		}
		r0 := l.At(a)
		for x := a; x < b; x += 1000 {
			if r := l.At(x); math.Abs(r-r0) > 0.01*r0+1e-9 {
				t.Fatalf("piece [%d, %d): rate %g at %d, %g at its start", a, b, r, x, r0)
			}
		}
		a = b
	}
	// About 4 x amplitude / (1% of the rate) a day: far fewer than the
	// 5,760 periods of 15 s in two days.
	if pieces > 1500 {
		t.Errorf("%d pieces over two days", pieces)
	}
	t.Logf("%d pieces over two days", pieces)
}

// Floor is at or below every positive rate a curve takes: by hand for
// each shape, and checked against the curve itself every minute of two
// days (the rate at the minute and the mean over it).
func TestLoadFloor(t *testing.T) {
	const h = 3600_000
	for _, c := range []struct {
		name string
		l    Load
		want float64
	}{
		{"constant", Load{Base: 30}, 30},
		// 60 +- 40: the trough is 20.
		{"diurnal", Load{Base: 60, Amplitude: 40, PeakMs: 14 * h}, 20},
		// A half-traffic window takes the trough to 10; a launch at 2x
		// raises nothing below it.
		{"diurnal and spikes", Load{Base: 60, Amplitude: 40, Spikes: []Spike{{StartMs: 2 * h, LengthMs: 3 * h, Factor: 0.5}, {StartMs: 30 * h, LengthMs: h, Factor: 2}}}, 10},
		// The lowest positive point: 0 is no rate to serve.
		{"points", Load{Points: []Point{{0, 0}, {h, 5}, {2 * h, 3}, {3 * h, 8}}}, 3},
		// A trough at 0 comes as near it as it likes: no floor.
		{"trough at zero", Load{Base: 50, Amplitude: 50}, 0},
	} {
		f := c.l.Floor()
		if math.Abs(f-c.want) > 1e-9 {
			t.Errorf("%s: floor %g, want %g", c.name, f, c.want)
		}
		for m := int64(0); m < 48*60; m++ {
			a := m * 60_000
			for _, r := range []float64{c.l.At(a), c.l.Mean(a, a+60_000)} {
				if r > 0 && r < f*(1-1e-12) {
					t.Errorf("%s: %g at minute %d is below the floor %g", c.name, r, m, f)
				}
			}
		}
	}
}

// Drift is the diurnal curve's steepest move: 300/s of amplitude over a
// day moves at most 300 x 2 pi / 86,400 s = 0.0218/s a second, 0.327
// in 15 s, twice that under a spike of 2 (from 1 h for 10 min); a curve
// of points does not drift between its points.
func TestLoadDriftByHand(t *testing.T) {
	l := Load{Base: 1000, Amplitude: 300, Spikes: []Spike{{StartMs: 3_600_000, LengthMs: 600_000, Factor: 2}}}
	require.InDelta(t, 300*2*math.Pi/86_400*15, l.Drift(0, 15_000), 1e-12)
	require.InDelta(t, 0.3272, l.Drift(0, 15_000), 1e-4)
	require.InDelta(t, 2*0.3272, l.Drift(3_600_000, 15_000), 2e-4)
	require.Zero(t, Load{Points: []Point{{AtMs: 0, Rate: 5}, {AtMs: 60_000, Rate: 9}}}.Drift(0, 15_000))
}
