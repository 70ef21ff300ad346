package scenarios

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/scenarios/kube/podspread"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/interpodaffinity"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/podtopologyspread"
)

// podPlacer is a workload that can say whether its pods carry topology
// spread constraints or required pod (anti-)affinity.
type podPlacer interface {
	PodPlacement() (spread, affinity bool)
}

// spreadProfile enables PodTopologySpread and InterPodAffinity when the
// run's pods carry topology spread constraints or required pod
// (anti-)affinity: the default profile gains them (PodTopologySpread at
// weight 2, as in kube-scheduler's default profile, where both are always
// on); a profile the scenario names without them is kept, and an
// assumption says what is not honoured.
func (s builder) spreadProfile(b *Built) {
	var spread, affinity bool
	if w, ok := b.Config.Workload.(podPlacer); ok {
		spread, affinity = w.PodPlacement()
	}
	for _, sv := range b.Config.Services {
		if c := sv.Constraints; c != nil {
			spread = spread || len(c.Spread) > 0
			affinity = affinity || len(c.PodAffinity) > 0
		}
	}
	if !spread && !affinity {
		// No selector anywhere to match them: the replicas' labels change
		// nothing, and a service reads back from the manifests gpuplan
		// writes (which label its Deployment) as it was.
		for i := range b.Config.Services {
			b.Config.Services[i].Pod.Labels = nil
		}
		return
	}
	named := len(b.Config.Plugins) > 0
	if !named && (spread || affinity) {
		b.Config.Plugins = plugins.Default()
	}
	for _, x := range []struct {
		asked  bool
		plugin scheduler.PluginConfig
		what   string
	}{
		{spread, scheduler.PluginConfig{Name: podtopologyspread.Name, Weight: podtopologyspread.DefaultWeight}, "topology spread constraints"},
		{affinity, scheduler.PluginConfig{Name: interpodaffinity.Name}, "required pod affinity and anti-affinity"},
	} {
		if !x.asked {
			continue
		}
		if !named {
			b.Config.Plugins = append(b.Config.Plugins, x.plugin)
			if x.plugin.Name == podtopologyspread.Name {
				b.Assumptions = append(b.Assumptions, "topology spread constraints: the default scheduler profile runs with PodTopologySpread (weight 2, as kube-scheduler's); a node without a constraint's topology key takes none of its pods under DoNotSchedule")
			} else {
				b.Assumptions = append(b.Assumptions, "required pod affinity and anti-affinity: the default scheduler profile runs with InterPodAffinity's filter (existing pods' own anti-affinity is not applied to new pods; preferred terms are not scored)")
			}
			continue
		}
		if !slices.ContainsFunc(b.Config.Plugins, func(p scheduler.PluginConfig) bool { return p.Name == x.plugin.Name }) {
			b.Assumptions = append(b.Assumptions, x.what+" are NOT honoured: the scheduler profile does not enable "+x.plugin.Name)
		}
	}
}

// withSpread is a service's replica labels and its constraints with its
// spread constraints and required pod (anti-)affinity terms added.
func withSpread(c *cluster.Constraints, labels map[string]string, spread []cluster.SpreadConstraint, terms []cluster.PodAffinityTerm) (*cluster.PodLabels, *cluster.Constraints) {
	var l *cluster.PodLabels
	if len(labels) > 0 {
		l = &cluster.PodLabels{Labels: labels}
	}
	if len(spread) == 0 && len(terms) == 0 {
		return l, c
	}
	out := &cluster.Constraints{}
	if c != nil {
		*out = *c
	}
	out.Spread, out.PodAffinity = spread, terms
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
