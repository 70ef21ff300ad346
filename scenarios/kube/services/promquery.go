package services

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/sim/services"
	"gpuplan.dev/gpuplan/validate/strict"
)

// vLLM's latency histograms an autoscaler's query may take a quantile
// of, by name (without _bucket).
var latencyHistograms = map[string]services.Latency{
	"vllm:time_to_first_token_seconds":           services.TTFT,
	"vllm:time_per_output_token_seconds":         services.TPOT,
	"vllm:inter_token_latency_seconds":           services.TPOT,
	"vllm:request_time_per_output_token_seconds": services.TPOT,
	"vllm:e2e_request_latency_seconds":           services.E2E,
}

// The two ways of writing one quantile over the service's replicas:
// sum(rate(...)) by (le) and sum by (le) (rate(...)); the selector and
// the window are checked after.
var (
	rateExpr   = `rate\s*\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{[^{}]*\})?\s*\[\s*([^\]\s]*)\s*\]\s*\)`
	quantileBy = regexp.MustCompile(`^\s*histogram_quantile\s*\(\s*([^,\s]+)\s*,\s*sum\s*\(\s*` + rateExpr + `\s*\)\s*by\s*\(\s*le\s*\)\s*\)\s*$`)
	quantileOf = regexp.MustCompile(`^\s*histogram_quantile\s*\(\s*([^,\s]+)\s*,\s*sum\s+by\s*\(\s*le\s*\)\s*\(\s*` + rateExpr + `\s*\)\s*\)\s*$`)
	matcher    = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*$`)
	duration   = regexp.MustCompile(`^(?:[0-9]+(?:ms|s|m|h|d|w|y))+$`)
	durPart    = regexp.MustCompile(`([0-9]+)(ms|s|m|h|d|w|y)`)
)

const quantileShape = "histogram_quantile(<q>, sum(rate(<vLLM latency histogram>_bucket{<labels>}[<window>])) by (le)) or histogram_quantile(<q>, sum by (le) (rate(...)))"

// Latency reads a Prometheus query that takes a quantile of one of
// vLLM's latency histograms (vllm:time_to_first_token_seconds,
// vllm:time_per_output_token_seconds or vllm:inter_token_latency_seconds
// or vllm:request_time_per_output_token_seconds, and
// vllm:e2e_request_latency_seconds):
//
//	histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket{model_name="llama"}[2m])) by (le))
//
// strictly: the quantile (between 0 and 1), the histogram, any label
// matchers, the rate window, and the sum by le that makes it one
// quantile over the replicas. ok is false for a query that is no such
// quantile and names none of those histograms; a query that is one in
// part (another vLLM histogram, a sum by another label, a mean over
// _sum and _count, a missing window) is an error.
func (m Metric) Latency() (q services.LatencyQuantile, ok bool, err error) {
	text := m.Query
	if text == "" {
		text = m.Name
	}
	lower := strings.ToLower(text)
	named := false
	for name := range latencyHistograms {
		if strings.Contains(lower, name) {
			named = true
		}
	}
	if !named && !strings.Contains(lower, "histogram_quantile") {
		return q, false, nil
	}
	if m.Query == "" {
		return q, true, fmt.Errorf("%s %s names a latency histogram but no quantile or window: gpuplan reads a latency quantile from a KEDA prometheus trigger's query, %s", m.Source, strict.Quote(m.Name), quantileShape)
	}
	g := quantileBy.FindStringSubmatch(text)
	if g == nil {
		g = quantileOf.FindStringSubmatch(text)
	}
	if g == nil {
		return q, true, fmt.Errorf("query %s: gpuplan reads one quantile of one of vLLM's latency histograms over the replicas, %s (no other aggregation, no mean over _sum and _count)", strict.Quote(text), quantileShape)
	}
	qs, metric, sel, window := g[1], g[2], g[3], g[4]
	if q.Q, err = strconv.ParseFloat(qs, 64); err != nil || !(q.Q > 0 && q.Q < 1) {
		return q, true, fmt.Errorf("query %s: the quantile %s must be a number between 0 and 1", strict.Quote(text), strict.Quote(qs))
	}
	base, isBucket := strings.CutSuffix(metric, "_bucket")
	lat, known := latencyHistograms[base]
	if !isBucket || !known {
		names := make([]string, 0, len(latencyHistograms))
		for n := range latencyHistograms {
			names = append(names, n+"_bucket")
		}
		slices.Sort(names)
		return q, true, fmt.Errorf("query %s: %s is not one of vLLM's latency histograms' buckets gpuplan models (%s)", strict.Quote(text), strict.Quote(metric), strings.Join(names, ", "))
	}
	q.Of = lat
	if sel != "" {
		inner := strings.TrimSpace(sel[1 : len(sel)-1])
		inner = strings.TrimSuffix(inner, ",")
		if inner != "" {
			for _, part := range splitMatchers(inner) {
				if !matcher.MatchString(part) {
					return q, true, fmt.Errorf("query %s: %s is not a label matcher (name, one of = != =~ !~, a quoted value)", strict.Quote(text), strict.Quote(strings.TrimSpace(part)))
				}
			}
		}
	}
	if q.WindowMs, err = promDuration(window); err != nil {
		return q, true, fmt.Errorf("query %s: the rate window %s: %v", strict.Quote(text), strict.Quote(window), err)
	}
	return q, true, nil
}

// splitMatchers splits label matchers at the commas outside their
// quoted values.
func splitMatchers(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// promDuration is a Prometheus duration (1m, 90s, 1m30s, 500ms) in ms.
func promDuration(s string) (int64, error) {
	if !duration.MatchString(s) {
		return 0, fmt.Errorf("not a Prometheus duration (such as 2m, 90s, 1m30s)")
	}
	unit := map[string]int64{"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000, "y": 365 * 86_400_000}
	var ms int64
	for _, p := range durPart.FindAllStringSubmatch(s, -1) {
		n, err := strconv.ParseInt(p[1], 10, 64)
		if err != nil || n > 1<<40 {
			return 0, fmt.Errorf("out of range")
		}
		ms += n * unit[p[2]]
	}
	if ms <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return ms, nil
}
