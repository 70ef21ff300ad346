package scheduler

import "math/bits"

// Pending calls fn for each queued job not yet bound whole, in queue
// order, until fn returns false: the pods a node provisioner sees pending,
// whether a pass tried them or not. Karpenter and the cluster-autoscaler
// act on the pods kube-scheduler marked unschedulable, and kube-scheduler
// tries every pod; a job that this queue left untried (behind a blocked
// head, past the backfill depth, or in a bucket no node had the GPUs for)
// is such a pod all the same.
func (s *Scheduler) Pending(fn func(*JobInfo) bool) {
	var cur [numBuckets]int
	for {
		var next *JobInfo
		nb := -1
		for w := 0; w < maskWords; w++ {
			for m := s.occupied[w]; m != 0; m &= m - 1 {
				bi := w<<6 | bits.TrailingZeros64(m)
				bk := &s.buckets[bi]
				cur[bi] = max(cur[bi], bk.head)
				for cur[bi] < len(bk.jobs) && bk.jobs[cur[bi]].Done {
					cur[bi]++
				}
				if cur[bi] == len(bk.jobs) {
					continue
				}
				if j := bk.jobs[cur[bi]]; next == nil || s.less(j, next) {
					next, nb = j, bi
				}
			}
		}
		if next == nil || !fn(next) {
			return
		}
		cur[nb]++
	}
}
