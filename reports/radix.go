package reports

import (
	"math"
	"slices"
)

// radixMin: shorter slices are sorted by comparison; from this many values
// a radix sort is cheaper.
const radixMin = 1 << 12

// sortFloats sorts xs ascending, as sort.Float64s does: the same values in
// the same order. Non-negative values (no NaN, no -0) order as their bits
// do, and a large slice of them is sorted by their bits, a byte at a time
// (least significant first, a pass skipped when every value has the same
// byte there): a million job times in a few passes instead of twenty
// comparisons each. Anything else is sorted by comparison.
func sortFloats(xs []float64) { sortFloatsWith(xs, nil) }

// sortFloatsWith is sortFloats with scratch for the radix passes (nil, or
// at least as long as xs).
func sortFloatsWith(xs, scratch []float64) {
	n := len(xs)
	if n < radixMin {
		slices.Sort(xs)
		return
	}
	var counts [8][256]int
	for _, x := range xs {
		k := math.Float64bits(x)
		if k>>63 != 0 || x != x { // negative, -0 or NaN
			slices.Sort(xs)
			return
		}
		countBytes(&counts, k)
	}
	first := math.Float64bits(xs[0])
	if len(scratch) < n {
		scratch = make([]float64, n)
	}
	src, dst := xs, scratch[:n]
	for b := range 8 {
		shift := uint(8 * b)
		c := &counts[b]
		if !offsets(c, byte(first>>shift), n) {
			continue
		}
		for _, x := range src {
			d := byte(math.Float64bits(x) >> shift)
			dst[c[d]] = x
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
}

// countBytes counts each of k's eight bytes.
func countBytes(counts *[8][256]int, k uint64) {
	for b := range 8 {
		counts[b][byte(k>>(8*b))]++
	}
}

// offsets turns one byte's counts into the position of the first value
// with each byte, and reports whether a pass on that byte moves anything:
// false when all n values have the byte first has.
func offsets(c *[256]int, first byte, n int) bool {
	if c[first] == n {
		return false
	}
	pos := 0
	for v := range c {
		c[v], pos = pos, pos+c[v]
	}
	return true
}
