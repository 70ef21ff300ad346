// Package admission models Kueue's quota-based admission in front of the
// scheduler: ResourceFlavors, ClusterQueues with resource groups and
// per-flavor nominal quotas, borrowing and lending limits, cohorts and
// hierarchical cohorts (trees of Cohorts that may hold quota and limits of
// their own: tree.go), StrictFIFO and BestEffortFIFO queueing, workload
// priority, Kueue's classic preemption (withinClusterQueue,
// reclaimWithinCohort, borrowWithinCohort), flavorFungibility, fair
// sharing (weighted dominant-resource shares compared root to leaves:
// fair.go) and the controller side of waitForPodsReady (Evict, Requeue).
//
// The package is cut in Kueue's shape (pkg/scheduler, pkg/cache,
// pkg/queue), each part its own type: the usage a cycle decides against
// is a snapshot (snapshot.go) over one tree of resource nodes shared by
// ClusterQueues and Cohorts (tree.go), whose what-if changes return their
// own undo; the queue manager (queue.go) keeps the pending workloads and
// gives each ClusterQueue's head; the flavor assigner (flavors.go)
// answers with an ordered outcome, NoFit < Preempt < Fit, the borrow flag
// and the group that failed in one small result, asking the preemptor
// (through a one-method oracle) where flavorFungibility stops on
// preemption; the preemptor (preempt.go, fair.go) picks its targets by
// what-if removals and one fill-back. Controller runs the cycle over
// them.
//
// A workload is admitted whole or not at all: every resource it asks for
// must fit the quota of one flavor per resource group, among the flavors
// its pods' node selector, required node affinity and tolerations allow
// (flavors.go, which mirrors Kueue's flavor assigner). An admitted
// workload holds its quota until it finishes or is preempted, whether or
// not its pods have been placed yet; the flavor's node labels then steer
// its pods to the flavor's nodes. A workload of several PodSets
// (Workload.PodSets: a TFJob's Workers and PS) is admitted whole, but
// each PodSet gets its own flavor per resource group it asks for, as
// Kueue's FlavorAssigner.assignFlavors gives them: PodSet by PodSet, in
// order, each flavor's quota checked against the PodSet's requests plus
// what the earlier PodSets were assigned there (the GPU Workers on spot,
// the CPU-only PS on the on-demand flavor listed first). Quota is charged
// per flavor as the sum of the PodSets' assignments there, which
// preemption, borrowing and fair sharing all see; Decision.PodSetFlavors
// steers each PodSet's pods to its own flavors' nodes. Where such a
// workload does not fit, preemption makes room for the PodSet that did
// not, on a flavor its pods may use, for its requests plus the earlier
// PodSets' there (as Kueue's findFlavorForPodSets asks its oracle), then
// assigns the PodSets afresh. The quota a head that would preempt but
// has nothing to preempt reserves is still worked out for all its
// requests on one flavor per group.
//
// The model follows Kueue's behaviour, without Kueue's code: quotas are
// integers in the simulator's units (whole GPUs or MIG instances,
// milli-CPU, MiB). Cycle runs Kueue's scheduling cycles at one instant:
// each takes one head per ClusterQueue, nominates every head against the
// state the cycle starts from, orders them (workloads that do not borrow
// first, then those borrowing from nearer up their cohort tree, then by
// priority, then by creation time; under fair sharing, within a cohort
// tree, by a tournament played Cohort by Cohort: sides that do not borrow
// on what the head asks for first, then by share, picked again after each
// admission) and admits them in turn
// while their nominated flavors still fit. A head that needs preemption evicts its
// targets and holds its quota to the end of the cycle; it is admitted in
// a later cycle, once its victims' quota is back and they are back in
// their queues (Again: the caller stops the victims and cycles again).
// Until then a BestEffortFIFO queue keeps it as its head, ahead of
// workloads of higher priority (Kueue's sticky workload): the victims'
// return brings back what was set aside, but not before it. A head the
// flavor assigner would let in only by preemption, with nothing it may
// preempt, reserves quota for the rest of the cycle (Kueue's
// resourcesToReserve) unless its queue reclaims from any priority.
// Evictions release their quota at once (the simulator keeps a victim's
// pods on their nodes while it writes a last checkpoint, Withdraw keeping
// it out of the queue meanwhile). A BestEffortFIFO workload that does
// not fit is set aside until quota is released in its cohort tree, and
// with it, as Kueue v0.19.2 does by default (SchedulingEquivalenceHashing),
// every workload of its queue its scheduling hash finds alike (same shape
// and Workload.Equiv), pending or queued before that release: the next
// workload of its queue is the head of the next round; a StrictFIFO one
// holds its queue. A head nominated to a flavor but skipped in its round
// (it no longer fits after another's admission) searches on from the
// next flavor in the next round, as Kueue v0.19.2 does by default
// (FlavorFungibilityPreserveScanProgress). Spec.Gates turns either gate
// off (a Kueue Configuration's featureGates); with both off, admission is
// Kueue v0.17.0's. The cross-check
// (validate/xcheck/kueue) runs Kueue's own scheduler on the same inputs.
// The package is pure: it keeps no clock and no random state, and the
// same calls give the same decisions.
//
// Cost: pending workloads are kept in buckets of one shape (priority and
// requests), so a cycle looks at the first of each bucket, never at the
// whole backlog; a workload whose shape failed is not tried again until
// an admission or a release changes what it was tried against
// (Controller counts those changes: Version). Once a round admits nothing
// and the first of every shape left would fail as things stand, the rest
// is set aside at once; a queue whose workloads must be set aside one at
// a time (or one hash at a time) to reach one that may fit does so for at
// most 256 of them at an instant, then sets the rest of each failing
// shape aside at once: a backlog costs a bounded number of rounds. A cycle allocates nothing unless it decides
// something.
package admission
