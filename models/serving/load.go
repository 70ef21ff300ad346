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

// Floor is a rate at or below every positive rate the curve takes, and
// every positive mean over a piece of it that no change cuts: the lowest
// positive base, trough or point, times the spike factors below 1. It is
// 0 when there is no such rate above 0 (a diurnal trough at 0).
func (l Load) Floor() float64 {
	r := l.Base - l.Amplitude
	if len(l.Points) > 0 {
		r = 0
		for _, p := range l.Points {
			if p.Rate > 0 && (r == 0 || p.Rate < r) {
				r = p.Rate
			}
		}
	}
	for _, s := range l.Spikes {
		if s.Factor > 0 && s.Factor < 1 {
			r *= s.Factor
		}
	}
	return max(r, 0)
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

// day is the diurnal curve's period, ms.
func (l Load) day() int64 {
	if l.PeriodMs == 0 {
		return 24 * 3600 * 1000
	}
	return l.PeriodMs
}

// NextChange is the first time after t at which the curve may jump: a
// spike's start or end, or a rate point (math.MaxInt64 when none is
// left). Between two such times it is constant or one diurnal piece.
func (l Load) NextChange(t int64) int64 {
	next := int64(math.MaxInt64)
	if len(l.Points) > 0 {
		if i := sort.Search(len(l.Points), func(i int) bool { return l.Points[i].AtMs > t }); i < len(l.Points) {
			next = l.Points[i].AtMs
		}
	}
	for _, s := range l.Spikes {
		if s.StartMs > t {
			next = min(next, s.StartMs)
		} else if e := s.StartMs + s.LengthMs; e > t {
			next = min(next, e)
		}
	}
	return next
}

// Drift is the most the rate moves in dt ms from t, before
// NextChange(t): a diurnal curve's steepest slope (its amplitude's) by
// the spikes at t; 0 for a curve of points or a constant.
func (l Load) Drift(t, dt int64) float64 {
	return l.Amplitude * 2 * math.Pi / float64(l.day()) * float64(dt) * l.Factor(t)
}

// Factor is the product of the spike factors at t (1 outside every
// spike): it holds until NextChange(t).
func (l Load) Factor(t int64) float64 {
	f := 1.0
	for _, s := range l.Spikes {
		if t >= s.StartMs && t < s.StartMs+s.LengthMs {
			f *= s.Factor
		}
	}
	return f
}

// smooth reports whether the curve moves between its changes (a diurnal
// curve); otherwise it is constant between them.
func (l Load) smooth() bool { return len(l.Points) == 0 && l.Amplitude > 0 }

// Steady reports whether the rate is the same at every time: a constant
// rate without spikes.
func (l Load) Steady() bool { return !l.smooth() && len(l.Points) == 0 && len(l.Spikes) == 0 }

// FirstOutside is the first of the times from, from+step, from+2 step,
// ... at which the rate is outside [lo, hi] or that is at or after until. It evaluates the rate only where it may have left the
// band: past the next change, and for a diurnal piece past the time its
// largest slope needs to cover the rate's margin, so a stretch costs
// evaluations per change and per crossing, not per step.
func (l Load) FirstOutside(from, step, until int64, lo, hi float64) int64 {
	if step <= 0 {
		step = 1
	}
	t := from
	for t < until {
		r := l.At(t)
		if r < lo || r > hi {
			return t
		}
		// The first time not known to be inside.
		bound := min(until, l.NextChange(t))
		if l.smooth() {
			slope := l.Drift(t, 1) // rate per ms
			margin := min(r-lo, hi-r) - 1e-9*max(math.Abs(hi), 1)
			safe := int64(0)
			if margin > 0 {
				safe = int64(math.Min(margin/slope, float64(until-t)))
			}
			bound = min(bound, t+safe+1)
		}
		j := max(1, (bound-t+step-1)/step)
		t += j * step
	}
	return t
}

// PieceEnd is where an interval from a (at most to) ends so that the rate
// within it moves by at most tol relatively (with a floor of minMs, and
// never past a change): a constant stretch is one piece, a diurnal one a
// piece per tol of the rate's change, bounded with its slope at a and its
// largest curvature.
func (l Load) PieceEnd(a, to, minMs int64, tol float64) int64 {
	b := min(to, l.NextChange(a))
	if !l.smooth() || b <= a+minMs {
		return b
	}
	w := 2 * math.Pi / float64(l.day())
	f := l.Factor(a)
	r := l.At(a)
	s1 := f * l.Amplitude * w * math.Abs(math.Sin(w*float64(a-l.PeakMs)))
	s2 := f * l.Amplitude * w * w
	// |r(a+h) - r(a)| <= s1 h + s2 h^2 / 2 <= tol r.
	h := (-s1 + math.Sqrt(s1*s1+2*s2*tol*r)) / s2
	return min(b, a+max(minMs, int64(h)))
}
