package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// svcCluster is two pools: A100s any pod may use, T4s tainted for batch.
const svcCluster = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: svc
spec:
  horizon: 72h
  cluster:
    pools:
    - name: a100
      count: 2
      gpuModel: A100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
    - name: t4
      count: 2
      gpuModel: T4
      gpusPerNode: 4
      cpu: "48"
      memory: 192Gi
      taints:
      - {key: dedicated, value: batch, effect: NoSchedule}
  workload:
`

const svcBERT = `    services:
    - name: bert
      queue: inference
      priority: 1000
      pod: {cpu: "4", memory: 16Gi, gpus: 1}
      replicas: {min: 1, max: 8, initial: 2}
      coldStart: {imagePull: 40s, modelLoad: 25s}
      load:
        constant: 200
        spikes: [{start: 36h, length: 2h, multiplier: 5}]
      batching: {batchSize: 32, maxBatchDelay: 100ms, baseMs: 8, perItemMs: 0.9}
      queueLimit: 100
      timeout: 2s
      slo: {latency: 200ms}
      autoscaler:
        hpa: {metric: requestsPerReplica, target: 50}
`

func buildSvc(t *testing.T, body string) (*Built, error) {
	t.Helper()
	s, err := Parse("svc.yaml", "testdata/services", []byte(body))
	if err != nil {
		return nil, err
	}
	b, err := s.Build(Options{})
	if b != nil {
		t.Cleanup(func() { b.Close() })
	}
	return b, err
}

func oneService(t *testing.T, body string) sim.ServiceConfig {
	t.Helper()
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	require.Len(t, b.Config.Services, 1)
	return b.Config.Services[0]
}

// A service given field by field builds into the engine's contract, and
// its autoscaler acts as the HPA algorithm says.
func TestServiceBuildsEveryField(t *testing.T) {
	b, err := buildSvc(t, svcCluster+svcBERT)
	require.NoError(t, err)
	require.Len(t, b.Config.Services, 1)
	c := b.Config.Services[0]
	require.Equal(t, "bert", c.Spec.Name)
	require.Equal(t, "inference", c.Queue)
	require.EqualValues(t, 1000, c.Priority)
	require.EqualValues(t, 4000, c.Pod.MilliCPU)
	require.EqualValues(t, 16384, c.Pod.MemoryMiB)
	require.EqualValues(t, 1, c.Pod.GPUs)
	require.Equal(t, []int{1, 8, 2}, []int{c.MinReplicas, c.MaxReplicas, c.InitialReplicas})
	require.EqualValues(t, 40_000, c.ImagePull)
	require.EqualValues(t, 25_000, c.ModelLoad)
	require.Equal(t, serving.Batch{Size: 32, MaxDelayMs: 100, BaseMs: 8, PerItemMs: 0.9}, c.Spec.Batch)
	// A full batch: 32 / (8 + 0.9 x 32) ms = 869.6 requests/s a replica.
	require.InDelta(t, 32/(8+0.9*32)*1000, c.Spec.Batch.Capacity(), 1e-9)
	require.Equal(t, 100, c.Spec.QueueLimit)
	require.Equal(t, 2000.0, c.Spec.TimeoutMs)
	require.Equal(t, 200.0, c.Spec.SLOMs)
	// 200/s, five times that from 36 h for two hours.
	require.Equal(t, 200.0, c.Spec.Load.At(0))
	require.Equal(t, 1000.0, c.Spec.Load.At(37*3600*1000))
	require.Equal(t, 200.0, c.Spec.Load.At(38*3600*1000))
	hpa, ok := c.Scaler.(services.HPA)
	require.True(t, ok, "%T", c.Scaler)
	require.Equal(t, services.RequestsPerReplica, hpa.Metric)
	require.EqualValues(t, 15_000, hpa.PeriodMs())
	// 200/s over 2 ready replicas is 100 each against a target of 50:
	// ceil(2 x 100/50) = 4, within the default scale-up (+100% or +4).
	require.Equal(t, 4, hpa.Decide(0, 2, 2, 0, services.Metrics{Rate: 200}))
	require.Contains(t, strings.Join(b.Assumptions, "\n"), ServingModelNote)
	require.Contains(t, b.Workload, "services bert")
	// A Deployment-style service (here an HPA) is balanced at random
	// (kube-proxy) unless the scenario says otherwise.
	require.Equal(t, serving.Random, c.Spec.Balancing)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "service bert: balancing random")
	c = oneService(t, strings.Replace(svcCluster+svcBERT, "      queueLimit: 100\n", "      queueLimit: 100\n      balancing: leastRequest\n", 1))
	require.Equal(t, serving.LeastRequest, c.Spec.Balancing)
}

// A scenario of services alone runs no jobs and needs a horizon; beside
// a synthetic workload the jobs are generated as before.
func TestServicesOnly(t *testing.T) {
	b, err := buildSvc(t, svcCluster+svcBERT)
	require.NoError(t, err)
	src, ok := b.Config.Workload.(*sim.SliceSource)
	require.True(t, ok, "%T", b.Config.Workload)
	require.Empty(t, src.Jobs)
	require.Equal(t, "services only; services bert", b.Workload)

	_, err = buildSvc(t, strings.Replace(svcCluster+svcBERT, "  horizon: 72h\n", "", 1))
	require.ErrorContains(t, err, "svc.yaml:24:5: spec.workload.services: a scenario with services needs spec.horizon: services never drain")

	sc, err := Parse("svc.yaml", "testdata/services", []byte(svcCluster+svcBERT))
	require.NoError(t, err)
	zero := time.Duration(0)
	_, err = sc.Build(Options{Horizon: &zero})
	require.EqualError(t, err, "--horizon: 0 runs until the workload drains, and the scenario's services never drain: give a horizon")
	_, err = sc.Build(Options{Trace: &TraceSpec{Path: "testdata/native.csv", Format: "csv"}})
	require.ErrorContains(t, err, "--trace: replays the whole trace (the scenario's horizon belongs to its own workload), and the scenario's services never drain: give --horizon")

	withJobs := svcCluster + `    synthetic:
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "8", memory: 64Gi, gpus: 8}
        duration: 2h
` + svcBERT
	b, err = buildSvc(t, withJobs)
	require.NoError(t, err)
	require.Equal(t, "synthetic, classes train; services bert", b.Workload)
	require.Len(t, b.Config.Services, 1)
	gen, ok := b.Config.Workload.(*Generator)
	require.True(t, ok, "%T", b.Config.Workload)
	n := 0
	for {
		var j cluster.JobSpec
		more, err := gen.Next(&j)
		require.NoError(t, err)
		if !more {
			break
		}
		n++
	}
	require.Equal(t, 72, n) // one an hour from time 0 over 72 h
}

// Service-time defaults: the A100 anchor (4.9 ms + 0.2 ms a request),
// scaled per request by the ratio of dense FP16 Tensor Core TFLOPS, on the
// share of the GPU the replica gets, the slowest pool it may land on.
func TestServiceTimeDefaults(t *testing.T) {
	noBatching := strings.Replace(svcBERT, "      batching: {batchSize: 32, maxBatchDelay: 100ms, baseMs: 8, perItemMs: 0.9}\n", "", 1)
	for _, c := range []struct {
		name, from, to string
		per            float64
	}{
		// Only the A100s take it (the T4s are tainted).
		{"a100", "", "", 0.2},
		// Tolerating the taint: the T4 is the slowest, 0.2 x 312/65.
		{"t4", "      pod: {", "      tolerations: [{key: dedicated, operator: Exists}]\n      pod: {", 0.2 * 312 / 65},
		// Named: H100, 0.2 x 312/989.
		{"named", "      pod: {", "      gpuModel: H100-80GB\n      pod: {", 0.2 * 312 / 989},
		// Half an A100 by time-slicing's share: twice as long.
		{"share", "gpus: 1}", "gpus: 0.5}", 0.4},
		// Pinned to the T4s by the labels every node of a pool carries
		// (gpuplan.dev/pool, gpuplan.dev/gpu-model), not the pool's own.
		{"pool-label", "      pod: {", "      nodeSelector: {gpuplan.dev/pool: t4}\n      tolerations: [{key: dedicated, operator: Exists}]\n      pod: {", 0.2 * 312 / 65},
		{"model-label", "      pod: {", "      nodeSelector: {gpuplan.dev/gpu-model: A100-80GB}\n      tolerations: [{key: dedicated, operator: Exists}]\n      pod: {", 0.2},
	} {
		c := c
		body := svcCluster + noBatching
		if c.from != "" {
			body = strings.Replace(body, c.from, c.to, 1)
		}
		b, err := buildSvc(t, body)
		require.NoError(t, err, c.name)
		s := b.Config.Services[0].Spec.Batch
		require.Equal(t, 4.9, s.BaseMs, c.name)
		require.InDelta(t, c.per, s.PerItemMs, 1e-9, c.name)
		require.Equal(t, 1, s.Size, c.name)
		require.Contains(t, strings.Join(b.Assumptions, "\n"), "batch service time assumed for a BERT-base-like model", c.name)
	}

	// A MIG 1g.10gb slice of an A100 has 1 of its 7 compute slices;
	// one of four time-sliced L4s a quarter of 0.2 x 312/121.
	mig := strings.Replace(svcCluster, "  workload:\n", `    - name: mig
      count: 1
      gpuModel: A100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
      labels: {kind: mig}
      sharing: {mig: {strategy: mixed, layout: all-1g.10gb}}
    - name: l4
      count: 1
      gpuModel: L4
      gpusPerNode: 4
      cpu: "48"
      memory: 192Gi
      labels: {kind: sliced}
      sharing: {timeSlicing: {replicas: 4}}
  workload:
`, 1)
	c := oneService(t, mig+strings.Replace(noBatching, "gpus: 1}", "gpus: 1, mig: 1g.10gb}", 1))
	require.InDelta(t, 0.2*7, c.Spec.Batch.PerItemMs, 1e-9)
	c = oneService(t, mig+strings.Replace(noBatching, "      pod: {", "      nodeSelector: {kind: sliced}\n      pod: {", 1))
	require.InDelta(t, 0.2*312/121*4, c.Spec.Batch.PerItemMs, 1e-9)
}

// A diurnal peak is a time of day on spec.output.startTime's clock; a
// CSV's rates hold from their time to the next.
func TestServiceLoads(t *testing.T) {
	d := strings.Replace(svcCluster+svcBERT, "        constant: 200\n", "        diurnal: {base: 300, amplitude: 250, peak: \"14:00\"}\n", 1)
	d = strings.Replace(d, "  horizon: 72h\n", "  horizon: 72h\n  output: {startTime: \"2026-03-02T06:00:00Z\"}\n", 1)
	c := oneService(t, d)
	// 14:00 is 8 h after a 06:00 start: 550/s then, 50/s twelve hours on.
	require.EqualValues(t, 8*3600*1000, c.Spec.Load.PeakMs)
	require.InDelta(t, 550, c.Spec.Load.At(8*3600*1000), 1e-9)
	require.InDelta(t, 50, c.Spec.Load.At(20*3600*1000), 1e-9)

	c = oneService(t, strings.Replace(svcCluster+svcBERT, "        constant: 200\n", "        csv: {path: rates.csv}\n", 1))
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 50}, {AtMs: 6 * 3600 * 1000, Rate: 200}, {AtMs: 12 * 3600 * 1000, Rate: 400}, {AtMs: 18 * 3600 * 1000, Rate: 150.5}}, c.Spec.Load.Points)
	require.Equal(t, 200.0, c.Spec.Load.At(7*3600*1000))
	// The spike multiplies the CSV's rate too: 150.5 x 5 at 37 h.
	require.Equal(t, 752.5, c.Spec.Load.At(37*3600*1000))
}

// TorchServe's config.properties gives batching and the queue limit;
// the scenario's own fields win.
func TestServiceTorchServe(t *testing.T) {
	body := strings.Replace(svcCluster+svcBERT, "      batching: {batchSize: 32, maxBatchDelay: 100ms, baseMs: 8, perItemMs: 0.9}\n      queueLimit: 100\n",
		"      torchserve: {path: config.properties, model: bert}\n      batching: {baseMs: 8, perItemMs: 0.9}\n", 1)
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.Equal(t, serving.Batch{Size: 32, MaxDelayMs: 100, BaseMs: 8, PerItemMs: 0.9}, c.Spec.Batch)
	require.Equal(t, 500, c.Spec.QueueLimit) // job_queue_size
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "TorchServe model bert version 1.0")

	c = oneService(t, strings.Replace(body, "batching: {baseMs", "queueLimit: 64\n      batching: {batchSize: 8, baseMs", 1))
	require.Equal(t, 8, c.Spec.Batch.Size)
	require.Equal(t, 64, c.Spec.QueueLimit)

	_, err = buildSvc(t, strings.Replace(body, "model: bert}", "model: gpt}", 1))
	require.ErrorContains(t, err, `spec.workload.services[0].torchserve.model: testdata/services/config.properties has no model "gpt" version "" (it has bert/1.0)`)
}

// KEDA from a real ScaledObject: its bounds, and its prometheus trigger
// on ts_queue_latency_microseconds read as queue latency in ms (100000
// us = 100 ms, activation 5000 us = 5 ms).
func TestServiceScaledObjectManifest(t *testing.T) {
	body := strings.Replace(svcCluster+svcBERT, "      replicas: {min: 1, max: 8, initial: 2}\n", "", 1)
	body = strings.Replace(body, "        hpa: {metric: requestsPerReplica, target: 50}\n", "        manifests: [scaledobject.yaml]\n", 1)
	b, err := buildSvc(t, strings.Replace(body, "name: bert\n", "name: bert-classifier\n", 1))
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.Equal(t, []int{0, 8, 0}, []int{c.MinReplicas, c.MaxReplicas, c.InitialReplicas})
	k, ok := c.Scaler.(services.KEDA)
	require.True(t, ok, "%T", c.Scaler)
	require.Equal(t, services.QueueLatencyMs, k.Metric)
	// At zero replicas, a queue latency of 4 ms does not activate (5 ms
	// does not either: activation is strictly above); 6 ms does.
	require.Equal(t, 0, k.Decide(0, 0, 0, 0, services.Metrics{QueueLatencyMs: 4}))
	require.Equal(t, 0, k.Decide(15_000, 0, 0, 0, services.Metrics{QueueLatencyMs: 5}))
	require.Equal(t, 1, k.Decide(30_000, 0, 0, 0, services.Metrics{QueueLatencyMs: 6}))
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "scaled by ScaledObject bert-classifier")

	// The service must be the ScaledObject's target.
	_, err = buildSvc(t, body)
	require.NoError(t, err, "a file with one autoscaler is the service's")
}

// A KServe InferenceService gives the pod, tolerations, namespace, bounds
// and the KPA its Serverless mode sets up; its priorityClassName needs a
// policy that defines it.
func TestServiceInferenceServiceManifest(t *testing.T) {
	body := svcCluster + `    services:
    - name: recommender
      manifests: [isvc.yaml]
      gpuModel: A100-80GB
      load: {constant: 50}
`
	_, err := buildSvc(t, body)
	require.ErrorContains(t, err, `svc.yaml:26:18: spec.workload.services[0].manifests: priorityClassName of InferenceService recommender "inference-high": PriorityClasses come from spec.policy's manifests, and the scenario has none; give priority instead`)

	c := oneService(t, strings.Replace(body, "      manifests: [isvc.yaml]\n", "      manifests: [isvc.yaml]\n      priority: 900\n", 1))
	require.EqualValues(t, 900, c.Priority)
	require.Equal(t, "shop", c.Queue)
	require.EqualValues(t, 4000, c.Pod.MilliCPU)
	require.EqualValues(t, 16384, c.Pod.MemoryMiB)
	require.EqualValues(t, 1, c.Pod.GPUs)
	require.Len(t, c.Constraints.Tolerations, 1)
	require.Equal(t, []int{0, 5, 0}, []int{c.MinReplicas, c.MaxReplicas, c.InitialReplicas})
	k, ok := c.Scaler.(services.KPA)
	require.True(t, ok, "%T", c.Scaler)
	require.EqualValues(t, 2000, k.PeriodMs())
	// The KPA's requests go through the activator: one shared queue.
	require.Equal(t, serving.LeastRequest, c.Spec.Balancing)
}

// KServe's own example InferenceService (its documentation's Llama 3 on
// vLLM, as published) sets no replica bounds: KServe's defaults are a
// minimum of 1 and no maximum, which a run bounds at MaxServiceReplicas.
// Before, the reader's "no maximum" was the per-job pod bound (100,000),
// and the scenario refused it as more than a service may have.
func TestServiceUpstreamInferenceService(t *testing.T) {
	c := oneService(t, svcCluster+`    services:
    - name: huggingface-llama3
      manifests: [isvc-huggingface-llama3.yaml]
      load: {constant: 20}
      batching: {batchSize: 8, maxBatchDelay: 50ms, baseMs: 40, perItemMs: 25}
`)
	require.Equal(t, []int{1, MaxServiceReplicas, 1}, []int{c.MinReplicas, c.MaxReplicas, c.InitialReplicas})
	require.EqualValues(t, 6000, c.Pod.MilliCPU)
	require.EqualValues(t, 24*1024, c.Pod.MemoryMiB)
	require.EqualValues(t, 1, c.Pod.GPUs)
	_, ok := c.Scaler.(services.KPA)
	require.True(t, ok, "%T", c.Scaler)
}

// Bad service definitions are errors at their line, column and field.
func TestServiceBadInput(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"negative-rate", "constant: 200", "constant: -5",
			`svc.yaml:32:19: spec.workload.services[0].load.constant: -5 requests/s: a rate is from 0 to 1e+09`},
		{"batch-0", "batchSize: 32", "batchSize: 0",
			`svc.yaml:34:29: spec.workload.services[0].batching.batchSize: must be from 1 to 65536, got 0 (1: no batching)`},
		{"hpa-target-0", "target: 50}", "target: 0}",
			`svc.yaml:39:51: spec.workload.services[0].autoscaler.hpa.target: must be a positive number, got 0: a target of 0 asks for infinitely many replicas`},
		{"min-above-max", "{min: 1, max: 8", "{min: 9, max: 8",
			`svc.yaml:29:23: spec.workload.services[0].replicas.min: min 9 is above max 8`},
		{"no-autoscaler", "      autoscaler:\n        hpa: {metric: requestsPerReplica, target: 50}\n", "",
			`svc.yaml:29:31: spec.workload.services[0].replicas.max: max 8 is above min 1 and the service has no autoscaler to scale between them`},
		{"hpa-zero", "{min: 1, max: 8, initial: 2}", "{min: 0, max: 8, initial: 0}",
			`spec.workload.services[0].replicas.min: 0: a HorizontalPodAutoscaler cannot scale to zero`},
		{"metric", "metric: requestsPerReplica", "metric: rps",
			`svc.yaml:39:23: spec.workload.services[0].autoscaler.hpa.metric: is "rps"; want one of requestsPerReplica, concurrency, queueLatency, utilization, queueDepth, requestsRunning, kvCacheUsage`},
		{"two-loads", "        constant: 200\n", "        constant: 200\n        csv: {path: rates.csv}\n",
			`svc.yaml:32:9: spec.workload.services[0].load: give exactly one of constant, diurnal or csv`},
		{"spike", "multiplier: 5", "multiplier: -1",
			`spec.workload.services[0].load.spikes[0].multiplier: -1: must be from 0 to 1e+06`},
		{"peak", "        constant: 200\n", "        diurnal: {base: 3, amplitude: 1, peak: \"25:00\"}\n",
			`spec.workload.services[0].load.diurnal.peak: "25:00" is not a time of day`},
		{"amplitude", "        constant: 200\n", "        diurnal: {base: 3, amplitude: 4}\n",
			`spec.workload.services[0].load.diurnal.amplitude: 4 is above the base 3: the rate would be negative at the trough`},
		{"csv-missing", "        constant: 200\n", "        csv: {path: nope.csv}\n",
			`testdata/services/nope.csv: no such file`},
		{"gpu-dist", "gpus: 1}", "gpus: {values: [1, 2]}}",
			`spec.workload.services[0].pod.gpus: a replica asks for one number of GPUs, not a distribution`},
		{"no-pool", "gpus: 1}", "gpus: 1}\n      nodeSelector: {zone: mars}",
			`spec.workload.services[0].pod: no pool can run a replica of service bert`},
		{"too-much-cpu", `pod: {cpu: "4"`, `pod: {cpu: "100"`,
			`spec.workload.services[0].pod: no pool can run a replica of service bert`},
		{"too-many-gpus", "gpus: 1}", "gpus: 16}",
			`spec.workload.services[0].pod: no pool can run a replica of service bert`},
		{"half-service-time", "baseMs: 8, perItemMs: 0.9", "baseMs: 8",
			`spec.workload.services[0].batching: give both baseMs and perItemMs`},
		{"balancing", "      queueLimit: 100\n", "      queueLimit: 100\n      balancing: roundRobin\n",
			`svc.yaml:36:18: spec.workload.services[0].balancing: is "roundRobin"; want random or leastRequest`},
		{"dup", "    - name: bert\n", "    - name: bert\n      pod: {cpu: \"1\", memory: 1Gi}\n      load: {constant: 1}\n    - name: bert\n",
			`spec.workload.services[1].name: service "bert" is defined twice`},
	} {
		body := strings.Replace(svcCluster+svcBERT, c.from, c.to, 1)
		require.NotEqual(t, svcCluster+svcBERT, body, c.name)
		_, err := buildSvc(t, body)
		require.Error(t, err, c.name)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.name)
	}
}

// Rate files: strict, with file:line:field errors; time order enforced.
func TestReadRateCSV(t *testing.T) {
	pts, err := ReadRateCSV("r.csv", []byte("\xef\xbb\xbftime,requests_per_second\r\n0,1\r\n\r\n# later\r\n1.5,2e3\r\n2m,0\r\n"))
	require.NoError(t, err)
	require.Equal(t, []serving.Point{{AtMs: 0, Rate: 1}, {AtMs: 1500, Rate: 2000}, {AtMs: 120_000, Rate: 0}}, pts)

	for _, c := range []struct{ name, in, want string }{
		{"empty", "", `r.csv: header: the file is empty; a rate file starts with the header time,requests_per_second`},
		{"header", "t,rate\n0,1\n", `r.csv:1: header: is "t,rate"; a rate file starts with the header time,requests_per_second`},
		{"no-rows", "time,requests_per_second\n", `r.csv: has a header and no rows`},
		{"order", "time,requests_per_second\n0,1\n60,2\n30,3\n", `r.csv:4: time: "30" is not after the row before (line 3, 60 s): rows must be in time order, one per time`},
		{"same-time", "time,requests_per_second\n1m,1\n60,2\n", `r.csv:3: time: "60" is not after the row before (line 2, 60 s)`},
		{"negative", "time,requests_per_second\n0,-1\n", `r.csv:2: requests_per_second: "-1" is not a rate from 0 to 1e+09 requests/s`},
		{"nan", "time,requests_per_second\n0,NaN\n", `r.csv:2: requests_per_second: "NaN" is not a rate`},
		{"time", "time,requests_per_second\nsoon,1\n", `r.csv:2: time: "soon" is neither seconds nor a duration`},
		{"negative-time", "time,requests_per_second\n-5,1\n", `r.csv:2: time: "-5" seconds: a time is from 0 to 100 years`},
		{"fields", "time,requests_per_second\n0,1,2\n", `r.csv:2: "0,1,2" has 3 fields; a row is time,requests_per_second`},
		{"long", "time,requests_per_second\n0," + strings.Repeat("9", 200) + "\n", `r.csv:2: requests_per_second: "99999999`},
	} {
		_, err := ReadRateCSV("r.csv", []byte(c.in))
		require.Error(t, err, c.name)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want, c.name)
		require.Less(t, len(err.Error()), 300, c.name)
	}
}

// FuzzReadRateCSV: any input is points in strict time order with rates
// in range, or an InputError; never a panic.
func FuzzReadRateCSV(f *testing.F) {
	for _, s := range []string{
		"time,requests_per_second\n0,1\n6h,2\n",
		"time,requests_per_second\r\n0,1\r\n1.5,2e3\r\n",
		"# c\ntime,requests_per_second\n\n1d2h,5\n",
		"time,requests_per_second\n0,1\n0,2\n",
		"time,requests_per_second\n0,-1\n",
		"time,requests_per_second\n1e400,1\n",
		"\xef\xbb\xbftime,requests_per_second\n0,1",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := ReadRateCSV("f.csv", data)
		if err != nil {
			requireInputError(t, err)
			return
		}
		require.NotEmpty(t, pts)
		for i, p := range pts {
			require.True(t, p.Rate >= 0 && p.Rate <= MaxServiceRate)
			require.True(t, p.AtMs >= 0)
			if i > 0 {
				require.Greater(t, p.AtMs, pts[i-1].AtMs)
			}
		}
		require.NoError(t, serving.Load{Points: pts}.Validate())
	})
}

// Under a Kueue policy a service's queue maps to a LocalQueue as a job's
// does, and its priorityClass (or its manifest's priorityClassName)
// resolves against the policy's PriorityClasses and
// WorkloadPriorityClasses, preemptionPolicy included.
func TestServiceUnderKueuePolicy(t *testing.T) {
	withPolicy := strings.Replace(svcCluster, "  workload:\n", "  policy:\n    manifests: [kueue.yaml]\n    queues: {inference: serving}\n  workload:\n", 1)
	body := withPolicy + strings.Replace(svcBERT, "      priority: 1000\n", "      priorityClass: inference-high\n", 1)
	c := oneService(t, body)
	require.Equal(t, "serving", c.Queue)
	require.EqualValues(t, 5000, c.Priority)
	require.Zero(t, c.Flags)

	c = oneService(t, strings.Replace(body, "priorityClass: inference-high", "priorityClass: batch-low", 1))
	require.EqualValues(t, 10, c.Priority)
	require.Equal(t, cluster.FlagPreemptNever, c.Flags)

	_, err := buildSvc(t, strings.Replace(body, "priorityClass: inference-high", "priorityClass: gold", 1))
	require.ErrorContains(t, err, `spec.workload.services[0].priorityClass: priorityClass "gold" is not a PriorityClass or WorkloadPriorityClass of spec.policy's manifests (batch-low, inference-high)`)

	_, err = buildSvc(t, strings.Replace(body, "queue: inference", "queue: research", 1))
	require.ErrorContains(t, err, `spec.workload.services[0].queue: service bert: queue "research" is not a LocalQueue of the admission policy (serving): map it with spec.policy.queues or set spec.policy.defaultQueue`)

	// The InferenceService's priorityClassName, inference-high.
	isvc := withPolicy + `    services:
    - name: recommender
      queue: inference
      manifests: [isvc.yaml]
      gpuModel: A100-80GB
      load: {constant: 50}
`
	c = oneService(t, isvc)
	require.EqualValues(t, 5000, c.Priority)
	require.Equal(t, "serving", c.Queue)
}

// Autoscalers given in the scenario keep every field the user set and
// Kubernetes', KEDA's and Knative's defaults for the rest.
func TestServiceAutoscalerFields(t *testing.T) {
	hpa := strings.Replace(svcCluster+svcBERT, "        hpa: {metric: requestsPerReplica, target: 50}\n", `        hpa:
          metric: queueLatency
          target: 80
          syncPeriod: 30s
          tolerance: 0.05
          behavior:
            scaleDown:
              stabilizationWindow: 10m
              selectPolicy: Min
              policies:
              - {type: Pods, value: 4, period: 1m}
              - {type: Percent, value: 10, period: 1m}
`, 1)
	c := oneService(t, hpa)
	h, ok := c.Scaler.(services.HPA)
	require.True(t, ok, "%T", c.Scaler)
	require.Equal(t, services.QueueLatencyMs, h.Metric)
	sp := h.H.Spec()
	require.Equal(t, 80.0, sp.Target)
	require.Equal(t, autoscale.Value, sp.Type, "queue latency is one value, not a per-pod average")
	require.EqualValues(t, 30_000, sp.SyncMs)
	require.Equal(t, 0.05, sp.Tolerance)
	require.Equal(t, []int{1, 8}, []int{sp.MinReplicas, sp.MaxReplicas})
	require.Equal(t, autoscale.Rules{StabilizationMs: 600_000, Select: autoscale.SelectMin,
		Policies: []autoscale.Policy{{Type: autoscale.Pods, Value: 4, PeriodMs: 60_000}, {Type: autoscale.Percent, Value: 10, PeriodMs: 60_000}}}, sp.ScaleDown)
	require.Equal(t, autoscale.DefaultScaleUp(), sp.ScaleUp)

	keda := strings.Replace(svcCluster+svcBERT, "        hpa: {metric: requestsPerReplica, target: 50}\n",
		"        keda: {metric: queueLatency, threshold: 100, activationThreshold: 5, metricType: Value, pollingInterval: 15s, cooldownPeriod: 10m}\n", 1)
	keda = strings.Replace(keda, "{min: 1, max: 8, initial: 2}", "{min: 0, max: 8, initial: 0}", 1)
	c = oneService(t, keda)
	k, ok := c.Scaler.(services.KEDA)
	require.True(t, ok, "%T", c.Scaler)
	ks := k.K.Spec()
	require.Equal(t, []float64{100, 5}, []float64{ks.Threshold, ks.ActivationThreshold})
	require.Equal(t, autoscale.Value, ks.Type)
	require.Equal(t, []int64{15_000, 600_000}, []int64{ks.PollingMs, ks.CooldownMs})
	require.Equal(t, []int{0, 8}, []int{ks.MinReplicaCount, ks.MaxReplicaCount})

	kpa := strings.Replace(keda, "        keda: {metric: queueLatency, threshold: 100, activationThreshold: 5, metricType: Value, pollingInterval: 15s, cooldownPeriod: 10m}\n",
		"        kpa: {target: 7, stableWindow: 2m, panicWindowPercentage: 20, scaleToZeroGracePeriod: 1m}\n", 1)
	c = oneService(t, kpa)
	p, ok := c.Scaler.(services.KPA)
	require.True(t, ok, "%T", c.Scaler)
	want := autoscale.NewKPASpec(7)
	want.StableWindowMs, want.PanicWindowPct, want.ScaleToZeroGraceMs, want.MaxScale = 120_000, 20, 60_000, 8
	require.Equal(t, want, p.K.Spec())
}
