package services

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
)

func llm8B(t *testing.T) *LLM {
	t.Helper()
	roof, ok := serving.RooflineFor("H100-80GB")
	require.True(t, ok)
	return &LLM{Config: serving.LLMConfig{Engine: serving.Engine{Model: serving.Llama3_8B(), GPU: roof, TP: 1}, MaxModelLen: 8192}.WithDefaults(),
		Input:  serving.TokenDist{Kind: serving.Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048},
		Output: serving.TokenDist{Kind: serving.Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}}
}

// An LLM service of 30 requests/s on three ready Llama-3-8B H100 replicas
// (a Kubernetes Service spreading requests at random: 10/s each, Poisson)
// has, over an hour, the TTFT and TPOT of one replica at 10/s: held to the
// exact engine model (SimulateLLM, 8,000 requests at 10/s) within 5% on
// mean and p95 (the fast model's own 5%, with the run's 2% histogram
// buckets and 2% rate grid inside it). Tokens served are the requests
// times the mean lengths.
func TestLLMServiceAgainstExact(t *testing.T) {
	l := llm8B(t)
	l.TTFTSLOMs, l.TPOTSLOMs = 200, 30
	s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 30}, LLM: l}, Fixed{Replicas: 3})
	require.NoError(t, err)
	s.Advance(0, 3_600_000, 3, 3)
	r := s.Report()
	require.InDelta(t, 30*3600, r.Served, 1e-6)
	ex, err := serving.SimulateLLM(l.Config, serving.PoissonLLMRequests(rand.New(rand.NewPCG(3, 4)), 10, 8000, l.Input, l.Output))
	require.NoError(t, err)
	x := r.LLM
	require.NotNil(t, x)
	t.Logf("TTFT mean %.2f/%.2f p95 %.2f/%.2f, TPOT mean %.2f/%.2f p95 %.2f/%.2f (run/exact)", x.TTFTMeanMs, serving.Mean(ex.TTFTMs),
		x.TTFTP95Ms, serving.InterpQuantile(ex.TTFTMs, .95), x.TPOTMeanMs, serving.Mean(ex.TPOTMs), x.TPOTP95Ms, serving.InterpQuantile(ex.TPOTMs, .95))
	require.InEpsilon(t, serving.Mean(ex.TTFTMs), x.TTFTMeanMs, 0.05)
	require.InEpsilon(t, serving.InterpQuantile(ex.TTFTMs, .95), x.TTFTP95Ms, 0.05)
	require.InEpsilon(t, serving.Mean(ex.TPOTMs), x.TPOTMeanMs, 0.05)
	require.InEpsilon(t, serving.InterpQuantile(ex.TPOTMs, .95), x.TPOTP95Ms, 0.05)
	require.Equal(t, r.P95Ms, x.TTFTP95Ms, "the service's latency is its TTFT")
	// The lengths are normals clamped below at 16 (z = -1.94 and -1.88;
	// the upper clamps are 6 deviations out): a mean of mu + sigma x
	// (phi(z) + z Phi(z)) = 512 + 256 x 0.0101 = 514.6 prompt tokens and
	// 256 + 128 x 0.0119 = 257.5 output tokens.
	require.InDelta(t, 30*3600*514.6, x.InputTokens, 30*3600*0.2)
	require.InDelta(t, 30*3600*257.5, x.OutputTokens, 30*3600*0.2)
	require.Equal(t, 1, x.GPUsPerReplica)
	// Attainment of a TPOT target above every request's TPOT is all of
	// them; of a TTFT target below the fastest prefill, none.
	require.InDelta(t, 1, x.TPOTAttainment, 1e-9)
	s2, err := New(Spec{Name: "chat", Load: serving.Load{Base: 30}, LLM: &LLM{Config: l.Config, Input: l.Input, Output: l.Output, TTFTSLOMs: 1}}, Fixed{Replicas: 3})
	require.NoError(t, err)
	s2.Advance(0, 60_000, 3, 3)
	require.Equal(t, 0.0, s2.Report().LLM.TTFTAttainment)
}

// Above capacity the excess waits: one replica of capacity c (about 37.8
// requests/s) offered 2c for a minute serves c x 60 s and holds c x 60 s
// waiting; its requests' TTFT grows with the backlog (the last ones wait
// about 30 s: the p99 is seconds, not milliseconds). vLLM's
// num_requests_waiting, read as a queue depth, is then the backlog (plus
// the few waiting for a step): Little's law over the wait behind it.
func TestLLMServiceOverload(t *testing.T) {
	l := llm8B(t)
	c, err := serving.LLMCapacity(l.Config, l.Input, l.Output)
	require.NoError(t, err)
	l.CapacityPerReplica = c
	s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 2 * c}, LLM: l}, Fixed{Replicas: 1})
	require.NoError(t, err)
	s.Advance(0, 60_000, 1, 1)
	require.InEpsilon(t, c*60, s.Served, 1e-9)
	require.InEpsilon(t, c*60, s.Backlog(), 1e-9)
	m := s.Metrics(60_000, 1)
	depth := m.value(QueueDepth, 1)
	require.InEpsilon(t, 2*c*60, depth, 0.05, "2c arriving x the wait behind c x 60 s at c a second")
	r := s.Report()
	require.Greater(t, r.LLM.TTFTP99Ms, 25_000.0)
	require.Less(t, r.LLM.TTFTP99Ms, 32_000.0)
	// The wait delays the first token and so the last: E2E less TTFT is
	// the decode at capacity, whatever the wait. The replica ran at
	// capacity throughout, its cache as full as capacity's state.
	at, err := serving.SteadyLLM(l.Config, c, l.Input, l.Output)
	require.NoError(t, err)
	require.InEpsilon(t, at.E2EMeanMs-at.TTFTMeanMs, r.LLM.E2EMeanMs-r.LLM.TTFTMeanMs, 1e-6)
	require.Greater(t, r.LLM.E2EP99Ms, r.LLM.TTFTP99Ms)
	share := at.KVBlocks / float64(l.Config.Blocks())
	require.InEpsilon(t, share, r.LLM.KVCacheMean, 1e-9)
	require.InEpsilon(t, share, r.LLM.KVCachePeak, 1e-9)
}

// With no replica ready the requests are refused (no endpoint behind the
// Service): dropped, none served.
func TestLLMServiceNoneReady(t *testing.T) {
	s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 5}, LLM: llm8B(t)}, Fixed{Replicas: 1})
	require.NoError(t, err)
	s.Advance(0, 10_000, 1, 0)
	require.Equal(t, 50.0, s.Dropped)
	require.Equal(t, 0.0, s.Served)
}

// At no load nothing waits: the queue latency a scaler reads is 0, not
// the wait of a replica at capacity, and vllm:num_requests_waiting 0.
func TestLLMServiceIdleMetrics(t *testing.T) {
	l := llm8B(t)
	l.CapacityPerReplica = 37.5
	s, err := New(Spec{Name: "chat", Load: serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 0}}}, LLM: l}, Fixed{Replicas: 2})
	require.NoError(t, err)
	m := s.Metrics(0, 2)
	require.Equal(t, 0.0, m.QueueLatencyMs)
	require.Equal(t, 0.0, m.value(QueueDepth, 2))
	require.Equal(t, 0.0, m.InFlight)
}

// A curve computed with the plan changes no figure: a day of a diurnal
// load on five replicas (80 +- 20 requests/s: 12 to 20 a replica, within
// the curve, which reaches down to 28% of the 37.5/s capacity) reports
// exactly what the run computing each rate itself reports, and the run
// evaluates the fast model at no rate of its own. A load whose trough
// goes below the curve (40 +- 20: 4 to 12 a replica) still reports the
// same, computing only the rates below it (under 10.6 a replica).
func TestLLMCurveSameFigures(t *testing.T) {
	l := llm8B(t)
	l.TTFTSLOMs, l.TPOTSLOMs = 150, 30
	c, err := serving.LLMCapacity(l.Config, l.Input, l.Output)
	require.NoError(t, err)
	l.CapacityPerReplica = c
	withCurve := *l
	// From the lower load's trough on five replicas (4/s), bounded to the
	// 65 grid rates from capacity down.
	withCurve.Curve, err = NewLLMCurve(&withCurve, 20.0/5)
	require.NoError(t, err)
	require.Len(t, withCurve.Curve.points, llmCurveKeys+1)
	day := func(x *LLM, base float64) (Report, *Service) {
		s, err := New(Spec{Name: "chat", Load: serving.Load{Base: base, Amplitude: 20, PeakMs: 14 * 3_600_000}, LLM: x}, Fixed{Replicas: 5})
		require.NoError(t, err)
		for h := int64(0); h < 24; h++ {
			s.Advance(h*3_600_000, (h+1)*3_600_000, 5, 5)
			s.Metrics((h+1)*3_600_000, 5)
			s.BucketP95()
		}
		return s.Report(), s
	}
	for _, base := range []float64{80, 40} {
		want, alone := day(l, base)
		got, s := day(&withCurve, base)
		require.Equal(t, want, got, "load %g", base)
		require.NotEmpty(t, alone.llm.points, "load %g: without a curve the run computes its rates", base)
		for k := range s.llm.points {
			rate := math.Exp(float64(k.k) * math.Log1p(llmGrid))
			require.Less(t, rate, c/math.Pow(1+llmGrid, llmCurveKeys)*1.011, "load %g: rate %g computed by the run", base, rate)
		}
		if base == 80 {
			require.Empty(t, s.llm.points)
		} else {
			require.NotEmpty(t, s.llm.points)
		}
	}
}

// Hold.End, by hand on 15 s periods, a band of 10 to 20 requests/s held
// below down to 5 for a 300 s window: 15/s to 600 s, 8/s to 780 s, 15/s
// to 1,200 s, then 8/s. The last period in the band before 600 s is at
// 585 s, so the dip to 780 s is held (before 885 s); the one from 1,200 s
// is held until 1,185 + 300 s: the period at 1,485 s is the end. A dip
// below 5 ends the hold at once, a rise above 20 too, and a hold from
// before (held to 100 s) starting below the band ends at the first
// period at or after it.
func TestHoldEndByHand(t *testing.T) {
	const s = 1000
	pts := func(rates ...float64) serving.Load {
		at := []int64{0, 600 * s, 780 * s, 1200 * s}
		var l serving.Load
		for i, r := range rates {
			l.Points = append(l.Points, serving.Point{AtMs: at[i], Rate: r})
		}
		return l
	}
	h := Hold{Lo: 10, Hi: 20, Below: 5, Window: 300 * s}
	const until = 10_000 * s
	for _, c := range []struct {
		name string
		load serving.Load
		hold Hold
		want int64
	}{
		{"held through the dip, let go after the second", pts(15, 8, 15, 8), h, 1485 * s},
		{"below Below", pts(15, 3, 15, 8), h, 600 * s},
		{"above Hi", pts(15, 8, 25, 8), h, 780 * s},
		{"no window: the band alone", pts(15, 8, 15, 8), Hold{Lo: 10, Hi: 20}, 600 * s},
		{"held from before, below the band", pts(8, 8, 8, 8), Hold{Lo: 10, Hi: 20, Below: 5, Held: 100 * s, Window: 300 * s}, 105 * s},
		{"in the band to the end", pts(15, 15, 15, 15), h, until},
	} {
		require.Equal(t, c.want, c.hold.End(&c.load, 0, 15*s, until), c.name)
	}
}

// A fast-model failure during the run other than an overload (the build
// checked the engine, so it is a gpuplan bug) is the service's Err, not
// the capacity's steady state taken for it in silence: here the engine
// is broken after New (no sequences a step), and the first rate the run
// meets is asked of the fast model.
func TestLLMServiceFastModelFailureIsAnError(t *testing.T) {
	l := llm8B(t)
	s, err := New(Spec{Name: "chat", Load: serving.Load{Base: 30}, LLM: l}, Fixed{Replicas: 3})
	require.NoError(t, err)
	s.Advance(0, 60_000, 3, 3)
	require.NoError(t, s.Err(), "a sound engine")
	s.llm.spec.Config.MaxNumSeqs = -1
	s.llm.spec.Curve = nil
	s.spec.Load.Base = 20
	s.Advance(60_000, 120_000, 3, 3)
	require.Error(t, s.Err())
	require.ErrorContains(t, s.Err(), "steady state at")
}
