package reports

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// servedSim runs, for 10 hours on one node of 4 GPUs at $4 an hour (all
// of it on the GPUs: $1 a GPU-hour), a service of two fixed one-GPU
// replicas taking 50 requests/s (a batch of up to 8 in 5 + n ms, far from
// capacity) beside a one-hour, one-GPU training job.
func servedSim(t *testing.T) (*sim.Result, *Pricing) {
	t.Helper()
	svc := sim.ServiceConfig{Spec: services.Spec{Name: "bert", Load: serving.Load{Base: 50}, Batch: serving.Batch{Size: 8, MaxDelayMs: 10, BaseMs: 5, PerItemMs: 1}, SLOMs: 200},
		Queue: "web", Pod: cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 16 << 10, GPUs: 1},
		MinReplicas: 2, MaxReplicas: 2, InitialReplicas: 2, ImagePull: sim.Minute, ModelLoad: 2 * sim.Minute}
	job := cluster.JobSpec{Name: "train", Queue: "research", Duration: sim.Hour, Replicas: 1, Pod: cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: 1}}
	res, err := sim.Run(sim.Config{Pools: []cluster.PoolSpec{{Name: "p", Nodes: 1, GPUsPerNode: 4, MilliCPU: 64000, MemoryMiB: 256 << 10}},
		Horizon: 10 * sim.Hour, Services: []sim.ServiceConfig{svc}, Workload: &sim.SliceSource{Jobs: []cluster.JobSpec{job}}})
	require.NoError(t, err)
	return res, &Pricing{Pools: []PoolPricing{{PerHour: 4, CapacityType: models.OnDemand}}, BaseRates: models.BaseRates{GPU: 1}}
}

// On a real run: the replicas' 2 GPUs for 10 hours are $20 of the $40
// bill, the job's GPU-hour $1, $19 idle; 50 requests/s for 10 hours are
// 1.8 million requests, $20 / 1.8 = $11.1111 per million. The job tables
// and job figures hold the one job, never a replica.
func TestServiceReportsOnARealRun(t *testing.T) {
	res, pr := servedSim(t)
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := Summarize(res, Meta{Scenario: "served", Pricing: pr, Start: start})
	require.NotNil(t, s.Cost)
	assert.Equal(t, 40.0, s.Cost.Total)
	assert.Equal(t, 21.0, s.Cost.Allocated)
	assert.Equal(t, 19.0, s.Cost.Idle)
	require.Len(t, s.Cost.ByWorkload, 2)
	assert.Equal(t, 1.0, s.Cost.ByWorkload[0].Allocated)
	assert.Equal(t, 20.0, s.Cost.ByWorkload[1].Allocated)
	assert.Equal(t, 20.0, s.Cost.ByWorkload[1].GPUHours)
	// By allocation the $19 of idle goes 20:1: $18.10 and $0.90 (1809.52
	// and 90.48 cents, the odd cent to the larger remainder).
	assert.Equal(t, 18.1, s.Cost.ByWorkload[1].IdleShare)
	assert.Equal(t, 0.9, s.Cost.ByWorkload[0].IdleShare)

	require.Len(t, s.Services, 1)
	v := s.Services[0]
	assert.Equal(t, 1_800_000.0, v.RequestsArrived)
	assert.Equal(t, 1_800_000.0, v.RequestsServed)
	assert.Equal(t, 20.0, v.GPUHours)
	assert.Equal(t, 2.0, v.MeanReplicas)
	assert.Equal(t, 2, v.ColdStarts)
	assert.Equal(t, 180.0, v.MeanColdStartSeconds)
	assert.Equal(t, 19.9, v.ReadyHours)
	require.NotNil(t, v.Cost)
	assert.Equal(t, 20.0, v.Cost.Cost)
	assert.Equal(t, 11.1111, v.Cost.PerMillionRequests)
	assert.Greater(t, v.SLOAttainment, 0.99, "a light load well within 200 ms")

	// Jobs: the one job, in the counts, the queues and jobs.csv.
	assert.Equal(t, 1, s.Jobs.Total)
	assert.Equal(t, int64(1), s.Jobs.Pods)
	require.Len(t, s.Queues, 1)
	assert.Equal(t, "research", s.Queues[0].Name)
	dir := t.TempDir()
	require.NoError(t, WriteDir(dir, res, s))
	f, err := os.Open(filepath.Join(dir, FileJobs))
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	require.Len(t, rows, 2, "the header and the job")
	assert.Equal(t, "train", rows[1][1])
	for _, p := range []string{"service-bert.png", "service-bert.svg", "service-bert-latency.png"} {
		_, err := os.Stat(filepath.Join(dir, DirPlots, p))
		assert.NoError(t, err, p)
	}
	var total float64
	for _, c := range FOCUSCharges(res, s) {
		total += c.Cost
	}
	assert.InDelta(t, 40, total, 1e-9)

	// The metric series: two replicas held throughout, ready for 57 of
	// the first hour's 60 minutes, 50 requests/s, 1.8 million served by
	// the end.
	times, fams := MetricSeries(res, s)
	require.Len(t, times, 10)
	got := map[string][]float64{}
	for _, f := range fams {
		for _, sr := range f.Series {
			if len(sr.Labels) == 1 && sr.Labels[0] == (Label{"service", "bert"}) {
				got[f.Name] = sr.Values
			}
		}
	}
	assert.Equal(t, []float64{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, got["gpuplan_service_replicas"])
	assert.Equal(t, 1.9, got["gpuplan_service_ready_replicas"][0])
	assert.Equal(t, 50.0, got["gpuplan_service_requests_per_second"][9])
	assert.Equal(t, 1_800_000.0, got["gpuplan_service_requests_served_total"][9])
	assert.Len(t, got["gpuplan_service_request_latency_p95_seconds"], 10)

	// The same run again writes the same summary.
	res2, _ := servedSim(t)
	var a, b bytes.Buffer
	require.NoError(t, WriteJSON(&a, s))
	require.NoError(t, WriteJSON(&b, Summarize(res2, Meta{Scenario: "served", Pricing: pr, Start: start})))
	assert.Equal(t, a.String(), b.String())
}
