// Package nodes reads the cluster an architect already has: the node list
// `kubectl get nodes -o yaml` (or -o json) prints, a v1 List or NodeList
// of Nodes (or one Node), decoded strictly through k8s.io/api's core/v1
// types.
//
// Nodes that are the same machine become one pool: the same instance type
// (node.kubernetes.io/instance-type), capacity type (karpenter.sh/capacity-type,
// eks.amazonaws.com/capacityType, GKE's and AKS's spot labels), region and
// zone (topology.kubernetes.io/*), GPU as NVIDIA's GPU feature discovery
// labels it (nvidia.com/gpu.product, gpu.count, gpu.memory, mig.strategy)
// and mig-parted configures it (nvidia.com/mig.config), allocatable CPU,
// memory, GPUs and MIG devices, and taints. A pool keeps the labels all its
// nodes share. Cordoned nodes (spec.unschedulable) take no new pods and are
// left out, counted in the notes. The level labels its nodes carry
// (nvidia.com/gpu.clique, EKS's network-node-layer-N, NVIDIA topograph's
// and GKE's topology labels) give a pool its NVLink domains, racks and
// blocks where they nest and are each of one size (levels.go).
//
// The package knows nothing of prices or scenarios: the scenarios package
// turns each Pool into a scenario pool and prices it from its catalog by
// instance type.
package nodes
