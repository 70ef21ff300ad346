package models

import (
	"errors"
	"fmt"
	"math"
)

// Kinds of commitment: ways to buy compute ahead at a discount, paid
// whether used or not.
const (
	// CommitSpend is a spend commitment: AWS Savings Plans, GCP's
	// spend-based committed-use discounts, Azure savings plans. The buyer
	// commits to Hourly dollars an hour at the discounted rates; each
	// hour eligible usage is charged at (1 - Discount) x its on-demand
	// price against the commitment, what exceeds it at on-demand, and
	// what the usage does not reach is still paid.
	CommitSpend = "spend"
	// CommitInstances is a commitment to a number of instances of a type:
	// AWS Reserved Instances, GCP resource-based committed use, Azure
	// reservations. Each hour up to Count matching instance-hours are
	// covered at PerHour each, the rest at on-demand, and the instances
	// not used are still paid.
	CommitInstances = "instances"
)

// A Commitment is a discount bought ahead, for a term.
type Commitment struct {
	Name string
	Kind string
	// Hourly is a spend commitment's dollars an hour (at the discounted
	// rates), upfront part included.
	Hourly float64
	// Discount is the spend commitment's share off on-demand.
	Discount float64
	// Count and PerHour are an instance commitment's instances and the
	// effective price of one instance-hour, upfront part included.
	Count   float64
	PerHour float64
	// TermHours is the term (8,760 a year); Upfront the share of the
	// whole term's commitment paid at purchase (0, 0.5, 1: no, partial,
	// all upfront). Neither changes the amortised bill.
	TermHours float64
	Upfront   float64
}

// UpfrontPayment is what the commitment costs at purchase.
func (c Commitment) UpfrontPayment() float64 {
	return c.Upfront * c.HourlyCost() * c.TermHours
}

// HourlyCost is what the commitment costs an hour, used or not.
func (c Commitment) HourlyCost() float64 {
	if c.Kind == CommitInstances {
		return c.Count * c.PerHour
	}
	return c.Hourly
}

// Validate checks a commitment's figures.
func (c Commitment) Validate() error {
	bad := func(x float64) bool { return !(x >= 0) || math.IsInf(x, 0) }
	switch c.Kind {
	case CommitSpend:
		if bad(c.Hourly) || c.Hourly == 0 {
			return errors.New("a spend commitment needs a positive hourly commitment")
		}
		if !(c.Discount > 0 && c.Discount < 1) {
			return fmt.Errorf("discount %g is not a share from 0 to 1", c.Discount)
		}
	case CommitInstances:
		if bad(c.Count) || c.Count == 0 || c.Count != math.Trunc(c.Count) {
			return errors.New("an instance commitment needs a whole positive count")
		}
		if bad(c.PerHour) {
			return errors.New("an instance commitment needs an hourly price from 0")
		}
	default:
		return fmt.Errorf("kind %q is not %s or %s", c.Kind, CommitSpend, CommitInstances)
	}
	if bad(c.TermHours) || c.TermHours == 0 {
		return errors.New("a commitment needs a positive term")
	}
	if !(c.Upfront >= 0 && c.Upfront <= 1) {
		return fmt.Errorf("upfront %g is not a share from 0 to 1", c.Upfront)
	}
	return nil
}

// A CommitmentUse is what one commitment did over a stretch of hours.
type CommitmentUse struct {
	// Cost is what it cost (HourlyCost x hours); Used the part applied to
	// usage and Unused the rest, paid for nothing.
	Cost, Used, Unused float64
	// CoveredOnDemand is the on-demand price of the usage it covered:
	// what that usage would have cost without it.
	CoveredOnDemand float64
}

// ApplyCommitments applies commitments to one stretch of usage hours
// long: usage[k] is the instance-hours of eligible instance group k
// (instances of one type, bought on demand) in the stretch and
// onDemand[k] an instance-hour's on-demand price; eligible[c][k] says
// whether commitment c may cover group k. Instance commitments are
// applied first, in order, then spend commitments in order (as AWS
// applies Reserved Instances before Savings Plans); within a commitment
// the groups in order. It returns each commitment's use and the on-demand
// cost of the usage left uncovered.
func ApplyCommitments(cs []Commitment, eligible [][]bool, usage, onDemand []float64, hours float64) (uses []CommitmentUse, uncovered float64) {
	left := append([]float64(nil), usage...)
	uses = make([]CommitmentUse, len(cs))
	for pass := 0; pass < 2; pass++ {
		for c := range cs {
			cm := &cs[c]
			if (pass == 0) != (cm.Kind == CommitInstances) {
				continue
			}
			u := &uses[c]
			u.Cost = cm.HourlyCost() * hours
			if cm.Kind == CommitInstances {
				room := cm.Count * hours // instance-hours
				for k := range left {
					if !eligible[c][k] || room <= 0 {
						continue
					}
					take := math.Min(room, left[k])
					left[k] -= take
					room -= take
					u.Used += take * cm.PerHour
					u.CoveredOnDemand += take * onDemand[k]
				}
			} else {
				room := u.Cost // dollars at the discounted rate
				for k := range left {
					rate := onDemand[k] * (1 - cm.Discount)
					if !eligible[c][k] || room <= 0 || rate <= 0 {
						continue
					}
					take := math.Min(left[k], room/rate)
					left[k] -= take
					room -= take * rate
					u.Used += take * rate
					u.CoveredOnDemand += take * onDemand[k]
				}
			}
			u.Unused = u.Cost - u.Used
		}
	}
	for k := range left {
		uncovered += left[k] * onDemand[k]
	}
	return uses, uncovered
}

// Reserved is the capacity type of nodes held in a capacity reservation
// or capacity block: paid for whether used or not, never interrupted.
const Reserved = "reserved"
