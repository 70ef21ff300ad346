package serving

import (
	"fmt"
	"math"
	"sort"
)

// Spike multiplies the rate over a window (a flash sale: 5x for two
// hours).
type Spike struct {
	StartMs, LengthMs int64
	Factor            float64
}

// Point is one sample of a rate curve: requests per second from AtMs.
type Point struct {
	AtMs int64
	Rate float64
}

// Load is a request-rate curve, requests per second at a time in ms:
// constant (Base), diurnal (Base + Amplitude x cos(2 pi (t - Peak)/day)),
// or samples (held from each point to the next; the last held after it),
// times any spikes that cover the time.
type Load struct {
	Base, Amplitude float64
	// PeakMs is when the diurnal curve peaks within its day (ms after
	// midnight); PeriodMs is the day (default 24 h).
	PeakMs, PeriodMs int64
	Points           []Point
	Spikes           []Spike
}

// Validate refuses a curve that would give a negative or non-finite rate,
// points out of time order, a spike of no length or a negative factor.
func (l Load) Validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !finite(l.Base) || !finite(l.Amplitude) || l.Base < 0 || l.Amplitude < 0 {
		return fmt.Errorf("rate: base %g and amplitude %g must be finite and not negative", l.Base, l.Amplitude)
	}
	if l.Amplitude > l.Base {
		return fmt.Errorf("rate: an amplitude of %g above the base %g would make the rate negative at the trough", l.Amplitude, l.Base)
	}
	if l.PeriodMs < 0 {
		return fmt.Errorf("rate: a period of %d ms", l.PeriodMs)
	}
	for i, p := range l.Points {
		if !finite(p.Rate) || p.Rate < 0 {
			return fmt.Errorf("rate point %d: %g requests/s is not a rate", i, p.Rate)
		}
		if i > 0 && p.AtMs <= l.Points[i-1].AtMs {
			return fmt.Errorf("rate point %d: at %d ms, not after the point before (%d ms): the points must be in time order", i, p.AtMs, l.Points[i-1].AtMs)
		}
	}
	for i, s := range l.Spikes {
		if s.LengthMs <= 0 || !finite(s.Factor) || s.Factor < 0 {
			return fmt.Errorf("spike %d: length %d ms and factor %g: the length must be positive, the factor finite and not negative", i, s.LengthMs, s.Factor)
		}
	}
	return nil
}

// At is the rate at t (ms).
func (l Load) At(t int64) float64 {
	r := l.Base
	if len(l.Points) > 0 {
		i := sort.Search(len(l.Points), func(i int) bool { return l.Points[i].AtMs > t }) - 1
		r = 0
		if i >= 0 {
			r = l.Points[i].Rate
		}
	} else if l.Amplitude > 0 {
		day := l.PeriodMs
		if day == 0 {
			day = 24 * 3600 * 1000
		}
		r += l.Amplitude * math.Cos(2*math.Pi*float64(t-l.PeakMs)/float64(day))
	}
	for _, s := range l.Spikes {
		if t >= s.StartMs && t < s.StartMs+s.LengthMs {
			r *= s.Factor
		}
	}
	return max(r, 0)
}

// Mean is the mean rate over [from, to). A constant or diurnal curve
// (with any spikes) is integrated exactly, piece by piece between the
// spikes' edges; sampled points by the midpoint rule on steps of at most a
// second (exact for points and spikes on whole seconds).
func (l Load) Mean(from, to int64) float64 {
	if to <= from {
		return l.At(from)
	}
	if len(l.Points) > 0 || l.Amplitude > l.Base {
		return l.sampledMean(from, to)
	}
	sum := 0.0
	for a := from; a < to; {
		// The piece up to the next spike edge: one spike factor over it.
		b := to
		f := 1.0
		for _, s := range l.Spikes {
			if a >= s.StartMs && a < s.StartMs+s.LengthMs {
				f *= s.Factor
				b = min(b, s.StartMs+s.LengthMs)
			} else if s.StartMs > a {
				b = min(b, s.StartMs)
			}
		}
		sum += f * l.integral(a, b)
		a = b
	}
	return sum / float64(to-from)
}

// integral is the diurnal curve's integral over [a, b), requests/s x ms.
func (l Load) integral(a, b int64) float64 {
	s := l.Base * float64(b-a)
	if l.Amplitude > 0 {
		day := l.PeriodMs
		if day == 0 {
			day = 24 * 3600 * 1000
		}
		w := 2 * math.Pi / float64(day)
		s += l.Amplitude / w * (math.Sin(w*float64(b-l.PeakMs)) - math.Sin(w*float64(a-l.PeakMs)))
	}
	return s
}

// sampledMean is the midpoint rule on steps of at most a second.
func (l Load) sampledMean(from, to int64) float64 {
	const step = 1000
	n := (to - from + step - 1) / step
	sum := 0.0
	for i := int64(0); i < n; i++ {
		a := from + i*step
		b := min(a+step, to)
		sum += l.At((a+b)/2) * float64(b-a)
	}
	return sum / float64(to-from)
}
