// Package tainttoleration keeps the node pools whose NoSchedule and
// NoExecute taints the pod tolerates. PreferNoSchedule taints do not
// filter (kube-scheduler only scores them).
package tainttoleration

import (
	"fmt"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "TaintToleration"

// TaintToleration is a PreFilter plugin.
type TaintToleration struct {
	statuses map[cluster.Taint]*scheduler.Status // one per taint, built once
}

var _ scheduler.PreFilterPlugin = &TaintToleration{}

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &TaintToleration{statuses: map[cluster.Taint]*scheduler.Status{}}, nil
}

func (*TaintToleration) Name() string { return Name }

// Untolerated returns the first NoSchedule/NoExecute taint in taints that no
// toleration tolerates.
func Untolerated(taints []cluster.Taint, c *cluster.Constraints) (cluster.Taint, bool) {
	for _, t := range taints {
		if t.Effect == cluster.PreferNoSchedule {
			continue
		}
		ok := false
		if c != nil {
			for _, tol := range c.Tolerations {
				if tol.Tolerates(t) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return t, true
		}
	}
	return cluster.Taint{}, false
}

func (p *TaintToleration) status(t cluster.Taint) *scheduler.Status {
	s, ok := p.statuses[t]
	if !ok {
		s = scheduler.NewStatus(scheduler.UnschedulableAndUnresolvable, Name,
			fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value))
		p.statuses[t] = s
	}
	return s
}

func (p *TaintToleration) PreFilter(st *scheduler.CycleState, job *scheduler.JobInfo) *scheduler.Status {
	var first cluster.Taint
	found := false
	st.KeepPools(func(pool int32) bool {
		t, bad := Untolerated(st.Cluster.Pools[pool].Spec.Taints, job.Spec.Constraints)
		if bad && !found {
			first, found = t, true
		}
		return !bad
	})
	if len(st.Pools) == 0 {
		return p.status(first)
	}
	return nil
}
