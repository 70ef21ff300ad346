// Package gpupacking packs GPU pods, as the FGD paper's GpuPacking: best,
// a pod that fits on GPUs already in use (100 minus a tenth of the free
// percentage left on them, at least 50); then one that must open fully free
// GPUs on a node already in use (50 minus the GPUs it opens, at least 33);
// last, an idle node (33 minus its GPUs). Pods without GPUs score 0.
package gpupacking

import (
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "GpuPacking"

// GpuPacking is a Score plugin.
type GpuPacking struct{ idx []int }

var _ scheduler.ScorePlugin = &GpuPacking{}

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &GpuPacking{}, nil
}

func (*GpuPacking) Name() string { return Name }

func (p *GpuPacking) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	const maxS = scheduler.MaxNodeScore
	perGPU, want := pod.GPUMilli, int32(1)
	if pod.GPUMilli == 0 {
		perGPU, want = cluster.MilliGPU, pod.GPUs
	}
	for i, n := range nodes {
		if pod.MilliGPUs() == 0 {
			out[i] = 0
			continue
		}
		nd := &st.Cluster.Nodes[n]
		gf := st.Cluster.GPUFree(n)
		if int(nd.FreeWhole) == len(gf) { // idle node
			out[i] = max(maxS/3-int64(nd.FreeWhole), int64(nd.FreeWhole))
			continue
		}
		// Least free GPUs first.
		p.idx = p.idx[:0]
		for g := range gf {
			p.idx = append(p.idx, g)
		}
		slices.SortStableFunc(p.idx, func(a, b int) int { return int(gf[a] - gf[b]) })
		need, opened := want, int64(0)
		var freePct int64
		for _, g := range p.idx {
			if need == 0 {
				break
			}
			if gf[g] >= perGPU {
				need--
				freePct += int64(gf[g]) * 100 / cluster.MilliGPU
				if gf[g] == cluster.MilliGPU {
					opened++
				}
			}
		}
		switch {
		case need > 0:
			out[i] = 0
		case opened > 0:
			out[i] = max(maxS/2-opened, maxS/3)
		default:
			out[i] = max(maxS-freePct/10, maxS/2)
		}
	}
}
