package benchmarks

import (
	"testing"
	"time"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

// The whole-run pool's benchmarks: run them with -cpu 1,2 (make bench
// does); the pool takes one worker per GOMAXPROCS, so the ratio of the
// two times is what a second core buys. cpu/wall is the cores kept busy
// on average: near 2 at -cpu 2 when the machine has two cores free, even
// where other work on a shared machine slows the wall clock.

// BenchmarkCoresSpotWhatIf is `gpuplan simulate
// scenarios/examples/spot-what-if.yaml` without writing files: the
// scenario, its three variants and the all-on-demand twin, then three
// spot-sensitivity curves of 17 runs each (56 runs).
func BenchmarkCoresSpotWhatIf(b *testing.B) {
	sc, err := scenarios.LoadFile("../scenarios/examples/spot-what-if.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer reportParallelism(b, cpuTime())
	for i := 0; i < b.N; i++ {
		out, err := pipeline.Scenario(sc, pipeline.Options{File: "spot-what-if.yaml"})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Variants) != 3 || len(out.Main.Summary.SpotSensitivity) != 3 {
			b.Fatalf("%d variants and %d spot curves, want 3 and 3", len(out.Variants), len(out.Main.Summary.SpotSensitivity))
		}
	}
}

// BenchmarkCoresValidate8Seeds is `gpuplan validate` of the example in
// scenarios/examples/validate with --replications 8: baseline and
// candidate on 8 seeds (16 runs).
func BenchmarkCoresValidate8Seeds(b *testing.B) {
	var sides []pipeline.Side
	for _, name := range []string{"baseline", "candidate"} {
		path := "../scenarios/examples/validate/" + name + ".yaml"
		sc, err := scenarios.LoadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		sides = append(sides, pipeline.Side{Name: name, Scenario: sc, File: path})
	}
	b.ReportAllocs()
	defer reportParallelism(b, cpuTime())
	for i := 0; i < b.N; i++ {
		sums, err := pipeline.Replications(sides, sides[0].Scenario.Seed(), 8, 0)
		if err != nil {
			b.Fatal(err)
		}
		if len(sums) != 2 || len(sums[1]) != 8 {
			b.Fatal("want 2 sides of 8 seeds")
		}
	}
}

// reportParallelism reports the CPU time since cpu0 over the wall time.
func reportParallelism(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric((cpuTime()-cpu0).Seconds()/b.Elapsed().Seconds(), "cpu/wall")
}
