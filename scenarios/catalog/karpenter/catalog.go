package karpenter

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

//go:embed aws_instance_types.csv aws_ondemand_prices.csv
var files embed.FS

// Well-known label keys Karpenter's AWS provider puts on nodes.
const (
	LabelCategory        = "karpenter.k8s.aws/instance-category"
	LabelFamily          = "karpenter.k8s.aws/instance-family"
	LabelGeneration      = "karpenter.k8s.aws/instance-generation"
	LabelSize            = "karpenter.k8s.aws/instance-size"
	LabelCPU             = "karpenter.k8s.aws/instance-cpu"
	LabelMemory          = "karpenter.k8s.aws/instance-memory"
	LabelGPUName         = "karpenter.k8s.aws/instance-gpu-name"
	LabelGPUCount        = "karpenter.k8s.aws/instance-gpu-count"
	LabelGPUManufacturer = "karpenter.k8s.aws/instance-gpu-manufacturer"
	LabelGPUMemory       = "karpenter.k8s.aws/instance-gpu-memory"
	LabelInstanceType    = "node.kubernetes.io/instance-type"
	LabelArch            = "kubernetes.io/arch"
	LabelOS              = "kubernetes.io/os"
	LabelCapacityType    = "karpenter.sh/capacity-type"
	LabelZone            = "topology.kubernetes.io/zone"
	LabelRegion          = "topology.kubernetes.io/region"
	LabelNodePool        = "karpenter.sh/nodepool"
)

// Capacity types.
const (
	OnDemand = "on-demand"
	Spot     = "spot"
	Reserved = "reserved"
)

// Region is the region the catalog's prices are for.
const Region = "us-east-1"

// InstanceType is one AWS instance type as Karpenter sees it.
type InstanceType struct {
	Name string
	// Labels are the well-known labels Karpenter puts on a node of this
	// type (those it does not set for the type are absent).
	Labels map[string]string
	// VCPUs, MemoryMiB and GPUs are the instance's own (its labels).
	VCPUs     int64
	MemoryMiB int64
	GPUs      int32
	// GPUName is instance-gpu-name (a10g, h100, ...) and GPUMemoryMiB each
	// GPU's memory; empty and 0 without GPUs.
	GPUName      string
	GPUMemoryMiB int64
	// Allocatable is Karpenter's estimate of what pods can use: cpu in
	// millicores, memory in MiB, nvidia.com/gpu.
	AllocMilliCPU, AllocMemoryMiB int64
	AllocGPUs                     int64
	// OnDemandPerHour is the us-east-1 on-demand Linux price in USD (0: the
	// table has none).
	OnDemandPerHour float64
}

// HasGPU reports whether the type has NVIDIA GPUs the device plugin
// advertises as nvidia.com/gpu.
func (t *InstanceType) HasGPU() bool { return t.AllocGPUs > 0 }

// Catalog is every instance type, in the order of the reference (by
// family, then size).
type Catalog struct {
	Types  []InstanceType
	byName map[string]int
}

// Lookup finds an instance type by name.
func (c *Catalog) Lookup(name string) (*InstanceType, bool) {
	i, ok := c.byName[name]
	if !ok {
		return nil, false
	}
	return &c.Types[i], true
}

// AWS reads the embedded catalog. Each call parses it afresh (a few
// milliseconds); callers keep the result.
func AWS() (*Catalog, error) {
	types, err := files.ReadFile("aws_instance_types.csv")
	if err != nil {
		return nil, err
	}
	prices, err := files.ReadFile("aws_ondemand_prices.csv")
	if err != nil {
		return nil, err
	}
	return Read(types, prices)
}

// Read parses an instance-type table (the columns of
// aws_instance_types.csv) and a price table (instance_type,
// on_demand_usd_per_hour, region).
func Read(types, prices []byte) (*Catalog, error) {
	price := map[string]float64{}
	pr := csv.NewReader(bytes.NewReader(prices))
	prows, err := pr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("aws_ondemand_prices.csv: %v", err)
	}
	for i, r := range prows {
		if i == 0 || len(r) < 2 {
			continue
		}
		p, err := strconv.ParseFloat(r[1], 64)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("aws_ondemand_prices.csv:%d: price %q is not a number", i+1, r[1])
		}
		price[r[0]] = p
	}
	tr := csv.NewReader(bytes.NewReader(types))
	rows, err := tr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("aws_instance_types.csv: %v", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("aws_instance_types.csv: empty")
	}
	head := rows[0]
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, need := range []string{"instance_type", LabelCPU, LabelMemory, "allocatable/cpu", "allocatable/memory"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("aws_instance_types.csv: no column %s", need)
		}
	}
	c := &Catalog{byName: map[string]int{}}
	for i, r := range rows[1:] {
		line := i + 2
		t := InstanceType{Name: r[col["instance_type"]], Labels: map[string]string{}}
		for j, h := range head {
			if j >= len(r) || r[j] == "" || !strings.Contains(h, "/") || strings.HasPrefix(h, "allocatable/") {
				continue
			}
			t.Labels[h] = r[j]
		}
		t.Labels[LabelInstanceType] = t.Name
		num := func(key string) (int64, error) {
			v, ok := t.Labels[key]
			if !ok {
				return 0, nil
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("aws_instance_types.csv:%d: %s %q is not an integer", line, key, v)
			}
			return n, nil
		}
		var gpus int64
		if t.VCPUs, err = num(LabelCPU); err == nil {
			if t.MemoryMiB, err = num(LabelMemory); err == nil {
				if gpus, err = num(LabelGPUCount); err == nil {
					t.GPUMemoryMiB, err = num(LabelGPUMemory)
				}
			}
		}
		if err != nil {
			return nil, err
		}
		t.GPUs = int32(gpus)
		t.GPUName = t.Labels[LabelGPUName]
		alloc := func(res string, scale int) (int64, error) {
			j, ok := col["allocatable/"+res]
			if !ok || r[j] == "" {
				return 0, nil
			}
			q, err := resource.ParseQuantity(r[j])
			if err != nil {
				return 0, fmt.Errorf("aws_instance_types.csv:%d: allocatable/%s %q: %v", line, res, r[j], err)
			}
			switch scale {
			case 1:
				return q.MilliValue(), nil
			case 2:
				return q.Value() >> 20, nil
			}
			return q.Value(), nil
		}
		if t.AllocMilliCPU, err = alloc("cpu", 1); err == nil {
			if t.AllocMemoryMiB, err = alloc("memory", 2); err == nil {
				t.AllocGPUs, err = alloc("nvidia.com/gpu", 0)
			}
		}
		if err != nil {
			return nil, err
		}
		t.OnDemandPerHour = price[t.Name]
		if _, dup := c.byName[t.Name]; dup {
			return nil, fmt.Errorf("aws_instance_types.csv:%d: %s listed twice", line, t.Name)
		}
		c.byName[t.Name] = len(c.Types)
		c.Types = append(c.Types, t)
	}
	return c, nil
}

// GPUModel is the project's name for the type's GPU (A100-40GB, H100-80GB,
// A10G, L4, ...): instance-gpu-name upper-cased, the A100, H100, H200 and
// V100 told apart by their memory. Empty without GPUs.
func (t *InstanceType) GPUModel() string {
	if t.GPUName == "" {
		return ""
	}
	name := strings.ToUpper(t.GPUName)
	gib := t.GPUMemoryMiB >> 10
	switch name {
	case "A100":
		if gib >= 80 {
			return "A100-80GB"
		}
		return "A100-40GB"
	case "H100":
		return "H100-80GB"
	case "H200":
		return "H200-141GB"
	case "V100":
		if gib >= 32 {
			return "V100-32GB"
		}
	}
	return name
}

// sortedKeys lists a set's members in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
