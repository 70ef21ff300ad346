package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
)

// Duration is a length of time written as Go does ("90s", "1h30m") or
// with a day prefix ("3d", "1d12h").
type Duration struct{ time.Duration }

// ParseDuration reads a Duration.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days float64
	if i := strings.IndexByte(s, 'd'); i > 0 {
		v, err := strconv.ParseFloat(s[:i], 64)
		if err == nil {
			days = v
			s = s[i+1:]
		}
	}
	var rest time.Duration
	if s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (examples: 90s, 30m, 6h, 3d)", s)
		}
		rest = d
	}
	return time.Duration(days*float64(24*time.Hour)) + rest, nil
}

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

// sampler builds the distribution, in milliseconds.
func (d *DurationDist) sampler() (models.Sampler, error) {
	ms := func(x *Duration, name string) (float64, error) {
		if x == nil {
			return 0, fmt.Errorf("%s distribution needs %s", d.Distribution, name)
		}
		if x.Duration <= 0 {
			return 0, fmt.Errorf("%s must be positive", name)
		}
		return float64(x.Millis()), nil
	}
	var s models.Sampler
	switch d.Distribution {
	case "", "constant":
		v, err := ms(d.Value, "value")
		if err != nil {
			return nil, err
		}
		s = models.Constant{Value: v}
	case "exponential":
		m, err := ms(d.Mean, "mean")
		if err != nil {
			return nil, err
		}
		s = models.Exponential{MeanValue: m}
	case "lognormal":
		m, err := ms(d.Median, "median")
		if err != nil {
			return nil, err
		}
		if d.Sigma <= 0 {
			return nil, fmt.Errorf("lognormal distribution needs a positive sigma")
		}
		s = models.LogNormal{Median: m, Sigma: d.Sigma}
	case "uniform":
		lo, err := ms(d.Min, "min")
		if err != nil {
			return nil, err
		}
		hi, err := ms(d.Max, "max")
		if err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, fmt.Errorf("max is below min")
		}
		return models.Uniform{Min: lo, Max: hi}, nil
	case "pareto":
		x, err := ms(d.Scale, "scale")
		if err != nil {
			return nil, err
		}
		if d.Alpha <= 0 {
			return nil, fmt.Errorf("pareto distribution needs a positive alpha")
		}
		s = models.Pareto{Xm: x, Alpha: d.Alpha}
	default:
		return nil, fmt.Errorf("unknown distribution %q (known: constant, exponential, lognormal, uniform, pareto)", d.Distribution)
	}
	var lo, hi float64
	if d.Min != nil {
		lo = float64(d.Min.Millis())
	}
	if d.Max != nil {
		hi = float64(d.Max.Millis())
	}
	if hi != 0 && hi < lo {
		return nil, fmt.Errorf("max is below min")
	}
	if lo != 0 || hi != 0 {
		s = models.Clamped{S: s, Min: lo, Max: hi}
	}
	return s, nil
}
