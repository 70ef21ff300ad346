package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/validate"
)

// Two p5.48xlarge in a capacity block bought from 2h to 8h of the run at
// $30 a node-hour; two jobs of 6 h of work, 8 GPUs each, checkpointing
// every hour (COST a write).
const capacityBlockScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: capacity-block
spec:
  horizon: 10h
  cluster:
    pools:
    - name: block
      count: 2
      instanceType: p5.48xlarge
      capacityType: reserved
      pricePerHour: 30
      window: {start: 2h, end: 8h}
  workload:
    recovery:
      checkpoint: {interval: 1h, cost: COST}
      ignoreDisruptions: true
    synthetic:
      jobs: 2
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "180", memory: 1800Gi, gpus: 8}
        duration: 6h
`

func capacityBlockRun(t *testing.T, cost string) (*sim.Result, *reports.CostSummary) {
	t.Helper()
	s, err := Parse("b.yaml", "", []byte(strings.Replace(capacityBlockScenario, "COST", cost, 1)))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	return res, reports.Cost(res, b.Pricing)
}

// By hand. The block has no node before 2h; its two nodes launch then and
// are Ready 5 min later (125 min), where both jobs start, one a node. At
// 8h - 40 min = 440 min EC2 warns that the instances terminate in 10 min
// (at 7h30m, 450 min).
//   - 5-minute writes: each job works an hour and writes for 5 min,
//     checkpoints ending at 190, 255, 320 and 385 min (4 h of work saved);
//     at 440 it has 55 min computed since, and the write fits in the
//     warning: it saves them and stops at 445. Nothing is lost.
//   - 15-minute writes: checkpoints end at 200, 275, 350 and 425 min; at
//     440 the job has 15 min computed since, and the write does not fit
//     in the 10 min: it stops at once and loses them, 8 x 15/60 = 2 GPU-h
//     a job, 4 in all.
//
// Either way both jobs are disrupted by the block's end and wait, with no
// node, to the horizon; none comes back. The bill: the block is paid for
// its whole window, used or not, 2 nodes x 6 h x $30 = $360.00, though
// its nodes were present only from their launch at 2h to 7h30m, 2 x 5.5 =
// 11 node-hours.
func TestCapacityBlockWindow(t *testing.T) {
	for _, c := range []struct {
		cost string
		lost float64
	}{{"5m", 0}, {"15m", 2 * 8 * 15.0 / 60}} {
		res, cs := capacityBlockRun(t, c.cost)
		require.Equal(t, 10*sim.Hour, res.End)
		require.Len(t, res.Jobs, 2)
		lost := 0.0
		for _, j := range res.Jobs {
			require.Equal(t, 125*sim.Minute, j.Start, c.cost)
			require.NotEqual(t, sim.Completed, j.Outcome, c.cost)
			lost += float64(j.LostMs) * 8 / float64(sim.Hour)
		}
		require.InDelta(t, c.lost, lost, 1e-9, c.cost)
		require.Equal(t, int64(2), res.Stats.Disruptions[capacity.CauseBlockEnd], c.cost)
		require.Equal(t, int64(2), res.Pools[0].Capacity.BlockEnded)
		require.Equal(t, int64(2), res.Pools[0].Capacity.Launched)
		require.InDelta(t, 11.0, res.Pools[0].Usage.NodeHours, 1e-9)
		require.Equal(t, 360.0, cs.Total, c.cost)
		require.Equal(t, 360.0, cs.ByPool[0].Cost)
		require.Equal(t, "reserved", cs.ByPool[0].CapacityType)
	}
}

func TestCapacityBlockWindowRefused(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"      capacityType: reserved\n", "", `b.yaml:13:15: spec.cluster.pools[0].window: a window is a capacity block's: set capacityType: reserved`},
		{"{start: 2h, end: 8h}", "{start: 2h, end: 2h30m}", `spec.cluster.pools[0].window.end: is 2h30m0s, less than an hour after the start (2h0m0s)`},
		{"{start: 2h, end: 8h}", "{start: -1h, end: 8h}", `spec.cluster.pools[0].window.start: must not be negative`},
	} {
		body := strings.Replace(strings.Replace(capacityBlockScenario, "COST", "5m", 1), c.from, c.to, 1)
		s, err := Parse("b.yaml", "", []byte(body))
		if err == nil {
			_, err = s.Build(Options{})
		}
		require.Error(t, err, c.want)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want)
	}
}

// Without a horizon, jobs that wait for a block that has not begun keep
// the run going: the block's start is a live event. Jobs of 4 h of work
// start at 125 min and end at 125 + 240 + 3 writes x 5 = 380 min, before
// the block's warning at 440.
func TestCapacityBlockStartKeepsARunWithoutHorizon(t *testing.T) {
	body := strings.Replace(strings.Replace(capacityBlockScenario, "COST", "5m", 1), "  horizon: 10h\n", "", 1)
	body = strings.Replace(body, "duration: 6h", "duration: 4h", 1)
	s, err := Parse("b.yaml", "", []byte(body))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	for _, j := range res.Jobs {
		require.Equal(t, sim.Completed, j.Outcome)
		require.Equal(t, 380*sim.Minute, j.End)
	}
	require.Equal(t, 380*sim.Minute, res.End)
}
