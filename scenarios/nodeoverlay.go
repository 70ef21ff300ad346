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

	"gpuplan.dev/gpuplan/scenarios/catalog/karpenter"
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

// nodeOverlay is one NodeOverlay read from the policy.
type nodeOverlay struct {
	name   string
	where  string // file:line
	weight int32
	reqs   []karpenter.Requirement
	n      []int64 // each requirement's integer (karpenter.Check)
	change string  // price or priceAdjustment as written
}

// The CRD's patterns for the two price fields (karpenter.sh_nodeoverlays).
var (
	overlayAdjustment = regexp.MustCompile(`^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$`)
	overlayPrice      = regexp.MustCompile(`^\d+(\.\d+)?$`)
)

// nodeOverlay reads a NodeOverlay strictly; what it does that gpuplan does
// not model (extended resources in capacity) is noted.
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
	if len(s.Capacity) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: NodeOverlay %s: spec.capacity (extended resources added to the nodes) is not modelled", ov.where, o.Name))
	}
	if ov.change == "" {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: NodeOverlay %s changes no price", ov.where, o.Name))
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

// overlaid is an offering's price after the first overlay that selects it
// (by weight), and what the price basis says of it; ok is false when none
// does.
func overlaid(overlays []nodeOverlay, labels map[string]string, price float64) (float64, string, bool) {
	for i := range overlays {
		o := &overlays[i]
		if o.selects(labels) {
			return adjustedPrice(price, o.change), fmt.Sprintf("NodeOverlay %s (%s) %s: $%.4f an hour before", o.name, o.where, o.change, price), true
		}
	}
	return price, "", false
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
			if strings.HasPrefix(change, "+") || strings.HasPrefix(change, "-") {
				ov.Spec.PriceAdjustment = &change
			} else {
				ov.Spec.Price = &change
			}
			out = append(out, ov)
		}
	}
	return out
}
