package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

func prio(j cluster.JobSpec, p int32) cluster.JobSpec { j.Priority = p; return j }

// One node of 4 GPUs: L (priority 0, all 4 GPUs, 60 min, a checkpoint
// every 10 min) runs; at 25 min H (priority 10, 2 GPUs, 10 min) arrives.
// With preemption L is evicted at 25 min, keeps the 20 min its
// checkpoints saved, H runs 25-35 min and L its last 40 min from 35 to 75.
// Without, H waits for L: 60-70 min.
func TestPriorityPreemptionByHand(t *testing.T) {
	l := prio(job("L", 0, 60*Minute, 1, 4), 0)
	l.Recovery = &cluster.Recovery{CheckpointInterval: 10 * Minute, BackoffLimit: 6}
	h := prio(job("H", 25*Minute, 10*Minute, 1, 2), 10)
	pools := []cluster.PoolSpec{pool("p", 1, 4)}

	res := run(t, Config{Pools: pools, Preemption: true}, l, h)
	tm := times(res)
	require.Equal(t, timing{25 * Minute, 35 * Minute}, tm["H"])
	require.Equal(t, timing{0, 75 * Minute}, tm["L"])
	rl, rh := res.Jobs[0], res.Jobs[1]
	require.Equal(t, int32(1), rl.Preemptions)
	require.Equal(t, int32(1), rl.Failures, "a preempted pod counts against the backoff limit without a podFailurePolicy")
	require.Equal(t, 5*Minute, rl.LostMs)
	require.Equal(t, int32(1), rh.PreemptionsCaused)
	require.Equal(t, int64(1), res.Stats.Disruptions[capacity.CausePreemption])

	// An Ignore rule on DisruptionTarget keeps the failure off the count.
	ig := *l.Recovery
	ig.IgnoreDisruptions = true
	l2 := l
	l2.Recovery = &ig
	res = run(t, Config{Pools: pools, Preemption: true}, l2, h)
	require.Equal(t, int32(0), res.Jobs[0].Failures)
	require.Equal(t, timing{0, 75 * Minute}, times(res)["L"])

	// No preemption, or preemptionPolicy Never: H waits.
	require.Equal(t, timing{60 * Minute, 70 * Minute}, times(run(t, Config{Pools: pools}, l, h))["H"])
	never := h
	never.Flags |= cluster.FlagPreemptNever
	require.Equal(t, timing{60 * Minute, 70 * Minute}, times(run(t, Config{Pools: pools, Preemption: true}, l, never))["H"])
	// Equal priority never preempts.
	require.Equal(t, timing{60 * Minute, 70 * Minute}, times(run(t, Config{Pools: pools, Preemption: true}, l, prio(h, 0)))["H"])
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
