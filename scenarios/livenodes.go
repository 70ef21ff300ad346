package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/scenarios/kube/nodes"
)

// NodesSpec is the live cluster: the node list `kubectl get nodes -o yaml`
// (or -o json) prints. Its nodes become pools (see package
// scenarios/kube/nodes), priced from the catalog by instance type.
type NodesSpec struct {
	Path string `json:"path"`
	// Pools sets, by name, what the nodes do not say of the pools read
	// from them (spot interruptions, an Azure eviction policy, prices).
	Pools []ImportedPoolSpec `json:"pools,omitempty"`
}

// importNodes reads spec.cluster.nodes and adds its pools to the inline
// ones, remembering their names so that a variant reads the file again.
func (s *Scenario) importNodes() error {
	ns := s.Spec.Cluster.Nodes
	if ns == nil {
		return nil
	}
	if ns.Path == "" {
		return s.errAt("spec.cluster.nodes.path", "is required: the file `kubectl get nodes -o yaml` wrote")
	}
	file := s.path(ns.Path)
	res, err := nodes.Read(file)
	if err != nil {
		return err
	}
	settings, err := s.importSettings("spec.cluster.nodes", ns.Pools)
	if err != nil {
		return err
	}
	var names []string
	for _, p := range res.Pools {
		names = append(names, p.Name)
		if err := s.poolNameFree(p.Name, file, p.Line, "node "+p.FirstNode); err != nil {
			return err
		}
		ps := PoolSpec{
			Name: p.Name, Count: p.Nodes, InstanceType: p.InstanceType, GPUModel: p.GPUModel, GPUsPerNode: p.GPUs,
			CPU: p.CPU, Memory: p.Memory, Labels: p.Labels,
			CapacitySpec: CapacitySpec{CapacityType: p.CapacityType, Region: p.Region},
		}
		// The zone stays a label: its name (us-east-1a) is the account's,
		// the catalog's zones are zone IDs, so the pool is priced at its
		// region's figure.
		if p.GPUs > 0 && p.GPUModel == "" {
			res, err := builder{s}.instance(p.InstanceType)
			if err != nil {
				return err
			}
			if !res.ok || res.it.GPUModel == "" {
				return &InputError{File: file, Line: p.Line, Field: "node " + p.FirstNode,
					Msg: fmt.Sprintf("nvidia.com/gpu.product %s is not a GPU gpuplan knows, nor is the instance type %s in the catalog", Quote(p.GPUProduct), Quote(p.InstanceType))}
			}
			ps.GPUModel = res.it.GPUModel
		}
		if p.GPUMemoryMiB > 0 && p.MIGStrategy == "" {
			q := resource.NewQuantity(p.GPUMemoryMiB<<20, resource.BinarySI)
			ps.GPUMemory = q
		}
		if p.MIGStrategy != "" {
			ps.Sharing = &SharingSpec{MIG: &MIGSpec{Strategy: p.MIGStrategy, Profiles: p.MIGLayout}}
		}
		if lv := p.Levels; lv != nil {
			// The nodes' level labels as the pool's topology: slots fill
			// domains, racks and blocks in order, as the nodes are grouped.
			ps.Topology = &PoolTopologySpec{NodesPerRack: lv.NodesPerRack, RacksPerBlock: lv.RacksPerBlock}
			if lv.NodesPerDomain > 1 {
				ps.Topology.NVLinkDomainGPUs = lv.NodesPerDomain * p.GPUs
			}
			ps.levelKeys = lv.Keys
			s.nodeNotes = append(s.nodeNotes, fmt.Sprintf("%s:%d: pool %s: topology from its nodes' labels (%s): %s", file, p.Line, p.Name, levelKeyList(lv.Keys), levelSizes(lv, p.Nodes)))
		}
		for _, t := range p.Taints {
			ps.Taints = append(ps.Taints, TaintSpec{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
		}
		if p.CapacityType == nodes.Reserved {
			note := fmt.Sprintf("%s:%d: pool %s: %d nodes of a capacity reservation or capacity block (Karpenter's reserved, EKS's CAPACITY_BLOCK): held and paid for the whole run, never interrupted, not covered by pricing.commitments; priced at the on-demand figure, as an on-demand capacity reservation bills (a capacity block's own price is not on the node: give the pool inline with pricePerHour)", file, p.Line, p.Name, p.Nodes)
			if by := capacityBlockLabel(p.Labels); by != "" {
				note += fmt.Sprintf("; a capacity block (%s), whose window is not given: no label or field of a Node holds the block's start or end (EC2 keeps them; the node carries the reservation's type and id only), so it is held for the whole run and not ended: give the pool inline with window {start, end} for its end and its warning", by)
			}
			s.nodeNotes = append(s.nodeNotes, note)
		}
		settings.apply(&ps, len(s.Spec.Cluster.Pools))
		s.addImportedPool(ps, "spec.cluster.nodes")
	}
	if err := settings.check(ns.Path, names); err != nil {
		return err
	}
	s.nodeNotes = append(s.nodeNotes, res.Notes...)
	s.nodeNotes = append(s.nodeNotes, fmt.Sprintf("%d pools read from the node list %s, priced at their region's catalog price (a node's zone, such as us-east-1a, is the account's name for it, not the catalog's zone ID)", len(res.Pools), ns.Path))
	return nil
}

// Labels that tell a capacity block's nodes from an on-demand capacity
// reservation's: Karpenter's and EKS Auto Mode's reservation type
// (default or capacity-block) and the EKS managed node group's capacity
// type.
const (
	labelKarpenterReservationType = "karpenter.k8s.aws/capacity-reservation-type"
	labelEKSReservationType       = "eks.amazonaws.com/capacity-reservation-type"
)

// capacityBlockLabel is the label that says a pool's nodes are a capacity
// block's, as key: value ("" when none does).
func capacityBlockLabel(labels map[string]string) string {
	for _, k := range []string{labelKarpenterReservationType, labelEKSReservationType} {
		if labels[k] == "capacity-block" {
			return k + ": capacity-block"
		}
	}
	if labels[nodes.LabelEKSCT] == "CAPACITY_BLOCK" {
		return nodes.LabelEKSCT + ": CAPACITY_BLOCK"
	}
	return ""
}

// poolNameFree refuses a pool read from file (at line, named by what)
// whose name a pool given inline already has.
func (s *Scenario) poolNameFree(name, file string, line int, what string) error {
	for _, q := range s.Spec.Cluster.Pools {
		if q.Name == name {
			return &InputError{File: file, Line: line, Field: what,
				Msg: fmt.Sprintf("its pool's name %s is taken by a pool given inline in %s; rename that pool", Quote(name), s.file)}
		}
	}
	return nil
}

// addImportedPool adds a pool read from a file (a node dump, an agent-pool
// template) to the inline ones, remembering its name so that a variant
// reads the file again; errors about the pool later name the line of the
// scenario field that gave the file (from).
func (s *Scenario) addImportedPool(ps PoolSpec, from string) {
	if lc, ok := s.pos[from]; ok {
		s.pos[fmt.Sprintf("spec.cluster.pools[%d]", len(s.Spec.Cluster.Pools))] = lc
	}
	s.Spec.Cluster.Pools = append(s.Spec.Cluster.Pools, ps)
	s.importedPools = append(s.importedPools, ps.Name)
}

// levelKeyList names the labels a pool's topology was read from.
func levelKeyList(keys map[string]string) string {
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// levelSizes says what a pool's levels hold.
func levelSizes(lv *nodes.Levels, total int) string {
	var parts []string
	if lv.NodesPerDomain > 1 {
		parts = append(parts, fmt.Sprintf("NVLink domains of %d nodes", lv.NodesPerDomain))
	}
	if lv.NodesPerRack > 0 {
		parts = append(parts, fmt.Sprintf("racks of %d nodes", lv.NodesPerRack))
	}
	if lv.RacksPerBlock > 0 {
		parts = append(parts, fmt.Sprintf("blocks of %d racks", lv.RacksPerBlock))
	}
	return fmt.Sprintf("%s, %d nodes in all", strings.Join(parts, ", "), total)
}
