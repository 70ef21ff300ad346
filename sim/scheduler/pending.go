package scheduler

// Pending calls fn for each queued job not yet bound whole, in queue
// order, until fn returns false: the pods a node provisioner sees pending,
// whether a pass tried them or not. Karpenter and the cluster-autoscaler
// act on the pods kube-scheduler marked unschedulable, and kube-scheduler
// tries every pod; a job that this queue left untried (behind a blocked
// head, past the backfill depth, or in a bucket no node had the GPUs for)
// is such a pod all the same.
func (s *Scheduler) Pending(fn func(*JobInfo) bool) {
	s.inOrder(func(j *JobInfo) bool { return j.Done }, nil, fn)
}
