package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// A plain run builds each job's record as the job finishes and drops the
// job table's chunks as they empty, reusing them once the scheduler holds
// no finished job; a run with preemption on builds every record at the
// end. With every priority equal preemption never fires, so the two must
// agree record for record, whatever the records hint: on a cluster that
// queues (finished jobs linger in the queue's buckets) and on one that
// does not (chunks are reused).
func TestRecordsAsJobsFinishEqualRecordsAtTheEnd(t *testing.T) {
	for _, nodes := range []int{2, 64} {
		t.Run(fmt.Sprintf("nodes=%d", nodes), func(t *testing.T) { recordsAgree(t, nodes) })
	}
}

func recordsAgree(t *testing.T, nodes int) {
	const n = 6000 // six chunks of the job table and of the records
	var jobs []cluster.JobSpec
	unschedulable := 0
	for i := 0; i < n; i++ {
		g := int32(1) << (i % 4)
		j := job(fmt.Sprintf("j%d", i), Time(i)*10*Second, Time(1+i%7)*40*Second, 1, g)
		if i%100 == 7 {
			j.Pod.GPUs = 16 // no 8-GPU node holds it
			unschedulable++
		}
		if i%50 == 3 {
			j.Deadline = j.Submit + 5*Second
		}
		jobs = append(jobs, j)
	}
	// 2 nodes: 16 GPUs offered about 3.75 x 160 s / 10 s = 60, a queue
	// builds up, and the horizon leaves jobs running and pending.
	horizon := Time(n) * 10 * Second / 2
	cfg := Config{Pools: []cluster.PoolSpec{pool("p", nodes, 8)}, Horizon: horizon}
	atEnd := cfg
	atEnd.Preemption = true
	want := run(t, atEnd, jobs...)
	require.Len(t, want.Jobs, n/2, "jobs submitted before the horizon")
	counts := map[Outcome]int{}
	for i, r := range want.Jobs {
		require.Equal(t, int32(i), r.ID)
		counts[r.Outcome]++
	}
	require.Equal(t, unschedulable/2, counts[Unschedulable])
	require.Positive(t, counts[Completed])
	require.Positive(t, counts[Running])
	if nodes == 2 {
		require.Positive(t, counts[Abandoned])
		require.Positive(t, counts[Pending])
	}
	for _, hint := range []int{0, n / 2, 100, 10 * n} {
		cfg.JobsHint = hint
		got := run(t, cfg, jobs...)
		require.Equal(t, want.Jobs, got.Jobs, "hint %d", hint)
	}
}
