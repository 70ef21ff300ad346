package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// withSpotModel is capacityScenario with the spot pool's interruptions
// given as block lines (each indented under interruptions:).
func withSpotModel(lines ...string) string {
	block := "      failures: {mtbf: 1000h}\n      interruptions:\n"
	for _, l := range lines {
		block += "        " + l + "\n"
	}
	return strings.Replace(capacityScenario, "      failures: {mtbf: 1000h}\n", block, 1)
}

// spotProcess builds body (files under testdata/spot) and returns the
// spot pool's interruption process and the priced pool's assumption.
func spotProcess(t *testing.T, body string) (capacity.Process, string, error) {
	t.Helper()
	s, err := Parse("c.yaml", "testdata/spot", []byte(body))
	if err != nil {
		return capacity.Process{}, "", err
	}
	m, err := s.Cluster()
	if err != nil {
		return capacity.Process{}, "", err
	}
	return m.Capacity.Pools[1].Interruptions, m.Prices[1].Interruptions, nil
}

// Each way to give a lifetime, an outage and a wave reaches the pool's
// process as written (times in hours).
func TestSpotLifetimeSchema(t *testing.T) {
	p, why, err := spotProcess(t, withSpotModel(
		"lifetime: {weibull: {shape: 0.6, scale: 90m}}",
		"outage: {hyperexponential: {phases: [{weight: 0.8, mean: 30m}, {weight: 0.2, mean: 6h}]}}",
		"wave: 0.25"))
	require.NoError(t, err)
	require.Equal(t, models.Weibull{Shape: 0.6, Scale: 1.5}, p.Lifetime)
	require.Equal(t, models.HyperExponential{Weights: []float64{0.8, 0.2}, Means: []float64{0.5, 6}}, p.Outage)
	require.Equal(t, 0.25, p.Wave)
	require.Zero(t, p.RatePerHour)
	// Mean outage 0.8 x 0.5 + 0.2 x 6 = 1.6 h.
	require.Contains(t, why, "capacity back after")
	require.Contains(t, why, "mean 1.6 h")
	require.Contains(t, why, "at 25%")

	p, _, err = spotProcess(t, withSpotModel("lifetime: {exponential: {mean: 10h}}"))
	require.NoError(t, err)
	require.Equal(t, models.Exponential{MeanValue: 10}, p.Lifetime)
	require.Nil(t, p.Outage, "a lifetime given replaces the preset: no outage unless given")
	require.Zero(t, p.Wave)

	// An outage and a wave after a rate model: the rate stays.
	p, _, err = spotProcess(t, withSpotModel("mtbf: 4h", "outage: {exponential: {mean: 1h}}", "wave: 0.5"))
	require.NoError(t, err)
	require.Equal(t, 0.25, p.RatePerHour)
	require.Nil(t, p.Lifetime)
	require.Equal(t, models.Exponential{MeanValue: 1}, p.Outage)
	require.Equal(t, 0.5, p.Wave)

	// With no model, an outage or a wave given replaces the preset's own.
	p, _, err = spotProcess(t, withSpotModel("wave: 0"))
	require.NoError(t, err)
	require.Equal(t, models.MeasuredV100Lifetime, p.Lifetime)
	require.Equal(t, models.MeasuredV100Outage, p.Outage)
	require.Zero(t, p.Wave)
}

// A trace of one instance gives its runs held as lifetimes and its runs
// without as outages (one-instance.json: 3 and 5 min held, 2 and 1 min
// without; the last run, cut by the file's end, left out); a CSV gives
// its seconds.
func TestSpotLifetimeTrace(t *testing.T) {
	p, why, err := spotProcess(t, withSpotModel("lifetime: {trace: one-instance.json}", "outage: {trace: one-instance.json}"))
	require.NoError(t, err)
	require.Equal(t, models.Empirical{Values: []float64{3.0 / 60, 5.0 / 60}}, p.Lifetime)
	require.Equal(t, models.Empirical{Values: []float64{1.0 / 60, 2.0 / 60}}, p.Outage)
	require.Contains(t, why, "2 lifetimes observed in one-instance.json")
	require.Contains(t, why, "2 outages observed in one-instance.json")

	p, _, err = spotProcess(t, withSpotModel("lifetime: {trace: lifetimes.csv}"))
	require.NoError(t, err)
	require.Equal(t, models.Empirical{Values: []float64{0.5, 1.5}}, p.Lifetime)
}

// Bad interruption models are refused at their file:line:field.
func TestSpotLifetimeErrors(t *testing.T) {
	cases := []struct {
		lines []string
		want  string
	}{
		{[]string{"lifetime: {weibull: {shape: 0.05, scale: 2h}}"}, `c.yaml:18:37: spec.cluster.pools[1].interruptions.lifetime.weibull.shape: 0.05 is not from 0.1 to 20`},
		{[]string{"lifetime: {weibull: {shape: 0.6, scale: 0s}}"}, `c.yaml:18:49: spec.cluster.pools[1].interruptions.lifetime.weibull.scale: 0s is not from 1 ms to 100 years`},
		{[]string{"lifetime: {exponential: {mean: 1h}, weibull: {shape: 1, scale: 1h}}"}, `c.yaml:18:19: spec.cluster.pools[1].interruptions.lifetime: give one of exponential, weibull, hyperexponential or trace`},
		{[]string{"lifetime: {}"}, `spec.cluster.pools[1].interruptions.lifetime: give one of exponential, weibull, hyperexponential or trace`},
		{[]string{"lifetime: {hyperexponential: {phases: [{weight: 0.5, mean: 1h}, {weight: 0.4, mean: 2h}]}}"}, `c.yaml:18:47: spec.cluster.pools[1].interruptions.lifetime.hyperexponential.phases: the weights add up to 0.9, not 1`},
		{[]string{"lifetime: {hyperexponential: {phases: [{weight: 0, mean: 1h}, {weight: 1, mean: 2h}]}}"}, `spec.cluster.pools[1].interruptions.lifetime.hyperexponential.phases[0].weight: 0 is not a probability above 0`},
		{[]string{"lifetime: {hyperexponential: {phases: []}}"}, `spec.cluster.pools[1].interruptions.lifetime.hyperexponential.phases: has 0 phases; give 1 to 8`},
		{[]string{"lifetime: {weibul: {shape: 1, scale: 1h}}"}, `c.yaml:18:20: spec.cluster.pools[1].interruptions.lifetime.weibul: unknown field "weibul" (did you mean "weibull"?)`},
		{[]string{"mtbf: 4h", "lifetime: {exponential: {mean: 1h}}"}, `c.yaml:18:9: spec.cluster.pools[1].interruptions: give one of ratePerHour, mtbf, band, lifetime or a trace`},
		{[]string{"wave: 1.5"}, `spec.cluster.pools[1].interruptions.wave: 1.5 is not a chance from 0 to 1`},
		{[]string{"skypilot: one-instance.json", "outage: {exponential: {mean: 1h}}"}, `spec.cluster.pools[1].interruptions: a trace of interruptions brings its own times`},
		{[]string{"lifetime: {trace: two-instances.json}"}, `spec.cluster.pools[1].interruptions.lifetime.trace: two-instances.json holds up to 2 instances`},
		{[]string{"lifetime: {trace: bad-lifetimes.csv}"}, `bad-lifetimes.csv:3`},
		{[]string{"lifetime: {trace: missing.csv}"}, `missing.csv`},
	}
	for _, c := range cases {
		_, _, err := spotProcess(t, withSpotModel(c.lines...))
		require.Error(t, err, c.want)
		require.Contains(t, err.Error(), c.want)
		requireInputError(t, err)
	}
}
