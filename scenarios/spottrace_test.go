package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim"
)

const spotTraceScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: skypilot
spec:
  horizon: 4h
  cluster:
    pools:
    - name: v100-spot
      count: COUNT
      gpuModel: V100
      gpusPerNode: 1
      cpu: "8"
      memory: 61Gi
      capacityType: spot
      interruptions: {skypilot: trace.json}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "4", memory: 16Gi, gpus: 1}
        duration: 30m
`

func runSpotTrace(t *testing.T, trace, count string) *sim.Result {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("skypilot/testdata", trace))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.json"), data, 0o644))
	p := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(spotTraceScenario, "COUNT", count, 1)), 0o644))
	s, err := LoadFile(p)
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	return res
}

// A spot pool of 4 nodes follows the hand-written 4-node preemption-style
// trace (24 ticks of 5 min, data in the skypilot package's test): none at
// the start (the trace begins at 0), every drop a reclaim with the 2-min
// AWS notice (11 nodes: 1 + 2 + 3 + 1 + 4), every rise a relaunch (4 at
// tick 2, 1 at 8, 2 at 13, 4 at 19: 11, as the trace starts and ends at
// 0). Node-hours by hand: the trace's counts sum to 67 node-ticks of 5 min
// (4 x 4 + 3 x 2 + 4 x 3 + 2 x 2 + 4 x 3 + 1 + 4 x 4), 335 min, and each
// of the 11 reclaimed nodes is paid for its 2-min notice past the drop,
// 22 min: 357 min = 5.95 h (a relaunched node is paid from its launch,
// its 5-min provisioning included). The first job, submitted at 0, waits
// for the first rise: launched at 10 min, Ready at 15.
//
// A 2-node pool follows the trace scaled to half, rounded down (4->2,
// 3->1, 2->1, 1->0): 6 reclaims (1 at tick 6, 1 at 11, 2 at 16, 2 at 23)
// and 6 relaunches (2 at tick 2, 1 at 8, 1 at 13, 2 at 19); 32
// node-ticks, 160 min, plus 6 notices, 12 min: 172 min = 2.8667 h.
func TestSpotPoolFollowsSkyPilotPreemptionTrace(t *testing.T) {
	for _, c := range []struct {
		count          string
		reclaims, peak int64
		nodeHours      float64
	}{{"4", 11, 4, 357.0 / 60}, {"2", 6, 2, 172.0 / 60}} {
		res := runSpotTrace(t, "preemption_4node.json", c.count)
		p := res.Pools[0]
		require.Equal(t, 4*hourMs, res.End, c.count)
		require.Equal(t, c.reclaims, p.Capacity.Interrupted, c.count)
		require.Equal(t, c.reclaims, p.Capacity.Launched, c.count)
		require.Equal(t, int32(c.peak), p.Capacity.MaxPresent, c.count)
		require.InDelta(t, c.nodeHours, p.Usage.NodeHours, 1e-9, c.count)
		require.Equal(t, 15*minMs, res.Jobs[0].Start, c.count)
	}
}

// A 3-node pool on the hand-written 1-instance availability-style trace
// (18 ticks of 10 min: available 0-20, 40-70, 80-100 and 130-170 min)
// holds all three nodes or none: 4 drops of 3 nodes, 12 reclaims; it
// starts with the trace at 1 (3 nodes, no launch) and ends at 0, so 3
// rises relaunch 3 each, 9. Node-hours: 11 available ticks x 3 nodes x
// 10 min = 330 min, plus 12 notices of 2 min = 354 min = 5.9 h.
//
// The three 30-min jobs (submitted at 0, 60 and 120 min, no checkpoints)
// by hand, with nodes Ready 5 min after each rise (45, 85, 135): the
// first runs 0-20, 45-70 and 85-100, each cut by a drop's notice, then
// 135-165; the second 60-70 and 85-100, then 135-165; the third waits for
// 135 and runs 135-165. All three end at 165 min, disrupted 3, 2 and 0
// times.
func TestSpotPoolFollowsSkyPilotAvailabilityTrace(t *testing.T) {
	res := runSpotTrace(t, "availability_1node.json", "3")
	p := res.Pools[0]
	require.Equal(t, int64(12), p.Capacity.Interrupted)
	require.Equal(t, int64(9), p.Capacity.Launched)
	require.InDelta(t, 354.0/60, p.Usage.NodeHours, 1e-9)
	for i, d := range []int32{3, 2, 0} {
		j := res.Jobs[i]
		require.Equal(t, sim.Completed, j.Outcome, j.Name)
		require.Equal(t, 165*minMs, j.End, j.Name)
		require.Equal(t, d, j.Disruptions, j.Name)
	}
}

const (
	minMs  = sim.Time(60 * 1000)
	hourMs = 60 * minMs
)

// A SkyPilot trace's prices price the spot pool that replays it, by hand:
// ticks of an hour held throughout at $0.90, $0.90, $1.20 and $1.50. Over
// a 3 h run the time-weighted mean is (0.9 + 0.9 + 1.2) / 3 = $1.00 an
// hour and the one node's 3 node-hours bill $3.00 (billing each hour at
// its own price gives the same here, the node held throughout); over 6 h
// the last price holds past the trace's end: (0.9 + 0.9 + 1.2 + 3 x 1.5)
// / 6 = $1.25, $7.50; with no horizon, the whole trace: 4.5 / 4 =
// $1.125. A pool with its own pricePerHour keeps it.
func TestSpotPoolPricedBySkyPilotTracePrices(t *testing.T) {
	const tr = `{"metadata": {"gap_seconds": 3600}, "data": [1, 1, 1, 1], "prices": [0.9, 0.9, 1.2, 1.5]}`
	price := func(horizon, extra string) (float64, string, *sim.Result, float64) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.json"), []byte(tr), 0o644))
		src := strings.Replace(spotTraceScenario, "COUNT", "1", 1)
		src = strings.Replace(src, "  horizon: 4h\n", horizon, 1)
		src = strings.Replace(src, "      capacityType: spot\n", "      capacityType: spot\n"+extra, 1)
		if horizon == "" {
			src = strings.Replace(src, "    synthetic:\n", "    synthetic:\n      jobs: 2\n", 1)
		}
		p := filepath.Join(dir, "s.yaml")
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
		s, err := LoadFile(p)
		require.NoError(t, err)
		b, err := s.Build(Options{})
		require.NoError(t, err)
		defer b.Close()
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		return b.Prices[0].PerHour, b.Prices[0].Basis, res, reports.Cost(res, b.Pricing).Total
	}
	v, basis, _, bill := price("  horizon: 3h\n", "")
	require.InDelta(t, 1.0, v, 1e-12)
	require.InDelta(t, 3.0, bill, 1e-9)
	require.Equal(t, "SkyPilot trace trace.json prices: their time-weighted mean over the run's 3h0m0s, $1.0000 an hour", basis)
	v, _, _, bill = price("  horizon: 6h\n", "")
	require.InDelta(t, 1.25, v, 1e-12)
	require.InDelta(t, 7.5, bill, 1e-9)
	v, basis, _, _ = price("", "")
	require.InDelta(t, 1.125, v, 1e-12)
	require.Contains(t, basis, "over the whole trace (4h0m0s; no horizon)")
	v, _, _, _ = price("  horizon: 3h\n", "      pricePerHour: 2\n")
	require.Equal(t, 2.0, v)
}

// --horizon prices a trace-priced pool over the run it makes, by the same
// rule as spec.horizon: the trace above ($0.90, $0.90, $1.20, $1.50 an
// hour for 4 h) with spec.horizon 3h and --horizon 6h is priced (0.9 +
// 0.9 + 1.2 + 1.5 + 2 x 1.5) / 6 = $1.25 an hour (past the trace's end its
// last price holds, and the basis says so), the node's 6 h billing $7.50;
// --horizon 2h prices the two hours it covers, $0.90, billing $1.80;
// --horizon 0 (until drained) the whole trace, $1.125. A max price of
// $1.10 that spec.horizon's $1.00 meets is refused at --horizon 6h.
func TestHorizonFlagRepricesTrace(t *testing.T) {
	const tr = `{"metadata": {"gap_seconds": 3600}, "data": [1, 1, 1, 1], "prices": [0.9, 0.9, 1.2, 1.5]}`
	build := func(horizon time.Duration, extra string) (*Built, error) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.json"), []byte(tr), 0o644))
		src := strings.Replace(spotTraceScenario, "COUNT", "1", 1)
		src = strings.Replace(src, "  horizon: 4h\n", "  horizon: 3h\n", 1)
		src = strings.Replace(src, "      capacityType: spot\n", "      capacityType: spot\n"+extra, 1)
		src = strings.Replace(src, "    synthetic:\n", "    synthetic:\n      jobs: 2\n", 1)
		p := filepath.Join(dir, "s.yaml")
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
		s, err := LoadFile(p)
		require.NoError(t, err)
		return s.Build(Options{Horizon: &horizon})
	}
	for _, c := range []struct {
		horizon      time.Duration
		perHour      float64
		bill, billed float64 // the bill and the node-hours it is of
		basis        string
	}{
		{6 * time.Hour, 1.25, 7.5, 6, "over the run's 6h0m0s (the trace's 4h0m0s, then its last price, $1.5000, to the end), $1.2500 an hour"},
		{2 * time.Hour, 0.9, 1.8, 2, "over the run's 2h0m0s, $0.9000 an hour"},
		{0, 1.125, 0, 0, "over the whole trace (4h0m0s; no horizon), $1.1250 an hour"},
	} {
		b, err := build(c.horizon, "")
		require.NoError(t, err)
		require.InDelta(t, c.perHour, b.Prices[0].PerHour, 1e-12, "--horizon %s", c.horizon)
		require.InDelta(t, c.perHour, b.Pricing.Pools[0].PerHour, 1e-12)
		require.Contains(t, b.Prices[0].Basis, c.basis)
		if c.horizon > 0 {
			res, err := sim.Run(b.Config)
			require.NoError(t, err)
			require.InDelta(t, c.bill, reports.Cost(res, b.Pricing).Total, 1e-9, "--horizon %s", c.horizon)
		}
		b.Close()
	}
	b, err := build(3*time.Hour, "      maxPrice: 1.1\n")
	require.NoError(t, err)
	require.InDelta(t, 1.0, b.Prices[0].PerHour, 1e-12)
	b.Close()
	_, err = build(6*time.Hour, "      maxPrice: 1.1\n")
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "--horizon", ie.File)
	require.Contains(t, ie.Msg, "$1.2500 an hour")
	require.Contains(t, ie.Msg, "above its maxPrice $1.1")
}
