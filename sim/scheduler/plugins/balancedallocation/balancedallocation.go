// Package balancedallocation scores nodes by how evenly their resources
// would be requested after taking the pod: kube-scheduler's
// NodeResourcesBalancedAllocation, a score plugin of its default profile
// (beside NodeResourcesFit's LeastAllocated, both on cpu and memory).
//
// For each resource considered (cpu and memory by default; nvidia.com/gpu
// when named and the pod asks for GPUs, as kube-scheduler leaves out an
// extended resource the pod does not request) the fraction requested is
// (requested on the node + the pod's request) / allocatable, at most 1;
// a resource the node does not have is left out. The balance is
// (1 - std) x MaxNodeScore, truncated, where std is the population
// standard deviation of the fractions (|f1 - f2| / 2 for two, 0 for one).
// The score is how much the pod improves the balance, as kube-scheduler
// v1.37 computes it: 50 + (50 + balance with the pod - balance without
// it) / 2 in integers (75: no change; 100: best; 50: worst).
// A pod that requests none of the resources scores 0 everywhere (the
// plugin skips best-effort pods). Resource weights only select the
// resources; their values are not used, as in kube-scheduler.
package balancedallocation

import (
	"math"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/noderesources"
)

// Name is the plugin's registered name (kube-scheduler's).
const Name = "NodeResourcesBalancedAllocation"

// BalancedAllocation is a Score plugin.
type BalancedAllocation struct{ cpu, mem, gpu bool }

var _ scheduler.ScorePlugin = &BalancedAllocation{}

// New returns the plugin over the resources cfg.Resources names with a
// positive weight (none: cpu and memory, kube-scheduler's default).
func New(cfg scheduler.PluginConfig, _ *scheduler.Handle) (scheduler.Plugin, error) {
	if len(cfg.Resources) == 0 {
		return &BalancedAllocation{cpu: true, mem: true}, nil
	}
	w, err := noderesources.ParseWeights(cfg.Resources)
	if err != nil {
		return nil, err
	}
	return &BalancedAllocation{cpu: w.CPU > 0, mem: w.Memory > 0, gpu: w.GPU > 0}, nil
}

func (*BalancedAllocation) Name() string { return Name }

func (p *BalancedAllocation) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	c := st.Cluster
	reqGPU := pod.MilliGPUs()
	gpu := p.gpu && reqGPU > 0
	if !(p.cpu && pod.MilliCPU > 0) && !(p.mem && pod.MemoryMiB > 0) && !gpu {
		clear(out[:len(nodes)]) // best effort: skipped
		return
	}
	for i, n := range nodes {
		nd := &c.Nodes[n]
		spec := &c.Pools[nd.Pool].Spec
		// after: the fractions with the pod; before: without it.
		var after, before [3]float64
		k := 0
		if p.cpu && spec.MilliCPU > 0 {
			used := spec.MilliCPU - nd.FreeCPU
			after[k], before[k] = fraction(used+pod.MilliCPU, spec.MilliCPU), fraction(used, spec.MilliCPU)
			k++
		}
		if p.mem && spec.MemoryMiB > 0 {
			used := spec.MemoryMiB - nd.FreeMem
			after[k], before[k] = fraction(used+pod.MemoryMiB, spec.MemoryMiB), fraction(used, spec.MemoryMiB)
			k++
		}
		if gpu && spec.GPUsPerNode > 0 {
			total := int64(spec.GPUsPerNode) * cluster.MilliGPU
			used := total - nd.FreeMilli
			after[k], before[k] = fraction(used+reqGPU, total), fraction(used, total)
			k++
		}
		out[i] = Improvement(Score(after[:k]), Score(before[:k]))
	}
}

// Improvement is the plugin's score from the balance with the pod (with)
// and without it (without), each a Score in [50, 100]: kube-scheduler's
// balancedResourceScorer (k8s.io/kubernetes v1.37.2) scores how much the pod improves
// the node's balance, MaxNodeScore/2 + (MaxNodeScore/2 + with -
// without)/2 in integers, again in [50, 100]: 75 for no change.
func Improvement(with, without int64) int64 {
	return scheduler.MaxNodeScore/2 + (scheduler.MaxNodeScore/2+with-without)/2
}

func fraction(requested, allocatable int64) float64 {
	return min(float64(requested)/float64(allocatable), 1)
}

// Score is (1 - std) x MaxNodeScore for the requested fractions f, as
// kube-scheduler's balancedResourceScorer computes it.
func Score(f []float64) int64 {
	std := 0.0
	switch n := len(f); {
	case n == 2:
		std = math.Abs((f[0] - f[1]) / 2)
	case n > 2:
		var total float64
		for _, x := range f {
			total += x
		}
		mean := total / float64(n)
		var sum float64
		for _, x := range f {
			d := x - mean
			sum += float64(d * d) // the conversion keeps it from being fused
		}
		std = math.Sqrt(sum / float64(n))
	}
	return int64((1 - std) * float64(scheduler.MaxNodeScore))
}
