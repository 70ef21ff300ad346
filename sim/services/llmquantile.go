package services

import (
	"fmt"
	"math"
	"sort"

	"gpuplan.dev/gpuplan/models/serving"
)

// Latency is one of vLLM's latency histograms an autoscaler's Prometheus
// query may take a quantile of.
type Latency int

const (
	// TTFT is vllm:time_to_first_token_seconds.
	TTFT Latency = iota
	// TPOT is vllm:time_per_output_token_seconds (renamed
	// vllm:inter_token_latency_seconds in vLLM 0.11; both observe each
	// gap between output tokens) or vllm:request_time_per_output_token_seconds
	// (one observation a request). The run holds each request's mean
	// TPOT, so it reads the gaps as the requests' means, each request
	// weighted once (a long output's gaps weigh more in vLLM's histogram).
	TPOT
	// E2E is vllm:e2e_request_latency_seconds.
	E2E
)

// String is the histogram's metric name in vLLM.
func (l Latency) String() string {
	switch l {
	case TPOT:
		return "vllm:time_per_output_token_seconds"
	case E2E:
		return "vllm:e2e_request_latency_seconds"
	}
	return "vllm:time_to_first_token_seconds"
}

// Buckets are the histogram's upper bounds in vLLM (v1's
// vllm/v1/metrics/loggers.py), seconds; +Inf follows the last.
func (l Latency) Buckets() []float64 {
	switch l {
	case TPOT:
		return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
			1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	case E2E:
		return []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
			40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	}
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
}

// LatencyQuantile is a Prometheus query
//
//	histogram_quantile(Q, sum(rate(<Of>_bucket{...}[Window])) by (le))
//
// over the service's replicas: the Q-quantile of the latencies of the
// requests served in the last Window, as Prometheus interpolates it
// within vLLM's buckets (linearly, from the bucket's lower bound; the
// highest finite bound when it falls in +Inf), in ms. With no request
// served in the window the query has no value, and the run reads 0 (KEDA's
// prometheus scaler with ignoreNullValues, its default).
type LatencyQuantile struct {
	Of Latency
	// Q is the quantile, 0 < Q < 1.
	Q float64
	// WindowMs is the range of the query's rate().
	WindowMs int64
}

// Validate refuses a quantile outside (0, 1) or a window that is not
// positive.
func (q LatencyQuantile) Validate() error {
	if !(q.Q > 0 && q.Q < 1) {
		return fmt.Errorf("quantile %g: must be between 0 and 1", q.Q)
	}
	if q.WindowMs <= 0 {
		return fmt.Errorf("rate window %d ms: must be positive", q.WindowMs)
	}
	if q.Of < TTFT || q.Of > E2E {
		return fmt.Errorf("latency %d: TTFT, TPOT or E2E", q.Of)
	}
	return nil
}

// servedPiece is what an LLM service served in one piece of an
// interval, for a latency quantile over a window: end is when the piece
// ended, ms its length, n its requests, st their steady state and waitMs
// the wait behind a backlog each had on top of it (TTFT and E2E).
type servedPiece struct {
	end    int64
	ms, n  float64
	st     *serving.LLMSteady
	waitMs float64
}

// recordPiece keeps a piece served for the scaler's window (only when
// the scaler reads a latency quantile), dropping those that ended before
// the longest window from now.
func (l *llmRun) recordPiece(end int64, ms, n float64, st *serving.LLMSteady, waitMs float64) {
	if l.windowMs <= 0 || n <= 0 || st == nil {
		return
	}
	l.window = append(l.window, servedPiece{end: end, ms: ms, n: n, st: st, waitMs: waitMs})
	cut := 0
	for cut < len(l.window) && l.window[cut].end <= end-l.windowMs {
		cut++
	}
	if cut > 0 {
		l.window = append(l.window[:0], l.window[cut:]...)
	}
}

// latencyQuantile is the query q's value at now, ms: the requests of each
// piece in the window (a piece's share of them in it, as its requests
// arrived evenly), their latencies' shares at each of vLLM's bucket
// bounds, and Prometheus's histogram_quantile over those counts.
func (l *llmRun) latencyQuantile(now int64, q LatencyQuantile) float64 {
	bounds := q.Of.Buckets()
	if len(l.cum) < len(bounds) {
		l.cum = make([]float64, len(bounds))
	}
	cum := l.cum[:len(bounds)]
	clear(cum)
	total := 0.0
	from := now - q.WindowMs
	for i := range l.window {
		p := &l.window[i]
		start := float64(p.end) - p.ms
		in := math.Min(float64(p.end), float64(now)) - math.Max(start, float64(from))
		if in <= 0 {
			continue
		}
		w := p.n * math.Min(1, in/p.ms)
		var pts []float64
		shift := p.waitMs
		switch q.Of {
		case TTFT:
			pts = p.st.TTFTPoints
		case TPOT:
			pts, shift = p.st.TPOTPoints, 0
		case E2E:
			pts = p.st.E2EPoints
		}
		total += w
		per := w / float64(len(pts))
		for j, b := range bounds {
			// The points at or below the bound (sorted: they are the
			// distribution's quantiles).
			k := sort.Search(len(pts), func(x int) bool { return pts[x]+shift > b*1000 })
			cum[j] += per * float64(k)
		}
	}
	if total <= 0 {
		return 0
	}
	return HistogramQuantile(q.Q, bounds, cum, total) * 1000
}

// HistogramQuantile is Prometheus's histogram_quantile over buckets with
// upper bounds (ascending, +Inf after the last) holding cum observations
// at or below each and total in all: the bucket where the rank q x total
// falls, interpolated linearly from its lower bound (0 for the first);
// the highest finite bound when the rank is in +Inf.
func HistogramQuantile(q float64, bounds, cum []float64, total float64) float64 {
	rank := q * total
	b := sort.Search(len(bounds), func(i int) bool { return cum[i] >= rank })
	if b == len(bounds) {
		return bounds[len(bounds)-1]
	}
	lo, count := 0.0, cum[b]
	if b > 0 {
		lo = bounds[b-1]
		count -= cum[b-1]
		rank -= cum[b-1]
	}
	if count <= 0 {
		return bounds[b]
	}
	return lo + (bounds[b]-lo)*(rank/count)
}
