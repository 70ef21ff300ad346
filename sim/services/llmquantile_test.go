package services

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/autoscale"
)

// llm70B is Llama-3-70B on 4 H100s (tensor parallel) with 2,000-token
// prompts and 200-token outputs: prefill-heavy, so that its p95 TTFT
// crosses 0.5 s below capacity (7.9 requests/s a replica).
func llm70B(t *testing.T) *LLM {
	t.Helper()
	roof, ok := serving.RooflineFor("H100-80GB")
	require.True(t, ok)
	return &LLM{Config: serving.LLMConfig{Engine: serving.Engine{Model: serving.Llama3_70B(), GPU: roof, TP: 4}, MaxModelLen: 8192}.WithDefaults(),
		Input: serving.TokenDist{Kind: serving.Fixed, Mean: 2000}, Output: serving.TokenDist{Kind: serving.Fixed, Mean: 200}}
}

// gridSteady is the fast model at the rate of the run's 2% grid nearest
// rate (the grid rate the run serves it with).
func gridSteady(t *testing.T, l *LLM, rate float64) serving.LLMSteady {
	t.Helper()
	g := math.Log1p(0.02)
	st, err := serving.SteadyLLM(l.Config, math.Exp(math.Round(math.Log(rate)/g)*g), l.Input, l.Output)
	require.NoError(t, err)
	return st
}

// below is the share of a steady state's TTFT points at or below ms.
func below(pts []float64, ms float64) float64 {
	return float64(sort.Search(len(pts), func(i int) bool { return pts[i] > ms })) / float64(len(pts))
}

// A KEDA ScaledObject on
// histogram_quantile(0.95, sum(rate(vllm:time_to_first_token_seconds_bucket[2m])) by (le))
// with threshold 0.5 (s) and metricType Value, on 4 replicas of 70B
// taking 30 requests/s (7.5 each, 95% of capacity). The fast model's
// p95 TTFT there is 0.608 s, in vLLM's (0.5 s, 0.75 s] bucket, which
// holds 8% of the requests (F(0.5) = 0.90, F(0.75) = 0.98, F the share
// of TTFTs at or below a bound): Prometheus interpolates 0.5 + 0.25 x
// (0.95 - 0.90) / 0.08 = 0.656 s, and the HPA KEDA made wants
// ceil(4 x 0.656 / 0.5) = ceil(5.25) = 6 replicas, one more than the
// true p95 would ask for (ceil(4 x 0.608 / 0.5) = 5). With metricType
// AverageValue the same value is divided by the 4 ready replicas first:
// the HPA then recommends ceil(0.656 / 0.5) = 2 whatever the replicas,
// which its scale-down window holds back (it keeps 4).
func TestKEDAOnTTFTQuantile(t *testing.T) {
	l := llm70B(t)
	st := gridSteady(t, l, 7.5)
	require.InDelta(t, 608, st.TTFTP95Ms, 1, "the model's own p95 TTFT at 7.5/s")
	f5, f75 := below(st.TTFTPoints, 500), below(st.TTFTPoints, 750)
	require.True(t, f5 < 0.95 && f75 >= 0.95, "the p95 is in (0.5 s, 0.75 s]: F(0.5) %g, F(0.75) %g", f5, f75)
	prom := 0.5 + 0.25*(0.95-f5)/(f75-f5)
	want := int(math.Ceil(4 * prom / 0.5))
	require.InDelta(t, 0.90, f5, 0.005)
	require.InDelta(t, 0.98, f75, 0.005)
	require.InDelta(t, 0.656, prom, 0.001)
	require.Equal(t, 6, want)
	require.Equal(t, 5, int(math.Ceil(4*st.TTFTP95Ms/500)), "the true p95 asks for one fewer")

	q := LatencyQuantile{Of: TTFT, Q: 0.95, WindowMs: 120_000}
	for _, c := range []struct {
		typ  autoscale.MetricType
		want int
	}{{autoscale.Value, want}, {autoscale.AverageValue, 4}} {
		spec := autoscale.NewScaledObjectSpec(500) // 0.5 s, in ms
		spec.MinReplicaCount, spec.MaxReplicaCount, spec.Type = 1, 20, c.typ
		k, err := autoscale.NewKEDA(spec)
		require.NoError(t, err)
		s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 30}, LLM: l}, KEDA{K: k, Metric: LatencyQuantileMs, Quantile: q})
		require.NoError(t, err)
		for now := int64(15_000); now <= 300_000; now += 15_000 {
			s.Advance(now-15_000, now, 4, 4)
		}
		m := s.Observe(300_000, 4)
		require.InDelta(t, prom*1000, m.LatencyQuantileMs, 1e-6)
		require.Equal(t, c.want, s.Scaler().Decide(300_000, 4, 4, 0, m))
	}
}

// The query reads the requests of its window only: after a minute at 2
// requests/s a replica and a minute at 7.5, a 2-minute window holds 120
// and 450 requests a replica, and its quantile is the mixture's (each
// bound's count the sum of both minutes'); after 2 minutes with no
// request, nothing (0).
func TestTTFTQuantileWindow(t *testing.T) {
	l := llm70B(t)
	lo, hi := gridSteady(t, l, 2), gridSteady(t, l, 7.5)
	q := LatencyQuantile{Of: TTFT, Q: 0.95, WindowMs: 120_000}
	spec := autoscale.NewScaledObjectSpec(500)
	spec.MinReplicaCount, spec.MaxReplicaCount, spec.Type = 1, 20, autoscale.Value
	k, err := autoscale.NewKEDA(spec)
	require.NoError(t, err)
	load := serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 2}, {AtMs: 600_000, Rate: 7.5}, {AtMs: 660_000, Rate: 0}}}
	s, err := New(Spec{Name: "chat", Load: load, LLM: l}, KEDA{K: k, Metric: LatencyQuantileMs, Quantile: q})
	require.NoError(t, err)
	for now := int64(15_000); now <= 660_000; now += 15_000 {
		s.Advance(now-15_000, now, 1, 1)
	}
	bounds := TTFT.Buckets()
	cum := make([]float64, len(bounds))
	for i, b := range bounds {
		cum[i] = 120*below(lo.TTFTPoints, b*1000) + 450*below(hi.TTFTPoints, b*1000)
	}
	got := s.Observe(660_000, 1).LatencyQuantileMs
	require.InDelta(t, HistogramQuantile(0.95, bounds, cum, 570)*1000, got, 1e-6)
	alone := func(st serving.LLMSteady) float64 {
		c := make([]float64, len(bounds))
		for i, b := range bounds {
			c[i] = below(st.TTFTPoints, b*1000)
		}
		return HistogramQuantile(0.95, bounds, c, 1) * 1000
	}
	require.True(t, alone(lo) < got && got < alone(hi), "the mixture's p95 %g between the minutes' %g and %g", got, alone(lo), alone(hi))
	for now := int64(675_000); now <= 780_000; now += 15_000 {
		s.Advance(now-15_000, now, 1, 1)
	}
	require.Equal(t, 0.0, s.Observe(780_000, 1).LatencyQuantileMs)
}

// Prometheus's histogram_quantile by hand: 100 observations, 10 at or
// below 0.1, 60 at or below 0.25, 90 at or below 0.5, all at or below
// 0.75. The median's rank 50 falls in (0.1, 0.25]: 0.1 + 0.15 x 40/50 =
// 0.22; the p95's rank 95 in (0.5, 0.75]: 0.5 + 0.25 x 5/10 = 0.625;
// the 0.05 quantile's rank 5 in the first bucket, from 0: 0.05. A rank
// in +Inf reads the highest finite bound.
func TestHistogramQuantileByHand(t *testing.T) {
	b := []float64{0.1, 0.25, 0.5, 0.75}
	cum := []float64{10, 60, 90, 100}
	require.InDelta(t, 0.22, HistogramQuantile(0.5, b, cum, 100), 1e-12)
	require.InDelta(t, 0.625, HistogramQuantile(0.95, b, cum, 100), 1e-12)
	require.InDelta(t, 0.05, HistogramQuantile(0.05, b, cum, 100), 1e-12)
	require.Equal(t, 0.75, HistogramQuantile(0.99, b, []float64{10, 60, 90, 95}, 100))
}

// The grid's log step is math.Log1p(0.02) to the bit, and the run's
// remembered key is llmKey's at every rate, rising, falling or jumping.
func TestLLMLogGrid(t *testing.T) {
	require.Equal(t, math.Log1p(llmGrid), float64(llmLogGrid))
	l := &llmRun{}
	rate := 10.0
	for i := range 20000 {
		switch i % 3 {
		case 0:
			rate *= 1.0007
		case 1:
			rate /= 1.0003
		default:
			if i%97 == 2 {
				rate = 5 + float64(i%41)
			}
		}
		require.Equal(t, llmKey(rate), l.key(rate), "rate %g", rate)
	}
}
