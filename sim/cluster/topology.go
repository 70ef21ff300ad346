package cluster

import (
	"fmt"
	"strconv"

	"gpuplan.dev/gpuplan/models/topology"
)

// Topology is where the cluster's nodes sit (host, NVLink domain, rack,
// block, zone, the labels the scheduler matches) and which labelled pods
// each holds: the view topology spread constraints and pod affinity read.
// It is a view of the cluster's state: c.Topology().
type Topology struct{ c *Cluster }

// Topology returns the topology view of the cluster.
func (c *Cluster) Topology() Topology { return Topology{c} }

// PlaceOf is node slot n's place in its pool's topology: its host, NVLink
// domain, rack and block, from its position among the pool's slots.
func (t Topology) PlaceOf(n int32) topology.Place {
	c := t.c
	p := &c.Pools[c.Nodes[n].Pool]
	return p.Spec.Topology.PlaceOf(n-p.First, p.Spec.GPUsPerNode)
}

// MaxZones bounds the zones one pool spreads over.
const MaxZones = 64

func (p *PoolSpec) validateZones() error {
	if len(p.Zones) == 0 {
		return nil
	}
	if len(p.Zones) > MaxZones {
		return fmt.Errorf("%d zones is more than %d", len(p.Zones), MaxZones)
	}
	seen := map[string]bool{}
	for i, z := range p.Zones {
		switch {
		case z == "":
			return fmt.Errorf("zones[%d] is empty", i)
		case seen[z]:
			return fmt.Errorf("zones[%d] %q is listed twice", i, z)
		}
		seen[z] = true
	}
	if v, ok := p.Labels[LabelZone]; ok {
		return fmt.Errorf("the pool's nodes are spread over zones, and its labels also put them all in %s=%q", LabelZone, v)
	}
	return nil
}

// ZoneSlot is the zone (an index into the pool's Zones) of the pool's
// node slot (0-based): the pool's widest topology unit, round robin. A
// pool in blocks deals out whole blocks (block b in zone b mod zones), one
// in racks (or NVLink domains wider than a node) whole racks, a flat pool
// its nodes one by one (slot k in zone k mod zones). -1: no zones.
func (p *PoolSpec) ZoneSlot(slot int32) int {
	if len(p.Zones) == 0 {
		return -1
	}
	t := p.Topology
	pl := t.PlaceOf(slot, p.GPUsPerNode)
	unit := slot
	switch {
	case t.RacksPerBlock > 0:
		unit = pl.Block
	case t.NodesPerRack > 0 || t.NodesPerDomain(p.GPUsPerNode) > 1:
		unit = pl.Rack
	}
	return int(unit) % len(p.Zones)
}

// ZoneOf is node n's zone: its pool's zones dealt round robin (ZoneSlot),
// else the pool's zone label; "" when it has none.
func (t Topology) ZoneOf(n int32) string {
	c := t.c
	p := &c.Pools[c.Nodes[n].Pool]
	if z := p.Spec.ZoneSlot(n - p.First); z >= 0 {
		return p.Spec.Zones[z]
	}
	return p.Labels[LabelZone]
}

// HostnameOf is node n's kubernetes.io/hostname: its pool's name and its
// slot in the pool (gpu-a-0, gpu-a-1, ...).
func (t Topology) HostnameOf(n int32) string {
	c := t.c
	p := &c.Pools[c.Nodes[n].Pool]
	return p.Spec.Name + "-" + strconv.Itoa(int(n-p.First))
}

// NodeLabel is the value of label key on node n: the pool's labels, plus
// the node's own zone (ZoneOf), hostname (HostnameOf) and, unless the
// pool's labels give them, its block, rack and NVLink domain
// (LevelLabel).
func (t Topology) NodeLabel(n int32, key string) (string, bool) {
	c := t.c
	switch key {
	case LabelHostname:
		return t.HostnameOf(n), true
	case LabelZone:
		z := t.ZoneOf(n)
		return z, z != ""
	}
	p := &c.Pools[c.Nodes[n].Pool]
	if v, ok := p.Labels[key]; ok {
		return v, ok
	}
	return p.Spec.LevelLabel(n-p.First, key)
}

// LevelLabel is the value of the topology level label key
// (LabelTopologyBlock, LabelTopologyRack, LabelGPUClique) on the pool's
// node slot (0-based): the pool's name and the slot's block, rack or
// NVLink domain in its topology (PlaceOf), as "POOL-block-B",
// "POOL-rack-R" and "POOL-nvl-D" (values unique across pools; a pool
// without a topology is one block and one rack, each node its own NVLink
// domain, as its TAS levels are). false for any other key.
func (p *PoolSpec) LevelLabel(slot int32, key string) (string, bool) {
	if k, ok := p.LevelKeys[key]; ok {
		key = k
	}
	switch key {
	case LabelTopologyBlock, LabelTopologyRack, LabelGPUClique:
	default:
		return "", false
	}
	pl := p.Topology.PlaceOf(slot, p.GPUsPerNode)
	switch key {
	case LabelTopologyBlock:
		return p.Name + "-block-" + strconv.Itoa(int(pl.Block)), true
	case LabelTopologyRack:
		return p.Name + "-rack-" + strconv.Itoa(int(pl.Rack)), true
	}
	return p.Name + "-nvl-" + strconv.Itoa(int(pl.Domain)), true
}
