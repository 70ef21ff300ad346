package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/catalog/karpenter"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// DefaultNodePoolNodes bounds a NodePool read from manifests that gives no
// spec.limits (Karpenter would launch without end; a simulation needs a
// bound), and a static NodePool's replicas are at most MaxNodes.
const DefaultNodePoolNodes = 100

// LabelCapacityReservationType is the label Karpenter puts on a node
// launched into a capacity reservation: default (an on-demand capacity
// reservation) or capacity-block (EC2 Capacity Blocks for ML); a NodePool
// requirement on it selects which its reserved capacity type launches
// into.
const LabelCapacityReservationType = "karpenter.k8s.aws/capacity-reservation-type"

// Capacity reservation types (LabelCapacityReservationType's values).
const (
	ReservationDefault       = "default"
	ReservationCapacityBlock = "capacity-block"
)

// staticReservedOnly reports whether np is a static NodePool (replicas)
// whose capacity-type requirement allows reserved alone: a fixed pool of
// a capacity reservation or block.
func staticReservedOnly(np *karpv1.NodePool) bool {
	if np.Spec.Replicas == nil {
		return false
	}
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Key == karpenter.LabelCapacityType {
			return r.Operator == corev1.NodeSelectorOpIn && len(r.Values) > 0 && !slices.ContainsFunc(r.Values, func(v string) bool { return v != models.Reserved })
		}
	}
	return false
}

// reservationType reads a NodePool's requirement on
// LabelCapacityReservationType: whether it asks for capacity blocks
// alone; other uses are noted (the reservations a NodePool launches into
// are its EC2NodeClass's).
func reservationType(np *karpv1.NodePool, note func(path, format string, args ...any)) (block bool) {
	for i, r := range np.Spec.Template.Spec.Requirements {
		if r.Key != LabelCapacityReservationType {
			continue
		}
		if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 && r.Values[0] == ReservationCapacityBlock {
			block = true
			continue
		}
		note(fmt.Sprintf("spec.template.spec.requirements[%d]", i), "%s %s %v is not modelled: the reservations its reserved capacity type launches into are those its EC2NodeClass selects", r.Key, r.Operator, r.Values)
	}
	return block
}

// nodePoolNote is a note about NodePool name of document d, placed at the
// line of field path.
func (p *Policy) nodePoolNote(d policyDoc, path, name, format string, args ...any) {
	e := d.fieldErr(path, format, args...)
	p.Notes = append(p.Notes, fmt.Sprintf("%s:%d: NodePool %s: %s", d.file, e.Line, name, e.Msg))
}

// nodeClass lists an EC2NodeClass as read: its AMI, subnets, security
// groups, block devices and user data do not change what the simulation
// does.
func (p *Policy) nodeClass(d policyDoc) error {
	var obj ec2NodeClass
	if err := d.strict(&obj); err != nil {
		return err
	}
	if err := ec2NodeClassRules(d, &obj); err != nil {
		return err
	}
	if err := d.checkKarpenterCRD(); err != nil {
		return err
	}
	if obj.Name == "" {
		return d.fieldErr("metadata.name", "an EC2NodeClass needs a name")
	}
	p.NodeClasses = append(p.NodeClasses, obj.Name)
	p.Notes = append(p.Notes, fmt.Sprintf("%s: read (AMI, subnets, security groups and disks do not change the simulation)", d.where(obj.Name)))
	return p.reservationTerms(d, obj.Name, obj.Spec.CapacityReservationSelectorTerms)
}

// typeSelecting reports whether a requirement narrows instance types (as
// against offerings: capacity type, zone, region).
func typeSelecting(key string) bool {
	switch key {
	case karpenter.LabelCapacityType, karpenter.LabelZone, karpenter.LabelRegion, karpenter.LabelNodePool:
		return false
	}
	return true
}

// nodePool reads a Karpenter NodePool (karpenter.sh/v1). Requirements on
// the well-known labels are resolved against Karpenter's AWS catalog
// (scenarios/catalog/karpenter); a NodePool that lists its instance types
// (node.kubernetes.io/instance-type In [...] and nothing else narrowing
// them) keeps them as written. spec.replicas makes a static NodePool: a
// fixed pool. What the simulation does not model is noted with its line.
// cat is Karpenter's AWS catalog, read once for all of a policy's NodePools.
func (p *Policy) nodePool(d policyDoc, cat *karpenter.Catalog) error {
	var np karpv1.NodePool
	if err := d.strict(&np); err != nil {
		return err
	}
	if err := nodePoolRules(d, &np); err != nil {
		return err
	}
	if err := d.checkKarpenterCRD(); err != nil {
		return err
	}
	if np.Name == "" {
		return d.fieldErr("metadata.name", "a NodePool needs a name")
	}
	name := np.Name
	note := func(path, format string, args ...any) { p.nodePoolNote(d, path, name, format, args...) }
	out := NodePoolSpec{Name: name, Labels: map[string]string{}}
	if err := p.nodePoolOfferings(d, &np, &out, cat, note); err != nil {
		return err
	}
	if err := p.nodePoolTemplate(d, &np, &out, note); err != nil {
		return err
	}
	if err := p.nodePoolLimits(d, &np, &out, note); err != nil {
		return err
	}
	dis := np.Spec.Disruption
	if ca := dis.ConsolidateAfter; ca.Duration != nil {
		out.Consolidation = &ConsolidationSpec{Policy: string(dis.ConsolidationPolicy), ConsolidateAfter: Duration{Duration: *ca.Duration}}
		if out.Consolidation.Policy == "" {
			out.Consolidation.Policy = string(karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized)
		}
	}
	if len(dis.Budgets) > 0 {
		note("spec.disruption.budgets", "disruption budgets are not modelled: consolidation removes one node at a time, whatever the budget allows")
	}
	if len(out.Labels) == 0 {
		out.Labels = nil
	}
	block := reservationType(&np, note)
	if np.Spec.Replicas != nil {
		if err := p.staticNodePool(d, &np, out, cat, note); err != nil {
			return err
		}
		if staticReservedOnly(&np) {
			pool := &p.StaticPools[len(p.StaticPools)-1]
			pool.CapacityType = models.Reserved
			class := ""
			if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
				class = ref.Name
			}
			p.staticReserved = append(p.staticReserved, staticReserved{d: d, pool: len(p.StaticPools) - 1, class: class, block: block})
		} else if block {
			note("spec.template.spec.requirements", "asks for capacity blocks, but its capacity type is not reserved alone: read as %s", p.StaticPools[len(p.StaticPools)-1].CapacityType)
		}
		return nil
	}
	if block {
		note("spec.template.spec.requirements", "asks for capacity blocks: its reserved capacity type launches into the reservations its EC2NodeClass selects, held the whole run (a block's window is kept for a static NodePool alone)")
	}
	if w := np.Spec.Weight; w != nil {
		if *w < 0 || *w > 100 {
			return d.fieldErr("spec.weight", "NodePool %s: weight %d is outside 0..100", name, *w)
		}
		out.Weight = *w
	}
	p.NodePools = append(p.NodePools, out)
	class := ""
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		class = ref.Name
	}
	p.npClass = append(p.npClass, class)
	var order []string // the capacity types as the requirement lists them, reserved among them
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Key == karpenter.LabelCapacityType && r.Operator == corev1.NodeSelectorOpIn && slices.Contains(r.Values, karpenter.Reserved) {
			order = r.Values
		}
	}
	p.npReserved = append(p.npReserved, order)
	return nil
}

// nodePoolOfferings resolves a NodePool's requirements against
// Karpenter's catalog into out: its instance types (as listed, when an
// instance-type In alone narrows them; else the priced ones the
// requirements allow), capacity types, zone, region and the labels the
// requirements fix; the notes say what is not modelled, at its line.
func (p *Policy) nodePoolOfferings(d policyDoc, np *karpv1.NodePool, out *NodePoolSpec, cat *karpenter.Catalog, note func(path, format string, args ...any)) error {
	const reqPath = "spec.template.spec.requirements"
	name := np.Name
	var reqs []karpenter.Requirement
	var listed []string // instance-type In values, when they alone narrow the types
	listedOnly, hasListed := true, false
	for i, r := range np.Spec.Template.Spec.Requirements {
		kr := karpenter.Requirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values}
		if r.MinValues != nil {
			kr.MinValues = *r.MinValues
			if kr.MinValues < 1 || kr.MinValues > karpenter.MaxMinValues {
				return d.fieldErr(fmt.Sprintf("%s[%d].minValues", reqPath, i), "NodePool %s: minValues %d is outside 1..%d", name, kr.MinValues, karpenter.MaxMinValues)
			}
		}
		reqs = append(reqs, kr)
		switch {
		case r.Key == corev1.LabelInstanceTypeStable && r.Operator == corev1.NodeSelectorOpIn && r.MinValues == nil:
			if !hasListed {
				listed = slices.Clone(r.Values)
			} else {
				listed = slices.DeleteFunc(listed, func(v string) bool { return !slices.Contains(r.Values, v) })
			}
			hasListed = true
		case r.Key == LabelCapacityReservationType:
		case typeSelecting(r.Key):
			listedOnly = false
		}
	}
	if cat == nil {
		return fmt.Errorf("%s: NodePool %s: Karpenter's catalog was not read for it (a gpuplan bug)", d.where(name), name)
	}
	reqErr := func(e *karpenter.Error) error {
		path := reqPath
		if e.Index >= 0 {
			path = fmt.Sprintf("%s[%d]", reqPath, e.Index)
		}
		return d.fieldErr(path, "NodePool %s: %s", name, e.Msg)
	}
	// The offerings resolved: every requirement but the capacity
	// reservation's type (an EC2 reservation's, not an instance type's:
	// read by the caller) and, when instance-type In alone narrows the
	// types, the type-selecting ones; at[k] is offer k's requirement. A
	// static NodePool of reserved capacity alone resolves as on-demand (its
	// reservation's instances are on-demand instances).
	var offers []karpenter.Requirement
	var at []int
	for i, r := range reqs {
		if r.Key == LabelCapacityReservationType || (hasListed && listedOnly && typeSelecting(r.Key)) {
			continue
		}
		if staticReservedOnly(np) && r.Key == karpenter.LabelCapacityType {
			r.Values = []string{models.OnDemand}
		}
		offers, at = append(offers, r), append(at, i)
	}
	back := func(i int) int {
		if i >= 0 && i < len(at) {
			return at[i]
		}
		return i
	}
	res, err := cat.Resolve(offers)
	if err != nil {
		if e, ok := err.(*karpenter.Error); ok {
			return reqErr(&karpenter.Error{Index: back(e.Index), Msg: e.Msg})
		}
		return err
	}
	for _, n := range res.Notes {
		i, rest := splitReqNote(n)
		note(fmt.Sprintf("%s[%d]", reqPath, max(back(i), 0)), "%s", rest)
	}
	if hasListed && listedOnly {
		if len(listed) == 0 {
			return d.fieldErr(reqPath, "NodePool %s: the %s requirements leave no instance type", name, corev1.LabelInstanceTypeStable)
		}
		out.InstanceTypes = listed
	} else {
		// Instance types the NodePool lists that Karpenter's embedded
		// reference lacks cannot launch: said, not dropped silently.
		for i, r := range reqs {
			if r.Key != corev1.LabelInstanceTypeStable || r.Operator != string(corev1.NodeSelectorOpIn) {
				continue
			}
			var missing []string
			for _, v := range r.Values {
				if _, ok := cat.Lookup(v); !ok {
					missing = append(missing, v)
				}
			}
			if len(missing) > 0 {
				note(fmt.Sprintf("%s[%d]", reqPath, i), "%s not in Karpenter's embedded AWS instance types (scenarios/catalog/karpenter), so never launched: give such nodes as a pool (cpu, memory, gpuModel, gpusPerNode, pricePerHour) to simulate them", strings.Join(missing, ", "))
			}
		}
		var priced []string
		unpriced := 0
		for _, t := range res.Types {
			if t.OnDemandPerHour > 0 {
				priced = append(priced, t.Name)
			} else {
				unpriced++
			}
		}
		if len(priced) == 0 {
			return d.fieldErr(reqPath, "NodePool %s: the %d instance types the requirements allow have no price in Karpenter's us-east-1 table", name, len(res.Types))
		}
		if unpriced > 0 {
			note(reqPath, "%d of the %d instance types the requirements allow have no price in Karpenter's us-east-1 table and are left out", unpriced, len(res.Types))
		}
		out.InstanceTypes = priced
		out.resolved = true
		gpus := 0
		for _, n := range priced {
			if t, ok := cat.Lookup(n); ok && t.HasGPU() {
				gpus++
			}
		}
		if res.NoGPU == nil {
			note(reqPath, "resolves to %d instance types (%d with NVIDIA GPUs), %s: pending pods are packed into NodeClaims, each launched on its cheapest offering (spot dearer than the cheapest on-demand one dropped)", len(priced), gpus, strings.Join(res.CapacityTypes, " and "))
		}
		if res.NoGPU != nil {
			at := reqPath
			if res.NoGPU.Index >= 0 {
				at = fmt.Sprintf("%s[%d]", reqPath, res.NoGPU.Index)
			}
			note(at, "resolves to %d instance types, none with an NVIDIA GPU (%s): its nodes take CPU-only pods", len(priced), res.NoGPU.Msg)
		}
	}
	out.CapacityTypes = res.CapacityTypes
	if len(res.Zones) > 0 {
		out.Zone = res.Zones[0]
		if len(res.Zones) > 1 {
			note(reqPath, "zones beyond the first (%s) are not modelled: its nodes launch in %s", strings.Join(res.Zones[1:], ", "), out.Zone)
		}
	}
	out.Region = res.Region
	for k, v := range res.Labels {
		out.Labels[k] = v
	}
	return nil
}

// nodePoolTemplate reads the NodePool's node template into out: labels,
// taints and expireAfter; startup taints and the termination grace period
// are noted as not modelled.
func (p *Policy) nodePoolTemplate(d policyDoc, np *karpv1.NodePool, out *NodePoolSpec, note func(path, format string, args ...any)) error {
	name := np.Name
	for k, v := range np.Spec.Template.Labels {
		out.Labels[k] = v
	}
	for _, t := range np.Spec.Template.Spec.Taints {
		out.Taints = append(out.Taints, TaintSpec{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	if len(np.Spec.Template.Spec.StartupTaints) > 0 {
		note("spec.template.spec.startupTaints", "startup taints are not modelled (pods do not wait for them to go)")
	}
	if ea := np.Spec.Template.Spec.ExpireAfter.Duration; ea != nil {
		switch {
		case *ea < time.Millisecond:
			return d.fieldErr("spec.template.spec.expireAfter", "NodePool %s: expireAfter %s is below 1 ms", name, ea)
		case np.Spec.Replicas != nil:
			note("spec.template.spec.expireAfter", "expireAfter %s is not modelled for a static NodePool: its nodes are not replaced for their age", ea)
		default:
			out.ExpireAfter = &Duration{Duration: *ea}
			note("spec.template.spec.expireAfter", "expireAfter %s: each node is drained that long after its launch (its jobs get 30 s, do-not-disrupt or not) and its pods launched for again", ea)
		}
	}
	if np.Spec.Template.Spec.TerminationGracePeriod != nil {
		note("spec.template.spec.terminationGracePeriod", "terminationGracePeriod is not modelled (a drained job gets its pods' own grace period)")
	}
	return nil
}

// splitReqNote splits "requirements[3]: text" into 3 and text.
func splitReqNote(n string) (int, string) {
	rest, ok := strings.CutPrefix(n, "requirements[")
	if !ok {
		return -1, n
	}
	end := strings.Index(rest, "]: ")
	if end < 0 {
		return -1, n
	}
	i, err := strconv.Atoi(rest[:end])
	if err != nil {
		return -1, n
	}
	return i, rest[end+3:]
}

// nodePoolLimits reads spec.limits: nvidia.com/gpu, nodes, cpu and memory
// bound the NodePool; others are noted. Without limits the NodePool is
// bounded at DefaultNodePoolNodes nodes.
func (p *Policy) nodePoolLimits(d policyDoc, np *karpv1.NodePool, out *NodePoolSpec, note func(path, format string, args ...any)) error {
	for _, r := range slices.Sorted(maps.Keys(np.Spec.Limits)) {
		q := np.Spec.Limits[r]
		at := fmt.Sprintf("spec.limits[%s]", strconv.Quote(string(r)))
		f := q.AsApproximateFloat64()
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return d.fieldErr(at, "%s is not a quantity of at least 0", Quote(q.String()))
		}
		switch r {
		case "nvidia.com/gpu", "nodes":
			bound := int64(MaxNodes)
			if r == "nvidia.com/gpu" {
				bound = MaxNodes * MaxPodGPUs
			}
			if f > float64(bound) {
				return d.fieldErr(at, "%s is not a whole number from 0 to %d", Quote(q.String()), bound)
			}
			if r == "nodes" {
				out.Limits.Nodes = int(q.Value())
			} else {
				out.Limits.GPUs = q.Value()
			}
		case corev1.ResourceCPU, corev1.ResourceMemory:
			if f > float64(MaxNodes)*1e15 {
				return d.fieldErr(at, "%s is more than gpuplan bounds a NodePool by", Quote(q.String()))
			}
			qq := q.DeepCopy()
			if r == corev1.ResourceCPU {
				out.Limits.CPU = &qq
			} else {
				out.Limits.Memory = &qq
			}
		default:
			note(at, "the limit on %s is not modelled", r)
		}
	}
	if out.Limits.GPUs == 0 && out.Limits.Nodes == 0 && out.Limits.CPU == nil && out.Limits.Memory == nil && np.Spec.Replicas == nil {
		out.Limits.Nodes = DefaultNodePoolNodes
		note("spec", "no spec.limits: the simulation bounds it at %d nodes", DefaultNodePoolNodes)
	}
	return nil
}

// staticNodePool makes a NodePool with spec.replicas a fixed pool of that
// many nodes: its instance type the only one it allows, else the cheapest
// on-demand one in Karpenter's table; spot when it allows spot (Karpenter
// prefers it), else on-demand.
func (p *Policy) staticNodePool(d policyDoc, np *karpv1.NodePool, out NodePoolSpec, cat *karpenter.Catalog, note func(path, format string, args ...any)) error {
	n := *np.Spec.Replicas
	if n < 0 || n > MaxNodes {
		return d.fieldErr("spec.replicas", "NodePool %s: replicas %d is outside 0..%d", out.Name, n, MaxNodes)
	}
	it := out.InstanceTypes[0]
	if len(out.InstanceTypes) > 1 {
		best := math.Inf(1)
		for _, name := range out.InstanceTypes {
			if t, ok := cat.Lookup(name); ok && t.OnDemandPerHour > 0 && t.OnDemandPerHour < best {
				it, best = name, t.OnDemandPerHour
			}
		}
		note("spec.replicas", "a static NodePool of %d instance types: its %d nodes are all %s, the cheapest on-demand", len(out.InstanceTypes), n, it)
	}
	ct := models.OnDemand
	if slices.Contains(out.CapacityTypes, models.Spot) {
		ct = models.Spot
		if len(out.CapacityTypes) > 1 {
			note("spec.replicas", "a static NodePool allowing spot and on-demand: its nodes are spot")
		}
	}
	if np.Spec.Weight != nil {
		note("spec.weight", "weight does not apply to a static NodePool (Karpenter refuses it with replicas)")
	}
	labels := map[string]string{LabelNodePool: out.Name}
	maps.Copy(labels, out.Labels)
	pool := PoolSpec{
		Name: out.Name, Count: int(n), InstanceType: it, Labels: labels, Taints: out.Taints,
		CapacitySpec: CapacitySpec{CapacityType: ct, Region: out.Region, Zone: out.Zone},
	}
	p.StaticPools = append(p.StaticPools, pool)
	return nil
}

// selectorKeys are the node label keys the scenario's classes select nodes
// by: instance types differing in them are never pruned into one another.
func (s *Scenario) selectorKeys() []string {
	keys := map[string]bool{}
	add := func(cs []ClassSpec) {
		for _, c := range cs {
			for k := range c.NodeSelector {
				keys[k] = true
			}
			for _, t := range c.Affinity {
				for _, r := range t.MatchExpressions {
					keys[r.Key] = true
				}
			}
		}
	}
	if w := s.Spec.Workload.Synthetic; w != nil {
		add(w.Classes)
	}
	return slices.Sorted(maps.Keys(keys))
}

// importNodePools adds the NodePools of spec.policy's manifests to the
// cluster (they are read when the scenario loads): static NodePools as
// fixed pools, the others as NodePools, a resolved set of instance types
// pruned of the CPU types no pod would be launched on.
func (s *Scenario) importNodePools() error {
	ps := s.Spec.Policy
	if ps == nil || len(ps.Manifests) == 0 {
		return nil
	}
	var paths []string
	for _, m := range ps.Manifests {
		paths = append(paths, s.path(m))
	}
	pol, err := LoadPolicy(paths)
	if err != nil {
		return err
	}
	if len(pol.NodePools) > 0 && s.karp == nil {
		c, err := karpenter.AWS()
		if err != nil {
			return err
		}
		s.karp = c
	}
	keys := s.selectorKeys()
	for _, np := range pol.NodePools {
		if np.resolved {
			var ts []*karpenter.InstanceType
			for _, n := range np.InstanceTypes {
				if t, ok := s.karp.Lookup(n); ok {
					ts = append(ts, t)
				}
			}
			np.InstanceTypes = nil
			for _, t := range karpenter.Prune(ts, keys) {
				np.InstanceTypes = append(np.InstanceTypes, t.Name)
			}
		}
		np.overlays = pol.overlays
		s.Spec.Cluster.NodePools = append(s.Spec.Cluster.NodePools, np)
		s.imported = append(s.imported, np.Name)
	}
	for _, p := range pol.StaticPools {
		s.Spec.Cluster.Pools = append(s.Spec.Cluster.Pools, p)
		s.imported = append(s.imported, p.Name)
	}
	return nil
}

// karpenterOffer sizes and prices an instance type the price catalog does
// not know from Karpenter's AWS catalog: its vCPUs, memory and NVIDIA GPUs,
// and its us-east-1 on-demand price. ok is false when Karpenter's catalog
// does not know it either.
type karpenterOffer struct {
	t  *karpenter.InstanceType
	ok bool
}

func (s builder) karpenterType(name string) (resources, karpenterOffer, error) {
	kc := s.karp // read when the scenario loaded (loadKarpenterCatalog)
	if kc == nil {
		// A scenario made some other way: read, not kept.
		c, err := karpenter.AWS()
		if err != nil {
			return resources{}, karpenterOffer{}, err
		}
		kc = c
	}
	t, ok := kc.Lookup(name)
	if !ok || t.OnDemandPerHour <= 0 {
		return resources{}, karpenterOffer{}, nil
	}
	it := models.InstanceType{Name: t.Name, Cloud: models.AWS, VCPUs: float64(t.VCPUs), MemoryGiB: float64(t.MemoryMiB) / 1024}
	if t.HasGPU() {
		it.GPUModel, it.GPUs, it.GPUMemoryMiB = t.GPUModel(), int32(t.AllocGPUs), t.GPUMemoryMiB
	}
	return resources{it: it, ok: true}, karpenterOffer{t: t, ok: true}, nil
}

// price is the offer's hourly price for a capacity type in a region, and
// its basis: Karpenter's us-east-1 on-demand price; a spot node, whose
// price gpuplan's catalog does not have, at that price less the Spot
// Advisor's savings for the type, else at the on-demand price (an upper
// bound on its cost). est says which, for the run's assumptions.
func (o karpenterOffer) price(region, ct string) (perHour float64, basis string, est spotEstimate, err error) {
	if region != karpenter.Region {
		return 0, "", est, fmt.Errorf("%s has a price only in %s (Karpenter's table); give pricePerHour or region %s", o.t.Name, karpenter.Region, karpenter.Region)
	}
	const list = "Karpenter's us-east-1 on-demand list"
	if ct == models.Spot {
		p, basis, est, ok, err := spotFromAdvisor(o.t.Name, region, o.t.OnDemandPerHour, list)
		if err != nil || ok {
			return p, basis, est, err
		}
		return o.t.OnDemandPerHour, list + "; no spot price known, billed at on-demand (an upper bound)",
			spotEstimate{instanceType: o.t.Name, region: region, upperBound: true}, nil
	}
	return o.t.OnDemandPerHour, list, est, nil
}

// labels are the well-known labels Karpenter puts on a node of the type.
func (o karpenterOffer) labels() map[string]string { return o.t.Labels }

// limitByResources bounds a NodePool pool's slots by the NodePool's CPU
// and memory limits: no more nodes of the type than fit in them.
func limitByResources(maxNodes int, g *capacity.Group, ps *cluster.PoolSpec) int {
	bound := func(limit, per int64) {
		if limit <= 0 || per <= 0 {
			return
		}
		n := int(min(limit/per, MaxNodes))
		if maxNodes == 0 || n < maxNodes {
			maxNodes = n
		}
	}
	bound(g.MaxMilliCPU, ps.MilliCPU)
	bound(g.MaxMemoryMiB, ps.MemoryMiB)
	return maxNodes
}

// spotInterruptions is a NodePool's spot reclaim process: as a pool's
// (with no interruptions given, the measured preset, which needs no Spot
// Advisor band).
func (s interrupter) spotInterruptions(at, it, region string, spec *InterruptionSpec, res resources, karpenterOnly bool) (capacity.Process, error) {
	return s.interruptions(at, it, region, spec, res)
}

// orderByWeight puts the NodePools' groups (one per NodePool, in order)
// in Karpenter's order when any NodePool has a weight: highest weight
// first, ties by name. The capacity controller tries groups in order.
func orderByWeight(nps []NodePoolSpec, caps []capacity.Pool, groups []capacity.Group) {
	weighted := false
	for _, np := range nps {
		weighted = weighted || np.Weight != 0
	}
	if !weighted || len(nps) != len(groups) {
		return
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if nps[a].Weight != nps[b].Weight {
			return int(nps[b].Weight) - int(nps[a].Weight)
		}
		return strings.Compare(nps[a].Name, nps[b].Name)
	})
	where := make([]int32, len(groups))
	sorted := make([]capacity.Group, len(groups))
	for to, from := range order {
		where[from] = int32(to)
		sorted[to] = groups[from]
	}
	copy(groups, sorted)
	for i := range caps {
		if g := caps[i].Group; g >= 0 {
			caps[i].Group = where[g]
		}
	}
}
