package benchmarks

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

// The whole-run pool's benchmarks: run them with -cpu 1,2 (make bench
// does); the pool takes one worker per GOMAXPROCS, so the ratio of the
// two times is what a second core buys. cpu/wall is the cores kept busy
// on average: near 2 at -cpu 2 when the machine has two cores free, even
// where other work on a shared machine slows the wall clock.
//
// On a shared machine whose other work takes the second core, -cpu 2
// shows cpu/wall near 1 and the ratio means nothing, whatever the
// process's nice value. Interleaving the two settings in one process
// (-cpu 1,2,1,2,1,2 -benchtime 8x, medians per setting) and, as root,
// running it under `chrt -f 1` (cpu/wall then near 2 at -cpu 2) gives
// ratios that hold from run to run within a few hundredths; the CPU a
// run takes still moves by 10-20% with what the rest of the host does.
// gc/op and gc-cpu-s/op say how much of that is the collector.

// BenchmarkCoresSpotWhatIf is `gpuplan simulate
// scenarios/examples/spot-what-if.yaml` without writing files: the
// scenario and its three variants (no all-on-demand twin: the scenario
// itself has no spot node), then the three variants' spot-sensitivity
// curves of 17 runs each (55 runs): one seed a point, as before the
// points averaged five (the default would make 247 runs).
func BenchmarkCoresSpotWhatIf(b *testing.B) {
	sc, err := scenarios.LoadFile("../scenarios/examples/spot-what-if.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer reportGC(b, readGC())
	defer reportParallelism(b, cpuTime())
	for i := 0; i < b.N; i++ {
		out, err := pipeline.Scenario(sc, pipeline.Options{File: "spot-what-if.yaml", SpotSeeds: 1})
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
	defer reportGC(b, readGC())
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

// BenchmarkCoresSweep is `gpuplan sweep
// scenarios/examples/sweep/default-capacity.yaml` (issue 18's sweep: 4 pool
// sizes x 3 spot shares x 3 checkpoint intervals x 5 seeds, 180 runs),
// writing the point files to a temporary folder, on one worker
// (workers=1) and on one worker per GOMAXPROCS (workers=cores). With -cpu
// 1,2 the ratio of workers=cores' ns/op at -cpu 1 and -cpu 2 is what a
// second core buys; cpu-s/op equal at both says the second worker adds no
// work, and at -cpu 2 workers=1's cpu/wall says how much of the idle
// second core the garbage collector takes.
func BenchmarkCoresSweep(b *testing.B) {
	sw, err := sweep.Load("../scenarios/examples/sweep/default-capacity.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []int{1, 0} {
		name := "workers=1"
		if w == 0 {
			name = "workers=cores"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportGC(b, readGC())
			defer reportParallelism(b, cpuTime())
			for i := 0; i < b.N; i++ {
				st, err := sw.Run(context.Background(), sweep.Options{Out: b.TempDir(), Workers: w})
				if err != nil {
					b.Fatal(err)
				}
				if st.Runs != 180 {
					b.Fatalf("%d runs, want 180", st.Runs)
				}
			}
		})
	}
}

// reportParallelism reports the CPU time since cpu0 over the wall time
// (cpu/wall) and per op (cpu-s/op).
func reportParallelism(b *testing.B, cpu0 time.Duration) {
	cpu := (cpuTime() - cpu0).Seconds()
	b.ReportMetric(cpu/b.Elapsed().Seconds(), "cpu/wall")
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
}

// gcStats are the runtime's counts of GC cycles and its estimate of the
// CPU seconds the GC took (assists, background and idle marking, pauses).
type gcStats struct{ cycles, cpu float64 }

func readGC() gcStats {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return gcStats{float64(s[0].Value.Uint64()), s[1].Value.Float64()}
}

// reportGC reports GC cycles (gc/op) and the GC's CPU seconds
// (gc-cpu-s/op) per op since g0.
func reportGC(b *testing.B, g0 gcStats) {
	g := readGC()
	b.ReportMetric((g.cycles-g0.cycles)/float64(b.N), "gc/op")
	b.ReportMetric((g.cpu-g0.cpu)/float64(b.N), "gc-cpu-s/op")
}
