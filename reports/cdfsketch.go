package reports

import (
	"math"
	"sort"

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
	k := bucketOf(x)
	for len(s.counts) <= k {
		s.counts = append(s.counts, 0)
	}
	s.counts[k]++
}

// points is the series' CDF as a line through at most about cdfPoints
// points: exact (cdf of the sorted values) below the limit, else one
// point per non-empty bucket, thinned to cdfPoints, from (lo, 0) to
// (hi, 1).
func (s *cdfSeries) points() plotter.XYs {
	if s.counts == nil {
		sort.Float64s(s.vals)
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
		pts = append(pts, pt{math.Min(math.Pow(cdfGamma, float64(k)), s.hi), cum})
	}
	stride := (len(pts) + cdfPoints - 1) / cdfPoints
	xy := plotter.XYs{{X: s.lo, Y: 0}}
	for i := 0; i < len(pts); i += stride {
		xy = append(xy, plotter.XY{X: pts[i].x, Y: float64(pts[i].cum) / float64(s.n)})
	}
	return append(xy, plotter.XY{X: s.hi, Y: 1})
}
