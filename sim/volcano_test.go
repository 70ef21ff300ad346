package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Volcano lifecycle policies on PodEvicted: one spot node, interrupted at
// 30, 90 and 150 min and replaced at once, under a 4 h job with no
// checkpoints. RestartJob restarts at once (no Job backoff) and counts a
// retry; with maxRetry 3 the third retry fails the job at 150 min, with
// maxRetry 4 it restarts then and ends at 150 + 240 = 390 min. Without a
// policy the pod is recreated, nothing counted: it also ends at 390.
// AbortJob and TerminateJob end it at the first eviction.
func TestVolcanoPodEvictedPolicies(t *testing.T) {
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Replace: true, Group: -1,
		Interruptions: capacity.Process{Times: []sim.Time{30 * mins, 90 * mins, 150 * mins}}}}}
	pools := []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}
	volcano := func(a cluster.VolcanoAction, maxRetry int32) *sim.JobRecord {
		rec := &cluster.Recovery{BackoffLimit: 6, Volcano: &cluster.VolcanoPolicies{OnEvicted: a, MaxRetry: maxRetry}}
		res := simulate(t, pools, spec, gpuJob("train", 0, 4*hour, 1, 8, rec))
		return &res.Jobs[0]
	}
	j := volcano(cluster.VolcanoRestartJob, 3)
	require.Equal(t, sim.Failed, j.Outcome)
	require.Equal(t, 150*mins, j.End)
	require.Equal(t, int32(3), j.Attempts)
	require.Equal(t, "Volcano Job Failed: PodEvicted (spot interruption) with policy RestartJob reached maxRetry 3", j.Diagnosis())

	j = volcano(cluster.VolcanoRestartJob, 4)
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, 390*mins, j.End)
	require.Equal(t, int32(3), j.Failures, "three retries counted")

	j = volcano(cluster.VolcanoSync, 3)
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, 390*mins, j.End)
	require.Equal(t, int32(0), j.Failures)
	require.Equal(t, int32(3), j.Disruptions)

	for _, a := range []cluster.VolcanoAction{cluster.VolcanoAbortJob, cluster.VolcanoTerminateJob} {
		j = volcano(a, 3)
		require.Equal(t, sim.Failed, j.Outcome, a.String())
		require.Equal(t, 30*mins, j.End)
	}
	require.Contains(t, j.Diagnosis(), "Volcano Job Terminated: PodEvicted (spot interruption) with policy TerminateJob")

	// The Kubernetes Job it replaces: backoff 10 s, then 20 s, then 40 s.
	res := simulate(t, pools, spec, gpuJob("train", 0, 4*hour, 1, 8, nil))
	require.Equal(t, 150*mins+40*sec+4*hour, res.Jobs[0].End)
}

// PodFailed: a job whose start overfills a time-sliced GPU's memory is
// OOM-killed. With RestartJob it is retried at once, lands on the same GPU
// and is killed again, until its retries reach maxRetry 2.
func TestVolcanoPodFailedRestart(t *testing.T) {
	p := gpuPool("ts", 1, 0, 1)
	p.GPUModel = "T4"
	p.GPUMemoryMiB = 16 << 10
	p.Sharing.TimeSlicing = 4
	big := gpuJob("big", 0, hour, 1, 1, nil)
	big.Pod.GPUMemMiB = 12 << 10
	oom := gpuJob("oom", mins, hour, 1, 1, &cluster.Recovery{Volcano: &cluster.VolcanoPolicies{OnFailed: cluster.VolcanoRestartJob, MaxRetry: 2}})
	oom.Pod.GPUMemMiB = 8 << 10
	res := simulate(t, []cluster.PoolSpec{p}, nil, big, oom)
	j := res.Jobs[1]
	require.Equal(t, sim.Failed, j.Outcome)
	require.Equal(t, int32(2), j.Attempts)
	require.Equal(t, mins, j.End)
	require.Contains(t, j.Diagnosis(), "PodFailed (OOM on a time-sliced GPU: 20480 of 16384 MiB declared) with policy RestartJob reached maxRetry 2")

	// Without a PodFailed policy it is OOM-killed once, as before.
	oom.Recovery = &cluster.Recovery{Volcano: &cluster.VolcanoPolicies{OnEvicted: cluster.VolcanoRestartJob, MaxRetry: 2}}
	res = simulate(t, []cluster.PoolSpec{p}, nil, big, oom)
	require.Equal(t, sim.OOMKilled, res.Jobs[1].Outcome)
}

// minAvailable: two 4-GPU nodes; a one-pod 4-GPU job holds one for an
// hour. A six-pod job of one GPU each with minAvailable 4 binds four pods
// on the free node at once and the other two when the hour is up; it runs
// only then, 60 to 90 min, and its first four pods held their GPUs idle for
// the hour: 4 x 90 + 2 x 30 = 420 GPU-minutes. As a whole gang (no
// minAvailable) or with minAvailable 5, nothing binds before 60 min and it
// holds 6 x 30 = 180.
func TestVolcanoMinAvailable(t *testing.T) {
	pools := []cluster.PoolSpec{gpuPool("a", 2, 0, 4)}
	for _, tc := range []struct {
		min  int32
		held int64
	}{{4, 420}, {0, 180}, {5, 180}, {6, 180}} {
		wide := gpuJob("wide", 0, hour, 1, 4, nil)
		gang := gpuJob("gang", 0, 30*mins, 6, 1, nil)
		gang.MinAvailable = tc.min
		res := simulate(t, pools, nil, wide, gang)
		j := res.Jobs[1]
		require.Equal(t, sim.Completed, j.Outcome, "minAvailable %d", tc.min)
		require.Equal(t, [2]sim.Time{hour, 90 * mins}, [2]sim.Time{j.Start, j.End}, "minAvailable %d", tc.min)
		require.Equal(t, tc.held*1000*int64(mins), j.HeldMilliMs, "minAvailable %d", tc.min)
	}
}
