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
// Noted: HAMi's shares beside nvidia.com/gpu (taken as whole GPUs), and
// Kueue's topology-aware scheduling annotations on the pod template
// (kueue.x-k8s.io/podset-required-topology, -preferred-topology,
// -unconstrained-topology, -slice-required-topology, -slice-size): the
// pods are placed as if unconstrained.
//
// Dynamic Resource Allocation is not checked here: the readers resolve a
// pod's claims (spec.resourceClaims, a container's resources.claims) and
// DRA-backed extended resources into the GPUs they hold
// (scenarios/kube/dra), where what is not modelled is refused at its
// field or noted with what it was taken as.
//
// Every workload and serving reader calls Pod on each pod template it
// reads.
package gpufields
