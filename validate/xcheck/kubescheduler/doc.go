// Package kubescheduler cross-checks gpuplan's scheduler (sim/scheduler and
// its plugins) against kube-scheduler's own code (k8s.io/kubernetes
// pkg/scheduler, v1.37.2) run in-process on a fake clientset: the same
// nodes (cpu, memory, nvidia.com/gpu, labels, taints) and the same GPU pods
// (requests, nodeSelector, tolerations), fed one at a time in the same
// order, nothing ever finishing. Every decision of the real scheduler (the
// node a pod is bound to, or none) is compared with gpuplan's, nodes of one
// node type being interchangeable; where the two differ the driver scores
// both nodes with gpuplan's score plugins and accepts the difference only
// as a tie the real scheduler broke otherwise (in v1.37.2 by heap order
// among equal scores, not at random). Where ties are common the
// bound counts and pods-per-node of repeated runs are also compared, with
// gpuplan under random tie breaks, as
// distributions (Mann-Whitney U).
package kubescheduler
