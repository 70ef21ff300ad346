package manifests

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/services"
)

// LLMISVCAPIVersion is KServe's LLMInferenceService API the writer uses.
const LLMISVCAPIVersion = "serving.kserve.io/v1alpha2"

// LLMInferenceService is KServe's LLMInferenceService, the fields gpuplan
// writes for a disaggregated LLM service.
type LLMInferenceService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              LLMInferenceServiceSpec `json:"spec"`
}

// LLMInferenceServiceSpec is its spec: the model, the decode pool (the
// main workload) and the prefill pool.
type LLMInferenceServiceSpec struct {
	Model       LLMModelSpec     `json:"model"`
	Replicas    *int32           `json:"replicas,omitempty"`
	Parallelism *LLMParallelism  `json:"parallelism,omitempty"`
	Router      *LLMRouterSpec   `json:"router,omitempty"`
	Template    *corev1.PodSpec  `json:"template,omitempty"`
	Prefill     *LLMWorkloadSpec `json:"prefill,omitempty"`
}

// LLMModelSpec is spec.model.
type LLMModelSpec struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// LLMParallelism is a workload's parallelism.
type LLMParallelism struct {
	Tensor *int32 `json:"tensor,omitempty"`
}

// LLMRouterSpec is spec.router: KServe's managed route, gateway and
// llm-d's endpoint picker (empty objects: KServe's defaults).
type LLMRouterSpec struct {
	Route     *struct{} `json:"route,omitempty"`
	Gateway   *struct{} `json:"gateway,omitempty"`
	Scheduler *struct{} `json:"scheduler,omitempty"`
}

// LLMWorkloadSpec is KServe's WorkloadSpec as spec.prefill has it.
type LLMWorkloadSpec struct {
	Replicas    *int32          `json:"replicas,omitempty"`
	Parallelism *LLMParallelism `json:"parallelism,omitempty"`
	Template    *corev1.PodSpec `json:"template,omitempty"`
}

// nixlArgs is the vLLM argument of a disaggregated engine's KV transfer
// over NIXL (KServe's prefill/decode sample): kv_producer on the prefill
// engines, kv_consumer on the decode engines.
func nixlArgs(role string) string {
	return `--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"` + role + `"}'`
}

// llmInferenceService writes a disaggregated LLM service as KServe's
// LLMInferenceService with spec.prefill: llm-d's prefill and decode pools
// as KServe deploys them, a Deployment each (the decode pool the main
// spec, the prefill pool spec.prefill), llm-d's endpoint picker routing
// each request to a prefill pod and a decode pod, the KV cache moved by
// vLLM's NixlConnector. Its replicas are the run's replicas' engines:
// spec.replicas the decode engines, spec.prefill.replicas the prefill
// engines; each engine's vLLM arguments go in VLLM_ADDITIONAL_ARGS (as
// KServe's samples give them). Read back it is one replica of both
// pools' engines (kubesvc.Disagg). KServe's object rather than llm-d's
// own two Deployments and routing sidecar: one object carries both pools
// and the picker, as a user of KServe writes it, and gpuplan reads it
// back.
func (g serviceWriter) llmInferenceService(v Service, ns string, labels, ann map[string]string, pod corev1.PodSpec, prefillRes, decodeRes corev1.ResourceList) (*LLMInferenceService, []string, error) {
	cfg := v.Config
	l := cfg.Spec.LLM
	d := *l.Disagg
	switch cfg.Scaler.(type) {
	case nil, services.Fixed:
	default:
		return nil, nil, fmt.Errorf("service %s: a disaggregated LLM service with an autoscaler is not written out: KServe scales its prefill and decode pools on their own (a VariantAutoscaling each), which the run does not model; give fixed replicas", v.Name)
	}
	n := int32(max(cfg.InitialReplicas, 1))
	model := vllmModels[l.Config.Engine.Model.Name]
	engine := func(c serving.LLMConfig, tp int, role string, res corev1.ResourceList) *corev1.PodSpec {
		args := []string{
			"--tensor-parallel-size", strconv.Itoa(tp),
			"--max-num-seqs", strconv.Itoa(c.MaxNumSeqs),
			"--max-num-batched-tokens", strconv.Itoa(c.MaxNumBatchedTokens),
			"--max-model-len", strconv.Itoa(c.MaxModelLen),
			"--gpu-memory-utilization", strconv.FormatFloat(c.GPUMemoryUtilization, 'g', -1, 64),
			"--block-size", strconv.Itoa(c.BlockSize),
			nixlArgs(role)}
		p := pod.DeepCopy()
		p.Containers = []corev1.Container{{Name: "main",
			Env:       []corev1.EnvVar{{Name: "VLLM_ADDITIONAL_ARGS", Value: strings.Join(args, " ")}},
			Resources: corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()}}}
		return p
	}
	x := &LLMInferenceService{
		TypeMeta:   metav1.TypeMeta{APIVersion: LLMISVCAPIVersion, Kind: "LLMInferenceService"},
		ObjectMeta: metav1.ObjectMeta{Name: v.Name, Namespace: ns, Labels: labels, Annotations: ann},
		Spec: LLMInferenceServiceSpec{
			Model:       LLMModelSpec{URI: "hf://" + model, Name: model},
			Replicas:    ptr(n * int32(d.DecodeReplicas)),
			Parallelism: &LLMParallelism{Tensor: ptr(int32(d.Decode.Engine.TP))},
			Router:      &LLMRouterSpec{Route: &struct{}{}, Gateway: &struct{}{}, Scheduler: &struct{}{}},
			Template:    engine(l.Config, d.Decode.Engine.TP, "kv_consumer", decodeRes),
			Prefill: &LLMWorkloadSpec{Replicas: ptr(n * int32(d.PrefillReplicas)), Parallelism: &LLMParallelism{Tensor: ptr(int32(d.Prefill.Engine.TP))},
				Template: engine(l.Config, d.Prefill.Engine.TP, "kv_producer", prefillRes)},
		},
	}
	notes := []string{
		fmt.Sprintf("A KServe LLMInferenceService with spec.prefill (prefill/decode disaggregation as llm-d runs it): the decode pool %d pods of %d GPUs (spec.replicas), the prefill pool %d pods of %d (spec.prefill.replicas), llm-d's endpoint picker sending each request to a prefill pod, then a decode pod, the KV cache moved by vLLM's NixlConnector (KServe's preset vLLM image and serving arguments, these engine limits in VLLM_ADDITIONAL_ARGS).",
			n*int32(d.DecodeReplicas), d.Decode.Engine.TP, n*int32(d.PrefillReplicas), d.Prefill.Engine.TP),
		fmt.Sprintf("The run placed each replica's %d engine pods as one gang and priced the KV transfer at %.4g GB/s and %.4g ms; Kubernetes schedules the two Deployments' pods on their own.", d.PrefillReplicas+d.DecodeReplicas, d.KVTransferGBps, d.KVTransferLatencyMs),
	}
	if n > 1 {
		notes = append(notes, g.warn("service %s: its %d replicas are written as the pools' %d prefill and %d decode pods; read back, they are one replica of them all (llm-d's picker routes over the whole pools), which differs from the run's %d replicas", v.Name, n, n*int32(d.PrefillReplicas), n*int32(d.DecodeReplicas), n))
	}
	return x, notes, nil
}
