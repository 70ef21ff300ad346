package reports

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Below the limit a series is drawn exactly as before: the cdf of its
// sorted values.
func TestCDFSeriesExactBelowTheLimit(t *testing.T) {
	var s cdfSeries
	for _, x := range []float64{3, 1, 2, 2} {
		s.add(x)
	}
	require.Equal(t, cdf([]float64{1, 2, 2, 3}), s.points())
}

// Past the limit, every point drawn is (x, the exact fraction of values
// <= x): checked against the sorted values of 300,000 lognormal waits
// (median 10 min, sigma 2, a tenth at exactly 1 s and many repeats), and
// the curve is within a factor cdfGamma of the exact one along x.
func TestCDFSketchAgainstExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 300_000
	vals := make([]float64, n)
	var s cdfSeries
	for i := range vals {
		x := 1.0
		if r.Float64() > 0.1 {
			x = math.Max(1, math.Round(600*math.Exp(2*r.NormFloat64())))
		}
		vals[i] = x
		s.add(x)
	}
	require.Nil(t, s.vals, "past the limit the values are not kept")
	require.Less(t, len(s.counts), 2500, "the histogram is bounded by the value range, not the count")
	sort.Float64s(vals)
	exact := func(x float64) float64 { // fraction of values <= x
		return float64(sort.Search(n, func(i int) bool { return vals[i] > x })) / n
	}
	pts := s.points()
	require.LessOrEqual(t, len(pts), cdfPoints+2)
	require.Equal(t, vals[0], pts[0].X)
	require.Equal(t, 0.0, pts[0].Y)
	require.Equal(t, vals[n-1], pts[len(pts)-1].X)
	require.Equal(t, 1.0, pts[len(pts)-1].Y)
	for _, p := range pts[1:] {
		require.Equal(t, exact(p.X), p.Y, "at x = %g", p.X)
	}
	// Between points the line is monotone; any exact quantile lies within
	// a factor cdfGamma of where the sketch's bucket edges put it.
	for _, q := range []float64{0.05, 0.5, 0.9, 0.99, 0.999} {
		want := vals[int(math.Ceil(q*n))-1]
		k := bucketOf(want)
		require.LessOrEqual(t, want, math.Pow(cdfGamma, float64(k))*(1+1e-12))
		require.Greater(t, want*(1+1e-12), math.Pow(cdfGamma, float64(k-1)))
	}
}

func TestBucketEdges(t *testing.T) {
	require.Equal(t, 0, bucketOf(1))
	for _, k := range []int{1, 2, 100, 1851} {
		edge := math.Pow(cdfGamma, float64(k))
		require.Equal(t, k, bucketOf(edge), "the edge itself is in bucket %d", k)
		require.Equal(t, k+1, bucketOf(math.Nextafter(edge, math.Inf(1))))
	}
}

// The table lookup puts every value in the bucket bucketOf (a logarithm
// and powers) puts it in: on the edges and either side of them, on the
// cells' bounds and either side, at 1 and at the largest time a run can
// hold (2^63 ms), and on 200,000 random values over that range.
func TestCDFIndexAgreesWithBucketOf(t *testing.T) {
	var ix cdfIndex
	check := func(x float64) {
		if x < 1 {
			return
		}
		require.Equal(t, bucketOf(x), ix.bucket(x), "x = %v", x)
	}
	check(1)
	check(math.Nextafter(1, 2))
	top := float64(math.MaxInt64) / 1000
	check(top)
	for k := 0; math.Pow(cdfGamma, float64(k)) <= top; k++ {
		e := math.Pow(cdfGamma, float64(k))
		check(e)
		check(math.Nextafter(e, 0))
		check(math.Nextafter(e, math.Inf(1)))
	}
	for c := range len(ix.first) {
		lo := math.Float64frombits(math.Float64bits(1) + uint64(c)<<cdfCellShift)
		check(lo)
		check(math.Nextafter(lo, 0))
		check(math.Nextafter(lo, math.Inf(1)))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		check(math.Exp(r.Float64() * math.Log(top)))
	}
	// The tables grow with the largest value, not with the count: top is
	// under 2^54: 54 binades of cells, and the edges up to one past the
	// bucket of 2^54 (log 2^54 / log 1.01 = 3761.6: bucket 3762).
	require.Equal(t, 54<<cdfCellBits, len(ix.first))
	require.Equal(t, 3762, bucketOf(math.Exp2(54)))
	require.LessOrEqual(t, len(ix.edges), 3762+2)
}

// The bucket of a lognormal wait (median 10 min, sigma 2) by the table
// (index) and by a logarithm and powers (bucketOf): run both in one
// benchmark run and compare ns/op.
func BenchmarkCDFBucket(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := make([]float64, 1<<16)
	for i := range vals {
		vals[i] = math.Max(1, math.Round(600*math.Exp(2*r.NormFloat64())))
	}
	b.Run("index", func(b *testing.B) {
		var ix cdfIndex
		sum := 0
		for i := 0; i < b.N; i++ {
			sum += ix.bucket(vals[i&(len(vals)-1)])
		}
		_ = sum
	})
	b.Run("bucketOf", func(b *testing.B) {
		sum := 0
		for i := 0; i < b.N; i++ {
			sum += bucketOf(vals[i&(len(vals)-1)])
		}
		_ = sum
	})
}
