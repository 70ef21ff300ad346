package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// A job of 1 Launcher, 2 Workers and 3 PS pods: 6 replicas, pods 0 the
// main (Launcher), 1-2 Workers, 3-5 PS; replicas that leave no main pod,
// or a group of none, are refused.
func TestJobPodGroups(t *testing.T) {
	cons := &cluster.Constraints{NodeSelector: map[string]string{"k": "v"}}
	j := cluster.JobSpec{Name: "mpi", Duration: 1, Replicas: 6, Pod: cluster.PodSpec{MilliCPU: 1000},
		Groups: []cluster.PodGroup{
			{Name: "Worker", Replicas: 2, Pod: cluster.PodSpec{GPUs: 8, MilliCPU: 2000}, Constraints: cons},
			{Name: "PS", Replicas: 3, Pod: cluster.PodSpec{MilliCPU: 4000}},
		}}
	require.NoError(t, j.Validate())
	require.EqualValues(t, 1, j.MainReplicas())
	var cpu []int64
	var groups []int
	for k := int32(0); k < j.Replicas; k++ {
		p, c := j.PodAt(k)
		cpu = append(cpu, p.MilliCPU)
		groups = append(groups, j.GroupOf(k))
		if k == 1 || k == 2 {
			require.Same(t, cons, c)
		} else {
			require.Nil(t, c)
		}
	}
	require.Equal(t, []int64{1000, 2000, 2000, 4000, 4000, 4000}, cpu)
	require.Equal(t, []int{0, 1, 1, 2, 2, 2}, groups)
	w := j.Part(1)
	require.Equal(t, int32(2), w.Replicas)
	require.Equal(t, int32(8), w.Pod.GPUs)
	require.Nil(t, w.Groups)

	bad := j
	bad.Replicas = 5
	require.ErrorContains(t, bad.Validate(), "replicas (5) must exceed the further pod groups' (5)")
	bad = j
	bad.Groups = []cluster.PodGroup{{Name: "Worker"}}
	bad.Replicas = 1
	require.ErrorContains(t, bad.Validate(), `pod group "Worker": replicas must be at least 1`)
}
