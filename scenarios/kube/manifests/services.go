package manifests

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/scenarios"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// Service is one inference service of a scenario as the run built it: the
// scenario's names and the resolved replica pod, bounds, autoscaler and
// serving model.
type Service struct {
	// Name names the objects; Queue is the scenario's queue (the
	// namespace or LocalQueue); PriorityClass the PriorityClass the
	// scenario names ("" none: one for the priority value, if not 0).
	Name, Queue, PriorityClass string
	Config                     sim.ServiceConfig
	// Batching is set when the scenario batches (a batch size above 1, or
	// a TorchServe config.properties): the model's config.properties is
	// written.
	Batching bool
	// Model is the model's name in config.properties (default Name).
	Model string
}

// Defaults of the serving objects.
const (
	// DefaultServingImage is TorchServe's GPU image, the replicas'
	// container (Options.ServingImage).
	DefaultServingImage = "pytorch/torchserve:0.12.0-gpu"
	// DefaultLLMImage is vLLM's OpenAI-compatible server, the LLM
	// services' replicas' container (Options.LLMImage).
	DefaultLLMImage = "vllm/vllm-openai:v0.11.0"
	// TorchServeConfigPath is where TorchServe's image reads its
	// configuration.
	TorchServeConfigPath = "/home/model-server/config.properties"
)

// Names of the metrics the generated autoscalers read. TorchServe's
// Prometheus metrics (metrics_mode=prometheus, port 8082) give the request
// count and the queue latency; in-flight requests and the request rate per
// pod come through prometheus-adapter rules over them (see the file
// comments), and GPU utilization from NVIDIA's DCGM exporter.
const (
	MetricRequestsTotal       = "ts_inference_requests_total"
	MetricQueueLatencyMicros  = "ts_queue_latency_microseconds"
	MetricRequestsPerSecond   = "ts_inference_requests_per_second"
	MetricRequestsInFlight    = "inference_requests_in_flight"
	MetricGPUUtil             = "DCGM_FI_DEV_GPU_UTIL"
	knativeTargetUtilization  = 70
	annotationKnativeWindow   = "autoscaling.knative.dev/window"
	annotationKnativeUtil     = "autoscaling.knative.dev/target-utilization-percentage"
	annotationKnativePanicWin = "autoscaling.knative.dev/panic-window-percentage"
	annotationKnativePanicThr = "autoscaling.knative.dev/panic-threshold-percentage"
)

// MetricVLLMWaiting is vLLM's gauge of the requests waiting, a queue depth;
// MetricVLLMRunning of those running; MetricVLLMKVCache the share of the KV
// cache in use (0 to 1; vllm:gpu_cache_usage_perc before vLLM 0.10).
const (
	MetricVLLMWaiting = "vllm:num_requests_waiting"
	MetricVLLMRunning = "vllm:num_requests_running"
	MetricVLLMKVCache = "vllm:kv_cache_usage_perc"
)

// gatherServices builds the scenario's services as a run does (the
// workload too: Build has no services-only form), so the files write what
// the run simulated: the resolved replica pod, bounds, autoscaler and
// serving model.
func (g *gen) gatherServices() error {
	svcs := g.s.Spec.Workload.Services
	if len(svcs) == 0 {
		return nil
	}
	b, err := g.s.Build(scenarios.Options{})
	if err != nil {
		return err
	}
	defer b.Close()
	if len(b.Config.Services) != len(svcs) {
		return fmt.Errorf("the scenario built %d services of %d", len(b.Config.Services), len(svcs))
	}
	for i := range svcs {
		v := &svcs[i]
		out := Service{Name: v.Name, Queue: v.Queue, PriorityClass: v.PriorityClass, Config: b.Config.Services[i],
			Batching: v.TorchServe != nil || v.Batching != nil && v.Batching.BatchSize != nil && *v.Batching.BatchSize > 1}
		if out.Queue == "" {
			out.Queue = v.Name
		}
		if out.PriorityClass == "" && v.Priority == nil && g.s.Spec.Policy != nil {
			out.PriorityClass = g.s.Spec.Policy.PriorityClasses[out.Queue]
		}
		if v.TorchServe != nil {
			out.Model = v.TorchServe.Model
		}
		g.svcs = append(g.svcs, out)
	}
	return nil
}

// admission says whether the run had Kueue admission (a policy that is
// not Volcano's).
func (g serviceWriter) admission() bool { return g.pol != nil && len(g.pol.Volcano) == 0 }

// serviceWriter writes one inference service's files (service) and the
// objects they hold: the replica pod's resources, the Deployment or KServe
// InferenceService, its HPA or KEDA ScaledObject. It reads the generator's
// options, pools and policy, and records its warnings there.
type serviceWriter struct{ *gen }

// serviceFiles writes each service: kubernetes/40-services/NAME.yaml (a Deployment, or a
// LeaderWorkerSet for replicas of several pods, and its HPA or KEDA
// ScaledObject, or a KServe InferenceService for the KPA)
// and, when batching was set, kubernetes/40-services/NAME.config.properties.
func (g *gen) serviceFiles() ([]File, error) {
	var files []File
	for i, v := range g.svcs {
		fs, err := serviceWriter{g}.service(v)
		if err != nil {
			return nil, fmt.Errorf("spec.workload.services[%d] (%s): %v", i, v.Name, err)
		}
		files = append(files, fs...)
	}
	return files, nil
}

// replicaResources is a replica's requests (equal to its limits) and the
// pools its GPU resource pins it to (MIG single strategy, time-slicing),
// with words for the comment.
func (g serviceWriter) replicaResources(name string, p cluster.PodSpec) (corev1.ResourceList, []string, string, error) {
	res := corev1.ResourceList{}
	if p.MilliCPU > 0 {
		res[corev1.ResourceCPU] = *resource.NewMilliQuantity(p.MilliCPU, resource.DecimalSI)
	}
	if p.MemoryMiB > 0 {
		res[corev1.ResourceMemory] = *resource.NewQuantity(p.MemoryMiB<<20, resource.BinarySI)
	}
	switch {
	case p.Shared():
		frac := float64(p.GPUMilli) / cluster.MilliGPU
		c := scenarios.ClassSpec{Name: name}
		pools, words, n, err := g.shares(c, frac)
		if err != nil {
			return nil, nil, "", err
		}
		res[ResourceGPU] = *resource.NewQuantity(n, resource.DecimalSI)
		return res, pools, words, nil
	case p.MIG != "":
		n := int64(max(p.GPUs, 1))
		var pools []string
		mixed := len(g.pools) == 0
		for _, q := range g.pools {
			if slices.Contains(q.sharing.MIGLayout, p.MIG) || q.sharing.MIGRelayout {
				pools = append(pools, q.name)
				mixed = mixed || q.sharing.MIGStrategy == cluster.MIGMixed
			}
		}
		if len(pools) == 0 && len(g.pools) > 0 {
			return nil, nil, "", fmt.Errorf("no pool offers MIG profile %s", p.MIG)
		}
		if mixed {
			res[corev1.ResourceName("nvidia.com/mig-"+p.MIG)] = *resource.NewQuantity(n, resource.DecimalSI)
			return res, nil, fmt.Sprintf("Each replica asks for a MIG %s instance (nvidia.com/mig-%s, the mixed strategy).", p.MIG, p.MIG), nil
		}
		res[ResourceGPU] = *resource.NewQuantity(n, resource.DecimalSI)
		return res, pools, fmt.Sprintf("Each replica asks for a MIG %s instance: one nvidia.com/gpu on a pool of the single strategy (%s).", p.MIG, strings.Join(pools, ", ")), nil
	case p.GPUs > 0:
		res[ResourceGPU] = *resource.NewQuantity(int64(p.GPUs), resource.DecimalSI)
	}
	return res, nil, "", nil
}

// draReplica is, under --gpus dra, the ResourceClaimTemplate a service's
// replicas claim their whole GPUs or MIG instance from (NAME-gpus, beside
// the Deployment or InferenceService), taking the GPU resource out of res,
// and the words for the comment; nil where the replicas ask for no GPU or
// keep the device plugin's resource (a time-sliced share; whole GPUs where
// a pool time-slices), with byDRA's warning for the comment.
func (g serviceWriter) draReplica(v Service, ns string, res corev1.ResourceList) (*resourcev1.ResourceClaimTemplate, string, error) {
	gres := gpuResource(res)
	if g.o.GPUs != GPUsDRA || gres == "" {
		return nil, "", nil
	}
	p := v.Config.Pod
	ok, warning := g.byDRA("service", v.Name, "replicas", p.Shared(), p.MIG, gres)
	if !ok {
		return nil, warning, nil
	}
	n := res[gres]
	tmpl, words, err := g.gpuClaim(v.Name, ns, DirServices+v.Name+".yaml", p.MIG, gres, n.Value())
	if err != nil {
		return nil, "", err
	}
	delete(res, gres)
	return tmpl, "Each replica's GPUs come by DRA: its claim from " + words, nil
}

// placement is a replica's nodeSelector, affinity (the scenario's terms,
// each also pinned to pools when the GPU resource needs it) and
// tolerations.
func placement(c *cluster.Constraints, pools []string) (map[string]string, *corev1.Affinity, []corev1.Toleration) {
	var sel map[string]string
	var terms []corev1.NodeSelectorTerm
	var tols []corev1.Toleration
	if c != nil {
		for k, v := range c.NodeSelector {
			if sel == nil {
				sel = map[string]string{}
			}
			sel[capacityKey(k)] = v
		}
		for _, t := range c.Affinity {
			var term corev1.NodeSelectorTerm
			for _, r := range t {
				term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{
					Key: capacityKey(r.Key), Operator: corev1.NodeSelectorOperator(r.Op), Values: r.Values,
				})
			}
			terms = append(terms, term)
		}
		for _, t := range c.Tolerations {
			tols = append(tols, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
	}
	if len(pools) > 0 {
		req := corev1.NodeSelectorRequirement{Key: cluster.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: pools}
		if len(terms) == 0 {
			terms = []corev1.NodeSelectorTerm{{}}
		}
		for k := range terms {
			terms[k].MatchExpressions = append(terms[k].MatchExpressions, req)
		}
	}
	var aff *corev1.Affinity
	if len(terms) > 0 {
		aff = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	return sel, aff, tols
}

// servicePriorityClass is the PriorityClass a service's replicas name.
func (g *gen) servicePriorityClass(v Service) string {
	if v.PriorityClass != "" {
		return v.PriorityClass
	}
	if v.Config.Priority != 0 || g.hasPriorities() {
		return priorityClassName(v.Config.Priority)
	}
	return ""
}

// servicesWithPriority are the services whose replicas name a
// PriorityClass gpuplan writes.
func (g *gen) servicesWithPriority() []Service {
	var out []Service
	for _, v := range g.svcs {
		if v.PriorityClass == "" && g.servicePriorityClass(v) != "" {
			out = append(out, v)
		}
	}
	return out
}

// seconds writes ms as whole seconds, rounding up, and says whether that
// changed it.
func seconds(ms int64) (int32, bool) {
	s := (ms + 999) / 1000
	return int32(min(s, math.MaxInt32)), s*1000 != ms
}

func (g serviceWriter) service(v Service) ([]File, error) {
	if errs := validation.IsDNS1123Label(v.Name); len(errs) > 0 {
		return nil, fmt.Errorf("name %q is not a valid Kubernetes name: %s", v.Name, strings.Join(errs, "; "))
	}
	cfg := v.Config
	if l := cfg.Spec.LLM; l != nil && l.Disagg != nil && cfg.PodsPerReplica < 2 {
		return nil, fmt.Errorf("service %s: a disaggregated LLM service in one pod (llm.disaggregation.placement pod) is not written out: llm-d and KServe deploy its engines as pods of their own (placement pods, written as an LLMInferenceService with spec.prefill)", v.Name)
	}
	// The service's queue is its namespace (the scenario's queue, as the
	// run resolved it; by default the service's name), as a Deployment
	// read into a scenario gives its namespace as the queue.
	ns, lq := cfg.Queue, ""
	if ns == "" {
		ns = v.Queue
	}
	if errs := validation.IsDNS1123Label(ns); ns == "" || len(errs) > 0 {
		if ns != "" {
			g.warn("service %s: its queue %q is no valid namespace name; its objects go to %s", v.Name, ns, g.o.Namespace)
		}
		ns = g.o.Namespace
	}
	if g.admission() {
		// The run resolved the service's LocalQueue (Config.Queue); a
		// service built by hand names its queue only.
		lq = cfg.Queue
		if lq == "" {
			var err error
			if lq, ns, err = g.localQueue(scenarios.ClassSpec{Name: v.Name, Queue: v.Queue}); err != nil {
				return nil, err
			}
		} else {
			if ns = g.pol.LocalQueueNamespaces[lq]; ns == "" {
				ns = "default"
			}
			lq = scenarios.LocalQueueName(lq)
		}
	}
	g.jobNamespaces = append(g.jobNamespaces, ns)
	res, pools, words, err := g.replicaResources(v.Name, cfg.Pod)
	if err != nil {
		return nil, err
	}
	claim, claimWords, err := g.draReplica(v, ns, res)
	if err != nil {
		return nil, err
	}
	if claim != nil {
		words = claimWords
	}
	sel, aff, tols := placement(cfg.Constraints, pools)
	spread, aff := podTerms(cfg.Constraints, aff)
	labels := map[string]string{"app.kubernetes.io/name": v.Name, "app.kubernetes.io/managed-by": "gpuplan", "app.kubernetes.io/component": "inference"}
	if lq != "" {
		labels[LabelQueueName] = lq
	}
	ann := map[string]string{generatedBy: g.s.Metadata.Name}
	b := cfg.Spec.Batch
	comment := []string{fmt.Sprintf("Inference service %s: replicas %d to %d (%d at the start); a replica serves after its image pull (%s) and model load (%s) once bound.",
		v.Name, cfg.MinReplicas, cfg.MaxReplicas, cfg.InitialReplicas, msDuration(int64(cfg.ImagePull)), msDuration(int64(cfg.ModelLoad)))}
	if cfg.Spec.LLM == nil {
		comment = append(comment, fmt.Sprintf("Simulation only, with no Kubernetes object: the request load, the service time of a batch (%.4g ms + %.4g ms per request) and the SLO.", b.BaseMs, b.PerItemMs))
	} else {
		comment = append(comment, "Simulation only, with no Kubernetes object: the request load and lengths, the engine's step model (roofline or fitted coefficients, step and API overheads) and the TTFT/TPOT targets.")
	}
	if words != "" {
		comment = append(comment, words)
	}
	if claim == nil && claimWords != "" {
		comment = append(comment, claimWords)
	}
	var files []File
	var props []byte
	var objects []any
	var podClaimList []corev1.PodResourceClaim
	var ctrClaims []corev1.ResourceClaim
	if claim != nil {
		objects = append(objects, claim)
		podClaimList, ctrClaims = podClaims(claim)
	}
	if v.Batching {
		var notes []string
		props, notes = torchServeConfig(v)
		comment = append(comment, notes...)
		files = append(files, File{Path: DirServices + v.Name + ".config.properties", Raw: props,
			Comment: g.header(fmt.Sprintf("TorchServe configuration of service %s: its batching (batchSize %d, maxBatchDelay %.0f ms) and queue as the run modelled them.", v.Name, b.Size, b.MaxDelayMs))})
	}
	pc := g.servicePriorityClass(v)
	if l := cfg.Spec.LLM; l != nil && l.Disagg != nil {
		if claim != nil {
			return nil, fmt.Errorf("service %s: a disaggregated LLM service on DRA claims is not written out", v.Name)
		}
		decode := cfg.Pod
		if len(cfg.Groups) > 0 {
			decode = cfg.Groups[0].Pod
		}
		dres, _, _, err := g.replicaResources(v.Name, decode)
		if err != nil {
			return nil, err
		}
		x, notes, err := g.llmInferenceService(v, ns, labels, ann, corev1.PodSpec{NodeSelector: sel, Affinity: aff, Tolerations: tols,
			PriorityClassName: pc, TopologySpreadConstraints: spread}, res, dres)
		if err != nil {
			return nil, err
		}
		comment = append(comment, notes...)
		if lq != "" {
			comment = append(comment, g.warn("service %s: the LLMInferenceService's Deployments are KServe's; Kueue admits their pods through its pod integration (enable \"pod\" in its integrations) and the queue label is on the LLMInferenceService", v.Name))
		}
		objects = append(objects, x)
		return append(files, File{Path: DirServices + v.Name + ".yaml", Comment: g.header(comment...), Objects: objects}), nil
	}
	if kpa, ok := cfg.Scaler.(services.KPA); ok && kpa.K != nil && cfg.PodsPerReplica > 1 {
		return nil, fmt.Errorf("service %s: replicas of %d pods under Knative's KPA are not written out: a KServe InferenceService's predictor is one pod a replica (give an HPA or KEDA, written with a LeaderWorkerSet)", v.Name, cfg.PodsPerReplica)
	}
	if kpa, ok := cfg.Scaler.(services.KPA); ok && kpa.K != nil {
		isvc, notes := g.inferenceService(v, ns, labels, ann, res, sel, aff, tols, pc, kpa.K.Spec())
		isvc.Spec.Predictor.TopologySpreadConstraints = spread
		if l := cfg.Pod.Labels; l != nil && len(l.Labels) > 0 {
			isvc.Spec.Predictor.Labels = maps.Clone(l.Labels)
		}
		isvc.Spec.Predictor.ResourceClaims, isvc.Spec.Predictor.Model.Resources.Claims = podClaimList, ctrClaims
		comment = append(comment, notes...)
		if cfg.Spec.LLM != nil {
			comment = append(comment, g.warn("service %s: an LLM service under Knative's KPA is written as an InferenceService with TorchServe's predictor; give its predictor vLLM's container (as a Deployment's is written) by hand", v.Name))
		}
		if lq != "" {
			comment = append(comment, g.warn("service %s: an InferenceService's pods are Knative's; Kueue admits them through its pod integration (enable \"pod\" in its integrations) and the queue label is on the InferenceService", v.Name))
		}
		objects = append(objects, isvc)
		return append(files, File{Path: DirServices + v.Name + ".yaml", Comment: g.header(comment...), Objects: objects}), nil
	}
	replicas := int32(cfg.InitialReplicas)
	podLabels := map[string]string{"app.kubernetes.io/name": v.Name}
	if lq != "" {
		podLabels[LabelQueueName] = lq
	}
	podLabels = withPodLabels(podLabels, cfg.Pod.Labels)
	container := corev1.Container{
		Name:      "torchserve",
		Image:     g.o.ServingImage,
		Resources: corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()},
		Ports: []corev1.ContainerPort{{Name: "inference", ContainerPort: 8080}, {Name: "management", ContainerPort: 8081},
			{Name: "metrics", ContainerPort: 8082}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ping", Port: intOrName("inference")}}},
	}
	metricsPort := "8082"
	if l := cfg.Spec.LLM; l != nil {
		var notes []string
		container, notes = g.vllmContainer(l.Config, res)
		comment = append(comment, notes...)
		metricsPort = "8000"
	}
	container.Resources.Claims = ctrClaims
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": metricsPort}},
		Spec: corev1.PodSpec{NodeSelector: sel, Affinity: aff, Tolerations: tols, PriorityClassName: pc,
			TopologySpreadConstraints: spread, Containers: []corev1.Container{container}, ResourceClaims: podClaimList},
	}
	if props != nil {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: v.Name + "-torchserve", Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": v.Name}},
			Data:       map[string]string{"config.properties": string(props)}}
		objects = append(objects, cm)
		pod.Spec.Volumes = []corev1.Volume{{Name: "torchserve-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "torchserve-config", MountPath: TorchServeConfigPath, SubPath: "config.properties"}}
		comment = append(comment, fmt.Sprintf("The ConfigMap %s holds the config.properties beside this file, mounted at %s.", cm.Name, TorchServeConfigPath))
	}
	target := scaleTarget{APIVersion: "apps/v1", Kind: "Deployment"}
	if l := cfg.Spec.LLM; l != nil && cfg.PodsPerReplica > 1 {
		x, notes := leaderWorkerSet(v.Name, ns, labels, ann, replicas, cfg.PodsPerReplica, pod, l.Config)
		objects = append(objects, x)
		comment = append(comment, notes...)
		target = scaleTarget{APIVersion: LWSAPIVersion, Kind: "LeaderWorkerSet"}
	} else {
		objects = append(objects, &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: v.Name, Namespace: ns, Labels: labels, Annotations: ann},
			Spec: appsv1.DeploymentSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": v.Name}},
				Template: pod,
			},
		})
	}
	if l := cfg.Spec.LLM; l != nil && l.Router != nil && *l.Router == serving.PrefixAware {
		pool, note := inferencePoolFor(v.Name, ns)
		objects = append(objects, pool)
		comment = append(comment, note)
	}
	if lq != "" && target.Kind == "LeaderWorkerSet" {
		comment = append(comment, fmt.Sprintf("Kueue admits each group in LocalQueue %s as one Workload (its leaderworkerset.x-k8s.io/leaderworkerset integration).", lq))
	} else if lq != "" {
		comment = append(comment, fmt.Sprintf("Kueue admits the replicas in LocalQueue %s (its deployment integration).", lq))
	}
	switch s := cfg.Scaler.(type) {
	case services.HPA:
		hpa, notes := g.hpa(v, ns, s, target)
		comment = append(comment, notes...)
		objects = append(objects, hpa)
	case services.KEDA:
		so, notes := g.scaledObject(v, ns, s, target)
		comment = append(comment, notes...)
		objects = append(objects, so)
	default:
		comment = append(comment, fmt.Sprintf("No autoscaler: %d replicas.", replicas))
	}
	return append(files, File{Path: DirServices + v.Name + ".yaml", Comment: g.header(comment...), Objects: objects}), nil
}

// torchServeConfig is the model's config.properties: batching, the
// queue limit and the timeout as the run modelled them.
func torchServeConfig(v Service) ([]byte, []string) {
	spec := v.Config.Spec
	b := spec.Batch
	model := v.Model
	if model == "" {
		model = v.Name
	}
	var notes []string
	delay := int(math.Round(b.MaxDelayMs))
	if float64(delay) != b.MaxDelayMs {
		notes = append(notes, fmt.Sprintf("maxBatchDelay is whole milliseconds in TorchServe: %g ms written as %d.", b.MaxDelayMs, delay))
	}
	entry := map[string]any{"defaultVersion": true, "marName": model + ".mar", "minWorkers": 1, "maxWorkers": 1,
		"batchSize": b.Size, "maxBatchDelay": delay}
	var lines []string
	lines = append(lines, "inference_address=http://0.0.0.0:8080", "management_address=http://0.0.0.0:8081",
		"metrics_address=http://0.0.0.0:8082", "metrics_mode=prometheus", "model_store=/home/model-server/model-store", "load_models=all")
	if spec.QueueLimit > 0 {
		lines = append(lines, fmt.Sprintf("job_queue_size=%d", spec.QueueLimit))
	} else {
		notes = append(notes, "The run's queue was unbounded; TorchServe's job_queue_size keeps its default, 100 requests.")
	}
	if spec.TimeoutMs > 0 {
		s, changed := seconds(int64(math.Ceil(spec.TimeoutMs)))
		lines = append(lines, fmt.Sprintf("default_response_timeout=%d", s))
		entry["responseTimeout"] = s
		if changed {
			notes = append(notes, fmt.Sprintf("TorchServe's response timeout is whole seconds: the run's %g ms written as %d s.", spec.TimeoutMs, s))
		}
	}
	js, _ := json.Marshal(map[string]any{model: map[string]any{"1.0": entry}})
	lines = append(lines, "models="+string(js))
	return []byte(strings.Join(lines, "\n") + "\n"), notes
}

// rulesOf writes one direction's behavior in full.
func rulesOf(r autoscale.Rules) *autoscalingv2.HPAScalingRules {
	out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(r.StabilizationMs / 1000))}
	sel := autoscalingv2.MaxChangePolicySelect
	switch r.Select {
	case autoscale.SelectMin:
		sel = autoscalingv2.MinChangePolicySelect
	case autoscale.SelectDisabled:
		sel = autoscalingv2.DisabledPolicySelect
	}
	out.SelectPolicy = &sel
	for _, p := range r.Policies {
		t := autoscalingv2.PodsScalingPolicy
		if p.Type == autoscale.Percent {
			t = autoscalingv2.PercentScalingPolicy
		}
		out.Policies = append(out.Policies, autoscalingv2.HPAScalingPolicy{Type: t, Value: int32(p.Value), PeriodSeconds: int32(p.PeriodMs / 1000)})
	}
	if r.HasTolerance {
		out.Tolerance = resource.NewMilliQuantity(int64(math.Round(r.Tolerance*1000)), resource.DecimalSI)
	}
	return out
}

func behaviorOf(up, down autoscale.Rules) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rulesOf(up), ScaleDown: rulesOf(down)}
}

// quantityOf writes a metric value to a thousandth.
func quantityOf(v float64) *resource.Quantity {
	return resource.NewMilliQuantity(int64(math.Round(v*1000)), resource.DecimalSI)
}

// metricOf is the HPA metric a service metric is read through: the name,
// the factor from the simulator's units to the metric's, and words.
func metricOf(k services.MetricKind, gpu bool) (name string, factor float64, words string) {
	switch k {
	case services.Concurrency:
		return MetricRequestsInFlight, 1, fmt.Sprintf("requests in flight per replica (%s: a prometheus-adapter rule over TorchServe's queue and the batch being served)", MetricRequestsInFlight)
	case services.QueueDepth:
		return MetricVLLMWaiting, 1, fmt.Sprintf("requests waiting per replica (vLLM's %s gauge)", MetricVLLMWaiting)
	case services.Running:
		return MetricVLLMRunning, 1, fmt.Sprintf("requests running per replica (vLLM's %s gauge)", MetricVLLMRunning)
	case services.KVCacheUsage:
		return MetricVLLMKVCache, 1, fmt.Sprintf("the share of the KV cache in use, 0 to 1 (vLLM's %s gauge)", MetricVLLMKVCache)
	case services.QueueLatencyMs:
		return MetricQueueLatencyMicros, 1000, fmt.Sprintf("the mean queue latency (TorchServe's %s over %s, in microseconds)", MetricQueueLatencyMicros, MetricRequestsTotal)
	case services.LatencyQuantileMs:
		// The quantile and window are the query's (promQuery, latencyQuery).
		return "", 0.001, "a latency quantile over a window (seconds)"
	case services.Utilization:
		if gpu {
			return MetricGPUUtil, 1, fmt.Sprintf("GPU utilization in percent (the DCGM exporter's %s)", MetricGPUUtil)
		}
		return "cpu", 1, "CPU utilization in percent"
	}
	return MetricRequestsPerSecond, 1, fmt.Sprintf("requests per second per replica (%s: a prometheus-adapter rule, rate(%s[1m]))", MetricRequestsPerSecond, MetricRequestsTotal)
}

// scaleTarget is the object a service's autoscaler scales: its
// Deployment, or its LeaderWorkerSet (whose scale subresource counts
// groups, and whose HPA pod selector is the leaders', where vLLM's
// metrics are).
type scaleTarget struct{ APIVersion, Kind string }

func (g serviceWriter) hpa(v Service, ns string, s services.HPA, to scaleTarget) (*autoscalingv2.HorizontalPodAutoscaler, []string) {
	sp := s.H.Spec()
	gpu := v.Config.Pod.MilliGPUs() > 0
	name, factor, words := metricOf(s.Metric, gpu)
	var lat []string
	if s.Metric == services.LatencyQuantileMs {
		// An HPA reads a latency quantile through a prometheus-adapter
		// rule whose query this is; the metric is named after it.
		q := s.Quantile
		name = fmt.Sprintf("%s_p%s", strings.NewReplacer("vllm:", "vllm_", "_seconds", "").Replace(q.Of.String()), strings.TrimPrefix(number(q.Q*100), "0."))
		words = fmt.Sprintf("%s (%s: a prometheus-adapter rule for %s)", latencyWords(q), name, latencyQuery(q, ns, v.Name))
		lat = append(lat, g.warn("service %s: the HorizontalPodAutoscaler reads %s through a prometheus-adapter external rule named %s, which the cluster must define with the query %s; gpuplan reads such a quantile back from a KEDA ScaledObject's query, not from an HPA", v.Name, latencyWords(q), name, latencyQuery(q, ns, v.Name)))
	}
	target := sp.Target * factor
	var m autoscalingv2.MetricSpec
	switch {
	case name == "cpu":
		m = autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(math.Round(target)))}}}
	case sp.Type == autoscale.Value:
		m = autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: name, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"namespace": ns, "service": v.Name}}},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantityOf(target)}}}
	default:
		m = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: name},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantityOf(target)}}}
	}
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: v.Name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": v.Name}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: to.APIVersion, Kind: to.Kind, Name: v.Name},
			MinReplicas:    ptr(int32(sp.MinReplicas)),
			MaxReplicas:    int32(sp.MaxReplicas),
			Metrics:        []autoscalingv2.MetricSpec{m},
		},
	}
	if !sp.NoBehavior {
		h.Spec.Behavior = behaviorOf(sp.ScaleUp, sp.ScaleDown)
	}
	notes := append([]string{fmt.Sprintf("The HorizontalPodAutoscaler scales it on %s, target %.4g.", words, target)}, lat...)
	def := autoscale.NewHPASpec(1, 1)
	if sp.Tolerance != def.Tolerance || sp.SyncMs != def.SyncMs {
		notes = append(notes, g.warn("service %s: the run used an HPA tolerance of %g and a sync period of %s, which are kube-controller-manager's flags (--horizontal-pod-autoscaler-tolerance, --horizontal-pod-autoscaler-sync-period), not the object's", v.Name, sp.Tolerance, msDuration(sp.SyncMs)))
	}
	return h, notes
}

// promQuery is the Prometheus query of a KEDA trigger on a service
// metric: the service's total (the trigger's AverageValue divides it by
// the replicas) or, for latency and utilization, its mean.
func promQuery(k services.MetricKind, ns, name string) string {
	sel := fmt.Sprintf(`{namespace=%q,pod=~%q}`, ns, name+"-.*")
	switch k {
	case services.Concurrency:
		return fmt.Sprintf("sum(%s%s)", MetricRequestsInFlight, sel)
	case services.QueueDepth:
		return fmt.Sprintf("sum(%s%s)", MetricVLLMWaiting, sel)
	case services.Running:
		return fmt.Sprintf("sum(%s%s)", MetricVLLMRunning, sel)
	case services.KVCacheUsage:
		return fmt.Sprintf("avg(%s%s)", MetricVLLMKVCache, sel)
	case services.QueueLatencyMs:
		return fmt.Sprintf("sum(rate(%s%s[1m])) / sum(rate(%s%s[1m]))", MetricQueueLatencyMicros, sel, MetricRequestsTotal, sel)
	case services.Utilization:
		return fmt.Sprintf(`avg(%s{exported_namespace=%q,exported_pod=~%q})`, MetricGPUUtil, ns, name+"-.*")
	}
	return fmt.Sprintf("sum(rate(%s%s[1m]))", MetricRequestsTotal, sel)
}

// latencyQuery is the Prometheus query of a latency quantile over the
// service's replicas: histogram_quantile over the sum by le of its vLLM
// histogram's buckets' rates over the window.
func latencyQuery(q services.LatencyQuantile, ns, name string) string {
	return fmt.Sprintf("histogram_quantile(%s, sum(rate(%s_bucket{namespace=%q,pod=~%q}[%s])) by (le))",
		number(q.Q), q.Of, ns, name+"-.*", promWindow(q.WindowMs))
}

// promWindow writes a window in ms as a Prometheus duration (2m, 90s,
// 1m30s, 500ms).
func promWindow(ms int64) string {
	var b strings.Builder
	for _, u := range []struct {
		ms   int64
		unit string
	}{{3_600_000, "h"}, {60_000, "m"}, {1000, "s"}, {1, "ms"}} {
		if n := ms / u.ms; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.unit)
			ms -= n * u.ms
		}
	}
	return b.String()
}

// latencyWords says what a latency quantile is.
func latencyWords(q services.LatencyQuantile) string {
	return fmt.Sprintf("the %s quantile of vLLM's %s over %s, in seconds (as Prometheus interpolates it in vLLM's buckets)", number(q.Q), q.Of, promWindow(q.WindowMs))
}

func number(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func (g serviceWriter) scaledObject(v Service, ns string, s services.KEDA, target scaleTarget) (*ScaledObject, []string) {
	sp := s.K.Spec()
	_, factor, words := metricOf(s.Metric, true)
	query := promQuery(s.Metric, ns, v.Name)
	switch s.Metric {
	case services.Utilization:
		words = fmt.Sprintf("GPU utilization in percent (the DCGM exporter's %s)", MetricGPUUtil)
	case services.LatencyQuantileMs:
		words, query = latencyWords(s.Quantile), latencyQuery(s.Quantile, ns, v.Name)
	}
	poll, pollChanged := seconds(sp.PollingMs)
	cool, coolChanged := seconds(sp.CooldownMs)
	md := map[string]string{
		"serverAddress": fmt.Sprintf("http://%s-prometheus.monitoring.svc:9090", g.o.PrometheusRelease),
		"query":         query,
		"threshold":     number(sp.Threshold * factor),
	}
	if sp.ActivationThreshold > 0 {
		md["activationThreshold"] = number(sp.ActivationThreshold * factor)
	}
	mt := "AverageValue"
	if sp.Type == autoscale.Value {
		mt = "Value"
	}
	so := &ScaledObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: KEDAAPIVersion, Kind: "ScaledObject"},
		ObjectMeta: metav1.ObjectMeta{Name: v.Name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": v.Name}},
		Spec: ScaledObjectSpec{
			ScaleTargetRef:  ScaleTarget{APIVersion: target.APIVersion, Kind: target.Kind, Name: v.Name},
			PollingInterval: ptr(poll),
			CooldownPeriod:  ptr(cool),
			MinReplicaCount: ptr(int32(sp.MinReplicaCount)),
			MaxReplicaCount: ptr(int32(sp.MaxReplicaCount)),
			Advanced:        &AdvancedConfig{HorizontalPodAutoscalerConfig: &HorizontalPodAutoscalerConfig{Behavior: behaviorOf(sp.ScaleUp, sp.ScaleDown)}},
			Triggers:        []ScaleTrigger{{Type: "prometheus", Metadata: md, MetricType: mt}},
		},
	}
	notes := []string{fmt.Sprintf("The KEDA ScaledObject scales it on %s, threshold %s (%s), polling every %d s, cooldown %d s.", words, md["threshold"], mt, poll, cool)}
	if sp.MinReplicaCount == 0 {
		notes = append(notes, fmt.Sprintf("minReplicaCount 0: KEDA scales the "+target.Kind+" to zero once the trigger has been inactive (at most %s) for the cooldown, and back to one when it is active.", md["activationThreshold"]))
	}
	if pollChanged || coolChanged {
		notes = append(notes, g.warn("service %s: KEDA's pollingInterval and cooldownPeriod are whole seconds: the run's %s and %s are written rounded up", v.Name, msDuration(sp.PollingMs), msDuration(sp.CooldownMs)))
	}
	return so, notes
}

// inferenceService writes a KPA-scaled service as KServe's Serverless
// InferenceService: the KPA's concurrency target per replica is
// scaleTarget x the target utilization (Knative's 70% unless that does
// not give it).
func (g serviceWriter) inferenceService(v Service, ns string, labels, ann map[string]string, res corev1.ResourceList, sel map[string]string, aff *corev1.Affinity,
	tols []corev1.Toleration, pc string, sp autoscale.KPASpec) (*InferenceService, []string) {
	cfg := v.Config
	target := sp.Target / knativeTargetUtilization * 100
	scaleTarget := int32(math.Round(target))
	if math.Abs(target-float64(scaleTarget)) > 1e-9 || scaleTarget < 1 {
		scaleTarget = int32(math.Ceil(sp.Target))
		ann[annotationKnativeUtil] = number(sp.Target / float64(scaleTarget) * 100)
	}
	def := autoscale.NewKPASpec(1)
	if sp.StableWindowMs != def.StableWindowMs {
		ann[annotationKnativeWindow] = msDuration(sp.StableWindowMs).String()
	}
	if sp.PanicWindowPct != def.PanicWindowPct {
		ann[annotationKnativePanicWin] = number(sp.PanicWindowPct)
	}
	if sp.PanicThresholdPct != def.PanicThresholdPct {
		ann[annotationKnativePanicThr] = number(sp.PanicThresholdPct)
	}
	pred := PredictorSpec{
		MinReplicas: ptr(int32(cfg.MinReplicas)), MaxReplicas: int32(cfg.MaxReplicas),
		ScaleTarget: ptr(scaleTarget), ScaleMetric: "concurrency",
		NodeSelector: sel, Affinity: aff, Tolerations: tols, PriorityClassName: pc,
		Model: &ModelSpec{ModelFormat: ModelFormat{Name: "pytorch"}, StorageURI: "s3://CHANGE-ME/models/" + v.Name,
			Resources: corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()}},
	}
	if q := cfg.Spec.QueueLimit; q > 0 {
		pred.ContainerConcurrency = ptr(int64(q))
	}
	isvc := &InferenceService{
		TypeMeta:   metav1.TypeMeta{APIVersion: KServeAPIVersion, Kind: "InferenceService"},
		ObjectMeta: metav1.ObjectMeta{Name: v.Name, Namespace: ns, Labels: labels, Annotations: ann},
		Spec:       InferenceServiceSpec{Predictor: pred},
	}
	notes := []string{fmt.Sprintf("A KServe InferenceService (Serverless): Knative's KPA scales the predictor on concurrency, %.4g requests per replica (scaleTarget %d at %s%% target utilization), from %d to %d replicas.",
		sp.Target, scaleTarget, utilText(ann), cfg.MinReplicas, cfg.MaxReplicas),
		"storageUri is a placeholder: point it at the model's storage (a TorchServe model store: config/config.properties and model-store/).",
	}
	if pred.ContainerConcurrency != nil {
		notes = append(notes, fmt.Sprintf("containerConcurrency %d is the run's queue limit per replica; Knative's queue-proxy holds requests beyond it where the run dropped them.", *pred.ContainerConcurrency))
	}
	var cluster []string
	if sp.MaxScaleUpRate != def.MaxScaleUpRate {
		cluster = append(cluster, "max-scale-up-rate "+number(sp.MaxScaleUpRate))
	}
	if sp.MaxScaleDownRate != def.MaxScaleDownRate {
		cluster = append(cluster, "max-scale-down-rate "+number(sp.MaxScaleDownRate))
	}
	if sp.ScaleToZeroGraceMs != def.ScaleToZeroGraceMs {
		cluster = append(cluster, "scale-to-zero-grace-period "+msDuration(sp.ScaleToZeroGraceMs).String())
	}
	if sp.TickMs != def.TickMs {
		cluster = append(cluster, "tick-interval "+msDuration(sp.TickMs).String())
	}
	if len(cluster) > 0 {
		notes = append(notes, g.warn("service %s: the run used Knative autoscaler settings that are cluster-wide, in the knative-serving namespace's config-autoscaler ConfigMap, not the InferenceService's: %s", v.Name, strings.Join(cluster, ", ")))
	}
	if cfg.ImagePull+cfg.ModelLoad > 0 {
		notes = append(notes, fmt.Sprintf("A cold start from zero waits for a node, the image pull and the model load (%s in the run) while the activator holds the requests.", time.Duration(cfg.ImagePull+cfg.ModelLoad)*time.Millisecond))
	}
	return isvc, notes
}

func intOrName(name string) intstr.IntOrString { return intstr.FromString(name) }

func utilText(ann map[string]string) string {
	if u, ok := ann[annotationKnativeUtil]; ok {
		return u
	}
	return strconv.Itoa(knativeTargetUtilization)
}

// vllmModels are the Hugging Face ids an LLM service's catalog model is
// written as (the instruct models; the base models have the same shape).
var vllmModels = map[string]string{"llama-3-8b": "meta-llama/Llama-3.1-8B-Instruct", "llama-3-70b": "meta-llama/Llama-3.1-70B-Instruct"}

// vllmContainer is an LLM service's replica: vLLM's OpenAI-compatible
// server (the image's entry point) with the engine's limits as the run
// modelled them, and the notes for the file's comment.
func (g serviceWriter) vllmContainer(c serving.LLMConfig, res corev1.ResourceList) (corev1.Container, []string) {
	model := vllmModels[c.Engine.Model.Name]
	args := []string{"--model", model,
		"--tensor-parallel-size", strconv.Itoa(max(c.Engine.TP, 1))}
	if c.Engine.PP > 1 {
		args = append(args, "--pipeline-parallel-size", strconv.Itoa(c.Engine.PP))
	}
	args = append(args,
		"--max-num-seqs", strconv.Itoa(c.MaxNumSeqs),
		"--max-num-batched-tokens", strconv.Itoa(c.MaxNumBatchedTokens),
		"--max-model-len", strconv.Itoa(c.MaxModelLen),
		"--gpu-memory-utilization", strconv.FormatFloat(c.GPUMemoryUtilization, 'g', -1, 64),
		"--block-size", strconv.Itoa(c.BlockSize),
		"--port", "8000")
	notes := []string{fmt.Sprintf("vLLM serves %s (%s's shape) with the engine limits the run modelled; the image is %s.", model, c.Engine.Model.Name, g.o.LLMImage)}
	if c.PrefixHitTokens == 0 {
		notes = append(notes, "vLLM's automatic prefix caching (on by default) was not simulated: the run prefills every prompt whole, conservative where prompts share a prefix (llm.prefix says what they share).")
	}
	return corev1.Container{
		Name:      "vllm",
		Image:     g.o.LLMImage,
		Args:      args,
		Resources: corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()},
		Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}},
		// vLLM answers /health once the model is loaded.
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intOrName("http")}}},
	}, notes
}

// inferencePool is a Gateway API Inference Extension InferencePool
// (inference.networking.k8s.io/v1), the fields gpuplan writes.
type inferencePool struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       inferencePoolSpec `json:"spec"`
}

type inferencePoolSpec struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	TargetPorts       []inferencePoolPort `json:"targetPorts"`
	EndpointPickerRef struct {
		Name        string `json:"name"`
		PortNumber  int32  `json:"portNumber"`
		FailureMode string `json:"failureMode"`
	} `json:"endpointPickerRef"`
}

type inferencePoolPort struct {
	Number int32 `json:"number"`
}

// inferencePoolFor is the InferencePool of an LLM service behind the
// prefix-aware router: the llm-d endpoint picker's default scoring over
// the service's vLLM pods (their label app.kubernetes.io/name and port
// 8000), the picker a Service NAME-epp on its default port.
func inferencePoolFor(name, ns string) (*inferencePool, string) {
	p := &inferencePool{APIVersion: "inference.networking.k8s.io/v1", Kind: "InferencePool",
		Metadata: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": name}}}
	p.Spec.Selector.MatchLabels = map[string]string{"app.kubernetes.io/name": name}
	p.Spec.TargetPorts = []inferencePoolPort{{Number: 8000}}
	p.Spec.EndpointPickerRef.Name = name + "-epp"
	p.Spec.EndpointPickerRef.PortNumber = kubesvc.DefaultEndpointPickerPort
	p.Spec.EndpointPickerRef.FailureMode = "FailClose"
	return p, fmt.Sprintf("The InferencePool %s routes to the replicas through an endpoint picker, the Service %s-epp (its Deployment is not written: install llm-d's or the inference extension's chart), whose default scoring is the prefix-aware router the run modelled.", name, name)
}
