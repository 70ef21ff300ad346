package scenarios

import (
	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/scenarios/kube/podspread"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/podtopologyspread"
)

// spreader is a workload that can say whether its pods carry topology
// spread constraints.
type spreader interface{ Spreads() bool }

// spreadProfile enables PodTopologySpread when the run's pods carry
// topology spread constraints: the default profile gains it (weight 2, as
// in kube-scheduler's default profile, where it is always on); a profile
// the scenario names without it is kept, and an assumption says the
// constraints are not honoured.
func (s builder) spreadProfile(b *Built) {
	asked := false
	if w, ok := b.Config.Workload.(spreader); ok && w.Spreads() {
		asked = true
	}
	for _, sv := range b.Config.Services {
		if sv.Constraints != nil && len(sv.Constraints.Spread) > 0 {
			asked = true
		}
	}
	if !asked {
		return
	}
	if len(b.Config.Plugins) == 0 {
		b.Config.Plugins = append(plugins.Default(), scheduler.PluginConfig{Name: podtopologyspread.Name, Weight: podtopologyspread.DefaultWeight})
		b.Assumptions = append(b.Assumptions, "topology spread constraints: the default scheduler profile runs with PodTopologySpread (weight 2, as kube-scheduler's); a node without a constraint's topology key takes none of its pods under DoNotSchedule")
		return
	}
	for _, p := range b.Config.Plugins {
		if p.Name == podtopologyspread.Name {
			return
		}
	}
	b.Assumptions = append(b.Assumptions, "topology spread constraints are NOT honoured: the scheduler profile does not enable "+podtopologyspread.Name)
}

// withSpread is a service's replica labels and its constraints with the
// spread constraints of its manifest's pod template added.
func withSpread(c *cluster.Constraints, labels map[string]string, spread []cluster.SpreadConstraint) (*cluster.PodLabels, *cluster.Constraints) {
	var l *cluster.PodLabels
	if len(labels) > 0 {
		l = &cluster.PodLabels{Labels: labels}
	}
	if len(spread) == 0 {
		return l, c
	}
	out := &cluster.Constraints{}
	if c != nil {
		*out = *c
	}
	out.Spread = spread
	return l, out
}

// serviceSpread reads a service's own topologySpreadConstraints and
// labels (app: NAME by default when it has constraints), checked as the
// API server checks a pod's.
func (s validator) serviceSpread(at string, v *ServiceSpec) (map[string]string, []cluster.SpreadConstraint, error) {
	spread, _, f := podspread.Read(v.TopologySpreadConstraints)
	if f != nil {
		return nil, nil, s.errAt(at+"."+f.Field, "%s", f.Msg)
	}
	for k, val := range v.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, nil, s.errAt(at+".labels", "%s is not a label key: %s", Quote(k), errs[0])
		}
		if errs := validation.IsValidLabelValue(val); len(errs) > 0 {
			return nil, nil, s.errAt(at+".labels", "%s is not a label value: %s", Quote(val), errs[0])
		}
	}
	labels := v.Labels
	if labels == nil && len(spread) > 0 {
		labels = map[string]string{"app": v.Name}
	}
	return labels, spread, nil
}
