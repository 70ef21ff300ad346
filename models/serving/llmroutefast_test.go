package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cluster run's fast model is one replica's at Poisson arrivals: a
// Kubernetes Service spreading requests at random. Behind the other
// routers (the exact model, three 8B H100 replicas, 18,000 requests, at
// 10, 20 and 30 requests/s a replica: 27% to 80% of capacity) the
// replicas' TPOT and E2E stay within 5% of it on mean and p95 (routing
// changes when a request's prompt starts, not how fast it decodes), and
// their TTFT is no worse: round robin's smoother arrivals gather fewer
// prompts in a step (30/s: p95 46 ms against random's 64 in the exact
// model), least outstanding's a little, prefix-aware between. So the
// run's figures for random hold for them too, TTFT as an upper bound
// (the fast model's p95 at 80% of capacity, 62 ms, is 34% above round
// robin's).
func TestRoutersAgainstTheFastModel(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	in := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	const c = 3
	for _, per := range []float64{10, 20, 30} {
		reqs := PoissonLLMRequests(rand.New(rand.NewPCG(1, 2)), per*c, 18000, in, out)
		f, err := SteadyLLM(cfg, per, in, out)
		require.NoError(t, err)
		for _, r := range []Router{RoundRobin, LeastOutstanding, PrefixAware} {
			got, err := SimulateLLMRouted(cfg, c, r, reqs)
			require.NoError(t, err)
			x := got.LLMResult
			t.Logf("%g/s a replica, %-17s TTFT %.1f/%.1f TPOT %.2f/%.2f E2E %.0f/%.0f (fast model, random: %.1f/%.1f, %.2f/%.2f, %.0f/%.0f; mean/p95 ms)", per, r,
				Mean(x.TTFTMs), InterpQuantile(x.TTFTMs, .95), Mean(x.TPOTMs), InterpQuantile(x.TPOTMs, .95), Mean(x.E2EMs), InterpQuantile(x.E2EMs, .95),
				f.TTFTMeanMs, f.TTFTP95Ms, f.TPOTMeanMs, f.TPOTP95Ms, f.E2EMeanMs, f.E2EP95Ms)
			require.InEpsilon(t, Mean(x.TPOTMs), f.TPOTMeanMs, 0.05, "%s %g/s", r, per)
			require.InEpsilon(t, InterpQuantile(x.TPOTMs, .95), f.TPOTP95Ms, 0.05, "%s %g/s", r, per)
			require.InEpsilon(t, Mean(x.E2EMs), f.E2EMeanMs, 0.05, "%s %g/s", r, per)
			require.InEpsilon(t, InterpQuantile(x.E2EMs, .95), f.E2EP95Ms, 0.05, "%s %g/s", r, per)
			require.LessOrEqual(t, Mean(x.TTFTMs), 1.03*f.TTFTMeanMs, "%s %g/s", r, per)
			require.LessOrEqual(t, InterpQuantile(x.TTFTMs, .95), 1.03*f.TTFTP95Ms, "%s %g/s", r, per)
		}
	}
}
