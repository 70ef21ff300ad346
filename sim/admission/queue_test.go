package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pendingBuilder builds a queue manager over one ClusterQueue and
// workloads asking for GPUs only (one resource), at a priority and
// creation time.
type pendingBuilder struct {
	t *testing.T
	q queueManager
}

func pendingQueues(t *testing.T) *pendingBuilder {
	t.Helper()
	b := &pendingBuilder{t: t}
	if err := b.q.init([]LocalQueue{{Name: "lq", ClusterQueue: "cq"}}, []ClusterQueue{{Name: "cq"}}); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *pendingBuilder) add(id int32, prio int32, created, gpus int64) *pendingBuilder {
	x := b.q.newWorkload(Workload{ID: id, Queue: "lq", Priority: prio, Created: created}, 0, 1)
	x.req[0], x.gpus = gpus, gpus
	b.q.wls.put(id, x)
	b.q.insert(x)
	return b
}

func headID(q *queueManager, cycle uint64) int32 {
	if x := q.head(0, cycle); x != nil {
		return x.ID
	}
	return -1
}

// The head is the first in queue order (higher priority, then older, then
// lower id) over the queue's buckets: workloads 1 (priority 0, created 5,
// 2 GPUs), 2 (priority 1, created 9, 4 GPUs) and 3 (priority 0, created
// 3, 2 GPUs): 2 first, then 3 (older than 1), then 1. Pending demand is
// 2+4+2 = 8 GPUs in 3 workloads; each dequeue takes its share off.
func TestQueueManagerHeads(t *testing.T) {
	b := pendingQueues(t).add(1, 0, 5, 2).add(2, 1, 9, 4).add(3, 0, 3, 2)
	q := &b.q
	if q.pending[0].gpus != 8 || q.pending[0].n != 3 {
		t.Fatalf("pending %d GPUs in %d, want 8 in 3", q.pending[0].gpus, q.pending[0].n)
	}
	var order []int32
	for x := q.head(0, 1); x != nil; x = q.head(0, 1) {
		order = append(order, x.ID)
		q.dequeue(x)
	}
	if d := cmp.Diff([]int32{2, 3, 1}, order); d != "" {
		t.Errorf("heads in order (-want +got):\n%s", d)
	}
	if q.pending[0].gpus != 0 || q.pending[0].n != 0 {
		t.Errorf("pending after every dequeue: %d GPUs in %d, want none", q.pending[0].gpus, q.pending[0].n)
	}
	// A dequeued workload queued again goes back in its place.
	q.insert(q.wls.get(3))
	if got := headID(q, 1); got != 3 {
		t.Errorf("head after requeue: %d, want 3", got)
	}
}

// A bucket set aside in a cycle hides its workloads from that cycle's
// heads only: the 2-GPU bucket (workloads 1 and 3) set aside in cycle 7
// leaves the 4-GPU workload 2 (priority 0 here, created last) as the head;
// in cycle 8 workload 3 (created 3) is first again.
func TestQueueManagerSetAside(t *testing.T) {
	b := pendingQueues(t).add(1, 0, 5, 2).add(2, 0, 9, 4).add(3, 0, 3, 2)
	q := &b.q
	q.wls.get(3).bucket.skipped = 7
	if got := headID(q, 7); got != 2 {
		t.Errorf("head in cycle 7: %d, want 2", got)
	}
	if got := headID(q, 8); got != 3 {
		t.Errorf("head in cycle 8: %d, want 3", got)
	}
}

// Withdrawing changes the pending demand's version; a dequeue for an
// admission does not (the usage's version moves instead), and a
// forgotten workload is kept for reuse with its request array.
func TestQueueManagerVersionsAndReuse(t *testing.T) {
	b := pendingQueues(t).add(1, 0, 1, 2).add(2, 0, 2, 2)
	q := &b.q
	v := q.pver
	q.dequeue(q.wls.get(1))
	if q.pver != v {
		t.Errorf("dequeue moved the pending version %d -> %d", v, q.pver)
	}
	x := q.wls.get(2)
	q.withdraw(x)
	if q.pver != v+1 {
		t.Errorf("withdraw: pending version %d, want %d", q.pver, v+1)
	}
	q.forget(x)
	if q.wls.get(2) != nil {
		t.Error("forgotten workload still found by id")
	}
	y := q.newWorkload(Workload{ID: 9, Queue: "lq"}, 0, 1)
	if y != x || y.req[0] != 0 {
		t.Errorf("newWorkload did not reuse the forgotten one cleared (same: %v, req %v)", y == x, y.req)
	}
}
