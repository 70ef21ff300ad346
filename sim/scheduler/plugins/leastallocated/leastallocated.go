// Package leastallocated scores nodes by how much would stay free after
// taking the pod (spreading): emptier nodes first. It is kube-scheduler's
// default NodeResourcesFit LeastAllocated scoring strategy.
package leastallocated

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/noderesources"
)

// Name is the plugin's registered name.
const Name = "LeastAllocated"

// LeastAllocated is a Score plugin.
type LeastAllocated struct{ w noderesources.ResourceWeights }

var _ scheduler.ScorePlugin = &LeastAllocated{}

// New returns the plugin with cfg.Resources as resource weights.
func New(cfg scheduler.PluginConfig, _ *scheduler.Handle) (scheduler.Plugin, error) {
	w, err := noderesources.ParseWeights(cfg.Resources)
	if err != nil {
		return nil, err
	}
	return &LeastAllocated{w: w}, nil
}

func (*LeastAllocated) Name() string { return Name }

func (p *LeastAllocated) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	noderesources.UsedFractionScores(st, p.w, pod, nodes, out, false)
}
