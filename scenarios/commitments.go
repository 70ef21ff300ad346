package scenarios

import (
	"fmt"
	"math"
	"slices"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// CommitmentSpec is a discount bought ahead for a term, read against the
// run's on-demand usage (spec.pricing.commitments): kind savingsPlan or
// committedUse (a spend commitment: hourly dollars at the discounted
// rates, discount the share off on-demand) or reserved (reserved
// instances: count instances of instanceType at pricePerHour each, or at
// discount off its on-demand price). What is not used is still paid.
type CommitmentSpec struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Hourly is a spend commitment's dollars an hour.
	Hourly *float64 `json:"hourly,omitempty"`
	// Discount is the share off on-demand.
	Discount *float64 `json:"discount,omitempty"`
	// InstanceType, Count and PricePerHour are reserved instances'.
	InstanceType string   `json:"instanceType,omitempty"`
	Count        int      `json:"count,omitempty"`
	PricePerHour *float64 `json:"pricePerHour,omitempty"`
	// Term is 1y or 3y (default 1y: 8,760 h a year); Upfront none,
	// partial or all (default none): what is paid at purchase, which does
	// not change the amortised bill.
	Term    *Duration `json:"term,omitempty"`
	Upfront string    `json:"upfront,omitempty"`
	// Pools limits the commitment to these pools or NodePools (default:
	// every on-demand pool, of its instance type for reserved).
	Pools []string `json:"pools,omitempty"`
}

// CommitmentAdviceSpec asks for a spend commitment's recommendation at a
// discount (a Savings Plan's or committed-use discount's share off
// on-demand).
type CommitmentAdviceSpec struct {
	Discount float64 `json:"discount"`
}

// commitmentAdvice is the discount the advice is asked at (0: none).
func (s pricer) commitmentAdvice() (float64, error) {
	a := s.Spec.Pricing.CommitmentAdvice
	if a == nil {
		return 0, nil
	}
	if !(a.Discount > 0 && a.Discount < 1) {
		return 0, s.errAt("spec.pricing.commitmentAdvice.discount", "%g is not a share between 0 and 1", a.Discount)
	}
	return a.Discount, nil
}

// Commitment kinds in the schema.
const (
	KindSavingsPlan  = "savingsPlan"
	KindCommittedUse = "committedUse"
	KindReserved     = "reserved"
	maxCommitments   = 64
	hoursPerYear     = 8760
)

// commitments builds spec.pricing.commitments against the run's pools
// (prices index for index).
func (s pricer) commitments(pools []cluster.PoolSpec, prices []PoolPrice) ([]reports.PricedCommitment, error) {
	cs := s.Spec.Pricing.Commitments
	if len(cs) > maxCommitments {
		return nil, s.errAt("spec.pricing.commitments", "has %d commitments; at most %d", len(cs), maxCommitments)
	}
	var out []reports.PricedCommitment
	names := map[string]bool{}
	for i := range cs {
		c := &cs[i]
		at := fmt.Sprintf("spec.pricing.commitments[%d]", i)
		if c.Name == "" {
			return nil, s.errAt(at+".name", "a commitment needs a name")
		}
		if names[c.Name] {
			return nil, s.errAt(at+".name", "%q is given twice", c.Name)
		}
		names[c.Name] = true
		pc := reports.PricedCommitment{Commitment: models.Commitment{Name: c.Name, TermHours: hoursPerYear}}
		if c.Term != nil {
			switch c.Term.Duration {
			case hoursPerYear * time.Hour:
			case 3 * hoursPerYear * time.Hour:
			default:
				return nil, s.errAt(at+".term", "is %s; a commitment's term is 1y (8760h) or 3y (26280h)", c.Term.Duration)
			}
			pc.TermHours = c.Term.Hours()
		}
		switch c.Upfront {
		case "", "none":
		case "partial":
			pc.Upfront = 0.5
		case "all":
			pc.Upfront = 1
		default:
			return nil, s.errAt(at+".upfront", "is %q; want none, partial or all", c.Upfront)
		}
		share := func(field string, v *float64) (float64, error) {
			if v == nil {
				return 0, s.errAt(at, "%s needs %s", c.Kind, field)
			}
			if !(*v > 0 && *v < 1) {
				return 0, s.errAt(at+"."+field, "%g is not a share between 0 and 1", *v)
			}
			return *v, nil
		}
		var err error
		switch c.Kind {
		case KindSavingsPlan, KindCommittedUse:
			if c.InstanceType != "" || c.Count != 0 || c.PricePerHour != nil {
				return nil, s.errAt(at, "%s is a spend commitment (hourly, discount); instanceType, count and pricePerHour are reserved instances'", c.Kind)
			}
			pc.Kind = models.CommitSpend
			if c.Hourly == nil || !(*c.Hourly > 0) || math.IsInf(*c.Hourly, 0) || *c.Hourly > 1e7 {
				return nil, s.errAt(at+".hourly", "a spend commitment needs hourly dollars from above 0 to 10,000,000")
			}
			pc.Hourly = *c.Hourly
			if pc.Discount, err = share("discount", c.Discount); err != nil {
				return nil, err
			}
		case KindReserved:
			if c.Hourly != nil {
				return nil, s.errAt(at+".hourly", "reserved instances are a count at a price; hourly is a spend commitment's")
			}
			pc.Kind = models.CommitInstances
			if c.InstanceType == "" {
				return nil, s.errAt(at, "reserved needs instanceType")
			}
			if c.Count < 1 || c.Count > 100000 {
				return nil, s.errAt(at+".count", "is %d; reserved instances are 1 to 100,000", c.Count)
			}
			pc.Count = float64(c.Count)
			switch {
			case c.PricePerHour != nil && c.Discount != nil:
				return nil, s.errAt(at, "give pricePerHour or discount, not both")
			case c.PricePerHour != nil:
				if !(*c.PricePerHour >= 0) || *c.PricePerHour > 1e6 {
					return nil, s.errAt(at+".pricePerHour", "%g is not from 0 to 1,000,000 dollars", *c.PricePerHour)
				}
				pc.PerHour = *c.PricePerHour
			default:
				d, err := share("discount", c.Discount)
				if err != nil {
					return nil, err
				}
				od := 0.0
				for k, p := range pools {
					if p.InstanceType == c.InstanceType && prices[k].CapacityType == models.OnDemand && prices[k].PerHour > 0 {
						od = prices[k].PerHour
						break
					}
				}
				if od == 0 {
					return nil, s.errAt(at+".instanceType", "no on-demand pool of %q has a price to take the discount off; give pricePerHour", c.InstanceType)
				}
				pc.PerHour = od * (1 - d)
			}
		default:
			return nil, s.errAt(at+".kind", "is %q; want %s, %s or %s", c.Kind, KindSavingsPlan, KindCommittedUse, KindReserved)
		}
		if err := pc.Validate(); err != nil {
			return nil, s.errAt(at, "%v", err)
		}
		for k, p := range pools {
			ct := prices[k].CapacityType
			if ct != models.OnDemand && ct != "" {
				continue
			}
			if c.InstanceType != "" && p.InstanceType != c.InstanceType {
				continue
			}
			if len(c.Pools) > 0 && !slices.Contains(c.Pools, p.Name) && !slices.Contains(c.Pools, prices[k].Group) {
				continue
			}
			pc.Pools = append(pc.Pools, k)
		}
		for j, name := range c.Pools {
			found := false
			for k, p := range pools {
				if p.Name == name || prices[k].Group == name {
					found = true
				}
			}
			if !found {
				return nil, s.errAt(fmt.Sprintf("%s.pools[%d]", at, j), "%q is not a pool or NodePool of the cluster", name)
			}
		}
		out = append(out, pc)
	}
	return out, nil
}
