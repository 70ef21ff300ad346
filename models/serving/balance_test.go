package serving

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Random balancing without batching is c independent M/M/1 queues, each
// at lambda/c (Poisson splitting): 4 replicas, exponential service of
// 100 ms (mu = 10/s), at rho = lambda/(c mu) of 50%, 80% and 95%. By the
// M/M/1 formulas, P(W > t) = rho e^{-(mu - lambda/c) t}: the mean wait is
// rho / (mu - lambda/c) and the p95 of the wait ln(rho/0.05) / (mu -
// lambda/c); at 50% that is 0.5/5 = 100 ms and ln(10)/5 = 460.5 ms,
// against Erlang C's 8.7 ms and 0 for the shared queue. The fluid model
// is within 5% of both (it is M/M/1 exactly here), and the request-level
// simulator with random dispatch too (at 95% on 4 million requests: one
// M/M/1 queue's autocorrelation time grows as 1/(1-rho)^2, and a million a
// replica puts the standard error of the pooled mean wait near 2%).
func TestRandomUnbatchedIsMM1(t *testing.T) {
	const mu, c = 10.0, 4
	b := Batch{Size: 1, BaseMs: 100, Exponential: true}
	for _, k := range []struct {
		rho, n float64
	}{{0.5, 1_000_000}, {0.8, 1_000_000}, {0.95, 4_000_000}} {
		lambda := k.rho * c * mu
		theta := mu - lambda/c
		wantMean := k.rho / theta * 1000               // ms
		wantP95 := math.Log(k.rho/0.05) / theta * 1000 // ms
		cy, err := BalancedCycle(lambda, c, b, Random)
		if err != nil {
			t.Fatal(err)
		}
		fastMean := cy.MeanLatencyMs() - cy.ServiceMs
		fastP95 := cy.LatencyQuantile(0.95) - cy.ServiceMs
		if rel(fastMean, wantMean) > 0.05 || rel(fastP95, wantP95) > 0.05 {
			t.Errorf("rho %.2f: fluid mean wait %.1f ms (M/M/1 %.1f), p95 %.1f ms (M/M/1 %.1f)", k.rho, fastMean, wantMean, fastP95, wantP95)
		}
		if math.Abs(cy.Served-lambda) > 1e-9 {
			t.Errorf("rho %.2f: serves %g/s, want %g", k.rho, cy.Served, lambda)
		}
		res, err := Simulate(SimConfig{Replicas: c, Balancing: Random, Batch: b,
			StepMs: k.n / lambda * 1000, Rates: []float64{lambda}}, rand.New(rand.NewPCG(7, 1)))
		if err != nil {
			t.Fatal(err)
		}
		gotMean, gotP95 := Mean(res.WaitMs), Quantile(res.WaitMs, 0.95)
		t.Logf("rho %.2f: mean wait fluid %.1f, request-level %.1f, M/M/1 %.1f ms; p95 %.1f, %.1f, %.1f ms", k.rho, fastMean, gotMean, wantMean, fastP95, gotP95, wantP95)
		if rel(gotMean, wantMean) > 0.05 || rel(gotP95, wantP95) > 0.05 {
			t.Errorf("rho %.2f: request-level mean wait %.1f ms (M/M/1 %.1f), p95 %.1f ms (M/M/1 %.1f)", k.rho, gotMean, wantMean, gotP95, wantP95)
		}
	}
}

// The shared queue (LeastRequest) without batching is still Erlang C in
// the fluid model: 2 replicas of mu = 10/s at 50%: mean wait 33.3 ms and
// p95 189.7 ms (worked in TestMMcByHand).
func TestLeastRequestUnbatchedIsErlangC(t *testing.T) {
	cy, err := BalancedCycle(10, 2, Batch{Size: 1, BaseMs: 100, Exponential: true}, LeastRequest)
	if err != nil {
		t.Fatal(err)
	}
	if m := cy.MeanLatencyMs() - cy.ServiceMs; math.Abs(m-100.0/3) > 1e-6 {
		t.Errorf("mean wait %g ms, want 33.33", m)
	}
	if p := cy.LatencyQuantile(0.95) - cy.ServiceMs; math.Abs(p-1000*math.Log(20.0/3)/10) > 1e-6 {
		t.Errorf("p95 wait %g ms, want 189.7", p)
	}
}

// With random balancing the batching wait grows with the replicas: each
// fills its batches from lambda/c. By hand, 100 requests/s, batches of 32
// within 100 ms, 20 + 2n ms: a batch's first request waits the whole
// delay, and the N arriving during it (Poisson, mean lambda/c x 100 ms)
// half of it on average, so the mean wait is (100 + 50 E[N]) / (1 + E[N]):
//   - 1 replica: E[N] = 10, (100 + 500)/11 = 54.5 ms, batches of 11 (42 ms).
//   - 4 replicas at random: E[N] = 2.5, (100 + 125)/3.5 = 64.3 ms, batches
//     of 3.5 (27 ms).
//   - 4 replicas sharing one queue: as 1 replica, 54.5 ms.
//
// The fluid model gives these, and the request-level simulator agrees
// within 2% (no batch waits for a replica: 42 ms < 100).
func TestRandomBatchWaitGrowsWithReplicas(t *testing.T) {
	for _, k := range []struct {
		c        int
		mode     Balancing
		wait, sz float64
	}{{1, Random, 600.0 / 11, 11}, {4, Random, 225 / 3.5, 3.5}, {4, LeastRequest, 600.0 / 11, 11}} {
		cy, err := BalancedCycle(100, k.c, bert, k.mode)
		if err != nil {
			t.Fatal(err)
		}
		fast := cy.MeanLatencyMs() - cy.ServiceMs
		if math.Abs(fast-k.wait) > 1e-9 || math.Abs(cy.Size-k.sz) > 1e-9 || math.Abs(cy.Served-100) > 1e-9 {
			t.Errorf("%d replicas %v: fluid mean wait %.2f ms in batches of %.2f serving %g/s, want %.2f ms, %g", k.c, k.mode, fast, cy.Size, cy.Served, k.wait, k.sz)
		}
		res, err := Simulate(SimConfig{Replicas: k.c, Balancing: k.mode, Batch: bert, StepMs: 600_000, Rates: []float64{100}}, rand.New(rand.NewPCG(4, 8)))
		if err != nil {
			t.Fatal(err)
		}
		got := Mean(res.WaitMs)
		t.Logf("%d replicas %v: mean wait fluid %.1f ms, request-level %.1f ms, batches of %.2f", k.c, k.mode, fast, got, res.MeanBatch())
		if rel(got, k.wait) > 0.02 || rel(res.MeanBatch(), k.sz) > 0.02 {
			t.Errorf("%d replicas %v: request-level mean wait %.1f ms in batches of %.2f, want %.1f ms, %g", k.c, k.mode, got, res.MeanBatch(), k.wait, k.sz)
		}
	}
}

// The fast model in random mode against the request-level simulator with
// random dispatch: 4 replicas of the BERT classifier, p95 within 5% from
// 10% to 80% of capacity; above, conservative (not low by more than 5%
// nor high by more than 20%), as one replica's shared queue is (each
// replica here is one).
func TestRandomFluidAccuracyAcrossLoads(t *testing.T) {
	for _, u := range []float64{0.1, 0.3, 0.6, 0.8, 0.9, 0.95} {
		lambda := u * 4 * bert.Capacity()
		cy, _ := BalancedCycle(lambda, 4, bert, Random)
		res, _ := Simulate(SimConfig{Replicas: 4, Balancing: Random, Batch: bert, StepMs: 300_000, Rates: []float64{lambda}}, rand.New(rand.NewPCG(2, 9)))
		fast, exact := cy.LatencyQuantile(0.95), Quantile(res.LatencyMs, 0.95)
		low := (exact - fast) / exact
		t.Logf("random on 4 at %.0f%%: fluid p95 %.1f ms, request-level %.1f ms", u*100, fast, exact)
		if (u <= 0.8 && rel(fast, exact) > 0.05) || low > 0.05 || -low > 0.20 {
			t.Errorf("random on 4 at %.0f%%: fluid p95 %.1f ms, request-level %.1f ms", u*100, fast, exact)
		}
	}
}

// The diurnal hour of TestFluidMatchesSimulatorOverDiurnalHour (600 to
// 1,400 requests/s on 4 replicas) with random balancing: p95 within 5%.
func TestRandomFluidMatchesSimulatorOverDiurnalHour(t *testing.T) {
	const steps = 60
	rates := make([]float64, steps)
	cycles := make([]Cycle, steps)
	for i := range rates {
		rates[i] = 1000 - 400*math.Cos(2*math.Pi*(float64(i)+0.5)/steps)
		cycles[i], _ = BalancedCycle(rates[i], 4, bert, Random)
	}
	res, err := Simulate(SimConfig{Replicas: 4, Balancing: Random, Batch: bert, StepMs: 60_000, Rates: rates}, rand.New(rand.NewPCG(11, 5)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []float64{0.5, 0.95} {
		fast, exact := MixtureQuantile(cycles, rates, p), Quantile(res.LatencyMs, p)
		t.Logf("p%g: fluid %.1f ms, request-level %.1f ms", p*100, fast, exact)
		if rel(fast, exact) > 0.05 {
			t.Errorf("p%g: fluid %.1f ms vs request-level %.1f ms: more than 5%% apart", p*100, fast, exact)
		}
	}
}

func TestParseBalancing(t *testing.T) {
	for _, m := range []Balancing{Random, LeastRequest} {
		if got, err := ParseBalancing(m.String()); err != nil || got != m {
			t.Errorf("%v: %v, %v", m, got, err)
		}
	}
	if _, err := ParseBalancing("roundRobin"); err == nil {
		t.Error("roundRobin accepted")
	}
}
