package serving

import (
	"math"
	"math/rand/v2"
	"slices"
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

// Two halves merged are the whole: the same quantiles as one histogram
// that had every interval added, and a reset histogram is empty.
func TestHistogramMergeAndReset(t *testing.T) {
	b := Batch{Size: 8, MaxDelayMs: 10, BaseMs: 5, PerItemMs: 1}
	var whole, a, c Histogram
	for i, rate := range []float64{100, 400, 900, 1500} {
		cy, err := FluidCycle(rate, 3, b)
		if err != nil {
			t.Fatal(err)
		}
		whole.Add(cy, rate)
		if i%2 == 0 {
			a.Add(cy, rate)
		} else {
			c.Add(cy, rate)
		}
	}
	a.Merge(&c)
	for _, p := range []float64{0.5, 0.95, 0.99} {
		if a.Quantile(p) != whole.Quantile(p) {
			t.Errorf("p%g: merged %g, whole %g", p*100, a.Quantile(p), whole.Quantile(p))
		}
	}
	if a.Total() != 2900 {
		t.Errorf("merged total %g, want 2900", a.Total())
	}
	a.Reset()
	if a.Total() != 0 || !math.IsNaN(a.Quantile(0.5)) {
		t.Errorf("reset histogram holds %g", a.Total())
	}
}

// HistBuckets is HistBucket of each shifted point, to the bucket: for
// sorted quantile-like points over the whole range, points on the edges
// and an ulp either side of them, points out of order, below the first
// edge and beyond the last.
func TestHistBucketsIsHistBucket(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var xs []float64
	for range 5000 {
		xs = append(xs, math.Exp(r.Float64()*math.Log(2e8))*1e-2)
	}
	for i := 0; i < len(edges); i += 7 {
		e := edges[i]
		xs = append(xs, e, math.Nextafter(e, 0), math.Nextafter(e, math.Inf(1)))
	}
	xs = append(xs, 0, 0.05, 0.1, 2e7, math.Inf(1))
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	for _, in := range [][]float64{sorted, xs} {
		for _, shift := range []float64{0, 0.37, 1234.5} {
			got := HistBuckets(in, shift, nil)
			for i, x := range in {
				if want := HistBucket(x + shift); got[i] != want {
					t.Fatalf("%g + %g: bucket %d, want %d", x, shift, got[i], want)
				}
			}
		}
	}
}

// AddPoints and AddToBuckets are HistBuckets and AddToBucket point by
// point, bit for bit: the same buckets, counts and total, whatever the
// points (sorted quantiles or not) and the shift.
func TestAddPointsSameAsOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		xs := make([]float64, 1+r.IntN(120))
		for i := range xs {
			xs[i] = math.Exp(r.Float64()*12 - 3)
		}
		if trial%2 == 0 {
			slices.Sort(xs)
		}
		shift := 0.0
		if trial%3 != 0 {
			shift = r.Float64() * 1000
		}
		var a, b, c Histogram
		for k := range 3 {
			n := r.Float64() * 10
			for _, i := range HistBuckets(xs, shift, nil) {
				a.AddToBucket(i, n)
			}
			b.AddPoints(xs, shift, n)
			c.AddToBuckets(HistBuckets(xs, shift, nil), n)
			_ = k
		}
		if !slices.Equal(a.counts, b.counts) || a.total != b.total || a.lo != b.lo || a.hi != b.hi ||
			!slices.Equal(a.counts, c.counts) || a.total != c.total || a.lo != c.lo || a.hi != c.hi {
			t.Fatalf("trial %d: the histograms differ", trial)
		}
	}
}
