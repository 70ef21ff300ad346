package plugins

import (
	"fmt"
	"sort"
	"strings"

	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/balancedallocation"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/bestfit"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/dotprod"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/fgd"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/gang"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/gpuclustering"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/gpupacking"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/interpodaffinity"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/leastallocated"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/mostallocated"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/nodeaffinity"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/noderesources"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/podtopologyspread"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/queuesort"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/random"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/tainttoleration"
)

// Factory builds a plugin from its configuration.
type Factory func(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error)

// Registry returns every known plugin by name.
func Registry() map[string]Factory {
	return map[string]Factory{
		queuesort.Name:          queuesort.New,
		nodeaffinity.Name:       nodeaffinity.New,
		tainttoleration.Name:    tainttoleration.New,
		noderesources.Name:      noderesources.New,
		mostallocated.Name:      mostallocated.New,
		leastallocated.Name:     leastallocated.New,
		balancedallocation.Name: balancedallocation.New,
		gang.Name:               gang.New,
		fgd.Name:                fgd.New,
		bestfit.Name:            bestfit.New,
		dotprod.Name:            dotprod.New,
		gpupacking.Name:         gpupacking.New,
		gpuclustering.Name:      gpuclustering.New,
		random.Name:             random.New,
		podtopologyspread.Name:  podtopologyspread.New,
		interpodaffinity.Name:   interpodaffinity.New,
	}
}

// Policies maps the GPU placement policies of the FGD paper, by their
// command-line names, to their score plugins.
func Policies() map[string]string {
	return map[string]string{
		"fgd":           fgd.Name,
		"bestfit":       bestfit.Name,
		"dotprod":       dotprod.Name,
		"gpupacking":    gpupacking.Name,
		"gpuclustering": gpuclustering.Name,
		"random":        random.Name,
	}
}

// PolicyNames lists the policy names, sorted.
func PolicyNames() []string {
	var out []string
	for k := range Policies() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PolicyProfile is the default profile with a policy's score plugin in
// place of MostAllocated.
func PolicyProfile(policy string) ([]scheduler.PluginConfig, error) {
	name, ok := Policies()[policy]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %s)", policy, strings.Join(PolicyNames(), ", "))
	}
	var out []scheduler.PluginConfig
	for _, p := range Default() {
		if p.Name == mostallocated.Name {
			p = scheduler.PluginConfig{Name: name, Weight: 1}
		}
		out = append(out, p)
	}
	return out, nil
}

// Names lists the registered plugin names, sorted.
func Names() []string {
	var out []string
	for k := range Registry() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Default is the profile used when a scenario names none: priority order,
// node affinity, taints, resource fit, GPU bin packing and gangs.
func Default() []scheduler.PluginConfig {
	return []scheduler.PluginConfig{
		{Name: queuesort.Name},
		{Name: nodeaffinity.Name},
		{Name: tainttoleration.Name},
		{Name: noderesources.Name},
		{Name: mostallocated.Name, Weight: 1},
		{Name: gang.Name},
	}
}

// NewProfile builds a profile from plugin configurations: each plugin is
// added, in the order given, to every extension point it implements.
func NewProfile(cfgs []scheduler.PluginConfig, h *scheduler.Handle) (*scheduler.Profile, error) {
	if h == nil {
		h = &scheduler.Handle{}
	}
	reg := Registry()
	p := &scheduler.Profile{}
	seen := map[string]bool{}
	var selWeight int64
	for _, cfg := range cfgs {
		f, ok := reg[cfg.Name]
		if !ok {
			return nil, fmt.Errorf("unknown scheduler plugin %q (known: %s)", cfg.Name, strings.Join(Names(), ", "))
		}
		if seen[cfg.Name] {
			return nil, fmt.Errorf("scheduler plugin %q is listed twice", cfg.Name)
		}
		seen[cfg.Name] = true
		pl, err := f(cfg, h)
		if err != nil {
			return nil, fmt.Errorf("scheduler plugin %s: %w", cfg.Name, err)
		}
		used := false
		if x, ok := pl.(scheduler.QueueSortPlugin); ok {
			if p.QueueSort != nil {
				return nil, fmt.Errorf("two QueueSort plugins: %s and %s", p.QueueSort.Name(), x.Name())
			}
			p.QueueSort, used = x, true
		}
		if x, ok := pl.(scheduler.PreFilterPlugin); ok {
			p.PreFilter, used = append(p.PreFilter, x), true
		}
		if x, ok := pl.(scheduler.FilterPlugin); ok {
			p.Filter, used = append(p.Filter, x), true
		}
		if x, ok := pl.(scheduler.ScorePlugin); ok {
			w := cfg.Weight
			if w == 0 {
				w = 1
			}
			if w < 0 {
				return nil, fmt.Errorf("scheduler plugin %s: weight %d is negative", cfg.Name, w)
			}
			p.Score, used = append(p.Score, scheduler.WeightedScore{Plugin: x, Weight: w}), true
		} else if cfg.Weight != 0 {
			return nil, fmt.Errorf("scheduler plugin %s is not a score plugin; it takes no weight", cfg.Name)
		}
		if x, ok := pl.(scheduler.ReservePlugin); ok {
			p.Reserve, used = append(p.Reserve, x), true
		}
		if x, ok := pl.(scheduler.PermitPlugin); ok {
			p.Permit, used = append(p.Permit, x), true
		}
		if x, ok := pl.(scheduler.GPUSelectPlugin); ok {
			// The highest-weight score plugin that chooses GPUs chooses them.
			if p.GPUSelect == nil || cfg.Weight > selWeight {
				p.GPUSelect, selWeight = x, cfg.Weight
			}
			used = true
		}
		if x, ok := pl.(scheduler.PlacementAwarePlugin); ok {
			p.PlacementAware = append(p.PlacementAware, x)
		}
		if x, ok := pl.(scheduler.MinMemberPlugin); ok {
			p.MinMember, used = x, true
		}
		if !used {
			return nil, fmt.Errorf("scheduler plugin %s implements no extension point", cfg.Name)
		}
	}
	if !seen[noderesources.Name] {
		return nil, fmt.Errorf("scheduler profile must enable %s: without it pods would be placed beyond node capacity", noderesources.Name)
	}
	if p.QueueSort == nil {
		qs, _ := queuesort.New(scheduler.PluginConfig{}, h)
		p.QueueSort = qs.(scheduler.QueueSortPlugin)
	}
	return p, nil
}
