package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

func prio(j cluster.JobSpec, p int32) cluster.JobSpec { j.Priority = p; return j }

// One node of 4 GPUs: L (priority 0, all 4 GPUs, 60 min of work, a
// checkpoint every 10 min of work that takes 1 min to write) runs; at 25
// min H (priority 10, 2 GPUs, 10 min) arrives. By hand: L wrote at 10-11
// and 21-22 and has computed 3 min more. Its pods given 30 s to stop, too
// short for a write, L is evicted at once, keeps 20 min, loses 3; H runs
// 25-35 and L, back after the Job controller's 10 s backoff, its last 40
// min (and 3 writes) from 35 to 78. Given the default grace, L writes
// everything (23 min) by 26 and stops: H runs 26-36 and L its last 37
// min (3 writes) from 36 to 76, losing nothing. Without preemption H waits
// for L: 60-70 min (L writes 5 times: 65-75).
func TestPriorityPreemptionByHand(t *testing.T) {
	l := prio(job("L", 0, 60*Minute, 1, 4), 0)
	l.Recovery = &cluster.Recovery{CheckpointInterval: 10 * Minute, CheckpointCost: Minute, BackoffLimit: 6, TerminationGrace: 30 * Second}
	h := prio(job("H", 25*Minute, 10*Minute, 1, 2), 10)
	pools := []cluster.PoolSpec{pool("p", 1, 4)}

	res := run(t, Config{Pools: pools, Preemption: true}, l, h)
	tm := times(res)
	require.Equal(t, timing{25 * Minute, 35 * Minute}, tm["H"])
	require.Equal(t, timing{0, 78 * Minute}, tm["L"])
	rl, rh := res.Jobs[0], res.Jobs[1]
	require.Equal(t, int32(1), rl.Preemptions)
	require.Equal(t, int32(1), rl.Failures, "a preempted pod counts against the backoff limit without a podFailurePolicy")
	require.Equal(t, 3*Minute, rl.LostMs)
	require.Equal(t, int32(1), rh.PreemptionsCaused)
	require.Equal(t, int64(1), res.Stats.Disruptions[capacity.CausePreemption])

	graceful := l
	gr := *l.Recovery
	gr.TerminationGrace = 0
	graceful.Recovery = &gr
	res = run(t, Config{Pools: pools, Preemption: true}, graceful, h)
	tm = times(res)
	require.Equal(t, timing{26 * Minute, 36 * Minute}, tm["H"])
	require.Equal(t, timing{0, 76 * Minute}, tm["L"])
	require.Equal(t, Time(0), res.Jobs[0].LostMs)
	require.Equal(t, 6*Minute, res.Jobs[0].CheckpointMs, "2 writes, the last one on SIGTERM, then 3")

	// An Ignore rule on DisruptionTarget keeps the failure off the count.
	ig := *l.Recovery
	ig.IgnoreDisruptions = true
	l2 := l
	l2.Recovery = &ig
	res = run(t, Config{Pools: pools, Preemption: true}, l2, h)
	require.Equal(t, int32(0), res.Jobs[0].Failures)
	require.Equal(t, timing{0, 78 * Minute}, times(res)["L"], "no backoff, but the node is H's until 35")

	// No preemption, or preemptionPolicy Never: H waits.
	require.Equal(t, timing{65 * Minute, 75 * Minute}, times(run(t, Config{Pools: pools}, l, h))["H"])
	never := h
	never.Flags |= cluster.FlagPreemptNever
	require.Equal(t, timing{65 * Minute, 75 * Minute}, times(run(t, Config{Pools: pools, Preemption: true}, l, never))["H"])
	// Equal priority never preempts.
	require.Equal(t, timing{65 * Minute, 75 * Minute}, times(run(t, Config{Pools: pools, Preemption: true}, l, prio(h, 0)))["H"])
}

// Victims as kube-scheduler picks them: the node whose victims have the
// lowest priority, and on a node only the victims needed, the
// highest-priority ones spared first.
func TestPreemptionChoosesVictims(t *testing.T) {
	// Two nodes of 2 GPUs: A (priority 5) on one, B (priority 1) on the
	// other; H (priority 10, 2 GPUs) evicts B.
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 2, 2)}, Preemption: true},
		prio(job("A", 0, Hour, 1, 2), 5), prio(job("B", 0, Hour, 1, 2), 1), prio(job("H", Minute, 10*Minute, 1, 2), 10))
	require.Equal(t, int32(0), res.Jobs[0].Preemptions)
	require.Equal(t, int32(1), res.Jobs[1].Preemptions)
	require.Equal(t, Minute, res.Jobs[2].Start)

	// One node of 4 GPUs full with C (priority 1, 1 GPU), D (2, 1 GPU) and
	// E (3, 2 GPUs); H needs 1 GPU: removing all frees 4, sparing E leaves
	// 2, sparing D leaves 1, C cannot be spared: only C goes.
	res = run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 4)}, Preemption: true},
		prio(job("C", 0, Hour, 1, 1), 1), prio(job("D", 0, Hour, 1, 1), 2), prio(job("E", 0, Hour, 1, 2), 3), prio(job("H", Minute, 10*Minute, 1, 1), 10))
	got := map[string]int32{}
	for _, j := range res.Jobs {
		got[j.Name] = j.Preemptions
	}
	require.Equal(t, map[string]int32{"C": 1, "D": 0, "E": 0, "H": 0}, got)
	require.Equal(t, timing{Minute, 11 * Minute}, times(res)["H"])
}

// A backlog that cannot preempt costs no victim search. One node of 8
// GPUs: A (priority 1, 8 GPUs, 10 h) runs, and 200 jobs of priority 1 (8
// GPUs, 1 h) arrive a minute apart from 1 min. None can preempt (equal
// priority), so none is searched for (before, the run made 399
// searches). By hand they run one after another from 10 h.
func TestPreemptionSkipsJobsThatCannotPreempt(t *testing.T) {
	jobs := []cluster.JobSpec{prio(job("A", 0, 10*Hour, 1, 8), 1)}
	for i := 1; i <= 200; i++ {
		jobs = append(jobs, prio(job(fmt.Sprintf("w%03d", i), Time(i)*Minute, Hour, 1, 8), 1))
	}
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 8)}, Preemption: true}, jobs...)
	tm := times(res)
	for _, i := range []int{1, 2, 100, 200} {
		start := 10*Hour + Time(i-1)*Hour
		require.Equal(t, timing{start, start + Hour}, tm[fmt.Sprintf("w%03d", i)], "w%03d", i)
	}
	require.Zero(t, res.Stats.PreemptSearches)
	require.Zero(t, res.Stats.Disruptions[capacity.CausePreemption])
}

// Waiting jobs alike search once a pass. Two nodes of 8 GPUs: B
// (priority 2, 8 GPUs) fills one; D (priority 2) and C (priority 0), 4
// GPUs each, the other; all three run 10 h. 100 jobs of priority 1 (8
// GPUs, 1 h) arrive at 1 min: each could evict C alone, which frees 4
// GPUs, not 8, so none preempts. The jobs are alike (same pod,
// constraints, pods left and priority), and nothing changes between
// their searches, so the pass at 1 min searches for the first only; from
// 10 h C is gone and no job is below priority 1, so none searches: one
// search in all (before, 50). By hand they run two at a time from 10 h.
func TestPreemptionSearchesLikeJobsOnce(t *testing.T) {
	jobs := []cluster.JobSpec{
		prio(job("B", 0, 10*Hour, 1, 8), 2),
		prio(job("D", 0, 10*Hour, 1, 4), 2),
		prio(job("C", 0, 10*Hour, 1, 4), 0),
	}
	for i := 1; i <= 100; i++ {
		jobs = append(jobs, prio(job(fmt.Sprintf("w%03d", i), Minute, Hour, 1, 8), 1))
	}
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 2, 8)}, Preemption: true}, jobs...)
	tm := times(res)
	for _, i := range []int{1, 2, 3, 99, 100} {
		start := 10*Hour + Time((i-1)/2)*Hour
		require.Equal(t, timing{start, start + Hour}, tm[fmt.Sprintf("w%03d", i)], "w%03d", i)
	}
	require.Zero(t, res.Stats.Disruptions[capacity.CausePreemption])
	require.Equal(t, uint64(1), res.Stats.PreemptSearches)
}
