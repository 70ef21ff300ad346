package sim_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/validate"
)

// oneInstanceTrace is a spot preemption trace of one instance kept
// running and relaunched, as SkyPilot's spot-traces collect them: at each
// tick (gap) 1 while the instance is held, 0 while the zone has no
// capacity. Its held runs are drawn from life and its empty runs from
// outage, each rounded up to whole ticks, for at least hours; it returns
// the counts and the runs observed (in hours: lifetimes, each ended by a
// preemption, and outages).
func oneInstanceTrace(life, outage models.LifetimeDist, hours float64, gap sim.Time, seed uint64) (counts []int32, lives, outs []models.Lifetime) {
	r := models.NewStream(seed, 1)
	tickH := float64(gap) / float64(hour)
	ticks := func(h float64) int { return max(1, int(math.Ceil(h/tickH))) }
	for float64(len(counts))*tickH < hours {
		n := ticks(life.Sample(r))
		for range n {
			counts = append(counts, 1)
		}
		lives = append(lives, models.Lifetime{Value: float64(n) * tickH})
		m := ticks(outage.Sample(r))
		for range m {
			counts = append(counts, 0)
		}
		outs = append(outs, models.Lifetime{Value: float64(m) * tickH})
	}
	return counts, lives, outs
}

// checkpointing is the workload: jobs of 24 h of work on the whole
// 8-GPU node, one after another, each writing a checkpoint every 30 min
// (2 min to write, 3 to restore) and going back to the queue when its node
// is reclaimed.
func checkpointing(n int) []cluster.JobSpec {
	rec := &cluster.Recovery{CheckpointInterval: 30 * mins, CheckpointCost: 2 * mins, RestoreCost: 3 * mins, BackoffLimit: 1 << 30, IgnoreDisruptions: true}
	jobs := make([]cluster.JobSpec, n)
	for i := range jobs {
		jobs[i] = gpuJob("j", 0, 24*hour, 1, 8, rec)
		jobs[i].Name = "j" + string(rune('a'+i/26)) + string(rune('a'+i%26))
	}
	return jobs
}

// spotOutcome runs the workload on one spot node interrupted by p (no
// notice, 5 min to provision, replaced when it is lost) and returns the
// makespan in hours and the GPU-hours lost to interruptions.
func spotOutcome(t *testing.T, p capacity.Process, jobs []cluster.JobSpec, horizon sim.Time, seed uint64) (makespan, lost float64) {
	t.Helper()
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 5 * mins, Replace: true, Group: -1, Interruptions: p}}}
	res, err := sim.Run(sim.Config{Seed: seed, Horizon: horizon, Pools: []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}, Capacity: spec,
		Workload: &sim.SliceSource{Jobs: jobs}, TimelineInterval: 24 * hour, Queue: scheduler.QueueConfig{}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	for _, j := range res.Jobs {
		require.Equal(t, sim.Completed, j.Outcome, "every job ends within the trace")
		makespan = max(makespan, float64(j.End)/float64(hour))
		lost += float64(j.LostMs) * 8 / float64(hour)
	}
	return makespan, lost
}

// The must-show of issue 30. A preemption trace generated with the
// statistics of the published ones (one V100 instance, lifetimes and
// outages drawn from the measured hyperexponentials, 60 s ticks, 12,000
// h: about 3,300 preemptions) is replayed under a checkpointing workload
// (140 jobs of 24 h of work, about 6,000 h of makespan). The model fitted
// to the same trace by maximum likelihood (hyperexponential lifetimes and
// outages), averaged over 6 seeds, comes within 10% of the replay's
// makespan and lost GPU-hours; the exponential rate model at the trace's
// own MTBF (a lost node relaunched at once, as gpuplan modelled spot
// before) misses the makespan by more than 25%, as the issue measured on
// the real traces (19 to 66% short).
func TestSpotFittedModelMatchesTheReplay(t *testing.T) {
	const gap = sim.Minute
	counts, lives, outs := oneInstanceTrace(models.MeasuredV100Lifetime, models.MeasuredV100Outage, 12000, gap, 30)
	horizon := sim.Time(len(counts)) * gap
	jobs := checkpointing(140)

	replayMs, replayLost := spotOutcome(t, capacity.Process{Available: counts, AvailableGap: gap}, jobs, horizon, 1)

	lifeFit, err := models.FitHyperExponential(lives)
	require.NoError(t, err)
	outFit, err := models.FitHyperExponential(outs)
	require.NoError(t, err)
	mtbf := 0.0
	for _, l := range lives {
		mtbf += l.Value
	}
	mtbf /= float64(len(lives))

	const seeds = 6
	mean := func(p capacity.Process) (ms, lost float64) {
		for s := uint64(1); s <= seeds; s++ {
			a, b := spotOutcome(t, p, jobs, horizon, s)
			ms, lost = ms+a/seeds, lost+b/seeds
		}
		return ms, lost
	}
	fitMs, fitLost := mean(capacity.Process{Lifetime: lifeFit.Dist, Outage: outFit.Dist})
	expMs, expLost := mean(capacity.Process{RatePerHour: 1 / mtbf})

	off := func(x, ref float64) float64 { return (x - ref) / ref }
	t.Logf("trace: %d preemptions, MTBF %.3f h; fitted lifetimes %s, outages %s", len(lives), mtbf, lifeFit.Dist, outFit.Dist)
	t.Logf("replay:      makespan %7.1f h, lost %7.1f GPU-h", replayMs, replayLost)
	t.Logf("fitted:      makespan %7.1f h (%+.1f%%), lost %7.1f GPU-h (%+.1f%%)", fitMs, 100*off(fitMs, replayMs), fitLost, 100*off(fitLost, replayLost))
	t.Logf("exponential: makespan %7.1f h (%+.1f%%), lost %7.1f GPU-h (%+.1f%%)", expMs, 100*off(expMs, replayMs), expLost, 100*off(expLost, replayLost))

	require.Less(t, math.Abs(off(fitMs, replayMs)), 0.10)
	require.Less(t, math.Abs(off(fitLost, replayLost)), 0.10)
	require.Greater(t, math.Abs(off(expMs, replayMs)), 0.25)
	require.Greater(t, math.Abs(off(expLost, replayLost)), math.Abs(off(fitLost, replayLost)))
}
