package models

import (
	"fmt"
	"sort"
	"strings"
)

// Capacity types of a cloud node.
const (
	OnDemand = "on-demand"
	Spot     = "spot"
)

// Clouds a price catalog knows.
const (
	AWS   = "aws"
	Azure = "azure"
	GCP   = "gcp"
)

// InstanceType is what one cloud instance type offers.
type InstanceType struct {
	Name     string
	Cloud    string
	GPUModel string // the project's model name (A100-40GB, H100-80GB, T4, ...)
	GPUs     int32
	VCPUs    float64
	// MemoryGiB is the instance's memory; GPUMemoryMiB each GPU's.
	MemoryGiB    float64
	GPUMemoryMiB int64
}

// Offering is the hourly price of an instance type in one region or zone
// (Zone "" when the catalog prices the region as a whole). A zero price
// means the capacity type is not offered there.
type Offering struct {
	InstanceType string
	Region, Zone string
	OnDemand     float64
	Spot         float64
}

// PriceCatalog holds instance types and their offerings. Build it with
// AddInstance and AddOffering, then read it with Instance and Quote.
type PriceCatalog struct {
	// Sources describe where the prices come from and their snapshot dates.
	Sources []string
	// Notes say what the reader set aside or tolerated (counts of rows).
	Notes  []string
	types  map[string]InstanceType
	offers map[string][]Offering // by instance type
	// onDemand overrides the on-demand price of (type, region) with a newer
	// list price (source text kept for the quote).
	onDemand map[[2]string]sourcedPrice
}

type sourcedPrice struct {
	price  float64
	source string
}

// NewPriceCatalog is an empty catalog.
func NewPriceCatalog() *PriceCatalog {
	return &PriceCatalog{types: map[string]InstanceType{}, offers: map[string][]Offering{}, onDemand: map[[2]string]sourcedPrice{}}
}

// AddInstance records an instance type (a later one with the same name wins).
func (c *PriceCatalog) AddInstance(t InstanceType) { c.types[t.Name] = t }

// AddOffering records a price row.
func (c *PriceCatalog) AddOffering(o Offering) {
	c.offers[o.InstanceType] = append(c.offers[o.InstanceType], o)
}

// SetOnDemand overrides the on-demand price of an instance type in a
// region, for a newer list than the catalog's rows.
func (c *PriceCatalog) SetOnDemand(instanceType, region string, price float64, source string) {
	c.onDemand[[2]string{instanceType, region}] = sourcedPrice{price, source}
}

// Instance looks an instance type up.
func (c *PriceCatalog) Instance(name string) (InstanceType, bool) {
	t, ok := c.types[name]
	return t, ok
}

// Instances lists the catalog's instance types by name.
func (c *PriceCatalog) Instances() []InstanceType {
	out := make([]InstanceType, 0, len(c.types))
	for _, t := range c.types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Quote is the hourly price a pool pays and how it was found.
type Quote struct {
	PerHour float64
	// Basis says where the price comes from, for the report.
	Basis string
	// Min and Max are the range over the zones the price was taken from.
	Min, Max float64
	Zones    int
}

// Quote prices an instance type in a region (and zone, if given) for a
// capacity type. Without a zone the price is the median over the region's
// zones that offer the capacity type: spot prices differ by zone, and the
// median is a neutral estimate of where a launch lands.
func (c *PriceCatalog) Quote(instanceType, region, zone, capacityType string) (Quote, error) {
	if capacityType != OnDemand && capacityType != Spot {
		return Quote{}, fmt.Errorf("capacity type %q is not %s or %s", capacityType, OnDemand, Spot)
	}
	if capacityType == OnDemand {
		if p, ok := c.onDemand[[2]string{instanceType, region}]; ok {
			return Quote{PerHour: p.price, Basis: p.source, Min: p.price, Max: p.price, Zones: 1}, nil
		}
	}
	rows := c.offers[instanceType]
	if len(rows) == 0 {
		return Quote{}, fmt.Errorf("instance type %q has no prices in the catalog", instanceType)
	}
	var prices, regional []float64
	regions := map[string]bool{}
	for _, o := range rows {
		regions[o.Region] = true
		if o.Region != region {
			continue
		}
		p := o.OnDemand
		if capacityType == Spot {
			p = o.Spot
		}
		if p <= 0 {
			continue
		}
		if o.Zone == "" {
			regional = append(regional, p)
		}
		if zone == "" || o.Zone == zone {
			prices = append(prices, p)
		}
	}
	where := region
	if zone != "" {
		where += " zone " + zone
		if len(prices) == 0 && len(regional) > 0 {
			// A catalog that prices the region, not its zones (Azure's):
			// every zone at the region's price.
			prices, where = regional, region+" (priced by region, not zone)"
		}
	}
	if len(prices) == 0 {
		if !regions[region] {
			return Quote{}, fmt.Errorf("instance type %q has no prices in region %q (it has: %s)", instanceType, region, strings.Join(sortedSet(regions), ", "))
		}
		return Quote{}, fmt.Errorf("instance type %q has no %s offer in %s", instanceType, capacityType, where)
	}
	sort.Float64s(prices)
	q := Quote{PerHour: median(prices), Min: prices[0], Max: prices[len(prices)-1], Zones: len(prices)}
	q.Basis = fmt.Sprintf("catalog %s %s", capacityType, where)
	if len(prices) > 1 {
		q.Basis += fmt.Sprintf(", median of %d zones (%.4g-%.4g)", len(prices), q.Min, q.Max)
	}
	return q, nil
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CatalogGPUModel maps a catalog's accelerator name (SkyPilot spelling) to
// the project's GPU model name; memoryMiB, when known, tells the A100
// variants apart.
func CatalogGPUModel(name string, memoryMiB int64) string {
	switch name {
	case "A100":
		if memoryMiB >= 80<<10 {
			return "A100-80GB"
		}
		return "A100-40GB"
	case "H100", "H100-MEGA":
		return "H100-80GB"
	case "H200":
		return "H200-141GB"
	}
	return name
}

// NodePriceSplit divides a node's hourly price over its GPUs, vCPUs and
// memory the way OpenCost does when a cloud gives only the node price:
// base rates per GPU-hour, vCPU-hour and GiB-hour set the ratio, scaled so
// the parts add up to the node price.
type NodePriceSplit struct {
	PerGPU, PerVCPU, PerGiB float64
}

// BaseRates are the ratio-setting prices (USD per GPU-, vCPU- and
// GiB-hour). OpenCost's defaults are 0.95, 0.031611 and 0.004237.
type BaseRates struct {
	GPU, VCPU, GiB float64
}

// DefaultBaseRates are OpenCost's default custom-pricing rates.
func DefaultBaseRates() BaseRates { return BaseRates{GPU: 0.95, VCPU: 0.031611, GiB: 0.004237} }

// Split divides price over a node of gpus GPUs, vcpus vCPUs and gib GiB.
func (b BaseRates) Split(price float64, gpus int32, vcpus, gib float64) NodePriceSplit {
	base := b.GPU*float64(gpus) + b.VCPU*vcpus + b.GiB*gib
	if base <= 0 {
		return NodePriceSplit{}
	}
	k := price / base
	return NodePriceSplit{PerGPU: b.GPU * k, PerVCPU: b.VCPU * k, PerGiB: b.GiB * k}
}

// CPUMemoryRates are what a vCPU-hour and a GiB-hour of memory cost on a
// provider's GPU-less instances. They price the CPU and memory of a GPU
// instance so that its GPUs carry the rest of its price: a GPU node's
// cost is mostly its GPUs, and a split by fixed base rates (OpenCost's
// defaults) puts about two thirds of a p5.48xlarge on its CPUs and memory.
type CPUMemoryRates struct {
	VCPU, GiB float64
	// Basis says where the rates come from.
	Basis string
}

// InstancePrice is one GPU-less instance type and its on-demand price.
type InstancePrice struct {
	Name      string
	VCPUs     float64
	GiB       float64
	PerHour   float64
	Reference bool
}

// FitCPUMemoryRates fits price = vcpu x VCPU + gib x GiB over the
// instances by least squares on relative error (each size weighs the
// same), with no intercept: the normal equations of two unknowns.
func FitCPUMemoryRates(rows []InstancePrice) (CPUMemoryRates, bool) {
	var svv, svg, sgg, svp, sgp float64
	for _, r := range rows {
		if r.PerHour <= 0 {
			continue
		}
		v, g := r.VCPUs/r.PerHour, r.GiB/r.PerHour
		svv += v * v
		svg += v * g
		sgg += g * g
		svp += v
		sgp += g
	}
	det := svv*sgg - svg*svg
	if det <= 0 {
		return CPUMemoryRates{}, false
	}
	a := (svp*sgg - sgp*svg) / det
	b := (sgp*svv - svp*svg) / det
	if a <= 0 || b <= 0 {
		return CPUMemoryRates{}, false
	}
	return CPUMemoryRates{VCPU: a, GiB: b}, true
}

// SplitGPUResidual divides a GPU node's hourly price: its vCPUs and memory
// cost what they cost on GPU-less instances, at the node's own discount
// (price over onDemand, so a spot node's CPU is as cheap as its GPUs), and
// its GPUs carry the rest. A node without GPUs, or whose CPU and memory
// alone would cost more than its price, falls back to the base rates'
// ratio.
func SplitGPUResidual(r CPUMemoryRates, fallback BaseRates, price, onDemand float64, gpus int32, vcpus, gib float64) NodePriceSplit {
	if onDemand <= 0 {
		onDemand = price
	}
	hostOD := r.VCPU*vcpus + r.GiB*gib
	if gpus <= 0 || onDemand <= 0 || hostOD >= onDemand || r.VCPU <= 0 {
		return fallback.Split(price, gpus, vcpus, gib)
	}
	k := price / onDemand
	return NodePriceSplit{
		PerGPU:  k * (onDemand - hostOD) / float64(gpus),
		PerVCPU: k * r.VCPU,
		PerGiB:  k * r.GiB,
	}
}
