package admission

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// onDemandSpot is a ClusterQueue "cq" of one resource group [cpu, memory,
// nvidia.com/gpu] with two flavors, on-demand first (96 CPUs, no GPU
// quota) and spot second (spotCPU milli-CPU, 16 GPUs), 1 TiB of memory
// each.
func onDemandSpot(t *testing.T, spotCPU int64) *Controller {
	t.Helper()
	c, err := New(Spec{
		Flavors: []Flavor{
			{Name: "on-demand", NodeLabels: map[string]string{"pool": "on-demand"}},
			{Name: "spot", NodeLabels: map[string]string{"pool": "spot"}},
		},
		ClusterQueues: []ClusterQueue{{Name: "cq", Groups: []ResourceGroup{{
			Covered: []string{"cpu", "memory", gpu},
			Flavors: []FlavorQuotas{
				{Flavor: "on-demand", Resources: []Quota{q(96000), q(1 << 20), q(0)}},
				{Flavor: "spot", Resources: []Quota{q(spotCPU), q(1 << 20), q(16)}},
			},
		}}}},
		LocalQueues: []LocalQueue{{Name: "q", ClusterQueue: "cq"}},
	})
	require.NoError(t, err)
	return c
}

// tfJob is a TFJob's Workload, its PodSets in Kueue's order for a TFJob
// (OrderedReplicaTypes: PS before Worker): PodSet 0 one PS of 4 CPUs and
// 1 GiB, no GPU; PodSet 1 two Workers of 8 GPUs, 94 CPUs and 1 GiB each.
func tfJob(id int32) Workload {
	workers := []Request{{"cpu", 188000}, {"memory", 2048}, {gpu, 16}}
	ps := []Request{{"cpu", 4000}, {"memory", 1024}}
	return Workload{ID: id, Queue: "q", Created: int64(id),
		Requests: append(append([]Request(nil), workers...), ps...),
		PodSets:  []PodSet{{Requests: ps}, {Requests: workers}}}
}

// usageOf is the queue's usage of flavor f (in its one group), cpu,
// memory and GPUs.
func usageOf(c *Controller, f int) [3]int64 {
	u := c.snap.cqs[0].usage[0][f]
	return [3]int64{u[0], u[1], u[2]}
}

// Each PodSet gets its own flavor, as Kueue v0.17.0's
// FlavorAssigner.assignFlavors gives it: PodSet by PodSet, in order,
// findFlavorForPodSets tries the group's flavors in the queue's order.
// The PS (4 CPUs, no GPU) fits on-demand, the first flavor; the Workers
// (16 GPUs) do not fit on-demand (GPU quota 0; its CPUs would, 4 + 188 =
// 192 of 96 not) and fit spot (188 of its 190 CPUs, 16 of 16 GPUs). Usage by hand: on-demand 4 CPUs and 1 GiB,
// spot 188 CPUs, 2 GiB and 16 GPUs. One flavor for both PodSets (the rule
// before) fits neither: on-demand has no GPUs, and spot's 190 CPUs are 2
// short of the 192 the two ask for together.
func TestPodSetsGetTheirOwnFlavors(t *testing.T) {
	c := onDemandSpot(t, 190000)
	require.NoError(t, c.Submit(tfJob(1)))
	ds := settle(c)
	require.Len(t, ds, 1)
	require.False(t, ds[0].Waiting, c.Reason(1))
	require.Equal(t, [][]int{{0}, {1}}, ds[0].PodSetFlavors, "PS on on-demand, Workers on spot")
	require.ElementsMatch(t, []int{0, 1}, ds[0].Flavors)
	require.Equal(t, [3]int64{4000, 1024, 0}, usageOf(c, 0))
	require.Equal(t, [3]int64{188000, 2048, 16}, usageOf(c, 1))

	// Released whole: nothing is left on either flavor.
	c.Finish(1)
	require.Equal(t, [3]int64{}, usageOf(c, 0))
	require.Equal(t, [3]int64{}, usageOf(c, 1))
}

// A PodSet's flavor is checked against its requests plus what the
// PodSets before it took there (Kueue's fitsResourceQuota with the
// Assignment's usage so far): two PodSets of 6 CPUs each under two
// flavors of 10 CPUs each go one to each flavor (6 + 6 = 12 would not
// fit the first), 6 CPUs used on each. A second such workload then finds
// 4 CPUs left on each flavor and waits, its first PodSet short of 2.
func TestPodSetsCountTheEarlierOnes(t *testing.T) {
	c, err := New(Spec{
		Flavors: []Flavor{{Name: "a"}, {Name: "b"}},
		ClusterQueues: []ClusterQueue{{Name: "cq", Groups: []ResourceGroup{{
			Covered: []string{"cpu"},
			Flavors: []FlavorQuotas{{Flavor: "a", Resources: []Quota{q(10000)}}, {Flavor: "b", Resources: []Quota{q(10000)}}},
		}}}},
		LocalQueues: []LocalQueue{{Name: "q", ClusterQueue: "cq"}},
	})
	require.NoError(t, err)
	six := []Request{{"cpu", 6000}}
	w := func(id int32) Workload {
		return Workload{ID: id, Queue: "q", Created: int64(id), Requests: []Request{{"cpu", 12000}}, PodSets: []PodSet{{Requests: six}, {Requests: six}}}
	}
	require.NoError(t, c.Submit(w(1)))
	ds := settle(c)
	require.Len(t, ds, 1)
	require.Equal(t, [][]int{{0}, {1}}, ds[0].PodSetFlavors)
	require.Equal(t, int64(6000), c.snap.cqs[0].usage[0][0][0])
	require.Equal(t, int64(6000), c.snap.cqs[0].usage[0][1][0])

	require.NoError(t, c.Submit(w(2)))
	settle(c)
	require.False(t, c.Admitted(2))
	require.Equal(t, "ClusterQueue cq: couldn't assign flavors: insufficient unused quota in flavor a for cpu (2 more needed); insufficient unused quota in flavor b for cpu (2 more needed)", c.Reason(2))
}

// A workload of several PodSets preempts for the PodSet that does not
// fit, where its own requests (and the earlier PodSets' there) fall
// short, as Kueue's findFlavorForPodSets asks its preemption oracle: a
// priority-0 workload holds spot's 16 GPUs and 10 CPUs; the TFJob
// (priority 10, withinClusterQueue: LowerPriority) has its Workers (16
// GPUs, 188 CPUs) fit spot once it is evicted (188 of 190 CPUs), while
// all the job's 192 CPUs never would. The first cycle evicts it, the
// next admits the TFJob, Workers on spot and PS on on-demand; the victim
// waits.
func TestPodSetsPreemptForTheirOwnRequests(t *testing.T) {
	c := onDemandSpot(t, 190000)
	c.spec.ClusterQueues[0].Preempt.WithinClusterQueue = LowerPriority
	c.snap.cqs[0].Preempt.WithinClusterQueue = LowerPriority
	require.NoError(t, c.Submit(Workload{ID: 1, Queue: "q", Created: 1, Requests: []Request{{"cpu", 10000}, {gpu, 16}}}))
	settle(c)
	require.True(t, c.Admitted(1))
	tf := tfJob(2)
	tf.Priority = 10
	require.NoError(t, c.Submit(tf))
	ds := settle(c)
	require.Len(t, ds, 3, "%v", ds)
	require.True(t, ds[0].Preempted)
	require.Equal(t, [2]int32{1, 2}, [2]int32{ds[0].ID, ds[0].By})
	require.Equal(t, int32(2), ds[1].ID)
	require.Equal(t, [][]int{{0}, {1}}, ds[1].PodSetFlavors)
	require.True(t, ds[2].Waiting && ds[2].ID == 1)
	require.Equal(t, [3]int64{4000, 1024, 0}, usageOf(c, 0))
	require.Equal(t, [3]int64{188000, 2048, 16}, usageOf(c, 1))
}

// A PodSet gets flavors only in the resource groups it asks for: under
// two groups, [cpu] (flavor "cpu-nodes") and [nvidia.com/gpu] (flavors
// "a100" then "h100", 8 GPUs each), an MPIJob's Launcher (1 CPU) gets
// cpu-nodes alone and its Workers (2 CPUs, 8 GPUs) cpu-nodes and a100;
// a second such job's Workers go to h100 (a100 has no GPU left), its
// Launcher again to cpu-nodes alone.
func TestPodSetsOnlyTheirGroups(t *testing.T) {
	c, err := New(Spec{
		Flavors: []Flavor{{Name: "cpu-nodes"}, {Name: "a100"}, {Name: "h100"}},
		ClusterQueues: []ClusterQueue{{Name: "cq", Groups: []ResourceGroup{
			{Covered: []string{"cpu"}, Flavors: []FlavorQuotas{{Flavor: "cpu-nodes", Resources: []Quota{q(100000)}}}},
			{Covered: []string{gpu}, Flavors: []FlavorQuotas{{Flavor: "a100", Resources: []Quota{q(8)}}, {Flavor: "h100", Resources: []Quota{q(8)}}}},
		}}},
		LocalQueues: []LocalQueue{{Name: "q", ClusterQueue: "cq"}},
	})
	require.NoError(t, err)
	mpi := func(id int32) Workload {
		return Workload{ID: id, Queue: "q", Created: int64(id), Requests: []Request{{"cpu", 3000}, {gpu, 8}},
			PodSets: []PodSet{{Requests: []Request{{"cpu", 1000}}}, {Requests: []Request{{"cpu", 2000}, {gpu, 8}}}}}
	}
	require.NoError(t, c.Submit(mpi(1)))
	require.NoError(t, c.Submit(mpi(2)))
	ds := settle(c)
	require.Len(t, ds, 2)
	require.Equal(t, [][]int{{0}, {0, 1}}, ds[0].PodSetFlavors)
	require.Equal(t, [][]int{{0}, {0, 2}}, ds[1].PodSetFlavors)
	require.Equal(t, int64(6000), c.snap.cqs[0].usage[0][0][0])
	require.Equal(t, [2]int64{8, 8}, [2]int64{c.snap.cqs[0].usage[1][0][0], c.snap.cqs[0].usage[1][1][0]})
}
