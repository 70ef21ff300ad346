package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Duration is a length of time written as Go does ("90s", "1h30m") or
// with a day prefix ("3d", "1d12h").
type Duration struct{ time.Duration }

// ParseDuration reads a Duration (strict.ParseDuration): Go's form
// ("90s", "1h30m"), optionally after a number of days ("3d", "1d12h").
func ParseDuration(s string) (time.Duration, error) { return strict.ParseDuration(s) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"30m\", got %s", b)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Duration.String()) }

// Millis is the duration in milliseconds.
func (d Duration) Millis() int64 { return d.Duration.Milliseconds() }

// NumDist is a number or a distribution of numbers: a scalar (4), or a
// mapping {values: [1, 2, 4], weights: [...]} or {min: 1, max: 8} (uniform
// over the whole numbers from min to max).
type NumDist struct {
	Value   *float64  `json:"value,omitempty"`
	Values  []float64 `json:"values,omitempty"`
	Weights []float64 `json:"weights,omitempty"`
	Min     *float64  `json:"min,omitempty"`
	Max     *float64  `json:"max,omitempty"`
}

// UnmarshalJSON accepts the scalar and the mapping form.
func (n *NumDist) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '{' {
		var v float64
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("expected a number or a mapping, got %s", b)
		}
		*n = NumDist{Value: &v}
		return nil
	}
	type plain NumDist // no UnmarshalJSON: decodes the mapping form
	return strictJSON(b, (*plain)(n))
}

// strictJSON decodes b into v, rejecting unknown fields.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// sampler builds the distribution; integer requires whole values.
func (n *NumDist) sampler(integer bool) (models.Sampler, error) {
	check := func(v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%g is not a non-negative number", v)
		}
		if integer && v != math.Trunc(v) {
			return fmt.Errorf("%g is not a whole number", v)
		}
		return nil
	}
	forms := 0
	if n.Value != nil {
		forms++
	}
	if len(n.Values) > 0 {
		forms++
	}
	if n.Min != nil || n.Max != nil {
		forms++
	}
	if forms != 1 {
		return nil, fmt.Errorf("give exactly one of value, values (with optional weights) or min and max")
	}
	switch {
	case n.Value != nil:
		if err := check(*n.Value); err != nil {
			return nil, err
		}
		return models.Constant{Value: *n.Value}, nil
	case len(n.Values) > 0:
		for _, v := range n.Values {
			if err := check(v); err != nil {
				return nil, err
			}
		}
		total := 0.0
		for _, w := range n.Weights {
			total += w
		}
		if math.IsInf(total, 0) {
			return nil, fmt.Errorf("the weights sum past the largest number; scale them down")
		}
		return models.NewChoice(n.Values, n.Weights)
	default:
		if n.Min == nil || n.Max == nil {
			return nil, fmt.Errorf("a range needs both min and max")
		}
		lo, hi := *n.Min, *n.Max
		if err := check(lo); err != nil {
			return nil, err
		}
		if err := check(hi); err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, fmt.Errorf("max %g is below min %g", hi, lo)
		}
		var vals []float64
		for v := math.Ceil(lo); v <= hi && len(vals) <= 4096; v++ {
			vals = append(vals, v)
		}
		if len(vals) == 0 || len(vals) > 4096 {
			return nil, fmt.Errorf("the range %g..%g must hold 1 to 4096 whole numbers", lo, hi)
		}
		return models.NewChoice(vals, nil)
	}
}

// highest is the largest value the distribution can give.
func (n *NumDist) highest() float64 {
	hi := math.Inf(-1)
	if n.Value != nil {
		hi = *n.Value
	}
	for i, v := range n.Values {
		if len(n.Weights) != len(n.Values) || n.Weights[i] > 0 {
			hi = max(hi, v)
		}
	}
	if n.Max != nil {
		hi = max(hi, math.Floor(*n.Max))
	}
	return hi
}

// DurationDist is a duration or a distribution of durations: a scalar
// ("30m") or {distribution: lognormal, median: 2h, sigma: 1.0, max: 48h}.
// Distributions: constant (value), exponential (mean), lognormal (median,
// sigma), uniform (min, max), pareto (scale, alpha). min and max clamp the
// others.
type DurationDist struct {
	Distribution string    `json:"distribution,omitempty"`
	Value        *Duration `json:"value,omitempty"`
	Mean         *Duration `json:"mean,omitempty"`
	Median       *Duration `json:"median,omitempty"`
	Sigma        float64   `json:"sigma,omitempty"`
	Scale        *Duration `json:"scale,omitempty"`
	Alpha        float64   `json:"alpha,omitempty"`
	Min          *Duration `json:"min,omitempty"`
	Max          *Duration `json:"max,omitempty"`
}

// UnmarshalJSON accepts the scalar and the mapping form.
func (d *DurationDist) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var v Duration
		if err := v.UnmarshalJSON(b); err != nil {
			return err
		}
		*d = DurationDist{Distribution: "constant", Value: &v}
		return nil
	}
	type plain DurationDist
	return strictJSON(b, (*plain)(d))
}

// sampler builds the distribution, in milliseconds. On an error it names
// the field at fault (relative to the distribution: "sigma", "max").
//
// Job durations are whole milliseconds from 1 ms to a century
// (maxDurationMs); every parameter must lie in that range. The rule for
// the shapes: a distribution is refused when more than maxClampedShare
// (10%) of its samples would fall outside what gpuplan represents (below
// 1 ms, where each would become 1 ms, unless min is given; above a
// century, unless max is given), or, when min or max is given, when more
// than half of its samples would be clamped to them (it would then be
// mostly its clamps). The shares come from the CDFs:
//
//	exponential (mean m):           P(X < x) = 1 - exp(-x/m)
//	lognormal (median m, sigma s):  P(X < x) = Phi(ln(x/m) / s)
//	pareto (scale xm, alpha a):     P(X > x) = (xm/x)^a for x >= xm
//
// A lognormal's sigma is at most maxSigma (10): one standard deviation is
// then a factor of 22 000. Samples above a century are clamped to it.
func (d *DurationDist) sampler() (models.Sampler, string, error) {
	ms := func(x *Duration, name string) (float64, error) {
		if x == nil {
			return 0, fmt.Errorf("%s distribution needs %s", d.Distribution, name)
		}
		return durationMs(x, name)
	}
	var s models.Sampler
	// below and above are the distribution's CDF at x and its tail past x;
	// worst names the parameter that makes the tails heavy.
	var below, above func(x float64) float64
	worst := ""
	switch d.Distribution {
	case "", "constant":
		v, err := ms(d.Value, "value")
		if err != nil {
			return nil, "value", err
		}
		s = models.Constant{Value: v}
	case "exponential":
		m, err := ms(d.Mean, "mean")
		if err != nil {
			return nil, "mean", err
		}
		s = models.Exponential{MeanValue: m}
		below = func(x float64) float64 { return -math.Expm1(-x / m) }
		above = func(x float64) float64 { return math.Exp(-x / m) }
		worst = "mean"
	case "lognormal":
		m, err := ms(d.Median, "median")
		if err != nil {
			return nil, "median", err
		}
		if !(d.Sigma > 0) {
			return nil, "sigma", fmt.Errorf("lognormal distribution needs a positive sigma")
		}
		s = models.LogNormal{Median: m, Sigma: d.Sigma}
		sigma := d.Sigma
		below = func(x float64) float64 { return 0.5 * math.Erfc(-math.Log(x/m)/sigma/math.Sqrt2) }
		above = func(x float64) float64 { return 0.5 * math.Erfc(math.Log(x/m)/sigma/math.Sqrt2) }
		worst = "sigma"
	case "uniform":
		lo, err := ms(d.Min, "min")
		if err != nil {
			return nil, "min", err
		}
		hi, err := ms(d.Max, "max")
		if err != nil {
			return nil, "max", err
		}
		if hi < lo {
			return nil, "max", fmt.Errorf("max is below min")
		}
		return models.Uniform{Min: lo, Max: hi}, "", nil
	case "pareto":
		x, err := ms(d.Scale, "scale")
		if err != nil {
			return nil, "scale", err
		}
		if !(d.Alpha > 0) {
			return nil, "alpha", fmt.Errorf("pareto distribution needs a positive alpha")
		}
		s = models.Pareto{Xm: x, Alpha: d.Alpha}
		alpha := d.Alpha
		below = func(v float64) float64 {
			if v <= x {
				return 0
			}
			return -math.Expm1(alpha * math.Log(x/v))
		}
		above = func(v float64) float64 {
			if v <= x {
				return 1
			}
			return math.Exp(alpha * math.Log(x/v))
		}
		worst = "alpha"
	default:
		return nil, "distribution", fmt.Errorf("unknown distribution %q (known: constant, exponential, lognormal, uniform, pareto)", d.Distribution)
	}
	var lo, hi float64
	if d.Min != nil {
		v, err := durationMs(d.Min, "min")
		if err != nil {
			return nil, "min", err
		}
		lo = v
	}
	if d.Max != nil {
		v, err := durationMs(d.Max, "max")
		if err != nil {
			return nil, "max", err
		}
		hi = v
	}
	if hi != 0 && hi < lo {
		return nil, "max", fmt.Errorf("max is below min")
	}
	if below != nil {
		what := d.describe()
		var out float64
		var where []string
		if lo == 0 {
			if p := below(1); p > 0 {
				out += p
				where = append(where, sharePercent(p)+" below 1 ms, each made 1 ms")
			}
		}
		if hi == 0 {
			if p := above(maxDurationMs); p > 0 {
				out += p
				where = append(where, sharePercent(p)+" above 100 years")
			}
		}
		if out > maxClampedShare {
			return nil, worst, fmt.Errorf("%s puts %s of the durations outside 1 ms to 100 years, what gpuplan represents (%s); at most %s may be",
				what, sharePercent(out), strings.Join(where, "; "), sharePercent(maxClampedShare))
		}
		var pLo, pHi float64
		if lo != 0 {
			pLo = below(lo)
		}
		if hi != 0 {
			pHi = above(hi)
		}
		if pLo+pHi > 0.5 {
			field, share, bound := "max", pHi, "max "+d.Max.Duration.String()
			if pLo > pHi {
				field, share, bound = "min", pLo, "min "+d.Min.Duration.String()
			}
			return nil, field, fmt.Errorf("%s would clamp %s of the durations to min or max (%s to %s): the distribution would be mostly its clamps", what, sharePercent(pLo+pHi), sharePercent(share), bound)
		}
		if d.Distribution == "lognormal" && d.Sigma > maxSigma {
			return nil, "sigma", fmt.Errorf("sigma %g is more than %d: one standard deviation would be a factor of more than 22000", d.Sigma, maxSigma)
		}
	}
	if hi == 0 && below != nil {
		hi = maxDurationMs
	}
	if lo != 0 || hi != 0 {
		s = models.Clamped{S: s, Min: lo, Max: hi}
	}
	return s, "", nil
}

// durationMs is a distribution parameter in ms, from 1 ms to a century.
func durationMs(x *Duration, name string) (float64, error) {
	switch {
	case x.Duration <= 0:
		return 0, fmt.Errorf("%s must be positive", name)
	case x.Duration < time.Millisecond:
		return 0, fmt.Errorf("%s %s is below 1 ms, the shortest duration gpuplan represents", name, x.Duration)
	case x.Millis() > maxDurationMs:
		return 0, fmt.Errorf("%s %s is more than 100 years", name, x.Duration)
	}
	return float64(x.Millis()), nil
}

// describe names the distribution and its parameters, for errors.
func (d *DurationDist) describe() string {
	str := func(x *Duration) string {
		if x == nil {
			return "?"
		}
		return x.Duration.String()
	}
	switch d.Distribution {
	case "exponential":
		return "exponential with mean " + str(d.Mean)
	case "lognormal":
		return fmt.Sprintf("lognormal with median %s and sigma %g", str(d.Median), d.Sigma)
	case "pareto":
		return fmt.Sprintf("pareto with scale %s and alpha %g", str(d.Scale), d.Alpha)
	}
	return d.Distribution
}
