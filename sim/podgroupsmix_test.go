package sim_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/validate"
)

// Jobs of several pod groups (Launcher, Workers of 1-8 GPUs, sometimes a
// PS group, sometimes a gang size of 2) among one-shape jobs, under
// preemption, spot reclaims and Kueue admission with cohort preemption,
// of one flavor or two, or under a Karpenter NodePool: every run keeps the invariants (every
// node's free capacity the sum of its live pods', every gang bound whole)
// and, with backoff limits out of reach, every job completes.
func TestPodGroupsKeepInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		var jobs []cluster.JobSpec
		for i := 0; i < 300; i++ {
			at := sim.Time(r.IntN(48)) * hour / 2
			d := sim.Time(1+r.IntN(6)) * 20 * mins
			var j cluster.JobSpec
			switch r.IntN(3) {
			case 0:
				j = gpuJob("p", at, d, int32(1+r.IntN(3)), int32(1+r.IntN(8)), &cluster.Recovery{BackoffLimit: 100, IgnoreDisruptions: true})
			default:
				j = mpiJob("m", at, d, int32(1+r.IntN(3)), &cluster.Recovery{BackoffLimit: 100, IgnoreDisruptions: true})
				j.Groups[0].Pod.GPUs = int32(1 + r.IntN(8))
				if r.IntN(2) == 0 {
					j.Groups = append(j.Groups, cluster.PodGroup{Name: "PS", Replicas: int32(1 + r.IntN(2)), Pod: cluster.PodSpec{MilliCPU: 2000, MemoryMiB: 2048}})
					j.Replicas += j.Groups[1].Replicas
				}
				if r.IntN(4) == 0 {
					j.MinAvailable = 2
				}
			}
			j.Priority = int32(r.IntN(3)) * 10
			j.Queue = []string{"a", "b"}[r.IntN(2)]
			jobs = append(jobs, j)
		}
		slices.SortStableFunc(jobs, func(a, b cluster.JobSpec) int { return int(a.Submit - b.Submit) })
		q := func(n int64) admission.Quota {
			return admission.Quota{Nominal: n, BorrowingLimit: admission.NoLimit, LendingLimit: admission.NoLimit}
		}
		cq := func(name string) admission.ClusterQueue {
			return admission.ClusterQueue{Name: name, Cohort: "c", Strategy: admission.BestEffortFIFO,
				Preempt: admission.Preemption{ReclaimWithinCohort: admission.Any, WithinClusterQueue: admission.LowerPriority},
				Groups: []admission.ResourceGroup{{Covered: []string{"cpu", "memory", "nvidia.com/gpu"},
					Flavors: []admission.FlavorQuotas{{Flavor: "f", Resources: []admission.Quota{q(200000), q(1 << 30), q(16)}}}}}}
		}
		adm := &admission.Spec{Flavors: []admission.Flavor{{Name: "f"}}, ClusterQueues: []admission.ClusterQueue{cq("a"), cq("b")},
			LocalQueues: []admission.LocalQueue{{Name: "a", ClusterQueue: "a"}, {Name: "b", ClusterQueue: "b"}}}
		spec := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Provisioning: 10 * mins, Replace: true, Group: -1,
			Interruptions: capacity.Process{Times: []sim.Time{3 * hour, 7 * hour, 11 * hour, 13 * hour}}}, {Group: -1}}}
		kp := &capacity.Spec{Pools: []capacity.Pool{{PricePerHour: 1, Provisioning: 5 * mins, Group: 0}, {PricePerHour: 10, Provisioning: 5 * mins, Group: 0, CapacityType: models.Spot,
			Interruptions: capacity.Process{Times: []sim.Time{3 * hour, 7 * hour}}}},
			Groups: []capacity.Group{{Name: "all", Kind: capacity.NodePool, Pools: []int32{0, 1}}}}
		cpuP := cluster.PoolSpec{Name: "cpu", MaxNodes: 4, MilliCPU: 40000, MemoryMiB: 1 << 18}
		gpuP := cluster.PoolSpec{Name: "gpu", MaxNodes: 6, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20}
		res, err := sim.Run(sim.Config{Seed: seed, Pools: []cluster.PoolSpec{cpuP, gpuP}, Capacity: kp, Preemption: true,
			Workload: &sim.SliceSource{Jobs: jobs}, Queue: scheduler.QueueConfig{Backfill: true}, TimelineInterval: 10 * mins})
		require.NoError(t, err)
		require.NoError(t, validate.Invariants(res))
		n := 0
		for _, j := range res.Jobs {
			if j.Outcome == sim.Completed {
				n++
			}
		}
		require.Equal(t, len(res.Jobs), n, "seed %d Karpenter", seed)
		// Two flavors, the pools' (od listed first, CPUs only; spot with
		// 16 GPUs per queue): a job's PodSets go to different flavors (its
		// Launcher and PS to od, its Workers to spot).
		cq2 := func(name string) admission.ClusterQueue {
			c := cq(name)
			c.Groups[0].Flavors = []admission.FlavorQuotas{{Flavor: "od", Resources: []admission.Quota{q(200000), q(1 << 30), q(0)}},
				{Flavor: "spot", Resources: []admission.Quota{q(200000), q(1 << 30), q(16)}}}
			return c
		}
		adm2 := &admission.Spec{Flavors: []admission.Flavor{{Name: "od", NodeLabels: map[string]string{cluster.LabelPool: "od"}},
			{Name: "spot", NodeLabels: map[string]string{cluster.LabelPool: "spot"}}}, ClusterQueues: []admission.ClusterQueue{cq2("a"), cq2("b")},
			LocalQueues: adm.LocalQueues}
		for _, withAdm := range []*admission.Spec{nil, adm, adm2} {
			cfg := sim.Config{Seed: seed, Pools: []cluster.PoolSpec{gpuPool("spot", 3, 0, 8), gpuPool("od", 2, 0, 8)}, Capacity: spec, Preemption: true,
				Workload: &sim.SliceSource{Jobs: jobs}, Queue: scheduler.QueueConfig{Backfill: true}, TimelineInterval: 10 * mins}
			cfg.Admission = withAdm
			res, err := sim.Run(cfg)
			require.NoError(t, err)
			require.NoError(t, validate.Invariants(res))
			n := 0
			for _, j := range res.Jobs {
				if j.Outcome == sim.Completed {
					n++
				}
			}
			require.Equal(t, len(res.Jobs), n, "seed %d admission %v", seed, withAdm != nil)
		}
	}
}
