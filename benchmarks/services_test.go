package benchmarks

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// serviceYAML is a 2,000 requests/s BERT-like service on the default
// scenario's A10G pool: batches of 32 within 50 ms (the A10G's assumed
// 4.9 ms + 0.5 ms a request: 1,531 requests/s a replica with full
// batches), an HPA every 15 s on 1,000 requests/s per replica, 1 to 8
// replicas. LOAD is replaced by the load under test.
const serviceYAML = `    services:
    - name: serve
      queue: inference
      priority: 1000
      pod: {cpu: "8", memory: 32Gi, gpus: 1}
      replicas: {min: 1, max: 8, initial: 2}
      coldStart: {imagePull: 30s, modelLoad: 20s}
      load: LOAD
      batching: {batchSize: 32, maxBatchDelay: 50ms}
      slo: {latency: 200ms}
      autoscaler:
        hpa: {metric: requestsPerReplica, target: 1000}
`

// defaultWith is the default scenario over horizon, with the service under
// load when load is not "".
func defaultWith(b *testing.B, horizon, load string) (sim.Config, []cluster.JobSpec) {
	b.Helper()
	text := strings.Replace(string(scenarios.DefaultYAML()), "  horizon: 72h\n", "  horizon: "+horizon+"\n", 1)
	if load != "" {
		text = strings.Replace(text, "  workload:\n", "  workload:\n"+strings.Replace(serviceYAML, "LOAD", load, 1), 1)
	}
	s, err := scenarios.Parse(scenarios.DefaultName, "", []byte(text))
	if err != nil {
		b.Fatal(err)
	}
	cfg, jobs := buildJobs(b, s)
	if load != "" && len(cfg.Services) != 1 {
		b.Fatalf("%d services built", len(cfg.Services))
	}
	return cfg, jobs
}

// BenchmarkServiceBesideDefaultJobs is issue 19's cost target: the default
// scenario's jobs alone against the same jobs with a 2,000 requests/s
// service beside them, over the default 72 h horizon and over a week,
// the service's load constant or diurnal (1,000 to 3,000/s). Each
// iteration runs both, alternately, on the same jobs; it reports each
// run's CPU time and the service's overhead in percent (issue 19: at most
// 20). Run with -cpu 1: CPU seconds, not wall time, on a shared machine.
func BenchmarkServiceBesideDefaultJobs(b *testing.B) {
	for _, c := range []struct{ name, horizon, load string }{
		{"72h/constant", "72h", "{constant: 2000}"},
		{"72h/diurnal", "72h", `{diurnal: {base: 2000, amplitude: 1000, peak: "14:00"}}`},
		{"week/constant", "168h", "{constant: 2000}"},
		{"week/diurnal", "168h", `{diurnal: {base: 2000, amplitude: 1000, peak: "14:00"}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			alone, jobs := defaultWith(b, c.horizon, "")
			with, jobs2 := defaultWith(b, c.horizon, c.load)
			if len(jobs) != len(jobs2) {
				b.Fatalf("the service changed the jobs: %d against %d", len(jobs), len(jobs2))
			}
			run := func(cfg sim.Config) (time.Duration, *sim.Result) {
				cfg.Workload = &sim.SliceSource{Jobs: jobs}
				start := cpuTime()
				res, err := sim.Run(cfg)
				if err != nil {
					b.Fatal(err)
				}
				return cpuTime() - start, res
			}
			var tAlone, tWith time.Duration
			var res, resAlone *sim.Result
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d, r := run(alone)
				tAlone += d
				resAlone = r
				d, res = run(with)
				tWith += d
			}
			n := float64(b.N)
			b.ReportMetric(tAlone.Seconds()*1000/n, "jobs-cpu-ms/op")
			b.ReportMetric(tWith.Seconds()*1000/n, "with-service-cpu-ms/op")
			b.ReportMetric(100*(tWith.Seconds()/tAlone.Seconds()-1), "overhead-%")
			b.ReportMetric(res.Services[0].SLOAttainment, "slo")
			// The jobs' own scheduling work, alone and beside the service
			// (whose replicas hold GPUs of the jobs' pools, so the jobs'
			// schedule is not the same run's).
			b.ReportMetric(float64(resAlone.Stats.Attempts), "jobs-attempts")
			b.ReportMetric(float64(res.Stats.Attempts), "with-service-attempts")
			b.ReportMetric(float64(resAlone.Stats.Passes), "jobs-passes")
			b.ReportMetric(float64(res.Stats.Passes), "with-service-passes")
		})
	}
}

// tenServiceYAML is service I of BenchmarkTenServicesBesideDefaultJobs: a
// 400 requests/s diurnal service (200 to 600/s) peaking at hour PEAK, 1 to
// 4 replicas, otherwise serviceYAML's.
const tenServiceYAML = `    - name: serve-I
      queue: inference
      priority: 1000
      pod: {cpu: "8", memory: 32Gi, gpus: 1}
      replicas: {min: 1, max: 4, initial: 1}
      coldStart: {imagePull: 30s, modelLoad: 20s}
      load: {diurnal: {base: 400, amplitude: 200, peak: "PEAK:00"}}
      batching: {batchSize: 32, maxBatchDelay: 50ms}
      slo: {latency: 200ms}
      autoscaler:
        hpa: {metric: requestsPerReplica, target: 1000}
`

// defaultWithServices is the default scenario over a week with n of
// tenServiceYAML's services, their peaks two hours apart.
func defaultWithServices(b *testing.B, n int) (sim.Config, []cluster.JobSpec) {
	b.Helper()
	text := strings.Replace(string(scenarios.DefaultYAML()), "  horizon: 72h\n", "  horizon: 168h\n", 1)
	if n > 0 {
		svcs := "    services:\n"
		for i := 0; i < n; i++ {
			svcs += strings.NewReplacer("serve-I", "serve-"+strconv.Itoa(i), "PEAK", fmt.Sprintf("%02d", (2*i)%24)).Replace(tenServiceYAML)
		}
		text = strings.Replace(text, "  workload:\n", "  workload:\n"+svcs, 1)
	}
	s, err := scenarios.Parse(scenarios.DefaultName, "", []byte(text))
	if err != nil {
		b.Fatal(err)
	}
	cfg, jobs := buildJobs(b, s)
	if len(cfg.Services) != n {
		b.Fatalf("%d services built, want %d", len(cfg.Services), n)
	}
	return cfg, jobs
}

// BenchmarkTenServicesBesideDefaultJobs is issue 34's services case: a
// week of the default scenario's jobs alone, beside one diurnal service,
// and beside ten (peaks two hours apart); each iteration runs the three
// in turns on the same jobs and reports each one's CPU time and the run
// with ten over the run with one (issue 34: at most 3; a lone settled
// service adds almost nothing, so the runs' totals are compared, not what
// each adds). Run with -cpu 1: CPU seconds, not wall time.
func BenchmarkTenServicesBesideDefaultJobs(b *testing.B) {
	cfgs := make([]sim.Config, 3)
	var jobs []cluster.JobSpec
	for k, n := range []int{0, 1, 10} {
		var js []cluster.JobSpec
		cfgs[k], js = defaultWithServices(b, n)
		if k == 0 {
			jobs = js
		} else if len(js) != len(jobs) {
			b.Fatalf("the services changed the jobs: %d against %d", len(js), len(jobs))
		}
	}
	t := make([]time.Duration, 3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, cfg := range cfgs {
			cfg.Workload = &sim.SliceSource{Jobs: jobs}
			start := cpuTime()
			if _, err := sim.Run(cfg); err != nil {
				b.Fatal(err)
			}
			t[k] += cpuTime() - start
		}
	}
	n := float64(b.N)
	b.ReportMetric(t[0].Seconds()*1000/n, "jobs-cpu-ms/op")
	b.ReportMetric(t[1].Seconds()*1000/n, "one-service-cpu-ms/op")
	b.ReportMetric(t[2].Seconds()*1000/n, "ten-services-cpu-ms/op")
	b.ReportMetric(t[2].Seconds()/t[1].Seconds(), "ten-over-one")
}
