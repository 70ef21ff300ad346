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
//
// TestComposer (in `make test`) hunts over 800 compositions and logs
// their count, a table of how many had each feature and every failure,
// grouped by the shape of its error (numbers, names and paths taken out);
// every invariant failure is a finding. `make soak` (the tag soak) hunts
// for 8 minutes on another seed. GPUPLAN_COMPOSE_N, GPUPLAN_COMPOSE_SEED,
// GPUPLAN_COMPOSE_TIME and GPUPLAN_SOAK_TIME tune them by hand;
// GPUPLAN_COMPOSE_OUT=DIR writes each shrunk finding to DIR/finding-NN.
// TestComposerFindsPlantedDoubleRelease checks the composer itself: a bug
// planted in the allocation ledger (sim.PlantedBugs, set only by tests) is
// found and shrunk to at most 3 pools and 3 classes.
//
// A third of the compositions are drawn busy: Kueue queues that preempt,
// with a quota the jobs and a service of high priority contend for,
// while nodes fail every 15 minutes to an hour. Drawing each feature on
// its own never gave a service a priority, and so never reached the
// defect of issue 33's Kueue preemption + lost nodes reproduction;
// TestComposerFindsKueuePreemptionLostNodes checks that a bounded hunt
// now finds and shrinks it while it is in the engine.
package compose
