// Package mostallocated scores nodes by how full they would be after taking
// the pod (bin packing): fuller nodes first, leaving whole nodes free for
// large gangs. It is kube-scheduler's NodeResourcesFit MostAllocated
// scoring strategy.
package mostallocated

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/noderesources"
)

// Name is the plugin's registered name.
const Name = "MostAllocated"

// MostAllocated is a Score plugin.
type MostAllocated struct{ w noderesources.ResourceWeights }

var _ scheduler.ScorePlugin = &MostAllocated{}

// New returns the plugin with cfg.Resources as resource weights.
func New(cfg scheduler.PluginConfig, _ *scheduler.Handle) (scheduler.Plugin, error) {
	w, err := noderesources.ParseWeights(cfg.Resources)
	if err != nil {
		return nil, err
	}
	return &MostAllocated{w: w}, nil
}

func (*MostAllocated) Name() string { return Name }

func (p *MostAllocated) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	noderesources.UsedFractionScores(st, p.w, pod, nodes, out, true)
}
