// Package scheduler runs scheduling cycles over a cluster, modelled on the
// kube-scheduler framework: a queue ordered by a QueueSort plugin, then for
// each job PreFilter -> Filter -> Score -> Reserve -> Permit -> Bind, with
// one small interface per extension point (plugins live in plugins/NAME).
//
// Two departures from kube-scheduler keep large simulations fast without
// changing results. Static node facts (labels, taints, allocatable) are per
// node pool, so PreFilter plugins narrow the candidate set a pool at a time
// (kube's PreFilterResult) and can reject a pool from its aggregates without
// visiting its nodes. Filter and Score plugins take a slice of nodes per
// call rather than one node, so a cycle makes a handful of interface calls,
// not one per node per plugin. Scores must depend only on the pod and the
// node's own state, as in kube-scheduler; the framework relies on it to
// rescore only the chosen node between pods of one job, and to filter and
// score one node per state class (nodes of one pool with the same free
// CPU, memory and GPU capacity and pods of each GPU request class, kept by
// the cluster) rather than every node: the class's first node in the tie
// order wins every tie its class-mates would, so the placements are the
// same at a cost that does not grow with the nodes. A plugin whose scores
// depend on the list it is given (Random) says so as a ListScorer, and
// with it, or with random tie breaks, every node is scored.
//
// A job's pods are allocated inside a cluster.Statement; a Permit plugin
// (Gang) can reject a partial placement, and the statement is discarded, so
// a gang never holds GPUs it cannot use. A job of several pod groups
// (cluster.JobSpec.Groups: an MPIJob's Launcher and Workers) is placed in
// one statement group by group, each group run through PreFilter, Filter
// and Score as a job of its own (cluster.JobSpec.Part), and permitted as
// one gang; its pods bind in order, so the first Bound of them are bound.
// Per-cycle data lives in a typed CycleState, not a string-keyed map.
package scheduler
