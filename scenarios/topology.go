package scenarios

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// PoolTopologySpec is where a pool's nodes sit: node slots fill NVLink
// domains, racks and blocks in order (slot k is in rack k/nodesPerRack).
// A training gang's all-reduce is priced by the widest level its nodes
// span (models/topology).
type PoolTopologySpec struct {
	// NVLinkDomainGPUs is the GPUs of one NVLink domain (72 on GB200/GB300
	// NVL72); 0 or the GPUs of a node: each node is its own domain.
	NVLinkDomainGPUs int32 `json:"nvlinkDomainGPUs,omitempty"`
	// NodesPerRack is the nodes of one rack (a rack holds whole NVLink
	// domains); 0: one rack, or one NVLink domain a rack.
	NodesPerRack int32 `json:"nodesPerRack,omitempty"`
	// RacksPerBlock is the racks behind one spine; 0: one block.
	RacksPerBlock int32 `json:"racksPerBlock,omitempty"`
	// SpineOversubscription divides the rails' bandwidth across racks of
	// a block (default 2, assumed), CoreOversubscription across blocks
	// (default 4, assumed; at least the spine's).
	SpineOversubscription float64 `json:"spineOversubscription,omitempty"`
	CoreOversubscription  float64 `json:"coreOversubscription,omitempty"`
	// DomainFabric names the NVLink domain's fabric (default: the GPU
	// model's, gb200-nvl72 for GB200/GB300).
	DomainFabric string `json:"domainFabric,omitempty"`
	// Zones spread the pool's nodes over zones, round robin by its widest
	// unit (node, rack or block: cluster.PoolSpec.ZoneSlot), as each
	// node's topology.kubernetes.io/zone label. None: the pool's zone, if
	// any, labels every node.
	Zones []string `json:"zones,omitempty"`
}

// maxTopologySize bounds the sizes a topology block may give.
const maxTopologySize = 1 << 16

// validatePoolTopology checks pool i's topology block for what needs no
// build: sizes and ratios in bounds.
func (s validator) validatePoolTopology(i int) error {
	t := s.Spec.Cluster.Pools[i].Topology
	if t == nil {
		return nil
	}
	at := func(f string) string { return fmt.Sprintf("spec.cluster.pools[%d].topology.%s", i, f) }
	for _, f := range []struct {
		name string
		v    int32
	}{{"nvlinkDomainGPUs", t.NVLinkDomainGPUs}, {"nodesPerRack", t.NodesPerRack}, {"racksPerBlock", t.RacksPerBlock}} {
		if f.v < 0 || f.v > maxTopologySize {
			return s.errAt(at(f.name), "%d is outside 0..%d", f.v, maxTopologySize)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"spineOversubscription", t.SpineOversubscription}, {"coreOversubscription", t.CoreOversubscription}} {
		if f.v != 0 && !(f.v >= 1 && f.v <= 1000) {
			return s.errAt(at(f.name), "%g is outside [1, 1000] (1 is a non-blocking fabric)", f.v)
		}
	}
	if t.SpineOversubscription != 0 && t.CoreOversubscription != 0 && t.CoreOversubscription < t.SpineOversubscription {
		return s.errAt(at("coreOversubscription"), "%g is below the spine's %g: crossing blocks also crosses a spine", t.CoreOversubscription, t.SpineOversubscription)
	}
	if t.RacksPerBlock > 0 && t.NodesPerRack == 0 && t.NVLinkDomainGPUs == 0 {
		return s.errAt(at("racksPerBlock"), "needs nodesPerRack (or nvlinkDomainGPUs): without racks there are no blocks")
	}
	return s.validateZones(i, at)
}

// validateZones checks pool i's topology.zones: bounded, each a label
// value, none twice, and no other zone given for the pool.
func (s validator) validateZones(i int, at func(string) string) error {
	p := s.Spec.Cluster.Pools[i]
	zs := p.Topology.Zones
	if len(zs) == 0 {
		return nil
	}
	if len(zs) > cluster.MaxZones {
		return s.errAt(at("zones"), "%d zones is more than %d", len(zs), cluster.MaxZones)
	}
	seen := map[string]bool{}
	for k, z := range zs {
		f := fmt.Sprintf("zones[%d]", k)
		if errs := validation.IsValidLabelValue(z); z == "" || len(errs) > 0 {
			return s.errAt(at(f), "%s is not a zone name (a label value: up to 63 letters, digits, '-', '_' or '.')", Quote(z))
		}
		if seen[z] {
			return s.errAt(at(f), "%s is listed twice", Quote(z))
		}
		seen[z] = true
	}
	if p.Zone != "" {
		return s.errAt(fmt.Sprintf("spec.cluster.pools[%d].zone", i), "the pool gives one zone (%s) and topology.zones spreads it over %d: give one or the other", Quote(p.Zone), len(zs))
	}
	if _, ok := p.Labels[cluster.LabelZone]; ok {
		return s.errAt(fmt.Sprintf("spec.cluster.pools[%d].labels", i), "%s is set and topology.zones spreads the pool over %d zones: give one or the other", cluster.LabelZone, len(zs))
	}
	return nil
}

// poolTopology is the topology of the pool at path at, checked against
// its GPUs per node and model (known only once the catalog filled them).
func (s builder) poolTopology(at string, t *PoolTopologySpec, gpusPerNode int32, model string) (topology.Spec, error) {
	if t == nil {
		return topology.Spec{}, nil
	}
	at += ".topology"
	spec := topology.Spec{DomainGPUs: t.NVLinkDomainGPUs, NodesPerRack: t.NodesPerRack, RacksPerBlock: t.RacksPerBlock,
		SpineOversubscription: t.SpineOversubscription, CoreOversubscription: t.CoreOversubscription, DomainFabric: t.DomainFabric}
	if t.NVLinkDomainGPUs > 0 && (gpusPerNode <= 0 || t.NVLinkDomainGPUs%gpusPerNode != 0) {
		return spec, s.errAt(at+".nvlinkDomainGPUs", "an NVLink domain of %d GPUs is not a whole number of the pool's %d-GPU nodes", t.NVLinkDomainGPUs, gpusPerNode)
	}
	if nd := spec.NodesPerDomain(gpusPerNode); nd > 1 {
		if t.NodesPerRack > 0 && t.NodesPerRack%nd != 0 {
			return spec, s.errAt(at+".nodesPerRack", "a rack of %d nodes is not a whole number of %d-node NVLink domains", t.NodesPerRack, nd)
		}
		name := t.DomainFabric
		if name == "" {
			name = topology.DomainFabricFor(model)
		}
		if name == "" {
			return spec, s.errAt(at+".domainFabric", "%s has no built-in NVLink domain wider than a node: name the domain's fabric (a calibration profile's, or %s)", Quote(model), topology.NVL72)
		}
	}
	if err := spec.Validate(gpusPerNode); err != nil {
		return spec, s.errAt(at, "%v", err)
	}
	return spec, nil
}

// topologyNotes are the run's assumptions about its pools' topologies:
// the levels and the oversubscriptions taken (none for flat pools).
func topologyNotes(pools []cluster.PoolSpec) []string {
	var notes []string
	for _, p := range pools {
		if len(p.Zones) > 0 {
			notes = append(notes, fmt.Sprintf("pool %s: nodes spread over zones %s round robin by %s (each node's %s label); prices stay the pool's region's, and the all-reduce is not priced across zones", p.Name, strings.Join(p.Zones, ", "), zoneUnit(p), cluster.LabelZone))
		}
		t := p.Topology
		if t.Zero() {
			continue
		}
		spine, core := t.Oversubscriptions()
		src := func(given float64, def topology.Ratio) string {
			if given != 0 {
				return "as given"
			}
			return def.Source
		}
		domain := "each node its own NVLink domain"
		if nd := t.NodesPerDomain(p.GPUsPerNode); nd > 1 {
			domain = fmt.Sprintf("NVLink domains of %d GPUs (%d nodes)", t.DomainGPUs, nd)
		}
		notes = append(notes, fmt.Sprintf("pool %s: %s, %s a rack, %s a block; a training gang's all-reduce is priced by the widest level its nodes span: across racks the rails through a %g:1 spine (%s), across blocks through a %g:1 core (%s)",
			p.Name, domain, countOr(t.NodesPerRack, "nodes", "all"), countOr(t.RacksPerBlock, "racks", "all"), spine, src(t.SpineOversubscription, topology.DefaultSpine()), core, src(t.CoreOversubscription, topology.DefaultCore())))
	}
	return notes
}

// zoneUnit names what pool p deals out to its zones (cluster.PoolSpec.ZoneSlot).
func zoneUnit(p cluster.PoolSpec) string {
	switch t := p.Topology; {
	case t.RacksPerBlock > 0:
		return "block"
	case t.NodesPerRack > 0 || t.NodesPerDomain(p.GPUsPerNode) > 1:
		return "rack"
	}
	return "node"
}

func countOr(n int32, unit, none string) string {
	if n <= 0 {
		return none + " " + unit
	}
	return fmt.Sprintf("%d %s", n, unit)
}
