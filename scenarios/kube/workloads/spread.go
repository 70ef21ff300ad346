package workloads

import "gpuplan.dev/gpuplan/sim/cluster"

// PodPlacement reports whether any object the source submits asks for
// topology spread constraints (spread) or required pod (anti-)affinity
// (affinity): its pods then need the PodTopologySpread or the
// InterPodAffinity scheduler plugin.
func (s *Source) PodPlacement() (spread, affinity bool) {
	for _, st := range s.streams {
		for _, i := range st.objs {
			for _, g := range st.e.Objects[i].Groups {
				if c := g.Constraints; c != nil {
					spread = spread || len(c.Spread) > 0
					affinity = affinity || len(c.PodAffinity) > 0
				}
			}
		}
	}
	return spread, affinity
}

// samePod reports whether two groups ask for the same pods, whatever
// their labels: one gang then, its pods labelled as the first group's.
func samePod(a, b cluster.PodSpec) bool {
	a.Labels, b.Labels = nil, nil
	return a == b
}
