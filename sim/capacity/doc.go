// Package capacity owns node supply over time: static pools that replace
// lost nodes, cluster-autoscaler-like node groups (min/max, scale-down of
// unneeded nodes), Karpenter-like NodePools (several instance types and
// capacity types; the pending pods packed into NodeClaims as Karpenter's
// scheduler does, each launched on its cheapest offering; limits,
// consolidation), spot
// interruptions with their notice (exponential lifetimes, a trace of
// times, or an availability trace bounding how many nodes a spot pool may
// hold), and node failures.
//
// The Controller decides when nodes come and go; the simulation (its Host)
// carries out what that means for the jobs on them. Its state is in parts,
// each its own type: the fleet (per node slot: generation, emptiness,
// notice), the interruption process (per slot and pool: lifetime and
// failure streams, outages, the availability trace's tick), the
// provisioner (scale-up timing and its dry run, karpenter.go) and the
// Ledger of what happened to each pool. Every random draw comes
// from a stream of the run's seed: each node slot has its own, so the same
// slot sees the same sequence of lifetimes whatever the jobs do.
//
// It prices nothing: a pool's hourly price is an input that orders
// Karpenter's choice of instance type.
package capacity
