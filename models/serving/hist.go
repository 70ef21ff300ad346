package serving

import "math"

// Histogram holds a latency distribution over a whole run in log-spaced
// buckets (2% wide, from 0.1 ms to 10^7 ms): adding an interval's cycle
// costs the buckets its latencies span, and a quantile read from it is
// within 2% of the exact mixture's.
type Histogram struct {
	counts []float64
	total  float64
	// last is the cycle added last and shares its requests' shares of the
	// buckets from first on: the same cycle again (a steady rate on
	// steady replicas, bucket after bucket) is added without evaluating
	// its distribution.
	last   Cycle
	shares []float64
	first  int
	// lo and hi bound the buckets ever added to since the last Reset
	// (used: any): the others hold 0, so merging, clearing and reading
	// cost the buckets a run's latencies span, not all of them.
	lo, hi int
	used   bool
}

// touch widens the buckets in use to [i, j].
func (h *Histogram) touch(i, j int) {
	if !h.used {
		h.lo, h.hi, h.used = i, j, true
		return
	}
	h.lo, h.hi = min(h.lo, i), max(h.hi, j)
}

const (
	histMinMs    = 0.1
	histRatio    = 1.02
	histLogRatio = 0.01980262729617973 // ln(histRatio)
)

func histBuckets() int { return int(math.Ceil(math.Log(1e7/histMinMs)/histLogRatio)) + 1 }

// edges are the buckets' upper edges, computed once when the package is
// initialised and only read after.
var edges = func() []float64 {
	e := make([]float64, histBuckets())
	for i := range e {
		e[i] = histMinMs * math.Pow(histRatio, float64(i))
	}
	return e
}()

// edge is the upper edge of bucket i.
func edge(i int) float64 {
	if i >= 0 && i < len(edges) {
		return edges[i]
	}
	return histMinMs * math.Pow(histRatio, float64(i))
}

func bucketOf(ms float64) int {
	if ms <= histMinMs {
		return 0
	}
	return int(math.Ceil(math.Log(ms/histMinMs) / histLogRatio))
}

// Add adds n requests whose latency follows the cycle.
func (h *Histogram) Add(c Cycle, n float64) {
	if n <= 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]float64, histBuckets())
	}
	if h.shares == nil || c != h.last {
		h.share(c)
	}
	for k, sh := range h.shares {
		h.counts[h.first+k] += n * sh
	}
	h.touch(h.first, h.first+len(h.shares)-1)
	h.total += n
}

// share sets last, first and shares to cycle c's.
func (h *Histogram) share(c Cycle) {
	lo := c.ServiceMs + c.BacklogMs
	hi := lo + c.IntervalMs
	if c.QueueP > 0 {
		hi += 50 / c.QueueRatePerMs
	}
	last := len(h.counts) - 1
	i0, i1 := min(bucketOf(lo), last), min(bucketOf(hi), last)
	prev := c.LatencyCDF(edge(i0 - 1))
	if i0 == 0 {
		prev = 0
	}
	h.shares = h.shares[:0]
	for i := i0; i <= i1; i++ {
		cur := c.LatencyCDF(edge(i))
		if i == i1 {
			cur = 1
		}
		h.shares = append(h.shares, cur-prev)
		prev = cur
	}
	h.last, h.first = c, i0
}

// Total is the requests added.
func (h *Histogram) Total() float64 { return h.total }

// Quantile is the p-quantile (ms): the upper edge of the bucket where the
// cumulative share reaches p.
func (h *Histogram) Quantile(p float64) float64 {
	if h.total == 0 {
		return math.NaN()
	}
	want := p*h.total - 1e-9*h.total
	if want <= 0 || !h.used {
		// Reached at the first bucket (or never: counts all 0).
		if want <= 0 {
			return edge(0)
		}
		return edge(len(h.counts) - 1)
	}
	// Before lo and after hi the counts are 0: the sum is the same.
	acc := 0.0
	for i := h.lo; i <= h.hi; i++ {
		acc += h.counts[i]
		if acc >= want {
			return edge(i)
		}
	}
	return edge(len(h.counts) - 1)
}

// Within is the share of requests with latency at most ms (read at the
// bucket edges: within 2%).
func (h *Histogram) Within(ms float64) float64 {
	if h.total == 0 {
		return math.NaN()
	}
	acc := 0.0
	for i := h.lo; h.used && i <= h.hi; i++ {
		if edge(i) > ms {
			break
		}
		acc += h.counts[i]
	}
	return acc / h.total
}

// Merge adds o's requests to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]float64, len(o.counts))
	}
	if o.used {
		for i := o.lo; i <= o.hi; i++ {
			h.counts[i] += o.counts[i]
		}
		h.touch(o.lo, o.hi)
	}
	h.total += o.total
}

// Reset empties h, keeping its buckets' memory.
func (h *Histogram) Reset() {
	if h.used {
		clear(h.counts[h.lo : h.hi+1])
	}
	h.total, h.used = 0, false
}

// AddAt adds n requests of latency ms (a point of a distribution given
// by its quantiles, as the LLM fast model's).
func (h *Histogram) AddAt(ms, n float64) {
	if n <= 0 {
		return
	}
	h.AddToBucket(HistBucket(ms), n)
}

// HistBucket is the bucket AddAt adds a latency of ms to: a caller that
// adds the same latencies again and again (the points of one
// distribution) finds their buckets once and adds with AddToBucket.
func HistBucket(ms float64) int { return min(bucketOf(ms), len(edges)-1) }

// AddToBucket adds n requests to bucket i (HistBucket of their latency):
// AddAt without finding the bucket.
func (h *Histogram) AddToBucket(i int, n float64) {
	if n <= 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]float64, histBuckets())
	}
	h.counts[i] += n
	h.touch(i, i)
	h.total += n
}

// HistBuckets appends to out HistBucket(x + shift) for each x of xs,
// walking the buckets' edges from one point's to the next's rather than
// taking a logarithm each: cheap for points in ascending order (a
// distribution's quantiles). A latency farther than 1e-11 (relative)
// from the edges of the bucket the walk finds is in that bucket:
// HistBucket's logarithm is off by about 1e-13 of a bucket at most. One
// nearer an edge, or out of order, is found as HistBucket finds it.
func HistBuckets(xs []float64, shift float64, out []int) []int {
	const margin = 1e-11
	last := len(edges) - 1
	b := -1
	for _, x := range xs {
		ms := x + shift
		if b < 0 {
			// The first point's bucket is where the walk starts.
			b = HistBucket(ms)
			out = append(out, b)
			continue
		}
		for b < last && ms > edges[b] {
			b++
		}
		if b > 0 && b < last && ms > edges[b-1]*(1+margin) && ms < edges[b]*(1-margin) {
			out = append(out, b)
			continue
		}
		b = HistBucket(ms)
		out = append(out, b)
	}
	return out
}

// AddToBuckets adds n requests to each bucket of idx in turn (HistBucket
// of their latencies, as HistBuckets gives them): AddToBucket for each,
// the same additions in the same order, without a call a point.
func (h *Histogram) AddToBuckets(idx []int, n float64) {
	if n <= 0 || len(idx) == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]float64, histBuckets())
	}
	lo, hi := idx[0], idx[0]
	counts, total := h.counts, h.total
	for _, i := range idx {
		counts[i] += n
		total += n
		lo, hi = min(lo, i), max(hi, i)
	}
	h.total = total
	h.touch(lo, hi)
}

// AddPoints adds n requests at each latency x + shift of xs in turn:
// HistBuckets(xs, shift) then AddToBuckets, the same buckets and the same
// additions in the same order, without the buckets' slice.
func (h *Histogram) AddPoints(xs []float64, shift, n float64) {
	if n <= 0 || len(xs) == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]float64, histBuckets())
	}
	const margin = 1e-11
	last := len(edges) - 1
	counts, total := h.counts, h.total
	b := HistBucket(xs[0] + shift)
	lo, hi := b, b
	counts[b] += n
	total += n
	for _, x := range xs[1:] {
		ms := x + shift
		for b < last && ms > edges[b] {
			b++
		}
		if !(b > 0 && b < last && ms > edges[b-1]*(1+margin) && ms < edges[b]*(1-margin)) {
			b = HistBucket(ms)
		}
		counts[b] += n
		total += n
		lo, hi = min(lo, b), max(hi, b)
	}
	h.total = total
	h.touch(lo, hi)
}
