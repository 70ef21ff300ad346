package scenarios

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// maxMaxPrice bounds a spot max price, USD a node-hour.
const maxMaxPrice = 10_000

// maxPrice applies a spot pool's maxPrice. Prices are the catalog's (or
// the scenario's) for the whole run, so the max price decides whether a
// node launches at all, not when one is evicted for price: a fixed pool
// over its max price is refused at the field (none of its nodes would
// launch: Azure allocates no Spot VM whose max price is below the current
// price, EC2 fulfils no spot request below the spot price); an autoscaled
// one is skipped by its autoscaler, as an offering out of capacity, and
// may hold no node at the start. -1 is up to the on-demand price, which
// no catalog spot price exceeds (Azure then bills the lower of the two;
// EC2's default max price is the on-demand price).
func (s builder) maxPrice(at string, p *PoolSpec, cp *capacity.Pool, price *PoolPrice) error {
	m := p.MaxPrice
	if m == nil {
		return nil
	}
	switch {
	case capacityType(p.CapacityType) != models.Spot:
		return s.errAt(at+".maxPrice", "is a spot pool's (Azure's spotMaxPrice, EC2's spot max price): set capacityType: spot")
	case math.IsNaN(*m) || (*m != -1 && (*m <= 0 || *m > maxMaxPrice)):
		return s.errAt(at+".maxPrice", "is %g; give -1 (up to the on-demand price) or a price above 0 and at most %d USD a node-hour", *m, maxMaxPrice)
	case *m == -1:
		return nil // the default
	case price.PerHour <= *m:
		price.Interruptions += fmt.Sprintf("; max price $%g a node-hour, at or above the spot price", *m)
		cp.Interruptions.Assumption = price.Interruptions
		return nil
	}
	over := fmt.Sprintf("is $%g a node-hour, below the spot price of %s, $%g (%s): no node would launch (Azure allocates no Spot VM whose max price is under the current price; EC2 fulfils no spot request below the spot price)",
		*m, p.InstanceType, price.PerHour, price.Basis)
	switch {
	case p.Autoscaling == nil:
		return s.errAt(at+".maxPrice", "%s; raise it, or give -1 (up to the on-demand price)", over)
	case p.Count > 0 || p.Autoscaling.MinNodes > 0:
		return s.errAt(at+".maxPrice", "%s, yet the pool starts with %d nodes and keeps at least %d; set count and minNodes to 0 or raise it", over, p.Count, p.Autoscaling.MinNodes)
	}
	cp.OverMaxPrice = true
	price.Interruptions += fmt.Sprintf("; max price $%g, below the spot price $%g: the autoscaler launches none of it (Azure and EC2 allocate no spot node under its max price)", *m, price.PerHour)
	cp.Interruptions.Assumption = price.Interruptions
	return nil
}
