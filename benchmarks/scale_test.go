package benchmarks

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Issue 17's scale benchmarks: a Philly-format trace generated on the fly
// (never committed) replayed as `gpuplan simulate --trace T --trace-format
// philly --out DIR` does, from reading the trace to the last output file.
// Each reports the wall time per run, its CPU time (cpu-s/op: the engine
// is single-threaded, the rest is the collector; a shared machine disturbs
// it far less than the wall clock), the peak resident memory of the run
// (peak-RSS-MiB) and its allocations per job.

// phillyTrace writes n jobs in the Philly processed format: Poisson
// arrivals, 1, 2, 4 or 8 GPUs (equally likely, 3.75 on average), lognormal
// durations (median 20 min, sigma 1.5: mean 20 min x e^1.125 = 61.6 min),
// 70% of the jobs in virtual cluster vc1 and 30% in vc2. The arrival rate
// makes the GPUs the jobs hold on average offered (rate x 3.75 x mean
// duration).
func phillyTrace(b *testing.B, n int, offered float64) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "philly.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	w.WriteString("timestamp,duration,num_gpus,gpu_time,cluster\n")
	const median, sigma = 1200.0, 1.5
	meanDur := median * math.Exp(sigma*sigma/2)
	rate := offered / (3.75 * meanDur) // jobs a second
	r := rand.New(rand.NewPCG(17, uint64(n)))
	t0 := time.Date(2017, 10, 1, 0, 0, 0, 0, time.UTC)
	at := 0.0
	var line []byte
	for i := 0; i < n; i++ {
		at += r.ExpFloat64() / rate
		d := int64(max(1, math.Round(median*math.Exp(sigma*r.NormFloat64()))))
		g := int64(1) << r.IntN(4)
		vc := "vc1"
		if r.Float64() < 0.3 {
			vc = "vc2"
		}
		line = t0.Add(time.Duration(at)*time.Second).AppendFormat(line[:0], "2006-01-02 15:04:05")
		line = append(line, ',')
		line = strconv.AppendInt(line, d, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, g, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, d*g, 10)
		line = append(line, ',')
		line = append(line, vc...)
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// scaleCase is one replay: the trace, the cluster (nodes x 8 GPUs, or 0
// to size it from the trace as --cluster derive does), Kueue manifests,
// and whether to write the output folder.
type scaleCase struct {
	jobs     int
	offered  float64
	nodes    int
	policy   string
	writeOut bool
	// topo is the pool's topology (zero: flat).
	topo topology.Spec
	// native: the trace is `gpuplan trace generate`'s (generatedTrace),
	// replayed as a native CSV, rather than phillyTrace's.
	native bool
}

// format is the trace's format.
func (c scaleCase) format() string {
	if c.native {
		return traces.FormatNative
	}
	return traces.FormatPhilly
}

// replay runs c.jobs jobs as simulate does and returns the jobs simulated.
func (c scaleCase) replay(b *testing.B, trace, out string) int {
	sc, err := scenarios.Default()
	if err != nil {
		b.Fatal(err)
	}
	opts := scenarios.Options{Trace: &scenarios.TraceSpec{Path: trace, Format: c.format()}}
	if c.nodes > 0 {
		opts.Pools = []cluster.PoolSpec{{Name: "gpu", GPUModel: "generic", Nodes: c.nodes, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20, Topology: c.topo}}
	} else {
		scan, err := traces.SizeTrace(trace, c.format(), traces.TraceOptions{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		opts.Pools, opts.ClusterNotes, opts.TraceScan = scan.Pools, scan.Notes, scan
	}
	if c.policy != "" {
		opts.PolicyManifests = []string{c.policy}
	}
	outcome, err := pipeline.Scenario(sc, pipeline.Options{Build: opts})
	if err != nil {
		b.Fatal(err)
	}
	if c.writeOut {
		if err := outcome.WriteDir(out, nil); err != nil {
			b.Fatal(err)
		}
	}
	return outcome.Main.Result.NumJobs()
}

// generatedTrace writes n jobs as `gpuplan trace generate --jobs n --seed
// 1` does (a cluster of 10,000 GPUs at 85% load), native CSV.
func generatedTrace(b *testing.B, n int) string {
	b.Helper()
	return nativeTrace(b, "generated.csv", func(w *traces.NativeWriter) error {
		return scenarios.GenerateTrace(scenarios.GenerateOptions{Jobs: n, Seed: 1, GPUs: 10_000, Load: 0.85}, w)
	})
}

func (c scaleCase) run(b *testing.B) {
	var trace string
	if c.native {
		trace = generatedTrace(b, c.jobs)
	} else {
		trace = phillyTrace(b, c.jobs, c.offered)
	}
	out := filepath.Join(b.TempDir(), "out")
	runtime.GC()
	debug.FreeOSMemory()
	peak := peakRSS()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if n := c.replay(b, trace, out); n != c.jobs {
			b.Fatalf("%d jobs simulated, want %d", n, c.jobs)
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	runtime.ReadMemStats(&ms)
	b.ReportMetric(peak(), "peak-RSS-MiB")
	b.ReportMetric(float64(ms.Mallocs-mallocs)/float64(c.jobs*b.N), "allocs/job")
	b.ReportMetric(float64(c.jobs*b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// The trace of the first three cases offers 1,000 GPUs on average: sized
// from the trace, 165 nodes (1,320 GPUs, 74% allocated); on 1,250 nodes
// (10,000 GPUs) 10%.

// BenchmarkScaleDerived: 1M jobs on the cluster sized from the trace
// (a light scan of the trace, traces.SizeTrace, that also finds its order,
// then the replay), with the output folder.
func BenchmarkScaleDerived(b *testing.B) {
	scaleCase{jobs: 1_000_000, offered: 1000, writeOut: true}.run(b)
}

// BenchmarkScale1250Nodes: 1M and 3M jobs on 1,250 x 8 GPUs with the
// output folder; time and memory must grow at most linearly with jobs.
func BenchmarkScale1250Nodes(b *testing.B) {
	for _, n := range []int{1_000_000, 3_000_000} {
		b.Run(fmt.Sprintf("jobs=%dM", n/1_000_000), func(b *testing.B) {
			scaleCase{jobs: n, offered: 1000, nodes: 1250, writeOut: true}.run(b)
		})
	}
}

// BenchmarkScaleNodes: the same 250,000 jobs at 70% offered load on 125,
// 1,250 and 12,500 nodes (the arrival rate scaled with the GPUs), no
// output folder: the time must grow at most logarithmically with nodes.
func BenchmarkScaleNodes(b *testing.B) {
	for _, nodes := range []int{125, 1250, 12500} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			scaleCase{jobs: 250_000, offered: 0.7 * 8 * float64(nodes), nodes: nodes}.run(b)
		})
	}
}

// BenchmarkScaleKueue: 1M jobs through Kueue admission, vc1 and vc2 as
// two ClusterQueues of a cohort sharing 170 x 8 GPUs (900 and 460 of
// quota): vc1 borrows, vc2 reclaims by preemption (testdata/kueue-1m).
// With the output folder.
func BenchmarkScaleKueue(b *testing.B) {
	scaleCase{jobs: 1_000_000, offered: 1000, nodes: 170, policy: "testdata/kueue-1m/queues.yaml", writeOut: true}.run(b)
}

// kueueManyQueues writes testdata/kueue-1m's policy with idle
// ClusterQueues added so that there are n in all: vc1 and vc2 as there
// (cohort philly, 900 and 460 GPUs of quota), the others with no quota and
// no jobs, either 50 to a cohort under philly (a cohort tree) or, flat,
// all directly in philly. The same quota and the same work: only the
// queues with nothing to admit grow.
func kueueManyQueues(b *testing.B, n int, flat bool) string {
	b.Helper()
	base, err := os.ReadFile("testdata/kueue-1m/queues.yaml")
	if err != nil {
		b.Fatal(err)
	}
	w := append([]byte(nil), base...)
	w = append(w, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: philly}\n"...)
	for i := 0; i < n-2; i++ {
		cohort := "philly"
		if !flat {
			cohort = fmt.Sprintf("idle%d", i/50)
			if i%50 == 0 {
				w = fmt.Appendf(w, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: %s}\nspec: {parentName: philly}\n", cohort)
			}
		}
		w = fmt.Appendf(w, `---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: idle-cq%d}
spec:
  namespaceSelector: {}
  cohortName: %s
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: gpu
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 0}
`, i, cohort)
	}
	path := filepath.Join(b.TempDir(), "queues.yaml")
	if err := os.WriteFile(path, w, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkKueueQueues: BenchmarkScaleKueue's 1M jobs (no output
// folder), as issue 34 measured them, with 2 and with 500 ClusterQueues
// (kueueManyQueues: 498 of them with nothing to admit), in a cohort tree
// (50 to a Cohort under philly) and flat (all 500 in philly). Issue 34's
// target: 500 queues within 1.5 times the CPU of 2.
func BenchmarkKueueQueues(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
		flat bool
	}{{"queues=2", 2, false}, {"queues=500", 500, false}, {"queues=500-flat", 500, true}} {
		b.Run(c.name, func(b *testing.B) {
			policy := "testdata/kueue-1m/queues.yaml"
			if c.n > 2 {
				policy = kueueManyQueues(b, c.n, c.flat)
			}
			scaleCase{jobs: 1_000_000, offered: 1000, nodes: 170, policy: policy}.run(b)
		})
	}
}

// BenchmarkScaleTenMillion is issue 34's bound on memory: 10M and 20M
// jobs of `gpuplan trace generate --jobs N --seed 1` replayed as
// `gpuplan simulate --trace T --trace-format native --out DIR` does, on
// the cluster sized from the trace, with the output folder. Memory must
// grow with the jobs in flight, not with every job (the records of
// finished jobs go to a temporary file: sim.Config.RecordsInMemory).
// Targets: 10M within 40 CPU-seconds and 1 GiB of peak resident memory
// (peak-RSS-MiB at most 1024), 20M within 2 GiB (2048). Run it with
// -benchtime 1x -count 3 and take the medians; the traces (0.8 and 1.5
// GB) are written to the test's temporary folder first.
func BenchmarkScaleTenMillion(b *testing.B) {
	for _, n := range []int{10_000_000, 20_000_000} {
		b.Run(fmt.Sprintf("jobs=%dM", n/1_000_000), func(b *testing.B) {
			scaleCase{jobs: n, native: true, writeOut: true}.run(b)
		})
	}
}
