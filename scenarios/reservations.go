package scenarios

import (
	"slices"

	"fmt"
	"gpuplan.dev/gpuplan/models"
	"math"
	"strconv"
)

// The tags of a capacityReservationSelectorTerm that gpuplan manifests
// writes for a NodePool's capacity reservation, and reads back: an
// EC2NodeClass selects the reservations that carry them (tag the
// reservation so, or replace the term by its id). The instance type, the
// count and the price are the reservation's in EC2; the tags carry them
// so that the manifests read back to the same NodePool.
const (
	TagReservationNodePool     = "gpuplan.dev/nodepool"
	TagReservationInstanceType = "gpuplan.dev/instance-type"
	TagReservationCount        = "gpuplan.dev/count"
	TagReservationPrice        = "gpuplan.dev/price-per-hour"
)

// ReservationTags are the tags of the selector term for reservation r of
// NodePool nodePool.
func ReservationTags(nodePool string, r NodePoolReservation) map[string]string {
	t := map[string]string{TagReservationNodePool: nodePool, TagReservationInstanceType: r.InstanceType, TagReservationCount: strconv.Itoa(r.Count)}
	if r.PricePerHour != nil {
		t[TagReservationPrice] = strconv.FormatFloat(*r.PricePerHour, 'g', -1, 64)
	}
	return t
}

// maxReservationCount bounds a reservation's count read from a tag.
const maxReservationCount = 10_000

// reservationTerms reads an EC2NodeClass's capacityReservationSelectorTerms:
// a term with gpuplan's tags is a reservation of its NodePools; any other
// (an id, other tags) selects reservations whose type and count are in
// EC2, not in the manifest, and is noted.
func (p *Policy) reservationTerms(d policyDoc, class string, terms []any) error {
	for i, t := range terms {
		at := fmt.Sprintf("spec.capacityReservationSelectorTerms[%d]", i)
		m, _ := t.(map[string]any)
		tg, _ := m["tags"].(map[string]any)
		it, _ := tg[TagReservationInstanceType].(string)
		if it == "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %s selects capacity reservations in EC2 (by id or tags): their instance types and counts are not in the manifest, so its NodePools launch into none; give them as nodePools[].reservations", d.where(class), at))
			continue
		}
		r := NodePoolReservation{InstanceType: it}
		cs, _ := tg[TagReservationCount].(string)
		n, err := strconv.Atoi(cs)
		if err != nil || n < 1 || n > maxReservationCount {
			return d.fieldErr(at+".tags."+TagReservationCount, "EC2NodeClass %s: %s is not a count of instances from 1 to %d", class, Quote(cs), maxReservationCount)
		}
		r.Count = n
		if ps, ok := tg[TagReservationPrice].(string); ok {
			v, err := strconv.ParseFloat(ps, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return d.fieldErr(at+".tags."+TagReservationPrice, "EC2NodeClass %s: %s is not a price", class, Quote(ps))
			}
			r.PricePerHour = &v
		}
		if p.classReservations == nil {
			p.classReservations = map[string][]NodePoolReservation{}
		}
		p.classReservations[class] = append(p.classReservations[class], r)
	}
	return nil
}

// giveReservations gives each NodePool whose requirements allow the
// reserved capacity type the reservations its EC2NodeClass selects, and
// reserved back among its capacity types where the requirement listed it.
func (p *Policy) giveReservations() {
	for i := range p.NodePools {
		if i >= len(p.npClass) || len(p.npReserved[i]) == 0 {
			continue
		}
		rs := p.classReservations[p.npClass[i]]
		if len(rs) == 0 {
			continue
		}
		np := &p.NodePools[i]
		np.Reservations = append([]NodePoolReservation(nil), rs...)
		var cts []string
		for _, v := range p.npReserved[i] {
			if (v == models.Reserved || slices.Contains(np.CapacityTypes, v)) && !slices.Contains(cts, v) {
				cts = append(cts, v)
			}
		}
		np.CapacityTypes = cts
	}
}
