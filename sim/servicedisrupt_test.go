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

// One spot node holds the one replica of a service (ready 3 min after it
// is bound). A trace interrupts the node at 50 min; the pool replaces it
// in 10 min. The ReplicaSet makes a new pod at once, which waits for the
// new node (60 min) and is ready at 63: two cold starts of 3 and 13 min,
// ready 3-50 and 63-120 min, one GPU held 0-50 and 60-120 min. Requests
// that arrive while it is gone wait and are served after.
func TestSpotInterruptionLosesTheReplica(t *testing.T) {
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Times: []sim.Time{50 * mins}}}}}
	svc := sim.ServiceConfig{Spec: services.Spec{Name: "spot-svc", Load: serving.Load{Base: 20}, Batch: serving.Batch{Size: 4, MaxDelayMs: 5, BaseMs: 4, PerItemMs: 1}},
		Pod: cluster.PodSpec{GPUs: 1, MilliCPU: 1000, MemoryMiB: 1024}, MinReplicas: 1, ImagePull: mins, ModelLoad: 2 * mins}
	res, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("spot", 1, 0, 8)}, Capacity: spec, Horizon: 2 * hour,
		Workload: &sim.SliceSource{}, TimelineInterval: 10 * mins, Services: []sim.ServiceConfig{svc}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	s := res.Services[0]
	require.Equal(t, 1, s.Disrupted)
	require.Zero(t, s.Preempted)
	require.Equal(t, 2, s.ColdStarts)
	require.Equal(t, float64(8*mins), s.ColdStartMs)
	require.InDelta(t, (47+57)/60.0, s.ReadyHours, 1e-9)
	require.Equal(t, int64(cluster.MilliGPU*110*mins), s.Usage[0].Held[sim.ResGPU])
	require.Zero(t, res.Stats.Disruptions[capacity.CauseSpot], "a replica is not a job: job disruption counts leave it out")
	require.InDelta(t, s.Arrived, s.Served, 1e-6)
	require.Zero(t, s.Dropped)
	require.Empty(t, res.Jobs)
}

// A cluster-autoscaler group at zero nodes: the service's replica pod is
// pending, the group launches a node (5 min to Ready), the pod binds and
// cold-starts (1 + 2 min): ready at 8 min, a cold start of 8 min from its
// creation. The scaler drops to zero at 60 min (KEDA-like, by a window
// scaler here); the empty node goes after the 10 min scale-down-unneeded
// time: one node present from 5 to 70 min.
func TestReplicaWaitsForANode(t *testing.T) {
	spec := &capacity.Spec{
		Pools:  []capacity.Pool{{Provisioning: 5 * mins, Group: 0}},
		Groups: []capacity.Group{{Name: "ca", Kind: capacity.Autoscaler, Pools: []int32{0}, MaxNodes: 2, ScaleDownUnneeded: 10 * mins, ScaleDownDelayAfterAdd: 10 * mins}},
	}
	svc := sim.ServiceConfig{Spec: services.Spec{Name: "svc", Load: serving.Load{Base: 20}, Batch: serving.Batch{Size: 4, MaxDelayMs: 5, BaseMs: 4, PerItemMs: 1}},
		Pod: cluster.PodSpec{GPUs: 8, MilliCPU: 1000, MemoryMiB: 1024}, MaxReplicas: 1, InitialReplicas: 1,
		Scaler: untilScaler{until: hour}, ImagePull: mins, ModelLoad: 2 * mins}
	res, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("ca", 0, 2, 8)}, Capacity: spec, Horizon: 2 * hour,
		Workload: &sim.SliceSource{}, TimelineInterval: 10 * mins, Services: []sim.ServiceConfig{svc}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	s := res.Services[0]
	require.Equal(t, 1, s.ColdStarts)
	require.Equal(t, float64(8*mins), s.ColdStartMs)
	require.InDelta(t, 52/60.0, s.ReadyHours, 1e-9)
	require.Equal(t, int64(8*cluster.MilliGPU*55*mins), s.Usage[0].Held[sim.ResGPU])
	p := res.Pools[0]
	require.Equal(t, int64(1), p.Capacity.Launched)
	require.Equal(t, int64(1), p.Capacity.ScaledDown)
	require.InDelta(t, 70/60.0, p.Usage.NodeHours, 1e-9)
}

// untilScaler wants one replica until until, none after.
type untilScaler struct{ until sim.Time }

func (s untilScaler) PeriodMs() int64 { return sim.Minute }
func (s untilScaler) Decide(now int64, _, _, _ int, _ services.Metrics) int {
	if now < s.until {
		return 1
	}
	return 0
}
