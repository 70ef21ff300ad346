package reports

import (
	"bytes"
	"encoding/json"
	"html/template"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// servedRun is a 10-hour run on one node of 2 GPUs and 8 vCPUs at $8 an
// hour, split by base rates of $3 a GPU-hour and $0.25 a vCPU-hour (and
// nothing for memory): 3x2 + 0.25x8 = 8, so the node's price splits at
// exactly those rates. An inference service "api" (queue web) holds one
// replica of 1 GPU and 4 vCPUs for all 10 hours: $3 + $1 an hour, $40,
// of which $30 is GPU. A training job (queue train) holds 1 GPU and 2
// vCPUs for 4 hours: $3.50 an hour, $14. The bill is 10 x $8 = $80, so
// $26 is idle; the idle GPU-hours are 2x10 - 10 - 4 = 6, $18.
//
// The service served 1,000 requests a second for 10 hours: 36,000,000,
// so $40 / 36 = $1.1111 per million requests.
func servedRun() (*sim.Result, *Pricing) {
	const h = int64(sim.Hour)
	res := &sim.Result{Seed: 1, Horizon: sim.Time(10 * h), End: sim.Time(10 * h)}
	res.Pools = []sim.PoolResult{{
		Spec:             cluster.PoolSpec{Name: "gpu", InstanceType: "g.2x", GPUModel: "L4", Nodes: 1, GPUsPerNode: 2, MilliCPU: 8000, MemoryMiB: 65536},
		SuppliedMilliMs:  2 * 1000 * 10 * h,
		AllocatedMilliMs: 1000*10*h + 1000*4*h,
		Usage:            cluster.Usage{NodeHours: 10},
	}}
	res.Jobs = []sim.JobRecord{{
		ID: 1, Name: "train-1", Queue: "train", Replicas: 1, PodsBound: 1, Pod: &cluster.PodSpec{GPUs: 1, MilliCPU: 2000, MemoryMiB: 8192},
		Submit: 0, Start: 0, End: sim.Time(4 * h), Duration: sim.Time(4 * h), Outcome: sim.Completed, Pool: 0, Reason: -1,
		HeldMilliMs: 1000 * 4 * h, AllocMilli: 1000, Attempts: 1, Admitted: -1,
	}}
	res.Jobs[0].SetUsage([]sim.PoolUsage{{Pool: 0, Held: [3]int64{1000 * 4 * h, 2000 * 4 * h, 8192 * 4 * h}}})
	res.Timeline = sim.Timeline{Interval: sim.Time(5 * h), Allocated: [][]int64{{1000*5*h + 1000*4*h, 1000 * 5 * h}},
		PendingJobMs: []int64{0, 0}, RunningJobMs: []int64{4 * h, 0}}
	res.Services = []sim.ServiceResult{{
		Report: services.Report{Name: "api", Arrived: 36_001_000, Served: 36_000_000, Dropped: 1000,
			P50Ms: 41.5, P95Ms: 96.25, P99Ms: 180, SLOMs: 200, SLOAttainment: 0.9871, ReplicaHours: 10, ReadyHours: 9.95},
		Queue: "web", Priority: 1000, ColdStarts: 1, ColdStartMs: 180_000, Preempted: 0, Disrupted: 0,
		Usage: []sim.PoolUsage{{Pool: 0, Held: [3]int64{1000 * 10 * h, 4000 * 10 * h, 16384 * 10 * h}}},
		Timeline: []sim.ServicePoint{
			{Rate: 1000, Served: 18_000_000, Replicas: 1, Ready: 0.99, GPUs: 1, P95Ms: 80},
			{Rate: 1000.2, Served: 18_000_000, Dropped: 1000, Replicas: 1, Ready: 1, GPUs: 1, P95Ms: 120},
		},
	}}
	pr := &Pricing{Pools: []PoolPricing{{PerHour: 8, CapacityType: models.OnDemand}}, BaseRates: models.BaseRates{GPU: 3, VCPU: 0.25}}
	return res, pr
}

func TestServiceCostByHand(t *testing.T) {
	res, pr := servedRun()
	s := Summarize(res, Meta{Scenario: "served", Pricing: pr})
	c := s.Cost
	require.NotNil(t, c)
	assert.Equal(t, 80.0, c.Total)
	assert.Equal(t, 54.0, c.Allocated, "the replica's $40 and the job's $14")
	assert.Equal(t, 26.0, c.Idle)
	assert.Equal(t, 18.0, c.IdleGPU)
	assert.Equal(t, []CostLine{{Name: "train", GPUHours: 4, Cost: 14, Allocated: 14}, {Name: "web", GPUHours: 10, Cost: 40, Allocated: 40}}, c.ByQueue)

	// Showback by allocation: 2,600 idle cents over 40:14 -> 1925.93 and
	// 674.07, floors 1925 + 674, the odd cent to the larger remainder
	// (web): $19.26 and $6.74.
	require.NotNil(t, c.Showback)
	assert.Equal(t, []TeamCost{{Team: "train", Allocated: 14, IdleShare: 6.74, Total: 20.74}, {Team: "web", Allocated: 40, IdleShare: 19.26, Total: 59.26}}, c.Showback.Teams)

	// Each team is all one kind here, so the split takes its showback.
	require.Len(t, c.ByWorkload, 2)
	tr, inf := c.ByWorkload[0], c.ByWorkload[1]
	assert.Equal(t, WorkloadCost{Kind: KindTraining, GPUHours: 4, GPUCost: 12, Allocated: 14, IdleShare: 6.74, Total: 20.74, BillShare: tr.BillShare, PerUsefulGPUHour: 5.185}, tr)
	// Inference's $59.26 over the 36 million requests served: $1.6461 a
	// million.
	assert.Equal(t, WorkloadCost{Kind: KindInference, GPUHours: 10, GPUCost: 30, Allocated: 40, IdleShare: 19.26, Total: 59.26, BillShare: inf.BillShare,
		RequestsServed: 36e6, PerMillionRequests: 1.6461}, inf)
	assert.InDelta(t, 20.74/80, tr.BillShare, 1e-4)
	assert.InDelta(t, 59.26/80, inf.BillShare, 1e-4)

	require.Len(t, s.Services, 1)
	v := s.Services[0]
	assert.Equal(t, &ServiceCost{Cost: 40, GPUCost: 30, PerMillionRequests: 1.1111,
		// $59.26 over 36 million.
		Showback: 59.26, ShowbackPerMillionRequests: 1.6461}, v.Cost)
	assert.Equal(t, 10.0, v.GPUHours)
	assert.Equal(t, 1.0, v.MeanReplicas)
	assert.Equal(t, 1.0, v.PeakReplicas)
	assert.Equal(t, 180.0, v.MeanColdStartSeconds)
	assert.Equal(t, 0.9871, v.SLOAttainment)

	// Jobs' figures and jobs.csv hold the one job, never the replica.
	assert.Equal(t, 1, s.Jobs.Total)
	assert.Equal(t, int64(1), s.Jobs.Pods)
	var csv bytes.Buffer
	require.NoError(t, WriteJobsCSV(&csv, res, pr, c.Showback))
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[1], "1,train-1,train,"), lines[1])

	// The FOCUS bill: the job's row, the service's, the idle rest; $80.
	var total float64
	var svc bool
	for _, ch := range FOCUSCharges(res, s) {
		total += ch.Cost
		if ch.Job == "service/api" {
			svc = true
			assert.InDelta(t, 40, ch.Cost, 1e-9)
			assert.Equal(t, "web", ch.Team)
		}
	}
	assert.True(t, svc)
	assert.InDelta(t, 80, total, 1e-9)
}

// The split of one team's idle share between its jobs and replicas: a
// team that paid $14 for jobs and $40 for replicas, alone, takes all $26
// of idle; $26 x 40/54 = $19.2593 goes to inference, $6.7407 to
// training.
func TestWorkloadSplitWithinATeam(t *testing.T) {
	res, pr := servedRun()
	res.Services[0].Queue = "train"
	c := Cost(res, pr)
	require.Len(t, c.ByWorkload, 2)
	assert.Equal(t, 19.2593, c.ByWorkload[1].IdleShare)
	assert.Equal(t, 6.7407, c.ByWorkload[0].IdleShare)
	assert.Equal(t, 80.0, c.ByWorkload[0].Total+c.ByWorkload[1].Total)
}

// A run without services writes no services section and no split: its
// summary is what it was.
func TestNoServicesNoSection(t *testing.T) {
	res, pr := servedRun()
	res.Services = nil
	res.Pools[0].AllocatedMilliMs = 1000 * 4 * int64(sim.Hour)
	s := Summarize(res, Meta{Scenario: "jobs", Pricing: pr})
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, s))
	assert.NotContains(t, b.String(), `"services"`)
	assert.NotContains(t, b.String(), `"byWorkload"`)
	b.Reset()
	require.NoError(t, WriteTable(&b, s))
	assert.NotContains(t, b.String(), "SERVICE")
}

func TestServiceSummaryWritten(t *testing.T) {
	res, pr := servedRun()
	s := Summarize(res, Meta{Scenario: "served", Pricing: pr})
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, s))
	var back struct {
		Services []map[string]any `json:"services"`
		Cost     struct {
			ByWorkload []map[string]any `json:"byWorkload"`
		} `json:"cost"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	require.Len(t, back.Services, 1)
	sv := back.Services[0]
	for k, want := range map[string]any{"name": "api", "queue": "web", "requestsArrived": 36_001_000.0, "requestsServed": 36_000_000.0,
		"requestsDropped": 1000.0, "p50Ms": 41.5, "p95Ms": 96.25, "p99Ms": 180.0, "sloMs": 200.0, "sloAttainment": 0.9871,
		"replicaHours": 10.0, "readyHours": 9.95, "gpuHours": 10.0, "coldStarts": 1.0, "meanColdStartSeconds": 180.0, "preempted": 0.0} {
		assert.Equal(t, want, sv[k], k)
	}
	assert.Equal(t, 1.1111, sv["cost"].(map[string]any)["costPerMillionRequests"])
	require.Len(t, back.Cost.ByWorkload, 2)

	b.Reset()
	require.NoError(t, WriteTable(&b, s))
	out := b.String()
	assert.Contains(t, out, "SERVICE")
	assert.Regexp(t, `api\s+36\.00M\s+1000\s+41\.5 ms\s+96\.2 ms\s+180\.0 ms\s+98\.7% of 200\.0 ms\s+10\.0\s+10\.0\s+1\.0\s+1 \(3\.0m\)\s+0\s+\$40\.00\s+\$1\.11`, out)
	// $59.26 over 36 million requests: $1.65 a million. The whole bill
	// over training's work ($80 / 4 = $20) is no figure of a run with both.
	assert.Contains(t, out, "Inference: 10.0 GPU-hours, $59.26 (74.1% of the bill, idle share included); $1.65 per million requests served.")
	assert.Contains(t, out, "Training: 4.0 GPU-hours, $20.74 (25.9% of the bill, idle share included); $5.18 per useful GPU-hour.")
	assert.NotContains(t, out, "$20.00 each")

	b.Reset()
	require.NoError(t, WriteMarkdown(&b, s))
	assert.Contains(t, b.String(), "## Inference services")
	assert.Contains(t, b.String(), "| inference | 10.0 | $30.00 | $40.00 | $19.26 | $59.26 | 74.1% | $0.00 | - | $1.65 |")
	// Training: $20.74 over its 4 useful GPU-hours, $5.185 (5.18499... in binary: $5.18).
	assert.Contains(t, b.String(), "| training | 4.0 | $12.00 | $14.00 | $6.74 | $20.74 | 25.9% | $0.00 | $5.18 | - |")
	assert.Contains(t, b.String(), "Useful GPU-hours (completed jobs' work): 4.0, at $5.18 each on training's share of the bill ($20.74); requests served: 36.00M, at $1.65 a million on inference's share ($59.26).")

	plots, err := Plots(res, s)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, p := range plots {
		names[p.Name] = true
		assert.NotEmpty(t, p.PNG, p.Name)
		assert.NotEmpty(t, p.SVG, p.Name)
	}
	assert.True(t, names["service-api"], "replicas against load")
	assert.True(t, names["service-api-latency"], "latency against the SLO")
	b.Reset()
	require.NoError(t, WriteHTML(&b, s, plots))
	assert.Contains(t, b.String(), `id="plot-service-api"`)
	assert.Contains(t, b.String(), `id="plot-service-api-latency"`)
	assert.Contains(t, b.String(), "<h2>Inference services</h2>")
}

// A run of services alone leaves the job figures out of the terminal
// table, the headline figures and the plots.
func TestServicesOnlyLeavesJobFiguresOut(t *testing.T) {
	res, pr := servedRun()
	res.Jobs = nil
	res.Timeline.RunningJobMs = []int64{0, 0}
	res.Pools[0].AllocatedMilliMs = 1000 * 10 * int64(sim.Hour)
	s := Summarize(res, Meta{Scenario: "served", Pricing: pr})
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, s))
	out := b.String()
	assert.Contains(t, out, "Jobs: none (inference services only)")
	assert.NotContains(t, out, "QUEUE")
	assert.NotContains(t, out, "Training:")
	assert.Contains(t, out, "Inference: 10.0 GPU-hours, $80.00 (100.0% of the bill, idle share included); $2.22 per million requests served.")
	plots, err := Plots(res, s)
	require.NoError(t, err)
	for _, p := range plots {
		assert.NotEqual(t, "queue", p.Name)
	}
	b.Reset()
	require.NoError(t, WriteHTML(&b, s, plots))
	assert.NotContains(t, b.String(), "jobs completed")
}

// Every format of a run of services alone, with variants and a spot
// comparison: no job table, no job column, no useful GPU-hours; the run's
// cost per million requests is named as the whole bill's ($80 over 36M:
// $2.22; the service's own pods paid $40: $1.11); the lost replicas are
// counted; a pool an autoscaler grew from 1 node to 3 says so.
func TestServicesOnlyEveryFormatWithoutJobFigures(t *testing.T) {
	alone := func(perHour float64) (*sim.Result, *Summary) {
		res, pr := servedRun()
		res.Jobs = nil
		res.Timeline.RunningJobMs = []int64{0, 0}
		res.Pools[0].AllocatedMilliMs = 1000 * 10 * int64(sim.Hour)
		res.Services[0].Disrupted = 2
		pr.Pools[0].PerHour = perHour
		return res, Summarize(res, Meta{Scenario: "served", Pricing: pr})
	}
	sr, s := alone(8)
	or, od := alone(8)
	s.Disruptions = &DisruptionSummary{}
	s.Capacity = []CapacityLine{{Pool: "gpu", CapacityType: "on-demand", InitialNodes: 1, MaxNodes: 3}}
	s.Variants = []RunFigures{Figures("(as given)", s), Figures("other", od)}
	s.SpotVsOnDemand = CompareSpot(s, od, sr, or)

	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, s))
	term := b.String()
	b.Reset()
	require.NoError(t, WriteMarkdown(&b, s))
	md := b.String()
	b.Reset()
	require.NoError(t, WriteHTML(&b, s, nil))
	html := b.String()
	for name, out := range map[string]string{"terminal": term, "markdown": md, "html": html} {
		low := strings.ToLower(out)
		for _, job := range []string{"useful gpu-h", "jct", "completed</th>", "| completed |", " completed ", "p95 wait", "gpu-h lost", "jobs stopped", "queue wait"} {
			assert.NotContains(t, low, job, name)
		}
		assert.Contains(t, low, "bill $/m requests", name)
		assert.Contains(t, out, "$2.22", name)
		note := servedBillNote
		if name == "html" {
			note = template.HTMLEscapeString(note)
		}
		assert.Contains(t, out, note, name)
		assert.Contains(t, out, "Disruptions: 2 replica pods lost with their node, 0 evicted by the scheduler or admission", name)
	}
	assert.Regexp(t, `gpu\s+L4\s+1 \(max 3\)\s+2 \(max 6\)`, term)
	assert.Regexp(t, `all pools\s+1 at the start\s+2 at the start`, term)
	assert.Contains(t, md, "## Jobs\n\nNone: inference services only.")
	assert.NotContains(t, md, "## Queues")
	assert.Contains(t, html, "None: inference services only.")
	assert.Contains(t, html, "$2.22 a million requests served", "the cost headline measures the requests")
	assert.NotContains(t, html, "training $0.00")
}

// A run's headline figures carry its services' (for variants and
// gpuplan compare), and the variants' services table sets them out.
func TestServiceFigures(t *testing.T) {
	res, pr := servedRun()
	s := Summarize(res, Meta{Scenario: "served", Pricing: pr})
	f := Figures("as given", s)
	require.Equal(t, []ServiceFigures{{Name: "api", P95Ms: 96.25, SLOAttainment: 0.9871, Dropped: 1000, ReplicaHours: 10, GPUHours: 10, ColdStarts: 1, CostPerMillion: 1.1111}}, f.Services)
	assert.Equal(t, [][]string{{"as given", "api", "96.2 ms", "98.7%", "1000", "10.0", "10.0", "1", "$1.11"}}, variantServiceRows([]RunFigures{f}))
	s.Variants = []RunFigures{f}
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, s))
	assert.Contains(t, b.String(), "| as given | api | 96.2 ms | 98.7% | 1000 | 10.0 | 10.0 | 1 | $1.11 |")
}

// The services' series parse with Prometheus's own text parser, an
// interval that served nothing as NaN, and the served counter ends at the
// summary's requests served.
func TestServiceMetricsParse(t *testing.T) {
	res, pr := servedRun()
	res.Services[0].Timeline[0].P95Ms = 0
	s := Summarize(res, Meta{Scenario: "served", Pricing: pr, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	times, fams := MetricSeries(res, s)
	var b bytes.Buffer
	require.NoError(t, WritePrometheus(&b, s.start, times, fams))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(&b)
	require.NoError(t, err)
	for _, name := range []string{"gpuplan_service_replicas", "gpuplan_service_ready_replicas", "gpuplan_service_requests_per_second",
		"gpuplan_service_request_latency_p95_seconds", "gpuplan_service_requests_served_total", "gpuplan_service_requests_dropped_total"} {
		require.Contains(t, parsed, name)
	}
	lat := parsed["gpuplan_service_request_latency_p95_seconds"].Metric
	require.Len(t, lat, 2)
	assert.True(t, math.IsNaN(lat[0].GetGauge().GetValue()))
	assert.Equal(t, 0.12, lat[1].GetGauge().GetValue())
	served := parsed["gpuplan_service_requests_served_total"].Metric
	assert.Equal(t, s.Services[0].RequestsServed, served[len(served)-1].GetCounter().GetValue())
	dropped := parsed["gpuplan_service_requests_dropped_total"].Metric
	assert.Equal(t, 1000.0, dropped[len(dropped)-1].GetCounter().GetValue())
}

// Runs of services alone compare spot with on-demand by the bill per
// million requests served: $80 over 36 million on demand is $2.2222, the
// same run at half the node price $1.1111, a 50% saving.
func TestSpotComparisonForServicesAlone(t *testing.T) {
	alone := func(perHour float64) (*sim.Result, *Summary) {
		res, pr := servedRun()
		res.Jobs = nil
		res.Pools[0].AllocatedMilliMs = 1000 * 10 * int64(sim.Hour)
		pr.Pools[0].PerHour = perHour
		return res, Summarize(res, Meta{Scenario: "served", Pricing: pr})
	}
	sr, spot := alone(4)
	or, od := alone(8)
	c := CompareSpot(spot, od, sr, or)
	assert.Equal(t, 2.2222, c.OnDemand.CostPerMillionRequests)
	assert.Equal(t, 1.1111, c.Spot.CostPerMillionRequests)
	assert.Equal(t, 50.0, c.SameWorkSavingsPct)
	assert.Equal(t, "For the same requests, spot saves 50.0% ($1.11 against $2.22 a million requests served); its bill is $40.00 against $80.00 all on-demand ($40.00 lower). api within its SLO: 98.7% on spot, 98.7% on demand.", sameWorkText(c))
	assert.Empty(t, pairedText(c.Paired), "no job to pair")
}

// The report says which wall-clock time simulated time 0 is, in UTC
// (08:30 at +02:00 is 06:30 UTC), in Markdown and HTML.
func TestReportStatesTheClock(t *testing.T) {
	res, pr := servedRun()
	s := Summarize(res, Meta{Scenario: "served", Pricing: pr, Start: time.Date(2026, 3, 1, 8, 30, 0, 0, time.FixedZone("", 2*3600))})
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, s))
	assert.Contains(t, b.String(), "Simulated time 0 is 2026-03-01 06:30 UTC (spec.output.startTime)")
	b.Reset()
	require.NoError(t, WriteHTML(&b, s, nil))
	assert.Contains(t, b.String(), "Simulated time 0 is 2026-03-01 06:30 UTC")
}

// Jobs stopped by preemption are not "stopped by lost nodes": the
// terminal names each cause's stops (a job stopped twice counts two).
func TestDisruptionsNameTheirCause(t *testing.T) {
	d := &DisruptionSummary{JobsDisrupted: 4, Restarts: 3, ByCause: map[string]int64{"preemption": 4, "spot interruption": 1}}
	s := &Summary{}
	s.Disruptions = d
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, s))
	assert.Contains(t, b.String(), "Disruptions: 4 jobs stopped, 1 stop by spot interruption, 4 stops by preemption, 3 restarts, 0 failed.")
	assert.NotContains(t, b.String(), "lost nodes,")
}
