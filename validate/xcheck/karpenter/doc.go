// Package karpenter cross-checks gpuplan's NodePool provisioning against
// Karpenter's own scheduler (sigs.k8s.io/karpenter, the version gpuplan
// requires): for a batch of pending pods, Scheduler.Solve with the fake
// cloud provider offering the very instance types, allocatable and
// prices gpuplan built for the scenario, and the same batch run through
// gpuplan. Compared: the nodes launched per offering (instance type and
// capacity type), the pods on each offering, the pods left pending and
// the $/h of the launched nodes.
package karpenter
