// Package gpufields finds the fields of a pod template that ask for GPUs,
// or place GPU pods, in ways gpuplan does not model yet, so that none is
// dropped without a word: each is either refused (an input error at its
// field, saying what to write instead) or noted (what gpuplan took it as).
//
// Refused, because the pod would otherwise run without its GPUs: HAMi's
// nvidia.com/gpucores, nvidia.com/gpumem and nvidia.com/gpumem-percentage
// in a container that asks for no nvidia.com/gpu, and GPUs under another
// extended resource name (amd.com/gpu; a DRA-backed extended resource no
// DeviceClass of the file maps).
//
// Noted: HAMi's shares beside nvidia.com/gpu (taken as whole GPUs).
//
// Kueue's topology-aware scheduling annotations on a job's pod template
// (kueue.x-k8s.io/podset-required-topology, -preferred-topology,
// -unconstrained-topology, -slice-required-topology, -slice-size) are
// read by KueueTopology into the job's cluster.TASRequest, checked as
// Kueue's webhook checks them, each noted with what it is taken as; the
// multi-layer -slice-required-topology-constraints is refused. On a
// service's template (Pod) they are noted: its replicas are placed as if
// unconstrained.
//
// Dynamic Resource Allocation is not checked here: the readers resolve a
// pod's claims (spec.resourceClaims, a container's resources.claims) and
// DRA-backed extended resources into the GPUs they hold
// (scenarios/kube/dra), where what is not modelled is refused at its
// field or noted with what it was taken as.
//
// Every workload reader calls KueueTopology and PodFields on each job's
// pod template, and Pod on each service's (the serving readers too).
package gpufields
