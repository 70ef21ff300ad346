package sim_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/validate"
)

// mpiJob is an MPIJob as one job of two pod groups: a Launcher of one
// CPU (no GPU) and workers x 8-GPU Workers of one CPU each.
func mpiJob(name string, submit, work sim.Time, workers int32, rec *cluster.Recovery) cluster.JobSpec {
	return cluster.JobSpec{Name: name, Queue: "q", Submit: submit, Duration: work, Replicas: 1 + workers,
		Pod:      cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024},
		Groups:   []cluster.PodGroup{{Name: "Worker", Replicas: workers, Pod: cluster.PodSpec{GPUs: 8, MilliCPU: 1000, MemoryMiB: 1024}}},
		Recovery: rec}
}

// Two 8-GPU nodes (96 vCPU), one held by a one-pod 8-GPU job for an hour.
// An MPIJob (a 1-CPU Launcher, 2 Workers x 8 GPUs, 2 h of work) arrives
// at 0: its Launcher and one Worker would fit now, the second Worker not,
// so nothing of it binds (no Launcher running alone, as the old split into
// jobs of their own did: the Launcher "completed" at 2 h while its Workers
// waited); at 1 h all three pods bind at once and it runs to 3 h. It holds
// 16 GPUs x 2 h = 32 GPU-hours and 3 vCPUs x 2 h. Priced at $56 a node-hour
// split 1 $/GPU-hour and 0.5 $/vCPU-hour (8 x 1 + 96 x 0.5 = 56, memory
// free): 32 + 3 = $35.
func TestPodGroupsWaitWholeAndStartTogether(t *testing.T) {
	pools := []cluster.PoolSpec{gpuPool("a", 2, 0, 8)}
	res := simulate(t, pools, nil, gpuJob("busy", 0, hour, 1, 8, nil), mpiJob("mpi", 0, 2*hour, 2, nil))
	j := res.Jobs[1]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, [2]sim.Time{hour, 3 * hour}, [2]sim.Time{j.Start, j.End})
	require.Equal(t, int32(3), j.Replicas)
	require.Equal(t, int32(3), j.PodsBound)
	require.Equal(t, int64(16000), j.AllocMilli)
	use := slices.Collect(j.Usage())
	require.Len(t, use, 1)
	require.Equal(t, int64(16000)*2*hour, use[0].Held[sim.ResGPU], "no pod held anything before 1 h")
	require.Equal(t, int64(3000)*2*hour, use[0].Held[sim.ResCPU])
	require.InDelta(t, 32.0, float64(use[0].Held[sim.ResGPU])/1000/float64(hour), 1e-9)

	pr := &reports.Pricing{Pools: []reports.PoolPricing{{PerHour: 56}}, BaseRates: models.BaseRates{GPU: 1, VCPU: 0.5}}
	cost, _ := reports.JobCosts(res, pr)
	require.InDelta(t, 35.0, cost[1], 1e-9)
	require.InDelta(t, 8.5, cost[0], 1e-9, "the one-hour 8-GPU job: 8 GPU-hours + 1 vCPU-hour at 0.5")

	// The pods of both groups stand in the invariants' count of every
	// node's free capacity (validate.Invariants in simulate), and a
	// one-shape job of the same demand starts at the same time.
	same := simulate(t, pools, nil, gpuJob("busy", 0, hour, 1, 8, nil), gpuJob("w", 0, 2*hour, 2, 8, nil))
	require.Equal(t, hour, same.Jobs[1].Start)
}

// The whole gang restarts on losing a node: a spot pool of two 8-GPU nodes
// runs the MPIJob (Launcher and a Worker on one node, the other Worker on
// the other); a trace interrupts a node at 50 min and the pool replaces it
// 10 min later. Every pod of the job goes at 50 min (the Launcher's too,
// wherever it ran), nothing binds on the one node left, and at 60 min all
// three bind again: with no checkpoints the 2 h of work start over, ending
// at 180 min. It held 16 GPUs for 50 + 120 min and lost the 50.
func TestPodGroupsRestartWholeOnNodeLoss(t *testing.T) {
	rec := &cluster.Recovery{BackoffLimit: 6, IgnoreDisruptions: true}
	spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
		Interruptions: capacity.Process{Times: []sim.Time{50 * mins}}}}}
	res := simulate(t, []cluster.PoolSpec{gpuPool("spot", 2, 0, 8)}, spec, mpiJob("mpi", 0, 2*hour, 2, rec))
	j := res.Jobs[0]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, [2]sim.Time{0, 180 * mins}, [2]sim.Time{j.Start, j.End})
	require.Equal(t, int32(2), j.Attempts)
	require.Equal(t, int32(1), j.Disruptions)
	require.Equal(t, 50*mins, j.LostMs)
	var held, lost, cpu int64
	for u := range j.Usage() {
		held += u.Held[sim.ResGPU]
		lost += u.Lost[sim.ResGPU]
		cpu += u.Held[sim.ResCPU]
	}
	require.Equal(t, int64(16000)*170*mins, held)
	require.Equal(t, int64(16000)*50*mins, lost)
	require.Equal(t, int64(3000)*170*mins, cpu, "the Launcher restarted with the Workers")
}

// A TFJob (2 Workers of 8 GPUs and 94 CPUs; one PS of 4 CPUs, no GPU) is
// one Kueue Workload of two PodSets under a ClusterQueue of one flavor
// "gpu" (the GPU pool's nodes) with 16 GPUs and 194 CPUs of quota. A CPU
// job of 3 CPUs admitted first leaves 191: the Workload asks for 2 x 94 +
// 4 = 192 and waits whole, though its GPUs would fit, until the CPU job
// ends at 1 h; then it is admitted and starts, every pod at once, and
// runs to 3 h. The flavor is the Workload's one resource group's, so both
// PodSets get it (as Kueue assigns it: the only flavor where each fits)
// and with it its nodeLabels: the PS, which does not fit beside a Worker,
// goes to the third GPU node and not to the empty CPU node listed first
// (which wins the tie between empty nodes), as every CPU-hour of the job
// shows.
func TestPodGroupsAdmittedAsOneWorkload(t *testing.T) {
	cpuPool := cluster.PoolSpec{Name: "cpu", Nodes: 1, MilliCPU: 96000, MemoryMiB: 1 << 20}
	pools := []cluster.PoolSpec{cpuPool, gpuPool("gpu", 3, 0, 8)}
	q := func(n int64) admission.Quota {
		return admission.Quota{Nominal: n, BorrowingLimit: admission.NoLimit, LendingLimit: admission.NoLimit}
	}
	adm := &admission.Spec{
		Flavors: []admission.Flavor{{Name: "gpu", NodeLabels: map[string]string{cluster.LabelPool: "gpu"}}},
		ClusterQueues: []admission.ClusterQueue{{Name: "cq", Strategy: admission.BestEffortFIFO, Groups: []admission.ResourceGroup{{
			Covered: []string{"cpu", "memory", "nvidia.com/gpu"},
			Flavors: []admission.FlavorQuotas{{Flavor: "gpu", Resources: []admission.Quota{q(194000), q(1 << 30), q(16)}}},
		}}}},
		LocalQueues: []admission.LocalQueue{{Name: "q", ClusterQueue: "cq"}},
	}
	cpuJob := cluster.JobSpec{Name: "cpu", Queue: "q", Duration: hour, Replicas: 1, Pod: cluster.PodSpec{MilliCPU: 3000, MemoryMiB: 1024}}
	tf := cluster.JobSpec{Name: "tf", Queue: "q", Duration: 2 * hour, Replicas: 3,
		Pod:    cluster.PodSpec{GPUs: 8, MilliCPU: 94000, MemoryMiB: 1024},
		Groups: []cluster.PodGroup{{Name: "PS", Replicas: 1, Pod: cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 1024}}}}
	res, err := sim.Run(sim.Config{Seed: 1, Pools: pools, Admission: adm, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{cpuJob, tf}},
		Queue: scheduler.QueueConfig{Backfill: true}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	j := res.Jobs[1]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, hour, j.Admitted, "admitted whole once the CPU quota is back")
	require.Equal(t, [2]sim.Time{hour, 3 * hour}, [2]sim.Time{j.Start, j.End})
	require.Equal(t, "ClusterQueue cq: couldn't assign flavors: insufficient unused quota in flavor gpu for cpu (1 more needed)", res.Reasons[j.Reason])
	use := slices.Collect(j.Usage())
	require.Len(t, use, 1, "every pod on the flavor's nodes")
	require.Equal(t, "gpu", res.Pools[use[0].Pool].Spec.Name)
	require.Equal(t, int64(192000)*2*hour, use[0].Held[sim.ResCPU])
	require.Equal(t, int64(16000)*2*hour, use[0].Held[sim.ResGPU])
}

// A pod group that no node can ever hold makes the whole job
// unschedulable, and the diagnosis names the group: Workers of 16 GPUs on
// 8-GPU nodes, beside a Launcher that would fit anywhere. Its Launcher
// never runs.
func TestPodGroupNeverFitsNamesTheGroup(t *testing.T) {
	mpi := mpiJob("mpi", 0, hour, 2, nil)
	mpi.Groups[0].Pod.GPUs = 16
	res := simulate(t, []cluster.PoolSpec{gpuPool("a", 2, 0, 8)}, nil, mpi)
	j := res.Jobs[0]
	require.Equal(t, sim.Unschedulable, j.Outcome)
	require.Zero(t, j.PodsBound)
	require.Contains(t, j.Diagnosis(), "pod group Worker: Insufficient nvidia.com/gpu")
}

// Preempting a job of several pod groups frees every pod of it: the
// MPIJob (Launcher and two 8-GPU Workers, priority 0) fills two 8-GPU
// nodes from 0; at 30 min a priority-100 job of two 8-GPU pods arrives and
// preempts it, starts at once and runs its hour to 90 min; the MPIJob,
// without checkpoints, starts over at 90 min and ends its 2 h at 210 min.
func TestPodGroupsPreemptedWhole(t *testing.T) {
	low := mpiJob("mpi", 0, 2*hour, 2, nil)
	high := gpuJob("high", 30*mins, hour, 2, 8, nil)
	high.Priority = 100
	res, err := sim.Run(sim.Config{Seed: 1, Pools: []cluster.PoolSpec{gpuPool("a", 2, 0, 8)}, Preemption: true,
		Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{low, high}}, Queue: scheduler.QueueConfig{Backfill: true}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	m, h := res.Jobs[0], res.Jobs[1]
	require.Equal(t, [2]sim.Time{30 * mins, 90 * mins}, [2]sim.Time{h.Start, h.End})
	require.Equal(t, [2]sim.Time{0, 210 * mins}, [2]sim.Time{m.Start, m.End})
	require.Equal(t, int32(2), m.Attempts)
	var cpu int64
	for u := range m.Usage() {
		cpu += u.Held[sim.ResCPU]
	}
	require.Equal(t, int64(3000)*(30+120)*mins, cpu, "the Launcher went with the Workers")
}

// Karpenter provisions for every pod group of a waiting job: a NodePool of
// a CPU type (40 CPUs, $1/h) and an 8-GPU type (40 CPUs, $10/h), nothing
// launched yet. The MPIJob's Launcher asks for 30 CPUs and each of its
// two Workers for 8 GPUs and 30 CPUs, so no two of its pods share a node:
// Karpenter launches one CPU node for the Launcher (the cheapest that
// holds it) and two GPU nodes for the Workers, Ready at 5 min, when the
// job starts whole and runs its hour.
func TestKarpenterProvisionsEveryPodGroup(t *testing.T) {
	pool := func(name string, gpus int32) cluster.PoolSpec {
		return cluster.PoolSpec{Name: name, MaxNodes: 4, GPUsPerNode: gpus, MilliCPU: 40000, MemoryMiB: 1 << 18}
	}
	spec := &capacity.Spec{
		Pools: []capacity.Pool{
			{PricePerHour: 1, Provisioning: 5 * mins, Group: 0},
			{PricePerHour: 10, Provisioning: 5 * mins, Group: 0},
		},
		Groups: []capacity.Group{{Name: "all", Kind: capacity.NodePool, Pools: []int32{0, 1}}},
	}
	mpi := mpiJob("mpi", 0, hour, 2, nil)
	mpi.Pod.MilliCPU = 30000
	mpi.Groups[0].Pod.MilliCPU = 30000
	res := runQueue(t, scheduler.QueueConfig{Backfill: true}, []cluster.PoolSpec{pool("cpu", 0), pool("eight", 8)}, spec, mpi)
	j := res.Jobs[0]
	require.Equal(t, [2]sim.Time{5 * mins, 65 * mins}, [2]sim.Time{j.Start, j.End})
	require.Equal(t, []int64{1, 2}, []int64{res.Pools[0].Capacity.Launched, res.Pools[1].Capacity.Launched})
}

// Each pod group goes to its own PodSet's flavor's nodes, as Kueue
// assigns a flavor per PodSet (FlavorAssigner.assignFlavors, v0.17.0): a
// ClusterQueue of one resource group [cpu, memory, nvidia.com/gpu] with
// two flavors, on-demand first (the CPU pool's one node; 96 CPUs of
// quota, no GPU quota) and spot second (the GPU pool's two 8-GPU nodes;
// 190 CPUs and 16 GPUs). The TFJob's Workers (2 x 8 GPUs, 94 CPUs) do not
// fit on-demand's quota and fit spot's; its PS (4 CPUs, no GPU) fits
// on-demand's, the first flavor (its PodSets in Kueue's order for a
// TFJob, PS before Worker: MainAt 1; the other order gives the same). Admitted at 0, it runs its 2 h; the PS's
// 4 CPUs are held on the on-demand pool and the Workers' 188 CPUs and 16
// GPUs on the spot pool. One flavor for every PodSet (the rule before)
// would fit neither: on-demand has no GPUs and spot's 190 CPUs are 2
// short of the 192 the job asks for together; it would never start.
func TestPodGroupsOnTheirOwnFlavors(t *testing.T) {
	cpuPool := cluster.PoolSpec{Name: "on-demand", Nodes: 1, MilliCPU: 96000, MemoryMiB: 1 << 20}
	pools := []cluster.PoolSpec{cpuPool, gpuPool("spot", 2, 0, 8)}
	q := func(n int64) admission.Quota {
		return admission.Quota{Nominal: n, BorrowingLimit: admission.NoLimit, LendingLimit: admission.NoLimit}
	}
	adm := &admission.Spec{
		Flavors: []admission.Flavor{
			{Name: "on-demand", NodeLabels: map[string]string{cluster.LabelPool: "on-demand"}},
			{Name: "spot", NodeLabels: map[string]string{cluster.LabelPool: "spot"}},
		},
		ClusterQueues: []admission.ClusterQueue{{Name: "cq", Strategy: admission.BestEffortFIFO, Groups: []admission.ResourceGroup{{
			Covered: []string{"cpu", "memory", "nvidia.com/gpu"},
			Flavors: []admission.FlavorQuotas{
				{Flavor: "on-demand", Resources: []admission.Quota{q(96000), q(1 << 30), q(0)}},
				{Flavor: "spot", Resources: []admission.Quota{q(190000), q(1 << 30), q(16)}},
			},
		}}}},
		LocalQueues: []admission.LocalQueue{{Name: "q", ClusterQueue: "cq"}},
	}
	tf := cluster.JobSpec{Name: "tf", Queue: "q", Duration: 2 * hour, Replicas: 3,
		Pod:    cluster.PodSpec{GPUs: 8, MilliCPU: 94000, MemoryMiB: 1024},
		Groups: []cluster.PodGroup{{Name: "PS", Replicas: 1, Pod: cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 1024}}}, MainAt: 1}
	res, err := sim.Run(sim.Config{Seed: 1, Pools: pools, Admission: adm, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{tf}},
		Queue: scheduler.QueueConfig{Backfill: true}})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	j := res.Jobs[0]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, [2]sim.Time{0, 2 * hour}, [2]sim.Time{j.Start, j.End})
	held := map[string][3]int64{}
	for u := range j.Usage() {
		held[res.Pools[u.Pool].Spec.Name] = u.Held
	}
	require.Len(t, held, 2)
	require.Equal(t, int64(4000)*2*hour, held["on-demand"][sim.ResCPU], "the PS on on-demand's node")
	require.Zero(t, held["on-demand"][sim.ResGPU])
	require.Equal(t, int64(188000)*2*hour, held["spot"][sim.ResCPU], "the Workers on spot's nodes")
	require.Equal(t, int64(16000)*2*hour, held["spot"][sim.ResGPU])
}
