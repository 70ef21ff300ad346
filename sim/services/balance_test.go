package services

import (
	"math"
	"testing"

	"gpuplan.dev/gpuplan/models/serving"
)

// Balancing changes the batching wait a service exports and reports. By
// hand (as in models/serving): 100 requests/s on 4 replicas, batches of
// 32 within 100 ms, 20 + 2n ms. Sharing one queue, batches gather 11
// requests and the mean wait is (100 + 10 x 50)/11 = 54.5 ms; at random
// each replica gathers 3.5 (27 ms) and the mean wait is (100 + 2.5 x
// 50)/3.5 = 64.3 ms. Both serve everything, and in a batch of 3.5 every
// 140 ms each replica is busy 27/140 = 19.3% of the time (the shared
// queue's 4 replicas: one 42 ms batch every 110 ms, 42/440 = 9.5%).
func TestBalancingQueueLatencyByHand(t *testing.T) {
	for _, k := range []struct {
		mode       serving.Balancing
		wait, util float64
	}{{serving.LeastRequest, 600.0 / 11, 100 * 42.0 / 440}, {serving.Random, 225 / 3.5, 100 * 27.0 / 140}} {
		s, err := New(Spec{Name: "bert", Load: serving.Load{Base: 100}, Batch: bert, Balancing: k.mode}, Fixed{4})
		if err != nil {
			t.Fatal(err)
		}
		m := s.Metrics(0, 4)
		if math.Abs(m.QueueLatencyMs-k.wait) > 1e-9 || math.Abs(m.Utilization-k.util) > 1e-9 {
			t.Errorf("%v: queue latency %.2f ms, utilization %.2f%%; want %.2f ms, %.2f%%", k.mode, m.QueueLatencyMs, m.Utilization, k.wait, k.util)
		}
		// Little's law: 100/s x (wait + service).
		svc := 42.0
		if k.mode == serving.Random {
			svc = 27
		}
		if want := 100 * (k.wait + svc) / 1000; math.Abs(m.InFlight-want) > 1e-9 {
			t.Errorf("%v: in flight %.3f, want %.3f", k.mode, m.InFlight, want)
		}
		drive(t, s, 4, 0, 600_000)
		r := s.Report()
		cy, _ := serving.BalancedCycle(100, 4, bert, k.mode)
		if want := cy.LatencyQuantile(0.95); r.Served != 60_000 || r.P95Ms < want || r.P95Ms > want*1.02 {
			t.Errorf("%v: served %g, p95 %.1f ms (cycle %.1f)", k.mode, r.Served, r.P95Ms, want)
		}
	}
}

// With no replica ready, a shared queue (Knative's activator) holds the
// requests; a Kubernetes Service with no endpoint refuses them: 100/s for
// 10 s is 1,000 held, or 1,000 dropped.
func TestBalancingWithNoReplicaReady(t *testing.T) {
	for _, mode := range []serving.Balancing{serving.LeastRequest, serving.Random} {
		s, _ := New(Spec{Name: "x", Load: serving.Load{Base: 100}, Batch: bert, Balancing: mode}, Fixed{0})
		for now := int64(0); now < 10_000; now += 1000 {
			s.Advance(now, now+1000, 1, 0)
		}
		held, dropped := 1000.0, 0.0
		if mode == serving.Random {
			held, dropped = 0, 1000
		}
		if math.Abs(s.Backlog()-held) > 1e-9 || math.Abs(s.Dropped-dropped) > 1e-9 {
			t.Errorf("%v: backlog %g, dropped %g; want %g, %g", mode, s.Backlog(), s.Dropped, held, dropped)
		}
	}
}

// Overloaded, both balancings serve what full batches serve: 2 replicas x
// 32/84 ms = 761.9/s, so 1,000/s for a minute leaves (1,000 - 761.9) x 60
// = 14,286 behind either way.
func TestBalancingOverloadThroughput(t *testing.T) {
	for _, mode := range []serving.Balancing{serving.LeastRequest, serving.Random} {
		s, _ := New(Spec{Name: "x", Load: serving.Load{Base: 1000}, Batch: bert, Balancing: mode}, Fixed{2})
		drive(t, s, 2, 0, 60_000)
		if want := (1000 - 2*32/0.084) * 60; math.Abs(s.Backlog()-want) > 1e-6 {
			t.Errorf("%v: backlog %.1f, want %.1f", mode, s.Backlog(), want)
		}
	}
}
