package pipeline

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/validate"
)

// Tie-breaks between nodes of equal score, for Inflate.
const (
	TieBreakNodeOrder   = sim.TieBreakNodeOrder
	TieBreakRandom      = sim.TieBreakRandom
	TieBreakLowestIndex = sim.TieBreakLowestIndex
)

// PolicyNames are the GPU placement policies (fgd, bestfit, ...).
func PolicyNames() []string { return plugins.PolicyNames() }

// IsPolicy says whether name is a placement policy.
func IsPolicy(name string) bool {
	_, ok := plugins.Policies()[name]
	return ok
}

// InflatePoint is one step of an inflation run (see sim.InflatePoint).
type InflatePoint = sim.InflatePoint

// Inflation is the FGD paper's workload-inflation experiment on an openb
// node list and pod list.
type Inflation struct {
	Nodes, Pods string
	Policy      string
	TieBreak    string
	Seed        uint64
	Target      float64
}

// Inflate runs the inflation experiment and checks its books: no more GPUs
// allocated than arrived or than the cluster has, ratios within 0..1,
// arrivals in order. A violation is a *BugError (exit 4).
func Inflate(in Inflation) (*sim.InflateResult, error) {
	pools, err := traces.ReadOpenbNodes(in.Nodes)
	if err != nil {
		return nil, err
	}
	pods, err := traces.ReadOpenbPods(in.Pods)
	if err != nil {
		return nil, err
	}
	profile, err := plugins.PolicyProfile(in.Policy)
	if err != nil {
		return nil, err
	}
	res, err := sim.Inflate(sim.InflateConfig{Pools: pools, Pods: pods, Plugins: profile, Seed: in.Seed, Target: in.Target, TieBreak: in.TieBreak})
	if err == nil {
		err = inflateInvariants(res)
	}
	if err != nil {
		if validate.IsInvariant(err) {
			return nil, &BugError{Scenario: "(gpuplan inflate --nodes " + in.Nodes + " --pods " + in.Pods + ")", Seed: in.Seed, Run: "inflation, policy " + in.Policy, Err: err}
		}
		return nil, err
	}
	return res, nil
}

func inflateInvariants(res *sim.InflateResult) error {
	const eps = 1e-9
	var bad []string
	if res.AllocatedGPUs > res.ArrivedGPUs+eps {
		bad = append(bad, fmt.Sprintf("%.3f GPUs allocated of %.3f arrived", res.AllocatedGPUs, res.ArrivedGPUs))
	}
	if res.AllocatedGPUs > float64(res.CapacityGPUs)+eps {
		bad = append(bad, fmt.Sprintf("%.3f GPUs allocated on a cluster of %d", res.AllocatedGPUs, res.CapacityGPUs))
	}
	if res.Failed < 0 || res.Failed > res.Pods || res.Clones > res.Pods {
		bad = append(bad, fmt.Sprintf("%d pods, %d clones, %d failed", res.Pods, res.Clones, res.Failed))
	}
	prev := math.Inf(-1)
	for i, p := range res.Points {
		if p.AllocationRatio < -eps || p.AllocationRatio > 1+eps || p.FragRatio < -eps || p.FragRatio > 1+eps || p.FragGPUs < -eps {
			bad = append(bad, fmt.Sprintf("point %d: allocation %g, fragmentation %g (%g GPUs)", i, p.AllocationRatio, p.FragRatio, p.FragGPUs))
		}
		if p.Arrived < prev {
			bad = append(bad, fmt.Sprintf("point %d: arrivals went back from %g to %g", i, prev, p.Arrived))
		}
		prev = p.Arrived
	}
	if len(bad) > 0 {
		return &sim.InvariantError{Err: fmt.Errorf("inflation: %v", bad)}
	}
	return nil
}
