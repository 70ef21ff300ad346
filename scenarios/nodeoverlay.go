package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	karpv1alpha1 "sigs.k8s.io/karpenter/pkg/apis/v1alpha1"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/catalog/karpenter"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Karpenter's NodeOverlay (karpenter.sh/v1alpha1) adjusts the price of
// the instance-type offerings its requirements select, as Karpenter's
// nodeoverlay controller does (sigs.k8s.io/karpenter pkg/controllers/
// nodeoverlay, cloudprovider.AdjustedPrice): overlays are taken by
// weight, highest first (equal weights by name, as its OrderByWeight
// sorts them), and the first whose requirements an offering meets sets
// its price: `price` replaces it, `priceAdjustment` changes it by a
// signed amount ("-0.5") or percentage ("+10%", "-15%"), never below 0.
// Karpenter then launches the cheapest offering at the adjusted prices,
// and the bill is at them too (an overlay says what a node costs the
// user: a negotiated discount, a licence on top).
//
// `capacity` adds extended resources to the instance types an overlay
// selects (any of the type's offerings in the NodePool: all or nothing,
// as getOverlaidOfferings), as its InstanceTypeStore merges them: in
// weight order each resource is set by the first overlay that gives it,
// later ones adding only resources not yet set (ApplyCapacityOverlay then
// sets them on the type, replacing the catalog's). An overlay that sets a
// price on an offering, or a resource on a type, that an overlay of the
// same weight set last conflicts: Karpenter applies none of it, anywhere,
// and marks it ValidationSucceeded=False ("conflict with another
// overlay"); gpuplan does the same and notes it. Of the resources,
// nvidia.com/gpu is modelled: the type's nodes have that many GPUs (a
// g6f's fractional L4, which EC2 lists with none, is how Karpenter learns
// it can take a GPU pod); others are noted, as gpuplan's pods and nodes
// carry CPU, memory and GPUs only.

// nodeOverlay is one NodeOverlay read from the policy.
type nodeOverlay struct {
	name   string
	where  string // file:line
	weight int32
	reqs   []karpenter.Requirement
	n      []int64 // each requirement's integer (karpenter.Check)
	change string  // price or priceAdjustment as written
	// capacity is spec.capacity: the extended resources it adds.
	capacity corev1.ResourceList
}

// restrictedCapacity are the resources spec.capacity may not set (the
// CRD's rule, Karpenter's WellKnownResources).
var restrictedCapacity = []string{"cpu", "memory", "ephemeral-storage", "pods"}

// The CRD's patterns for the two price fields (karpenter.sh_nodeoverlays).
var (
	overlayAdjustment = regexp.MustCompile(`^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$`)
	overlayPrice      = regexp.MustCompile(`^\d+(\.\d+)?$`)
)

// nodeOverlay reads a NodeOverlay strictly, its capacity refused where the
// CRD refuses it (a standard resource) or no node could have it (negative,
// a fraction of a GPU).
func (p *Policy) nodeOverlay(d policyDoc) error {
	var o karpv1alpha1.NodeOverlay
	if err := d.strict(&o); err != nil {
		return err
	}
	if o.Name == "" {
		return d.fieldErr("metadata.name", "a NodeOverlay needs a name")
	}
	s := o.Spec
	if s.Price != nil && s.PriceAdjustment != nil {
		return d.fieldErr("spec", "cannot set both 'price' and 'priceAdjustment' (the NodeOverlay CRD's rule)")
	}
	ov := nodeOverlay{name: o.Name, where: fmt.Sprintf("%s:%d", d.file, d.line)}
	if s.Weight != nil {
		if *s.Weight < 1 || *s.Weight > 10000 {
			return d.fieldErr("spec.weight", "%d is outside 1..10000 (the CRD's bounds)", *s.Weight)
		}
		ov.weight = *s.Weight
	}
	switch {
	case s.Price != nil:
		if !overlayPrice.MatchString(*s.Price) {
			return d.fieldErr("spec.price", "%s is not a price (the CRD's pattern: digits with an optional fraction, USD an hour)", Quote(*s.Price))
		}
		ov.change = *s.Price
	case s.PriceAdjustment != nil:
		if !overlayAdjustment.MatchString(*s.PriceAdjustment) {
			return d.fieldErr("spec.priceAdjustment", "%s is not a price adjustment (the CRD's pattern: a signed amount such as -0.5, or a percentage from -100%% to +N%%, such as -15%% or +10%%)", Quote(*s.PriceAdjustment))
		}
		ov.change = *s.PriceAdjustment
	}
	for i, r := range s.Requirements {
		kr := karpenter.Requirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values}
		n, err := karpenter.Check(i, kr)
		if err != nil {
			return d.fieldErr(fmt.Sprintf("spec.requirements[%d]", i), "%s", err.(*karpenter.Error).Msg)
		}
		ov.reqs, ov.n = append(ov.reqs, kr), append(ov.n, n)
	}
	names := make([]string, 0, len(s.Capacity))
	for n := range s.Capacity {
		names = append(names, string(n))
	}
	slices.Sort(names)
	for _, n := range names {
		q := s.Capacity[corev1.ResourceName(n)]
		at := "spec.capacity." + n
		switch {
		case slices.Contains(restrictedCapacity, n):
			return d.fieldErr(at, "%s is restricted: capacity adds extended resources only, not %s (the CRD's rule)", n, strings.Join(restrictedCapacity, ", "))
		case q.Sign() < 0:
			return d.fieldErr(at, "%s: a node's capacity cannot be negative", Quote(q.String()))
		case n == gpuResource && (q.MilliValue()%1000 != 0 || q.Value() > 64):
			return d.fieldErr(at, "%s: nvidia.com/gpu is a whole number of devices, 0 to 64 a node", Quote(q.String()))
		}
	}
	if len(s.Capacity) > 0 {
		ov.capacity = s.Capacity
	}
	if ov.change == "" && ov.capacity == nil {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: NodeOverlay %s changes neither a price nor a capacity", ov.where, o.Name))
		return nil
	}
	p.overlays = append(p.overlays, ov)
	slices.SortStableFunc(p.overlays, func(a, b nodeOverlay) int {
		if a.weight != b.weight {
			return int(b.weight) - int(a.weight)
		}
		return strings.Compare(b.name, a.name)
	})
	return nil
}

// selects reports whether the overlay's requirements hold for an offering
// with the given labels (the instance type's well-known labels, the
// NodePool's and its template's, capacity type and zone), as a NodePool's
// requirements are applied to Karpenter's catalog.
func (o *nodeOverlay) selects(labels map[string]string) bool {
	for i, r := range o.reqs {
		if !r.Holds(labels, o.n[i]) {
			return false
		}
	}
	return true
}

// adjustedPrice is price after the change an overlay gives, as Karpenter's
// cloudprovider.AdjustedPrice computes it.
func adjustedPrice(price float64, change string) float64 {
	if !strings.HasPrefix(change, "+") && !strings.HasPrefix(change, "-") {
		v, _ := strconv.ParseFloat(change, 64)
		return v
	}
	var out float64
	if pct, ok := strings.CutSuffix(change, "%"); ok {
		v, _ := strconv.ParseFloat(pct, 64)
		out = price * (1 + v/100)
	} else {
		v, _ := strconv.ParseFloat(change, 64)
		out = price + v
	}
	return math.Max(out, 0)
}

// NodeOverlays are the Karpenter NodeOverlays that priced the scenario's
// NodePools, as objects to write back (highest weight first).
func (s *Scenario) NodeOverlays() []karpv1alpha1.NodeOverlay {
	var out []karpv1alpha1.NodeOverlay
	seen := map[string]bool{}
	for _, np := range s.Spec.Cluster.NodePools {
		for _, o := range np.overlays {
			if seen[o.name] {
				continue
			}
			seen[o.name] = true
			ov := karpv1alpha1.NodeOverlay{}
			ov.APIVersion, ov.Kind, ov.Name = "karpenter.sh/v1alpha1", "NodeOverlay", o.name
			if o.weight != 0 {
				ov.Spec.Weight = new(o.weight)
			}
			for _, r := range o.reqs {
				ov.Spec.Requirements = append(ov.Spec.Requirements, karpv1alpha1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values})
			}
			change := o.change
			switch {
			case change == "":
			case strings.HasPrefix(change, "+") || strings.HasPrefix(change, "-"):
				ov.Spec.PriceAdjustment = &change
			default:
				ov.Spec.Price = &change
			}
			ov.Spec.Capacity = o.capacity
			out = append(out, ov)
		}
	}
	return out
}

// gpuResource is the extended resource of whole NVIDIA GPUs.
const gpuResource = "nvidia.com/gpu"

// overlayTarget is one instance type of one NodePool as the overlays see
// it: the labels of its offerings, one set per capacity type.
type overlayTarget struct {
	pool, instanceType string
	offerings          []map[string]string
	cts                []string
}

// priceUpdate and capacityUpdate are Karpenter's store entries: the
// overlay that set an offering's price, and the weight of the last overlay
// that selected it; the resources set on a type, the weight of the last
// overlay that added to them and the resources that one gave.
type priceUpdate struct {
	by     *nodeOverlay
	weight int32
}

type capacityUpdate struct {
	set       corev1.ResourceList
	from      map[string]string // each resource's overlay
	weight    int32
	lastGiven corev1.ResourceList
}

// overlayStore is what the NodeOverlays did to a scenario's NodePools:
// each offering's price overlay (by NodePool, type and capacity type) and
// each type's added resources, Karpenter's way; and the notes to show.
type overlayStore struct {
	price    map[string]*priceUpdate    // pool/type/ct
	capacity map[string]*capacityUpdate // pool/type
	notes    []string
}

// resolveOverlays applies overlays (highest weight first, as
// OrderByWeight) to the targets as Karpenter's nodeoverlay controller
// does: an overlay selecting none of a type's offerings passes it by; one
// that conflicts with the store on any type (a price on an offering, or a
// resource on a type, that the last overlay there of the same weight set)
// is applied nowhere; else every offering it selects takes its price
// unless one is set (the weight of the last overlay there updated either
// way), and every type it selects takes the resources it gives that are
// not set yet.
func resolveOverlays(overlays []nodeOverlay, targets []overlayTarget) *overlayStore {
	st := &overlayStore{price: map[string]*priceUpdate{}, capacity: map[string]*capacityUpdate{}}
	for i := range overlays {
		o := &overlays[i]
		type hit struct {
			t   *overlayTarget
			cts []string
		}
		var hits []hit
		for k := range targets {
			t := &targets[k]
			var cts []string
			for j, l := range t.offerings {
				if o.selects(l) {
					cts = append(cts, t.cts[j])
				}
			}
			if len(cts) > 0 {
				hits = append(hits, hit{t, cts})
			}
		}
		conflict := ""
		for _, h := range hits {
			key := h.t.pool + "/" + h.t.instanceType
			if o.change != "" {
				for _, ct := range h.cts {
					if u := st.price[key+"/"+ct]; u != nil && u.weight == o.weight {
						conflict = fmt.Sprintf("the price of %s (%s) was set at the same weight %d by NodeOverlay %s", h.t.instanceType, ct, o.weight, u.by.name)
					}
				}
			}
			if u := st.capacity[key]; conflict == "" && o.capacity != nil && u != nil && u.weight == o.weight {
				for r := range o.capacity {
					if _, ok := u.lastGiven[r]; ok {
						conflict = fmt.Sprintf("%s on %s was set at the same weight %d by NodeOverlay %s", r, h.t.instanceType, o.weight, u.from[string(r)])
						break
					}
				}
			}
			if conflict != "" {
				break
			}
		}
		if conflict != "" {
			st.notes = append(st.notes, fmt.Sprintf("%s: NodeOverlay %s conflicts with another overlay (%s): Karpenter applies none of it and marks it ValidationSucceeded=False; so does gpuplan", o.where, o.name, conflict))
			continue
		}
		for _, h := range hits {
			key := h.t.pool + "/" + h.t.instanceType
			if o.change != "" {
				for _, ct := range h.cts {
					if u := st.price[key+"/"+ct]; u != nil {
						u.weight = o.weight
					} else {
						st.price[key+"/"+ct] = &priceUpdate{by: o, weight: o.weight}
					}
				}
			}
			if o.capacity == nil {
				continue
			}
			u := st.capacity[key]
			if u == nil {
				u = &capacityUpdate{set: corev1.ResourceList{}, from: map[string]string{}}
				st.capacity[key] = u
			}
			for r, q := range o.capacity {
				if _, ok := u.set[r]; !ok {
					u.set[r], u.from[string(r)] = q, o.name
				}
			}
			u.weight, u.lastGiven = o.weight, o.capacity
		}
	}
	return st
}

// priceOf is an offering's price after its overlay, and what the basis
// says of it; ok is false when no overlay prices it.
func (st *overlayStore) priceOf(pool, instanceType, ct string, price float64) (float64, string, bool) {
	u := st.price[pool+"/"+instanceType+"/"+ct]
	if u == nil {
		return price, "", false
	}
	o := u.by
	return adjustedPrice(price, o.change), fmt.Sprintf("NodeOverlay %s (%s) %s: $%.4f an hour before", o.name, o.where, o.change, price), true
}

// capacityOf is the resources the overlays add to a NodePool's type, and
// which overlay set each.
func (st *overlayStore) capacityOf(pool, instanceType string) (corev1.ResourceList, map[string]string) {
	u := st.capacity[pool+"/"+instanceType]
	if u == nil {
		return nil, nil
	}
	return u.set, u.from
}

// overlays resolves the policy's NodeOverlays over the scenario's
// NodePools (every NodePool reads the same overlays).
func (s builder) overlays() *overlayStore {
	var ovs []nodeOverlay
	var targets []overlayTarget
	for ni := range s.Spec.Cluster.NodePools {
		np := &s.Spec.Cluster.NodePools[ni]
		if len(np.overlays) == 0 {
			continue
		}
		ovs = np.overlays
		cts := np.CapacityTypes
		if len(cts) == 0 {
			cts = []string{models.OnDemand}
		}
		for _, it := range np.InstanceTypes {
			_, ko, err := s.karpenterType(it)
			if err != nil {
				continue // refused where the pools are made
			}
			t := overlayTarget{pool: np.Name, instanceType: it}
			for _, ct := range cts {
				if ct == models.Reserved && !slices.ContainsFunc(np.Reservations, func(r NodePoolReservation) bool { return r.InstanceType == it }) {
					continue
				}
				t.offerings = append(t.offerings, nodePoolLabels(np, ko, ct, s.region(np.Region)))
				t.cts = append(t.cts, ct)
			}
			targets = append(targets, t)
		}
	}
	return resolveOverlays(ovs, targets)
}

// nodePoolLabels are the labels of a NodePool's nodes of an instance type
// (ko, when Karpenter's catalog has it) and capacity type ct.
func nodePoolLabels(np *NodePoolSpec, ko karpenterOffer, ct, region string) map[string]string {
	l := map[string]string{LabelNodePool: np.Name, LabelKarpenterCT: ct, LabelCapacityType: ct, LabelRegion: region}
	if np.Zone != "" {
		l[LabelZone] = np.Zone
	}
	if ko.ok {
		for k, v := range ko.labels() {
			l[k] = v
		}
	}
	for k, v := range np.Labels {
		l[k] = v
	}
	return l
}

// capacityOn sets what the overlays add to a NodePool's type on its pool
// ps: nvidia.com/gpu as its GPUs per node (ApplyCapacityOverlay replaces
// the catalog's count; a type the catalog gives no GPU takes its GPU model
// from Karpenter's instance-gpu-name label, ko's), and a note for every
// other resource, which gpuplan does not model.
func (st *overlayStore) capacityOn(ps *cluster.PoolSpec, pool, instanceType string, ko karpenterOffer) error {
	set, from := st.capacityOf(pool, instanceType)
	if set == nil {
		return nil
	}
	names := make([]string, 0, len(set))
	for r := range set {
		names = append(names, string(r))
	}
	slices.Sort(names)
	for _, r := range names {
		q := set[corev1.ResourceName(r)]
		if r != gpuResource {
			st.note(fmt.Sprintf("NodeOverlay %s adds %s %s to %s in NodePool %s: not modelled (gpuplan's pods and nodes carry CPU, memory and GPUs only; a pod asking it is placed as if it did not)", from[r], r, q.String(), instanceType, pool))
			continue
		}
		n := int32(q.Value())
		if n > 0 && ps.GPUModel == "" {
			if ko.ok {
				ps.GPUModel, ps.GPUMemoryMiB = ko.t.GPUModel(), ko.t.GPUMemoryMiB
			}
			if ps.GPUModel == "" {
				return fmt.Errorf("NodeOverlay %s gives %s %d GPUs, and neither catalog names its GPU model", from[r], instanceType, n)
			}
		}
		ps.GPUsPerNode = n
		frac := ""
		if full := models.GPUMemoryMiB(ps.GPUModel); n > 0 && ps.GPUMemoryMiB > 0 && ps.GPUMemoryMiB < full {
			frac = fmt.Sprintf("; each a fraction of one, %d MiB of its %d MiB, taken at a whole one's speed", ps.GPUMemoryMiB, full)
		}
		st.note(fmt.Sprintf("NodeOverlay %s gives %s in NodePool %s %d nvidia.com/gpu a node (Karpenter's simulation and gpuplan's: %d x %s%s)", from[r], instanceType, pool, n, n, ps.GPUModel, frac))
	}
	return nil
}

// note adds a note once.
func (st *overlayStore) note(n string) {
	if !slices.Contains(st.notes, n) {
		st.notes = append(st.notes, n)
	}
}
