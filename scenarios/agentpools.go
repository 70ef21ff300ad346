package scenarios

import (
	"fmt"
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/kube/aks"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// AgentPoolsSpec is an ARM template of AKS agent pools (package
// scenarios/kube/aks): each becomes a pool of its VM size, priced from
// the catalog in the template's location (else pricing.region).
type AgentPoolsSpec struct {
	Path string `json:"path"`
	// Pools sets, by name, what the template does not say of its agent
	// pools (spot interruptions, prices, launch times).
	Pools []ImportedPoolSpec `json:"pools,omitempty"`
}

// importAgentPools reads spec.cluster.agentPools and adds its pools to
// the inline ones, as importNodes does for a node dump.
func (s *Scenario) importAgentPools() error {
	ap := s.Spec.Cluster.AgentPools
	if ap == nil {
		return nil
	}
	if ap.Path == "" {
		return s.errAt("spec.cluster.agentPools.path", "is required: an ARM template of agent pools (gpuplan manifests --provider aks writes one)")
	}
	file := s.path(ap.Path)
	data, err := readWholeBounded(file)
	if err != nil {
		return err
	}
	region := s.Spec.Pricing.Region
	if region == "" {
		region = DefaultRegion
	}
	pools, notes, err := aks.Read(file, data, region)
	if err != nil {
		return err
	}
	settings, err := s.importSettings("spec.cluster.agentPools", ap.Pools)
	if err != nil {
		return err
	}
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
		if err := s.poolNameFree(p.Name, file, p.Line, "agent pool "+p.Name); err != nil {
			return err
		}
		ps := PoolSpec{Name: p.Name, Count: p.Count, InstanceType: p.VMSize, CapacitySpec: CapacitySpec{CapacityType: models.OnDemand, Region: p.Location}}
		if p.Spot {
			ps.CapacityType = models.Spot
			ps.MaxPrice = p.MaxPrice
			switch {
			case p.EvictionPolicy == EvictionDeallocate && p.MaxCount > 0:
				s.nodeNotes = append(s.nodeNotes, fmt.Sprintf("%s:%d: agent pool %s: eviction policy Deallocate on an autoscaled pool is taken as Delete: gpuplan models Deallocate on fixed pools (AKS documents that stopped-deallocated nodes count against quota and can cause issues with cluster scaling)", file, p.Line, p.Name))
			case p.EvictionPolicy == EvictionDeallocate:
				ps.EvictionPolicy = EvictionDeallocate
			}
		}
		if err := applyShape(p.Shape, &ps); err != nil {
			return fmt.Errorf("%s:%d: agent pool %s: tags: %w", file, p.Line, p.Name, err)
		}
		if len(p.Zones) == 1 {
			ps.Zone = aks.Zone(p.Location, p.Zones[0])
		}
		// The pool's nodeLabels, and the labels AKS sets on its nodes.
		ps.Labels = maps.Clone(p.Labels)
		if ps.Labels == nil {
			ps.Labels = map[string]string{}
		}
		maps.Copy(ps.Labels, aks.SystemLabels(p))
		delete(ps.Labels, cluster.LabelPool) // gpuplan's own, set again on every pool
		for _, t := range p.Taints {
			k, v, e, _ := aks.ParseTaint(t)
			ps.Taints = append(ps.Taints, TaintSpec{Key: k, Value: v, Effect: e})
		}
		if p.MaxCount > 0 {
			ps.Autoscaling = &AutoscalingSpec{MinNodes: p.MinCount, MaxNodes: p.MaxCount}
		}
		settings.apply(&ps, len(s.Spec.Cluster.Pools))
		s.addImportedPool(ps, "spec.cluster.agentPools")
	}
	if err := settings.check(ap.Path, names); err != nil {
		return err
	}
	s.nodeNotes = append(s.nodeNotes, notes...)
	s.nodeNotes = append(s.nodeNotes, fmt.Sprintf("%d AKS agent pools read from %s, priced from the catalog in %s", len(pools), ap.Path, pools[0].Location))
	return nil
}

// applyShape sets the pool's shape from the agent pool's gpuplan tags
// (what --provider aks writes for a shape the scenario gave).
func applyShape(sh aks.Shape, ps *PoolSpec) error {
	for _, q := range []struct {
		tag, v string
		to     *resource.Quantity
	}{{aks.TagCPU, sh.CPU, &ps.CPU}, {aks.TagMemory, sh.Memory, &ps.Memory}} {
		if q.v == "" {
			continue
		}
		x, err := resource.ParseQuantity(q.v)
		if err != nil || x.Sign() <= 0 {
			return fmt.Errorf("%s: %s is not a positive quantity", q.tag, strict.Quote(q.v))
		}
		*q.to = x
	}
	ps.GPUModel = sh.GPUModel
	if sh.GPUs != "" {
		n, err := strconv.Atoi(sh.GPUs)
		if err != nil || n < 0 || n > 64 {
			return fmt.Errorf("%s: %s is not a GPU count from 0 to 64", aks.TagGPUs, strict.Quote(sh.GPUs))
		}
		ps.GPUsPerNode = int32(n)
	}
	return nil
}
