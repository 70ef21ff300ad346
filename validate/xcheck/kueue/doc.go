// Package kueue cross-checks gpuplan's Kueue admission (sim/admission)
// against Kueue's own code (sigs.k8s.io/kueue, the version gpuplan
// requires): its scheduler, caches, queue manager and workload handlers
// run in-process on a fake client, with a fake clock that the driver moves
// from one arrival or finish to the next. The same policy (ResourceFlavors,
// Cohorts, ClusterQueues, LocalQueues) and the same jobs (arrival, duration,
// pods, queue, priority) go through gpuplan's sim.Run; compared per job:
// first admission, end and number of preemptions.
//
// Two small files (overlay/) are added to a vendored copy of Kueue with
// go build -overlay: they export one scheduling cycle, the admission-
// routine wrapper and a count of the workloads Heads would return. No line
// of Kueue is edited. Run it with `make xcheck`, which vendors first;
// XCHECK_KUEUE_GATES=NAME=false,... sets Kueue's feature gates for a run
// (gates_test.go), and gpuplan's through the random policies' Kueue
// Configuration, to tell which of Kueue's defaults a difference comes
// from.
package kueue
