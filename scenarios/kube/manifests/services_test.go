package manifests

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/scenarios"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// bare is a generator with no pools or policy, for services built by hand.
func bare(svcs ...Service) *gen {
	s := &scenarios.Scenario{}
	s.Metadata.Name = "serving"
	return &gen{s: s, source: "serving.yaml", svcs: svcs,
		o: Options{Namespace: DefaultNamespace, ServingImage: DefaultServingImage, PrometheusRelease: DefaultPrometheusRelease}}
}

var bertBatch = serving.Batch{Size: 32, MaxDelayMs: 100, BaseMs: 8, PerItemMs: 0.9}

// hpaService: a BERT classifier of one L4 GPU, 4 CPUs and 16 GiB,
// tolerating the GPU taint, 1 to 8 replicas (2 at first) under an HPA on
// 50 requests/s per replica with a 60 s scale-down window, batching 32
// with a 100 ms delay, a queue of 100 and a 2 s timeout.
func hpaService(t *testing.T) Service {
	sp := autoscale.NewHPASpec(8, 50)
	sp.ScaleDown.StabilizationMs = 60_000
	h, err := autoscale.NewHPA(sp)
	require.NoError(t, err)
	return Service{Name: "bert", Queue: "inference", Batching: true, Config: sim.ServiceConfig{
		Spec:     services.Spec{Name: "bert", Batch: bertBatch, QueueLimit: 100, TimeoutMs: 2000, SLOMs: 200},
		Scaler:   services.HPA{H: h, Metric: services.RequestsPerReplica},
		Priority: 1000,
		Pod:      cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 16384, GPUs: 1},
		Constraints: &cluster.Constraints{NodeSelector: map[string]string{"node.kubernetes.io/instance-type": "g6.xlarge"},
			Tolerations: []cluster.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}},
		MinReplicas: 1, MaxReplicas: 8, InitialReplicas: 2, ImagePull: 40_000, ModelLoad: 25_000,
	}}
}

// kedaService: the same model scaled by KEDA on queue latency, 100 ms
// (100,000 us in TorchServe's metric), active above 5 ms, from 0 to 8
// replicas, polling every 15 s, cooling down for 600 s.
func kedaService(t *testing.T) Service {
	sp := autoscale.NewScaledObjectSpec(100)
	sp.ActivationThreshold, sp.Type = 5, autoscale.Value
	sp.MinReplicaCount, sp.MaxReplicaCount = 0, 8
	sp.PollingMs, sp.CooldownMs = 15_000, 600_000
	k, err := autoscale.NewKEDA(sp)
	require.NoError(t, err)
	v := hpaService(t)
	v.Name, v.Config.Scaler = "bert-keda", services.KEDA{K: k, Metric: services.QueueLatencyMs}
	v.Config.MinReplicas, v.Config.InitialReplicas = 0, 0
	return v
}

func kpaService(t *testing.T, target float64) Service {
	sp := autoscale.NewKPASpec(target)
	sp.MinScale, sp.MaxScale, sp.StableWindowMs = 0, 5, 120_000
	k, err := autoscale.NewKPA(sp)
	require.NoError(t, err)
	return Service{Name: "recommender", Queue: "shop", Config: sim.ServiceConfig{
		Spec:        services.Spec{Name: "recommender", Batch: serving.Batch{Size: 1, BaseMs: 12}},
		Scaler:      services.KPA{K: k, TickMs: sp.TickMs},
		Pod:         cluster.PodSpec{MilliCPU: 2000, MemoryMiB: 8192, GPUs: 1, MIG: "1g.10gb"},
		MinReplicas: 0, MaxReplicas: 5, ImagePull: 30_000, ModelLoad: 60_000,
	}}
}

// written generates the services' files and reads every YAML file back
// strictly into its types (Decode), returning the encoded files by path.
func written(t *testing.T, g *gen) map[string][]byte {
	t.Helper()
	files, err := g.serviceFiles()
	require.NoError(t, err)
	out := map[string][]byte{}
	set := newSchemaSet()
	for _, f := range files {
		b := encode(t, f)
		out[f.Path] = b
		if !strings.HasSuffix(f.Path, ".yaml") {
			continue
		}
		objs, err := Decode(f.Path, b)
		require.NoError(t, err, "%s:\n%s", f.Path, b)
		require.Len(t, objs, len(f.Objects))
		for _, o := range f.Objects {
			_, err := set.validate(t, o)
			require.NoError(t, err, "%s", f.Path)
		}
	}
	return out
}

// A Deployment and its HPA read back as the run's service: the replica
// pod, the bounds and the HPA spec (target, behavior, defaults), and the
// batching of the config.properties beside them.
func TestServiceDeploymentAndHPARoundTrip(t *testing.T) {
	v := hpaService(t)
	files := written(t, bare(v))
	require.Contains(t, files, DirServices+"bert.yaml")
	require.Contains(t, files, DirServices+"bert.config.properties")
	y := files[DirServices+"bert.yaml"]

	wls, _, err := kubesvc.ReadServing("bert.yaml", y)
	require.NoError(t, err)
	require.Len(t, wls, 1)
	w := wls[0]
	assert.Equal(t, "Deployment", w.Kind)
	assert.Equal(t, 2, w.Replicas, "initial replicas")
	assert.Equal(t, kubesvc.Pod{MilliCPU: 4000, MemoryMiB: 16384, GPUs: 1, PriorityClassName: "gpuplan-priority-1000",
		NodeSelector: map[string]string{"node.kubernetes.io/instance-type": "g6.xlarge"},
		Labels:       map[string]string{"app.kubernetes.io/name": "bert"}, // the template's, for spread and pod affinity selectors
		Tolerations:  []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}, w.Pod)

	set, err := kubesvc.Read("bert.yaml", y)
	require.NoError(t, err)
	require.Len(t, set.HPAs, 1)
	h := set.HPAs[0]
	assert.Equal(t, "Deployment/bert", h.Target)
	assert.Equal(t, kubesvc.Metric{Source: "Pods", Name: MetricRequestsPerSecond}, h.Metric)
	assert.Equal(t, v.Config.Scaler.(services.HPA).H.Spec(), h.Spec, "bounds, target, type, behavior, tolerance, sync")

	ts, err := kubesvc.ParseTorchServe("config.properties", files[DirServices+"bert.config.properties"])
	require.NoError(t, err)
	assert.Equal(t, 100, ts.JobQueueSize)
	assert.Equal(t, 2, ts.DefaultResponseTimeoutS)
	require.Len(t, ts.Models, 1)
	m := ts.Models[0]
	assert.Equal(t, bertBatch, m.Batch(bertBatch.BaseMs, bertBatch.PerItemMs), "batch size and delay")
	assert.Equal(t, "bert", m.Name)

	// The Deployment mounts the same config.properties from its ConfigMap.
	objs, err := Decode("bert.yaml", y)
	require.NoError(t, err)
	var cm *corev1.ConfigMap
	var dep *appsv1.Deployment
	for _, o := range objs {
		switch x := o.(type) {
		case *corev1.ConfigMap:
			cm = x
		case *appsv1.Deployment:
			dep = x
		}
	}
	require.NotNil(t, cm)
	require.NotNil(t, dep)
	assert.Equal(t, string(files[DirServices+"bert.config.properties"][bytes.Index(files[DirServices+"bert.config.properties"], []byte("inference_address")):]), cm.Data["config.properties"])
	assert.Equal(t, TorchServeConfigPath, dep.Spec.Template.Spec.Containers[0].VolumeMounts[0].MountPath)
	assert.Equal(t, cm.Name, dep.Spec.Template.Spec.Volumes[0].ConfigMap.Name)
}

// A ScaledObject reads back with the run's bounds, polling, cooldown and
// behavior; its thresholds are TorchServe's microseconds (x1000 the
// run's milliseconds).
func TestServiceScaledObjectRoundTrip(t *testing.T) {
	v := kedaService(t)
	files := written(t, bare(v))
	set, err := kubesvc.Read("bert-keda.yaml", files[DirServices+"bert-keda.yaml"])
	require.NoError(t, err)
	require.Len(t, set.ScaledObjects, 1)
	so := set.ScaledObjects[0]
	assert.Equal(t, "Deployment/bert-keda", so.Target)
	assert.Equal(t, "prometheus", so.Metric.Source)
	assert.Contains(t, so.Metric.Query, MetricQueueLatencyMicros)
	want := v.Config.Scaler.(services.KEDA).K.Spec()
	want.Threshold, want.ActivationThreshold = 100_000, 5_000
	assert.Equal(t, want, so.Spec)

	wls, _, err := kubesvc.ReadServing("bert-keda.yaml", files[DirServices+"bert-keda.yaml"])
	require.NoError(t, err)
	require.Len(t, wls, 1)
	assert.Equal(t, 0, wls[0].Replicas, "scaled to zero at the start")
}

// A KPA-scaled service is a KServe InferenceService: target 7 per replica
// is scaleTarget 10 at Knative's 70%; target 10 is scaleTarget 10 at
// 100%. Both read back to the run's target, bounds and window.
func TestServiceInferenceServiceRoundTrip(t *testing.T) {
	for _, c := range []struct {
		target      float64
		scaleTarget int
		util        string
	}{{7, 10, ""}, {10, 10, "100"}} {
		v := kpaService(t, c.target)
		files := written(t, bare(v))
		y := files[DirServices+"recommender.yaml"]
		wls, _, err := kubesvc.ReadServing("recommender.yaml", y)
		require.NoError(t, err)
		require.Len(t, wls, 1)
		w := wls[0]
		assert.Equal(t, "InferenceService", w.Kind)
		assert.Equal(t, "Serverless", w.Mode)
		assert.Equal(t, 0, w.MinReplicas)
		assert.Equal(t, 5, w.MaxReplicas)
		assert.Equal(t, "1g.10gb", w.Pod.MIG)
		require.NotNil(t, w.KPA)
		want := v.Config.Scaler.(services.KPA).K.Spec()
		got := *w.KPA
		assert.InDelta(t, want.Target, got.Target, 1e-9)
		got.Target = want.Target
		assert.Equal(t, want, got)
		assert.Contains(t, string(y), fmt.Sprintf("scaleTarget: %d\n", c.scaleTarget))
		if c.util != "" {
			assert.Contains(t, string(y), annotationKnativeUtil+`: "`+c.util+`"`)
		} else {
			assert.NotContains(t, string(y), annotationKnativeUtil)
		}
	}
}

// Utilization on a GPU replica is the DCGM exporter's GPU utilization as
// a Pods metric; a CPU-only replica's is the cpu resource.
func TestServiceUtilizationMetric(t *testing.T) {
	v := hpaService(t)
	h, err := autoscale.NewHPA(autoscale.NewHPASpec(4, 60))
	require.NoError(t, err)
	v.Config.Scaler = services.HPA{H: h, Metric: services.Utilization}
	files := written(t, bare(v))
	set, err := kubesvc.Read("bert.yaml", files[DirServices+"bert.yaml"])
	require.NoError(t, err)
	assert.Equal(t, kubesvc.Metric{Source: "Pods", Name: MetricGPUUtil}, set.HPAs[0].Metric)
	assert.Equal(t, 60.0, set.HPAs[0].Spec.Target)

	v.Config.Pod = cluster.PodSpec{MilliCPU: 2000, MemoryMiB: 4096}
	files = written(t, bare(v))
	set, err = kubesvc.Read("bert.yaml", files[DirServices+"bert.yaml"])
	require.NoError(t, err)
	assert.Equal(t, kubesvc.Metric{Source: "Resource", Name: "cpu"}, set.HPAs[0].Metric)
	assert.Equal(t, 60.0, set.HPAs[0].Spec.Target)
	objs, err := Decode("bert.yaml", files[DirServices+"bert.yaml"])
	require.NoError(t, err)
	for _, o := range objs {
		if x, ok := o.(*autoscalingv2.HorizontalPodAutoscaler); ok {
			assert.Equal(t, autoscalingv2.UtilizationMetricType, x.Spec.Metrics[0].Resource.Target.Type)
		}
	}
}

// The schema check can fail: a ScaledObject with a misspelt field and an
// InferenceService with a string where the schema wants a number.
func TestServiceSchemaCheckCanFail(t *testing.T) {
	set := newSchemaSet()
	g := bare(kedaService(t), kpaService(t, 7))
	files, err := g.serviceFiles()
	require.NoError(t, err)
	bad := 0
	for _, f := range files {
		for _, o := range f.Objects {
			switch x := o.(type) {
			case *ScaledObject:
				b, err := marshal(x)
				require.NoError(t, err)
				_, err = set.validate(t, yamlMap(t, strings.Replace(string(b), "pollingInterval:", "pollingIntervall:", 1)))
				require.Error(t, err)
				bad++
			case *InferenceService:
				b, err := marshal(x)
				require.NoError(t, err)
				_, err = set.validate(t, yamlMap(t, strings.Replace(string(b), "maxReplicas: 5", "maxReplicas: five", 1)))
				require.Error(t, err)
				bad++
			}
		}
	}
	require.Equal(t, 2, bad)
}

func yamlMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(s), &m))
	return m
}

const servicesScenario = "testdata/scenarios/services.yaml"

// servicesReadBackYAML describes the services of testdata/scenarios/services.yaml by
// the files gpuplan manifests wrote: the Deployment or InferenceService,
// the HPA or ScaledObject and config.properties give everything a
// Kubernetes object carries; the scenario keeps what none does (load,
// cold start, service time, SLO, timeout) and the priority (its
// PriorityClass is gpuplan's, not a policy's).
const servicesReadBackYAML = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: services-read-back
spec:
  horizon: 6h
  cluster:
    pools:
    - {name: l4, count: 2, instanceType: g6.12xlarge, gpuModel: L4, gpusPerNode: 4, cpu: "48", memory: 192Gi, labels: {tier: inference}, taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]}
    - {name: a100-mig, count: 1, instanceType: p4d.24xlarge, gpuModel: A100-40GB, gpusPerNode: 8, cpu: "96", memory: 1152Gi, sharing: {mig: {strategy: mixed, layout: all-1g.5gb}}}
  workload:
    services:
    - name: bert
      priority: 1000
      manifests: [kubernetes/40-services/bert.yaml]
      autoscaler: {manifests: [kubernetes/40-services/bert.yaml]}
      torchserve: {path: kubernetes/40-services/bert.config.properties}
      batching: {baseMs: 8, perItemMs: 0.9}
      coldStart: {imagePull: 40s, modelLoad: 25s}
      load: {constant: 200}
      timeout: 2s
      slo: {latency: 200ms}
    - name: bert-keda
      manifests: [kubernetes/40-services/bert-keda.yaml]
      autoscaler: {manifests: [kubernetes/40-services/bert-keda.yaml]}
      torchserve: {path: kubernetes/40-services/bert-keda.config.properties}
      batching: {baseMs: 12, perItemMs: 1.5}
      coldStart: {imagePull: 30s, modelLoad: 20s}
      load: {diurnal: {base: 100, amplitude: 80, peak: "14:00"}}
      slo: {latency: 300ms}
    - name: recommender
      queue: shop
      manifests: [kubernetes/40-services/recommender.yaml]
      batching: {batchSize: 1, baseMs: 20, perItemMs: 0}
      coldStart: {imagePull: 1m, modelLoad: 2m}
      load: {constant: 30, spikes: [{start: 2h, length: 1h, multiplier: 5}]}
      slo: {latency: 250ms}
`

// gpuplan manifests on a scenario with services writes their files, every
// object strict and every custom resource valid; a scenario that takes
// the services from those files builds the same services: replica pod,
// placement, bounds, initial replicas, autoscaler (HPA and KEDA specs
// exactly, the metric's kind; the KPA's target within float rounding),
// batching and queue limit.
func TestServicesScenarioRoundTrip(t *testing.T) {
	s, err := scenarios.LoadFile(servicesScenario)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	set := newSchemaSet()
	paths := map[string]bool{}
	for _, f := range files {
		paths[f.Path] = true
		if !strings.HasSuffix(f.Path, ".yaml") {
			continue
		}
		b := encode(t, f)
		_, err := Decode(f.Path, b)
		require.NoError(t, err, f.Path)
		for _, o := range f.Objects {
			_, err := set.validate(t, o)
			require.NoError(t, err, f.Path)
		}
	}
	for _, p := range []string{DirServices + "bert.yaml", DirServices + "bert.config.properties", DirServices + "bert-keda.yaml",
		DirServices + "bert-keda.config.properties", DirServices + "recommender.yaml"} {
		assert.True(t, paths[p], p)
	}
	assert.False(t, paths[DirServices+"recommender.config.properties"], "no batching, no config.properties")
	for p := range paths {
		assert.False(t, strings.HasPrefix(p, DirJobs) || strings.HasPrefix(p, DirJobTemplates), "services alone write no job template: %s", p)
	}
	// bert's priority 1000 is a PriorityClass of its own; the others have
	// none (priority 0, no class uses priorities).
	for _, f := range files {
		if f.Path != PathPriorityClasses {
			continue
		}
		require.Len(t, f.Objects, 1)
		pc := f.Objects[0].(*schedulingv1.PriorityClass)
		assert.Equal(t, "gpuplan-priority-1000", pc.Name)
		assert.Equal(t, int32(1000), pc.Value)
		assert.Equal(t, "Inference service bert of gpuplan scenario services.", pc.Description)
	}
	dir := t.TempDir()
	require.NoError(t, WriteDir(dir, files))

	built := func(sc *scenarios.Scenario) []sim.ServiceConfig {
		b, err := sc.Build(scenarios.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		return b.Config.Services
	}
	want := built(s)
	back, err := scenarios.Parse("read-back.yaml", dir, []byte(servicesReadBackYAML))
	require.NoError(t, err)
	got := built(back)
	require.Len(t, got, 3)
	for i := range want {
		w, g := want[i], got[i]
		name := w.Spec.Name
		assert.Equal(t, w.Pod, g.Pod, name)
		assert.Equal(t, w.Constraints, g.Constraints, name)
		assert.Equal(t, w.Priority, g.Priority, name)
		assert.Equal(t, []int{w.MinReplicas, w.MaxReplicas, w.InitialReplicas}, []int{g.MinReplicas, g.MaxReplicas, g.InitialReplicas}, name)
		assert.Equal(t, w.Spec.Batch, g.Spec.Batch, name)
		assert.Equal(t, w.Spec.QueueLimit, g.Spec.QueueLimit, name)
		switch ws := w.Scaler.(type) {
		case services.HPA:
			gs, ok := g.Scaler.(services.HPA)
			require.True(t, ok, "%s: %T", name, g.Scaler)
			assert.Equal(t, ws.Metric, gs.Metric, name)
			assert.Equal(t, ws.H.Spec(), gs.H.Spec(), name)
		case services.KEDA:
			gs, ok := g.Scaler.(services.KEDA)
			require.True(t, ok, "%s: %T", name, g.Scaler)
			assert.Equal(t, ws.Metric, gs.Metric, name)
			wk, gk := ws.K.Spec(), gs.K.Spec()
			assert.InDelta(t, wk.Threshold, gk.Threshold, 1e-9, name)
			assert.InDelta(t, wk.ActivationThreshold, gk.ActivationThreshold, 1e-9, name)
			gk.Threshold, gk.ActivationThreshold = wk.Threshold, wk.ActivationThreshold
			assert.Equal(t, wk, gk, name)
		case services.KPA:
			gs, ok := g.Scaler.(services.KPA)
			require.True(t, ok, "%s: %T", name, g.Scaler)
			wk, gk := ws.K.Spec(), gs.K.Spec()
			assert.InDelta(t, wk.Target, gk.Target, 1e-9, name)
			gk.Target = wk.Target
			assert.Equal(t, wk, gk, name)
		default:
			t.Fatalf("%s: scaler %T", name, w.Scaler)
		}
	}
}

// Under a Kueue policy a service's Deployment goes to its LocalQueue's
// namespace with the queue label on it and on its pods (Kueue's
// deployment integration admits the pods).
func TestServiceUnderAdmission(t *testing.T) {
	s, err := scenarios.LoadFile(twoTeams)
	require.NoError(t, err)
	one, rate := 1, 20.0
	s.Spec.Workload.Services = append(s.Spec.Workload.Services, scenarios.ServiceSpec{
		Name: "classifier", Queue: "team-a", Pod: &scenarios.PodTemplate{CPU: resource.MustParse("4"), Memory: resource.MustParse("16Gi"), GPUs: &scenarios.NumDist{Value: ptr(1.0)}},
		Replicas: &scenarios.ServiceReplicasSpec{Min: &one}, Load: scenarios.ServiceLoadSpec{Constant: &rate},
	})
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	var dep *appsv1.Deployment
	for _, f := range files {
		if f.Path != DirServices+"classifier.yaml" {
			continue
		}
		objs, err := Decode(f.Path, encode(t, f))
		require.NoError(t, err)
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok {
				dep = d
			}
		}
	}
	require.NotNil(t, dep)
	assert.Equal(t, "team-a", dep.Namespace)
	assert.Equal(t, "team-a", dep.Labels[LabelQueueName])
	assert.Equal(t, "team-a", dep.Spec.Template.Labels[LabelQueueName])
	assert.Equal(t, int32(1), *dep.Spec.Replicas)
}

// A service's topology spread constraints, required pod anti-affinity and
// pod labels are written into its Deployment's pod template, and into an
// InferenceService's predictor, and read back as the same constraints:
// before, the written replicas carried none, so the run read back from the
// manifests put every replica in one zone.
func TestServiceSpreadAndAffinityWritten(t *testing.T) {
	spread := []cluster.SpreadConstraint{
		{MaxSkew: 1, TopologyKey: cluster.LabelZone, DoNotSchedule: true, MinDomains: 3,
			Selector: []cluster.Requirement{{Key: "app", Op: cluster.OpIn, Values: []string{"web"}}}},
		{MaxSkew: 2, TopologyKey: cluster.LabelHostname, HonorTaints: true,
			Selector: []cluster.Requirement{{Key: "tier", Op: cluster.OpNotIn, Values: []string{"batch", "dev"}}}},
	}
	anti := []cluster.PodAffinityTerm{{Anti: true, TopologyKey: cluster.LabelHostname,
		Selector: []cluster.Requirement{{Key: "app", Op: cluster.OpIn, Values: []string{"web"}}}}}
	labels := &cluster.PodLabels{Labels: map[string]string{"app": "web"}}
	for _, v := range []Service{hpaService(t), kpaService(t, 7)} {
		v.Config.Pod.Labels = labels
		if v.Config.Constraints == nil {
			v.Config.Constraints = &cluster.Constraints{}
		}
		v.Config.Constraints.Spread = spread
		v.Config.Constraints.PodAffinity = anti
		files := written(t, bare(v))
		y := files[DirServices+v.Name+".yaml"]
		wls, _, err := kubesvc.ReadServing(v.Name+".yaml", y)
		require.NoError(t, err, v.Name)
		require.Len(t, wls, 1)
		w := wls[0]
		assert.Equal(t, spread, w.Pod.Spread, v.Name)
		assert.Equal(t, "web", w.Pod.Labels["app"], v.Name)
		assert.Equal(t, anti, w.Pod.PodAffinity, v.Name)
	}
}
