// Package manifests renders a scenario as the Kubernetes objects that put
// it into practice on a real cluster: Karpenter NodePools and an
// EC2NodeClass for its pools, the NVIDIA device plugin's time-slicing and
// MIG configuration, Kueue ResourceFlavors, a ClusterQueue and LocalQueues
// (and a Topology the flavors name when a class asks for topology, its
// pod template annotated with Kueue's podset topology request, tas.go),
// the policy's Volcano HyperNodes (hypernodes.go), DRA DeviceClasses and
// each class's and service's ResourceClaimTemplate when its GPUs come by
// claim (dra.go), PriorityClasses, a Job template per workload class, a
// PrometheusRule for idle GPUs and, per inference service, a Deployment with its
// HorizontalPodAutoscaler or KEDA ScaledObject (or a KServe
// InferenceService for Knative's KPA) and TorchServe's config.properties.
//
// Every object is built from its project's own Go API type where the Go
// module proxy serves one (k8s.io/api, sigs.k8s.io/karpenter,
// sigs.k8s.io/kueue, prometheus-operator's monitoring/v1) and, where it
// does not (Karpenter's AWS EC2NodeClass, whose module pulls in the AWS
// SDK; NVIDIA's device-plugin and mig-parted configurations, not served;
// KEDA's ScaledObject and KServe's InferenceService, whose modules bring
// their controllers and Knative; Volcano's Job and HyperNode),
// from small typed structs here that follow the published schema. Decode
// reads each file back strictly into the same types, so a field this
// package writes and the type does not know fails a test.
//
// Generate's generator (gen) writes the cluster-wide files; a workload
// class's file is written by a jobFile (jobfile.go), an inference
// service's by a serviceWriter (services.go; a disaggregated LLM
// service's LLMInferenceService in llmisvc.go).
//
// The package reads a scenario and its resolved cluster model; it never
// runs the simulation.
package manifests
