package dra

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Finding is a note at a field of the pod template.
type Finding struct{ Field, Msg string }

// FieldError is an input error at a field of the pod template (the caller
// gives it the file and line).
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Request is what a pod's claims ask of the cluster's GPUs, in the terms
// the simulator models: whole GPUs, instances of one MIG profile, or a
// share of one GPU; and the GPU models they may be.
type Request struct {
	GPUs int32
	MIG  string
	// GPUMilli and GPUMemMiB are a share of one GPU (consumable capacity,
	// or one device shared by several pods).
	GPUMilli  int32
	GPUMemMiB int64
	// Models are the GPU models (gpuplan's names, node label
	// gpuplan.dev/gpu-model) the devices may be; nil: any.
	Models []string
	// Classes are the DeviceClasses the devices come from, sorted.
	Classes []string
	Notes   []Finding
	// Named are the ResourceClaims the pod names (not templates).
	Named []Named
	// Channel is the ComputeDomain channel the pod claims (nil: none).
	Channel *Channel
	// Kueue is what Kueue's DRA integration counts of the request.
	Kueue KueueView
}

// KueueVersion is the Kueue release whose DRA integration KueueView
// follows (the version gpuplan compiles Kueue's API at).
const KueueVersion = "v0.19.2"

// KueueView is what Kueue v0.19.2 counts of a pod's DRA devices, as its
// pkg/dra does behind the KueueDRAIntegration gate (beta and on by default
// since v0.18; v0.17's DynamicResourceAllocation) and
// KueueDRAIntegrationExtendedResource (beta and on since v0.19):
//
//   - Counts: each ResourceClaimTemplate request's count, summed per
//     DeviceClass over the pod's templates (countDevicesPerClass), which
//     the Configuration's deviceClassMappings charge as a quota resource.
//     Since v0.18 device constraints, device config and CEL selectors are
//     counted too (v0.17 refused them); a CEL-selected request is counted
//     once the cluster publishes as many devices matching its class's and
//     its own selectors (validateCELSelectorsAgainstDevices).
//   - Ext: the DRA-backed extended resources, with their DeviceClass
//     (charged as the class's mapping, else as themselves).
//   - Named: a ResourceClaim the pod names ("" none), at NamedField: Kueue
//     marks such a workload inadmissible.
//   - Unsupported: the first thing of a template Kueue refuses
//     (firstAvailable, adminAccess, allocationMode All, or a CEL-selected
//     request the cluster's node pools never hold enough devices for), at
//     Field.
type KueueView struct {
	Counts      []ClassCount
	Ext         []ExtCount
	Named       string
	NamedField  string
	Unsupported string
	Field       string
}

// ClassCount is a number of devices of one DeviceClass.
type ClassCount struct {
	Class string
	Count int64
}

// ExtCount is a DRA-backed extended resource a pod asks for: its name,
// the DeviceClass backing it, and the pod's count.
type ExtCount struct {
	Name, Class string
	Count       int64
}

// Classes are the DeviceClasses the view counts, sorted.
func (v *KueueView) Classes() []string {
	out := make([]string, 0, len(v.Counts))
	for _, c := range v.Counts {
		out = append(out, c.Class)
	}
	return out
}

// Named is a ResourceClaim a pod names: Key its namespace/name, What its
// kind, name and place, Field the pod's field naming it; Whole: it holds
// exactly one whole GPU (the one sharing gpuplan models).
type Named struct {
	Key, What, Field string
	Whole            bool
}

// Empty reports whether the pod's claims ask for no GPU.
func (r *Request) Empty() bool { return r.GPUs == 0 && r.GPUMilli == 0 }

// ExtRequest is a container's request of an extended resource (its total
// over the pod), for DRA-backed extended resources.
type ExtRequest struct {
	Name  string
	Count int64
	Field string
}

// lookup finds a claim or template by the pod's namespace and its name;
// one given without a namespace (or a pod without one) matches too, as
// kubectl apply puts both in the context's namespace.
func lookup(m map[string]*claim, namespace, name string) *claim {
	if c := m[key(namespace, name)]; c != nil {
		return c
	}
	if namespace != "" {
		return m[key("", name)]
	}
	var found *claim
	for _, c := range m {
		if c.name == name {
			if found != nil {
				return nil // in several namespaces: the pod's is unknown
			}
			found = c
		}
	}
	return found
}

// part is one device request resolved.
type part struct {
	count  int64
	mig    string
	milli  int32
	memMiB int64
	models []string // nil: any
	class  string
}

// errNoMatch: a request's selectors match no device gpuplan models
// (firstAvailable tries the next subrequest).
type errNoMatch struct{ err error }

func (e errNoMatch) Error() string { return e.err.Error() }

// Pod resolves a pod template's claims (spec.resourceClaims by
// resourceClaimName or resourceClaimTemplateName, the containers'
// resources.claims naming them) and DRA-backed extended resources (ext)
// into one GPU request. namespace is the pod's; pools the cluster's node
// pools (none given: unknown; firstAvailable then takes the first
// subrequest gpuplan can place, as it does when no pool serves any, and
// allocationMode All is refused). The
// ResourceClaims named are in Request.Named: one ResourceClaim is one set
// of devices, shared by every pod naming it (the caller, which counts the
// pods, divides it).
func (s *Set) Pod(namespace string, spec *corev1.PodSpec, specAt string, ext []ExtRequest, pools []cluster.PoolSpec) (Request, error) {
	var r Request
	var parts []part
	names := map[string]bool{}
	for i, pc := range spec.ResourceClaims {
		at := fmt.Sprintf("%s.resourceClaims[%d]", specAt, i)
		names[pc.Name] = true
		var c *claim
		switch {
		case pc.ResourceClaimName != nil && pc.ResourceClaimTemplateName != nil:
			return r, &FieldError{at, "gives both resourceClaimName and resourceClaimTemplateName; the API server wants one"}
		case pc.ResourceClaimTemplateName != nil && s.channel(namespace, *pc.ResourceClaimTemplateName) != nil:
			d := s.channel(namespace, *pc.ResourceClaimTemplateName)
			if r.Channel != nil {
				return r, &FieldError{at + ".resourceClaimTemplateName", fmt.Sprintf("a second ComputeDomain channel (%s; the first is %s)", d.what(), r.Channel.What)}
			}
			r.Channel = &Channel{Domain: key(d.namespace, d.name), What: d.what(), Field: at + ".resourceClaimTemplateName"}
			continue
		case pc.ResourceClaimTemplateName != nil:
			c = lookup(s.templates, namespace, *pc.ResourceClaimTemplateName)
			if c == nil {
				return r, &FieldError{at + ".resourceClaimTemplateName", fmt.Sprintf("ResourceClaimTemplate %s is not in the file (namespace %s): gpuplan reads a pod's claims from its own file", strict.Quote(*pc.ResourceClaimTemplateName), strict.Quote(namespace))}
			}
		case pc.ResourceClaimName != nil:
			c = lookup(s.claims, namespace, *pc.ResourceClaimName)
			if c == nil {
				return r, &FieldError{at + ".resourceClaimName", fmt.Sprintf("ResourceClaim %s is not in the file (namespace %s): gpuplan reads a pod's claims from its own file", strict.Quote(*pc.ResourceClaimName), strict.Quote(namespace))}
			}
		default:
			return r, &FieldError{at, "names neither a resourceClaimName nor a resourceClaimTemplateName"}
		}
		ps, notes, err := s.claimParts(c, pools)
		if err != nil {
			return r, err
		}
		if pc.ResourceClaimTemplateName != nil {
			kueueView(&r.Kueue, c, ps, at, pools)
		} else if r.Kueue.Named == "" {
			r.Kueue.Named, r.Kueue.NamedField = c.what(), at+".resourceClaimName"
		}
		for _, n := range notes {
			r.Notes = append(r.Notes, Finding{at, n})
		}
		if pc.ResourceClaimName != nil {
			n := Named{Key: key(c.namespace, c.name), What: c.what(), Field: at + ".resourceClaimName"}
			n.Whole = len(ps) == 1 && ps[0].count == 1 && ps[0].mig == "" && ps[0].milli == 0
			r.Named = append(r.Named, n)
		}
		parts = append(parts, ps...)
	}
	for _, list := range []struct {
		name string
		cs   []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, ct := range list.cs {
			for j, cl := range ct.Resources.Claims {
				if !names[cl.Name] {
					return r, &FieldError{fmt.Sprintf("%s.%s[%d].resources.claims[%d].name", specAt, list.name, i, j), fmt.Sprintf("%s is not a claim of the pod's spec.resourceClaims (the API server refuses it)", strict.Quote(cl.Name))}
				}
			}
		}
	}
	byExt := s.ExtendedResources()
	for _, e := range ext {
		class := byExt[e.Name]
		if class == "" || e.Count == 0 {
			continue
		}
		p, notes, err := s.exact(nil, e.Field, &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: e.Count}, pools)
		if err != nil {
			return r, err
		}
		for _, n := range notes {
			r.Notes = append(r.Notes, Finding{e.Field, n})
		}
		r.Notes = append(r.Notes, Finding{e.Field, fmt.Sprintf("%s %d: a DRA-backed extended resource of DeviceClass %s (%s): taken as %s", strict.Quote(e.Name), e.Count, strict.Quote(class), s.classes[class].where, p.describe())})
		parts = append(parts, p)
		r.Kueue.Ext = append(r.Kueue.Ext, ExtCount{Name: e.Name, Class: class, Count: e.Count})
	}
	return r, combine(&r, parts, specAt)
}

// kueueView adds a template's requests to what Kueue v0.19.2 counts
// (pkg/dra countDevicesPerClass, request by request, the first refusal
// kept): firstAvailable, adminAccess and allocationMode All are refused;
// an ExactCount request's count (1 when unset, the API server's default)
// is added to its DeviceClass, selectors, constraints and config or not.
// ps are the template's requests resolved (claimParts, in request order),
// for the check of CEL-selected requests against the cluster's devices.
func kueueView(v *KueueView, c *claim, ps []part, at string, pools []cluster.PoolSpec) {
	d := &c.spec.Devices
	refuse := func(what string) {
		if v.Unsupported == "" {
			v.Unsupported, v.Field = fmt.Sprintf("%s (%s)", what, c.what()), at
		}
	}
	type sel struct {
		p part
		n int64
	}
	var selected []sel // this template's CEL-selected requests so far
	short := ""        // the first a CEL check refuses (after the counts, as Kueue checks)
	for i, rq := range d.Requests {
		ex := rq.Exactly
		switch {
		case ex == nil:
			refuse(fmt.Sprintf("firstAvailable at devices.requests[%d] (\"FirstAvailable device selection is not supported\")", i))
			return
		case ex.AdminAccess != nil && *ex.AdminAccess:
			refuse(fmt.Sprintf("adminAccess at devices.requests[%d] (\"AdminAccess is not supported\")", i))
			return
		case ex.AllocationMode == resourcev1.DeviceAllocationModeAll:
			refuse(fmt.Sprintf("allocationMode All at devices.requests[%d] (\"AllocationMode 'All' is not supported\")", i))
			return
		}
		n := ex.Count
		if n == 0 {
			n = 1
		}
		if len(ex.Selectors) > 0 && i < len(ps) && len(pools) > 0 && (ps[i].count > 0 || ps[i].milli > 0) {
			// Kueue counts the cluster's published devices its class and
			// its selectors match, each once per template, and holds the
			// workload until there are n: never, if the pools at their
			// largest have fewer.
			p := ps[i]
			need := n
			for _, q := range selected {
				if sameDevices(p, q.p) {
					need += q.n
				}
			}
			selected = append(selected, sel{p, n})
			if have, known := clusterDevices(p, pools); known && have < need && short == "" {
				short = fmt.Sprintf("a CEL-selected request at devices.requests[%d] for %d device(s) (%s), of which the cluster's node pools publish %d at most (\"insufficient matching devices for CEL selector in DeviceClass %s\": the workload waits for ResourceSlices that never come)", i, need, p.describe(), have, ex.DeviceClassName)
			}
		}
		k := slices.IndexFunc(v.Counts, func(cc ClassCount) bool { return cc.Class == ex.DeviceClassName })
		if k < 0 {
			v.Counts = append(v.Counts, ClassCount{Class: ex.DeviceClassName})
			k = len(v.Counts) - 1
		}
		v.Counts[k].Count += n
	}
	if short != "" {
		refuse(short)
	}
	sort.Slice(v.Counts, func(i, j int) bool { return v.Counts[i].Class < v.Counts[j].Class })
}

// sameDevices reports whether two resolved requests may take the same
// devices: the same kind (whole GPUs or one MIG profile) on a model both
// allow.
func sameDevices(a, b part) bool {
	if a.mig != b.mig {
		return false
	}
	if a.models == nil || b.models == nil {
		return true
	}
	for _, m := range a.models {
		if slices.Contains(b.models, m) {
			return true
		}
	}
	return false
}

// clusterDevices is how many devices of the part's kind the pools'
// nodes publish at most (every pool at its largest): whole GPUs of the
// part's models on pools not cut by MIG, or instances of its MIG profile.
// known is false when a pool with such devices gives no size (no nodes
// and no maximum: a provisioner's, unbounded).
func clusterDevices(p part, pools []cluster.PoolSpec) (n int64, known bool) {
	for i := range pools {
		pl := &pools[i]
		if pl.GPUsPerNode == 0 || p.models != nil && !slices.Contains(p.models, pl.GPUModel) {
			continue
		}
		per := int64(0)
		switch {
		case p.mig != "":
			for _, x := range pl.Sharing.MIGLayout {
				if x == p.mig {
					per++
				}
			}
		case pl.Sharing.MIGStrategy == "":
			per = 1
		}
		if per > 0 && pl.Slots() == 0 {
			return 0, false
		}
		n += per * int64(pl.GPUsPerNode) * int64(pl.Slots())
	}
	return n, true
}

func (p part) describe() string {
	var w string
	switch {
	case p.milli > 0:
		w = fmt.Sprintf("a %d/1000 share of one GPU", p.milli)
	case p.mig != "":
		w = fmt.Sprintf("%d MIG instance(s) %s", p.count, p.mig)
	default:
		w = fmt.Sprintf("%d whole GPU(s)", p.count)
	}
	if p.models != nil {
		w += " of " + strings.Join(p.models, ", ")
	}
	return w
}

// combine adds the parts into one request: the simulator gives a pod one
// kind of GPU.
func combine(r *Request, parts []part, specAt string) error {
	classes := map[string]bool{}
	anyYet := true
	for _, p := range parts {
		if p.count == 0 && p.milli == 0 {
			continue
		}
		classes[p.class] = true
		kind := func(q part) string {
			switch {
			case q.milli > 0:
				return "a share of a GPU"
			case q.mig != "":
				return "MIG instances " + q.mig
			}
			return "whole GPUs"
		}
		if r.GPUs > 0 || r.GPUMilli > 0 {
			cur := part{count: int64(r.GPUs), mig: r.MIG, milli: r.GPUMilli}
			if p.milli > 0 || r.GPUMilli > 0 || p.mig != r.MIG {
				return &FieldError{specAt + ".resourceClaims", fmt.Sprintf("the pod's claims ask for %s and %s; gpuplan gives a pod one kind of GPU (whole GPUs, one MIG profile, or one share)", kind(cur), kind(p))}
			}
		}
		if p.milli > 0 {
			r.GPUMilli, r.GPUMemMiB = p.milli, p.memMiB
		} else {
			if int64(r.GPUs)+p.count > cluster.MaxGPUsPerNode {
				return &FieldError{specAt + ".resourceClaims", fmt.Sprintf("the pod's claims ask for %d devices, more than the %d a node can have", int64(r.GPUs)+p.count, cluster.MaxGPUsPerNode)}
			}
			r.GPUs += int32(p.count)
			r.MIG = p.mig
		}
		switch {
		case p.models == nil:
		case anyYet:
			r.Models, anyYet = p.models, false
		default:
			var both []string
			for _, m := range r.Models {
				if slices.Contains(p.models, m) {
					both = append(both, m)
				}
			}
			if both == nil {
				return &FieldError{specAt + ".resourceClaims", fmt.Sprintf("the pod's claims ask for devices of GPU models %s and %s, which no node has together", strings.Join(r.Models, ", "), strings.Join(p.models, ", "))}
			}
			r.Models = both
		}
	}
	for c := range classes {
		r.Classes = append(r.Classes, c)
	}
	sort.Strings(r.Classes)
	return nil
}

// claimParts resolves every request of a claim.
func (s *Set) claimParts(c *claim, pools []cluster.PoolSpec) ([]part, []string, error) {
	var out []part
	var notes []string
	d := &c.spec.Devices
	for i := range d.Constraints {
		notes = append(notes, fmt.Sprintf("%s: devices.constraints[%d] (matchAttribute) is not modelled (line %d): the devices are taken from any GPUs of one node", c.what(), i, c.lineOf(fmt.Sprintf("%s.devices.constraints[%d]", c.at, i))))
	}
	for i, cf := range d.Config {
		what := "driver parameters"
		if cf.Opaque != nil {
			what = "driver " + strict.Quote(cf.Opaque.Driver) + "'s parameters"
		}
		notes = append(notes, fmt.Sprintf("%s: devices.config[%d] (%s; line %d) is not modelled: the devices are held whole (MPS or time-slicing set in a claim's config is not modelled)", c.what(), i, what, c.lineOf(fmt.Sprintf("%s.devices.config[%d]", c.at, i))))
	}
	if len(d.Requests) == 0 {
		notes = append(notes, fmt.Sprintf("%s asks for no device", c.what()))
	}
	for i := range d.Requests {
		rq := &d.Requests[i]
		at := fmt.Sprintf("%s.devices.requests[%d]", c.at, i)
		switch {
		case rq.Exactly != nil && len(rq.FirstAvailable) > 0:
			return nil, nil, c.errAt(at, "gives both exactly and firstAvailable; the API server wants one")
		case rq.Exactly != nil:
			p, n, err := s.exact(c, at+".exactly", rq.Exactly, pools)
			if err != nil {
				var nm errNoMatch
				if errors.As(err, &nm) {
					return nil, nil, nm.err
				}
				return nil, nil, err
			}
			notes = append(notes, n...)
			if p.count > 0 || p.milli > 0 {
				notes = append(notes, fmt.Sprintf("%s: request %s (line %d) of DeviceClass %s: taken as %s", c.what(), strict.Quote(rq.Name), c.lineOf(at), strict.Quote(rq.Exactly.DeviceClassName), p.describe()))
			}
			out = append(out, p)
		case len(rq.FirstAvailable) > 0:
			p, n, err := s.firstAvailable(c, at, rq.Name, rq.FirstAvailable, pools)
			if err != nil {
				return nil, nil, err
			}
			notes = append(notes, n...)
			out = append(out, p)
		default:
			return nil, nil, c.errAt(at, "gives neither exactly nor firstAvailable")
		}
	}
	return out, notes, nil
}

func (s *Set) firstAvailable(c *claim, at, name string, subs []resourcev1.DeviceSubRequest, pools []cluster.PoolSpec) (part, []string, error) {
	var skipped []string
	var fallback *part // the first gpuplan can place, when no pool serves any
	var fallbackAt int
	var fallbackNotes []string
	for j := range subs {
		sr := &subs[j]
		sat := fmt.Sprintf("%s.firstAvailable[%d]", at, j)
		ex := &resourcev1.ExactDeviceRequest{DeviceClassName: sr.DeviceClassName, Selectors: sr.Selectors, AllocationMode: sr.AllocationMode, Count: sr.Count, Tolerations: sr.Tolerations, Capacity: sr.Capacity}
		p, notes, err := s.exact(c, sat, ex, pools)
		var nm errNoMatch
		switch {
		case errors.As(err, &nm):
			skipped = append(skipped, fmt.Sprintf("[%d] %s: %v", j, strict.Quote(sr.Name), nm.err))
			continue
		case err != nil:
			return p, nil, err
		case len(pools) > 0 && !servable(p, pools):
			if fallback == nil {
				q := p
				fallback, fallbackAt, fallbackNotes = &q, j, notes
			}
			skipped = append(skipped, fmt.Sprintf("[%d] %s (%s): no node pool of spec.cluster has it", j, strict.Quote(sr.Name), p.describe()))
			continue
		}
		by := "the first gpuplan can place"
		if len(pools) > 0 {
			by = "the first the cluster's node pools serve"
		}
		msg := fmt.Sprintf("%s: request %s (line %d) takes firstAvailable[%d] %s, %s: %s", c.what(), strict.Quote(name), c.lineOf(sat), j, strict.Quote(sr.Name), by, p.describe())
		if len(skipped) > 0 {
			msg += "; passed over " + strings.Join(skipped, "; ")
		}
		return p, append(notes, msg), nil
	}
	if fallback != nil {
		// No pool given serves any subrequest; a provisioner (Karpenter)
		// may launch nodes that do: the first gpuplan can place.
		msg := fmt.Sprintf("%s: request %s: no node pool of spec.cluster serves any firstAvailable subrequest (%s); taken as firstAvailable[%d] %s, the first gpuplan can place (a provisioner may launch it): %s",
			c.what(), strict.Quote(name), strings.Join(skipped, "; "), fallbackAt, strict.Quote(subs[fallbackAt].Name), fallback.describe())
		return *fallback, append(fallbackNotes, msg), nil
	}
	return part{}, nil, c.errAt(at+".firstAvailable", "%s: request %s: no subrequest matches a GPU gpuplan models: %s", c.what(), strict.Quote(name), strings.Join(skipped, "; "))
}

// servable reports whether some pool has the part's devices.
func servable(p part, pools []cluster.PoolSpec) bool {
	for i := range pools {
		if poolServes(p, &pools[i]) {
			return true
		}
	}
	return false
}

func poolServes(p part, pl *cluster.PoolSpec) bool {
	if pl.GPUsPerNode == 0 || p.models != nil && !slices.Contains(p.models, pl.GPUModel) {
		return false
	}
	if p.mig != "" {
		return slices.Contains(pl.Sharing.MIGLayout, p.mig)
	}
	return pl.Sharing.MIGStrategy == "" && (p.milli > 0 || int64(pl.GPUsPerNode) >= p.count)
}

// exact resolves one device request (c nil: an extended resource's
// implicit request, errors at field at of the pod).
func (s *Set) exact(c *claim, at string, ex *resourcev1.ExactDeviceRequest, pools []cluster.PoolSpec) (part, []string, error) {
	errAt := func(field, format string, args ...any) error {
		if c == nil {
			return &FieldError{at, fmt.Sprintf(format, args...)}
		}
		return c.errAt(field, format, args...)
	}
	what := "the extended resource's claim"
	if c != nil {
		what = c.what()
	}
	var notes []string
	class := s.classes[ex.DeviceClassName]
	if class == nil {
		known := make([]string, 0, len(s.classes))
		for n := range s.classes {
			known = append(known, n)
		}
		sort.Strings(known)
		return part{}, nil, errAt(at+".deviceClassName", "%s: DeviceClass %s is defined neither in the file, nor in the scenario's policy files, nor by a driver gpuplan knows (%s)", what, strict.Quote(ex.DeviceClassName), strings.Join(known, ", "))
	}
	var sels []selector
	for i := range ex.Selectors {
		sels = append(sels, c.sel[fmt.Sprintf("%s.selectors[%d].cel.expression", at, i)])
	}
	catalog := Catalog()
	var ofClass, match []Device
	for i := range catalog {
		d := &catalog[i]
		if !all(class.sel, d) {
			continue
		}
		ofClass = append(ofClass, *d)
		if all(sels, d) {
			match = append(match, *d)
		}
	}
	if len(ofClass) == 0 {
		// Not a GPU gpuplan knows: nothing GPU-bearing to drop.
		notes = append(notes, fmt.Sprintf("%s: DeviceClass %s (%s) selects no GPU gpuplan models (drivers %s, %s): its devices are not modelled, the pod runs without them", what, strict.Quote(class.Name), class.where, DriverNVIDIA, DriverExample))
		return part{class: class.Name}, notes, nil
	}
	if len(match) == 0 {
		src := make([]string, len(sels))
		for i, sl := range sels {
			src[i] = strict.Quote(sl.src)
		}
		field := at + ".selectors"
		if len(sels) > 0 {
			field = sels[0].field
		}
		return part{}, nil, errNoMatch{errAt(field, "%s: selector %s matches none of the %d devices of DeviceClass %s gpuplan models (%s)", what, strings.Join(src, " && "), len(ofClass), strict.Quote(class.Name), offer(ofClass))}
	}
	p := part{class: class.Name}
	migs := map[string]bool{}
	whole := false
	anyModel := false
	for _, d := range match {
		if d.MIG != "" {
			migs[d.MIG] = true
		} else {
			whole = true
		}
		if d.Model == "" {
			anyModel = true
		} else if !slices.Contains(p.models, d.Model) {
			p.models = append(p.models, d.Model)
		}
	}
	sort.Strings(p.models)
	field := at + ".deviceClassName"
	if len(sels) > 0 {
		field = sels[0].field
	}
	switch {
	case whole && len(migs) > 0:
		return part{}, nil, errAt(field, "%s: the request matches whole GPUs and MIG instances; gpuplan gives a pod one kind (select type \"gpu\" or \"mig\", or use DeviceClass gpu.nvidia.com or mig.nvidia.com)", what)
	case len(migs) > 1:
		return part{}, nil, errAt(field, "%s: the request matches MIG profiles %s; gpuplan places one profile per pod: select one (device.attributes[\"gpu.nvidia.com\"].profile == \"...\")", what, strings.Join(sortedKeys(migs), ", "))
	case len(migs) == 1:
		p.mig = sortedKeys(migs)[0]
	}
	// Models: nil when the request narrows nothing the pod's kind does not
	// already (every model with its MIG profile, or every whole GPU).
	if anyModel || narrowsNothing(catalog, p) {
		p.models = nil
	}
	switch ex.AllocationMode {
	case "", resourcev1.DeviceAllocationModeExactCount:
		p.count = ex.Count
		if p.count == 0 {
			p.count = 1 // the API server's default
		}
		if p.count < 0 || p.count > cluster.MaxGPUsPerNode {
			return part{}, nil, errAt(at+".count", "%s: count %d is outside 1..%d", what, p.count, cluster.MaxGPUsPerNode)
		}
	case resourcev1.DeviceAllocationModeAll:
		if p.mig != "" {
			return part{}, nil, errAt(at+".allocationMode", "%s: allocationMode All over MIG instances is not modelled; give a count", what)
		}
		if len(pools) == 0 {
			return part{}, nil, errAt(at+".allocationMode", "%s: allocationMode All takes every matching GPU of the node, which needs the cluster's node pools (spec.cluster.pools): give the file in a scenario's spec.workload.manifests with them", what)
		}
		counts := map[int32][]string{}
		for i := range pools {
			pl := &pools[i]
			if pl.GPUsPerNode > 0 && pl.Sharing.MIGStrategy == "" && (p.models == nil || slices.Contains(p.models, pl.GPUModel)) {
				counts[pl.GPUsPerNode] = append(counts[pl.GPUsPerNode], pl.Name)
			}
		}
		if len(counts) != 1 {
			var ws []string
			for n, ps := range counts {
				ws = append(ws, fmt.Sprintf("%d in %s", n, strings.Join(ps, ", ")))
			}
			sort.Strings(ws)
			return part{}, nil, errAt(at+".allocationMode", "%s: allocationMode All: the matching node pools have different GPUs per node (%s), and a pod asks for one number here: give a count, or select one pool's model", what, orNone(ws))
		}
		for n := range counts {
			p.count = int64(n)
		}
		notes = append(notes, fmt.Sprintf("%s: allocationMode All (line %d) taken as the %d matching GPUs of a node", what, lineOr(c, at+".allocationMode"), p.count))
	default:
		return part{}, nil, errAt(at+".allocationMode", "%s: allocationMode %s is not ExactCount or All", what, strict.Quote(string(ex.AllocationMode)))
	}
	if ex.AdminAccess != nil && *ex.AdminAccess {
		notes = append(notes, fmt.Sprintf("%s: adminAccess (line %d): the devices are reached without being allocated; taken as holding none", what, lineOr(c, at+".adminAccess")))
		return part{class: class.Name}, notes, nil
	}
	if len(ex.Tolerations) > 0 {
		notes = append(notes, fmt.Sprintf("%s: tolerations (line %d): device taints are not modelled, so they tolerate nothing", what, lineOr(c, at+".tolerations")))
	}
	if ex.Capacity != nil && len(ex.Capacity.Requests) > 0 {
		if err := s.share(&p, match, ex, what, at, errAt); err != nil {
			return part{}, nil, err
		}
		notes = append(notes, fmt.Sprintf("%s: capacity request (line %d): consumable capacity %s of a device: taken as %s (gpuplan shares a GPU by milli-GPU; memory is checked on time-sliced GPUs only)",
			what, lineOr(c, at+".capacity.requests"), capText(ex), p.describe()))
	}
	return p, notes, nil
}

func orNone(ws []string) string {
	if len(ws) == 0 {
		return "none has such GPUs"
	}
	return strings.Join(ws, "; ")
}

func capText(ex *resourcev1.ExactDeviceRequest) string {
	var ws []string
	for k, q := range ex.Capacity.Requests {
		ws = append(ws, fmt.Sprintf("%s: %s", k, q.String()))
	}
	sort.Strings(ws)
	return strings.Join(ws, ", ")
}

func lineOr(c *claim, field string) int {
	if c == nil {
		return 0
	}
	return c.lineOf(field)
}

// share turns a consumable-capacity request (the device's memory) into a
// share of one GPU: the request over the smallest memory of the matching
// devices, rounded up to a milli-GPU.
func (s *Set) share(p *part, match []Device, ex *resourcev1.ExactDeviceRequest, what, at string, errAt func(string, string, ...any) error) error {
	field := at + ".capacity.requests"
	if p.mig != "" {
		return errAt(field, "%s: consumable capacity of MIG instances is not modelled", what)
	}
	if p.count != 1 {
		return errAt(field, "%s: consumable capacity with count %d is not modelled; ask for a share of one device", what, p.count)
	}
	driver := match[0].Driver
	var memMiB int64
	keys := make([]string, 0, len(ex.Capacity.Requests))
	for k := range ex.Capacity.Requests {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, k := range keys {
		q := ex.Capacity.Requests[resourcev1.QualifiedName(k)]
		if string(k) != "memory" && string(k) != driver+"/memory" {
			return errAt(fmt.Sprintf("%s[%q]", field, string(k)), "%s: gpuplan shares a device by its memory (%s/memory) only", what, driver)
		}
		v, err := strict.MemoryMiB(q)
		if err != nil || v <= 0 {
			return errAt(fmt.Sprintf("%s[%q]", field, string(k)), "%s: %s is not a positive memory size", what, strict.Quote(q.String()))
		}
		memMiB = v
	}
	var devMiB int64
	for _, d := range match {
		q, ok := d.Capacity["memory"]
		if !ok {
			return errAt(field, "%s: the devices publish no memory capacity gpuplan knows", what)
		}
		v := q.Value() >> 20
		if devMiB == 0 || v < devMiB {
			devMiB = v
		}
	}
	if memMiB > devMiB {
		return errAt(field, "%s: %d MiB is more than the %d MiB of the smallest matching device", what, memMiB, devMiB)
	}
	milli := (memMiB*cluster.MilliGPU + devMiB - 1) / devMiB
	if milli >= cluster.MilliGPU {
		p.count = 1
		return nil
	}
	p.count, p.milli, p.memMiB = 0, int32(milli), memMiB
	return nil
}

// narrowsNothing reports whether the part's models are every model with
// devices of its kind (whole GPUs, or its MIG profile): the pod's request
// alone already keeps it there.
func narrowsNothing(catalog []Device, p part) bool {
	for i := range catalog {
		d := &catalog[i]
		if d.MIG != p.mig || d.Model == "" {
			continue
		}
		if !slices.Contains(p.models, d.Model) {
			return false
		}
	}
	return true
}

// all reports whether every selector holds for the device (an error, such
// as a missing attribute, is no match).
func all(sels []selector, d *Device) bool {
	for _, s := range sels {
		v := s.e.eval(d)
		if v.kind != 'b' || !v.b {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// offer lists what the class's devices are: products and MIG profiles.
func offer(ds []Device) string {
	prod, mig := map[string]bool{}, map[string]bool{}
	for _, d := range ds {
		if v, ok := d.Attributes["productName"]; ok {
			prod[v.s] = true
		} else if d.Model != "" {
			prod["model "+d.Model] = true
		} else {
			prod["the "+d.Driver+" driver's GPU"] = true
		}
		if d.MIG != "" {
			mig[d.MIG] = true
		}
	}
	w := "products " + strings.Join(sortedKeys(prod), ", ")
	if len(mig) > 0 {
		w += "; MIG profiles " + strings.Join(sortedKeys(mig), ", ")
	}
	return w
}
