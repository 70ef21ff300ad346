package manifests

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KEDA's ScaledObject and KServe's InferenceService are written from typed
// structs that follow their published CRD schemas (keda.sh/v1alpha1,
// serving.kserve.io/v1beta1; testdata/crd-schemas): the projects' Go
// modules pull in their controllers (KEDA) or Knative and the cloud SDKs
// (KServe), far more than these objects need. The schema test validates
// every generated object against the published schema.

// API versions of the serving objects.
const (
	KEDAAPIVersion   = "keda.sh/v1alpha1"
	KServeAPIVersion = "serving.kserve.io/v1beta1"
)

// ScaledObject is keda.sh/v1alpha1 ScaledObject.
type ScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ScaledObjectSpec `json:"spec"`
}

// ScaledObjectSpec is a ScaledObject's spec: its target, KEDA's polling
// and cooldown, the replica bounds, the HPA behavior KEDA passes on and
// the triggers.
type ScaledObjectSpec struct {
	ScaleTargetRef  ScaleTarget     `json:"scaleTargetRef"`
	PollingInterval *int32          `json:"pollingInterval,omitempty"`
	CooldownPeriod  *int32          `json:"cooldownPeriod,omitempty"`
	MinReplicaCount *int32          `json:"minReplicaCount,omitempty"`
	MaxReplicaCount *int32          `json:"maxReplicaCount,omitempty"`
	Advanced        *AdvancedConfig `json:"advanced,omitempty"`
	Triggers        []ScaleTrigger  `json:"triggers"`
}

// ScaleTarget names the scaled workload (a Deployment by default).
type ScaleTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
}

// AdvancedConfig is a ScaledObject's advanced section.
type AdvancedConfig struct {
	HorizontalPodAutoscalerConfig *HorizontalPodAutoscalerConfig `json:"horizontalPodAutoscalerConfig,omitempty"`
}

// HorizontalPodAutoscalerConfig is the HPA behavior KEDA gives the HPA it
// creates.
type HorizontalPodAutoscalerConfig struct {
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// ScaleTrigger is one trigger: its scaler type and metadata.
type ScaleTrigger struct {
	Type       string            `json:"type"`
	Name       string            `json:"name,omitempty"`
	Metadata   map[string]string `json:"metadata"`
	MetricType string            `json:"metricType,omitempty"`
}

// InferenceService is serving.kserve.io/v1beta1 InferenceService, the
// part gpuplan writes: a predictor with one model.
type InferenceService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              InferenceServiceSpec `json:"spec"`
}

// InferenceServiceSpec holds the predictor.
type InferenceServiceSpec struct {
	Predictor PredictorSpec `json:"predictor"`
}

// PredictorSpec is the predictor's replicas, autoscaling, placement and
// model.
type PredictorSpec struct {
	MinReplicas          *int32              `json:"minReplicas,omitempty"`
	MaxReplicas          int32               `json:"maxReplicas,omitempty"`
	ScaleTarget          *int32              `json:"scaleTarget,omitempty"`
	ScaleMetric          string              `json:"scaleMetric,omitempty"`
	ContainerConcurrency *int64              `json:"containerConcurrency,omitempty"`
	NodeSelector         map[string]string   `json:"nodeSelector,omitempty"`
	Affinity             *corev1.Affinity    `json:"affinity,omitempty"`
	Tolerations          []corev1.Toleration `json:"tolerations,omitempty"`
	// Labels are the predictor pods' own labels; TopologySpreadConstraints
	// spread them (the predictor's pod spec fields).
	Labels                    map[string]string                 `json:"labels,omitempty"`
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	PriorityClassName         string                            `json:"priorityClassName,omitempty"`
	// ResourceClaims are the predictor pods' DRA claims (the model's
	// container names them in resources.claims).
	ResourceClaims []corev1.PodResourceClaim `json:"resourceClaims,omitempty"`
	Model          *ModelSpec                `json:"model,omitempty"`
}

// ModelSpec is the predictor's model: its format, where it is stored and
// the resources of its container.
type ModelSpec struct {
	ModelFormat ModelFormat                 `json:"modelFormat"`
	StorageURI  string                      `json:"storageUri,omitempty"`
	Resources   corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ModelFormat names the model's framework.
type ModelFormat struct {
	Name string `json:"name"`
}
