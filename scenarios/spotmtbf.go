package scenarios

import (
	"time"

	"gpuplan.dev/gpuplan/models"
)

// WithSpotMTBF is the same scenario with every spot pool and every
// NodePool that may buy spot interrupted at one mean time between
// interruptions per node, whatever model it had (its notice kept): the
// points of a spot-savings sensitivity curve.
func (s *Scenario) WithSpotMTBF(mtbf time.Duration) (*Scenario, error) {
	c, err := s.derive()
	if err != nil {
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
