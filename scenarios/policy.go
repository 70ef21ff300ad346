package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuecfgv1beta1 "sigs.k8s.io/kueue/apis/config/v1beta1"
	kueuecfg "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/scenarios/catalog/karpenter"
	"gpuplan.dev/gpuplan/scenarios/kube/crds"
	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Policy is an admission policy read from Kubernetes manifests.
type Policy struct {
	Spec admission.Spec
	// overlays are the Karpenter NodeOverlays read, highest weight first;
	// they price the offerings of the policy's NodePools.
	overlays []nodeOverlay
	// PriorityClasses are the values of the PriorityClasses and Kueue
	// WorkloadPriorityClasses read, by name.
	PriorityClasses map[string]int32
	// PreemptNever names the PriorityClasses with preemptionPolicy Never.
	PreemptNever map[string]bool
	// LocalQueueNamespaces gives each LocalQueue's namespace, by its name
	// in Spec.LocalQueues: the LocalQueue's own name, or
	// "namespace/name" for a name defined in several namespaces (Kueue
	// keys LocalQueues by namespace and name; see LocalQueueName).
	LocalQueueNamespaces map[string]string
	// WorkloadPriorityClasses names the PriorityClasses read that are
	// Kueue WorkloadPriorityClasses.
	WorkloadPriorityClasses map[string]bool
	// DeviceClassMappings are a Kueue Configuration's
	// resources.deviceClassMappings: the quota resource each DRA
	// DeviceClass's devices are charged as (nil: none given).
	DeviceClassMappings map[string]string
	// DeviceClasses are the DRA DeviceClasses (resource.k8s.io/v1) of
	// the policy's files, as read, in order: the cluster's classes, which
	// gpuplan manifests writes back. The workload's claims resolve against
	// them (Devices) beside their own files' and the drivers' built-in
	// ones.
	DeviceClasses []resourcev1.DeviceClass
	// Devices holds the same classes parsed (their CEL selectors), for
	// the workload's claims (dra.Set.UseCluster); nil: none given.
	Devices *dra.Set
	// Notes name every field read but not modelled, and every object
	// skipped, each with its file and line.
	Notes []string
	// Files are the manifest files read, in order.
	Files       []string
	cohorts     map[string]cohortDef
	cohortOrder []string
	// NodePools are the Karpenter NodePools read, as scenario NodePools;
	// StaticPools the static ones (spec.replicas), as fixed pools;
	// NodeClasses the EC2NodeClasses read (nothing in them is modelled).
	NodePools   []NodePoolSpec
	StaticPools []PoolSpec
	NodeClasses []string
	// npClass is each NodePool's EC2NodeClass (NodePools' order), and
	// classReservations the capacity reservations an EC2NodeClass's
	// capacityReservationSelectorTerms carry gpuplan's tags for
	// (reservations.go), given to its NodePools once all are read.
	npClass           []string
	npReserved        [][]string
	classReservations map[string][]classReservation
	// staticReserved are the static NodePools of reserved capacity, given
	// their reservations (and a block's window) once all are read.
	staticReserved []staticReserved
	// lqNamespaces is each LocalQueue's namespace, in Spec.LocalQueues'
	// order.
	lqNamespaces []string
	// Volcano are the Volcano Queues read; they become ClusterQueues once
	// the cluster's size is known (VolcanoSpec).
	Volcano []VolcanoQueue
	// VolcanoScheduler is the Volcano scheduler's configuration, when a
	// volcano-scheduler.conf was read (nil: Volcano's defaults).
	VolcanoScheduler *VolcanoSchedulerConf
	// topologies are the Kueue Topologies read (tas.go), tasFlavors
	// the ResourceFlavors that name one.
	topologies map[string]kueueTopology
	tasFlavors []tasFlavor
	// HyperNodes are the Volcano HyperNodes read (hypernode.go).
	HyperNodes []cluster.HyperNode
	// weighted names a ClusterQueue with a fair-sharing weight.
	weighted string
	// defs are where each ResourceFlavor, ClusterQueue and LocalQueue is
	// defined (by kind and name), lqDocs each LocalQueue's document (in
	// Spec.LocalQueues' order), flavorRefs the flavors ClusterQueues name:
	// errors about them name their lines.
	defs       map[string]policyDoc
	lqDocs     []policyDoc
	flavorRefs []flavorRef
}

// flavorRef is a ClusterQueue's use of a ResourceFlavor, at path in d.
type flavorRef struct {
	d            policyDoc
	path, flavor string
}

// policyDoc is one YAML document of a manifest file.
type policyDoc struct {
	file string
	line int
	// data is the document's YAML when it is not root's (an item of a
	// List); else it is written from root when a reader decodes the
	// document (bytes): a policy's documents are not all decoded.
	data []byte
	tm   metav1.TypeMeta
	root *yamlv3.Node
}

// LoadPolicy reads multi-document YAML manifests (files, or folders whose
// .yaml and .yml files are read in name order) of Kueue ResourceFlavors,
// ClusterQueues, LocalQueues, Cohorts and WorkloadPriorityClasses
// (v1beta1 or v1beta2), PriorityClasses, Karpenter NodePools and Kueue's
// Configuration (alone or in a ConfigMap: its fairSharing), each decoded
// strictly into its project's Go type, and Volcano Queues; other kinds are
// listed in Notes as not read.
func LoadPolicy(paths []string) (*Policy, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, &InputError{File: p, Msg: "cannot read the policy: " + strings.TrimPrefix(err.Error(), "stat "+p+": ")}
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		var in []string
		for _, pat := range []string{"*.yaml", "*.yml"} {
			m, _ := filepath.Glob(filepath.Join(p, pat))
			in = append(in, m...)
		}
		sort.Strings(in)
		if len(in) == 0 {
			return nil, &InputError{File: p, Msg: "the policy folder has no .yaml or .yml files"}
		}
		files = append(files, in...)
	}
	pol := &Policy{PriorityClasses: map[string]int32{}, PreemptNever: map[string]bool{}, Files: files}
	var docs []policyDoc
	for _, f := range files {
		b, err := readWholeBounded(f)
		if err != nil {
			return nil, err
		}
		ds, err := splitManifests(f, b)
		if err != nil {
			return nil, err
		}
		docs = append(docs, ds...)
	}
	if err := pol.read(docs); err != nil {
		return nil, err
	}
	if err := volcanoParentCycle(pol.Volcano); err != nil {
		return nil, err
	}
	return pol, nil
}

// ParsePolicy reads one manifest file's bytes as a policy.
func ParsePolicy(file string, data []byte) (*Policy, error) {
	docs, err := splitManifests(file, data)
	if err != nil {
		return nil, err
	}
	pol := &Policy{PriorityClasses: map[string]int32{}, PreemptNever: map[string]bool{}, Files: []string{file}}
	if err := pol.read(docs); err != nil {
		return nil, err
	}
	return pol, nil
}

// splitManifests splits a file into its YAML documents with their lines.
func splitManifests(file string, data []byte) ([]policyDoc, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var out []policyDoc
	for {
		var n yamlv3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, strict.SyntaxError(file, err)
		}
		if len(n.Content) == 0 || n.Content[0].Kind == yamlv3.ScalarNode && n.Content[0].Tag == "!!null" {
			continue // an empty document
		}
		root := n.Content[0]
		if root.Kind != yamlv3.MappingNode {
			return nil, inputErr(file, root.Line, "", "a manifest is a mapping with apiVersion and kind")
		}
		if x, path := strict.FindNonFinite(root, ""); x != nil {
			// JSON, which decoding goes through, has no infinities or NaN.
			return nil, &InputError{File: file, Line: x.Line, Column: x.Column, Field: path, Msg: Quote(x.Value) + " is not a finite number"}
		}
		strict.QuoteYAML11Bools(root) // names and label values as YAML 1.2 reads them
		d := policyDoc{file: file, line: root.Line, root: root}
		d.tm.APIVersion, d.tm.Kind = scalarValue(root, "apiVersion"), scalarValue(root, "kind")
		if d.tm.APIVersion == "" || d.tm.Kind == "" {
			return nil, inputErr(file, root.Line, "", "a manifest needs apiVersion and kind")
		}
		out = append(out, d)
	}
}

// scalarValue is the string a mapping gives key, "" when it gives none
// or not a string (a manifest's TypeMeta, read from the node: decoding
// the document again for two fields was most of a large policy's load).
func scalarValue(m *yamlv3.Node, key string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k, v := m.Content[i], m.Content[i+1]; k.Value == key && v.Kind == yamlv3.ScalarNode && v.Tag == "!!str" {
			return v.Value
		}
	}
	return ""
}

func (d policyDoc) errorf(format string, args ...any) *InputError {
	return inputErr(d.file, d.line, d.tm.Kind, format, args...)
}

func (d policyDoc) where(name string) string {
	return fmt.Sprintf("%s:%d: %s %s", d.file, d.line, d.tm.Kind, name)
}

// bytes is the document's YAML.
func (d policyDoc) bytes() ([]byte, error) {
	if d.data != nil {
		return d.data, nil
	}
	b, err := yamlv3.Marshal(d.root)
	if err != nil {
		return nil, inputErr(d.file, d.line, "", "%v", err)
	}
	return b, nil
}

// decode reads a document into out (not strictly: the fields of a newer
// version read as an older one).
func (d policyDoc) decode(out any) error {
	b, err := d.bytes()
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		return d.errorf("%v", strict.Shorten(err.Error()))
	}
	return nil
}

// strict decodes a document into out, naming an unknown field.
func (d policyDoc) strict(out any) error {
	data, err := d.bytes()
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: while decoding JSON: ")
		if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			// The walker names it at its own line and full path (not the
			// first key of that name, apiVersion at line 1).
			name := strings.Trim(f, `"`)
			if d.root != nil {
				w := strict.Walker{File: d.file, Pos: strict.Positions{}, Opts: scenarioOptions()}
				var ie *InputError
				if err := w.Walk(d.root, reflect.TypeOf(out).Elem(), ""); errors.As(err, &ie) && strings.HasSuffix(ie.Field, name) {
					if strings.HasPrefix(d.tm.APIVersion, "kueue.x-k8s.io/") {
						return inputErr(d.file, ie.Line, d.tm.Kind, "unknown field %s: %s", Quote(ie.Field), kueueUnknownField(kueueLaterFields, d.tm.APIVersion, d.tm.Kind, ie.Field))
					}
					return inputErr(d.file, ie.Line, d.tm.Kind, "unknown field %s", Quote(ie.Field))
				}
			}
			if path, line := findKey(d.root, name, ""); line > 0 {
				return inputErr(d.file, line, d.tm.Kind, "unknown field %s", Quote(path))
			}
			return d.errorf("unknown field %s", Quote(name))
		}
		return d.locate(out, strings.TrimPrefix(msg, "json: "))
	}
	return nil
}

// locate places a decoding error of out at its line and field: the
// scenario walker checked against out's type finds a mistyped value or a
// malformed quantity; else the value the message quotes (a duration
// "5min") is looked up; else it is at the document's line. The message
// carries at most a few hundred bytes of the input.
func (d policyDoc) locate(out any, msg string) error {
	msg = strict.Shorten(msg)
	if d.root == nil {
		return d.errorf("%s", msg)
	}
	w := strict.Walker{File: d.file, Pos: strict.Positions{}, Opts: scenarioOptions()}
	if err := w.Walk(d.root, reflect.TypeOf(out).Elem(), ""); err != nil {
		if ie, ok := err.(*InputError); ok {
			ie.Msg = d.tm.Kind + ": " + ie.Msg
		}
		return err
	}
	if v, ok := strict.LastQuoted(msg); ok {
		if n, path := strict.FindScalar(d.root, v, ""); n != nil {
			return &InputError{File: d.file, Line: n.Line, Column: n.Column, Field: path, Msg: d.tm.Kind + ": " + msg}
		}
	}
	return d.errorf("%s", msg)
}

// findKey finds the first mapping key called name, depth first, with its
// dotted path and line.
func findKey(n *yamlv3.Node, name, path string) (string, int) {
	if n == nil {
		return "", 0
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if k.Value == name {
				return p, k.Line
			}
			if fp, l := findKey(n.Content[i+1], name, p); l > 0 {
				return fp, l
			}
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			if fp, l := findKey(c, name, fmt.Sprintf("%s[%d]", path, i)); l > 0 {
				return fp, l
			}
		}
	}
	return "", 0
}

// notModelled notes fields a type knows that the simulation ignores.
func (p *Policy) notModelled(d policyDoc, name string, fields ...string) {
	for _, f := range fields {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: %s is read but not modelled", d.where(name), f))
	}
}

const (
	kueueV1alpha1 = "kueue.x-k8s.io/v1alpha1"
	kueueV1beta1  = "kueue.x-k8s.io/v1beta1"
	kueueV1beta2  = "kueue.x-k8s.io/v1beta2"
)

// readVersions are the apiVersions gpuplan reads of each kind it reads.
var readVersions = map[string][]string{
	"ResourceFlavor":        {kueueV1beta1, kueueV1beta2},
	"Topology":              {kueueV1beta1, kueueV1beta2},
	"ClusterQueue":          {kueueV1beta1, kueueV1beta2},
	"LocalQueue":            {kueueV1beta1, kueueV1beta2},
	"Cohort":                {kueueV1alpha1, kueueV1beta1, kueueV1beta2},
	"WorkloadPriorityClass": {kueueV1beta1, kueueV1beta2},
	"Configuration":         {kueueConfigV1beta1, kueueConfigV1beta2},
	"ConfigMap":             {"v1"},
	"List":                  {"v1"},
	"NodePool":              {"karpenter.sh/v1"},
	"NodeOverlay":           {"karpenter.sh/v1alpha1"},
	"EC2NodeClass":          {"karpenter.k8s.aws/v1"},
	"Queue":                 {volcanoAPI},
	"HyperNode":             {hyperNodeAPI},
	"PriorityClass":         {"scheduling.k8s.io/v1"},
}

// kueueKinds are the kinds only Kueue defines.
var kueueKinds = map[string]bool{"Topology": true, "ResourceFlavor": true, "ClusterQueue": true, "LocalQueue": true, "Cohort": true, "WorkloadPriorityClass": true}

func apiGroup(apiVersion string) string {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// checkAPIVersion refuses a kind gpuplan reads given at an apiVersion it
// does not read (kueue.x-k8s.io/v1 for a ClusterQueue, say): skipping it
// would leave the policy without it and blame whatever refers to it.
// Kinds other projects also define (a Queue, a NodePool) under another
// group are noted as not read instead.
func checkAPIVersion(d policyDoc) error {
	kind, api := d.tm.Kind, d.tm.APIVersion
	versions, ok := readVersions[kind]
	if !ok || slices.Contains(versions, api) {
		return nil
	}
	known := kueueKinds[kind]
	for _, v := range versions {
		known = known || apiGroup(v) == apiGroup(api)
	}
	if !known {
		return nil
	}
	return d.fieldErr("apiVersion", "%s is not an apiVersion gpuplan reads for a %s (it reads %s)", Quote(api), kind, strings.Join(versions, ", "))
}

// define records where a ResourceFlavor, ClusterQueue or LocalQueue is
// defined, refusing a second of the same kind and name.
func (p *Policy) define(d policyDoc, name string) error {
	if name == "" {
		return d.fieldErr("metadata.name", "a %s needs a name", d.tm.Kind)
	}
	key := d.tm.Kind + "/" + name
	if prev, dup := p.defs[key]; dup {
		return d.fieldErr("metadata.name", "%s %s is defined twice (first at %s:%d)", d.tm.Kind, Quote(name), prev.file, prev.line)
	}
	p.defs[key] = d
	return nil
}

// cohortDef is a Cohort object: its parent and the quota it holds.
type cohortDef struct {
	parent string
	groups []admission.ResourceGroup
	where  string
	weight int64
}

func (p *Policy) read(docs []policyDoc) error {
	if p.cohorts == nil {
		p.cohorts = map[string]cohortDef{}
	}
	if p.defs == nil {
		p.defs = map[string]policyDoc{}
	}
	if p.LocalQueueNamespaces == nil {
		p.LocalQueueNamespaces = map[string]string{}
	}
	if p.WorkloadPriorityClasses == nil {
		p.WorkloadPriorityClasses = map[string]bool{}
	}
	if err := p.cohortDepthFirst(docs); err != nil {
		return err
	}
	var kc *karpenter.Catalog
	if hasNodePool(docs) {
		// Read once for all the NodePools, before any is read.
		c, err := karpenter.AWS()
		if err != nil {
			return err
		}
		kc = c
	}
	if err := p.readDocs(docs, kc); err != nil {
		return err
	}
	if err := p.cohortTree(); err != nil {
		return err
	}
	p.qualifyLocalQueues()
	return p.check()
}

// qualifyLocalQueues names the LocalQueues whose name is defined in more
// than one namespace "namespace/name" (the key a job of that namespace
// reaches them by); a name defined once keeps its bare name.
func (p *Policy) qualifyLocalQueues() {
	count := map[string]int{}
	for _, l := range p.Spec.LocalQueues {
		count[l.Name]++
	}
	for i := range p.Spec.LocalQueues {
		l := &p.Spec.LocalQueues[i]
		if count[l.Name] < 2 || i >= len(p.lqNamespaces) {
			continue
		}
		ns := p.lqNamespaces[i]
		delete(p.LocalQueueNamespaces, l.Name)
		l.Name = ns + "/" + l.Name
		p.LocalQueueNamespaces[l.Name] = ns
	}
}

// SharedLocalQueueNames are the LocalQueue names the policy defines in
// more than one namespace: a job's queue of such a name is
// "namespace/name" in the run.
func (p *Policy) SharedLocalQueueNames() map[string]bool {
	out := map[string]bool{}
	for _, l := range p.Spec.LocalQueues {
		if _, name, ok := strings.Cut(l.Name, "/"); ok {
			out[name] = true
		}
	}
	return out
}

// LocalQueueName is the Kubernetes name of a LocalQueue of the run (its
// Spec.LocalQueues name without the namespace a shared name carries).
func LocalQueueName(key string) string {
	if _, name, ok := strings.Cut(key, "/"); ok {
		return name
	}
	return key
}

// hasNodePool reports whether docs (or the items of a List among them)
// hold a Karpenter NodePool: its instance types are read from Karpenter's
// AWS catalog.
func hasNodePool(docs []policyDoc) bool {
	for _, d := range docs {
		if d.root != nil && nodePoolIn(d.root) {
			return true
		}
	}
	return false
}

// nodePoolIn reports whether the manifest m is a NodePool or a List
// holding one (at any depth).
func nodePoolIn(m *yamlv3.Node) bool {
	api, kind := scalarValue(m, "apiVersion"), scalarValue(m, "kind")
	if api == karpenterAPI && kind == "NodePool" {
		return true
	}
	if api != "v1" || kind != "List" {
		return false
	}
	items, ok := strict.NodeAt(m, "items")
	if !ok || items.Kind != yamlv3.SequenceNode {
		return false
	}
	for _, it := range items.Content {
		if it.Kind == yamlv3.MappingNode && nodePoolIn(it) {
			return true
		}
	}
	return false
}

// karpenterAPI is the API version of the Karpenter NodePools read.
const karpenterAPI = "karpenter.sh/v1"

// readDocs reads docs in order; kc is Karpenter's AWS catalog when they
// hold a NodePool (hasNodePool).
func (p *Policy) readDocs(docs []policyDoc, kc *karpenter.Catalog) error {
	for _, d := range docs {
		kind, api := d.tm.Kind, d.tm.APIVersion
		if err := checkAPIVersion(d); err != nil {
			return err
		}
		switch {
		case (api == kueueV1beta1 || api == kueueV1beta2) && kind == "ResourceFlavor":
			if err := p.flavor(d); err != nil {
				return err
			}
		case (api == kueueV1beta1 || api == kueueV1beta2) && kind == "Topology":
			if err := p.topology(d); err != nil {
				return err
			}
		case (api == kueueV1beta1 || api == kueueV1beta2) && kind == "ClusterQueue":
			if err := p.clusterQueue(d); err != nil {
				return err
			}
		case (api == kueueV1beta1 || api == kueueV1beta2) && kind == "LocalQueue":
			var lq kueue.LocalQueue
			if err := d.strict(&lq); err != nil {
				return err
			}
			// A LocalQueue is namespaced: one name may be defined in
			// several namespaces (each team's gpu-queue).
			if err := p.define(d, lq.Namespace+"/"+lq.Name); err != nil {
				return err
			}
			p.lqDocs = append(p.lqDocs, d)
			if lq.Spec.StopPolicy != nil || lq.Spec.FairSharing != nil {
				p.notModelled(d, lq.Name, "spec.stopPolicy or spec.fairSharing")
			}
			p.Spec.LocalQueues = append(p.Spec.LocalQueues, admission.LocalQueue{Name: lq.Name, ClusterQueue: string(lq.Spec.ClusterQueue)})
			p.lqNamespaces = append(p.lqNamespaces, lq.Namespace)
			p.LocalQueueNamespaces[lq.Name] = lq.Namespace
		case (api == kueueV1beta2 || api == kueueV1beta1 || api == kueueV1alpha1) && kind == "Cohort":
			var c kueue.Cohort
			if api == kueueV1beta1 {
				// The same fields as v1beta2: checked strictly as
				// v1beta1, then read as v1beta2.
				var old kueuev1beta1.Cohort
				if err := d.strict(&old); err != nil {
					return err
				}
				if err := d.decode(&c); err != nil {
					return err
				}
			} else if err := d.strict(&c); err != nil {
				return err
			}
			groups, err := resourceGroups(d, c.Spec.ResourceGroups, true)
			if err != nil {
				return err
			}
			if prev, dup := p.cohorts[c.Name]; dup {
				return d.fieldErr("metadata.name", "Cohort %s is defined twice (first at %s)", Quote(c.Name), prev.where)
			}
			def := cohortDef{parent: string(c.Spec.ParentName), groups: groups, where: d.where(c.Name)}
			if fs := c.Spec.FairSharing; fs != nil && fs.Weight != nil {
				w, err := fairWeight(d, fs.Weight)
				if err != nil {
					return err
				}
				def.weight = w
				if p.weighted == "" {
					p.weighted = d.where(c.Name)
				}
			}
			p.cohorts[c.Name] = def
			p.cohortOrder = append(p.cohortOrder, c.Name)
		case (api == kueueV1beta1 || api == kueueV1beta2) && kind == "WorkloadPriorityClass":
			var w kueue.WorkloadPriorityClass
			if err := d.strict(&w); err != nil {
				return err
			}
			p.PriorityClasses[w.Name] = w.Value
			p.WorkloadPriorityClasses[w.Name] = true
		case api == "v1" && kind == "List":
			var l struct {
				metav1.TypeMeta `json:",inline"`
				metav1.ListMeta `json:"metadata,omitempty"`
				Items           []map[string]any `json:"items"`
			}
			if err := d.strict(&l); err != nil {
				return err
			}
			var items []policyDoc
			for i, it := range l.Items {
				b, err := yaml.Marshal(it)
				if err != nil {
					return d.errorf("items[%d]: %v", i, err)
				}
				sub := policyDoc{file: d.file, line: d.line, data: b, root: d.root}
				if n, ok := strict.NodeAt(d.root, fmt.Sprintf("items[%d]", i)); ok && n.Kind == yamlv3.MappingNode {
					sub.root, sub.line = n, n.Line
				}
				if err := yaml.Unmarshal(b, &sub.tm); err != nil {
					return d.errorf("items[%d]: %v", i, err)
				}
				items = append(items, sub)
			}
			if err := p.readDocs(items, kc); err != nil {
				return err
			}
		case (api == kueueConfigV1beta1 || api == kueueConfigV1beta2) && kind == "Configuration":
			if err := p.kueueConfig(d); err != nil {
				return err
			}
		case api == "v1" && kind == "ConfigMap":
			if err := p.configMap(d); err != nil {
				return err
			}
		case api == karpenterAPI && kind == "NodePool":
			if err := p.nodePool(d, kc); err != nil {
				return err
			}
		case api == "karpenter.sh/v1alpha1" && kind == "NodeOverlay":
			if err := p.nodeOverlay(d); err != nil {
				return err
			}
		case api == "karpenter.k8s.aws/v1" && kind == "EC2NodeClass":
			if err := p.nodeClass(d); err != nil {
				return err
			}
		case api == hyperNodeAPI && kind == "HyperNode":
			if err := p.hyperNode(d); err != nil {
				return err
			}
		case api == volcanoAPI && kind == "Queue":
			if err := p.volcanoQueue(d); err != nil {
				return err
			}
		case api == "scheduling.k8s.io/v1" && kind == "PriorityClass":
			var pc schedulingv1.PriorityClass
			if err := d.strict(&pc); err != nil {
				return err
			}
			p.PriorityClasses[pc.Name] = pc.Value
			if pc.PreemptionPolicy != nil && *pc.PreemptionPolicy == corev1.PreemptNever {
				p.PreemptNever[pc.Name] = true
			}
		case api == resourcev1.SchemeGroupVersion.String() && kind == "DeviceClass":
			var dc resourcev1.DeviceClass
			if err := d.strict(&dc); err != nil {
				return err
			}
			if err := p.define(d, dc.Name); err != nil {
				return err
			}
			p.DeviceClasses = append(p.DeviceClasses, dc)
			if err := p.deviceClass(d, dc.Name); err != nil {
				return err
			}
		default:
			p.Notes = append(p.Notes, fmt.Sprintf("%s:%d: %s (%s) is not read: gpuplan reads Kueue Topology, ResourceFlavor, ClusterQueue, LocalQueue, Cohort, WorkloadPriorityClass, Volcano Queue and HyperNode, Karpenter NodePool, NodeOverlay and EC2NodeClass, PriorityClass and DRA DeviceClass", d.file, d.line, kind, api))
		}
		if err := d.checkCRD(); err != nil {
			return err
		}
	}
	p.giveReservations()
	return p.giveBlocks()
}

// deviceClass reads a DeviceClass document into p.Devices: its CEL
// selectors parsed (an expression outside what gpuplan evaluates is an
// input error at its field), for the claims of the workload's pods.
func (p *Policy) deviceClass(d policyDoc, name string) error {
	m := strict.Manifest{Root: d.root, APIVersion: d.tm.APIVersion, Kind: d.tm.Kind, Line: d.line}
	if m.Root == nil {
		// An item of a List: its own YAML.
		ms, err := strict.Manifests(d.file, d.data)
		if err != nil || len(ms) != 1 {
			return d.errorf("the DeviceClass does not read as one document")
		}
		m.Root = ms[0].Root
	}
	set, err := dra.Read(d.file, []strict.Manifest{m})
	if err != nil {
		return err
	}
	if p.Devices == nil {
		p.Devices = dra.NewSet()
	}
	p.Devices.AddClasses(set)
	p.Notes = append(p.Notes, set.Notes...)
	p.Notes = append(p.Notes, fmt.Sprintf("%s:%d: DeviceClass %s is the cluster's: the workload's claims naming it take devices that its selectors and the request's both select (it replaces a driver's built-in class of its name)", d.file, d.line, Quote(name)))
	return nil
}

// checkCRD checks a Kueue object against Kueue's published CRD schema and
// its CEL rules, as the API server does when it is created (after
// gpuplan's own checks, whose words are closer to the model).
func (d policyDoc) checkCRD() error {
	if d.root == nil {
		return nil
	}
	crd, err := crds.Kueue(d.tm.APIVersion, d.tm.Kind)
	if err != nil || crd == nil {
		return err
	}
	return crd.Check(d.file, strict.Manifest{Root: d.root, APIVersion: d.tm.APIVersion, Kind: d.tm.Kind, Line: d.line})
}

const (
	kueueConfigV1beta1 = "config.kueue.x-k8s.io/v1beta1"
	kueueConfigV1beta2 = "config.kueue.x-k8s.io/v1beta2"
)

// kueueConfig reads Kueue's own Configuration for its fair-sharing
// settings; every other top-level setting it gives is noted as not
// modelled.
// deviceClassMapping reads resources.deviceClassMappings[i]: the
// DeviceClasses whose claimed devices Kueue charges as quota resource name.
func (p *Policy) deviceClassMapping(d policyDoc, i int, name string, classes []corev1.ResourceName) error {
	if p.DeviceClassMappings == nil {
		p.DeviceClassMappings = map[string]string{}
	}
	for j, c := range classes {
		if old, ok := p.DeviceClassMappings[string(c)]; ok {
			return d.fieldErr(fmt.Sprintf("resources.deviceClassMappings[%d].deviceClassNames[%d]", i, j), "DeviceClass %s is already mapped to %s (Kueue's validation refuses a class in two mappings)", Quote(string(c)), Quote(old))
		}
		p.DeviceClassMappings[string(c)] = name
	}
	return nil
}

func (p *Policy) kueueConfig(d policyDoc) error {
	var strategies []string
	on := false
	var wait *kueuecfg.WaitForPodsReady
	var gates map[string]bool
	if d.tm.APIVersion == kueueConfigV1beta1 {
		var c kueuecfgv1beta1.Configuration
		if err := d.strict(&c); err != nil {
			return err
		}
		gates = c.FeatureGates
		if fs := c.FairSharing; fs != nil && fs.Enable {
			on = true
			for _, s := range fs.PreemptionStrategies {
				strategies = append(strategies, string(s))
			}
		}
		if r := c.Resources; r != nil {
			for i, m := range r.DeviceClassMappings {
				if err := p.deviceClassMapping(d, i, string(m.Name), m.DeviceClassNames); err != nil {
					return err
				}
			}
		}
		if w := c.WaitForPodsReady; w != nil && w.Enable {
			wait = &kueuecfg.WaitForPodsReady{BlockAdmission: w.BlockAdmission, RecoveryTimeout: w.RecoveryTimeout}
			if w.Timeout != nil {
				wait.Timeout = *w.Timeout
			}
			if rs := w.RequeuingStrategy; rs != nil {
				wait.RequeuingStrategy = &kueuecfg.RequeuingStrategy{BackoffLimitCount: rs.BackoffLimitCount, BackoffBaseSeconds: rs.BackoffBaseSeconds, BackoffMaxSeconds: rs.BackoffMaxSeconds}
				if rs.Timestamp != nil {
					ts := kueuecfg.RequeuingTimestamp(*rs.Timestamp)
					wait.RequeuingStrategy.Timestamp = &ts
				}
			}
		}
	} else {
		var c kueuecfg.Configuration
		if err := d.strict(&c); err != nil {
			return err
		}
		gates = c.FeatureGates
		if fs := c.FairSharing; fs != nil {
			on = true
			for _, s := range fs.PreemptionStrategies {
				strategies = append(strategies, string(s))
			}
		}
		wait = c.WaitForPodsReady
		if r := c.Resources; r != nil {
			for i, m := range r.DeviceClassMappings {
				if err := p.deviceClassMapping(d, i, string(m.Name), m.DeviceClassNames); err != nil {
					return err
				}
			}
		}
	}
	if wait != nil {
		wf, err := waitForPodsReady(d, wait)
		if err != nil {
			return err
		}
		p.Spec.WaitForPodsReady = wf
		if wait.RecoveryTimeout != nil {
			p.notModelled(d, "", "waitForPodsReady.recoveryTimeout (a running job that loses pods restarts as its recovery settings say)")
		}
	}
	if on {
		fs := &admission.FairSharing{}
		for i, name := range strategies {
			st, err := admission.ParseFairStrategy(name)
			if err != nil {
				return d.fieldErr(fmt.Sprintf("fairSharing.preemptionStrategies[%d]", i), "%v", err)
			}
			fs.Strategies = append(fs.Strategies, st)
		}
		p.Spec.FairSharing = fs
	}
	p.featureGates(d, gates)
	var skipped []string
	for i := 0; i+1 < len(d.root.Content); i += 2 {
		switch k := d.root.Content[i].Value; k {
		case "apiVersion", "kind", "fairSharing", "waitForPodsReady", "featureGates":
		default:
			skipped = append(skipped, k)
		}
	}
	if len(skipped) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s:%d: Kueue Configuration: %s read but not modelled (gpuplan takes only fairSharing, waitForPodsReady and featureGates from it)", d.file, d.line, strings.Join(skipped, ", ")))
	}
	return nil
}

// featureGates reads a Kueue Configuration's featureGates: the two that
// change which workload is admitted when (admission.Gates; on by default
// in Kueue v0.19.2) set the policy's; any other is noted as not modelled.
func (p *Policy) featureGates(d policyDoc, gates map[string]bool) {
	var other []string
	for name, on := range gates {
		switch name {
		case "SchedulingEquivalenceHashing":
			p.Spec.Gates.NoEquivalenceHashing = !on
		case "FlavorFungibilityPreserveScanProgress":
			p.Spec.Gates.NoPreserveScanProgress = !on
		default:
			other = append(other, fmt.Sprintf("%s=%t", name, on))
		}
	}
	if len(other) > 0 {
		slices.Sort(other)
		p.Notes = append(p.Notes, fmt.Sprintf("%s:%d: Kueue Configuration: featureGates %s read but not modelled (gpuplan models SchedulingEquivalenceHashing and FlavorFungibilityPreserveScanProgress, on by default as in Kueue v0.19.2)", d.file, d.line, strings.Join(other, ", ")))
	}
}

// waitForPodsReady converts Kueue's waitForPodsReady, with its defaults:
// a 5-minute timeout, no blocking, requeue from the eviction after 60 s
// doubling to an hour, without limit.
func waitForPodsReady(d policyDoc, w *kueuecfg.WaitForPodsReady) (*admission.WaitForPodsReady, error) {
	out := &admission.WaitForPodsReady{Timeout: 5 * 60 * 1000, BackoffBase: 60 * 1000, BackoffMax: 3600 * 1000, BackoffLimit: -1}
	if w.Timeout.Duration < 0 {
		return nil, d.fieldErr("waitForPodsReady.timeout", "%s is negative; Kueue's timeout is a positive duration (default 5m)", w.Timeout.Duration)
	}
	if w.Timeout.Duration > 0 {
		out.Timeout = w.Timeout.Milliseconds()
	}
	if r := w.RecoveryTimeout; r != nil && r.Duration < 0 {
		return nil, d.fieldErr("waitForPodsReady.recoveryTimeout", "%s is negative", r.Duration)
	}
	if w.BlockAdmission != nil {
		out.BlockAdmission = *w.BlockAdmission
	}
	if rs := w.RequeuingStrategy; rs != nil {
		if rs.Timestamp != nil {
			switch *rs.Timestamp {
			case kueuecfg.CreationTimestamp:
				out.RequeueAtCreation = true
			case kueuecfg.EvictionTimestamp:
			default:
				return nil, d.fieldErr("waitForPodsReady.requeuingStrategy.timestamp", "%s is not Eviction or Creation", Quote(string(*rs.Timestamp)))
			}
		}
		if n := rs.BackoffLimitCount; n != nil {
			if *n < 0 {
				return nil, d.fieldErr("waitForPodsReady.requeuingStrategy.backoffLimitCount", "must not be negative")
			}
			out.BackoffLimit = *n
		}
		if b := rs.BackoffBaseSeconds; b != nil {
			if *b < 0 {
				return nil, d.fieldErr("waitForPodsReady.requeuingStrategy.backoffBaseSeconds", "must not be negative")
			}
			out.BackoffBase = int64(*b) * 1000
		}
		if m := rs.BackoffMaxSeconds; m != nil {
			if *m < 0 {
				return nil, d.fieldErr("waitForPodsReady.requeuingStrategy.backoffMaxSeconds", "must not be negative")
			}
			out.BackoffMax = int64(*m) * 1000
		}
	}
	return out, nil
}

// configMap reads the Kueue Configuration a ConfigMap carries (as Kueue's
// own kueue-manager-config does, under controller_manager_config.yaml);
// any other ConfigMap is noted as not read.
func (p *Policy) configMap(d policyDoc) error {
	var cm corev1.ConfigMap
	if err := d.strict(&cm); err != nil {
		return err
	}
	keys := sortedKeys(cm.Data)
	found := false
	if conf, ok := cm.Data["volcano-scheduler.conf"]; ok {
		vs, err := parseVolcanoScheduler(fmt.Sprintf("%s (ConfigMap %s, data.volcano-scheduler.conf)", d.file, cm.Name), []byte(conf))
		if err != nil {
			return err
		}
		p.VolcanoScheduler = vs
		found = true
	}
	for _, k := range keys {
		inner, err := splitManifests(fmt.Sprintf("%s (ConfigMap %s, data.%s)", d.file, cm.Name, k), []byte(cm.Data[k]))
		if err != nil {
			continue // not YAML manifests
		}
		for _, in := range inner {
			if in.tm.Kind == "Configuration" && (in.tm.APIVersion == kueueConfigV1beta1 || in.tm.APIVersion == kueueConfigV1beta2) {
				if err := p.kueueConfig(in); err != nil {
					return err
				}
				found = true
			}
		}
	}
	if !found {
		p.Notes = append(p.Notes, fmt.Sprintf("%s:%d: ConfigMap %s is not read: it holds no Kueue Configuration or volcano-scheduler.conf", d.file, d.line, cm.Name))
	}
	return nil
}

// references checks that every flavor a ClusterQueue names and every
// ClusterQueue a LocalQueue points at is defined, at the line that names it.
func (p *Policy) references() error {
	for _, r := range p.flavorRefs {
		if _, ok := p.defs["ResourceFlavor/"+r.flavor]; !ok {
			return r.d.fieldErr(r.path, "flavor %s, which no ResourceFlavor defines (ResourceFlavors: %s)", Quote(r.flavor), p.names("ResourceFlavor"))
		}
	}
	for i, l := range p.Spec.LocalQueues {
		if i >= len(p.lqDocs) {
			break
		}
		if _, ok := p.defs["ClusterQueue/"+l.ClusterQueue]; !ok {
			return p.lqDocs[i].fieldErr("spec.clusterQueue", "LocalQueue %s points at ClusterQueue %s, which no ClusterQueue of the policy defines (ClusterQueues: %s)", l.Name, Quote(l.ClusterQueue), p.names("ClusterQueue"))
		}
	}
	return nil
}

// names lists the names defined of a kind, for errors.
func (p *Policy) names(kind string) string {
	var out []string
	for k := range p.defs {
		if n, ok := strings.CutPrefix(k, kind+"/"); ok {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	sort.Strings(out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("and %d more", len(out)-20))
	}
	return strings.Join(out, ", ")
}

func (p *Policy) check() error {
	if err := p.references(); err != nil {
		return err
	}
	if p.VolcanoScheduler != nil && len(p.Volcano) == 0 {
		p.Notes = append(p.Notes, p.VolcanoScheduler.where+": the Volcano scheduler's configuration is read, but there are no Volcano Queues to apply it to")
	}
	if p.weighted != "" && p.Spec.FairSharing == nil {
		p.Notes = append(p.Notes, p.weighted+": spec.fairSharing.weight has no effect while fair sharing is off (a Kueue Configuration with fairSharing turns it on)")
	}
	if len(p.Volcano) == 0 {
		if _, err := admission.New(p.Spec); err != nil {
			return &InputError{File: strings.Join(p.Files, ", "), Msg: err.Error()}
		}
	}
	if len(p.Volcano) > 0 {
		if len(p.Spec.ClusterQueues) > 0 || len(p.Spec.LocalQueues) > 0 {
			return &InputError{File: strings.Join(p.Files, ", "), Msg: "the policy mixes Kueue ClusterQueues and Volcano Queues; give one or the other"}
		}
		return nil
	}
	if len(p.Spec.ClusterQueues) == 0 && len(p.NodePools) == 0 && len(p.StaticPools) == 0 && len(p.PriorityClasses) == 0 && p.Devices == nil {
		return &InputError{File: strings.Join(p.Files, ", "), Msg: "the policy has no ClusterQueue, Volcano Queue, NodePool, PriorityClass or DRA DeviceClass"}
	}
	if len(p.Spec.ClusterQueues) == 0 && len(p.NodePools) == 0 && len(p.StaticPools) == 0 && len(p.WorkloadPriorityClasses) > 0 {
		p.Notes = append(p.Notes, strings.Join(p.Files, ", ")+": Kueue WorkloadPriorityClasses without a ClusterQueue: Kueue admits nothing here, so they give jobs their priority and nothing else")
	}
	return nil
}

func (p *Policy) flavor(d policyDoc) error {
	var f admission.Flavor
	var taints []corev1.Taint
	var tols []corev1.Toleration
	// The two versions' ResourceFlavor specs are the same: v1beta1 is
	// checked strictly against its own type, then read as v1beta2.
	var rf kueue.ResourceFlavor
	if d.tm.APIVersion == kueueV1beta1 {
		var old kueuev1beta1.ResourceFlavor
		if err := d.strict(&old); err != nil {
			return err
		}
		if err := d.decode(&rf); err != nil {
			return err
		}
	} else if err := d.strict(&rf); err != nil {
		return err
	}
	if err := p.define(d, rf.Name); err != nil {
		return err
	}
	f.Name, f.NodeLabels, taints, tols = rf.Name, rf.Spec.NodeLabels, rf.Spec.NodeTaints, rf.Spec.Tolerations
	if rf.Spec.TopologyName != nil {
		p.tasFlavors = append(p.tasFlavors, tasFlavor{name: rf.Name, topology: string(*rf.Spec.TopologyName), doc: d})
	}
	for _, t := range taints {
		f.NodeTaints = append(f.NodeTaints, cluster.Taint{Key: t.Key, Value: t.Value, Effect: cluster.TaintEffect(t.Effect)})
	}
	for _, t := range tols {
		f.Tolerations = append(f.Tolerations, admission.Toleration{Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect)})
	}
	p.Spec.Flavors = append(p.Spec.Flavors, f)
	return nil
}

// quantity turns a quota checked by quotaAmount into the simulator's
// units: milli-CPU, MiB of memory, a count of anything else.
func quantity(res string, q resource.Quantity) int64 {
	v, err := quotaAmount(res, q)
	if err != nil {
		return 0 // not reached: every quota is checked when it is read
	}
	return v
}

// limit is a borrowing or lending limit at path in d (NoLimit when absent).
func limit(d policyDoc, path, res string, q *resource.Quantity) (int64, error) {
	if q == nil {
		return admission.NoLimit, nil
	}
	v, err := quotaAmount(res, *q)
	if err != nil {
		return 0, d.quantityErr(path, res, *q, err)
	}
	return v, nil
}

func (p *Policy) clusterQueue(d policyDoc) error {
	var cq kueue.ClusterQueue
	if d.tm.APIVersion == kueueV1beta1 {
		var old kueuev1beta1.ClusterQueue
		if err := d.strict(&old); err != nil {
			return err
		}
		// Kueue's own conversion (the one its conversion webhook runs):
		// cohort becomes cohortName, admissionChecks become
		// admissionChecksStrategy rules, Borrow and Preempt MayStopSearch.
		if err := old.ConvertTo(&cq); err != nil {
			return d.errorf("%v (converting v1beta1 to v1beta2)", err)
		}
		cq.APIVersion = kueueV1beta2
	} else if err := d.strict(&cq); err != nil {
		return err
	}
	if err := p.define(d, cq.Name); err != nil {
		return err
	}
	s := cq.Spec
	q := admission.ClusterQueue{Name: cq.Name, Cohort: string(s.CohortName)}
	switch s.QueueingStrategy {
	case kueue.StrictFIFO:
		q.Strategy = admission.StrictFIFO
	case kueue.BestEffortFIFO, "":
		q.Strategy = admission.BestEffortFIFO
	default:
		return d.fieldErr("spec.queueingStrategy", "%s is not StrictFIFO or BestEffortFIFO", Quote(string(s.QueueingStrategy)))
	}
	groups, err := resourceGroups(d, s.ResourceGroups, s.CohortName != "")
	if err != nil {
		return err
	}
	q.Groups = groups
	for gi, g := range s.ResourceGroups {
		for fi, f := range g.Flavors {
			p.flavorRefs = append(p.flavorRefs, flavorRef{d: d, path: fmt.Sprintf("spec.resourceGroups[%d].flavors[%d].name", gi, fi), flavor: string(f.Name)})
		}
	}
	if pr := s.Preemption; pr != nil {
		var err error
		if q.Preempt.WithinClusterQueue, err = admission.ParsePolicy(string(pr.WithinClusterQueue)); err != nil {
			return d.fieldErr("spec.preemption.withinClusterQueue", "%v", err)
		}
		if q.Preempt.ReclaimWithinCohort, err = admission.ParsePolicy(string(pr.ReclaimWithinCohort)); err != nil {
			return d.fieldErr("spec.preemption.reclaimWithinCohort", "%v", err)
		}
		if b := pr.BorrowWithinCohort; b != nil {
			if q.Preempt.BorrowWithinCohort, err = admission.ParsePolicy(string(b.Policy)); err != nil {
				return d.fieldErr("spec.preemption.borrowWithinCohort.policy", "%v", err)
			}
			if b.MaxPriorityThreshold != nil {
				p.notModelled(d, cq.Name, "spec.preemption.borrowWithinCohort.maxPriorityThreshold")
			}
		}
	}
	if ff := s.FlavorFungibility; ff != nil {
		switch ff.WhenCanBorrow {
		case "", kueue.MayStopSearch, "Borrow":
		case kueue.TryNextFlavor:
			q.Fungibility.TryNextOnBorrow = true
		default:
			return d.fieldErr("spec.flavorFungibility.whenCanBorrow", "%s is not MayStopSearch, Borrow or TryNextFlavor", Quote(string(ff.WhenCanBorrow)))
		}
		switch ff.WhenCanPreempt {
		case "", kueue.TryNextFlavor:
		case kueue.MayStopSearch, "Preempt":
			q.Fungibility.StopOnPreempt = true
		default:
			return d.fieldErr("spec.flavorFungibility.whenCanPreempt", "%s is not MayStopSearch, Preempt or TryNextFlavor", Quote(string(ff.WhenCanPreempt)))
		}
		if ff.Preference != nil {
			p.notModelled(d, cq.Name, "spec.flavorFungibility.preference (gpuplan takes the first flavor that fits without borrowing, then the first that fits by borrowing)")
		}
	}
	if s.AdmissionChecksStrategy != nil && len(s.AdmissionChecksStrategy.AdmissionChecks) > 0 {
		if d.tm.APIVersion == kueueV1beta1 && nodeAt(d, "spec.admissionChecks") {
			p.notModelled(d, cq.Name, "spec.admissionChecks")
		} else {
			p.notModelled(d, cq.Name, "spec.admissionChecksStrategy")
		}
	}
	if err := p.concurrentAdmission(d, &cq); err != nil {
		return err
	}
	if s.StopPolicy != nil && *s.StopPolicy != kueue.None {
		p.notModelled(d, cq.Name, "spec.stopPolicy")
	}
	if fs := s.FairSharing; fs != nil && fs.Weight != nil {
		w, err := fairWeight(d, fs.Weight)
		if err != nil {
			return err
		}
		q.FairWeight = w
		if p.weighted == "" {
			p.weighted = d.where(cq.Name)
		}
	}
	if s.NamespaceSelector == nil {
		p.Notes = append(p.Notes, d.where(cq.Name)+": spec.namespaceSelector is unset, which admits no namespace in Kueue; gpuplan has no namespaces and admits every LocalQueue that points here")
	}
	p.Spec.ClusterQueues = append(p.Spec.ClusterQueues, q)
	return nil
}

// nodeAt says whether the document gives the field at path.
func nodeAt(d policyDoc, path string) bool {
	if d.root == nil {
		return false
	}
	n, _ := strict.NodeAt(d.root, path)
	return n != nil
}

// concurrentAdmission reads a ClusterQueue's concurrentAdmissionPolicy
// (Kueue v0.18, alpha behind the ConcurrentAdmission feature gate, which
// a ClusterQueue that sets it takes as on), refused where Kueue's webhook
// refuses it (validateConcurrentAdmissionPolicy), else noted: gpuplan
// tries the flavors in order as without it and never migrates an admitted
// workload to a more preferred flavor.
func (p *Policy) concurrentAdmission(d policyDoc, cq *kueue.ClusterQueue) error {
	ca := cq.Spec.ConcurrentAdmissionPolicy
	if ca == nil {
		return nil
	}
	const why = "Kueue's webhook refuses it when the ConcurrentAdmission feature gate is on, as a ClusterQueue that sets concurrentAdmissionPolicy needs"
	rgs := cq.Spec.ResourceGroups
	if len(rgs) != 1 {
		return d.fieldErr("spec.resourceGroups", "Invalid value: %d: must have exactly one ResourceGroup when ConcurrentAdmissionPolicy is defined (%s)", len(rgs), why)
	}
	if n := len(rgs[0].Flavors); n > 16 {
		return d.fieldErr("spec.resourceGroups[0].flavors", "Invalid value: %d: cannot have more than 16 resource flavors in the ResourceGroup when ConcurrentAdmissionPolicy is defined (%s)", n, why)
	}
	if c := ca.Migration.Constraints; c != nil {
		mode := ca.Migration.Mode
		if mode != "" && mode != kueue.ConcurrentAdmissionTryPreferredFlavors {
			return d.fieldErr("spec.concurrentAdmissionPolicy.migration.constraints", "Forbidden: may only be set when migration.mode is %q (got %q) (%s)", kueue.ConcurrentAdmissionTryPreferredFlavors, mode, why)
		}
		if last := c.LastAcceptableFlavorName; last != nil {
			var names []string
			ok := false
			for _, f := range rgs[0].Flavors {
				names = append(names, string(f.Name))
				ok = ok || f.Name == *last
			}
			if !ok {
				return d.fieldErr("spec.concurrentAdmissionPolicy.migration.constraints.lastAcceptableFlavorName", "Invalid value: %s: must be one of the flavors defined in the ClusterQueue: [%s] (%s)", Quote(string(*last)), strings.Join(names, " "), why)
			}
		}
	}
	if cq.Spec.QueueingStrategy == kueue.StrictFIFO {
		return d.fieldErr("spec.queueingStrategy", "Invalid value: %q: StrictFIFO queueing strategy cannot be used when ConcurrentAdmissionPolicy is defined (%s)", kueue.StrictFIFO, why)
	}
	what := "spec.concurrentAdmissionPolicy (Kueue v0.18, alpha: workloads pursue several flavors at once; gpuplan tries them in order, as without it"
	if ca.Migration.Mode != kueue.ConcurrentAdmissionRetainFirstAdmission {
		what += ", and never migrates a running workload to a more preferred flavor (" + string(kueue.ConcurrentAdmissionTryPreferredFlavors) + ")"
	}
	p.notModelled(d, cq.Name, what+")")
	return nil
}

// fairWeight reads a fair-sharing weight in thousandths (an explicit 0 is
// admission.ZeroWeight).
func fairWeight(d policyDoc, w *resource.Quantity) (int64, error) {
	if w.Sign() < 0 {
		return 0, d.fieldErr("spec.fairSharing.weight", "%s is negative", Quote(w.String()))
	}
	if f := w.AsApproximateFloat64(); math.IsInf(f, 0) || f > 1e9 {
		return 0, d.fieldErr("spec.fairSharing.weight", "%s is more than 1e9; weights are ratios", Quote(w.String()))
	}
	if v := w.MilliValue(); v > 0 {
		return v, nil
	}
	return admission.ZeroWeight, nil
}

// resourceGroups converts Kueue resource groups (of a ClusterQueue or a
// Cohort) into the simulator's units, refusing negative, non-finite and
// impossibly large quotas at their lines; cohort says whether limits to
// borrowing and lending have a cohort to apply in (a Cohort's parent is
// checked with the tree).
func resourceGroups(d policyDoc, in []kueue.ResourceGroup, cohort bool) ([]admission.ResourceGroup, error) {
	var out []admission.ResourceGroup
	covered := map[string]bool{}
	for gi, g := range in {
		at := fmt.Sprintf("spec.resourceGroups[%d]", gi)
		rg := admission.ResourceGroup{}
		for ci, r := range g.CoveredResources {
			if covered[string(r)] {
				return nil, d.fieldErr(fmt.Sprintf("%s.coveredResources[%d]", at, ci), "resource %s is in two resource groups", r)
			}
			covered[string(r)] = true
			rg.Covered = append(rg.Covered, string(r))
		}
		for fi, f := range g.Flavors {
			fat := fmt.Sprintf("%s.flavors[%d]", at, fi)
			fq := admission.FlavorQuotas{Flavor: string(f.Name)}
			if len(f.Resources) != len(g.CoveredResources) {
				return nil, d.fieldErr(fat+".resources", "flavor %s lists %d resources for %d covered resources", f.Name, len(f.Resources), len(g.CoveredResources))
			}
			for ri, r := range f.Resources {
				rat := fmt.Sprintf("%s.resources[%d]", fat, ri)
				name := string(r.Name)
				if name != rg.Covered[ri] {
					return nil, d.fieldErr(rat+".name", "is %s; the covered resources' order gives %s", name, rg.Covered[ri])
				}
				nominal, err := quotaAmount(name, r.NominalQuota)
				if err != nil {
					return nil, d.quantityErr(rat+".nominalQuota", name, r.NominalQuota, err)
				}
				qt := admission.Quota{Nominal: nominal}
				if qt.BorrowingLimit, err = limit(d, rat+".borrowingLimit", name, r.BorrowingLimit); err != nil {
					return nil, err
				}
				if qt.LendingLimit, err = limit(d, rat+".lendingLimit", name, r.LendingLimit); err != nil {
					return nil, err
				}
				if qt.LendingLimit != admission.NoLimit && qt.LendingLimit > qt.Nominal {
					return nil, d.fieldErr(rat+".lendingLimit", "%s: lendingLimit %d is more than nominalQuota %d", name, qt.LendingLimit, qt.Nominal)
				}
				if !cohort && (r.BorrowingLimit != nil || r.LendingLimit != nil) {
					field := rat + ".borrowingLimit"
					if r.BorrowingLimit == nil {
						field = rat + ".lendingLimit"
					}
					return nil, d.fieldErr(field, "borrowingLimit and lendingLimit need a cohort (spec.cohortName)")
				}
				fq.Resources = append(fq.Resources, qt)
			}
			rg.Flavors = append(rg.Flavors, fq)
		}
		out = append(out, rg)
	}
	return out, nil
}

// MaxCohortDepth bounds the levels of a tree of Cohorts, a root at level
// 1 (an undefined parent named by a Cohort is a root): admission walks a
// ClusterQueue's chain of parents for every workload it admits.
const MaxCohortDepth = 64

// cohortTree passes the Cohorts read to the admission model (which
// builds the trees), refusing a cycle of parents or a tree deeper than
// MaxCohortDepth with its place. Each Cohort's chain is walked once: a
// walk stops at a Cohort whose depth is known.
func (p *Policy) cohortTree() error {
	if err := cohortDepths(p.cohortOrder, p.cohorts); err != nil {
		return err
	}
	for _, name := range p.cohortOrder {
		c := p.cohorts[name]
		p.Spec.Cohorts = append(p.Spec.Cohorts, admission.Cohort{Name: name, Parent: c.parent, Groups: c.groups, FairWeight: c.weight})
	}
	return nil
}

// cohortDepths refuses a cycle of parents or a tree deeper than
// MaxCohortDepth among the Cohorts named in order, with the place of the
// first Cohort found in one. Each chain is walked once: a walk stops at a
// Cohort whose depth is known.
func cohortDepths(order []string, cohorts map[string]cohortDef) error {
	depth := make(map[string]int, len(cohorts))
	for _, name := range order {
		var chain []string
		on := map[string]bool{}
		base := 0
		for n := name; n != ""; n = cohorts[n].parent {
			if d, ok := depth[n]; ok {
				base = d
				break
			}
			if on[n] {
				return &InputError{File: cohorts[name].where, Msg: fmt.Sprintf("Cohort %s is in a cycle of parents", name)}
			}
			on[n] = true
			chain = append(chain, n)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			base++
			depth[chain[i]] = base
		}
		if d := depth[name]; d > MaxCohortDepth {
			return &InputError{File: cohorts[name].where, Msg: fmt.Sprintf("Cohort %s is %d levels deep (its chain of parents goes up through %s to %s); gpuplan models trees of Cohorts at most %d levels deep", Quote(name), d, Quote(chain[min(1, len(chain)-1)]), Quote(chain[len(chain)-1]), MaxCohortDepth)}
		}
	}
	return nil
}

// cohortDepthFirst refuses a tree of Cohorts too deep (or a cycle of
// parents) from the documents' names and parents alone, before any
// document is decoded: a chain of 10,000 Cohorts was refused only after
// all of them were decoded strictly. The Cohorts of earlier files count;
// a document whose name or parent is not a plain string is left to the
// strict reading that follows.
func (p *Policy) cohortDepthFirst(docs []policyDoc) error {
	cohorts := make(map[string]cohortDef, len(p.cohorts))
	order := append([]string(nil), p.cohortOrder...)
	for name, c := range p.cohorts {
		cohorts[name] = c
	}
	for _, d := range docs {
		if d.tm.Kind != "Cohort" || d.root == nil {
			continue
		}
		name := scalarValue(nodeOf(d.root, "metadata"), "name")
		if name == "" {
			continue
		}
		if _, dup := cohorts[name]; dup {
			continue // the strict reading names the duplicate
		}
		cohorts[name] = cohortDef{parent: scalarValue(nodeOf(d.root, "spec"), "parentName"), where: d.where(name)}
		order = append(order, name)
	}
	if len(order) <= MaxCohortDepth {
		return nil
	}
	return cohortDepths(order, cohorts)
}

// nodeOf is the mapping a mapping gives key (an empty node when none).
func nodeOf(m *yamlv3.Node, key string) *yamlv3.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k, v := m.Content[i], m.Content[i+1]; k.Value == key && v.Kind == yamlv3.MappingNode {
			return v
		}
	}
	return &yamlv3.Node{}
}

// queueMapper sends each job to its LocalQueue: the scenario's mapping,
// else the job's queue when it is a LocalQueue, else the default queue;
// a job's priority class name, when the policy defines it, gives its
// priority.
type queueMapper struct {
	sim.JobSource
	m       map[string]string
	known   map[string]bool
	def     string
	unknown map[string]int
	// prio gives a queue's jobs a priority (and maybe the Never flag).
	prio  map[string]int32
	never map[string]bool
}

func (q *queueMapper) Next(j *cluster.JobSpec) (bool, error) {
	ok, err := q.JobSource.Next(j)
	if !ok || err != nil {
		return ok, err
	}
	if p, ok := q.prio[j.Queue]; ok {
		j.Priority = p
		if q.never[j.Queue] {
			j.Flags |= cluster.FlagPreemptNever
		}
	}
	if to, ok := q.m[j.Queue]; ok {
		j.Queue = to
	} else if !q.known[j.Queue] && q.def != "" {
		q.unknown[j.Queue]++
		j.Queue = q.def
	}
	return true, nil
}

// source is q as the run's job source: a tracedQueueMapper over a trace
// reader, so the reader's Info still reaches the pipeline.
func (q *queueMapper) source() sim.JobSource {
	if _, trace := q.JobSource.(interface{ Info() traces.TraceInfo }); trace {
		return tracedQueueMapper{q}
	}
	return q
}

// tracedQueueMapper is a queueMapper over a trace reader: it passes on the
// reader's Info, from which the pipeline sizes the run's records and which
// makes it parse the trace on another core (the mapper's counts are read
// only once the run and the reader have stopped).
type tracedQueueMapper struct{ *queueMapper }

func (t tracedQueueMapper) Info() traces.TraceInfo {
	return t.JobSource.(interface{ Info() traces.TraceInfo }).Info()
}

// Notes passes on the source's notes and says how queues were mapped.
func (q *queueMapper) Notes() []string {
	var out []string
	if n, ok := q.JobSource.(interface{ Notes() []string }); ok {
		out = n.Notes()
	}
	var names []string
	for k := range q.unknown {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, fmt.Sprintf("%d jobs of queue %q went to the default LocalQueue %s", q.unknown[k], k, q.def))
	}
	return out
}

// policy reads the scenario's admission policy (manifests replaced by
// opts.PolicyManifests when given) and wraps the workload to map queues.
func (s builder) policy(b *Built, opts Options) error {
	ps := s.Spec.Policy
	manifests := opts.PolicyManifests
	if manifests == nil && ps != nil {
		for _, m := range ps.Manifests {
			manifests = append(manifests, s.path(m))
		}
	}
	if manifests == nil {
		return nil
	}
	pol, err := LoadPolicy(manifests)
	if err != nil {
		return err
	}
	if b.tasLevels, err = pol.TASLevels(); err != nil {
		return err
	}
	if b.hyperNodes = pol.HyperNodes; b.tasLevels != nil && b.hyperNodes != nil {
		return fmt.Errorf("the policy gives both a Kueue Topology and Volcano HyperNodes: gpuplan places jobs over one topology a run")
	}
	if len(pol.Volcano) > 0 {
		spec, notes := volcanoSpec(pol.Volcano, b.Config.Pools)
		pol.Spec = spec
		pol.Notes = append(pol.Notes, notes...)
		pol.Notes = append(pol.Notes, pol.VolcanoScheduler.apply(&pol.Spec)...)
		if _, err := admission.New(pol.Spec); err != nil {
			return &InputError{File: strings.Join(pol.Files, ", "), Msg: err.Error()}
		}
	}
	known := map[string]bool{}
	for _, l := range pol.Spec.LocalQueues {
		known[l.Name] = true
	}
	qm := &queueMapper{JobSource: b.Config.Workload, m: map[string]string{}, known: known, unknown: map[string]int{}, prio: map[string]int32{}, never: map[string]bool{}}
	if ps != nil {
		for queue, class := range ps.PriorityClasses {
			v, ok := pol.PriorityClasses[class]
			if !ok {
				return s.errAt("spec.policy.priorityClasses."+queue, "priority class %q is not in the policy's manifests", class)
			}
			qm.prio[queue], qm.never[queue] = v, pol.PreemptNever[class]
		}
		for from, to := range ps.Queues {
			if !known[to] {
				return s.errAt("spec.policy.queues."+from, "LocalQueue %q is not in the policy (%s)", to, strings.Join(sortedKeys(known), ", "))
			}
			qm.m[from] = to
		}
		if ps.DefaultQueue != "" {
			if !known[ps.DefaultQueue] {
				return s.errAt("spec.policy.defaultQueue", "LocalQueue %q is not in the policy (%s)", ps.DefaultQueue, strings.Join(sortedKeys(known), ", "))
			}
			qm.def = ps.DefaultQueue
		}
	}
	if len(pol.Spec.ClusterQueues) == 0 {
		// NodePools or PriorityClasses only: the NodePools were read when
		// the scenario loaded; what they do not model is said; the
		// classes spec.policy.priorityClasses names give queues' jobs
		// their priority (manifests' priorityClassName was read with the
		// workload).
		b.Assumptions = append(b.Assumptions, pol.Notes...)
		if len(qm.prio) > 0 {
			b.Config.Workload = qm.source()
		}
		return nil
	}
	if s.Spec.Workload.Trace == nil && opts.Trace == nil {
		if err := s.checkClassQueues(qm); err != nil {
			return err
		}
	}
	b.Config.Workload = qm.source()
	b.Config.Admission = &pol.Spec
	kind := "Kueue"
	if len(pol.Volcano) > 0 {
		kind = "Volcano"
	}
	b.Assumptions = append(b.Assumptions, fmt.Sprintf("admission: "+kind+" policy from %s (%d ClusterQueues, %d LocalQueues); evicted workloads release their quota at once", strings.Join(pol.Files, ", "), len(pol.Spec.ClusterQueues), len(pol.Spec.LocalQueues)))
	b.Assumptions = append(b.Assumptions, pol.Notes...)
	return nil
}
