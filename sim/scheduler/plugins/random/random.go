// Package random scores one feasible node, drawn uniformly from the
// scheduler's random stream, 100 and the rest 0, and puts a shared pod on
// a random GPU that fits: the FGD paper's Random baseline.
package random

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "Random"

// Random is a Score and GPUSelect plugin.
type Random struct{ h *scheduler.Handle }

var (
	_ scheduler.ListScorer      = &Random{}
	_ scheduler.ScorePlugin     = &Random{}
	_ scheduler.GPUSelectPlugin = &Random{}
)

// New returns the plugin.
func New(_ scheduler.PluginConfig, h *scheduler.Handle) (scheduler.Plugin, error) {
	return &Random{h: h}, nil
}

func (*Random) Name() string { return Name }

func (p *Random) ScoreBatch(_ *scheduler.CycleState, _ *cluster.PodSpec, nodes []int32, out []int64) {
	for i := range out {
		out[i] = 0
	}
	if len(nodes) > 0 {
		out[p.h.Rand.IntN(len(nodes))] = scheduler.MaxNodeScore
	}
}

// ScoresDependOnList: the node drawn depends on the whole list.
func (*Random) ScoresDependOnList() {}

func (p *Random) SelectGPU(st *scheduler.CycleState, pod *cluster.PodSpec, node int32) int {
	pick, seen := -1, 0
	for i, g := range st.Cluster.GPUFree(node) {
		if g >= pod.GPUMilli {
			seen++
			if p.h.Rand.IntN(seen) == 0 {
				pick = i
			}
		}
	}
	return pick
}
