package services

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

//go:embed crds/inferenceservice_v1beta1.json.gz
var isvcSchema []byte

// isvcCRD compiles KServe's schema once (it is 1.4 MB); it never changes
// after.
var isvcCRD = sync.OnceValues(func() (*strict.CRD, error) {
	return strict.CompileCRD("inferenceservice_v1beta1.json", isvcSchema)
})

// Pod is what a replica asks of a node.
type Pod struct {
	MilliCPU, MemoryMiB int64
	// GPUs whole devices, or one MIG slice of profile MIG.
	GPUs              int64
	MIG               string
	NodeSelector      map[string]string
	Tolerations       []corev1.Toleration
	PriorityClassName string
	// Labels are the replica pods' labels; Spread their topology spread
	// constraints (podspread).
	Labels      map[string]string
	Spread      []cluster.SpreadConstraint
	PodAffinity []cluster.PodAffinityTerm
	// NodeAffinity is the required node affinity's terms (any one holds).
	NodeAffinity []cluster.NodeSelectorTerm
}

// Workload is a Deployment or an InferenceService's predictor: the
// replicas that serve.
type Workload struct {
	File            string
	Line            int
	Kind            string // Deployment, ReplicaSet, StatefulSet, LeaderWorkerSet, InferenceService or LLMInferenceService
	Name, Namespace string
	Pod             Pod
	// Replicas is a Deployment's, ReplicaSet's or StatefulSet's
	// spec.replicas (default 1).
	Replicas int
	// Size is the pods of one replica: a LeaderWorkerSet's
	// leaderWorkerTemplate.size, an LLMInferenceService's leader and
	// workers (0 or 1: one pod).
	Size int
	// For an InferenceService: its deployment mode (Serverless, the
	// default, or RawDeployment), replica bounds, scaling metric and
	// target, the model's format and where it is stored, and the
	// autoscaler KServe sets up for it: Knative's KPA for Serverless on
	// concurrency or rps, an HPA otherwise.
	Mode                     string
	MinReplicas, MaxReplicas int
	ScaleMetric              string
	ContainerConcurrency     int
	Model, StorageURI        string
	KPA                      *autoscale.KPASpec
	HPA                      *autoscale.HPASpec
	// VLLM is the engine arguments of a replica's vLLM server (vllm.go),
	// nil when no container runs one.
	VLLM *VLLM
	// Disagg is an LLMInferenceService's prefill/decode disaggregation
	// (spec.prefill; Replicas then 1), nil when none.
	Disagg *Disagg
	// InferencePool is the InferencePool of the service's files that
	// selects the replicas (inferencepool.go; set by the scenario, which
	// reads every file a service lists), nil when none does.
	InferencePool *InferencePool
	// Notes say what the manifest asks that gpuplan took as something
	// else (gpufields).
	Notes []string
}

// isvc is the part of serving.kserve.io/v1beta1 InferenceService gpuplan
// reads, decoded after the whole document passed the CRD's schema.
type isvc struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Predictor struct {
			MinReplicas          *int32              `json:"minReplicas"`
			MaxReplicas          int32               `json:"maxReplicas"`
			ScaleTarget          *int32              `json:"scaleTarget"`
			ScaleMetric          string              `json:"scaleMetric"`
			ContainerConcurrency int64               `json:"containerConcurrency"`
			NodeSelector         map[string]string   `json:"nodeSelector"`
			Tolerations          []corev1.Toleration `json:"tolerations"`
			Labels               map[string]string   `json:"labels"`
			// TopologySpreadConstraints are the predictor pods' (podspread).
			TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints"`
			Affinity                  *corev1.Affinity                  `json:"affinity"`
			PriorityClassName         string                            `json:"priorityClassName"`
			Model                     *struct {
				ModelFormat struct {
					Name string `json:"name"`
				} `json:"modelFormat"`
				StorageURI string                      `json:"storageUri"`
				Resources  corev1.ResourceRequirements `json:"resources"`
			} `json:"model"`
			Containers []corev1.Container `json:"containers"`
			// ResourceClaims are the predictor pods' DRA claims.
			ResourceClaims []corev1.PodResourceClaim `json:"resourceClaims"`
		} `json:"predictor"`
	} `json:"spec"`
}

// knativeDefaults are config-autoscaler's defaults KServe's Serverless
// mode runs under.
const (
	knativeConcurrencyTarget = 100
	knativeUtilizationPct    = 70
)

// ReadServing reads the Deployments, ReplicaSets, StatefulSets and
// InferenceServices of a manifest file (other kinds are listed as
// skipped).
func ReadServing(file string, data []byte) ([]Workload, []string, error) {
	return ReadServingWith(file, data, nil, nil)
}

// ReadServingWith is ReadServing with the DeviceClasses of shared (the
// DRA objects of the other files the service lists) beside the file's
// own: a file's claims may name a DeviceClass defined in another.
// cluster holds the cluster's DeviceClasses (a scenario's policy's; nil:
// none), which the claims may name too (dra.Set.UseCluster).
func ReadServingWith(file string, data []byte, shared, cluster *dra.Set) ([]Workload, []string, error) {
	docs, err := strict.Manifests(file, data)
	if err != nil {
		return nil, nil, err
	}
	devices, err := dra.Read(file, docs)
	if err != nil {
		return nil, nil, err
	}
	devices.AddClasses(shared)
	if err := devices.UseCluster(cluster); err != nil {
		return nil, nil, err
	}
	var out []Workload
	var skipped []string
	for _, m := range docs {
		switch {
		case dra.IsDRA(m.APIVersion):
			// Read above, for the claims of the replicas' pods.
		case m.APIVersion == "apps/v1" && m.Kind == "Deployment":
			var d appsv1.Deployment
			pos, err := m.Decode(file, &d, strict.Options{What: "a manifest"})
			if err != nil {
				return nil, nil, err
			}
			w, err := replicated(file, m, pos, d.ObjectMeta, d.Spec.Replicas, &d.Spec.Template, devices)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, w)
		case m.APIVersion == "apps/v1" && m.Kind == "ReplicaSet":
			// What a Deployment runs, written by hand (Volcano's examples).
			var d appsv1.ReplicaSet
			pos, err := m.Decode(file, &d, strict.Options{What: "a manifest"})
			if err != nil {
				return nil, nil, err
			}
			w, err := replicated(file, m, pos, d.ObjectMeta, d.Spec.Replicas, &d.Spec.Template, devices)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, w)
		case m.APIVersion == "apps/v1" && m.Kind == "StatefulSet":
			// Its replicas as a Deployment's (Kueue serves both alike);
			// what only a StatefulSet has is noted.
			var d appsv1.StatefulSet
			pos, err := m.Decode(file, &d, strict.Options{What: "a manifest"})
			if err != nil {
				return nil, nil, err
			}
			w, err := replicated(file, m, pos, d.ObjectMeta, d.Spec.Replicas, &d.Spec.Template, devices)
			if err != nil {
				return nil, nil, err
			}
			if d.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
				w.Notes = append(w.Notes, fmt.Sprintf("%s:%d: StatefulSet %s: podManagementPolicy OrderedReady (the default) starts its replicas one at a time, each once the one before is ready: not modelled, they start as a Deployment's do", file, m.Line, d.Name))
			}
			if len(d.Spec.VolumeClaimTemplates) > 0 {
				w.Notes = append(w.Notes, fmt.Sprintf("%s:%d: StatefulSet %s: volumeClaimTemplates: storage is not modelled", file, m.Line, d.Name))
			}
			out = append(out, w)
		case m.APIVersion == "serving.kserve.io/v1beta1" && m.Kind == "InferenceService":
			crd, err := isvcCRD()
			if err != nil {
				return nil, nil, err
			}
			if err := crd.Check(file, m); err != nil {
				return nil, nil, err
			}
			w, err := readISVC(file, m, devices)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, w)
		case m.APIVersion == "leaderworkerset.x-k8s.io/v1" && m.Kind == "LeaderWorkerSet":
			w, err := readLWS(file, m, devices)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, w)
		case (m.APIVersion == "serving.kserve.io/v1alpha1" || m.APIVersion == "serving.kserve.io/v1alpha2") && m.Kind == "LLMInferenceService":
			w, err := readLLMISVC(file, m, devices)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, w)
		default:
			skipped = append(skipped, fmt.Sprintf("%s:%d: %s %s %s is not a serving workload", file, m.Line, strict.Quote(m.APIVersion), strict.Quote(m.Kind), strict.Quote(m.Name)))
		}
	}
	return out, skipped, nil
}

// replicated reads a Deployment's, ReplicaSet's or StatefulSet's replicas
// and pod template.
func replicated(file string, m strict.Manifest, pos strict.Positions, meta metav1.ObjectMeta, replicas *int32, tpl *corev1.PodTemplateSpec, devices *dra.Set) (Workload, error) {
	w := Workload{File: file, Line: m.Line, Kind: m.Kind, Name: meta.Name, Namespace: meta.Namespace, Replicas: 1}
	if replicas != nil {
		if *replicas < 0 {
			return w, strict.At(file, m.Line, pos, "spec.replicas", "%d is negative; a %s runs 0 or more replicas", *replicas, m.Kind)
		}
		w.Replicas = int(*replicas)
	}
	return w, templatePod(file, m, pos, &w, tpl, "spec.template", devices)
}

// templatePod reads a replica's pod template at tplAt into w: its
// requests, placement, spread, vLLM server (for a replica of w.Size
// pods) and DRA claims.
func templatePod(file string, m strict.Manifest, pos strict.Positions, w *Workload, tpl *corev1.PodTemplateSpec, tplAt string, devices *dra.Set) error {
	ps := tpl.Spec
	specAt := tplAt + ".spec"
	var err error
	backed := devices.ExtendedResources()
	if w.Notes, err = gpuFields(file, m.Line, pos, w, gpufields.Pod(tpl.Annotations, &ps, tplAt+".metadata", specAt, func(n string) bool { return backed[n] != "" })); err != nil {
		return err
	}
	if w.Pod, err = podOf(file, m.Line, pos, specAt, ps.Containers, ps.NodeSelector, ps.Tolerations, ps.PriorityClassName); err != nil {
		return err
	}
	if err := spreadOf(file, m.Line, pos, specAt+".", w, tpl.Labels, ps.TopologySpreadConstraints, ps.Affinity); err != nil {
		return err
	}
	if w.VLLM, err = vllmOf(file, m.Line, pos, specAt, ps.Containers, w.Size); err != nil {
		return err
	}
	return draClaims(file, m.Line, pos, w, devices, &ps, specAt)
}

func readISVC(file string, m strict.Manifest, devices *dra.Set) (Workload, error) {
	b, err := yamlv3.Marshal(m.Root)
	if err != nil {
		return Workload{}, strict.Errorf(file, m.Line, "", "%v", err)
	}
	var x isvc
	if err := yaml.Unmarshal(b, &x); err != nil {
		return Workload{}, strict.Errorf(file, m.Line, m.Kind, "%s", strict.Shorten(err.Error()))
	}
	pos := strict.PositionsOf(m.Root) // the schema has checked the shapes
	at := func(field, format string, args ...any) error {
		return strict.At(file, m.Line, pos, field, format, args...)
	}
	p := x.Spec.Predictor
	wl := Workload{File: file, Line: m.Line, Kind: m.Kind, Name: x.Metadata.Name, Namespace: x.Metadata.Namespace,
		Mode: "Serverless", ScaleMetric: p.ScaleMetric, ContainerConcurrency: int(p.ContainerConcurrency)}
	if mode := x.Metadata.Annotations["serving.kserve.io/deploymentMode"]; mode != "" {
		wl.Mode = mode
	}
	switch wl.Mode {
	case "Serverless", "RawDeployment":
	default:
		return wl, at("metadata.annotations", "serving.kserve.io/deploymentMode %s: gpuplan models Serverless and RawDeployment", strict.Quote(wl.Mode))
	}
	wl.MinReplicas = 1
	if p.MinReplicas != nil {
		wl.MinReplicas = int(*p.MinReplicas)
	}
	wl.MaxReplicas = int(p.MaxReplicas)
	if wl.MaxReplicas == 0 {
		// 0 (or none) is "no limit" in KServe; a simulation needs one: the
		// most replicas a service may have.
		wl.MaxReplicas = strict.MaxServiceReplicas
	}
	if wl.MinReplicas < 0 || wl.MinReplicas > wl.MaxReplicas {
		return wl, at("spec.predictor.minReplicas", "must be from 0 to maxReplicas (%d), got %d", wl.MaxReplicas, wl.MinReplicas)
	}
	if wl.Mode == "RawDeployment" && wl.MinReplicas == 0 {
		return wl, at("spec.predictor.minReplicas", "RawDeployment scales with an HPA, which cannot scale to zero: minReplicas must be at least 1")
	}
	backed := devices.ExtendedResources()
	fs := gpufields.Pod(x.Metadata.Annotations, &corev1.PodSpec{ResourceClaims: p.ResourceClaims, Containers: p.Containers}, "metadata", "spec.predictor", func(n string) bool { return backed[n] != "" })
	if p.Model != nil {
		fs = append(fs, gpufields.Container(&corev1.Container{Resources: p.Model.Resources}, "spec.predictor.model", func(n string) bool { return backed[n] != "" })...)
	}
	if wl.Notes, err = gpuFields(file, m.Line, pos, &wl, fs); err != nil {
		return wl, err
	}
	var containers []corev1.Container
	if p.Model != nil {
		wl.Model, wl.StorageURI = p.Model.ModelFormat.Name, p.Model.StorageURI
		containers = []corev1.Container{{Name: "kserve-container", Resources: p.Model.Resources}}
	}
	containers = append(containers, p.Containers...)
	if len(containers) == 0 {
		return wl, at("spec.predictor", "names no model and no containers")
	}
	if wl.Pod, err = podOf(file, m.Line, pos, "spec.predictor", containers, p.NodeSelector, p.Tolerations, p.PriorityClassName); err != nil {
		return wl, err
	}
	if err := spreadOf(file, m.Line, pos, "spec.predictor.", &wl, isvcPodLabels(x.Metadata.Name, x.Metadata.Labels, p.Labels), p.TopologySpreadConstraints, p.Affinity); err != nil {
		return wl, err
	}
	if err := draClaims(file, m.Line, pos, &wl, devices, &corev1.PodSpec{ResourceClaims: p.ResourceClaims, Containers: containers}, "spec.predictor"); err != nil {
		return wl, err
	}
	if wl.ScaleMetric == "" {
		wl.ScaleMetric = "concurrency"
		if wl.Mode == "RawDeployment" {
			wl.ScaleMetric = "cpu"
		}
	}
	ann := x.Metadata.Annotations
	switch {
	case wl.Mode == "Serverless" && (wl.ScaleMetric == "concurrency" || wl.ScaleMetric == "rps"):
		target := float64(knativeConcurrencyTarget)
		if wl.ContainerConcurrency > 0 {
			target = float64(wl.ContainerConcurrency)
		}
		if p.ScaleTarget != nil {
			target = float64(*p.ScaleTarget)
		}
		util := float64(knativeUtilizationPct)
		spec := autoscale.NewKPASpec(1)
		for key, dst := range map[string]*float64{
			"autoscaling.knative.dev/target":                        &target,
			"autoscaling.knative.dev/target-utilization-percentage": &util,
			"autoscaling.knative.dev/panic-window-percentage":       &spec.PanicWindowPct,
			"autoscaling.knative.dev/panic-threshold-percentage":    &spec.PanicThresholdPct,
		} {
			if s, ok := ann[key]; ok {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || !(v > 0) {
					return wl, at("metadata.annotations", "%s %s is not a positive number", key, strict.Quote(s))
				}
				*dst = v
			}
		}
		if s, ok := ann["autoscaling.knative.dev/window"]; ok {
			d, err := time.ParseDuration(s)
			if err != nil {
				return wl, at("metadata.annotations", "autoscaling.knative.dev/window %s is not a duration", strict.Quote(s))
			}
			spec.StableWindowMs = d.Milliseconds()
		}
		spec.Target = target * util / 100
		spec.MinScale, spec.MaxScale = wl.MinReplicas, wl.MaxReplicas
		if _, err := autoscale.NewKPA(spec); err != nil {
			return wl, at("metadata.annotations", "%v", err)
		}
		wl.KPA = &spec
	default:
		// RawDeployment (or Serverless on cpu/memory): KServe creates an
		// HPA on the metric, target scaleTarget (default 80% utilization).
		target := 80.0
		if p.ScaleTarget != nil {
			target = float64(*p.ScaleTarget)
		}
		spec := autoscale.NewHPASpec(wl.MaxReplicas, target)
		spec.MinReplicas = max(wl.MinReplicas, 1)
		if err := spec.Validate(); err != nil {
			return wl, at("spec.predictor.scaleTarget", "%v", err)
		}
		wl.HPA = &spec
	}
	return wl, nil
}

// podOf adds up the containers' requests (limits where no request is
// given, as the API server defaults them) and checks their bounds.
func podOf(file string, line int, pos strict.Positions, at string, cs []corev1.Container, sel map[string]string, tol []corev1.Toleration, prio string) (Pod, error) {
	p := Pod{NodeSelector: sel, Tolerations: tol, PriorityClassName: prio}
	for i, c := range cs {
		field := fmt.Sprintf("%s.containers[%d].resources", at, i)
		req := corev1.ResourceList{}
		for _, rl := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
			for name, q := range rl {
				req[name] = q // a request overrides its limit
			}
		}
		if q, ok := req[corev1.ResourceCPU]; ok {
			n, err := strict.MilliCPU(q)
			if err != nil {
				return p, strict.At(file, line, pos, field, "%v", err)
			}
			p.MilliCPU += n
		}
		if q, ok := req[corev1.ResourceMemory]; ok {
			n, err := strict.MemoryMiB(q)
			if err != nil {
				return p, strict.At(file, line, pos, field, "%v", err)
			}
			p.MemoryMiB += n
		}
		if q, ok := req["nvidia.com/gpu"]; ok {
			g := q.AsApproximateFloat64()
			if g < 0 || g > strict.MaxPodGPUs || g != float64(int64(g)) {
				return p, strict.At(file, line, pos, field, "nvidia.com/gpu must be a whole number from 0 to %d, got %g", strict.MaxPodGPUs, g)
			}
			p.GPUs += int64(g)
		}
		for _, name := range slices.Sorted(maps.Keys(req)) {
			if prof, ok := strings.CutPrefix(string(name), "nvidia.com/mig-"); ok {
				if !models.IsMIGProfile(prof) {
					return p, strict.At(file, line, pos, field, "resource %s names no MIG profile (profiles: %s)", strict.Quote(string(name)), strings.Join(models.MIGProfileNames(), ", "))
				}
				if p.MIG != "" && p.MIG != prof {
					return p, strict.At(file, line, pos, field, "asks for two MIG profiles (%s and %s); gpuplan models one slice a replica", p.MIG, prof)
				}
				p.MIG = prof
			}
		}
	}
	if p.GPUs > strict.MaxPodGPUs {
		return p, strict.At(file, line, pos, at, "%d GPUs in one replica, more than %d", p.GPUs, strict.MaxPodGPUs)
	}
	return p, nil
}
