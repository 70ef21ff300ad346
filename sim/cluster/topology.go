package cluster

import "gpuplan.dev/gpuplan/models/topology"

// PlaceOf is node slot n's place in its pool's topology: its host, NVLink
// domain, rack and block, from its position among the pool's slots.
func (c *Cluster) PlaceOf(n int32) topology.Place {
	p := &c.Pools[c.Nodes[n].Pool]
	return p.Spec.Topology.PlaceOf(n-p.First, p.Spec.GPUsPerNode)
}
