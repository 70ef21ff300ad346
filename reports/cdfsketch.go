package reports

import (
	"math"

	"gonum.org/v1/plot/plotter"
)

// A CDF series keeps its values exactly up to cdfExactLimit of them, and
// beyond that a log-bucketed histogram of bounded size, so a chart of a
// million jobs neither holds nor sorts a million values.
const (
	cdfExactLimit = 1 << 16
	// cdfGamma is the histogram's bucket ratio: bucket k holds the values
	// in (cdfGamma^(k-1), cdfGamma^k]. Every point drawn from it is
	// (x, the exact fraction of values <= x) at a bucket edge x, so the
	// drawn curve is off the exact one by at most a factor cdfGamma (1%)
	// along the time axis, and not at all at the points themselves.
	cdfGamma = 1.01
)

// cdfSeries is the values of one CDF line, all at least 1 (seconds).
type cdfSeries struct {
	n      int
	lo, hi float64
	vals   []float64 // exact, while n <= cdfExactLimit
	counts []int64   // the histogram, once past it
	ix     cdfIndex  // finds a value's bucket, once past it
}

func (s *cdfSeries) add(x float64) {
	if s.n == 0 || x < s.lo {
		s.lo = x
	}
	if s.n == 0 || x > s.hi {
		s.hi = x
	}
	s.n++
	if s.counts == nil {
		s.vals = append(s.vals, x)
		if len(s.vals) <= cdfExactLimit {
			return
		}
		s.counts = []int64{}
		for _, v := range s.vals {
			s.bucket(v)
		}
		s.vals = nil
		return
	}
	s.bucket(x)
}

// bucketOf is the histogram bucket of x >= 1: the smallest k with x <=
// cdfGamma^k (the logarithm's rounding corrected against the edge).
func bucketOf(x float64) int {
	k := max(0, int(math.Ceil(math.Log(x)/math.Log(cdfGamma))))
	for k > 0 && x <= math.Pow(cdfGamma, float64(k-1)) {
		k--
	}
	for x > math.Pow(cdfGamma, float64(k)) {
		k++
	}
	return k
}

func (s *cdfSeries) bucket(x float64) {
	k := s.ix.bucket(x)
	for len(s.counts) <= k {
		s.counts = append(s.counts, 0)
	}
	s.counts[k]++
}

// cdfCellBits: the values of a cell of cdfIndex share their exponent and
// their top cdfCellBits mantissa bits, so a cell spans a factor of at most
// 1+2^-7, less than cdfGamma: it holds at most one bucket edge.
const cdfCellBits = 7

// cdfIndex finds the bucket of a value >= 1 (bucketOf) without a
// logarithm or a power per value: the bucket edges cdfGamma^k (computed
// as bucketOf computes them), and for each cell of values (see
// cdfCellBits) the bucket of its smallest value. A value's bucket is its
// cell's, or the next when the value is past that bucket's edge. Both
// tables grow with the largest value seen: a few thousand entries.
type cdfIndex struct {
	edges []float64 // edges[k] = cdfGamma^k
	first []int32   // by cell: the bucket of its smallest value
}

const cdfCellShift = 52 - cdfCellBits

// cellOf is the cell of x >= 1: its bits past 1's, its exponent and top
// mantissa bits.
func cellOf(x float64) int {
	return int((math.Float64bits(x) - math.Float64bits(1)) >> cdfCellShift)
}

func (ix *cdfIndex) bucket(x float64) int {
	c := cellOf(x)
	for c >= len(ix.first) {
		ix.grow()
	}
	k := int(ix.first[c])
	if x > ix.edges[k] {
		k++
	}
	return k
}

// grow adds one binade of cells (a power of two of values), with the
// edges up to one past the last cell's bucket.
func (ix *cdfIndex) grow() {
	edge := func(k int) float64 {
		for len(ix.edges) <= k {
			ix.edges = append(ix.edges, math.Pow(cdfGamma, float64(len(ix.edges))))
		}
		return ix.edges[k]
	}
	k := 0
	if n := len(ix.first); n > 0 {
		k = int(ix.first[n-1])
	}
	for range 1 << cdfCellBits {
		lo := math.Float64frombits(math.Float64bits(1) + uint64(len(ix.first))<<cdfCellShift)
		for lo > edge(k) {
			k++
		}
		edge(k + 1)
		ix.first = append(ix.first, int32(k))
	}
}

// points is the series' CDF as a line through at most about cdfPoints
// points: exact (cdf of the sorted values) below the limit, else one
// point per non-empty bucket, thinned to cdfPoints, from (lo, 0) to
// (hi, 1).
func (s *cdfSeries) points() plotter.XYs {
	if s.counts == nil {
		sortFloats(s.vals)
		return cdf(s.vals)
	}
	type pt struct {
		x   float64
		cum int64
	}
	var pts []pt
	var cum int64
	for k, c := range s.counts {
		if c == 0 {
			continue
		}
		cum += c
		pts = append(pts, pt{math.Min(s.ix.edges[k], s.hi), cum})
	}
	stride := (len(pts) + cdfPoints - 1) / cdfPoints
	xy := plotter.XYs{{X: s.lo, Y: 0}}
	for i := 0; i < len(pts); i += stride {
		xy = append(xy, plotter.XY{X: pts[i].x, Y: float64(pts[i].cum) / float64(s.n)})
	}
	return append(xy, plotter.XY{X: s.hi, Y: 1})
}
