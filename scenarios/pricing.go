package scenarios

import (
	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// pricingPlan is every rule a run's costs are read with, settled before
// the run: each pool's node price and how it was found, a spot pool's
// on-demand twin price (its CPUs and memory get the node's discount), the
// base rates and the split (gpu-residual: GPU nodes' CPUs and memory at
// GPU-less instances' rates, the GPUs the rest; opencost: the base-rate
// ratio), the catalog's sources, the showback's idle rule and budgets.
// pools and prices are the run's, index for index.
func (s pricer) pricingPlan(pools []cluster.PoolSpec, prices []PoolPrice) (*reports.Pricing, error) {
	pr := &reports.Pricing{BaseRates: s.BaseRates()}
	if s.cat != nil {
		pr.Sources = s.cat.Sources
	}
	rule, budgets, err := s.showback()
	if err != nil {
		return nil, err
	}
	pr.IdleDistribution, pr.Budgets = rule, budgets
	opencost, err := s.openCostSplit()
	if err != nil {
		return nil, err
	}
	if !opencost {
		rates, err := s.cpuMemoryRates()
		if err != nil {
			return nil, err
		}
		pr.CPUMemory = rates
	}
	for i, p := range prices {
		pp := reports.PoolPricing{PerHour: p.PerHour, CapacityType: p.CapacityType, Basis: p.Basis,
			Group: p.Group, Interruptions: p.Interruptions, Failures: p.Failures, BlockStart: p.Block.Start, BlockEnd: p.Block.End, Held: p.Held,
			DeallocatedDiskPerHour: p.DiskPerHour}
		if p.CapacityType == models.Spot && i < len(pools) {
			pp.OnDemandPerHour = s.onDemandPriceOf(pools[i].Name, pools[i].InstanceType)
		}
		pr.Pools = append(pr.Pools, pp)
	}
	if pr.Commitments, err = s.commitments(pools, prices); err != nil {
		return nil, err
	}
	if pr.AdviseDiscount, err = s.commitmentAdvice(); err != nil {
		return nil, err
	}
	return pr, nil
}
