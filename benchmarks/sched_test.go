package benchmarks

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
)

// benchGenerated runs the generated workload of `gpuplan trace generate`
// (three quarters single-node jobs of 1-8 GPUs, one quarter gangs of 2-64
// pods of 8 GPUs) on the cluster it is sized for, generated as it runs so
// that the benchmark times the engine and the scheduler, not a trace
// reader. It reports jobs per second, the CPU time of a run, the
// scheduler's attempts per job and the tries it skipped per job (a smaller
// job of the same constraints had failed in the same pass).
func benchGenerated(b *testing.B, o scenarios.GenerateOptions) {
	s, err := scenarios.GeneratedScenario(o)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var res *sim.Result
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		built, err := s.Build(scenarios.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		before := cpuTime()
		if res, err = sim.Run(built.Config); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - before
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(o.Jobs*b.N)/sec, "jobs/s")
	b.ReportMetric(float64(res.Stats.Attempts)/float64(o.Jobs), "attempts/job")
	b.ReportMetric(float64(res.Stats.Skipped)/float64(o.Jobs), "skipped/job")
}

// cpuTime is the process's user and system CPU time so far: on a machine
// shared with other work it measures a run better than the wall clock.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkSchedBacklog is issue 17's overloaded case: 100 nodes of 8 H100 at
// about 130% offered load, so the queue grows all run long (to a large
// share of the jobs). Time per run must grow linearly with the jobs, not
// with jobs x backlog: ns/op at 400k about 8 times that at 50k.
func BenchmarkSchedBacklog(b *testing.B) {
	for _, n := range []int{50_000, 100_000, 200_000, 400_000, 2_000_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			if n > 400_000 && testing.Short() {
				b.Skip("2M jobs: not in -short")
			}
			benchGenerated(b, scenarios.GenerateOptions{Jobs: n, Seed: 1, GPUs: 800, Load: 1.3})
		})
	}
}

// BenchmarkSchedNodes runs the same number of jobs at 85% offered load on
// clusters of 125, 1,250 and 12,500 nodes of 8 GPUs (the arrival rate
// scales with the cluster): the time per job must grow at most
// logarithmically with the node count.
func BenchmarkSchedNodes(b *testing.B) {
	for _, nodes := range []int{125, 1_250, 12_500} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			benchGenerated(b, scenarios.GenerateOptions{Jobs: 200_000, Seed: 1, GPUs: 8 * nodes, Load: 0.85})
		})
	}
}
