package benchmarks

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
)

// loadJobs materialises a scenario's workload so the benchmark times the
// simulation, not the generator.
func loadJobs(b *testing.B, path, variant string) (sim.Config, []cluster.JobSpec) {
	b.Helper()
	s, err := scenarios.LoadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if variant != "" {
		if s, err = s.Variant(variant); err != nil {
			b.Fatal(err)
		}
	}
	return buildJobs(b, s)
}

// buildJobs builds a scenario and reads its whole workload into memory.
func buildJobs(b *testing.B, s *scenarios.Scenario) (sim.Config, []cluster.JobSpec) {
	b.Helper()
	built, err := s.Build(scenarios.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var jobs []cluster.JobSpec
	for {
		var j cluster.JobSpec
		ok, err := built.Config.Workload.Next(&j)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			break
		}
		jobs = append(jobs, j)
	}
	return built.Config, jobs
}

func benchRun(b *testing.B, path string) { benchVariant(b, path, "") }

func benchVariant(b *testing.B, path, variant string) {
	cfg, jobs := loadJobs(b, path, variant)
	b.ReportAllocs()
	b.ResetTimer()
	var events uint64
	var res *sim.Result
	for i := 0; i < b.N; i++ {
		cfg.Workload = &sim.SliceSource{Jobs: jobs}
		var err error
		res, err = sim.Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		events += res.Stats.Events
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/sec, "events/s")
	b.ReportMetric(float64(len(jobs)*b.N)/sec, "jobs/s")
	var alloc, sup int64
	for _, p := range res.Pools {
		alloc += p.AllocatedMilliMs
		sup += p.SuppliedMilliMs
	}
	b.ReportMetric(float64(alloc)/float64(sup), "gpu-alloc")
}

// BenchmarkSimulate100kJobs1000Nodes is issue 2's throughput target: a
// 100,000-job synthetic trace on a 1,000-node (8,000-GPU) cluster.
func BenchmarkSimulate100kJobs1000Nodes(b *testing.B) {
	benchRun(b, "testdata/synthetic-100k.yaml")
}

// BenchmarkSimulate100kJobsKueue runs the same jobs through Kueue
// admission: two ClusterQueues of a cohort that borrow and reclaim.
func BenchmarkSimulate100kJobsKueue(b *testing.B) {
	benchRun(b, "testdata/synthetic-100k-kueue.yaml")
}

// BenchmarkSimulate100kJobsKueueFairSharing adds Kueue's fair sharing.
func BenchmarkSimulate100kJobsKueueFairSharing(b *testing.B) {
	benchVariant(b, "testdata/synthetic-100k-kueue.yaml", "fair-sharing")
}

// BenchmarkSimulate100kJobsOverloaded runs the same jobs on 600 nodes: the
// queue grows to tens of thousands of jobs, the case where a scheduling
// pass must not cost in proportion to the backlog.
func BenchmarkSimulate100kJobsOverloaded(b *testing.B) {
	benchRun(b, "testdata/synthetic-100k-overloaded.yaml")
}

// BenchmarkInflateOpenb is one inflation run of the FGD paper on the openb
// default trace (1,213 nodes, 6,212 GPUs, to 130% of capacity) per policy.
func BenchmarkInflateOpenb(b *testing.B) {
	pools, err := traces.ReadOpenbNodes("../testdata/openb/openb_node_list_gpu_node.csv")
	if err != nil {
		b.Fatal(err)
	}
	pods, err := traces.ReadOpenbPods("../testdata/openb/openb_pod_list_default.csv")
	if err != nil {
		b.Fatal(err)
	}
	for _, policy := range plugins.PolicyNames() {
		b.Run(policy, func(b *testing.B) {
			prof, err := plugins.PolicyProfile(policy)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var res *sim.InflateResult
			for i := 0; i < b.N; i++ {
				res, err = sim.Inflate(sim.InflateConfig{Pools: pools, Pods: pods, Plugins: prof, Seed: 42, Target: 1.3})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Pods*b.N)/b.Elapsed().Seconds(), "pods/s")
			b.ReportMetric(res.Points[len(res.Points)-1].AllocationRatio, "gpu-alloc")
		})
	}
}

// peakRSS resets the process's peak resident set size (Linux) and returns
// a function that reads it back in MiB (0 where /proc is not there).
func peakRSS() func() float64 {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return func() float64 {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return 0
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
		return 0
	}
}

// BenchmarkReplay is issue 3's scale target: a generated trace (gangs of
// up to 64 pods) streamed from disk and replayed on 1,250 nodes of 8 GPUs
// (10,000 GPUs) at 85% offered load. It reports the wall time per run,
// events and jobs per second and the peak resident memory of the run
// (trace reading, simulation and the result together).
func BenchmarkReplay(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "trace.csv")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			w, err := traces.NewNativeWriter(f, false)
			if err != nil {
				b.Fatal(err)
			}
			o := scenarios.GenerateOptions{Jobs: n, Seed: 1, GPUs: 10_000, Load: 0.85}
			if err := scenarios.GenerateTrace(o, w); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			s, err := scenarios.GeneratedScenario(o)
			if err != nil {
				b.Fatal(err)
			}
			built, err := s.Build(scenarios.Options{})
			if err != nil {
				b.Fatal(err)
			}
			cfg := built.Config
			b.ReportAllocs()
			runtime.GC()
			peak := peakRSS()
			b.ResetTimer()
			var events uint64
			var res *sim.Result
			for i := 0; i < b.N; i++ {
				src, err := traces.OpenTrace(path, traces.FormatNative, traces.TraceOptions{})
				if err != nil {
					b.Fatal(err)
				}
				cfg.Workload = src
				if res, err = sim.Run(cfg); err != nil {
					b.Fatal(err)
				}
				src.Close()
				events += res.Stats.Events
			}
			b.StopTimer()
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(events)/sec, "events/s")
			b.ReportMetric(float64(n*b.N)/sec, "jobs/s")
			b.ReportMetric(peak(), "peak-RSS-MiB")
			var alloc, sup int64
			for _, p := range res.Pools {
				alloc += p.AllocatedMilliMs
				sup += p.SuppliedMilliMs
			}
			b.ReportMetric(float64(alloc)/float64(sup), "gpu-alloc")
		})
	}
}
