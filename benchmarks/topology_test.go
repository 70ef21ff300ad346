package benchmarks

import (
	"runtime"
	"runtime/debug"
	"testing"

	"gpuplan.dev/gpuplan/models/topology"
)

// BenchmarkTopologyLevels is issue 28's must-show: the 1M replay of
// BenchmarkFloorAndReplay (1,250 nodes of 8 GPUs, no output folder)
// flat, and with topology levels on every node (racks of 8 nodes, blocks
// of 4 racks: 40 blocks; every node carries block, rack and host for
// Kueue's topology-aware scheduling), in each iteration, reporting each
// one's CPU seconds and the second over the first (target: at most
// 1.3). The Philly jobs ask for no topology and are not training jobs:
// this is the cost of the levels themselves on the placement path. Run
// it with -benchtime 1x -count 3 and take the medians.
func BenchmarkTopologyLevels(b *testing.B) {
	const jobs = 1_000_000
	flat := scaleCase{jobs: jobs, offered: 1000, nodes: 1250}
	topo := flat
	topo.topo = topology.Spec{NodesPerRack: 8, RacksPerBlock: 4}
	trace := phillyTrace(b, jobs, flat.offered)
	runtime.GC()
	debug.FreeOSMemory()
	b.ResetTimer()
	var flatCPU, topoCPU float64
	for i := 0; i < b.N; i++ {
		cpu := cpuTime()
		if n := flat.replay(b, trace, ""); n != jobs {
			b.Fatalf("flat: %d jobs simulated, want %d", n, jobs)
		}
		runtime.GC()
		mid := cpuTime()
		if n := topo.replay(b, trace, ""); n != jobs {
			b.Fatalf("topology: %d jobs simulated, want %d", n, jobs)
		}
		runtime.GC()
		flatCPU += (mid - cpu).Seconds()
		topoCPU += (cpuTime() - mid).Seconds()
	}
	b.StopTimer()
	b.ReportMetric(flatCPU/float64(b.N), "flat-cpu-s/op")
	b.ReportMetric(topoCPU/float64(b.N), "topology-cpu-s/op")
	b.ReportMetric(topoCPU/flatCPU, "topology/flat")
}
