package serving

import (
	"math"
	"testing"
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
