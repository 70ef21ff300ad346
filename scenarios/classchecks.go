package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Checks of the synthetic classes against the cluster and the policy they
// run on, made when the scenario is built (so by `scenario check` as by
// `simulate`): a class no pool or no queue can ever take is an error at
// the class's line, not a run that leaves its jobs waiting or stops at
// its first job.

// migOffers is the MIG profiles a pool's pods can ask for: its layout's,
// or every profile of its GPU model when idle GPUs may be re-partitioned.
// Only the mixed strategy exposes profiles by name.
func migOffers(p cluster.PoolSpec) []string {
	if p.Sharing.MIGStrategy != cluster.MIGMixed {
		return nil
	}
	var out []string
	for _, name := range p.Sharing.MIGLayout {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if p.Sharing.MIGRelayout {
		for _, mp := range models.MIGProfiles(p.GPUModel) {
			if !slices.Contains(out, mp.Name) {
				out = append(out, mp.Name)
			}
		}
	}
	return out
}

// checkClassMIG refuses a class whose pods ask for a MIG profile that no
// pool offers: a profile of another GPU model (1g.5gb is an A100-40GB
// profile, not an H100's), or one no MIG pool's layout has.
func (s builder) checkClassMIG(pools []cluster.PoolSpec) error {
	sy := s.Spec.Workload.Synthetic
	if sy == nil {
		return nil
	}
	for i, c := range sy.Classes {
		if c.Pod.MIG == "" {
			continue
		}
		at := fmt.Sprintf("spec.workload.synthetic.classes[%d].pod.mig", i)
		var offers []string
		found := false
		for _, p := range pools {
			names := migOffers(p)
			if len(names) == 0 {
				continue
			}
			if slices.Contains(names, c.Pod.MIG) {
				found = true
				break
			}
			offers = append(offers, fmt.Sprintf("%s (%s) offers %s", p.Name, p.GPUModel, strings.Join(names, ", ")))
		}
		if found {
			continue
		}
		if len(offers) == 0 {
			return s.errAt(at, "class %s asks for MIG profile %s, but no pool shares its GPUs by MIG with the mixed strategy (sharing.mig.strategy: mixed)", c.Name, Quote(c.Pod.MIG))
		}
		var gpuModels []string
		for _, p := range pools {
			if migOffers(p) != nil && !slices.Contains(gpuModels, p.GPUModel) {
				gpuModels = append(gpuModels, p.GPUModel)
			}
		}
		for _, m := range gpuModels {
			if _, ok := models.MIGProfileByName(m, c.Pod.MIG); ok {
				return s.errAt(at, "class %s asks for MIG profile %s, which no pool's layout has: %s", c.Name, Quote(c.Pod.MIG), strings.Join(offers, "; "))
			}
		}
		return s.errAt(at, "class %s asks for MIG profile %s, which is not a profile of the pools' GPU models: %s", c.Name, Quote(c.Pod.MIG), strings.Join(offers, "; "))
	}
	return nil
}

// checkClassQueues refuses a class whose queue the admission policy does
// not know: every job is submitted to a LocalQueue, after spec.policy.queues
// maps it, or to spec.policy.defaultQueue.
func (s builder) checkClassQueues(q *queueMapper) error {
	sy := s.Spec.Workload.Synthetic
	if sy == nil {
		return nil
	}
	for i, c := range sy.Classes {
		queue := c.Queue
		if to, ok := q.m[queue]; ok {
			queue = to
		}
		if q.known[queue] || q.def != "" {
			continue
		}
		at := fmt.Sprintf("spec.workload.synthetic.classes[%d].queue", i)
		if c.Queue == "" {
			return s.errAt(at, "class %s gives no queue, and the admission policy takes jobs only from its LocalQueues (%s): give the class a queue or set spec.policy.defaultQueue", c.Name, strings.Join(sortedKeys(q.known), ", "))
		}
		return s.errAt(at, "class %s: queue %s is not a LocalQueue of the admission policy (%s): map it with spec.policy.queues or set spec.policy.defaultQueue", c.Name, Quote(c.Queue), strings.Join(sortedKeys(q.known), ", "))
	}
	return nil
}
