package podtopologyspread_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/mostallocated"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/noderesources"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/podtopologyspread"
)

type binds struct{ nodes []int32 }

func (b *binds) Bind(_ *scheduler.JobInfo, pls []cluster.Placement) error {
	for _, p := range pls {
		b.nodes = append(b.nodes, p.Node)
	}
	return nil
}

// framework: NodeResourcesFit, MostAllocated on GPUs (weight 1: it packs)
// and, when spread, PodTopologySpread (weight 2, kube's default).
func framework(t *testing.T, pools []cluster.PoolSpec, spread bool) (*cluster.Cluster, *scheduler.Framework) {
	t.Helper()
	c, err := cluster.New(pools)
	require.NoError(t, err)
	cfg := []scheduler.PluginConfig{{Name: noderesources.Name}, {Name: mostallocated.Name, Weight: 1, Resources: map[string]int64{"nvidia.com/gpu": 1}}}
	if spread {
		cfg = append(cfg, scheduler.PluginConfig{Name: podtopologyspread.Name, Weight: podtopologyspread.DefaultWeight})
	}
	prof, err := plugins.NewProfile(cfg, nil)
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	return c, fw
}

func pool(name string, nodes int, gpus int32, zones ...string) cluster.PoolSpec {
	return cluster.PoolSpec{Name: name, Nodes: nodes, GPUsPerNode: gpus, GPUModel: "H100", MilliCPU: 64000, MemoryMiB: 1 << 20, Zones: zones}
}

var web = &cluster.PodLabels{Labels: map[string]string{"app": "web"}}

// job is replicas one-GPU pods labelled app=web with one zone constraint
// over app=web.
func job(replicas int32, skew int32, hard bool, minDomains int32) *scheduler.JobInfo {
	return &scheduler.JobInfo{Spec: &cluster.JobSpec{Replicas: replicas, Duration: 1,
		Pod: cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: 1, Labels: web},
		Constraints: &cluster.Constraints{Spread: []cluster.SpreadConstraint{{
			MaxSkew: skew, TopologyKey: cluster.LabelZone, DoNotSchedule: hard, MinDomains: minDomains,
			Selector: []cluster.Requirement{{Key: "app", Op: cluster.OpIn, Values: []string{"web"}}},
		}}}}}
}

func zoneCounts(c *cluster.Cluster, nodes []int32) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		out[c.Topology().ZoneOf(n)]++
	}
	return out
}

// maxSkew 1 over 3 zones, 7 replicas: 3/2/2. Six empty 8-GPU nodes dealt
// round robin (z1: nodes 0 and 3, z2: 1 and 4, z3: 2 and 5); MostAllocated
// alone packs all 7 pods on node 0. With the constraint, by hand: pod 1
// anywhere (all zones 0), the packing tie goes to node 0 (z1); pod 2: z1
// would be 1+1-0 = 2 > 1, so z2, node 1; pod 3 likewise z3, node 2; pod 4:
// counts 1/1/1, every zone allowed, the fullest node 0; pods 5 and 6 to
// nodes 1 and 2; pod 7 (2/2/2) to node 0: z1 3, z2 2, z3 2.
func TestSpreadSevenReplicasOverThreeZones(t *testing.T) {
	for _, hard := range []bool{true, false} {
		c, fw := framework(t, []cluster.PoolSpec{pool("p", 6, 8, "z1", "z2", "z3")}, true)
		var b binds
		placed, st, err := fw.Attempt(0, job(7, 1, hard, 0), &b)
		require.NoError(t, err)
		require.True(t, st.IsSuccess())
		require.Equal(t, int32(7), placed)
		require.Equal(t, map[string]int{"z1": 3, "z2": 2, "z3": 2}, zoneCounts(c, b.nodes), "hard %v", hard)
		if hard {
			require.Equal(t, []int32{0, 1, 2, 0, 1, 2, 0}, b.nodes)
		}
	}
	// Without the plugin the pods pack on one node.
	c, fw := framework(t, []cluster.PoolSpec{pool("p", 6, 8, "z1", "z2", "z3")}, false)
	var b binds
	_, _, err := fw.Attempt(0, job(7, 1, true, 0), &b)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"z1": 7}, zoneCounts(c, b.nodes))
}

// Zones of 4, 2 and 2 one-GPU slots (one node each), 8 replicas, maxSkew
// 1. DoNotSchedule: z2 and z3 fill at 2, so z1 stops at min+1 = 3; the
// eighth pod would make z1 4+... 3+1-2 = 2 > 1 and z2, z3 are full: it
// stays pending although z1 has a free GPU. ScheduleAnyway places it
// there: 4/2/2.
func TestSpreadEighthReplicaWhenAZoneIsFull(t *testing.T) {
	pools := []cluster.PoolSpec{pool("a", 1, 4, "z1"), pool("b", 1, 2, "z2"), pool("c", 1, 2, "z3")}
	c, fw := framework(t, pools, true)
	var b binds
	j := job(8, 1, true, 0)
	placed, _, err := fw.Attempt(0, j, &b)
	require.NoError(t, err)
	require.Equal(t, int32(7), placed)
	require.Equal(t, map[string]int{"z1": 3, "z2": 2, "z3": 2}, zoneCounts(c, b.nodes))
	placed, st, err := fw.Attempt(0, j, &b)
	require.NoError(t, err)
	require.Equal(t, int32(0), placed, "the eighth stays pending")
	require.Equal(t, podtopologyspread.Name, st.Plugin)
	require.Equal(t, int32(1), c.Nodes[0].FreeWhole, "with a GPU free in z1")
	d, err := fw.Diagnose(0, j, false)
	require.NoError(t, err)
	require.Equal(t, 1, d.Reasons[podtopologyspread.ReasonConstraintsNotMatch], d.Message())

	c, fw = framework(t, pools, true)
	b = binds{}
	placed, _, err = fw.Attempt(0, job(8, 1, false, 0), &b)
	require.NoError(t, err)
	require.Equal(t, int32(8), placed)
	require.Equal(t, map[string]int{"z1": 4, "z2": 2, "z3": 2}, zoneCounts(c, b.nodes))
}

// minDomains 3 with only 2 zones: the global minimum is taken as 0, so
// each zone may hold at most 0+1 = maxSkew matching pods: 2 of 4 placed.
// Without minDomains the 4 place 2/2.
func TestSpreadMinDomainsAboveTheZones(t *testing.T) {
	c, fw := framework(t, []cluster.PoolSpec{pool("p", 2, 8, "z1", "z2")}, true)
	var b binds
	placed, _, err := fw.Attempt(0, job(4, 1, true, 3), &b)
	require.NoError(t, err)
	require.Equal(t, int32(2), placed)
	require.Equal(t, map[string]int{"z1": 1, "z2": 1}, zoneCounts(c, b.nodes))

	c, fw = framework(t, []cluster.PoolSpec{pool("p", 2, 8, "z1", "z2")}, true)
	b = binds{}
	placed, _, err = fw.Attempt(0, job(4, 1, true, 0), &b)
	require.NoError(t, err)
	require.Equal(t, int32(4), placed)
	require.Equal(t, map[string]int{"z1": 2, "z2": 2}, zoneCounts(c, b.nodes))
}

// A node without the topology key fails a DoNotSchedule constraint for
// good; pods the selector does not match are not counted; a pod that
// leaves is no longer counted.
func TestSpreadMissingLabelAndCounting(t *testing.T) {
	c, fw := framework(t, []cluster.PoolSpec{pool("nozone", 1, 8), pool("p", 2, 8, "z1", "z2")}, true)
	// Two other pods (app=db) on z1's node: not matched, not counted.
	db := cluster.PodSpec{GPUs: 1, Labels: &cluster.PodLabels{Labels: map[string]string{"app": "db"}}}
	for range 2 {
		_, err := c.Allocate(0, 1, &db, -1)
		require.NoError(t, err)
	}
	j := job(2, 1, true, 0)
	st := &scheduler.CycleState{Cluster: c, Job: j}
	pl, err := plugins.NewProfile([]scheduler.PluginConfig{{Name: noderesources.Name}, {Name: podtopologyspread.Name}}, nil)
	require.NoError(t, err)
	f := pl.Filter[1]
	require.Equal(t, podtopologyspread.ReasonNodeLabelNotMatch, f.Filter(st, &j.Spec.Pod, 0).Message())
	require.Equal(t, scheduler.UnschedulableAndUnresolvable, f.Filter(st, &j.Spec.Pod, 0).Code)
	require.Nil(t, f.Filter(st, &j.Spec.Pod, 1))
	// One web pod on z1: z1 is at 1, z2 at 0; z1 is refused, z2 not.
	p, err := c.Allocate(0, 1, &j.Spec.Pod, -1)
	require.NoError(t, err)
	st.Now = 1
	require.Equal(t, podtopologyspread.ReasonConstraintsNotMatch, f.Filter(st, &j.Spec.Pod, 1).Message())
	require.Nil(t, f.Filter(st, &j.Spec.Pod, 2))
	require.NoError(t, c.Release(1, p, &j.Spec.Pod))
	st.Now = 2
	require.Nil(t, f.Filter(st, &j.Spec.Pod, 1), "the web pod left")

	var b binds
	placed, _, err := fw.Attempt(2, j, &b)
	require.NoError(t, err)
	require.Equal(t, int32(2), placed)
	require.Equal(t, map[string]int{"z1": 1, "z2": 1}, zoneCounts(c, b.nodes))
}

// Nodes in racks of 2, racks dealt to zones: z1 nodes 0 and 1, z2 nodes 2
// and 3. Two replicas, maxSkew 1: the first goes to node 0 (z1); the
// second must go to z2, though empty node 1, in z1 and in the same state
// as nodes 2 and 3, comes first: the verdict depends on the node's zone,
// not only its free capacity, so every node is looked at.
func TestSpreadLooksAtEveryNode(t *testing.T) {
	p := pool("p", 4, 8, "z1", "z2")
	p.Topology.NodesPerRack = 2
	c, fw := framework(t, []cluster.PoolSpec{p}, true)
	var b binds
	placed, _, err := fw.Attempt(0, job(2, 1, true, 0), &b)
	require.NoError(t, err)
	require.Equal(t, int32(2), placed)
	require.Equal(t, map[string]int{"z1": 1, "z2": 1}, zoneCounts(c, b.nodes))
}
