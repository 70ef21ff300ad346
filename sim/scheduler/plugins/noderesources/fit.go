// Package noderesources is the NodeResourcesFit plugin: a pod fits a node
// when the node's free CPU, memory and GPUs cover the pod's requests
// (requests equal limits). GPUs are the nvidia.com/gpu extended resource,
// whole devices; a pod asking for a share of one GPU needs one device with
// that much free.
//
// PreFilter drops pools whose empty nodes are too small, then (outside
// diagnosis) pools with no node that has enough whole GPUs free, and fails
// fast when the eligible pools together cannot hold the pods the cycle must
// place, counting from the per-pool histogram of free GPUs. Filter checks
// each candidate node.
package noderesources

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "NodeResourcesFit"

// Resource names as Kubernetes spells them.
const (
	ResourceCPU    = "cpu"
	ResourceMemory = "memory"
	ResourceGPU    = "nvidia.com/gpu"
)

// Fit is the NodeResourcesFit plugin.
type Fit struct {
	tooSmall    map[string]*scheduler.Status
	insuffGPU   *scheduler.Status
	insuffShare *scheduler.Status
}

var (
	_ scheduler.PreFilterPlugin = &Fit{}
	_ scheduler.FilterPlugin    = &Fit{}
)

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &Fit{
		tooSmall:    map[string]*scheduler.Status{},
		insuffGPU:   scheduler.NewStatus(scheduler.Unschedulable, Name, "Insufficient "+ResourceGPU),
		insuffShare: scheduler.NewStatus(scheduler.Unschedulable, Name, "Insufficient "+ResourceGPU+" (no GPU with enough free share)"),
	}, nil
}

func (*Fit) Name() string { return Name }

// Insufficient lists the resources free falls short of for pod, in
// kube-scheduler's wording ("Insufficient cpu", ...). freeDevices are the
// free devices of the kind the pod asks for.
func Insufficient(freeCPU, freeMem int64, freeDevices, maxShare int32, p *cluster.PodSpec) []string {
	var out []string
	if freeCPU < p.MilliCPU {
		out = append(out, "Insufficient "+ResourceCPU)
	}
	if freeMem < p.MemoryMiB {
		out = append(out, "Insufficient "+ResourceMemory)
	}
	if (p.GPUMilli > 0 && maxShare < p.GPUMilli) || (p.GPUMilli == 0 && freeDevices < p.GPUs) {
		out = append(out, "Insufficient "+p.GPUResource())
	}
	return out
}

func (f *Fit) staticStatus(reasons []string) *scheduler.Status {
	key := ""
	for _, r := range reasons {
		key += r + ";"
	}
	s, ok := f.tooSmall[key]
	if !ok {
		s = scheduler.NewStatus(scheduler.UnschedulableAndUnresolvable, Name, reasons...)
		f.tooSmall[key] = s
	}
	return s
}

func (f *Fit) PreFilter(st *scheduler.CycleState, job *scheduler.JobInfo) *scheduler.Status {
	c := st.Cluster
	pod := &job.Spec.Pod
	var static []string
	st.KeepPools(func(pool int32) bool {
		if c.FitsEmpty(int(pool), pod) {
			return true
		}
		if static == nil {
			s := &c.Pools[pool].Spec
			if s.MilliCPU < pod.MilliCPU {
				static = append(static, "Insufficient "+ResourceCPU)
			}
			if s.MemoryMiB < pod.MemoryMiB {
				static = append(static, "Insufficient "+ResourceMemory)
			}
			gpuOnly := *pod
			gpuOnly.MilliCPU, gpuOnly.MemoryMiB = 0, 0
			if !c.FitsEmpty(int(pool), &gpuOnly) {
				// Too few GPUs, or not of the kind the pod asks for.
				static = append(static, "Insufficient "+pod.GPUResource())
			}
		}
		return false
	})
	if len(st.Pools) == 0 {
		return f.staticStatus(static)
	}
	if st.Diagnosing || pod.GPUs == 0 || pod.MIG != "" {
		return nil
	}
	// Whole-GPU pods: how many could the eligible pools take, by free GPUs alone?
	g := pod.GPUs
	var fit int64
	st.KeepPools(func(pool int32) bool {
		hist := c.Pools[pool].FreeByWhole
		var n int64
		for k := g; k < int32(len(hist)); k++ {
			n += int64(hist[k]) * int64(k/g)
		}
		fit += n
		return n > 0
	})
	if len(st.Pools) == 0 || fit < int64(st.MinPods) {
		return f.insuffGPU
	}
	return nil
}

func (f *Fit) FilterBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32) []int32 {
	ns := st.Cluster.Nodes
	out := nodes[:0]
	if pod.MIG != "" {
		for _, n := range nodes {
			if st.Cluster.Fits(n, pod) {
				out = append(out, n)
			}
		}
		return out
	}
	if pod.GPUMilli > 0 {
		for _, n := range nodes {
			nd := &ns[n]
			if nd.FreeCPU >= pod.MilliCPU && nd.FreeMem >= pod.MemoryMiB && nd.MaxShare >= pod.GPUMilli {
				out = append(out, n)
			}
		}
		return out
	}
	for _, n := range nodes {
		nd := &ns[n]
		if nd.FreeCPU >= pod.MilliCPU && nd.FreeMem >= pod.MemoryMiB && nd.FreeWhole >= pod.GPUs {
			out = append(out, n)
		}
	}
	return out
}

func (f *Fit) Filter(st *scheduler.CycleState, pod *cluster.PodSpec, node int32) *scheduler.Status {
	nd := &st.Cluster.Nodes[node]
	if r := Insufficient(nd.FreeCPU, nd.FreeMem, st.Cluster.FreeDevices(node, pod), nd.MaxShare, pod); len(r) > 0 {
		return scheduler.NewStatus(scheduler.Unschedulable, Name, r...)
	}
	return nil
}
