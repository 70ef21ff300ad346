package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Pods that hold GPUs by DRA claim, as kube-scheduler preempts them
// today: its dynamicresources plugin does not simulate releasing a
// victim's claims (KEP-5690, "preemption of pods utilizing DRA resources
// is currently not supported"), so no pod is preempted for their GPUs,
// while their CPU and memory are freed as any pod's. By hand, on one node
// of 4 GPUs and 64 CPUs: L (priority 0, all 4 GPUs, 1 CPU, 60 min) runs
// and at 25 min H (priority 10, 2 GPUs, 10 min) arrives. With L's GPUs
// from the device plugin, H preempts L and runs 25-35
// (TestPriorityPreemptionByHand); with them by DRA claim, H waits for L:
// 60-70, and L is never preempted. C (priority 10, no GPU, 64 CPUs, 10
// min) at 25 min needs L's CPU: L is preempted for it whether its GPUs
// come by claim or not (C runs 25-35).
func TestPreemptionDoesNotFreeDRAClaims(t *testing.T) {
	pools := []cluster.PoolSpec{pool("p", 1, 4)}
	l := prio(job("L", 0, 60*Minute, 1, 4), 0)
	l.Recovery = &cluster.Recovery{BackoffLimit: 6, TerminationGrace: 30 * Second}
	h := prio(job("H", 25*Minute, 10*Minute, 1, 2), 10)

	plugin := run(t, Config{Pools: pools, Preemption: true}, l, h)
	require.Equal(t, timing{25 * Minute, 35 * Minute}, times(plugin)["H"])
	require.Equal(t, int32(1), plugin.Jobs[0].Preemptions)

	byClaim := l
	byClaim.Flags |= cluster.FlagDRAClaims
	res := run(t, Config{Pools: pools, Preemption: true}, byClaim, h)
	require.Equal(t, timing{60 * Minute, 70 * Minute}, times(res)["H"], "H waits for L's claimed GPUs")
	require.Equal(t, timing{0, 60 * Minute}, times(res)["L"])
	require.Equal(t, int32(0), res.Jobs[0].Preemptions)

	c := prio(job("C", 25*Minute, 10*Minute, 1, 0), 10)
	c.Pod.MilliCPU = 64000
	for _, victim := range []cluster.JobSpec{l, byClaim} {
		res := run(t, Config{Pools: pools, Preemption: true}, victim, c)
		require.Equal(t, timing{25 * Minute, 35 * Minute}, times(res)["C"], "L's CPU is freed")
		require.Equal(t, int32(1), res.Jobs[0].Preemptions)
	}
}
