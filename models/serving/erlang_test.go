package serving

import (
	"math"
	"testing"
)

// The fast model against Erlang C at the three loads the request-level
// simulator is held to in TestSimulatorMatchesErlangC: 2 replicas sharing
// one queue (LeastRequest), no batching, exponential service of 100 ms
// (mu = 10/s), at 50%, 80% and 95% utilization. M/M/c by hand at 80%
// (lambda 16/s, a = 1.6): Erlang B(2, 1.6) = (1.6^2/2)/(1 + 1.6 + 1.28) =
// 0.3299, C = 2 x 0.3299 / (2 - 1.6 x 0.6701) = 0.7111, mean wait
// C / (c mu - lambda) = 0.7111 / 4 = 177.8 ms, p95 wait ln(C/0.05)/4 =
// 663.7 ms. The fluid model's mean wait and p95 wait are within 5% of the
// formula (it takes Erlang C's probability of waiting and the exponential
// tail, so it is exact here); TestSimulatorMatchesErlangC holds the
// request-level simulator to the same formula at the same loads.
func TestFluidMatchesErlangCAtThreeLoads(t *testing.T) {
	q80 := MMc{Lambda: 16, Mu: 10, C: 2}
	if w, _ := q80.MeanWait(); math.Abs(w-0.17778) > 1e-4 {
		t.Fatalf("Erlang C mean wait at 80%%: %g s, by hand 0.1778", w)
	}
	if p, _ := q80.WaitQuantile(0.95); math.Abs(p-0.6637) > 1e-3 {
		t.Fatalf("Erlang C p95 wait at 80%%: %g s, by hand 0.6637", p)
	}
	for _, rho := range []float64{0.5, 0.8, 0.95} {
		q := MMc{Lambda: rho * 20, Mu: 10, C: 2}
		cy, err := BalancedCycle(q.Lambda, 2, Batch{Size: 1, BaseMs: 100, Exponential: true}, LeastRequest)
		if err != nil {
			t.Fatal(err)
		}
		wantMean, _ := q.MeanWait()
		wantP95, _ := q.WaitQuantile(0.95)
		gotMean := (cy.MeanLatencyMs() - cy.ServiceMs) / 1000
		gotP95 := (cy.LatencyQuantile(0.95) - cy.ServiceMs) / 1000
		t.Logf("rho %.2f: fluid mean wait %.4f s (Erlang C %.4f), p95 %.4f s (%.4f)", rho, gotMean, wantMean, gotP95, wantP95)
		if rel(gotMean, wantMean) > 0.05 || rel(gotP95, wantP95) > 0.05 {
			t.Errorf("rho %.2f: fluid mean wait %.4f s (Erlang C %.4f), p95 %.4f s (formula %.4f)", rho, gotMean, wantMean, gotP95, wantP95)
		}
	}
}
