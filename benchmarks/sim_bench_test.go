package benchmarks

import (
	"testing"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// loadJobs materialises a scenario's workload so the benchmark times the
// simulation, not the generator.
func loadJobs(b *testing.B, path string) (sim.Config, []cluster.JobSpec) {
	b.Helper()
	s, err := scenarios.LoadFile(path)
	if err != nil {
		b.Fatal(err)
	}
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

func benchRun(b *testing.B, path string) {
	cfg, jobs := loadJobs(b, path)
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

// BenchmarkSimulate100kJobsOverloaded runs the same jobs on 600 nodes: the
// queue grows to tens of thousands of jobs, the case where a scheduling
// pass must not cost in proportion to the backlog.
func BenchmarkSimulate100kJobsOverloaded(b *testing.B) {
	benchRun(b, "testdata/synthetic-100k-overloaded.yaml")
}
