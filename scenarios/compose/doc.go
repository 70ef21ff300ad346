// Package compose hunts broken invariants in the space of scenarios users
// write. It composes small random scenarios that combine the features a
// scenario can combine (on-demand, spot, MIG, time-sliced, autoscaled
// pools and Karpenter NodePools; node failures and spot interruptions
// from every model, with and without notice; Kueue with cohorts,
// borrowing, preemption, fair sharing and waitForPodsReady; Volcano
// queues and Volcano Jobs; PriorityClass preemption; gangs; checkpoints;
// services under an HPA, KEDA or the KPA; CronJobs; runs with and without
// a horizon; the spot sensitivity), writes each as the files a user would
// (scenario.yaml, policy manifests, workload manifests, traces), runs it
// as `gpuplan simulate` does, with every invariant checked, and classifies
// the outcome. A composition that breaks an invariant (exit 4, or a
// panic) is shrunk, by removing one piece at a time while it still fails
// the same way, to a minimal scenario and seed, written out as a folder a
// user can run.
//
// Everything is deterministic from a seed: composition n of a hunt seeded
// s is the same scenario on every machine.
package compose
