package scenarios

import (
	"fmt"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// A pool of capacityType reserved is a capacity reservation or capacity
// block: its nodes are held for the whole run (a capacity block with a
// window: for the window) and paid for whether used or not, at pricePerHour (a capacity block's price) or else at the
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
// fixed count of nodes, paid for whether launched or not. A window makes
// it a capacity block (capacity.Window): its nodes from start to end, paid
// for the whole window.
func (s builder) reservedPool(at string, p *PoolSpec) (capacity.Window, error) {
	if p.CapacityType == models.Reserved && p.Autoscaling != nil {
		return capacity.Window{}, s.errAt(at+".autoscaling", "a reserved pool is a capacity reservation of count nodes, held and paid for the whole run; it does not scale")
	}
	w := p.Window
	if w == nil {
		return capacity.Window{}, nil
	}
	switch {
	case p.CapacityType != models.Reserved:
		return capacity.Window{}, s.errAt(at+".window", "a window is a capacity block's: set capacityType: reserved")
	case w.Start.Duration < 0:
		return capacity.Window{}, s.errAt(at+".window.start", "must not be negative")
	case w.End.Duration-w.Start.Duration < time.Hour:
		return capacity.Window{}, s.errAt(at+".window.end", "is %s, less than an hour after the start (%s); EC2 sells capacity blocks by the day", w.End.Duration, w.Start.Duration)
	case w.End.Millis() > maxDurationMs:
		return capacity.Window{}, s.errAt(at+".window.end", "%s is past 100 years", w.End.Duration)
	}
	return capacity.Window{Start: w.Start.Millis(), End: w.End.Millis()}, nil
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
