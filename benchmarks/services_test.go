package benchmarks

import (
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
