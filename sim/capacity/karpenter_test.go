package capacity

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// offering is an AWS instance type as Karpenter sees it: allocatable CPU
// (milli) and memory (MiB), GPUs, on-demand $/h in us-east-1. Copied by
// hand from scenarios/catalog/karpenter/aws_instance_types.csv
// (allocatable/*) and scenarios/catalog/aws_ondemand_karpenter_us-east-1_gpu.csv
// (Karpenter's generated AWS price list).
type offering struct {
	name   string
	milli  int64
	memMiB int64
	gpus   int32
	price  float64
}

var gpuTypes = []offering{
	{"g5.xlarge", 3920, 14162, 1, 1.006},
	{"g5.12xlarge", 47810, 173400, 4, 5.672},
	{"g5.24xlarge", 95690, 355262, 4, 8.144},
	{"g5.48xlarge", 191450, 723299, 8, 16.288},
	{"g6.xlarge", 3920, 14162, 1, 0.8048},
	{"g6.12xlarge", 47810, 178933, 4, 4.6016},
	{"g6.24xlarge", 95690, 355262, 4, 6.6752},
	{"g6.48xlarge", 191450, 718987, 8, 13.3504},
	{"p4d.24xlarge", 95690, 1082712, 8, 21.957642},
}

// nodePool is a NodePool over the types, on-demand, up to 20 nodes of
// each, Ready after 5 min, with the limits given.
func nodePool(types []offering, edit func(*Group)) ([]cluster.PoolSpec, Spec) {
	var pools []cluster.PoolSpec
	spec := Spec{Groups: []Group{{Name: "gpu", Kind: NodePool}}}
	for i, o := range types {
		pools = append(pools, cluster.PoolSpec{Name: o.name, InstanceType: o.name, MaxNodes: 20, GPUsPerNode: o.gpus, MilliCPU: o.milli, MemoryMiB: o.memMiB})
		spec.Pools = append(spec.Pools, Pool{CapacityType: models.OnDemand, PricePerHour: o.price, Provisioning: 5 * minute, Group: 0})
		spec.Groups[0].Pools = append(spec.Groups[0].Pools, int32(i))
	}
	if edit != nil {
		edit(&spec.Groups[0])
	}
	return pools, spec
}

// launched is what a run launched: nodes per type and $/h of them all.
func launched(h *fakeHost, types []offering) (map[string]int64, float64) {
	out := map[string]int64{}
	var perHour float64
	for i, s := range h.k.Stats {
		if s.Launched > 0 {
			out[types[i].name] = s.Launched
			perHour += float64(s.Launched) * types[i].price
		}
	}
	return out, perHour
}

// The 29 pending pods of issue 26's cross-check against the real
// Karpenter (v1.13's Solve): 20 of 1 GPU, 2 CPUs, 8 GiB; 6 of 4 GPUs, 16
// CPUs, 64 GiB; 3 of 8 GPUs, 64 CPUs, 256 GiB. By hand: the queue takes
// them by CPU, largest first. Each 8-GPU pod opens a NodeClaim of the
// 8-GPU types (g5.48xlarge, g6.48xlarge, p4d.24xlarge) no other pod can
// join. The first 4-GPU pod opens one of the 4- and 8-GPU types, the
// second fills it to 8 GPUs (8-GPU types left): three such. The 1-GPU
// pods fill two more to 8 GPUs and leave 4 on a ninth, whose types hold
// 4 GPUs or more. Each launches on its cheapest type: g6.48xlarge
// ($13.3504/h) for eight, g6.12xlarge ($4.6016/h) for the ninth:
// 8 x 13.3504 + 4.6016 = $111.4048/h, what Karpenter launched. The
// NodeClaims planned 3 + 3 x 2 + 2 x 8 = 25 pods on g6.48xlarge nodes and
// 4 on the g6.12xlarge.
func TestKarpenterBatchOf29(t *testing.T) {
	pools, spec := nodePool(gpuTypes, func(g *Group) { g.MaxGPUs = 200 })
	h := setup(t, pools, spec)
	var id int32
	add := func(n int, gpus int32, cpu, mem int64) {
		for range n {
			id++
			h.waiting = append(h.waiting, job(id, 1, gpus, cpu, mem))
		}
	}
	add(20, 1, 2, 8)
	add(6, 4, 16, 64)
	add(3, 8, 64, 256)
	h.k.AfterPass(0)
	h.run(t, 0)
	nodes, perHour := launched(h, gpuTypes)
	if d := cmp.Diff(map[string]int64{"g6.48xlarge": 8, "g6.12xlarge": 1}, nodes); d != "" {
		t.Errorf("nodes launched (-want +got):\n%s", d)
	}
	if math.Abs(perHour-111.4048) > 1e-9 {
		t.Errorf("$/h %.6f, want 111.4048", perHour)
	}
	planned := map[string]int64{}
	for i, s := range h.k.Stats {
		if s.PlannedPods > 0 {
			planned[gpuTypes[i].name] = s.PlannedPods
		}
	}
	if d := cmp.Diff(map[string]int64{"g6.48xlarge": 25, "g6.12xlarge": 4}, planned); d != "" {
		t.Errorf("pods planned (-want +got):\n%s", d)
	}
}

// A NodePool's GPU limit bounds the batch: with 20 GPUs at most, the
// NodeClaims are opened in the same order, each taking from the limit the
// most GPUs its types could have (8 for the 8-GPU pods' claims): two
// claims take 16, the third 8-GPU pod finds 4 left and no type within
// them, and the 4-GPU pods open one claim of 4-GPU types (4 left, 0
// after). So 2 x g6.48xlarge + 1 x g6.12xlarge = $31.3024/h.
func TestKarpenterLimits(t *testing.T) {
	pools, spec := nodePool(gpuTypes, func(g *Group) { g.MaxGPUs = 20 })
	h := setup(t, pools, spec)
	for i := range int32(3) {
		h.waiting = append(h.waiting, job(1+i, 1, 8, 64, 256))
	}
	for i := range int32(2) {
		h.waiting = append(h.waiting, job(4+i, 1, 4, 16, 64))
	}
	h.k.AfterPass(0)
	h.run(t, 0)
	nodes, perHour := launched(h, gpuTypes)
	if d := cmp.Diff(map[string]int64{"g6.48xlarge": 2, "g6.12xlarge": 1}, nodes); d != "" {
		t.Errorf("nodes launched (-want +got):\n%s", d)
	}
	if math.Abs(perHour-31.3024) > 1e-9 {
		t.Errorf("$/h %.6f, want 31.3024", perHour)
	}
}

// Consolidation (WhenEmptyOrUnderutilized, consolidateAfter 5 min): three
// Ready 8-GPU nodes hold pods of 1, 2 and 4 GPUs from time 0; node 0's
// jobs cannot move. The sweep at 5 min takes the least-used movable node
// (node 1, 2 GPUs): cordoned, its jobs get the 30 s grace, it goes at
// 5.5 min. Node 2 gains a pod at 6 min, so the sweep at 10 min finds no
// node unchanged for 5 min that can move; the one at 15 min takes node 2.
func TestConsolidationUnderutilized(t *testing.T) {
	pools, spec := nodePool([]offering{{"g6.48xlarge", 191450, 718987, 8, 13.3504}}, func(g *Group) {
		g.Consolidation, g.ConsolidateAfter = WhenEmptyOrUnderutilized, 5*minute
	})
	pools[0].Nodes = 3
	h := setup(t, pools, spec)
	pod := func(gpus int32) cluster.PodSpec { return cluster.PodSpec{GPUs: gpus, MilliCPU: 1000, MemoryMiB: 1024} }
	for n, g := range []int32{1, 2, 4} {
		h.bind(t, 0, int32(n), pod(g))
	}
	h.movable[1], h.movable[2] = true, true
	h.run(t, 5*minute)
	want := []string{"300000: notice node 1, goes at 330000 (consolidation)"}
	if d := cmp.Diff(want, h.log); d != "" {
		t.Errorf("at 5 min (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[cluster.NodeState]int{ready: 2, cordoned: 1}, states(h.c, 0)); d != "" {
		t.Errorf("at 5 min (-want +got):\n%s", d)
	}
	h.run(t, 330*sec)
	want = append(want, "330000: evict node 1 (consolidation)")
	h.bind(t, 6*minute, 2, pod(1))
	h.run(t, 10*minute)
	if d := cmp.Diff(want, h.log); d != "" {
		t.Errorf("at 10 min (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[cluster.NodeState]int{ready: 2}, states(h.c, 0)); d != "" {
		t.Errorf("at 10 min (-want +got):\n%s", d)
	}
	h.run(t, 15*minute)
	want = append(want, "900000: notice node 2, goes at 930000 (consolidation)")
	if d := cmp.Diff(want, h.log); d != "" {
		t.Errorf("at 15 min (-want +got):\n%s", d)
	}
	if got := h.k.Stats[0].Consolidated; got != 2 {
		t.Errorf("consolidated %d nodes, want 2", got)
	}
}

// WhenEmpty (consolidateAfter 2 min): of two Ready nodes, the empty one
// goes 2 min after it emptied, the one holding a pod stays.
func TestConsolidationWhenEmpty(t *testing.T) {
	pools, spec := nodePool([]offering{{"g6.12xlarge", 47810, 178933, 4, 4.6016}}, func(g *Group) {
		g.Consolidation, g.ConsolidateAfter = WhenEmpty, 2*minute
	})
	pools[0].Nodes = 2
	h := setup(t, pools, spec)
	h.bind(t, 0, 0, cluster.PodSpec{GPUs: 1, MilliCPU: 1000, MemoryMiB: 1024})
	h.run(t, 2*minute-1)
	if d := cmp.Diff(map[cluster.NodeState]int{ready: 2}, states(h.c, 0)); d != "" {
		t.Errorf("before 2 min (-want +got):\n%s", d)
	}
	h.run(t, 2*minute)
	if d := cmp.Diff(map[cluster.NodeState]int{ready: 1}, states(h.c, 0)); d != "" {
		t.Errorf("at 2 min (-want +got):\n%s", d)
	}
	if h.c.Nodes[0].State != ready || h.k.Stats[0].Consolidated != 1 {
		t.Errorf("node 0 %v, %d consolidated; want node 0 Ready and 1", h.c.Nodes[0].State, h.k.Stats[0].Consolidated)
	}
}
