package reports

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// The radix sort gives the very slices sort.Float64s gives (with its own
// scratch or one given):
// short and long, job times in whole milliseconds over many magnitudes,
// all equal, heavy ties, fractions, the largest values; and, sorted by
// comparison, slices with a negative value, a -0 or a NaN.
func TestRadixSortsMatchComparisonSorts(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	gens := map[string]func(i int) float64{
		"job times":  func(int) float64 { return math.Round(600_000 * math.Exp(2*r.NormFloat64())) },
		"all equal":  func(int) float64 { return 3_600_000 },
		"ties":       func(int) float64 { return float64(r.IntN(5) * 1000) },
		"zeros":      func(i int) float64 { return float64(i % 2) },
		"fractions":  func(int) float64 { return r.Float64() },
		"wide":       func(int) float64 { return math.Exp(r.Float64() * 700) },
		"descending": func(i int) float64 { return float64(1_000_000 - i) },
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 100, radixMin - 1, radixMin, 50_000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = gen(i)
			}
			want := slices.Clone(xs)
			sort.Float64s(want)
			got := slices.Clone(xs)
			sortFloats(got)
			require.Equal(t, want, got, "%s, %d values", name, n)

			got = slices.Clone(xs)
			sortFloatsWith(got, make([]float64, n+3)) // scratch longer than needed
			require.Equal(t, want, got, "%s, %d values, scratch given", name, n)
		}
	}
	for _, odd := range []float64{-1, math.Copysign(0, -1), math.NaN()} {
		xs := make([]float64, 10_000)
		for i := range xs {
			xs[i] = float64(r.IntN(1000))
		}
		xs[5000] = odd
		want := slices.Clone(xs)
		sort.Float64s(want)
		sortFloats(xs)
		require.Equal(t, len(want), len(xs))
		for i := range xs {
			require.True(t, xs[i] == want[i] || math.IsNaN(xs[i]) && math.IsNaN(want[i]), "at %d with %v", i, odd)
		}
	}
}

// A million job times (lognormal, whole milliseconds): sort.Float64s
// against the radix sort, in one run.
func BenchmarkSortJobTimes(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	xs := make([]float64, 1_000_000)
	for i := range xs {
		xs[i] = math.Round(600_000 * math.Exp(2*r.NormFloat64()))
	}
	buf := make([]float64, len(xs))
	for _, s := range []struct {
		name string
		sort func([]float64)
	}{{"sort.Float64s", sort.Float64s}, {"radix", sortFloats}} {
		b.Run(s.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(buf, xs)
				s.sort(buf)
			}
		})
	}
}
