package scenarios

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/skypilot"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// LifetimeSpec is a distribution of times: a spot node's time to
// preemption (interruptions.lifetime) or the time until a reclaimed
// pool's capacity is back (interruptions.outage). Give one.
type LifetimeSpec struct {
	// Exponential: memoryless, with a mean.
	Exponential *ExponentialSpec `json:"exponential,omitempty"`
	// Weibull: shape below 1 is a hazard that falls with age (many early
	// losses and a long tail, as the spot traces show).
	Weibull *WeibullSpec `json:"weibull,omitempty"`
	// HyperExponential: a mixture of exponential phases.
	HyperExponential *HyperExponentialSpec `json:"hyperexponential,omitempty"`
	// Trace draws from observed times: a SkyPilot spot-traces preemption
	// file of one instance (.json: for a lifetime its runs held, for an
	// outage its runs without; a run cut by the file's end is left out),
	// or a CSV file with a seconds column.
	Trace string `json:"trace,omitempty"`
}

// ExponentialSpec is an exponential distribution's mean.
type ExponentialSpec struct {
	Mean Duration `json:"mean"`
}

// WeibullSpec is a Weibull distribution: shape k and scale lambda.
type WeibullSpec struct {
	Shape float64  `json:"shape"`
	Scale Duration `json:"scale"`
}

// HyperExponentialSpec is a mixture: with probability weight a time is
// exponential with the phase's mean. The weights add up to 1.
type HyperExponentialSpec struct {
	Phases []PhaseSpec `json:"phases"`
}

// PhaseSpec is one phase of a hyperexponential.
type PhaseSpec struct {
	Weight float64  `json:"weight"`
	Mean   Duration `json:"mean"`
}

// Bounds of a lifetime distribution's parameters.
const (
	minWeibullShape = 0.1
	maxWeibullShape = 20
	maxPhases       = 8
)

// lifetimeDist builds a LifetimeSpec (times in hours).
func (s interrupter) lifetimeDist(at string, l *LifetimeSpec) (models.LifetimeDist, error) {
	n := 0
	for _, set := range []bool{l.Exponential != nil, l.Weibull != nil, l.HyperExponential != nil, l.Trace != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, s.errAt(at, "give one of exponential, weibull, hyperexponential or trace")
	}
	hours := func(field string, d Duration) (float64, error) {
		if d.Duration < time.Millisecond || d.Millis() > maxDurationMs {
			return 0, s.errAt(field, "%s is not from 1 ms to 100 years", d.Duration)
		}
		return d.Hours(), nil
	}
	switch {
	case l.Exponential != nil:
		m, err := hours(at+".exponential.mean", l.Exponential.Mean)
		if err != nil {
			return nil, err
		}
		return models.Exponential{MeanValue: m}, nil
	case l.Weibull != nil:
		w := l.Weibull
		if !(w.Shape >= minWeibullShape && w.Shape <= maxWeibullShape) {
			return nil, s.errAt(at+".weibull.shape", "%g is not from %g to %g", w.Shape, minWeibullShape, float64(maxWeibullShape))
		}
		sc, err := hours(at+".weibull.scale", w.Scale)
		if err != nil {
			return nil, err
		}
		return models.Weibull{Shape: w.Shape, Scale: sc}, nil
	case l.HyperExponential != nil:
		ph := l.HyperExponential.Phases
		if len(ph) == 0 || len(ph) > maxPhases {
			return nil, s.errAt(at+".hyperexponential.phases", "has %d phases; give 1 to %d", len(ph), maxPhases)
		}
		h := models.HyperExponential{}
		sum := 0.0
		for i, p := range ph {
			f := fmt.Sprintf("%s.hyperexponential.phases[%d]", at, i)
			if !(p.Weight > 0 && p.Weight <= 1) {
				return nil, s.errAt(f+".weight", "%g is not a probability above 0", p.Weight)
			}
			m, err := hours(f+".mean", p.Mean)
			if err != nil {
				return nil, err
			}
			sum += p.Weight
			h.Weights, h.Means = append(h.Weights, p.Weight), append(h.Means, m)
		}
		if math.Abs(sum-1) > 1e-6 {
			return nil, s.errAt(at+".hyperexponential.phases", "the weights add up to %g, not 1", sum)
		}
		return h, nil
	}
	return nil, nil // the trace: read by traceDist
}

// traceDist reads the observed times of l.Trace: outage false reads the
// times held, true the times without.
func (s interrupter) traceDist(at string, l *LifetimeSpec, outage bool) (models.LifetimeDist, string, error) {
	path := s.path(l.Trace)
	var xs []float64
	if strings.HasSuffix(strings.ToLower(l.Trace), ".json") {
		tr, err := skypilot.Read(path)
		if err != nil {
			return nil, "", err
		}
		if tr.Peak != 1 {
			return nil, "", s.errAt(at+".trace", "%s holds up to %d instances; lifetimes come from a trace of one instance (a run held is one node's life)", l.Trace, tr.Peak)
		}
		xs = tr.Runs(!outage)
	} else {
		r, closer, err := traces.OpenMaybeGzip(path)
		if err != nil {
			return nil, "", err
		}
		xs, err = readSeconds(path, r)
		_ = closer()
		if err != nil {
			return nil, "", err
		}
	}
	what := "lifetimes"
	if outage {
		what = "outages"
	}
	d, err := models.NewEmpirical(xs)
	if err != nil {
		return nil, "", s.errAt(at+".trace", "%s: %v (no completed %s)", l.Trace, err, what)
	}
	return d, fmt.Sprintf("%d %s observed in %s", len(xs), what, l.Trace), nil
}

// spotModel builds interruptions.lifetime, .outage and .wave into p, and
// with no model given (no rate, mtbf, band, trace or lifetime) the
// measured preset for the pool's GPU model, whose outage and wave the
// spec's replace. It returns whether it set the lifetime.
func (s interrupter) spotModel(at string, spec *InterruptionSpec, res resources, modelGiven bool, p *capacity.Process) (bool, error) {
	var in InterruptionSpec
	if spec != nil {
		in = *spec
	}
	var why []string
	setLife := false
	switch {
	case in.Lifetime != nil:
		d, w, err := s.dist(at+".lifetime", in.Lifetime, false)
		if err != nil {
			return false, err
		}
		p.Lifetime, setLife = d, true
		why = append(why, "time to preemption "+w)
	case !modelGiven:
		gpu := ""
		if res.ok {
			gpu = res.it.GPUModel
		}
		pre, text := models.MeasuredSpotPreset(gpu)
		p.Lifetime, setLife = pre.Lifetime, true
		if in.Outage == nil {
			p.Outage = pre.Outage
		}
		if in.Wave == nil {
			p.Wave = pre.Wave
		}
		why = append(why, text)
	}
	if in.Outage != nil {
		d, w, err := s.dist(at+".outage", in.Outage, true)
		if err != nil {
			return false, err
		}
		p.Outage = d
		why = append(why, "capacity back after "+w)
	}
	if in.Wave != nil {
		if w := *in.Wave; !(w >= 0 && w <= 1) {
			return false, s.errAt(at+".wave", "%g is not a chance from 0 to 1", w)
		}
		p.Wave = *in.Wave
		why = append(why, fmt.Sprintf("each other node of the pool reclaimed with one at %.0f%%", p.Wave*100))
	}
	if len(why) > 0 {
		if p.Assumption != "" {
			p.Assumption += "; "
		}
		p.Assumption += strings.Join(why, "; ")
	}
	return setLife, nil
}

// dist is a LifetimeSpec's distribution and its description.
func (s interrupter) dist(at string, l *LifetimeSpec, outage bool) (models.LifetimeDist, string, error) {
	d, err := s.lifetimeDist(at, l)
	if err != nil {
		return nil, "", err
	}
	if d == nil {
		return s.traceDist(at, l, outage)
	}
	return d, fmt.Sprintf("%s (mean %.3g h)", d, d.Mean()), nil
}

// readSeconds reads a CSV file's seconds column: observed times, each
// positive.
func readSeconds(file string, r io.Reader) ([]float64, error) {
	t, _, err := traces.OpenTable(file, r, '#', "the file is empty; it needs a header row with a seconds column")
	if err != nil {
		return nil, err
	}
	if err := t.Require("required column is missing", "seconds"); err != nil {
		return nil, err
	}
	var out []float64
	err = t.Each(func(rec []string) error {
		ms, err := traces.Seconds(t.Get(rec, "seconds"), false)
		if err != nil {
			return t.Bad("seconds", "%v", err)
		}
		if ms <= 0 {
			return t.Bad("seconds", "a time observed is positive")
		}
		out = append(out, float64(ms)/3.6e6)
		return nil
	})
	return out, err
}
