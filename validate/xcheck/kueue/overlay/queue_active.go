// Added to the vendored sigs.k8s.io/kueue/pkg/cache/queue by the
// cross-check (go build -overlay, see overlay.json); no line of Kueue is
// edited. It counts the active ClusterQueues with a workload to pop, so
// that the driver never calls Heads, which blocks when there is none.

package queue

// ActivePending is the number of workloads in the heaps of the active
// ClusterQueues (not the inadmissible ones set aside): Heads returns at
// least one workload exactly when it is not 0.
func (m *Manager) ActivePending() int {
	m.RLock()
	defer m.RUnlock()
	n := 0
	for cqName, cq := range m.hm.ClusterQueues() {
		if m.statusChecker != nil && !m.statusChecker.ClusterQueueActive(cqName) {
			continue
		}
		n += cq.heap.Len()
	}
	return n
}
