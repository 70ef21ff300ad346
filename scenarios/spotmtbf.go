package scenarios

import (
	"encoding/json"
	"time"

	"gpuplan.dev/gpuplan/models"
)

// WithSpotMTBF is the same scenario with every spot pool and every
// NodePool that may buy spot interrupted at one mean time between
// interruptions per node, whatever model it had (its notice kept): the
// points of a spot-savings sensitivity curve.
func (s *Scenario) WithSpotMTBF(mtbf time.Duration) (*Scenario, error) {
	data, err := json.Marshal(s.Spec)
	if err != nil {
		return nil, err
	}
	c := &Scenario{APIVersion: s.APIVersion, Kind: s.Kind, Metadata: s.Metadata, file: s.file, dir: s.dir, restrict: s.restrict, pos: s.pos, cat: s.cat}
	if err := json.Unmarshal(data, &c.Spec); err != nil {
		return nil, err
	}
	set := func(in *InterruptionSpec) *InterruptionSpec {
		out := &InterruptionSpec{MTBF: &Duration{mtbf}}
		if in != nil {
			out.Notice = in.Notice
		}
		return out
	}
	for i := range c.Spec.Cluster.Pools {
		if p := &c.Spec.Cluster.Pools[i]; p.CapacityType == models.Spot {
			p.Interruptions = set(p.Interruptions)
		}
	}
	for i := range c.Spec.Cluster.NodePools {
		np := &c.Spec.Cluster.NodePools[i]
		for _, ct := range np.CapacityTypes {
			if ct == models.Spot {
				np.Interruptions = set(np.Interruptions)
			}
		}
	}
	return c, nil
}
