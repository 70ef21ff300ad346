package services

import (
	"math"
	"testing"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/autoscale"
)

var bert = serving.Batch{Size: 32, MaxDelayMs: 100, BaseMs: 20, PerItemMs: 2}

// drive runs a service for endMs the way the cluster run does: an
// accounting step a second, the scaler at its period, replicas ready
// coldMs after they are created, removed newest first. It returns the
// replicas after each scaler decision.
func drive(t *testing.T, s *Service, start int, coldMs, endMs int64) []int {
	t.Helper()
	created := make([]int64, start) // all ready at 0
	for i := range created {
		created[i] = -coldMs
	}
	var decisions []int
	period := s.Scaler().PeriodMs()
	for now := int64(0); now < endMs; now += 1000 {
		ready := 0
		for _, c := range created {
			if now-c >= coldMs {
				ready++
			}
		}
		if now%period == 0 {
			want := s.Scaler().Decide(now, len(created), ready, len(created)-ready, s.Metrics(now, ready))
			for len(created) < want {
				created = append(created, now)
			}
			if want < len(created) {
				created = created[:want]
			}
			decisions = append(decisions, want)
			ready = 0
			for _, c := range created {
				if now-c >= coldMs {
					ready++
				}
			}
		}
		s.Advance(now, now+1000, len(created), ready)
	}
	return decisions
}

// Steady: 4 replicas at 1,000 requests/s serve everything; the run's p95
// is the fluid cycle's (within the histogram's 2%).
func TestSteadyServiceMatchesItsCycle(t *testing.T) {
	s, err := New(Spec{Name: "bert", Load: serving.Load{Base: 1000}, Batch: bert, SLOMs: 150}, Fixed{4})
	if err != nil {
		t.Fatal(err)
	}
	drive(t, s, 4, 0, 600_000)
	r := s.Report()
	cy, _ := serving.FluidCycle(1000, 4, bert)
	if math.Abs(r.Served-600_000) > 1e-6 || r.Dropped != 0 {
		t.Errorf("served %g of 600,000, dropped %g", r.Served, r.Dropped)
	}
	if want := cy.LatencyQuantile(0.95); r.P95Ms < want || r.P95Ms > want*1.02 {
		t.Errorf("p95 %.1f ms, cycle %.1f", r.P95Ms, want)
	}
	if r.SLOAttainment < 0.99 || math.Abs(r.ReplicaHours-4.0/6) > 1e-9 {
		t.Errorf("SLO %.3f, replica-hours %g", r.SLOAttainment, r.ReplicaHours)
	}
}

// An overload and its backlog, by hand: one replica serves 32/84 ms =
// 381/s; 500/s for 60 s leaves (500-381) x 60 = 7,143 waiting; at 100/s
// after, it drains at 281/s in 25.4 s. Nothing is lost without a limit;
// with a queue of 1,000, about 6,143 are dropped.
func TestBacklogBuildsAndDrains(t *testing.T) {
	load := serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 500}, {AtMs: 60_000, Rate: 100}}}
	s, _ := New(Spec{Name: "x", Load: load, Batch: bert}, Fixed{1})
	drive(t, s, 1, 0, 60_000)
	capacity := bert.Capacity()
	if want := (500 - capacity) * 60; math.Abs(s.backlog-want) > 1 {
		t.Errorf("backlog at 60 s: %.0f, want %.0f", s.backlog, want)
	}
	s2, _ := New(Spec{Name: "x", Load: load, Batch: bert}, Fixed{1})
	drive(t, s2, 1, 0, 120_000)
	if s2.backlog != 0 || math.Abs(s2.Served-s2.Arrived) > 1e-6 || s2.Dropped != 0 {
		t.Errorf("after 120 s: backlog %.1f, served %.0f of %.0f, dropped %.0f", s2.backlog, s2.Served, s2.Arrived, s2.Dropped)
	}
	// The worst wait is behind the whole backlog: 7,143 / 381 = 18.75 s.
	if p99 := s2.Report().P99Ms; p99 < 10_000 || p99 > 19_500 {
		t.Errorf("p99 %.0f ms", p99)
	}
	s3, _ := New(Spec{Name: "x", Load: load, Batch: bert, QueueLimit: 1000}, Fixed{1})
	drive(t, s3, 1, 0, 120_000)
	if want := (500-capacity)*60 - 1000; math.Abs(s3.Dropped-want) > 2 {
		t.Errorf("dropped %.0f, want %.0f", s3.Dropped, want)
	}
}

// An HPA on requests per replica (target 200/s) through a flash sale from
// 400 to 2,000 requests/s at 60 s, replicas ready 60 s after creation. By
// hand: at the sync at 60 s, 2 ready replicas see 1,000/s each, asking for
// ceil(2 x 5) = 10, limited to max(2+4, 2x2) = 6; at 75 s the 4 new ones
// are not ready: counted as idle, the ratio is 2x1000/(6x200) = 1.67,
// ceil(1.67 x 6) = 10, allowed (max(6+4, 12)): 10.
func TestHPAThroughAFlashSale(t *testing.T) {
	load := serving.Load{Base: 400, Spikes: []serving.Spike{{StartMs: 60_000, LengthMs: 600_000, Factor: 5}}}
	h, _ := autoscale.NewHPA(autoscale.NewHPASpec(20, 200))
	s, _ := New(Spec{Name: "shop", Load: load, Batch: bert, SLOMs: 200}, HPA{H: h, Metric: RequestsPerReplica})
	got := drive(t, s, 2, 60_000, 300_000)
	// Decisions every 15 s: 0, 15, 30, 45 s: 2; 60 s: 6; 75 s: 10.
	if got[3] != 2 || got[4] != 6 || got[5] != 10 {
		t.Errorf("replicas at 45, 60, 75 s: %v", got[3:6])
	}
	r := s.Report()
	if r.Dropped != 0 || r.SLOAttainment > 0.95 {
		t.Errorf("a cold start through a 5x spike should miss the SLO for a while: attainment %.3f", r.SLOAttainment)
	}
}

// Knative's KPA through a quiet night: 100 requests/s, then none from
// 300 s to 900 s, then 100/s again. The last replica goes once the stable
// window (60 s) has seen no traffic and the grace period (30 s) has
// passed: at 300 + 58 + 30 s on the 2 s tick. When traffic returns the
// requests wait at the activator for a replica (cold start 20 s): the
// run's worst latencies are the cold start's.
func TestKPAScalesToZeroAndColdStarts(t *testing.T) {
	load := serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 100}, {AtMs: 300_000, Rate: 0}, {AtMs: 900_000, Rate: 100}}}
	k, _ := autoscale.NewKPA(autoscale.NewKPASpec(7))
	s, _ := New(Spec{Name: "rec", Load: load, Batch: bert, SLOMs: 500}, KPA{K: k, TickMs: 2000})
	got := drive(t, s, 2, 20_000, 1_200_000)
	zeroAt := -1
	for i, r := range got {
		if r == 0 {
			zeroAt = i * 2000
			break
		}
	}
	if zeroAt != 388_000 {
		t.Errorf("scaled to zero at %d ms, want 388,000", zeroAt)
	}
	// At 900 s nothing waits yet; at the next tick 200 requests wait at
	// the activator: the panic window (3 ticks) averages (200+0+0)/3 =
	// 66.7 in flight, ceil(66.7/7) = 10 replicas.
	if got[450] != 0 || got[451] != 10 {
		t.Errorf("replicas at 900 and 902 s: %d, %d; want 0 then 10", got[450], got[451])
	}
	r := s.Report()
	if math.Abs(r.Served-r.Arrived) > 1e-6 || r.P99Ms < 10_000 {
		t.Errorf("served %.0f of %.0f; p99 %.0f ms (the cold start should show)", r.Served, r.Arrived, r.P99Ms)
	}
}

// Observe gives a rate-only scaler the rate (and the backlog) and any
// other the full metrics.
func TestObserveReadsWhatTheScalerReads(t *testing.T) {
	h, err := autoscale.NewHPA(autoscale.NewHPASpec(8, 100))
	if err != nil {
		t.Fatal(err)
	}
	load := serving.Load{Base: 1000, Amplitude: 500}
	for _, c := range []struct {
		sc   Scaler
		full bool
	}{{HPA{H: h, Metric: RequestsPerReplica}, false}, {Fixed{2}, false}, {HPA{H: h, Metric: Concurrency}, true}} {
		s, err := New(Spec{Name: "x", Load: load, Batch: bert}, c.sc)
		if err != nil {
			t.Fatal(err)
		}
		s.Advance(0, 60_000, 4, 4)
		got, all := s.Observe(60_000, 4), s.Metrics(60_000, 4)
		if got.Rate != all.Rate || got.InFlight > all.InFlight {
			t.Errorf("%T: observed %+v, metrics %+v", c.sc, got, all)
		}
		if c.full != (got == all) || (!c.full && got.Utilization != 0) {
			t.Errorf("%T: observed %+v, metrics %+v (full %v)", c.sc, got, all, c.full)
		}
	}
}

// KeepBand is the rates at which the HPA keeps its replicas: checked at
// rates across and just beyond it against a fresh HPA's decision, for
// 1 to 5 replicas on a target of 1,000 requests/s each (the band is
// [1,000 (r-1)/r r, 1,100 r] from the rounding up and the 0.1 tolerance:
// 2 replicas keep from 1,000 to 2,200 requests/s), an AverageValue and a
// Value target, and a fixed count, whose band is every rate. (No
// scale-down window: a fresh HPA's first sync records the replicas it
// finds, as the controller does, and a window would hold a scale-down
// below the band.)
func TestKeepBandIsWhatTheHPADecides(t *testing.T) {
	for _, typ := range []autoscale.MetricType{autoscale.AverageValue, autoscale.Value} {
		spec := autoscale.NewHPASpec(8, 1000)
		spec.ScaleDown.StabilizationMs = 0
		spec.Type = typ
		if typ == autoscale.Value {
			spec.Target = 2000 // the total: 2,000/s for any replicas
		}
		for r := 1; r <= 5; r++ {
			h, err := autoscale.NewHPA(spec)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(Spec{Name: "s", Load: serving.Load{Base: 1}, Batch: bert}, HPA{H: h, Metric: RequestsPerReplica})
			if err != nil {
				t.Fatal(err)
			}
			lo, hi, ok := s.KeepBand(r, 1, 8)
			if !ok {
				t.Fatalf("%d replicas: no band", r)
			}
			wantLo, wantHi := 1000*float64(r-1), 1100*float64(r)
			if typ == autoscale.Value {
				wantLo, wantHi = 2000*math.Min(0.9, float64(r-1)/float64(r)), 2200
			}
			if r == 1 {
				wantLo = 0
			}
			if math.Abs(lo-wantLo) > 1e-3*wantHi || math.Abs(hi-wantHi) > 1e-3*wantHi {
				t.Errorf("%v, %d replicas: band [%g, %g], want [%g, %g]", typ, r, lo, hi, wantLo, wantHi)
			}
			for _, rate := range []float64{lo, (lo + hi) / 2, hi, lo * 0.99, hi * 1.01} {
				fresh, _ := HPA{H: h, Metric: RequestsPerReplica}.Fresh()
				got := fresh.Decide(0, r, r, 0, Metrics{Rate: rate})
				if keeps := rate >= lo && rate <= hi; keeps != (got == r) && !(rate < lo && r == 1) {
					t.Errorf("%v, %d replicas at %g/s: decided %d, band [%g, %g]", typ, r, rate, got, lo, hi)
				}
			}
		}
	}
	s, err := New(Spec{Name: "f", Load: serving.Load{Base: 1}, Batch: bert}, Fixed{Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi, ok := s.KeepBand(3, 1, 5); !ok || lo != 0 || !math.IsInf(hi, 1) {
		t.Errorf("fixed 3 on 3: band [%g, %g] %v", lo, hi, ok)
	}
	if _, _, ok := s.KeepBand(2, 1, 5); ok {
		t.Errorf("fixed 3 on 2 replicas keeps them")
	}
}
