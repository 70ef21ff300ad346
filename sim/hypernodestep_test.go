package sim_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/validate"
)

// hn is a HyperNode of tier whose members are the nodes (or, with
// hyper, the HyperNodes) matching the patterns.
func hn(name string, tier int, hyper bool, patterns ...string) cluster.HyperNode {
	h := cluster.HyperNode{Name: name, Tier: tier}
	for _, p := range patterns {
		h.Members = append(h.Members, cluster.HyperNodeMember{HyperNode: hyper, Pattern: regexp.MustCompile(p)})
	}
	return h
}

// runOnHyperNodes runs one training job on pools with HyperNodes, packed
// (MostAllocated), and returns its record and the nodes it ran on.
func runOnHyperNodes(t *testing.T, pools []cluster.PoolSpec, hns []cluster.HyperNode, job cluster.JobSpec) (sim.JobRecord, map[string]bool) {
	t.Helper()
	prof := plugins.Default()
	prof[4].Name = "MostAllocated"
	res, err := sim.Run(sim.Config{Pools: pools, Plugins: prof, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}},
		Queue: scheduler.QueueConfig{Backfill: true}, HyperNodes: hns})
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	require.Len(t, res.Jobs, 1)
	j := res.Jobs[0]
	nodes := map[string]bool{}
	for u := range j.Usage() {
		nodes[pools[u.Pool].Name] = true
	}
	return j, nodes
}

// Volcano HyperNodes price a gang's all-reduce by the narrowest
// HyperNode holding its nodes where the pools give no racks or blocks
// (here two flat pools, a and b, of 2 nodes x 8 H100, which alone give the flat model:
// every multi-node job 168.69 ms). The job of TestTrainingPricedByLevelSpanned:
// 2 pods x 8 GPUs (all 8 rails of a node, 155.66 GB/s), 14 GB of
// gradients, 100 steps of 1 s, packed on a-0 and a-1;
// S x 2 x 15/16 = 26.25e9 bytes:
//
//	inside one tier-1 HyperNode (rack-a: a-0, a-1): a rack, the rails,
//	  50 us + 26.25e9 / 155.66e9 = 168.69 ms, 100 x 1168.69 ms = 116.869 s;
//	across tier 2 (tier-1 HyperNodes r0 = a-0, b-0 and r1 = a-1, b-1,
//	  each grouping two pools' nodes, under one tier-2 spine): a block,
//	  the rails through the 2:1 spine, 77.83 GB/s: 337.32 ms, 133.732 s;
//	in no common HyperNode (r0 under spine s0, r1 under s1; or r0 and r1
//	  alone): only Volcano's cluster-wide root holds them, the datacentre
//	  core, 4:1, 38.915 GB/s: 674.60 ms, 167.460 s.
//
// And 4 pods x 8 over both pools (32 ranks, 27.125e9 bytes) in the
// tier-2 HyperNode grouping the two pools' tier-1 racks: 50 us +
// 27.125e9 / 77.83e9 = 348.57 ms, 134.857 s (the flat model: 174.31 ms).
// Before, HyperNodes placed jobs but the step time ignored them: 168.69
// ms in the first three, 174.31 ms in the fourth.
func TestStepTimeFollowsHyperNodeTiers(t *testing.T) {
	pools := []cluster.PoolSpec{
		{Name: "a", GPUModel: "H100-80GB", Nodes: 2, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20},
		{Name: "b", GPUModel: "H100-80GB", Nodes: 2, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20},
	}
	job := func(pods int32) cluster.JobSpec {
		return cluster.JobSpec{Name: "llm", Queue: "q", Replicas: pods, Duration: 100 * sim.Second,
			Pod:      cluster.PodSpec{GPUs: 8, MilliCPU: 1000, MemoryMiB: 1024},
			Training: &cluster.Training{Steps: 100, ComputePerStep: sim.Second, GradientBytes: 14_000_000_000}}
	}
	byPool := []cluster.HyperNode{hn("rack-a", 1, false, "^a-"), hn("rack-b", 1, false, "^b-"), hn("spine", 2, true, "^rack-")}
	across := []cluster.HyperNode{hn("r0", 1, false, "^[ab]-0$"), hn("r1", 1, false, "^[ab]-1$"), hn("spine", 2, true, "^r[01]$")}
	for _, c := range []struct {
		name  string
		hns   []cluster.HyperNode
		pods  int32
		level string
		comm  float64
		dur   sim.Time
	}{
		{"inside one tier-1 HyperNode", byPool, 2, "rack", 168.69, 116869},
		{"across tier 2", across, 2, "block", 337.32, 133732},
		{"in no common HyperNode", append(across[:2:2], hn("s0", 2, true, "^r0$"), hn("s1", 2, true, "^r1$")), 2, "zone", 674.60, 167460},
		{"tier 1 alone", across[:2], 2, "zone", 674.60, 167460},
		{"two pools' racks under one tier 2", byPool, 4, "block", 348.57, 134857},
	} {
		rec, used := runOnHyperNodes(t, pools, c.hns, job(c.pods))
		if c.pods == 2 {
			require.Equal(t, map[string]bool{"a": true}, used, c.name)
		}
		require.Equal(t, c.level, rec.Step().Level, c.name)
		require.Equal(t, "ib-ndr-400", rec.Step().Fabric, c.name)
		require.InDelta(t, c.comm, rec.Step().CommMs, 0.01, c.name)
		require.Equal(t, c.dur, rec.End-rec.Start, c.name)
	}
}

// A tier whose HyperNodes each lie within one NVLink domain (tier 1 here:
// the two 2-node NVLink domains of a GB200 pool of 4-GPU nodes, 8 GPUs a
// domain) is no network hop: the tier-2 HyperNode above them is the
// first network tier, a rack. 4 pods x 4 GPUs, one a node, over both
// domains: all of each tray's rails (one NIC per GPU), 155.66 GB/s,
// 50 us + 26.25e9 / 155.66e9 = 168.69 ms. The pool alone (a rack per
// NVLink domain, so two racks) would price it through the 2:1 spine:
// 77.83 GB/s, 337.32 ms.
func TestNVLinkHyperNodeTierIsNoNetworkHop(t *testing.T) {
	pool := cluster.PoolSpec{Name: "gb", GPUModel: "GB200", Nodes: 4, GPUsPerNode: 4, MilliCPU: 72000, MemoryMiB: 1 << 20,
		Topology: topology.Spec{DomainGPUs: 8}}
	job := cluster.JobSpec{Name: "llm", Queue: "q", Replicas: 4, Duration: 100 * sim.Second,
		Pod:      cluster.PodSpec{GPUs: 4, MilliCPU: 1000, MemoryMiB: 1024},
		Training: &cluster.Training{Steps: 100, ComputePerStep: sim.Second, GradientBytes: 14_000_000_000}}
	hns := []cluster.HyperNode{hn("nvl-0", 1, false, "^gb-[01]$"), hn("nvl-1", 1, false, "^gb-[23]$"), hn("rack", 2, true, "^nvl-")}
	rec, _ := runOnHyperNodes(t, []cluster.PoolSpec{pool}, hns, job)
	require.Equal(t, "rack", rec.Step().Level)
	require.InDelta(t, 168.69, rec.Step().CommMs, 0.01)
	alone := runTraining(t, []cluster.PoolSpec{pool}, job, "MostAllocated")
	require.Equal(t, "block", alone.Step().Level)
	require.InDelta(t, 337.32, alone.Step().CommMs, 0.01)
}

// Inside one pool that gives racks, the pool's levels price the
// all-reduce and HyperNodes only place: racks of 2 nodes, tier-1
// HyperNodes pairing h-0 with h-2 and h-1 with h-3 under a tier-2 spine.
// 2 pods x 8 GPUs packed on h-0 and h-1, one rack of the pool: 168.69 ms
// (the HyperNodes alone would say a block, 337.32 ms).
func TestPoolRacksPriceInsideOnePool(t *testing.T) {
	pool := cluster.PoolSpec{Name: "h", GPUModel: "H100-80GB", Nodes: 4, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20,
		Topology: topology.Spec{NodesPerRack: 2}}
	job := cluster.JobSpec{Name: "llm", Queue: "q", Replicas: 2, Duration: 100 * sim.Second,
		Pod:      cluster.PodSpec{GPUs: 8, MilliCPU: 1000, MemoryMiB: 1024},
		Training: &cluster.Training{Steps: 100, ComputePerStep: sim.Second, GradientBytes: 14_000_000_000}}
	hns := []cluster.HyperNode{hn("r0", 1, false, "^h-[02]$"), hn("r1", 1, false, "^h-[13]$"), hn("spine", 2, true, "^r[01]$")}
	rec, _ := runOnHyperNodes(t, []cluster.PoolSpec{pool}, hns, job)
	require.Equal(t, "rack", rec.Step().Level)
	require.InDelta(t, 168.69, rec.Step().CommMs, 0.01)
}
