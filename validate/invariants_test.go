package validate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

func result(t *testing.T) *sim.Result {
	t.Helper()
	pod := cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: 4}
	res, err := sim.Run(sim.Config{
		Pools: []cluster.PoolSpec{{Name: "p", Nodes: 2, GPUsPerNode: 4, MilliCPU: 8000, MemoryMiB: 1 << 16}},
		Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{
			{Name: "a", Submit: 0, Duration: 10 * sim.Second, Replicas: 2, Pod: pod},
			{Name: "b", Submit: sim.Second, Duration: 5 * sim.Second, Replicas: 1, Pod: pod},
			{Name: "c", Submit: sim.Second, Duration: 5 * sim.Second, Replicas: 1, Pod: cluster.PodSpec{GPUs: 8}},
		}},
		TimelineInterval: 4 * sim.Second,
	})
	require.NoError(t, err)
	require.NoError(t, Invariants(res))
	return res
}

func TestInvariantsCatchBrokenBooks(t *testing.T) {
	cases := map[string]struct {
		mutate func(*sim.Result)
		want   string
	}{
		"GPU time not conserved": {func(r *sim.Result) { r.Jobs[0].HeldMilliMs += 1000 }, "GPU time is not conserved"},
		"start before submit":    {func(r *sim.Result) { r.Jobs[1].Start = 0 }, "before it was submitted"},
		"partial gang":           {func(r *sim.Result) { r.Jobs[0].PodsBound = 1 }, "started with 1 of 2 pods bound"},
		"job missing":            {func(r *sim.Result) { r.Jobs = r.Jobs[1:] }, "recorded once each"},
		"over capacity in a bucket": {func(r *sim.Result) {
			r.Timeline.Allocated[0][0] += 8 * 1000 * 4000
			r.Timeline.Allocated[0][1] -= 8 * 1000 * 4000
		}, "over its capacity"},
		"supply":                          {func(r *sim.Result) { r.Pools[0].SuppliedMilliMs-- }, "supplied"},
		"completed early":                 {func(r *sim.Result) { r.Jobs[1].End-- }, "completed but ran"},
		"unschedulable without diagnosis": {func(r *sim.Result) { r.Jobs[2].SetDiagnosis("") }, "no diagnosis"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res := result(t)
			c.mutate(res)
			err := Invariants(res)
			require.Error(t, err)
			require.True(t, IsInvariant(err))
			require.Contains(t, err.Error(), c.want)
			var ie *InvariantError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, 4, ie.ExitCode(), "a broken invariant is a gpuplan bug: exit 4")
		})
	}
}
