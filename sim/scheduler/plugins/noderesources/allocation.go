package noderesources

import (
	"fmt"
	"sort"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// ResourceWeights weights cpu, memory and nvidia.com/gpu in an allocation
// score. Resources a node does not have are left out of its average, as
// kube-scheduler does.
type ResourceWeights struct {
	CPU, Memory, GPU int64
}

// DefaultWeights weights the three resources equally.
func DefaultWeights() ResourceWeights { return ResourceWeights{CPU: 1, Memory: 1, GPU: 1} }

// ParseWeights reads a resource -> weight map; empty means DefaultWeights.
func ParseWeights(m map[string]int64) (ResourceWeights, error) {
	if len(m) == 0 {
		return DefaultWeights(), nil
	}
	var w ResourceWeights
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		if v < 0 {
			return w, fmt.Errorf("resource weight for %q is negative", k)
		}
		switch k {
		case ResourceCPU:
			w.CPU = v
		case ResourceMemory:
			w.Memory = v
		case ResourceGPU:
			w.GPU = v
		default:
			return w, fmt.Errorf("unknown resource %q (known: cpu, memory, nvidia.com/gpu)", k)
		}
	}
	if w.CPU+w.Memory+w.GPU == 0 {
		return w, fmt.Errorf("resource weights are all zero")
	}
	return w, nil
}

// UsedFractionScores writes, for each node, the weighted mean over resources
// of 100 x (allocated + requested) / allocatable, in integers, as the node
// would be after taking pod. most=false gives 100 minus that (the share
// left free), the LeastAllocated strategy.
func UsedFractionScores(st *scheduler.CycleState, w ResourceWeights, pod *cluster.PodSpec, nodes []int32, out []int64, most bool) {
	c := st.Cluster
	reqGPU := pod.MilliGPUs()
	for i, n := range nodes {
		nd := &c.Nodes[n]
		spec := &c.Pools[nd.Pool].Spec
		var sum, wsum int64
		if w.CPU > 0 {
			used := spec.MilliCPU - nd.FreeCPU + pod.MilliCPU
			sum += w.CPU * frac(used, spec.MilliCPU, most)
			wsum += w.CPU
		}
		if w.Memory > 0 {
			used := spec.MemoryMiB - nd.FreeMem + pod.MemoryMiB
			sum += w.Memory * frac(used, spec.MemoryMiB, most)
			wsum += w.Memory
		}
		if w.GPU > 0 && spec.GPUsPerNode > 0 {
			total := int64(spec.GPUsPerNode) * cluster.MilliGPU
			used := total - nd.FreeMilli + reqGPU
			sum += w.GPU * frac(used, total, most)
			wsum += w.GPU
		}
		if wsum == 0 {
			out[i] = 0
			continue
		}
		out[i] = sum / wsum
	}
}

func frac(used, capacity int64, most bool) int64 {
	if capacity <= 0 {
		return 0
	}
	if used > capacity {
		used = capacity
	}
	if most {
		return used * scheduler.MaxNodeScore / capacity
	}
	return (capacity - used) * scheduler.MaxNodeScore / capacity
}
