package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
	"gpuplan.dev/gpuplan/validate"
)

// groupService is a service of one replica of two pods of 8 GPUs (a
// LeaderWorkerSet of size 2), ready 3 min after its group is bound.
func groupService() sim.ServiceConfig {
	return sim.ServiceConfig{Spec: services.Spec{Name: "lws", Load: serving.Load{Base: 20}, Batch: serving.Batch{Size: 4, MaxDelayMs: 5, BaseMs: 4, PerItemMs: 1}},
		Pod: cluster.PodSpec{GPUs: 8, MilliCPU: 1000, MemoryMiB: 1024}, PodsPerReplica: 2, MinReplicas: 1, ImagePull: mins, ModelLoad: 2 * mins}
}

// Two 8-GPU nodes, one held by a job of 8 GPUs from 0 to 60 min (the
// service's replicas are of a lower priority: the job binds first). The
// service's replica is a group of two 8-GPU pods: it needs both nodes, so
// it waits whole (its leader does not sit on the free node) until the job
// ends at 60 min, binds both pods then and is ready at 63. By hand: 16
// GPUs held from 60 to 120 min, ready 57 min, one cold start of 63 min,
// and no GPU of the service's before 60 min (the timeline's first six
// buckets).
func TestGroupReplicaWaitsWhole(t *testing.T) {
	job := gpuJob("train", 0, hour, 1, 8, nil)
	svc := groupService()
	svc.Priority = -1
	res, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("gpu", 2, 0, 8)}, Horizon: 2 * hour,
		Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}}, TimelineInterval: 10 * mins, Services: []sim.ServiceConfig{svc}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	s := res.Services[0]
	require.Equal(t, int64(16*cluster.MilliGPU*60*mins), s.Usage[0].Held[sim.ResGPU])
	require.Equal(t, 1, s.ColdStarts)
	require.Equal(t, float64(63*mins), s.ColdStartMs)
	require.InDelta(t, 57/60.0, s.ReadyHours, 1e-9)
	require.InDelta(t, 2.0, s.ReplicaHours, 1e-9, "the scaler's replica is the group: one, held the whole run")
	for i, p := range s.Timeline {
		if i < 6 {
			require.Zero(t, p.GPUs, "bucket %d: the group holds nothing while it waits", i)
		} else {
			require.InDelta(t, 16, p.GPUs, 1e-9, "bucket %d", i)
		}
	}
	require.Len(t, res.Jobs, 1)
	require.Equal(t, sim.Time(0), res.Jobs[0].Start)
}

// Two spot 8-GPU nodes hold the group's two pods from 0 (ready at 3
// min). A trace interrupts one node at 50 min; the pool replaces it in 10
// min. With LeaderWorkerSet's RecreateGroupOnPodRestart the other pod
// goes too: the whole group is made again, waits for the new node (60
// min), and is ready at 63. By hand: one disruption, two cold starts of 3
// and 13 min (mean 8), ready 3-50 and 63-120 min (104 min), and 16 GPUs
// held 0-50 and 60-120 min; a surviving pod kept on its node from 50 to
// 60 would add 8 GPUs x 10 min.
func TestGroupReplicaLostNodeRecreatesTheGroup(t *testing.T) {
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Times: []sim.Time{50 * mins}}}}}
	res, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("spot", 2, 0, 8)}, Capacity: spec, Horizon: 2 * hour,
		Workload: &sim.SliceSource{}, TimelineInterval: 10 * mins, Services: []sim.ServiceConfig{groupService()}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	s := res.Services[0]
	require.Equal(t, 1, s.Disrupted)
	require.Zero(t, s.Preempted)
	require.Equal(t, 2, s.ColdStarts)
	require.Equal(t, float64(8*mins), s.ColdStartMs)
	require.InDelta(t, (47+57)/60.0, s.ReadyHours, 1e-9)
	require.Equal(t, int64(16*cluster.MilliGPU*110*mins), s.Usage[0].Held[sim.ResGPU])
	require.InDelta(t, s.Arrived, s.Served, 1e-6)
	require.Empty(t, res.Jobs)
}

// A replica of more pods than a run can place is refused at its field;
// a negative size too.
func TestGroupReplicaBadSize(t *testing.T) {
	svc := groupService()
	svc.PodsPerReplica = -1
	_, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("gpu", 2, 0, 8)}, Horizon: hour,
		Workload: &sim.SliceSource{}, Services: []sim.ServiceConfig{svc}})
	require.ErrorContains(t, err, "-1 pods a replica")
}

// A group larger than the cluster ever holds (two 8-GPU pods, one 8-GPU
// node) is no error: it waits the whole run, as a job's gang waits, holding
// nothing, and serves none of the requests.
func TestGroupReplicaLargerThanThePoolWaits(t *testing.T) {
	res, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("gpu", 1, 0, 8)}, Horizon: hour,
		Workload: &sim.SliceSource{}, TimelineInterval: 10 * mins, Services: []sim.ServiceConfig{groupService()}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	s := res.Services[0]
	require.Zero(t, s.ColdStarts)
	require.Zero(t, s.ReadyHours)
	require.Empty(t, s.Usage)
	require.InDelta(t, 1.0, s.ReplicaHours, 1e-9, "the group exists, pending, all hour")
	require.Positive(t, s.Arrived)
	require.Zero(t, s.Served)
}

// The group on both 8-GPU nodes from 0 (ready at 3 min); a job of a higher
// priority asking for one node arrives at 30 min and runs 30 min. The
// scheduler preempts the group, both pods (a pod preempted recreates its
// group); the new group waits for both nodes, binds when the job ends at
// 60 min and is ready at 63. By hand: one preemption, no disruption, two
// cold starts of 3 and 33 min (mean 18), ready 27 + 57 min, 16 GPUs held
// 0-30 and 60-120 min.
func TestGroupReplicaPreemptedWhole(t *testing.T) {
	job := gpuJob("urgent", 30*mins, 30*mins, 1, 8, nil)
	job.Priority = 100
	res, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("gpu", 2, 0, 8)}, Horizon: 2 * hour, Preemption: true,
		Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}}, TimelineInterval: 10 * mins, Services: []sim.ServiceConfig{groupService()}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	s := res.Services[0]
	require.Equal(t, 1, s.Preempted)
	require.Zero(t, s.Disrupted)
	require.Equal(t, 2, s.ColdStarts)
	require.Equal(t, float64(18*mins), s.ColdStartMs)
	require.InDelta(t, (27+57)/60.0, s.ReadyHours, 1e-9)
	require.Equal(t, int64(16*cluster.MilliGPU*90*mins), s.Usage[0].Held[sim.ResGPU])
	require.Len(t, res.Jobs, 1)
	require.Equal(t, 30*mins, res.Jobs[0].Start)
}
