package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// backoffPreemption is one ClusterQueue of 2 GPUs that preempts lower
// priorities within itself, over one 2-GPU spot node that a trace
// interrupts at 30 min without notice and the pool replaces at once.
func backoffPreemption() Config {
	cq := admission.ClusterQueue{Name: "q", Strategy: admission.BestEffortFIFO,
		Preempt: admission.Preemption{WithinClusterQueue: admission.LowerPriority},
		Groups: []admission.ResourceGroup{{
			Covered: []string{"cpu", "memory", "nvidia.com/gpu"},
			Flavors: []admission.FlavorQuotas{{Flavor: "gpu", Resources: []admission.Quota{quota(1 << 20), quota(1 << 30), quota(2)}}},
		}}}
	return Config{
		Pools: []cluster.PoolSpec{pool("p", 1, 2)},
		Capacity: &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.Spot, Replace: true, Group: -1,
			Interruptions: capacity.Process{Times: []Time{30 * Minute}}}}},
		Admission: &admission.Spec{
			Flavors:       []admission.Flavor{{Name: "gpu", NodeLabels: map[string]string{cluster.LabelPool: "p"}}},
			ClusterQueues: []admission.ClusterQueue{cq},
			LocalQueues:   []admission.LocalQueue{{Name: "q", ClusterQueue: "q"}},
		},
	}
}

// A job that loses its node waits out the Job controller's restart
// backoff (10 s) while its workload stays admitted. Kueue preempting it in
// that window and admitting it again before the window ends must not let
// it start before the backoff does, nor twice: the backoff's own requeue
// once restarted the job a second time while it ran ("job 0 has 2
// placements for 1 bound pods of 1", or, when it failed meanwhile, "node
// N still lists jobs after its eviction").
//
// By hand: low (1 GPU, 60 min, priority 0) runs from 0; the node goes at
// 30 min, so low restarts from scratch at 30 min 10 s. high (2 GPUs, 3 s,
// priority 10) arrives at 30 min 2 s, preempts low's admitted workload and
// runs 30:02-30:05; low is admitted again at 30:05, starts when its
// backoff ends (30:10) and ends 60 min later.
func TestPreemptedDuringRestartBackoffWaitsItOut(t *testing.T) {
	low := queued(job("low", 0, 60*Minute, 1, 1), "q")
	high := queued(job("high", 30*Minute+2*Second, 3*Second, 1, 2), "q")
	high.Priority = 10
	res := run(t, backoffPreemption(), low, high)
	tm := times(res)
	require.Equal(t, timing{30*Minute + 2*Second, 30*Minute + 5*Second}, tm["high"])
	require.Equal(t, timing{0, 90*Minute + 10*Second}, tm["low"])
	l := res.Jobs[0]
	require.Equal(t, Completed, l.Outcome)
	require.Equal(t, int32(2), l.Attempts)
	require.Equal(t, int32(1), l.Disruptions)
	require.Equal(t, int32(1), l.Failures)
	require.Equal(t, int32(1), l.Preemptions)
	require.Equal(t, 30*Minute, l.LostMs, "no checkpoints: the first attempt's 30 min are lost")
	// Pending job time: high waits for nothing; low is pending only while
	// it waits for admission again (30:02-30:05), not in its backoff.
	var pendingMs int64
	for _, v := range res.Timeline.PendingJobMs {
		pendingMs += v
	}
	require.Equal(t, int64(3*Second), pendingMs)

	// Its deadline passing after it is admitted again and before its
	// backoff ends: it fails when the backoff ends, as a job in backoff
	// outside admission does, and is counted once.
	d := low
	d.Recovery = &cluster.Recovery{BackoffLimit: 6, ActiveDeadline: 30*Minute + 8*Second}
	res = run(t, backoffPreemption(), d, high)
	l = res.Jobs[0]
	require.Equal(t, Failed, l.Outcome)
	require.Equal(t, 30*Minute+10*Second, l.End)
	require.Contains(t, l.Diagnosis(), "DeadlineExceeded")
	require.Equal(t, int32(1), l.Attempts)
}
