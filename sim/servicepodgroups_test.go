package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate"
)

// A replica of pods of two shapes (a disaggregated LLM replica: a prefill
// engine's pod of 4 GPUs and a decode engine's of 6, ServiceConfig.Groups)
// on two 8-GPU nodes, one held by a job of 8 GPUs from 0 to 60 min: 10
// GPUs fit no one node, so the replica needs both and waits whole (its
// prefill pod does not sit on the free node) until the job ends, binds
// both pods then (the decode pod can only go where 6 GPUs are free, the
// prefill pod on the other node) and is ready 3 min later. By hand: 10
// GPUs held from 60 to 120 min, one cold start of 63 min, ready 57 min,
// no GPU of the service's before 60 min and 10 after.
func TestReplicaPodGroupsWaitWhole(t *testing.T) {
	job := gpuJob("train", 0, hour, 1, 8, nil)
	svc := groupService()
	svc.Priority = -1
	svc.Pod.GPUs = 4
	decode := svc.Pod
	decode.GPUs = 6
	svc.Groups = []cluster.PodGroup{{Name: "decode", Pod: decode, Replicas: 1}}
	res, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("gpu", 2, 0, 8)}, Horizon: 2 * hour,
		Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}}, TimelineInterval: 10 * mins, Services: []sim.ServiceConfig{svc}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	s := res.Services[0]
	require.Equal(t, int64(10*cluster.MilliGPU*60*mins), s.Usage[0].Held[sim.ResGPU])
	require.Equal(t, 1, s.ColdStarts)
	require.Equal(t, float64(63*mins), s.ColdStartMs)
	require.InDelta(t, 57/60.0, s.ReadyHours, 1e-9)
	for i, p := range s.Timeline {
		if i < 6 {
			require.Zero(t, p.GPUs, "bucket %d", i)
		} else {
			require.InDelta(t, 10, p.GPUs, 1e-9, "bucket %d", i)
		}
	}

	// A group whose pod fits no node is refused at the start.
	svc.Groups[0].Pod.GPUs = 9
	_, err = sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("gpu", 2, 0, 8)}, Horizon: 2 * hour,
		Workload: &sim.SliceSource{}, Services: []sim.ServiceConfig{svc}})
	require.ErrorContains(t, err, "its replica pod fits no node of the cluster")
}
