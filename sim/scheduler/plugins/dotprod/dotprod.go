// Package dotprod is the Tetris-style dot-product heuristic as the FGD paper
// evaluates it: the node's free (CPU, GPU) and the pod's request, each
// normalised by the largest node, and the node with the smallest dot
// product (the tightest fit) scores highest: 100 x (1 - dot / 2).
package dotprod

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/bestfit"
)

// Name is the plugin's registered name.
const Name = "DotProduct"

// DotProduct is a Score plugin.
type DotProduct struct{}

var _ scheduler.ScorePlugin = &DotProduct{}

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &DotProduct{}, nil
}

func (*DotProduct) Name() string { return Name }

func (*DotProduct) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	maxCPU, maxGPU := bestfit.MaxSpec(st.Cluster)
	rc, rg := float64(pod.MilliCPU)/maxCPU, float64(pod.MilliGPUs())/maxGPU
	for i, n := range nodes {
		nd := &st.Cluster.Nodes[n]
		dot := float64(nd.FreeCPU)/maxCPU*rc + float64(nd.FreeMilli)/maxGPU*rg
		out[i] = int64((1 - dot/2) * float64(scheduler.MaxNodeScore))
	}
}
