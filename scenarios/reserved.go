package scenarios

import (
	"fmt"

	"gpuplan.dev/gpuplan/models"
)

// A pool of capacityType reserved is a capacity reservation or capacity
// block: its nodes are held for the whole run and paid for whether used
// or not, at pricePerHour (a capacity block's price) or else at the
// on-demand price (an on-demand capacity reservation bills at it); never
// interrupted, not autoscaled.

// validateReserved checks what a reserved pool may not have.
func (s validator) validateReserved(at string, cs *CapacitySpec) error {
	if cs.CapacityType != models.Reserved {
		return nil
	}
	if cs.OnDemandPricePerHour != nil {
		return s.errAt(at+".onDemandPricePerHour", "is for spot pools")
	}
	return nil
}

// reservedPool refuses autoscaling on a reserved pool: a reservation is a
// fixed count of nodes, paid for whether launched or not.
func (s builder) reservedPool(at string, p *PoolSpec) error {
	if p.CapacityType == models.Reserved && p.Autoscaling != nil {
		return s.errAt(at+".autoscaling", "a reserved pool is a capacity reservation of count nodes, held and paid for the whole run; it does not scale")
	}
	return nil
}

// quoteReserved prices a reserved pool's node with no pricePerHour: at
// the catalog's on-demand price, as an on-demand capacity reservation
// bills.
func (s builder) quoteReserved(at string, cat *models.PriceCatalog, instanceType, region string, cs *CapacitySpec) (float64, string, spotEstimate, error) {
	q, err := cat.Quote(instanceType, region, cs.Zone, models.OnDemand)
	if err != nil {
		if _, known := cat.Instance(instanceType); !known {
			// As an on-demand pool of a type the catalog lacks.
			return 0, fmt.Sprintf("no price (%s is not in the catalog)", instanceType), spotEstimate{}, nil
		}
		return 0, "", spotEstimate{}, s.errAt(at, "%v; give pricePerHour (a capacity block's price) or another region or zone", err)
	}
	return q.PerHour, fmt.Sprintf("capacity reservation at the on-demand price (%s)", q.Basis), spotEstimate{}, nil
}
