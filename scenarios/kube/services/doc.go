// Package services reads the manifests and configuration that define an
// inference service's scaling and batching, as users have them, into the
// controller specs of sim/autoscale and the batching model of
// models/serving:
//
//   - HorizontalPodAutoscaler (autoscaling/v2, k8s.io/api types): bounds,
//     one metric (Resource utilization or average value, Pods, Object or
//     External), and the behavior (stabilization windows, policies,
//     selectPolicy, tolerance), unset fields taking Kubernetes' defaults;
//   - KEDA ScaledObject (keda.sh/v1alpha1, typed after its published CRD
//     schema): replica bounds, pollingInterval, cooldownPeriod, one trigger
//     (threshold, activationThreshold, metricType) and the HPA behavior
//     under advanced.horizontalPodAutoscalerConfig; a prometheus
//     trigger's query that takes a quantile of vLLM's TTFT, TPOT or
//     end-to-end latency histogram (Metric.Latency) is read strictly:
//     the quantile, the histogram, the label matchers, the rate window
//     and the sum by le;
//   - TorchServe's config.properties (Java properties): job_queue_size,
//     default_response_timeout and each model's batchSize,
//     maxBatchDelay, responseTimeout, minWorkers and maxWorkers from the
//     `models` JSON.
//
// ReadInferencePools reads the Gateway API Inference Extension's
// InferencePools (inference.networking.k8s.io/v1): the pods an endpoint
// picker routes among, which a scenario matches to a service's replicas
// (InferencePool.Selects) to put the picker's prefix-aware scoring in
// front of them.
//
// ReadServing reads Deployments, ReplicaSets, StatefulSets,
// InferenceServices and LLMInferenceServices into the replica pod they
// run; a replica's GPUs come from its containers' resources or from its
// DRA claims (the file's ResourceClaimTemplates, resolved by
// scenarios/kube/dra). A LeaderWorkerSet (and an LLMInferenceService with
// spec.worker) is read as replicas that are groups of pods
// (Workload.Size): the leader's pod, its vLLM server with LWS's
// environment expanded, its pipeline parallel the engine's stages. An
// LLMInferenceService with spec.prefill is read as one disaggregated
// replica (Workload.Disagg): its prefill Deployment's and decode
// Deployment's engines, each a pod.
//
// Everything is read strictly: unknown fields, values out of range and a
// target or batch size of 0 are InputErrors naming the file, line and
// field. Documents of other kinds in the same file are listed as skipped.
package services
