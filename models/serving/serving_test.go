package serving

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The request-level simulator against Erlang C: 2 replicas, no batching,
// exponential service of 100 ms (mu = 10/s), at 50%, 80% and 95%
// utilization. The mean wait and the 95th percentile of the wait are
// within 5% of the M/M/c formulas. At 95% the queue's autocorrelation
// needs millions of requests for that precision.
func TestSimulatorMatchesErlangC(t *testing.T) {
	for _, c := range []struct {
		rho float64
		n   float64 // requests to simulate
	}{{0.5, 1_000_000}, {0.8, 1_000_000}, {0.95, 3_000_000}} {
		q := MMc{Lambda: c.rho * 20, Mu: 10, C: 2}
		duration := c.n / q.Lambda * 1000
		res, err := Simulate(SimConfig{Replicas: 2, Batch: Batch{Size: 1, BaseMs: 100, Exponential: true},
			StepMs: duration, Rates: []float64{q.Lambda}}, rand.New(rand.NewPCG(7, 1)))
		if err != nil {
			t.Fatal(err)
		}
		wantMean, _ := q.MeanWait()
		wantP95, _ := q.WaitQuantile(0.95)
		gotMean := Mean(res.WaitMs) / 1000
		gotP95 := Quantile(res.WaitMs, 0.95) / 1000
		t.Logf("rho %.2f: mean %.4f/%.4f p95 %.4f/%.4f", c.rho, gotMean, wantMean, gotP95, wantP95)
		if rel(gotMean, wantMean) > 0.05 || rel(gotP95, wantP95) > 0.05 {
			t.Errorf("rho %.2f: mean wait %.4f s (Erlang C %.4f), p95 %.4f s (formula %.4f)", c.rho, gotMean, wantMean, gotP95, wantP95)
		}
		wantResp, _ := q.ResponseQuantile(0.95)
		if got := Quantile(res.LatencyMs, 0.95) / 1000; rel(got, wantResp) > 0.05 {
			t.Errorf("rho %.2f: p95 latency %.4f s, formula %.4f", c.rho, got, wantResp)
		}
	}
}

// Worked by hand: at rho 0.5 with c = 2, a = 1: Erlang B(2,1) = 0.2, C =
// 2 x 0.2 / (2 - 1 x 0.8) = 1/3; mean wait C / (c mu - lambda) = (1/3)/10
// = 33.3 ms; p95 wait ln((1/3)/0.05)/10 = 189.7 ms.
func TestMMcByHand(t *testing.T) {
	q := MMc{Lambda: 10, Mu: 10, C: 2}
	if w, _ := q.MeanWait(); math.Abs(w-1.0/30) > 1e-12 {
		t.Errorf("mean wait %g", w)
	}
	if p, _ := q.WaitQuantile(0.95); math.Abs(p-math.Log(20.0/3)/10) > 1e-12 {
		t.Errorf("p95 wait %g", p)
	}
	if p, _ := q.WaitQuantile(0.5); p != 0 {
		t.Errorf("median wait %g, want 0 (2/3 find a free replica)", p)
	}
}

// Batching: base 20 ms + 2 ms a request. By hand, one replica serves
// 1/22 ms = 45.5 requests/s unbatched and 32/84 ms = 381 requests/s in
// batches of 32. Offered 1,000/s (more than either) for 10 minutes with a
// queue of 64, the simulator serves each capacity within 1% (what the
// queue holds at the end, served after it, is under 0.3% of the total).
func TestBatchThroughput(t *testing.T) {
	for _, c := range []struct {
		size int
		want float64
	}{{1, 1000.0 / 22}, {32, 32000.0 / 84}} {
		b := Batch{Size: c.size, MaxDelayMs: 100, BaseMs: 20, PerItemMs: 2}
		if math.Abs(b.Capacity()-c.want) > 1e-9 {
			t.Errorf("capacity at %d: %g, want %g", c.size, b.Capacity(), c.want)
		}
		res, err := Simulate(SimConfig{Replicas: 1, Batch: b, QueueLimit: 64, StepMs: 600_000, Rates: []float64{1000}},
			rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		served := float64(len(res.LatencyMs)) / 600
		if rel(served, c.want) > 0.01 {
			t.Errorf("batch %d: served %.1f/s, want %.1f/s", c.size, served, c.want)
		}
		if res.Dropped == 0 {
			t.Errorf("batch %d: an overloaded queue dropped nothing", c.size)
		}
	}
}

// At low load the batch waits for its delay: one request every second, a
// 100 ms delay, batches of 32: every request waits the whole 100 ms and
// is served alone (20 + 2 ms).
func TestBatchDelayAtLowLoad(t *testing.T) {
	res, err := Simulate(SimConfig{Replicas: 1, Batch: Batch{Size: 32, MaxDelayMs: 100, BaseMs: 20, PerItemMs: 2},
		StepMs: 1000, Rates: []float64{0.001, 0.001}}, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range res.LatencyMs {
		if math.Abs(l-122) > 1e-9 {
			t.Errorf("request %d: latency %g ms, want 122", i, l)
		}
	}
}

func TestBatchValidate(t *testing.T) {
	for _, b := range []Batch{{Size: 0, BaseMs: 1}, {Size: 1}, {Size: 4, BaseMs: -1, PerItemMs: 2}, {Size: 2, MaxDelayMs: -5, BaseMs: 1}} {
		if b.Validate() == nil {
			t.Errorf("%+v accepted", b)
		}
	}
}

func rel(got, want float64) float64 { return math.Abs(got-want) / want }
