// Package bestfit prefers the node left with the least free CPU and GPU
// after placing the pod: score = 100 x (1 - sum over cpu and GPU of 0.5 x
// (free - request) / largest node's capacity), the FGD paper's BestFit.
package bestfit

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "BestFit"

// BestFit is a Score plugin.
type BestFit struct{}

var _ scheduler.ScorePlugin = &BestFit{}

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) { return &BestFit{}, nil }

func (*BestFit) Name() string { return Name }

// MaxSpec is the largest node's CPU (milli) and GPU (milli) in the cluster.
func MaxSpec(c *cluster.Cluster) (cpu, gpu float64) {
	for i := range c.Pools {
		s := &c.Pools[i].Spec
		cpu = max(cpu, float64(s.MilliCPU))
		gpu = max(gpu, float64(s.GPUsPerNode)*cluster.MilliGPU)
	}
	return max(cpu, 1), max(gpu, 1)
}

func (*BestFit) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	maxCPU, maxGPU := MaxSpec(st.Cluster)
	req := float64(pod.MilliGPUs())
	for i, n := range nodes {
		nd := &st.Cluster.Nodes[n]
		s := 0.5*float64(nd.FreeCPU-pod.MilliCPU)/maxCPU + 0.5*(float64(nd.FreeMilli)-req)/maxGPU
		out[i] = int64((1 - s) * float64(scheduler.MaxNodeScore))
	}
}
