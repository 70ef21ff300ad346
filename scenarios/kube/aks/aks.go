package aks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"

	"gpuplan.dev/gpuplan/scenarios/kube/nodes"
	"gpuplan.dev/gpuplan/validate/strict"
)

// ResourceType is an agent pool's ARM type; APIVersion the version written.
const (
	ResourceType = "Microsoft.ContainerService/managedClusters/agentPools"
	APIVersion   = "2024-09-01"
	schemaURL    = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"
)

// Pool is one agent pool as gpuplan models it.
type Pool struct {
	Name   string
	VMSize string
	Count  int
	Spot   bool
	// EvictionPolicy is a spot pool's scaleSetEvictionPolicy, Delete (the
	// default, written when empty) or Deallocate.
	EvictionPolicy string
	// MaxPrice is a spot pool's spotMaxPrice when above 0 (USD a node-hour);
	// nil: -1, up to the on-demand price (written so).
	MaxPrice *float64
	MinCount int
	MaxCount int // 0: not autoscaled
	// Location is the region (the template's location parameter); Zones
	// the availability zones ("1", "2", "3").
	Location string
	Zones    []string
	Labels   map[string]string
	// Taints as AKS writes them: key=value:Effect.
	Taints []string
	// System is a System-mode pool (AKS's system pods run there); the
	// others are User.
	System bool
	// Shape is the node's shape where the scenario gave it (a VM size
	// the catalog lacks, or a node dump's own figures): vCPUs, memory,
	// GPU model and GPUs a node, written as the agent pool's resource
	// tags (TagCPU...) so that the template reads back to the same pool.
	// Empty values are not written.
	Shape Shape
	// Line is where the resource is in the file (read only).
	Line int
}

// Shape is a node's shape as gpuplan's tags carry it.
type Shape struct {
	CPU, Memory, GPUModel, GPUs string
}

// The tags that carry a Shape: ARM resource tags on the agent pool
// (properties.tags), which AKS keeps and puts on the pool's VM scale set.
const (
	TagCPU      = "gpuplan.dev/cpu"
	TagMemory   = "gpuplan.dev/memory"
	TagGPUModel = "gpuplan.dev/gpu-model"
	TagGPUs     = "gpuplan.dev/gpus-per-node"
)

func (sh Shape) tags() map[string]string {
	t := map[string]string{}
	for k, v := range map[string]string{TagCPU: sh.CPU, TagMemory: sh.Memory, TagGPUModel: sh.GPUModel, TagGPUs: sh.GPUs} {
		if v != "" {
			t[k] = v
		}
	}
	if len(t) == 0 {
		return nil
	}
	return t
}

type template struct {
	Schema         string               `json:"$schema"`
	ContentVersion string               `json:"contentVersion"`
	Metadata       map[string]string    `json:"metadata,omitempty"`
	Parameters     map[string]parameter `json:"parameters"`
	Resources      []resource           `json:"resources"`
}

type parameter struct {
	Type         string            `json:"type"`
	DefaultValue any               `json:"defaultValue,omitempty"`
	Metadata     map[string]string `json:"metadata,omitempty"`
}

type resource struct {
	Type       string     `json:"type"`
	APIVersion string     `json:"apiVersion"`
	Name       string     `json:"name"`
	Properties properties `json:"properties"`
}

type properties struct {
	VMSize                 string            `json:"vmSize"`
	Count                  int               `json:"count"`
	Mode                   string            `json:"mode"`
	OSType                 string            `json:"osType"`
	ScaleSetPriority       string            `json:"scaleSetPriority,omitempty"`
	ScaleSetEvictionPolicy string            `json:"scaleSetEvictionPolicy,omitempty"`
	SpotMaxPrice           *float64          `json:"spotMaxPrice,omitempty"`
	EnableAutoScaling      bool              `json:"enableAutoScaling,omitempty"`
	MinCount               *int              `json:"minCount,omitempty"`
	MaxCount               *int              `json:"maxCount,omitempty"`
	AvailabilityZones      []string          `json:"availabilityZones,omitempty"`
	NodeLabels             map[string]string `json:"nodeLabels,omitempty"`
	NodeTaints             []string          `json:"nodeTaints,omitempty"`
	Tags                   map[string]string `json:"tags,omitempty"`
}

// validName is AKS's rule for a Linux agent pool's name.
var validName = regexp.MustCompile(`^[a-z][a-z0-9]{0,11}$`)

// CheckName says why a pool name cannot be an AKS agent pool's ("" when
// it can).
func CheckName(name string) string {
	if validName.MatchString(name) {
		return ""
	}
	return fmt.Sprintf("%s is not an AKS agent pool name (a lowercase letter, then lowercase letters and digits, at most 12 in all)", strict.Quote(name))
}

// Write is the ARM template holding pools, in the order given; comments
// go into the template's metadata.
func Write(pools []Pool, location string, comments []string) ([]byte, error) {
	t := template{
		Schema: schemaURL, ContentVersion: "1.0.0.0",
		Parameters: map[string]parameter{
			"clusterName": {Type: "string", Metadata: map[string]string{"description": "the AKS cluster the agent pools join"}},
			"location":    {Type: "string", DefaultValue: location, Metadata: map[string]string{"description": "the region gpuplan priced the pools in"}},
		},
	}
	if len(comments) > 0 {
		t.Metadata = map[string]string{"comments": strings.Join(comments, " ")}
	}
	for _, p := range pools {
		if why := CheckName(p.Name); why != "" {
			return nil, fmt.Errorf("pool %s: %s", p.Name, why)
		}
		mode := "User"
		if p.System {
			mode = "System"
		}
		pr := properties{VMSize: p.VMSize, Count: p.Count, Mode: mode, OSType: "Linux", AvailabilityZones: p.Zones, NodeLabels: p.Labels, NodeTaints: p.Taints, Tags: p.Shape.tags()}
		if p.Spot {
			pr.ScaleSetPriority, pr.ScaleSetEvictionPolicy = "Spot", p.EvictionPolicy
			if pr.ScaleSetEvictionPolicy == "" {
				pr.ScaleSetEvictionPolicy = "Delete"
			}
			pr.SpotMaxPrice = ptr(-1.0) // up to the on-demand price, never evicted for price
			if p.MaxPrice != nil {
				pr.SpotMaxPrice = ptr(*p.MaxPrice)
			}
		} else {
			pr.ScaleSetPriority = "Regular"
		}
		if p.MaxCount > 0 {
			pr.EnableAutoScaling, pr.MinCount, pr.MaxCount = true, ptr(p.MinCount), ptr(p.MaxCount)
		}
		t.Resources = append(t.Resources, resource{Type: ResourceType, APIVersion: APIVersion,
			Name: fmt.Sprintf("[format('{0}/{1}', parameters('clusterName'), '%s')]", p.Name), Properties: pr})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func ptr[T any](v T) *T { return &v }

// nameOf reads an agent pool's name from its resource name: CLUSTER/POOL,
// or the format() expression Write writes.
var formatName = regexp.MustCompile(`^\[format\('\{0\}/\{1\}',\s*parameters\('[^']+'\),\s*'([^']+)'\)\]$`)

func nameOf(s string) (string, bool) {
	if m := formatName.FindStringSubmatch(s); m != nil {
		return m[1], true
	}
	if strings.HasPrefix(s, "[") {
		return "", false
	}
	i := strings.LastIndexByte(s, '/')
	if i < 0 || i == len(s)-1 {
		return "", false
	}
	return s[i+1:], true
}

// known are the agent pool properties gpuplan reads; the others are
// listed as not modelled.
var known = map[string]bool{"vmSize": true, "count": true, "mode": true, "osType": true, "scaleSetPriority": true,
	"scaleSetEvictionPolicy": true, "spotMaxPrice": true, "enableAutoScaling": true, "minCount": true, "maxCount": true,
	"availabilityZones": true, "nodeLabels": true, "nodeTaints": true, "tags": true}

// Read reads the agent pools of an ARM template (other resources are
// noted and skipped). location is the region when the template's location
// parameter has no default. Errors name the file, line and field.
func Read(file string, data []byte, location string) ([]Pool, []string, error) {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(data, &root); err != nil {
		return nil, nil, strict.SyntaxError(file, err)
	}
	if len(root.Content) == 0 {
		return nil, nil, strict.Errorf(file, 1, "", "empty: want an ARM template with agentPools resources")
	}
	var t struct {
		Parameters map[string]struct {
			DefaultValue any `yaml:"defaultValue"`
		} `yaml:"parameters"`
		Resources []yamlv3.Node `yaml:"resources"`
	}
	if err := root.Content[0].Decode(&t); err != nil {
		return nil, nil, strict.Errorf(file, 1, "", "not an ARM template: %s", strict.Shorten(err.Error()))
	}
	if p, ok := t.Parameters["location"]; ok {
		if s, ok := p.DefaultValue.(string); ok && !strings.HasPrefix(s, "[") {
			location = s
		}
	}
	var pools []Pool
	var notes []string
	for i := range t.Resources {
		n := &t.Resources[i]
		at := fmt.Sprintf("resources[%d]", i)
		var r struct {
			Type       string         `yaml:"type"`
			Name       string         `yaml:"name"`
			Properties map[string]any `yaml:"properties"`
		}
		if err := n.Decode(&r); err != nil {
			return nil, nil, strict.Errorf(file, n.Line, at, "%s", strict.Shorten(err.Error()))
		}
		if !strings.EqualFold(r.Type, ResourceType) {
			notes = append(notes, fmt.Sprintf("%s:%d: %s: %s is not an agent pool: not read", file, n.Line, at, strict.Quote(r.Type)))
			continue
		}
		p := Pool{Location: location, Line: n.Line}
		name, ok := nameOf(r.Name)
		if !ok {
			return nil, nil, strict.Errorf(file, n.Line, at+".name", "%s: gpuplan reads CLUSTER/POOL or [format('{0}/{1}', parameters('clusterName'), 'POOL')]", strict.Quote(r.Name))
		}
		if why := CheckName(name); why != "" {
			return nil, nil, strict.Errorf(file, n.Line, at+".name", "%s", why)
		}
		p.Name = name
		pr := r.Properties
		field := func(k string) string { return at + ".properties." + k }
		str := func(k string) (string, error) {
			v, ok := pr[k]
			if !ok {
				return "", nil
			}
			s, ok := v.(string)
			if !ok {
				return "", strict.Errorf(file, n.Line, field(k), "%v is not a string", v)
			}
			return s, nil
		}
		num := func(k string) (int, bool, error) {
			v, ok := pr[k]
			if !ok {
				return 0, false, nil
			}
			i, ok := v.(int)
			if !ok || i < 0 || i > 5000 {
				return 0, false, strict.Errorf(file, n.Line, field(k), "%v is not a count from 0 to 5000", v)
			}
			return i, true, nil
		}
		var err error
		if p.VMSize, err = str("vmSize"); err != nil {
			return nil, nil, err
		}
		if p.VMSize == "" {
			return nil, nil, strict.Errorf(file, n.Line, field("vmSize"), "is required: the VM size (Standard_NC40ads_H100_v5)")
		}
		if p.Count, _, err = num("count"); err != nil {
			return nil, nil, err
		}
		mode, err := str("mode")
		if err != nil {
			return nil, nil, err
		}
		p.System = mode == "System"
		prio, err := str("scaleSetPriority")
		if err != nil {
			return nil, nil, err
		}
		switch prio {
		case "", "Regular":
		case "Spot":
			p.Spot = true
			ev, err := str("scaleSetEvictionPolicy")
			if err != nil {
				return nil, nil, err
			}
			switch ev {
			case "", "Delete", "Deallocate":
				p.EvictionPolicy = ev
			default:
				return nil, nil, strict.Errorf(file, n.Line, field("scaleSetEvictionPolicy"), "%s is not Delete or Deallocate", strict.Quote(ev))
			}
			if v, ok := pr["spotMaxPrice"]; ok {
				var m float64
				switch x := v.(type) {
				case int:
					m = float64(x)
				case float64:
					m = x
				default:
					return nil, nil, strict.Errorf(file, n.Line, field("spotMaxPrice"), "%v is not a number", v)
				}
				if m != -1 {
					p.MaxPrice = &m // checked where the pool is built
				}
			}
		default:
			return nil, nil, strict.Errorf(file, n.Line, field("scaleSetPriority"), "%s is not Regular or Spot", strict.Quote(prio))
		}
		if auto, _ := pr["enableAutoScaling"].(bool); auto {
			lo, _, err := num("minCount")
			if err != nil {
				return nil, nil, err
			}
			hi, ok, err := num("maxCount")
			if err != nil {
				return nil, nil, err
			}
			if !ok || hi < lo || hi == 0 {
				return nil, nil, strict.Errorf(file, n.Line, field("maxCount"), "an autoscaled agent pool needs maxCount at least minCount (%d) and above 0", lo)
			}
			p.MinCount, p.MaxCount = lo, hi
		}
		if zs, ok := pr["availabilityZones"].([]any); ok {
			for _, z := range zs {
				p.Zones = append(p.Zones, fmt.Sprint(z))
			}
		}
		if ls, ok := pr["nodeLabels"].(map[string]any); ok {
			p.Labels = map[string]string{}
			for k, v := range ls {
				p.Labels[k] = fmt.Sprint(v)
			}
		}
		if ts, ok := pr["nodeTaints"].([]any); ok {
			for j, v := range ts {
				s := fmt.Sprint(v)
				if _, _, _, err := ParseTaint(s); err != nil {
					return nil, nil, strict.Errorf(file, n.Line, fmt.Sprintf("%s[%d]", field("nodeTaints"), j), "%v", err)
				}
				p.Taints = append(p.Taints, s)
			}
		}
		if tags, ok := pr["tags"].(map[string]any); ok {
			for k, v := range tags {
				x := fmt.Sprint(v)
				switch k {
				case TagCPU:
					p.Shape.CPU = x
				case TagMemory:
					p.Shape.Memory = x
				case TagGPUModel:
					p.Shape.GPUModel = x
				case TagGPUs:
					p.Shape.GPUs = x
				}
			}
		}
		var other []string
		for k := range pr {
			if !known[k] {
				other = append(other, k)
			}
		}
		if len(other) > 0 {
			sort.Strings(other)
			notes = append(notes, fmt.Sprintf("%s:%d: agent pool %s: %s not modelled", file, n.Line, name, strings.Join(other, ", ")))
		}
		pools = append(pools, p)
	}
	if len(pools) == 0 {
		return nil, nil, strict.Errorf(file, 1, "resources", "no %s resource", ResourceType)
	}
	return pools, notes, nil
}

// UserLabels are the labels an agent pool's nodeLabels may carry: those
// AKS, the kubelet or a CSI driver set on every node (kubernetes.azure.com/,
// the kubernetes.io and k8s.io domains, topology.disk.csi.azure.com/,
// agentpool, storageprofile, storagetier) are left out, as AKS refuses
// or overwrites them; SystemLabels gives them back on reading.
func UserLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		if !systemLabel(k) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func systemLabel(k string) bool {
	switch k {
	case "agentpool", "storageprofile", "storagetier":
		return true
	}
	domain, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	for _, d := range []string{"kubernetes.io", "k8s.io", "kubernetes.azure.com", "topology.disk.csi.azure.com"} {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return false
}

// SystemLabels are the labels AKS puts on every node of the pool p that
// selectors use: its agent pool (both spellings), its mode and, for a
// Spot pool, its priority.
func SystemLabels(p Pool) map[string]string {
	mode := "user"
	if p.System {
		mode = "system"
	}
	l := map[string]string{"agentpool": p.Name, nodes.LabelAKSAgentPool: p.Name, nodes.LabelAKSMode: mode}
	if p.Spot {
		l[nodes.LabelAKSPriority] = "spot"
	}
	return l
}

// ParseTaint splits key=value:Effect (value optional).
func ParseTaint(s string) (key, value, effect string, err error) {
	kv, eff, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", "", fmt.Errorf("%s is not key=value:Effect", strict.Quote(s))
	}
	switch eff {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return "", "", "", fmt.Errorf("%s: effect %s is not NoSchedule, PreferNoSchedule or NoExecute", strict.Quote(s), strict.Quote(eff))
	}
	key, value, _ = strings.Cut(kv, "=")
	if key == "" {
		return "", "", "", fmt.Errorf("%s has no key", strict.Quote(s))
	}
	return key, value, eff, nil
}

// Zone is the zone name gpuplan uses for an AKS zone number in a region
// (eastus and "2": eastus-2, as AKS labels its nodes).
func Zone(location, z string) string {
	if _, err := strconv.Atoi(z); err == nil {
		return location + "-" + z
	}
	return z
}
