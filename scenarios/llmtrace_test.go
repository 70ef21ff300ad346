package scenarios

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim"
)

// azureSample is the first ten minutes of Azure's LLM inference trace
// 2023, conversation (testdata/services/PROVENANCE.md).
const azureSample = "testdata/services/azure-llm-conv-10m.csv"

// traceScenario is one H100 node and a Llama-3-8B service of REPLICAS
// fixed replicas (no autoscaler, no cold start) serving the request
// trace TRACE.
const traceScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: trace
spec:
  seed: 3
  horizon: HORIZON
  cluster:
    pools:
    - name: gpu
      count: 1
      instanceType: p5.48xlarge
  workload:
    services:
    - name: chat
      pod: {cpu: "16", memory: 128Gi, gpus: 1}
      replicas: {min: REPLICAS, max: REPLICAS}
      llm:
        model: llama-3-8b
        gpu: H100-80GB
        maxModelLen: 8192
        requestTrace: TRACE
`

// buildIn parses body as a scenario file in dir and builds it with o,
// giving the error of either; what is built is closed when the test
// ends.
func buildIn(t *testing.T, dir, body string, o Options) (*Built, error) {
	t.Helper()
	s, err := Parse("svc.yaml", dir, []byte(body))
	if err != nil {
		return nil, err
	}
	b, err := s.Build(o)
	if err == nil {
		t.Cleanup(func() { b.Close() })
	}
	return b, err
}

// runTrace builds and runs traceScenario in dir.
func runTrace(t *testing.T, dir, horizon, replicas, trace string) (*Built, *sim.Result) {
	t.Helper()
	body := strings.NewReplacer("HORIZON", horizon, "REPLICAS", replicas, "TRACE", trace).Replace(traceScenario)
	b, err := buildIn(t, dir, body, Options{})
	require.NoError(t, err)
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.Len(t, res.Services, 1)
	return b, res
}

// LLMTraceLoad against the bins counted one by one: random traces of a
// few requests in 0-20 s, bins of 1-3 s, looped or not, with and without
// a horizon; the curve's rate at every 100 ms up to the horizon (or the
// trace's end) is its bin's count over its length, each point a change
// of rate, and cut is whether the horizon ends before the last bin does.
// Before, 10 requests at 0 s and 10 at 5 s in bins of 1 s, looped over
// an hour, held 10/s from 5 s to the hour (35,960 requests, not 12,000):
// a trace of equal busy bins with gaps between them was taken as one
// rate.
func TestLLMTraceLoadAgainstBins(t *testing.T) {
	burst := make([]serving.LLMRequest, 20)
	for i := 10; i < 20; i++ {
		burst[i].ArrivalMs = 5000
	}
	pts, _, err := LLMTraceLoad(burst, 1000, true, 3_600_000)
	require.NoError(t, err)
	arrived := 0.0
	for i, p := range pts {
		next := int64(3_600_000)
		if i+1 < len(pts) {
			next = pts[i+1].AtMs
		}
		arrived += p.Rate * float64(next-p.AtMs) / 1000
	}
	require.InDelta(t, 12_000, arrived, 1e-6)

	rng := rand.New(rand.NewPCG(31, 7))
	rate := func(pts []serving.Point, at int64) float64 {
		r := 0.0
		for _, p := range pts {
			if p.AtMs > at {
				break
			}
			r = p.Rate
		}
		return r
	}
	for trial := range 3000 {
		n := 1 + rng.IntN(6)
		reqs := make([]serving.LLMRequest, n)
		for i := range reqs {
			reqs[i].ArrivalMs = float64(rng.IntN(20_000))
		}
		slices.SortFunc(reqs, func(a, b serving.LLMRequest) int { return cmp.Compare(a.ArrivalMs, b.ArrivalMs) })
		bin := int64(1000 * (1 + rng.IntN(3)))
		loop := rng.IntN(2) == 0
		horizon := int64(0)
		if rng.IntN(3) > 0 {
			horizon = int64(1000 * (1 + rng.IntN(60)))
		}
		counts := map[int64]int{}
		for _, r := range reqs {
			counts[int64(r.ArrivalMs)/bin]++
		}
		period := (int64(reqs[n-1].ArrivalMs)/bin + 1) * bin
		end := period
		if horizon > 0 && (loop || horizon < period) {
			end = horizon
		}
		pts, cut, err := LLMTraceLoad(reqs, bin, loop, horizon)
		require.NoError(t, err)
		require.Equal(t, end < period, cut, trial)
		for i := 1; i < len(pts); i++ {
			require.Greater(t, pts[i].AtMs, pts[i-1].AtMs, trial)
			require.NotEqual(t, pts[i].Rate, pts[i-1].Rate, trial)
		}
		for at := int64(0); at < end; at += 100 {
			want := float64(counts[(at%period)/bin]) / (float64(bin) / 1000)
			require.Equal(t, want, rate(pts, at), "trial %d at %d ms", trial, at)
		}
		if end == period {
			require.Zero(t, rate(pts, period), trial)
		}
	}
}

// A time given to the millisecond is that millisecond, so a request on a
// bin's edge is in the bin it starts: 1.001 s is 1,001 ms (1.001 x 1000
// is 1000.9999999999999 in floating point, in the bin before a bin edge
// at 1,001 ms), and Azure's 47.6815900 a second and a millisecond after
// 46.6805900.
func TestLLMTraceTimesToTheMillisecond(t *testing.T) {
	reqs, err := ReadLLMTraceCSV("t.csv", []byte(LLMTraceHeader+"\n0,1,1\n1.001,1,1\n2.002,1,1\n"), 0)
	require.NoError(t, err)
	require.Equal(t, []float64{0, 1001, 2002}, []float64{reqs[0].ArrivalMs, reqs[1].ArrivalMs, reqs[2].ArrivalMs})
	pts, _, err := LLMTraceLoad(reqs, 1001, false, 0)
	require.NoError(t, err)
	// Three requests in the first three bins of 1.001 s: one rate.
	require.Len(t, pts, 2)
	require.Equal(t, []int64{0, 3003}, []int64{pts[0].AtMs, pts[1].AtMs})
	require.InEpsilon(t, 1/1.001, pts[0].Rate, 1e-12)
	reqs, err = ReadLLMTraceCSV("a.csv", []byte(AzureLLMTraceHeader+"\n2023-11-16 18:15:46.6805900,1,1\n2023-11-16 18:15:47.6815900,1,1\n"), 0)
	require.NoError(t, err)
	require.Equal(t, 1001.0, reqs[1].ArrivalMs)
}

// buildTrace builds the trace scenario with one replica and gives the
// error of its parse or build.
func buildTrace(t *testing.T, dir, horizon, trace string) (*Built, error) {
	t.Helper()
	return buildIn(t, dir, strings.NewReplacer("HORIZON", horizon, "REPLICAS", "1", "TRACE", trace).Replace(traceScenario), Options{})
}

// Azure's format read as written: the header TIMESTAMP, ContextTokens,
// GeneratedTokens, timestamps made relative to the first row (100 ns
// digits kept to the microsecond a float holds here); errors at the
// line and Azure's column.
func TestReadAzureLLMTrace(t *testing.T) {
	reqs, err := ReadLLMTraceCSV("a.csv", []byte("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44\r\n2023-11-16 18:15:50.9951690,396,109\r\n2023-11-16 18:16:46.68059,879,55\r\n2023-11-16 18:16:47,91,16\r\n"), 8192)
	require.NoError(t, err)
	require.Len(t, reqs, 4)
	// 50.9951690 - 46.6805900 = 4.314579 s; a minute; 47 - 46.68059 =
	// 60.3194100 s.
	for i, want := range []serving.LLMRequest{{ArrivalMs: 0, Input: 374, Output: 44}, {ArrivalMs: 4314.579, Input: 396, Output: 109},
		{ArrivalMs: 60_000, Input: 879, Output: 55}, {ArrivalMs: 60_319.41, Input: 91, Output: 16}} {
		require.InDelta(t, want.ArrivalMs, reqs[i].ArrivalMs, 1e-6, i)
		require.Equal(t, want.Input, reqs[i].Input, i)
		require.Equal(t, want.Output, reqs[i].Output, i)
	}
	const h = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	for _, c := range []struct{ body, want string }{
		{h + "2023-11-16 18:15:46.68,374,44\n2023-11-16T18:15:47,1,1\n", `a.csv:3: TIMESTAMP: "2023-11-16T18:15:47" is not a time such as 2023-11-16 18:15:46.6805900`},
		{h + "2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:46.6,1,1\n", `a.csv:3: TIMESTAMP: "2023-11-16 18:15:46.6" is before the row before: requests must be in time order`},
		{h + "2023-11-16 18:15:46.68,-374,44\n", `a.csv:2: ContextTokens: "-374" is not a count of tokens from 1 to 10000000`},
		{h + "2023-11-16 18:15:46.68,374,0\n", `a.csv:2: GeneratedTokens: "0" is not a count of tokens`},
		{h + "2023-11-16 18:15:46.68,8000,300\n", `a.csv:2: GeneratedTokens: a request of 8000 prompt and 300 output tokens is above maxModelLen 8192`},
		{h + "2023-11-16 18:15:46.68,374\n", `a.csv:2: "2023-11-16 18:15:46.68,374" has 2 fields; a row is TIMESTAMP,ContextTokens,GeneratedTokens`},
		{"TIMESTAMP,ContextTokens\n", `a.csv:1: header: is "TIMESTAMP,ContextTokens"; a request trace starts with the header time,input_tokens,output_tokens (or Azure's TIMESTAMP,ContextTokens,GeneratedTokens)`},
		{h + "2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:46.68,\"" + strings.Repeat("x", 500) + "\",1\n", `a.csv:3: ContextTokens: "\"xxxx`},
	} {
		_, err := ReadLLMTraceCSV("a.csv", []byte(c.body), 8192)
		require.Error(t, err, c.body)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.body)
		require.Less(t, len(err.Error()), 300, c.body)
	}
}

// A trace's arrivals binned by hand: requests at 0, 10, 59.9, 60 and
// 150 s in bins of a minute are 3, 1 and 1 a bin: 3/60 = 0.05/s for the
// first minute, 1/60/s for the next two (one point: the rate does not
// change), 0 from 180 s on. With loop the three bins repeat every 180 s
// up to the horizon; a horizon of 100 s cuts the request at 150 s.
func TestLLMTraceLoadBins(t *testing.T) {
	reqs := []serving.LLMRequest{{ArrivalMs: 0}, {ArrivalMs: 10_000}, {ArrivalMs: 59_900}, {ArrivalMs: 60_000}, {ArrivalMs: 150_000}}
	pts, cut, err := LLMTraceLoad(reqs, 60_000, false, 3_600_000)
	require.NoError(t, err)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 0.05}, {AtMs: 60_000, Rate: 1.0 / 60}, {AtMs: 180_000, Rate: 0}}, pts)
	require.False(t, cut)
	pts, cut, err = LLMTraceLoad(reqs, 60_000, true, 400_000)
	require.NoError(t, err)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 0.05}, {AtMs: 60_000, Rate: 1.0 / 60}, {AtMs: 180_000, Rate: 0.05}, {AtMs: 240_000, Rate: 1.0 / 60},
		{AtMs: 360_000, Rate: 0.05}}, pts)
	require.False(t, cut)
	// With no horizon (a run until drained) nothing repeats.
	pts, _, err = LLMTraceLoad(reqs, 60_000, true, 0)
	require.NoError(t, err)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 0.05}, {AtMs: 60_000, Rate: 1.0 / 60}, {AtMs: 180_000, Rate: 0}}, pts)
	pts, cut, err = LLMTraceLoad(reqs, 60_000, false, 100_000)
	require.NoError(t, err)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 0.05}, {AtMs: 60_000, Rate: 1.0 / 60}}, pts)
	require.True(t, cut)
	// Bins of 30 s: 2 (0 and 10 s), 1 (59.9), 1 (60), 0, 0, 1 (150):
	// 2/30, 1/30, 0 from 120 s, 1/30 from 150 s, 0 from 180 s.
	pts, _, err = LLMTraceLoad(reqs, 30_000, false, 0)
	require.NoError(t, err)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 2.0 / 30}, {AtMs: 30_000, Rate: 1.0 / 30}, {AtMs: 90_000, Rate: 0}, {AtMs: 150_000, Rate: 1.0 / 30}, {AtMs: 180_000, Rate: 0}}, pts)

	// Through a scenario: the hand trace (testdata/services/llm-trace.csv,
	// five requests in the first 2 s) in bins of 1 s: 3 at 0 and 0.25 s,
	// 2 at 1.5 and 2 s: 3/s, then 1/s over two bins, 0 from 3 s. The run
	// takes every one of them, and with loop over a minute 20 times as
	// many (3 s a replay).
	b, res := runTrace(t, "testdata/services", "1m", "1", "{path: llm-trace.csv, bin: 1s}")
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 3}, {AtMs: 1000, Rate: 1}, {AtMs: 3000, Rate: 0}}, b.Config.Services[0].Spec.Load.Points)
	require.InDelta(t, 5, res.Services[0].Arrived, 1e-9)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "llm.requestTrace llm-trace.csv: 5 requests over 3s; the load is their count in each bin of 1s")
	_, res = runTrace(t, "testdata/services", "1m", "1", "{path: llm-trace.csv, bin: 1s, loop: true}")
	require.InDelta(t, 100, res.Services[0].Arrived, 1e-9)
}

// A trace's curve costs its requests, not its span: two requests a
// century apart in bins of a second are 4 changes of rate (1/s, 0, 1/s,
// 0), not 3e9 bins (before: a 24 GB array, and the run died out of
// memory on a three-line file). Looped, a trace whose rate changes adds
// its changes at every replay, and past MaxRatePoints it is an error at
// llm.requestTrace, as a load.csv of more rows is; a trace of one rate
// looped over a year is one point.
func TestLLMTraceLoadBounded(t *testing.T) {
	const century = 3_000_000_000_000 // ms, 95 years
	reqs := []serving.LLMRequest{{ArrivalMs: 0}, {ArrivalMs: century + 500}}
	pts, cut, err := LLMTraceLoad(reqs, 1000, false, 0)
	require.NoError(t, err)
	require.False(t, cut)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 1}, {AtMs: 1000, Rate: 0}, {AtMs: century, Rate: 1}, {AtMs: century + 1000, Rate: 0}}, pts)
	// Cut by an hour's horizon: the first bin, then 0 to the horizon.
	pts, cut, err = LLMTraceLoad(reqs, 1000, false, 3_600_000)
	require.NoError(t, err)
	require.True(t, cut)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 1}, {AtMs: 1000, Rate: 0}}, pts)

	// 1 then 0 requests a second (2 s), looped: 2 changes a replay;
	// a year holds 15.8M replays, past the bound.
	two := []serving.LLMRequest{{ArrivalMs: 0}, {ArrivalMs: 1000}}
	_, _, err = LLMTraceLoad([]serving.LLMRequest{{ArrivalMs: 0}, {ArrivalMs: 1500}, {ArrivalMs: 1600}}, 1000, true, 365*24*3_600_000)
	require.ErrorContains(t, err, "more than 1000000 changes of rate up to 8760h0m0s: give a larger bin or a shorter horizon")
	// One rate throughout (1/s in each of two bins), looped over a year.
	pts, _, err = LLMTraceLoad(two, 1000, true, 365*24*3_600_000)
	require.NoError(t, err)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 1}}, pts)

	// Through a scenario: the error names the field and the file (the
	// build's capacity search first: make longtest).
	if testing.Short() {
		return
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.csv"), []byte(LLMTraceHeader+"\n0,100,10\n1.5,100,10\n1.6,100,10\n"), 0o644))
	_, err = buildTrace(t, dir, "8760h", "{path: t.csv, bin: 1s, loop: true}")
	require.ErrorContains(t, err, "spec.workload.services[0].llm.requestTrace: t.csv: more than 1000000 changes of rate")
}

// readAzureSample sums the sample's rows itself (encoding/csv, not the
// reader under test): the requests and their prompt and output tokens,
// and the requests in the first 5 minutes.
func readAzureSample(t *testing.T) (rows int, in, out float64, first5m int) {
	t.Helper()
	data, err := os.ReadFile(azureSample)
	require.NoError(t, err)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}, recs[0])
	t0, err := time.Parse(time.DateTime, recs[1][0][:19])
	require.NoError(t, err)
	for _, r := range recs[1:] {
		at, err := time.Parse(time.DateTime+".0000000", r[0])
		require.NoError(t, err)
		if at.Sub(t0) < 5*time.Minute+680590*time.Microsecond {
			first5m++
		}
		a, err := strconv.Atoi(r[1])
		require.NoError(t, err)
		b, err := strconv.Atoi(r[2])
		require.NoError(t, err)
		in += float64(a)
		out += float64(b)
	}
	return len(recs) - 1, in, out, first5m
}

// The Azure sample served as read (4.8 requests/s, about a fifth of a
// replica's capacity at its lengths): every request arrives (the binned
// rate integrates to the count of each bin) and is served, and the
// tokens a request served are the trace's own mean prompt and output
// (1,146.6 and 260.3 tokens), not a distribution's guess.
func TestLLMTraceAzureLengths(t *testing.T) {
	rows, in, out, first5m := readAzureSample(t)
	require.Equal(t, 2867, rows)
	b, res := runTrace(t, "testdata/services", "20m", "1", "{path: azure-llm-conv-10m.csv}")
	r := res.Services[0]
	require.InDelta(t, float64(rows), r.Arrived, 1e-6)
	require.InDelta(t, float64(rows), r.Served, 1e-6)
	require.InEpsilon(t, in/float64(rows), r.LLM.InputTokens/r.Served, 1e-9)
	require.InEpsilon(t, out/float64(rows), r.LLM.OutputTokens/r.Served, 1e-9)
	l := b.Config.Services[0].Spec.LLM
	require.Equal(t, serving.Empirical, l.Input.Kind)
	require.InEpsilon(t, in/float64(rows), l.Input.Mean, 1e-12)

	// A horizon of 5 minutes cuts the trace: the requests of its first
	// five bins arrive (the first row is at 18:15:46.6805900), noted.
	b, res = runTrace(t, "testdata/services", "5m", "1", "{path: azure-llm-conv-10m.csv}")
	require.InDelta(t, float64(first5m), res.Services[0].Arrived, 1e-6)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "2867 requests over 10m0s; the load is their count in each bin of 1m0s over its length (requests spread as a Poisson stream within a bin), from the run's start; the horizon 5m0s cuts it")
}

// The Azure sample's requests compressed in time by k (k x its 4.78
// requests/s on one replica of capacity 21.19/s at its lengths: 23%, 45%
// and 68%) served by the cluster run (bins of a minute, the fast model)
// and by the exact request- and step-level model (serving.SimulateLLM)
// on the same requests. Measured (run/exact, ms):
//
//	k  load  TTFT mean   p95           TPOT mean    p95          E2E mean       p95
//	1  23%   36.7/37.2   92.7/93.2     10.56/10.57  11.59/11.85  2774/2779      5266/5178
//	2  45%   44.3/45.2   100.3/107.2   13.33/13.34  15.60/16.07  3499/3498      6679/6652
//	3  68%   53.6/59.8   117.6/143.7   17.17/18.28  21.41/23.32  4504/4777      8989/9370
//
// Up to 45% within 5% but the TTFT p95 at 45% (6%); at 68% the run is
// optimistic: the trace's arrivals are burstier within a minute than
// the Poisson stream a bin is served as (the exact model on Poisson
// arrivals at the binned rates, lengths drawn from the trace, gives TTFT
// 55.9/136.3, TPOT 17.2, E2E 4,528 ms: 5-7% below the trace itself), and
// the fast model's TTFT p95 is below the exact one's on these
// heavy-tailed prompts (up to 7,979 tokens) near capacity. Under -short
// (make test) only k = 2; make longtest runs all three.
func TestLLMTraceAgainstExact(t *testing.T) {
	data, err := os.ReadFile(azureSample)
	require.NoError(t, err)
	reqs, err := ReadLLMTraceCSV("a.csv", data, 8192)
	require.NoError(t, err)
	for _, c := range []struct {
		k             float64
		ttftP95, rest float64
	}{{1, 0.05, 0.05}, {2, 0.10, 0.05}, {3, 0.20, 0.12}} {
		if testing.Short() && c.k != 2 {
			continue
		}
		dir := t.TempDir()
		var sb strings.Builder
		sb.WriteString(LLMTraceHeader + "\n")
		scaled := make([]serving.LLMRequest, len(reqs))
		for i, r := range reqs {
			scaled[i] = r
			scaled[i].ArrivalMs = r.ArrivalMs / c.k
			fmt.Fprintf(&sb, "%.6f,%d,%d\n", scaled[i].ArrivalMs/1000, r.Input, r.Output)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "t.csv"), []byte(sb.String()), 0o644))
		b, res := runTrace(t, dir, "15m", "1", "{path: t.csv}")
		cfg := b.Config.Services[0].Spec.LLM.Config
		load := float64(len(reqs)) / (scaled[len(scaled)-1].ArrivalMs / 1000) / b.Config.Services[0].Spec.LLM.CapacityPerReplica
		ex, err := serving.SimulateLLM(cfg, scaled)
		require.NoError(t, err)
		x := res.Services[0].LLM
		require.InDelta(t, float64(len(reqs)), res.Services[0].Served, 1e-6)
		t.Logf("k %g (%.0f%% of capacity), run/exact: TTFT mean %.1f/%.1f p95 %.1f/%.1f, TPOT mean %.2f/%.2f p95 %.2f/%.2f, E2E mean %.0f/%.0f p95 %.0f/%.0f ms",
			c.k, 100*load, x.TTFTMeanMs, serving.Mean(ex.TTFTMs), x.TTFTP95Ms, serving.InterpQuantile(ex.TTFTMs, .95),
			x.TPOTMeanMs, serving.Mean(ex.TPOTMs), x.TPOTP95Ms, serving.InterpQuantile(ex.TPOTMs, .95),
			x.E2EMeanMs, serving.Mean(ex.E2EMs), x.E2EP95Ms, serving.InterpQuantile(ex.E2EMs, .95))
		require.InEpsilon(t, serving.Mean(ex.TTFTMs), x.TTFTMeanMs, c.rest, c.k)
		require.InEpsilon(t, serving.InterpQuantile(ex.TTFTMs, .95), x.TTFTP95Ms, c.ttftP95, c.k)
		require.InEpsilon(t, serving.Mean(ex.TPOTMs), x.TPOTMeanMs, c.rest, c.k)
		require.InEpsilon(t, serving.InterpQuantile(ex.TPOTMs, .95), x.TPOTP95Ms, c.rest, c.k)
		require.InEpsilon(t, serving.Mean(ex.E2EMs), x.E2EMeanMs, c.rest, c.k)
		require.InEpsilon(t, serving.InterpQuantile(ex.E2EMs, .95), x.E2EP95Ms, c.rest, c.k)
	}
}

// FuzzReadLLMTraceCSV: any input is requests in time order with token
// counts in range, or an InputError; never a panic.
func FuzzReadLLMTraceCSV(f *testing.F) {
	for _, s := range []string{
		"time,input_tokens,output_tokens\n0,512,256\n0.25,1024,128\n",
		"\xef\xbb\xbftime,input_tokens,output_tokens\r\n0,1,1\r\n# c\r\n1e3,5,5\r\n",
		"time,input_tokens,output_tokens\n1,5,3\n0.5,5,3\n",
		"time,input_tokens,output_tokens\n0,8000,500\n",
		"time,input_tokens,output_tokens\n1e400,1,1\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44\r\n2023-11-16 18:15:50.9951690,396,109\r\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n1923-11-16 18:15:46,1,1\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n2223-11-16 18:15:46,1,1\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-30 25:61:00,1,1\n",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := ReadLLMTraceCSV("f.csv", data, 8192)
		if err != nil {
			requireInputError(t, err)
			require.Less(t, len(err.Error()), 600)
			return
		}
		require.NotEmpty(t, reqs)
		for i, r := range reqs {
			require.True(t, r.ArrivalMs >= 0 && r.ArrivalMs <= maxDurationMs)
			require.True(t, r.Input >= 1 && r.Output >= 1 && r.Input+r.Output <= 8192)
			if i > 0 {
				require.GreaterOrEqual(t, r.ArrivalMs, reqs[i-1].ArrivalMs)
			}
		}
		pts, _, err := LLMTraceLoad(reqs, minLLMTraceBin, false, 0)
		if err == nil {
			require.NoError(t, serving.Load{Points: pts}.Validate())
			require.LessOrEqual(t, len(pts), 2*len(reqs)+1)
		}
	})
}

// Builds sharing a BuildCache read each trace file once (the runs of
// one command: its variants, the all-on-demand twin, the spot curve's 80
// runs each build the scenario again, and a trace of millions of rows
// took seconds a build) and compute each LLM plan once: the second build
// serves the trace as the first read it though the file has since gone,
// with the same plan, the same curve shared; another maxModelLen reads
// the file again (a row may be above it); without a cache the file is
// read at every build.
func TestBuildCacheReadsATraceOnce(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(azureSample)
	require.NoError(t, err)
	file := filepath.Join(dir, "t.csv")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	build := func(cache *BuildCache, maxLen string) (*Built, error) {
		body := strings.NewReplacer("HORIZON", "20m", "REPLICAS", "1", "TRACE", "{path: t.csv}", "maxModelLen: 8192", "maxModelLen: "+maxLen).Replace(traceScenario)
		return buildIn(t, dir, body, Options{Cache: cache})
	}
	cache := &BuildCache{}
	first, err := build(cache, "8192")
	require.NoError(t, err)
	require.NoError(t, os.Remove(file))
	again, err := build(cache, "8192")
	require.NoError(t, err)
	x, y := first.Config.Services[0].Spec, again.Config.Services[0].Spec
	require.Equal(t, x.Load, y.Load)
	require.Equal(t, x.LLM.Input, y.LLM.Input)
	require.Equal(t, x.LLM.CapacityPerReplica, y.LLM.CapacityPerReplica)
	require.Same(t, x.LLM.Curve, y.LLM.Curve)
	require.Equal(t, first.Assumptions, again.Assumptions)
	_, err = build(cache, "8000")
	require.ErrorContains(t, err, "no such file")
	_, err = build(nil, "8192")
	require.ErrorContains(t, err, "no such file")
}
