// Package cluster models what the scheduler places work on and what it
// places: node pools and their nodes, the GPUs in each node (whole devices,
// and shares of one device for fractional requests), the pods and jobs of a
// workload, and the constraints (node selectors, required node affinity,
// taints and tolerations) that say where a pod may run.
//
// The live state is a Cluster: free CPU, memory and per-GPU capacity for
// every node, plus per-pool aggregates the scheduler uses to reject a pool
// without looking at its nodes. Allocations go through Allocate and Release,
// which check capacity on every call; an over-commit is a bug and is
// reported as an error, never absorbed. A Statement groups allocations so a
// gang is committed or discarded as a unit. Node lifecycle (Launch,
// SetReady, Cordon, Remove) is in lifecycle.go, the state classes the
// GPU-clustering policy reads in classes.go; two views group the rest by
// concept: GPUs (c.GPUs(): physical GPUs, time-slice sharers and speed,
// GPU memory) and MIG (c.MIG(): re-layout of idle GPUs). Each Pool keeps
// its device layout and its time integrals (Usage, Integrals) as parts.
// This package decides nothing about placement.
package cluster
