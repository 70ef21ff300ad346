package dra

import (
	"fmt"
	"sort"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"gpuplan.dev/gpuplan/validate/strict"
)

// APIVersion is the DRA API gpuplan reads (GA since Kubernetes 1.34).
const APIVersion = "resource.k8s.io/v1"

// Kinds are the DRA kinds Read takes.
var Kinds = []string{"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"}

// IsDRA reports whether a document's apiVersion is DRA's group
// (resource.k8s.io, any version).
func IsDRA(apiVersion string) bool {
	g, _, _ := strings.Cut(apiVersion, "/")
	return g == "resource.k8s.io"
}

// Class is a DeviceClass: its selectors, parsed, and its extended
// resource name.
type Class struct {
	Name             string
	ExtendedResource string
	// Builtin: one of the driver-installed classes gpuplan knows, not
	// read from a file.
	Builtin bool
	sel     []selector
	where   string // file:line, or where the built-in comes from
	// file and line are where a class read from a file is defined; spec
	// is what it says, to tell two definitions of one name apart.
	file string
	line int
	spec resourcev1.DeviceClassSpec
}

type selector struct {
	src string
	e   expr
	// at is where the expression is, for errors and notes.
	file  string
	line  int
	col   int
	field string
}

func (s selector) errf(format string, args ...any) error {
	return &strict.InputError{File: s.file, Line: s.line, Column: s.col, Field: s.field, Msg: fmt.Sprintf(format, args...)}
}

// claim is a ResourceClaim or a ResourceClaimTemplate's claim spec.
type claim struct {
	kind, name, namespace string
	spec                  *resourcev1.ResourceClaimSpec
	file                  string
	line                  int
	pos                   strict.Positions
	at                    string // the spec's path: "spec" or "spec.spec"
	sel                   map[string]selector
}

func (c *claim) errAt(field, format string, args ...any) error {
	e := &strict.InputError{File: c.file, Line: c.line, Field: field, Msg: fmt.Sprintf(format, args...)}
	if p, ok := c.pos[field]; ok {
		e.Line, e.Column = p[0], p[1]
	}
	return e
}

func (c *claim) lineOf(field string) int {
	if p, ok := c.pos[field]; ok {
		return p[0]
	}
	return c.line
}

func (c *claim) what() string {
	return fmt.Sprintf("%s %s (%s:%d)", c.kind, strict.Quote(c.name), c.file, c.line)
}

// Set is the DRA objects of a manifest file, beside the DeviceClasses the
// drivers gpuplan models install.
type Set struct {
	classes   map[string]*Class
	claims    map[string]*claim // by namespace/name
	templates map[string]*claim
	// channels are the ComputeDomains' channel templates, by
	// namespace/template name.
	channels map[string]*domain
	// Notes name what the objects say that gpuplan reads but does not
	// model, each with its line.
	Notes []string
}

// Builtin DeviceClasses: those NVIDIA's DRA driver installs (its Helm
// chart's deviceclass-gpu.yaml and deviceclass-mig.yaml at
// NVIDIA/k8s-dra-driver-gpu 22407113785e, selecting by the driver and the
// device's type attribute; the chart also gives gpu.nvidia.com
// extendedResourceName nvidia.com/gpu on resource.k8s.io/v1, left out
// here: nvidia.com/gpu stays the device plugin's, which places the same
// whole GPUs) and the example driver's gpu.example.com with the extended
// resource Kueue's "Set Up Dynamic Resource Allocation" page gives it.
var builtin = []struct{ name, expr, ext, where string }{
	{"gpu.nvidia.com", `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`, "", "NVIDIA's DRA driver (k8s-dra-driver-gpu)"},
	{"mig.nvidia.com", `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'`, "", "NVIDIA's DRA driver (k8s-dra-driver-gpu)"},
	{"gpu.example.com", `device.driver == "gpu.example.com"`, "example.com/gpu", "the DRA example driver, as Kueue's setup_dra page configures it"},
}

// NewSet is a set with the built-in classes only.
func NewSet() *Set {
	s := &Set{classes: map[string]*Class{}, claims: map[string]*claim{}, templates: map[string]*claim{}, channels: map[string]*domain{}}
	for _, b := range builtin {
		e, err := parseCEL(b.expr)
		if err != nil {
			panic(err) // the table above is wrong
		}
		s.classes[b.name] = &Class{Name: b.name, ExtendedResource: b.ext, Builtin: true, where: b.where,
			sel: []selector{{src: b.expr, e: e, file: b.where, field: "spec.selectors[0].cel.expression"}}}
	}
	return s
}

func key(namespace, name string) string { return namespace + "/" + name }

// AddClasses gives s the DeviceClasses of other that s's own file does not
// define (the other files of one workload's list: a cluster's DeviceClasses
// in their own file, before the objects that name them).
func (s *Set) AddClasses(other *Set) {
	if other == nil {
		return
	}
	for name, c := range other.classes {
		if old, ok := s.classes[name]; c.Builtin || ok && !old.Builtin {
			continue
		}
		s.classes[name] = c
	}
}

// UseCluster gives s the cluster's DeviceClasses (those of a scenario's
// policy files, read with Read): a claim naming one resolves to it, its
// selectors ANDed with the request's as the Kubernetes allocator does. A
// cluster class replaces a built-in class of its name, as the cluster's
// own object does. A cluster has one DeviceClass of a name, so a class the
// workload's files define too must say the same (the same spec): then
// either is the one; different specs are an input error at the workload
// file's definition, naming the other, as gpuplan cannot tell which one
// the cluster holds (kubectl apply keeps whichever was applied last).
func (s *Set) UseCluster(cluster *Set) error {

	if cluster == nil {
		return nil
	}
	names := make([]string, 0, len(cluster.classes))
	for n, c := range cluster.classes {
		if !c.Builtin {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		c := cluster.classes[n]
		if old, ok := s.classes[n]; ok && !old.Builtin {
			if !equality.Semantic.DeepEqual(old.spec, c.spec) {
				return &strict.InputError{File: old.file, Line: old.line, Field: "spec", Msg: fmt.Sprintf("DeviceClass %s is defined here and, with a different spec, in the policy (%s); a cluster holds one DeviceClass of a name (the last applied): give it once, or the same in both", strict.Quote(n), c.where)}
			}
			continue
		}
		s.classes[n] = c
	}
	return nil
}

// Read decodes the file's DRA documents (resource.k8s.io/v1 DeviceClass,
// ResourceClaim, ResourceClaimTemplate, ResourceSlice) strictly into
// k8s.io/api's types, parsing every CEL selector; any other DRA version
// is refused. Documents of other groups are left alone.
func Read(file string, docs []strict.Manifest) (*Set, error) {
	s := NewSet()
	for _, m := range docs {
		if IsComputeDomain(m.APIVersion, m.Kind) {
			if err := s.readComputeDomain(file, m); err != nil {
				return nil, err
			}
			continue
		}
		if !IsDRA(m.APIVersion) {
			continue
		}
		if m.APIVersion != APIVersion {
			return nil, &strict.InputError{File: file, Line: m.Line, Field: "apiVersion", Msg: fmt.Sprintf("%s %s: gpuplan reads DRA objects as %s (GA since Kubernetes 1.34)", strict.Quote(m.APIVersion), m.Kind, APIVersion)}
		}
		opt := strict.Options{What: "a DRA object"}
		switch m.Kind {
		case "DeviceClass":
			var dc resourcev1.DeviceClass
			pos, err := m.Decode(file, &dc, opt)
			if err != nil {
				return nil, err
			}
			c, err := s.readClass(file, m.Line, pos, &dc)
			if err != nil {
				return nil, err
			}
			if old, ok := s.classes[c.Name]; ok && !old.Builtin {
				return nil, &strict.InputError{File: file, Line: m.Line, Field: "metadata.name", Msg: fmt.Sprintf("DeviceClass %s is defined twice (first at %s)", strict.Quote(c.Name), old.where)}
			}
			s.classes[c.Name] = c
		case "ResourceClaim":
			var rc resourcev1.ResourceClaim
			pos, err := m.Decode(file, &rc, opt)
			if err != nil {
				return nil, err
			}
			c := &claim{kind: m.Kind, name: rc.Name, namespace: rc.Namespace, spec: &rc.Spec, file: file, line: m.Line, pos: pos, at: "spec"}
			if err := s.add(s.claims, c); err != nil {
				return nil, err
			}
		case "ResourceClaimTemplate":
			var rt resourcev1.ResourceClaimTemplate
			pos, err := m.Decode(file, &rt, opt)
			if err != nil {
				return nil, err
			}
			c := &claim{kind: m.Kind, name: rt.Name, namespace: rt.Namespace, spec: &rt.Spec.Spec, file: file, line: m.Line, pos: pos, at: "spec.spec"}
			if err := s.add(s.templates, c); err != nil {
				return nil, err
			}
		case "ResourceSlice":
			var sl resourcev1.ResourceSlice
			if _, err := m.Decode(file, &sl, opt); err != nil {
				return nil, err
			}
			s.Notes = append(s.Notes, fmt.Sprintf("%s:%d: ResourceSlice %s (driver %s, %d devices) is read but not used: the devices claims are allocated from are the GPUs of spec.cluster's node pools, as their driver would publish them",
				file, m.Line, strict.Quote(sl.Name), strict.Quote(sl.Spec.Driver), len(sl.Spec.Devices)))
		default:
			return nil, &strict.InputError{File: file, Line: m.Line, Field: "kind", Msg: fmt.Sprintf("%s %s is not a DRA kind gpuplan reads (it reads %s)", m.APIVersion, strict.Quote(m.Kind), strings.Join(Kinds, ", "))}
		}
	}
	return s, nil
}

func (s *Set) add(into map[string]*claim, c *claim) error {
	if c.name == "" {
		return c.errAt("metadata.name", "a %s needs a name (pods name it)", c.kind)
	}
	k := key(c.namespace, c.name)
	if old, ok := into[k]; ok {
		return c.errAt("metadata.name", "%s %s is defined twice (first at %s:%d)", c.kind, strict.Quote(c.name), old.file, old.line)
	}
	if err := s.parseSelectors(c); err != nil {
		return err
	}
	into[k] = c
	return nil
}

func (s *Set) readClass(file string, line int, pos strict.Positions, dc *resourcev1.DeviceClass) (*Class, error) {
	c := &Class{Name: dc.Name, where: fmt.Sprintf("%s:%d", file, line), file: file, line: line, spec: *dc.Spec.DeepCopy()}
	if dc.Spec.ExtendedResourceName != nil {
		c.ExtendedResource = *dc.Spec.ExtendedResourceName
	}
	errAt := func(field, format string, args ...any) error {
		e := &strict.InputError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
		if p, ok := pos[field]; ok {
			e.Line, e.Column = p[0], p[1]
		}
		return e
	}
	if c.Name == "" {
		return nil, errAt("metadata.name", "a DeviceClass needs a name (claims name it)")
	}
	for i, sel := range dc.Spec.Selectors {
		field := fmt.Sprintf("spec.selectors[%d]", i)
		if sel.CEL == nil {
			return nil, errAt(field, "a selector needs cel")
		}
		field += ".cel.expression"
		e, err := parseCEL(sel.CEL.Expression)
		if err != nil {
			return nil, errAt(field, "DeviceClass %s: selector %s: %v", strict.Quote(c.Name), strict.Quote(sel.CEL.Expression), err)
		}
		p := pos[field]
		c.sel = append(c.sel, selector{src: sel.CEL.Expression, e: e, file: file, line: max(p[0], line), col: p[1], field: field})
	}
	for i := range dc.Spec.Config {
		s.Notes = append(s.Notes, fmt.Sprintf("%s:%d: DeviceClass %s: spec.config[%d] (driver parameters) is not modelled: the class's devices are held whole",
			file, lineAt(pos, fmt.Sprintf("spec.config[%d]", i), line), strict.Quote(c.Name), i))
	}
	return c, nil
}

func lineAt(pos strict.Positions, field string, def int) int {
	if p, ok := pos[field]; ok {
		return p[0]
	}
	return def
}

// parseSelectors parses every CEL selector of a claim (its requests' and
// firstAvailable subrequests'), refusing one outside the subset at its
// field.
func (s *Set) parseSelectors(c *claim) error {
	c.sel = map[string]selector{}
	do := func(at string, sels []resourcev1.DeviceSelector) error {
		for i, sel := range sels {
			field := fmt.Sprintf("%s.selectors[%d]", at, i)
			if sel.CEL == nil {
				return c.errAt(field, "a selector needs cel")
			}
			field += ".cel.expression"
			e, err := parseCEL(sel.CEL.Expression)
			if err != nil {
				return c.errAt(field, "%s: selector %s: %v", c.what(), strict.Quote(sel.CEL.Expression), err)
			}
			p := c.pos[field]
			c.sel[field] = selector{src: sel.CEL.Expression, e: e, file: c.file, line: max(p[0], c.line), col: p[1], field: field}
		}
		return nil
	}
	for i, r := range c.spec.Devices.Requests {
		at := fmt.Sprintf("%s.devices.requests[%d]", c.at, i)
		if r.Exactly != nil {
			if err := do(at+".exactly", r.Exactly.Selectors); err != nil {
				return err
			}
		}
		for j, sr := range r.FirstAvailable {
			if err := do(fmt.Sprintf("%s.firstAvailable[%d]", at, j), sr.Selectors); err != nil {
				return err
			}
		}
	}
	return nil
}

// ExtendedResources maps the extended resource names DeviceClasses back
// (spec.extendedResourceName) to their classes.
func (s *Set) ExtendedResources() map[string]string {
	out := map[string]string{}
	names := make([]string, 0, len(s.classes))
	for n := range s.classes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if r := s.classes[n].ExtendedResource; r != "" {
			if _, ok := out[r]; !ok {
				out[r] = n
			}
		}
	}
	return out
}
