package services

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/validate/strict"
)

// llmisvc is KServe's LLMInferenceService (serving.kserve.io v1alpha1 and
// v1alpha2): every field of its spec as the CRD has them (KServe at
// aaac4e294, config/crd/full/llmisvc), those gpuplan reads typed, the
// rest kept to be noted or refused.
type llmisvc struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Status          any               `json:"status"`
	Spec            struct {
		Model struct {
			URI          string `json:"uri"`
			Name         string `json:"name"`
			LoRA         any    `json:"lora"`
			Criticality  string `json:"criticality"`
			Confidential any    `json:"confidential"`
		} `json:"model"`
		Replicas    *int32 `json:"replicas"`
		Parallelism *struct {
			Tensor      *int32 `json:"tensor"`
			Pipeline    *int32 `json:"pipeline"`
			Data        *int32 `json:"data"`
			DataLocal   *int32 `json:"dataLocal"`
			DataRPCPort *int32 `json:"dataRPCPort"`
			Expert      *bool  `json:"expert"`
		} `json:"parallelism"`
		Template *corev1.PodSpec  `json:"template"`
		Worker   *corev1.PodSpec  `json:"worker"`
		Prefill  *llmisvcWorkload `json:"prefill"`
		Router   *struct {
			Scheduler any `json:"scheduler"`
			Route     any `json:"route"`
			Gateway   any `json:"gateway"`
			Ingress   any `json:"ingress"`
		} `json:"router"`
		Scaling *struct {
			MinReplicas *int32 `json:"minReplicas"`
			MaxReplicas *int32 `json:"maxReplicas"`
			KEDA        any    `json:"keda"`
			WVA         any    `json:"wva"`
		} `json:"scaling"`
		BaseRefs           []corev1.LocalObjectReference `json:"baseRefs"`
		Labels             map[string]string             `json:"labels"`
		Annotations        map[string]string             `json:"annotations"`
		StorageInitializer any                           `json:"storageInitializer"`
		Tracing            any                           `json:"tracing"`
		RolloutStrategy    any                           `json:"rolloutStrategy"`
		KVCacheOffloading  any                           `json:"kvCacheOffloading"`
	} `json:"spec"`
}

// llmisvcWorkload is KServe's WorkloadSpec as spec.prefill has it: the
// prefill pool's Deployment.
type llmisvcWorkload struct {
	Replicas    *int32 `json:"replicas"`
	Scaling     any    `json:"scaling"`
	Parallelism *struct {
		Tensor      *int32 `json:"tensor"`
		Pipeline    *int32 `json:"pipeline"`
		Data        *int32 `json:"data"`
		DataLocal   *int32 `json:"dataLocal"`
		DataRPCPort *int32 `json:"dataRPCPort"`
		Expert      *bool  `json:"expert"`
	} `json:"parallelism"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Template    *corev1.PodSpec   `json:"template"`
	Worker      any               `json:"worker"`
}

// Disagg is an LLMInferenceService's prefill/decode disaggregation
// (spec.prefill): KServe's two Deployments, the prefill pool's
// (spec.prefill) and the decode pool's (the main spec), llm-d's endpoint
// picker sending each request to a prefill pod and then a decode pod of
// the whole pools. It is read as one replica of Prefill prefill engines
// and Decode decode engines, each engine a pod of its own (the main
// template's pod the decode engines', PrefillPod the prefill engines'),
// PrefillTP a prefill engine's tensor parallel.
type Disagg struct {
	Prefill, Decode int
	PrefillTP       int
	PrefillPod      Pod
}

// readLLMISVC reads an LLMInferenceService as an LLM service's replicas:
// the model from spec.model, tensor parallel from spec.parallelism, the
// replica pod from spec.template, vLLM's extra arguments from the main
// container's VLLM_ADDITIONAL_ARGS (KServe's default configuration runs
// vLLM with them), the replicas from spec.replicas or spec.scaling's
// bounds. A replica with spec.worker and parallelism.pipeline P is a
// group of P pods, as KServe runs it (a LeaderWorkerSet of size P:
// llmisvcGroup). What changes the engine and is not modelled is refused at
// its field (workers without pipeline parallel or with data-parallel
// ranks, prefill/decode disaggregation, pipeline parallel in one pod,
// data parallel); what gpuplan takes as something else is noted.
func readLLMISVC(file string, m strict.Manifest, devices *dra.Set) (Workload, error) {
	var x llmisvc
	pos, err := m.Decode(file, &x, strict.Options{What: "an LLMInferenceService"})
	if err != nil {
		return Workload{}, err
	}
	at := func(field, format string, args ...any) error {
		return strict.At(file, m.Line, pos, field, format, args...)
	}
	sp := &x.Spec
	w := Workload{File: file, Line: m.Line, Kind: m.Kind, Name: x.Metadata.Name, Namespace: x.Metadata.Namespace, Replicas: 1}
	switch {
	case sp.Replicas != nil && sp.Scaling != nil:
		// The CRD's CEL rule on spec.
		return w, at("spec", "replicas and scaling are mutually exclusive; use scaling for autoscaled deployments or replicas for static deployments")
	case sp.Worker != nil && (sp.Parallelism == nil || sp.Parallelism.Pipeline == nil || *sp.Parallelism.Pipeline <= 1 ||
		(sp.Parallelism.Data != nil && *sp.Parallelism.Data > 1) || (sp.Parallelism.DataLocal != nil && *sp.Parallelism.DataLocal > 1)):
		return w, at("spec.worker", "multi-node replicas are modelled as pipeline-parallel groups (KServe sizes the LeaderWorkerSet by spec.parallelism.pipeline); data-parallel ranks across nodes (parallelism.data, dataLocal) are not: give parallelism.pipeline above 1 and no data parallel")
	case sp.Prefill != nil && sp.Worker != nil:
		return w, at("spec.worker", "a decode engine over a group of pods is not modelled with spec.prefill: a disaggregated replica's engines are one pod each")
	case sp.Prefill != nil && sp.Scaling != nil:
		return w, at("spec.scaling", "with spec.prefill each pool scales on its own (a VariantAutoscaling each), which is not modelled: a disaggregated service is read as one replica of both pools' engines; give spec.replicas and spec.prefill.replicas")
	case sp.Template == nil || len(sp.Template.Containers) == 0:
		return w, at("spec.template", "gives no container, so no GPUs: KServe's LLMInferenceServiceConfig presets are not read; give spec.template.containers[].resources")
	}
	if sp.Replicas != nil {
		if *sp.Replicas < 0 {
			return w, at("spec.replicas", "%d is negative", *sp.Replicas)
		}
		w.Replicas = int(*sp.Replicas)
	}
	if s := sp.Scaling; s != nil {
		w.MinReplicas, w.MaxReplicas = 1, 1
		if s.MinReplicas != nil {
			w.MinReplicas = int(*s.MinReplicas)
		}
		if s.MaxReplicas != nil {
			w.MaxReplicas = int(*s.MaxReplicas)
		}
		if w.MinReplicas < 0 || w.MaxReplicas < max(w.MinReplicas, 1) {
			return w, at("spec.scaling", "minReplicas %d and maxReplicas %d are not bounds (0 <= min <= max, max >= 1)", w.MinReplicas, w.MaxReplicas)
		}
		w.Replicas = max(w.MinReplicas, 1)
		w.ScaleMetric = "spec.scaling"
	}
	ps := *sp.Template
	backed := devices.ExtendedResources()
	if w.Notes, err = gpuFields(file, m.Line, pos, &w, gpufields.Pod(nil, &ps, "metadata", "spec.template", func(n string) bool { return backed[n] != "" })); err != nil {
		return w, err
	}
	if w.Pod, err = podOf(file, m.Line, pos, "spec.template", ps.Containers, ps.NodeSelector, ps.Tolerations, ps.PriorityClassName); err != nil {
		return w, err
	}
	if err := draClaims(file, m.Line, pos, &w, devices, &ps, "spec.template"); err != nil {
		return w, err
	}
	if w.Pod.GPUs == 0 {
		return w, at("spec.template.containers", "ask for no nvidia.com/gpu: an LLM replica holds whole GPUs")
	}
	if err := spreadOf(file, m.Line, pos, "spec.template.", &w, sp.Labels, ps.TopologySpreadConstraints, ps.Affinity); err != nil {
		return w, err
	}
	// The engine: the model, tensor parallel, and vLLM's extra arguments.
	hf, ok := strings.CutPrefix(sp.Model.URI, "hf://")
	if !ok {
		hf = sp.Model.Name
	}
	if hf == "" {
		return w, at("spec.model", "names no model: give uri (hf://ORG/NAME) or name")
	}
	argv := []string{hf}
	main := ps.Containers[0]
	for _, c := range ps.Containers {
		if c.Name == "main" {
			main = c
		}
	}
	argv = append(argv, main.Args...)
	for i, e := range main.Env {
		if e.Name != "VLLM_ADDITIONAL_ARGS" {
			continue
		}
		words, err := shellWords(e.Value)
		if err != nil {
			return w, at(fmt.Sprintf("spec.template.containers[0].env[%d].value", i), "%v", err)
		}
		argv = append(argv, words...)
	}
	v, err := parseVLLM(argv, 0)
	if err != nil {
		return w, at("spec.template.containers", "%v", err)
	}
	v.Container = main.Name
	if p := sp.Parallelism; p != nil {
		for _, f := range []struct {
			name string
			n    *int32
		}{{"pipeline", p.Pipeline}, {"data", p.Data}, {"dataLocal", p.DataLocal}} {
			if f.n != nil && *f.n > 1 && (f.name != "pipeline" || sp.Worker == nil) {
				return w, at("spec.parallelism."+f.name, "%d: pipeline and data parallel replicas are not modelled (a replica is one tensor-parallel engine)", *f.n)
			}
		}
		if p.Tensor != nil {
			if *p.Tensor < 1 {
				return w, at("spec.parallelism.tensor", "%d is below 1", *p.Tensor)
			}
			tp := int(*p.Tensor)
			v.TensorParallel = &tp
		}
		if sp.Worker != nil {
			if err := llmisvcGroup(file, m.Line, pos, &w, v, sp.Worker, int(*p.Pipeline)); err != nil {
				return w, err
			}
		}
		if p.Expert != nil && *p.Expert {
			v.Notes = append(v.Notes, "spec.parallelism.expert: expert parallelism is not modelled (the catalog's models are dense)")
		}
	}
	if sp.Prefill != nil {
		if err := llmisvcPrefill(file, m.Line, pos, &w, v, sp.Prefill); err != nil {
			return w, err
		}
	}
	w.VLLM = v
	where := fmt.Sprintf("%s:%d: LLMInferenceService %s", file, m.Line, w.Name)
	if sp.Router != nil && sp.Router.Scheduler != nil {
		w.Notes = append(w.Notes, where+": spec.router.scheduler: the endpoint picker routes requests (prefix-aware by default); the cluster run spreads them at random over the replicas (models/serving.SimulateLLMRouted has the picker, in the exact model)")
	}
	if len(sp.BaseRefs) > 0 {
		w.Notes = append(w.Notes, where+": spec.baseRefs: the LLMInferenceServiceConfig presets are not read; the replica is vLLM with the arguments given here")
	}
	if sp.Model.LoRA != nil {
		w.Notes = append(w.Notes, where+": spec.model.lora: LoRA adapters are not modelled")
	}
	if sp.KVCacheOffloading != nil {
		w.Notes = append(w.Notes, where+": spec.kvCacheOffloading: KV-cache offloading is not modelled (the cache is the GPUs')")
	}
	return w, nil
}

// llmisvcGroup makes an LLMInferenceService's replica a group of
// pipeline pods, as KServe runs it (a LeaderWorkerSet of size
// parallelism.pipeline, spec.template the leader, spec.worker the
// workers): the workers must ask for the leader's GPUs, and the engine is
// pipeline parallel over the pods, tensor parallel within each.
func llmisvcGroup(file string, line int, pos strict.Positions, w *Workload, v *VLLM, worker *corev1.PodSpec, pipeline int) error {
	if pipeline > maxLWSSize {
		return strict.At(file, line, pos, "spec.parallelism.pipeline", "%d: a group is 1 to %d pods", pipeline, maxLWSSize)
	}
	wp, err := podOf(file, line, pos, "spec.worker", worker.Containers, nil, nil, "")
	if err != nil {
		return err
	}
	if wp.GPUs != w.Pod.GPUs || wp.MIG != w.Pod.MIG {
		return strict.At(file, line, pos, "spec.worker.containers", "ask for %d GPUs and spec.template for %d: a group's pods are placed alike (each the leader's pod); give the workers the leader's GPUs", wp.GPUs, w.Pod.GPUs)
	}
	w.Size = pipeline
	tp := 1
	if v.TensorParallel != nil {
		tp = *v.TensorParallel
	}
	v.PipelineParallel = &pipeline
	v.Notes = append(v.Notes, fmt.Sprintf("spec.parallelism tensor %d and pipeline %d: a replica is a LeaderWorkerSet group of %d pods (spec.template the leader, spec.worker the workers), its engine %d pipeline stages of tensor parallel %d, a stage a pod", tp, pipeline, pipeline, pipeline, tp))
	return nil
}

// llmisvcPrefill reads spec.prefill: the prefill pool of a disaggregated
// service, as KServe deploys it (a Deployment of its own beside the
// decode pool's, the main spec's). The service is one replica: the
// decode pool's spec.replicas engines and the prefill pool's
// spec.prefill.replicas (default 1, as a Deployment's), each engine a pod
// of its own; a prefill engine's tensor parallel is
// spec.prefill.parallelism.tensor, else its pod's GPUs. Its pods must be
// placed as the decode pods are (the same nodeSelector and
// tolerations); multi-node prefill engines (spec.prefill.worker) and
// pool autoscaling are refused.
func llmisvcPrefill(file string, line int, pos strict.Positions, w *Workload, v *VLLM, pf *llmisvcWorkload) error {
	at := func(field, format string, args ...any) error {
		return strict.At(file, line, pos, field, format, args...)
	}
	switch {
	case pf.Worker != nil:
		return at("spec.prefill.worker", "a prefill engine over a group of pods is not modelled: a disaggregated replica's engines are one pod each")
	case pf.Scaling != nil:
		return at("spec.prefill.scaling", "each pool scaling on its own is not modelled: a disaggregated service is read as one replica of both pools' engines; give spec.prefill.replicas")
	case pf.Template == nil || len(pf.Template.Containers) == 0:
		return at("spec.prefill.template", "gives no container, so no GPUs: KServe's LLMInferenceServiceConfig presets are not read; give spec.prefill.template.containers[].resources")
	}
	d := &Disagg{Prefill: 1, Decode: w.Replicas}
	if pf.Replicas != nil {
		if *pf.Replicas < 1 {
			return at("spec.prefill.replicas", "%d: a disaggregated replica has at least one prefill engine", *pf.Replicas)
		}
		d.Prefill = int(*pf.Replicas)
	}
	if d.Decode < 1 {
		return at("spec.replicas", "%d: a disaggregated replica has at least one decode engine", d.Decode)
	}
	ps := *pf.Template
	pod, err := podOf(file, line, pos, "spec.prefill.template", ps.Containers, ps.NodeSelector, ps.Tolerations, ps.PriorityClassName)
	if err != nil {
		return err
	}
	if pod.GPUs == 0 || pod.MIG != "" {
		return at("spec.prefill.template.containers", "ask for no whole nvidia.com/gpu: a prefill engine holds whole GPUs")
	}
	if !maps.Equal(pod.NodeSelector, w.Pod.NodeSelector) || !slices.EqualFunc(pod.Tolerations, w.Pod.Tolerations, func(a, b corev1.Toleration) bool { return a.MatchToleration(&b) }) {
		return at("spec.prefill.template", "places its pods otherwise than spec.template (its nodeSelector or tolerations differ): a disaggregated replica's pods are placed alike; give both the same")
	}
	if len(ps.ResourceClaims) > 0 || ps.Affinity != nil || len(ps.TopologySpreadConstraints) > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%s:%d: LLMInferenceService %s: spec.prefill.template: its resource claims, affinity and topology spread are not read; the prefill pods are placed as spec.template's", file, line, w.Name))
	}
	pod.NodeSelector, pod.Tolerations = w.Pod.NodeSelector, w.Pod.Tolerations
	d.PrefillPod, d.PrefillTP = pod, int(pod.GPUs)
	if p := pf.Parallelism; p != nil {
		for _, f := range []struct {
			name string
			n    *int32
		}{{"pipeline", p.Pipeline}, {"data", p.Data}, {"dataLocal", p.DataLocal}} {
			if f.n != nil && *f.n > 1 {
				return at("spec.prefill.parallelism."+f.name, "%d: pipeline and data parallel engines are not modelled (a prefill engine is one tensor-parallel engine)", *f.n)
			}
		}
		if p.Tensor != nil {
			if int64(*p.Tensor) != pod.GPUs {
				return at("spec.prefill.parallelism.tensor", "%d, but the prefill pod asks for %d GPUs: an engine's tensor parallel is its pod's GPUs", *p.Tensor, pod.GPUs)
			}
		}
	}
	w.Replicas, w.Disagg = 1, d
	v.Notes = append(v.Notes, fmt.Sprintf("spec.prefill: prefill/decode disaggregation, KServe's prefill Deployment of %d pods of %d GPUs and decode Deployment of %d pods of %d, read as one replica of %d prefill and %d decode engines, each engine a pod (llm.disaggregation.placement pods), as llm-d's endpoint picker routes over the whole pools",
		d.Prefill, pod.GPUs, d.Decode, w.Pod.GPUs, d.Prefill, d.Decode))
	return nil
}
