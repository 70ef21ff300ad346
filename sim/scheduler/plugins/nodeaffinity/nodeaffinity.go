// Package nodeaffinity keeps the node pools whose labels satisfy a pod's
// nodeSelector and required node affinity
// (requiredDuringSchedulingIgnoredDuringExecution: terms ORed, the
// requirements of a term ANDed).
package nodeaffinity

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "NodeAffinity"

// ReasonMismatch is kube-scheduler's wording.
const ReasonMismatch = "node(s) didn't match Pod's node affinity/selector"

// NodeAffinity is a PreFilter plugin.
type NodeAffinity struct{ mismatch *scheduler.Status }

var _ scheduler.PreFilterPlugin = &NodeAffinity{}

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &NodeAffinity{mismatch: scheduler.NewStatus(scheduler.UnschedulableAndUnresolvable, Name, ReasonMismatch)}, nil
}

func (*NodeAffinity) Name() string { return Name }

// Matches reports whether a label set satisfies the constraints.
func Matches(c *cluster.Constraints, labels map[string]string) bool {
	if c == nil {
		return true
	}
	for k, v := range c.NodeSelector {
		if labels[k] != v {
			return false
		}
		if _, ok := labels[k]; !ok {
			return false
		}
	}
	if len(c.Affinity) == 0 {
		return true
	}
	for _, term := range c.Affinity {
		ok := true
		for _, r := range term {
			if !r.Matches(labels) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (p *NodeAffinity) PreFilter(st *scheduler.CycleState, job *scheduler.JobInfo) *scheduler.Status {
	c := job.Spec.Constraints
	if c == nil || (len(c.NodeSelector) == 0 && len(c.Affinity) == 0) {
		return nil
	}
	st.KeepPools(func(pool int32) bool { return Matches(c, st.Cluster.Pools[pool].Labels) })
	if len(st.Pools) == 0 {
		return p.mismatch
	}
	return nil
}
