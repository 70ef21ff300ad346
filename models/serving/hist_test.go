package serving

import (
	"math"
	"testing"
)

// The histogram's quantiles over the diurnal hour's cycles are within its
// 2% buckets of the exact mixture's, and the SLO share matches the CDF.
func TestHistogramMatchesMixture(t *testing.T) {
	var cycles []Cycle
	var weights []float64
	var h Histogram
	for i := 0; i < 60; i++ {
		rate := 1000 - 400*math.Cos(2*math.Pi*(float64(i)+0.5)/60)
		cy, _ := FluidCycle(rate, 4, bert)
		if i == 30 {
			cy.BacklogMs = 250 // one minute behind a backlog
		}
		cycles, weights = append(cycles, cy), append(weights, rate*60)
		h.Add(cy, rate*60)
	}
	for _, p := range []float64{0.5, 0.95, 0.99, 0.999} {
		exact := MixtureQuantile(cycles, weights, p)
		if got := h.Quantile(p); got < exact || got > exact*1.02+1e-9 {
			t.Errorf("p%g: histogram %.2f ms, mixture %.2f ms", p*100, got, exact)
		}
	}
	// The share within 120 ms, from the mixture's CDF by hand.
	want, total := 0.0, 0.0
	for i, c := range cycles {
		want += weights[i] * c.LatencyCDF(120)
		total += weights[i]
	}
	if got := h.Within(120); math.Abs(got-want/total) > 0.03 {
		t.Errorf("within 120 ms: %.4f, mixture %.4f", got, want/total)
	}
}
