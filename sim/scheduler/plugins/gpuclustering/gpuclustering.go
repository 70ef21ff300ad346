// Package gpuclustering groups pods of the same GPU request class (a
// share, 1, 2, 4, 8 GPUs) on the same nodes, as the FGD paper's
// GpuClustering: a node holding only pods of the pod's class scores
// 75-100, one holding that class among others 50-75, an idle node 25-50,
// a node of other classes 0-25; within each band fuller nodes score
// higher. Pods without GPUs score 0.
package gpuclustering

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/bestfit"
)

// Name is the plugin's registered name.
const Name = "GpuClustering"

// GpuClustering is a Score plugin.
type GpuClustering struct{}

var _ scheduler.ScorePlugin = &GpuClustering{}

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &GpuClustering{}, nil
}

func (*GpuClustering) Name() string { return Name }

func (*GpuClustering) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	class := cluster.ClassOf(pod)
	_, maxGPU := bestfit.MaxSpec(st.Cluster)
	quarter := scheduler.MaxNodeScore / 4
	for i, n := range nodes {
		if class == cluster.ClassNoGPU {
			out[i] = 0
			continue
		}
		nd := &st.Cluster.Nodes[n]
		fill := quarter * (int64(maxGPU) - nd.FreeMilli) / int64(maxGPU)
		classes := 0
		for c := cluster.ClassShare; c < cluster.NumClasses; c++ {
			if nd.Classes[c] > 0 {
				classes++
			}
		}
		switch {
		case nd.Classes[class] > 0 && classes == 1:
			out[i] = fill + 3*quarter
		case nd.Classes[class] > 0:
			out[i] = fill + 2*quarter
		case classes == 0:
			out[i] = fill + quarter
		default:
			out[i] = fill
		}
	}
}
