package workloads

import "gpuplan.dev/gpuplan/sim/cluster"

// Spreads reports whether any object the source submits asks for
// topology spread constraints (its pods need the PodTopologySpread
// scheduler plugin).
func (s *Source) Spreads() bool {
	for _, st := range s.streams {
		for _, i := range st.objs {
			for _, g := range st.e.Objects[i].Groups {
				if g.Constraints != nil && len(g.Constraints.Spread) > 0 {
					return true
				}
			}
		}
	}
	return false
}

// samePod reports whether two groups ask for the same pods, whatever
// their labels: one gang then, its pods labelled as the first group's.
func samePod(a, b cluster.PodSpec) bool {
	a.Labels, b.Labels = nil, nil
	return a == b
}
