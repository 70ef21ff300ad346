package karpenter

import (
	"slices"
	"strings"
)

// Offer is an instance type at a capacity type and its price.
type Offer struct {
	Type         *InstanceType
	CapacityType string
	PerHour      float64
}

// Pod is what one pending pod asks for: millicores, MiB and whole GPUs.
type Pod struct {
	MilliCPU, MemoryMiB int64
	GPUs                int32
}

// Fits reports whether one pod fits an empty node of the type. Nodes are
// sized by the instance's vCPUs and memory, as every gpuplan pool is
// (Karpenter's allocatable estimate keeps back about 2% of the CPU and
// 7-20% of the memory for the kubelet and the system; see Allocatable).
func (t *InstanceType) Fits(p Pod) bool {
	return p.MilliCPU <= t.VCPUs*1000 && p.MemoryMiB <= t.MemoryMiB && int64(p.GPUs) <= t.AllocGPUs
}

// Cheapest is the offer Karpenter launches for one pending pod: among the
// offers whose type fits it, a spot one when any fits (Karpenter prefers
// spot when a NodePool allows both), else on-demand; within that the
// lowest price, ties to the first in the list. ok is false when nothing
// fits.
func Cheapest(offers []Offer, p Pod) (best Offer, ok bool) {
	for _, o := range offers {
		if !o.Type.Fits(p) {
			continue
		}
		switch {
		case !ok:
		case o.CapacityType == Spot && best.CapacityType != Spot:
		case (o.CapacityType == Spot) == (best.CapacityType == Spot) && o.PerHour < best.PerHour:
		default:
			continue
		}
		best, ok = o, true
	}
	return best, ok
}

// Prune drops the instance types no pod would ever be launched on: a type
// without GPUs that another GPU-less type of the same architecture (and
// the same values of the keys a workload selects nodes by) matches or
// beats in vCPUs and memory at no higher on-demand price (a type whose
// GPUs the NVIDIA device plugin does not advertise counts as GPU-less).
// Whatever a pod
// asks, the cheapest fitting type is never a dropped one (ties keep the
// type first in catalog order). Types with GPUs, or without a price, are
// kept. The result keeps the input's order.
func Prune(types []*InstanceType, selectKeys []string) []*InstanceType {
	group := func(t *InstanceType) string {
		var b strings.Builder
		b.WriteString(t.Labels[LabelArch])
		b.WriteString("|")
		b.WriteString(t.Labels[LabelOS])
		for _, k := range selectKeys {
			v, ok := t.Labels[k]
			b.WriteString("|")
			if ok {
				b.WriteString("=" + v)
			}
		}
		return b.String()
	}
	prunable := func(t *InstanceType) bool { return !t.HasGPU() && t.OnDemandPerHour > 0 }
	groups := map[string][]int{}
	for i, t := range types {
		if prunable(t) {
			g := group(t)
			groups[g] = append(groups[g], i)
		}
	}
	drop := make([]bool, len(types))
	for _, idx := range groups {
		for _, i := range idx {
			a := types[i]
			for _, j := range idx {
				b := types[j]
				if i == j || drop[j] {
					continue
				}
				if b.VCPUs >= a.VCPUs && b.MemoryMiB >= a.MemoryMiB && b.OnDemandPerHour <= a.OnDemandPerHour {
					strictly := b.VCPUs > a.VCPUs || b.MemoryMiB > a.MemoryMiB || b.OnDemandPerHour < a.OnDemandPerHour
					if strictly || j < i {
						drop[i] = true
						break
					}
				}
			}
		}
	}
	out := make([]*InstanceType, 0, len(types))
	for i, t := range types {
		if !drop[i] {
			out = append(out, t)
		}
	}
	return slices.Clip(out)
}
