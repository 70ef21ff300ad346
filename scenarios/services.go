package scenarios

// Inference services of a scenario (spec.workload.services[]): the schema,
// its checks when the scenario is read, and the sim.ServiceConfig each
// service builds into. Files a service names (a rate CSV, TorchServe's
// config.properties, HPA, ScaledObject, Deployment or InferenceService
// manifests) are read when the scenario is built, so `scenario check`
// reads them as `simulate` does.

import corev1 "k8s.io/api/core/v1"

// ServiceSpec is one inference service: replicas that are pods of the
// cluster's scheduler, a request load, a batching and service-time model,
// and the autoscaler that sizes it.
type ServiceSpec struct {
	Name string `json:"name"`
	// Queue is the replicas' namespace or LocalQueue, as a class's queue
	// (default: the service's name).
	Queue string `json:"queue,omitempty"`
	// Priority is the replicas' PriorityClass value; PriorityClass names a
	// PriorityClass or WorkloadPriorityClass of spec.policy's manifests
	// instead. PreemptionPolicy is PreemptLowerPriority (default) or Never.
	Priority         *int32 `json:"priority,omitempty"`
	PriorityClass    string `json:"priorityClass,omitempty"`
	PreemptionPolicy string `json:"preemptionPolicy,omitempty"`
	// Pod is one replica's requests, as a class's pod (gpus one number).
	Pod *PodTemplate `json:"pod,omitempty"`
	// LeaderWorker makes a replica a LeaderWorkerSet's group of pods, each
	// a Pod (servicegroup.go).
	LeaderWorker *LeaderWorkerSpec `json:"leaderWorker,omitempty"`
	// NodeSelector, Affinity and Tolerations place the replicas.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	Affinity     []TermSpec        `json:"affinity,omitempty"`
	Tolerations  []TolerationSpec  `json:"tolerations,omitempty"`
	// TopologySpreadConstraints spread the replicas as a pod template's
	// do (core/v1 TopologySpreadConstraint); Labels are the replicas' pod
	// labels the selectors match (default with constraints: app: NAME).
	// A manifest's own constraints and labels are taken when these are
	// not given.
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	Labels                    map[string]string                 `json:"labels,omitempty"`
	// GPUModel names whose service-time defaults apply (default: the GPU
	// model of the pools a replica can run on; the slowest when several).
	GPUModel string `json:"gpuModel,omitempty"`
	// Replicas bound what the autoscaler may ask for.
	Replicas *ServiceReplicasSpec `json:"replicas,omitempty"`
	// ColdStart is a new replica's wait after it is bound.
	ColdStart *ColdStartSpec `json:"coldStart,omitempty"`
	// Load is the request rate arriving, whatever the replicas.
	Load ServiceLoadSpec `json:"load"`
	// Batching is TorchServe-style dynamic batching and the service time
	// of a batch; TorchServe reads batching and the queue limit from a
	// config.properties instead (fields given here win).
	Batching   *BatchingSpec   `json:"batching,omitempty"`
	TorchServe *TorchServeSpec `json:"torchserve,omitempty"`
	// QueueLimit is the requests one replica queues (0: unbounded);
	// Timeout drops requests that would wait longer.
	QueueLimit *int      `json:"queueLimit,omitempty"`
	Timeout    *Duration `json:"timeout,omitempty"`
	SLO        *SLOSpec  `json:"slo,omitempty"`
	// Autoscaler is the replica controller (none: fixed replicas).
	Autoscaler *AutoscalerSpec `json:"autoscaler,omitempty"`
	// Balancing is how requests reach the ready replicas: "random" (each
	// replica queues and batches its own share, as kube-proxy in iptables
	// mode spreads a Kubernetes Service's connections at random; the
	// default for a Deployment-style service: fixed, HPA or KEDA) or
	// "leastRequest" (one shared queue, a replica taking the next batch
	// when free, as Knative's activator with containerConcurrency does;
	// the default under the KPA; Envoy or Istio least-request are close
	// to it). An LLM service's is "random" (the default) or a gateway's
	// router: "round-robin", "least-outstanding" or "prefix-aware"
	// (servicellmbuild.go).
	Balancing string `json:"balancing,omitempty"`
	// Manifests are Deployment or InferenceService manifests the replica
	// pod, bounds, placement, PriorityClass and (for an InferenceService)
	// autoscaler come from; fields given here win.
	Manifests []string `json:"manifests,omitempty"`
	// LLM makes the replicas vLLM-style engines serving requests in
	// tokens (servicellm.go).
	LLM *LLMServiceSpec `json:"llm,omitempty"`
}

// ServiceReplicasSpec bounds a service's replicas.
type ServiceReplicasSpec struct {
	// Min (default 1; 0 lets KEDA or the KPA scale to zero), Max (default
	// Min) and Initial, created at time 0 (default Min).
	Min     *int `json:"min,omitempty"`
	Max     *int `json:"max,omitempty"`
	Initial *int `json:"initial,omitempty"`
}

// ColdStartSpec is what a bound replica waits for before it serves.
type ColdStartSpec struct {
	ImagePull *Duration `json:"imagePull,omitempty"`
	ModelLoad *Duration `json:"modelLoad,omitempty"`
}

// ServiceLoadSpec is a request-rate curve: one of constant, diurnal or
// csv, times any spikes.
type ServiceLoadSpec struct {
	// Constant is requests per second.
	Constant *float64 `json:"constant,omitempty"`
	// Diurnal is base + amplitude x cos(2 pi (t - peak) / 24h).
	Diurnal *ServiceDiurnalSpec `json:"diurnal,omitempty"`
	// CSV is a file of (time, requests per second) rows in time order.
	CSV    *RateCSVSpec `json:"csv,omitempty"`
	Spikes []SpikeSpec  `json:"spikes,omitempty"`
}

// ServiceDiurnalSpec is a daily cycle of requests per second.
type ServiceDiurnalSpec struct {
	Base      float64 `json:"base"`
	Amplitude float64 `json:"amplitude"`
	// Peak is the time of day of the highest rate, "HH:MM" in the UTC
	// clock of spec.output.startTime (default "00:00").
	Peak string `json:"peak,omitempty"`
}

// RateCSVSpec names a rate file: a header `time,requests_per_second`,
// then rows of a time (seconds from the start, or a duration such as
// 90m) and a rate, times strictly increasing; the rate holds from its
// time to the next row's (the last to the end). Before the first row the
// rate is 0.
type RateCSVSpec struct {
	Path string `json:"path"`
}

// SpikeSpec multiplies the rate over a window (a flash sale).
type SpikeSpec struct {
	Start      Duration `json:"start"`
	Length     Duration `json:"length"`
	Multiplier float64  `json:"multiplier"`
}

// BatchingSpec is a replica's dynamic batching and batch service time:
// a batch starts when batchSize requests wait or the oldest has waited
// maxBatchDelay, and takes baseMs + perItemMs x its size.
type BatchingSpec struct {
	BatchSize     *int      `json:"batchSize,omitempty"`
	MaxBatchDelay *Duration `json:"maxBatchDelay,omitempty"`
	BaseMs        *float64  `json:"baseMs,omitempty"`
	PerItemMs     *float64  `json:"perItemMs,omitempty"`
}

// TorchServeSpec reads a model's batching from TorchServe's
// config.properties: batchSize, maxBatchDelay and job_queue_size.
type TorchServeSpec struct {
	Path string `json:"path"`
	// Model is the model's name in the `models` key (default: the only
	// one); Version its version (default: the only one the model has).
	Model   string `json:"model,omitempty"`
	Version string `json:"version,omitempty"`
}

// SLOSpec is the latency target whose attainment the report measures:
// the share of requests served within Latency (p95 <= 200 ms holds when
// at least 95% are).
type SLOSpec struct {
	Latency Duration `json:"latency"`
}

// AutoscalerSpec is one of an HPA, a KEDA ScaledObject, Knative's KPA, or
// manifests of an HPA or ScaledObject.
type AutoscalerSpec struct {
	HPA  *HPAScalerSpec  `json:"hpa,omitempty"`
	KEDA *KEDAScalerSpec `json:"keda,omitempty"`
	KPA  *KPAScalerSpec  `json:"kpa,omitempty"`
	// Manifests are files holding one HorizontalPodAutoscaler
	// (autoscaling/v2) or KEDA ScaledObject (keda.sh/v1alpha1) for the
	// service; Metric says what its metric measures when its name does
	// not tell.
	Manifests []string `json:"manifests,omitempty"`
	Metric    string   `json:"metric,omitempty"`
}

// Metric names of a service's autoscaler.
const (
	MetricRequestsPerReplica = "requestsPerReplica"
	MetricConcurrency        = "concurrency"
	MetricQueueLatency       = "queueLatency"
	MetricUtilization        = "utilization"
	// MetricQueueDepth is requests waiting per replica (vLLM's
	// vllm:num_requests_waiting).
	MetricQueueDepth = "queueDepth"
	// MetricRequestsRunning is requests running in the engine per replica
	// (vLLM's vllm:num_requests_running); MetricKVCacheUsage the mean
	// share of a replica's KV cache in use, 0 to 1 (vLLM's
	// vllm:kv_cache_usage_perc). LLM services only.
	MetricRequestsRunning = "requestsRunning"
	MetricKVCacheUsage    = "kvCacheUsage"
)

// HPAScalerSpec is a HorizontalPodAutoscaler on one of the service's
// metrics.
type HPAScalerSpec struct {
	Metric string  `json:"metric"`
	Target float64 `json:"target"`
	// Type is AverageValue (per ready replica; the default but for
	// queueLatency) or Value (the metric as one number).
	Type string `json:"type,omitempty"`
	// SyncPeriod is --horizontal-pod-autoscaler-sync-period (15s),
	// Tolerance --horizontal-pod-autoscaler-tolerance (0.1).
	SyncPeriod *Duration        `json:"syncPeriod,omitempty"`
	Tolerance  *float64         `json:"tolerance,omitempty"`
	Behavior   *HPABehaviorSpec `json:"behavior,omitempty"`
}

// HPABehaviorSpec is autoscaling/v2's behavior: unset fields keep the
// Kubernetes defaults.
type HPABehaviorSpec struct {
	ScaleUp   *ScalingRulesSpec `json:"scaleUp,omitempty"`
	ScaleDown *ScalingRulesSpec `json:"scaleDown,omitempty"`
}

// ScalingRulesSpec is one direction's HPAScalingRules.
type ScalingRulesSpec struct {
	StabilizationWindow *Duration           `json:"stabilizationWindow,omitempty"`
	SelectPolicy        string              `json:"selectPolicy,omitempty"`
	Policies            []ScalingPolicySpec `json:"policies,omitempty"`
}

// ScalingPolicySpec is one HPAScalingPolicy: at most Value pods (or
// percent) of change within any Period.
type ScalingPolicySpec struct {
	Type   string   `json:"type"`
	Value  int      `json:"value"`
	Period Duration `json:"period"`
}

// KEDAScalerSpec is a ScaledObject with one trigger on a service metric.
type KEDAScalerSpec struct {
	Metric              string  `json:"metric"`
	Threshold           float64 `json:"threshold"`
	ActivationThreshold float64 `json:"activationThreshold,omitempty"`
	// MetricType is AverageValue (default) or Value.
	MetricType string `json:"metricType,omitempty"`
	// PollingInterval (30s) and CooldownPeriod (300s) are KEDA's.
	PollingInterval *Duration        `json:"pollingInterval,omitempty"`
	CooldownPeriod  *Duration        `json:"cooldownPeriod,omitempty"`
	Behavior        *HPABehaviorSpec `json:"behavior,omitempty"`
}

// KPAScalerSpec is Knative's autoscaler on concurrency (KServe's
// Serverless mode): unset fields take Knative's defaults.
type KPAScalerSpec struct {
	// Target is the concurrency per replica (containerConcurrency target
	// x target utilization).
	Target                   float64   `json:"target"`
	StableWindow             *Duration `json:"stableWindow,omitempty"`
	PanicWindowPercentage    *float64  `json:"panicWindowPercentage,omitempty"`
	PanicThresholdPercentage *float64  `json:"panicThresholdPercentage,omitempty"`
	MaxScaleUpRate           *float64  `json:"maxScaleUpRate,omitempty"`
	MaxScaleDownRate         *float64  `json:"maxScaleDownRate,omitempty"`
	ScaleToZeroGracePeriod   *Duration `json:"scaleToZeroGracePeriod,omitempty"`
	TickInterval             *Duration `json:"tickInterval,omitempty"`
}
