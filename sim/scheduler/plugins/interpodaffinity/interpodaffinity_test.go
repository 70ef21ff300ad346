package interpodaffinity_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/interpodaffinity"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/mostallocated"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/noderesources"
)

type binds struct{ nodes []int32 }

func (b *binds) Bind(_ *scheduler.JobInfo, pls []cluster.Placement) error {
	for _, p := range pls {
		b.nodes = append(b.nodes, p.Node)
	}
	return nil
}

func framework(t *testing.T, c *cluster.Cluster) *scheduler.Framework {
	t.Helper()
	prof, err := plugins.NewProfile([]scheduler.PluginConfig{{Name: noderesources.Name}, {Name: interpodaffinity.Name},
		{Name: mostallocated.Name, Weight: 1, Resources: map[string]int64{"nvidia.com/gpu": 1}}}, nil)
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	return fw
}

func labels(app string) *cluster.PodLabels {
	return &cluster.PodLabels{Labels: map[string]string{"app": app}}
}

func job(replicas int32, app string, terms ...cluster.PodAffinityTerm) *scheduler.JobInfo {
	return &scheduler.JobInfo{Spec: &cluster.JobSpec{Replicas: replicas, Duration: 1,
		Pod:         cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: 1, Labels: labels(app)},
		Constraints: &cluster.Constraints{PodAffinity: terms}}}
}

func term(anti bool, key, app string) cluster.PodAffinityTerm {
	return cluster.PodAffinityTerm{Anti: anti, TopologyKey: key, Selector: []cluster.Requirement{{Key: "app", Op: cluster.OpIn, Values: []string{app}}}}
}

// Required anti-affinity to its own label on kubernetes.io/hostname: one
// replica per node. Three empty 8-GPU nodes, 4 replicas: MostAllocated
// would pack them all on node 0; each replica instead rules out the node
// it went to, so they take nodes 0, 1, 2 and the fourth waits.
func TestAntiAffinityOneReplicaPerNode(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 3, GPUsPerNode: 8, GPUModel: "H100", MilliCPU: 64000, MemoryMiB: 1 << 20}})
	require.NoError(t, err)
	fw := framework(t, c)
	var b binds
	j := job(4, "web", term(true, cluster.LabelHostname, "web"))
	placed, _, err := fw.Attempt(0, j, &b)
	require.NoError(t, err)
	require.Equal(t, int32(3), placed)
	require.Equal(t, []int32{0, 1, 2}, b.nodes)
	placed, st, err := fw.Attempt(0, j, &b)
	require.NoError(t, err)
	require.Zero(t, placed)
	require.Equal(t, interpodaffinity.Name, st.Plugin)
	d, err := fw.Diagnose(0, j, false)
	require.NoError(t, err)
	require.Equal(t, 3, d.Reasons[interpodaffinity.ReasonAntiAffinityRulesNotMatch], d.Message())
}

// Required affinity to app=db on the zone: the cache pod goes only to a
// zone holding a db pod (z2, node 1, although node 0 is fuller). A pod
// with affinity to its own label and none placed anywhere may go first.
func TestAffinityToAZone(t *testing.T) {
	c, err := cluster.New([]cluster.PoolSpec{{Name: "p", Nodes: 3, GPUsPerNode: 8, GPUModel: "H100", MilliCPU: 64000, MemoryMiB: 1 << 20, Zones: []string{"z1", "z2", "z3"}}})
	require.NoError(t, err)
	_, err = c.Allocate(0, 0, &cluster.PodSpec{GPUs: 4, Labels: labels("other")}, -1)
	require.NoError(t, err)
	_, err = c.Allocate(0, 1, &cluster.PodSpec{GPUs: 1, Labels: labels("db")}, -1)
	require.NoError(t, err)
	fw := framework(t, c)
	var b binds
	placed, _, err := fw.Attempt(0, job(1, "cache", term(false, cluster.LabelZone, "db")), &b)
	require.NoError(t, err)
	require.Equal(t, int32(1), placed)
	require.Equal(t, []int32{1}, b.nodes)

	// No "batch" pod anywhere: a batch pod with affinity to batch goes
	// first (to the fullest node, 0), and its second replica follows it
	// into z1; a pod with affinity to "none" (not itself) finds no node.
	b = binds{}
	placed, _, err = fw.Attempt(0, job(2, "batch", term(false, cluster.LabelZone, "batch")), &b)
	require.NoError(t, err)
	require.Equal(t, int32(2), placed)
	require.Equal(t, []int32{0, 0}, b.nodes)
	placed, _, err = fw.Attempt(0, job(1, "x", term(false, cluster.LabelZone, "none")), &b)
	require.NoError(t, err)
	require.Zero(t, placed)
}
