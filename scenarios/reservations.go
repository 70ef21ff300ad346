package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"gpuplan.dev/gpuplan/models"
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
	// TagReservationWindowStart and TagReservationWindowEnd are a capacity
	// block's window, times from the run's start (a Go duration: 2h0m0s):
	// EC2 holds a block's start and end, no Kubernetes field does.
	TagReservationWindowStart = "gpuplan.dev/window-start"
	TagReservationWindowEnd   = "gpuplan.dev/window-end"
)

// PoolReservationTags are the tags of the selector term for a fixed
// reserved pool's capacity reservation (a capacity block with its window
// when it has one): its static NodePool's EC2NodeClass selects it.
func PoolReservationTags(p PoolSpec) map[string]string {
	t := ReservationTags(p.Name, NodePoolReservation{InstanceType: p.InstanceType, Count: p.Count, PricePerHour: p.PricePerHour})
	if w := p.Window; w != nil {
		t[TagReservationWindowStart] = w.Start.Duration.String()
		t[TagReservationWindowEnd] = w.End.Duration.String()
	}
	return t
}

// classReservation is a reservation an EC2NodeClass's term carries, with
// a capacity block's window when the term gives one.
type classReservation struct {
	NodePoolReservation
	window *WindowSpec
}

// staticReserved is a static NodePool of reserved capacity, given its
// reservation from its EC2NodeClass once every document is read.
type staticReserved struct {
	d     policyDoc
	pool  int // in StaticPools
	class string
	// block is true when its requirements ask for capacity-block
	// reservations (karpenter.k8s.aws/capacity-reservation-type).
	block bool
}

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
		r := classReservation{NodePoolReservation: NodePoolReservation{InstanceType: it}}
		cs, _ := tg[TagReservationCount].(string)
		n, err := strconv.Atoi(cs)
		if err != nil || n < 1 || n > maxReservationCount {
			return d.fieldErr(fmt.Sprintf("%s.tags[%q]", at, TagReservationCount), "EC2NodeClass %s: %s is not a count of instances from 1 to %d", class, Quote(cs), maxReservationCount)
		}
		r.Count = n
		if ps, ok := tg[TagReservationPrice].(string); ok {
			v, err := strconv.ParseFloat(ps, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return d.fieldErr(fmt.Sprintf("%s.tags[%q]", at, TagReservationPrice), "EC2NodeClass %s: %s is not a price", class, Quote(ps))
			}
			r.PricePerHour = &v
		}
		ws, hasStart := tg[TagReservationWindowStart].(string)
		we, hasEnd := tg[TagReservationWindowEnd].(string)
		switch {
		case hasStart != hasEnd:
			return d.fieldErr(at+".tags", "EC2NodeClass %s: a capacity block's window needs both %s and %s", class, TagReservationWindowStart, TagReservationWindowEnd)
		case hasStart:
			start, err := time.ParseDuration(ws)
			if err != nil || start < 0 {
				return d.fieldErr(fmt.Sprintf("%s.tags[%q]", at, TagReservationWindowStart), "EC2NodeClass %s: %s is not a time from the run's start (a duration: 2h0m0s)", class, Quote(ws))
			}
			end, err := time.ParseDuration(we)
			if err != nil || end <= start {
				return d.fieldErr(fmt.Sprintf("%s.tags[%q]", at, TagReservationWindowEnd), "EC2NodeClass %s: %s is not a time after the window's start %s", class, Quote(we), start)
			}
			r.window = &WindowSpec{Start: Duration{Duration: start}, End: Duration{Duration: end}}
		}
		if p.classReservations == nil {
			p.classReservations = map[string][]classReservation{}
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
		np.Reservations = nil
		for _, r := range rs {
			np.Reservations = append(np.Reservations, r.NodePoolReservation)
			if r.window != nil {
				p.Notes = append(p.Notes, fmt.Sprintf("NodePool %s: its EC2NodeClass %s selects a capacity block (window %s to %s): a NodePool that scales launches into it as into a reservation held the whole run; a static NodePool (spec.replicas) keeps the window", np.Name, p.npClass[i], r.window.Start.Duration, r.window.End.Duration))
			}
		}
		var cts []string
		for _, v := range p.npReserved[i] {
			if (v == models.Reserved || slices.Contains(np.CapacityTypes, v)) && !slices.Contains(cts, v) {
				cts = append(cts, v)
			}
		}
		np.CapacityTypes = cts
	}
}

// giveBlocks gives each static NodePool of reserved capacity the
// reservation its EC2NodeClass selects: one term with gpuplan's tags, of
// the pool's instance type, as many instances as replicas; its price, and
// a capacity block's window.
func (p *Policy) giveBlocks() error {
	for _, sr := range p.staticReserved {
		pool := &p.StaticPools[sr.pool]
		ref := "spec.template.spec.nodeClassRef"
		rs := p.classReservations[sr.class]
		if len(rs) != 1 {
			return sr.d.fieldErr(ref, "NodePool %s: a static NodePool of reserved capacity needs its EC2NodeClass %s to select one capacity reservation with gpuplan's tags (%s, %s; what gpuplan manifests writes), found %d", pool.Name, Quote(sr.class), TagReservationInstanceType, TagReservationCount, len(rs))
		}
		r := rs[0]
		if r.InstanceType != pool.InstanceType {
			return sr.d.fieldErr(ref, "NodePool %s: its reservation (EC2NodeClass %s) is of %s, the NodePool's nodes are %s", pool.Name, sr.class, r.InstanceType, pool.InstanceType)
		}
		if r.Count != pool.Count {
			return sr.d.fieldErr("spec.replicas", "NodePool %s: replicas %d, but its reservation (EC2NodeClass %s) holds %d instances; a reserved pool is all of its reservation", pool.Name, pool.Count, sr.class, r.Count)
		}
		if sr.block && r.window == nil {
			return sr.d.fieldErr(ref, "NodePool %s: its requirements ask for a capacity block, but its reservation (EC2NodeClass %s) gives no window (tags %s and %s)", pool.Name, sr.class, TagReservationWindowStart, TagReservationWindowEnd)
		}
		pool.PricePerHour, pool.Window = r.PricePerHour, r.window
	}
	return nil
}
