package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/podtopologyspread"
)

func quota(n int64) admission.Quota {
	return admission.Quota{Nominal: n, BorrowingLimit: admission.NoLimit, LendingLimit: admission.NoLimit}
}

// twoTeams is one flavor (the pool's nodes) shared by team-a (4 GPUs) and
// team-b (2 GPUs).
func twoTeams(cohort string, strategy admission.Strategy, reclaim admission.Policy) *admission.Spec {
	cq := func(name string, gpus int64) admission.ClusterQueue {
		return admission.ClusterQueue{Name: name, Cohort: cohort, Strategy: strategy,
			Preempt: admission.Preemption{ReclaimWithinCohort: reclaim},
			Groups: []admission.ResourceGroup{{
				Covered: []string{"cpu", "memory", "nvidia.com/gpu"},
				Flavors: []admission.FlavorQuotas{{Flavor: "gpu", Resources: []admission.Quota{quota(1 << 20), quota(1 << 30), quota(gpus)}}},
			}}}
	}
	return &admission.Spec{
		Flavors:       []admission.Flavor{{Name: "gpu", NodeLabels: map[string]string{cluster.LabelPool: "p"}}},
		ClusterQueues: []admission.ClusterQueue{cq("team-a", 4), cq("team-b", 2)},
		LocalQueues:   []admission.LocalQueue{{Name: "team-a", ClusterQueue: "team-a"}, {Name: "team-b", ClusterQueue: "team-b"}},
	}
}

func queued(j cluster.JobSpec, q string) cluster.JobSpec { j.Queue = q; return j }

// The two-team example worked by hand: team-b's two-worker job b2 needs
// both of team-b's GPUs. Under BestEffortFIFO the one-GPU b3 behind it is
// admitted at once (2-5 min) and b2 waits for b1 (10 min); under
// StrictFIFO b3 waits behind b2 and runs 15-18 min. team-a's job runs
// 0-20 min either way.
func TestTwoTeamsBestEffortVersusStrict(t *testing.T) {
	jobs := []cluster.JobSpec{
		queued(job("a1", 0, 20*Minute, 2, 2), "team-a"),
		queued(job("b1", 0, 10*Minute, 1, 1), "team-b"),
		queued(job("b2", 1*Minute, 5*Minute, 2, 1), "team-b"),
		queued(job("b3", 2*Minute, 3*Minute, 1, 1), "team-b"),
	}
	pools := []cluster.PoolSpec{pool("p", 3, 2)}
	best := run(t, Config{Pools: pools, Admission: twoTeams("", admission.BestEffortFIFO, admission.Never)}, jobs...)
	tm := times(best)
	require.Equal(t, timing{0, 20 * Minute}, tm["a1"])
	require.Equal(t, timing{0, 10 * Minute}, tm["b1"])
	require.Equal(t, timing{2 * Minute, 5 * Minute}, tm["b3"])
	require.Equal(t, timing{10 * Minute, 15 * Minute}, tm["b2"])
	b2 := best.Jobs[2]
	require.Equal(t, 10*Minute, b2.Admitted, "admitted only when both of team-b's GPUs are free")
	require.Equal(t, "ClusterQueue team-b: couldn't assign flavors: insufficient unused quota in flavor gpu for nvidia.com/gpu (1 more needed)", best.Reasons[b2.Reason])

	strict := times(run(t, Config{Pools: pools, Admission: twoTeams("", admission.StrictFIFO, admission.Never)}, jobs...))
	require.Equal(t, timing{10 * Minute, 15 * Minute}, strict["b2"])
	require.Equal(t, timing{15 * Minute, 18 * Minute}, strict["b3"])
	require.Equal(t, timing{0, 20 * Minute}, strict["a1"])
}

// A StrictFIFO head that can never fit (issue 26, Kueue cross-check r006):
// team-b's x asks for 3 GPUs in one pod, more than team-b's 2 GPUs of
// quota (no cohort to borrow from) and more than any node's 2 GPUs. Kueue
// queues its Workload all the same (it knows quotas, not nodes) and
// requeues a StrictFIFO head that does not fit straight back at the head
// (pkg/cache/queue ClusterQueue.RequeueIfNotPresent: immediate unless the
// namespace does not match), so the one-GPU s behind it is never
// admitted; under BestEffortFIFO s is admitted on arrival and runs 1-4
// min. team-a's a1 runs 0-20 min either way.
func TestStrictFIFOHeadThatNeverFitsBlocksItsQueue(t *testing.T) {
	jobs := []cluster.JobSpec{
		queued(job("a1", 0, 20*Minute, 2, 2), "team-a"),
		queued(job("x", 0, 5*Minute, 1, 3), "team-b"),
		queued(job("s", 1*Minute, 3*Minute, 1, 1), "team-b"),
	}
	pools := []cluster.PoolSpec{pool("p", 3, 2)}
	strict := run(t, Config{Pools: pools, Admission: twoTeams("", admission.StrictFIFO, admission.Never)}, jobs...)
	require.Equal(t, timing{0, 20 * Minute}, times(strict)["a1"])
	x, s := strict.Jobs[1], strict.Jobs[2]
	require.Equal(t, []Outcome{Pending, Pending}, []Outcome{x.Outcome, s.Outcome}, "x waits in team-b's queue, s behind it")
	require.Equal(t, []Time{-1, -1}, []Time{x.Admitted, s.Admitted})

	best := run(t, Config{Pools: pools, Admission: twoTeams("", admission.BestEffortFIFO, admission.Never)}, jobs...)
	require.Equal(t, timing{1 * Minute, 4 * Minute}, times(best)["s"])
	require.Equal(t, Pending, best.Jobs[1].Outcome, "x is queued, never admitted")
	// Reported pending, it still says it can never run, and why it waits.
	require.Equal(t, "never schedulable, queued all the same as Kueue counts quota, not nodes: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.; "+
		"ClusterQueue team-b: couldn't assign flavors: insufficient unused quota in flavor gpu for nvidia.com/gpu (1 more needed)",
		best.Jobs[1].Diagnosis())
}

// A job that fits its quota but no node (issue 26): Kueue admits by quota,
// so team-a's big (one pod of 3 GPUs; team-a's quota is 4, every node has
// 2) is admitted on arrival and holds 3 of team-a's 4 GPUs for good while
// its pod stays pending. a2 (2 GPUs) at 1 min finds 1 GPU of quota left
// and is never admitted; a3 (1 GPU) at 2 min is admitted at once and runs
// 2-5 min past big's pending pod (kube-scheduler's queue, the scenarios'
// default). Before, big was unschedulable on arrival and held nothing, so
// a2 was admitted at 1 min.
func TestJobThatFitsQuotaButNoNodeIsAdmittedAndHoldsItsQuota(t *testing.T) {
	jobs := []cluster.JobSpec{
		queued(job("big", 0, 5*Minute, 1, 3), "team-a"),
		queued(job("a2", 1*Minute, 10*Minute, 1, 2), "team-a"),
		queued(job("a3", 2*Minute, 3*Minute, 1, 1), "team-a"),
	}
	pools := []cluster.PoolSpec{pool("p", 3, 2)}
	res := run(t, Config{Pools: pools, Queue: scheduler.QueueConfig{Policy: scheduler.SchedulingQueue},
		Admission: twoTeams("", admission.BestEffortFIFO, admission.Never)}, jobs...)
	big, a2, a3 := res.Jobs[0], res.Jobs[1], res.Jobs[2]
	require.Equal(t, []Outcome{Pending, Pending, Completed}, []Outcome{big.Outcome, a2.Outcome, a3.Outcome})
	require.Equal(t, []Time{0, -1, 2 * Minute}, []Time{big.Admitted, a2.Admitted, a3.Admitted})
	require.Equal(t, timing{2 * Minute, 5 * Minute}, times(res)["a3"])
	require.Equal(t, "never schedulable, queued all the same as Kueue counts quota, not nodes: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.; "+
		"admitted, it holds its quota while its pods stay pending", big.Diagnosis())
}

// Reclaim at run time: team-b's 6-GPU training job (60 min of work, a
// checkpoint every 10 min that takes 1 min to write) borrows team-a's 4
// GPUs; at 25 min team-a asks for 2 and takes them back. By hand: b1 wrote
// at 10-11 and 21-22 and computed 3 min more. Its pods given 30 s, too
// short for a write, it stops at once keeping 20 min and losing 3; a1
// runs 25-35; b1, readmitted when a1 ends, runs its last 40 min and 3
// writes from 35 to 78. team-b borrowed 4 GPUs for 25 + 43 min. Given the
// default grace, b1 writes everything (23 min) by 26 with its pods still
// on the nodes: a1, admitted at 25, runs 26-36, and b1 its last 37 min (3
// writes) from 36 to 76, losing nothing.
func TestReclaimEvictsAndResumesFromCheckpoint(t *testing.T) {
	b1 := queued(job("b1", 0, 60*Minute, 3, 2), "team-b")
	b1.Recovery = &cluster.Recovery{CheckpointInterval: 10 * Minute, CheckpointCost: Minute, BackoffLimit: 6, TerminationGrace: 30 * Second}
	a1 := queued(job("a1", 25*Minute, 10*Minute, 1, 2), "team-a")
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 3, 2)}, Admission: twoTeams("org", admission.BestEffortFIFO, admission.Any)}, b1, a1)
	tm := times(res)
	require.Equal(t, timing{25 * Minute, 35 * Minute}, tm["a1"])
	require.Equal(t, timing{0, 78 * Minute}, tm["b1"])
	rb := res.Jobs[0]
	require.Equal(t, int32(1), rb.Preemptions)
	require.Equal(t, 3*Minute, rb.LostMs)
	require.Equal(t, int32(2), rb.Attempts)
	require.Equal(t, Completed, rb.Outcome)
	qa, qb := res.Admission.Queues[0], res.Admission.Queues[1]
	require.Equal(t, 1, qa.PreemptionsCaused)
	require.Equal(t, 1, qa.Reclaims)
	require.Equal(t, 2, qb.Admissions)
	require.InDelta(t, float64(68*Minute*4), qb.BorrowedGPUMs, 1e-6)
	require.InDelta(t, float64(68*Minute*4), qa.LentGPUMs, 1e-6)
	require.InDelta(t, float64(10*Minute*2), qa.UsedGPUMs, 1e-6)

	graceful := b1
	gr := *b1.Recovery
	gr.TerminationGrace = 0
	graceful.Recovery = &gr
	res = run(t, Config{Pools: []cluster.PoolSpec{pool("p", 3, 2)}, Admission: twoTeams("org", admission.BestEffortFIFO, admission.Any)}, graceful, a1)
	tm = times(res)
	require.Equal(t, timing{26 * Minute, 36 * Minute}, tm["a1"])
	require.Equal(t, timing{0, 76 * Minute}, tm["b1"])
	require.Equal(t, Time(0), res.Jobs[0].LostMs)
	require.Equal(t, int32(2), res.Jobs[0].Attempts)
	require.Equal(t, int32(1), res.Jobs[0].Preemptions)

	// Cut at 30 min, while b1 waits for admission again: it is pending,
	// started once and preempted once (the books of a run cut there
	// balance: a bug once called it running with no pods). Back in its
	// queue, it was tried in the cycle after its eviction, as Kueue
	// tries it: its reason is that cycle's.
	res = run(t, Config{Pools: []cluster.PoolSpec{pool("p", 3, 2)}, Horizon: 30 * Minute, Admission: twoTeams("org", admission.BestEffortFIFO, admission.Any)}, b1, a1)
	rb = res.Jobs[0]
	require.Equal(t, Pending, rb.Outcome)
	require.Equal(t, Time(0), rb.Start)
	require.Equal(t, int32(1), rb.Preemptions)
	require.Contains(t, rb.Diagnosis(), "ClusterQueue team-b: couldn't assign flavors: insufficient unused quota in flavor gpu for nvidia.com/gpu (2 more needed)")
}

func TestUnknownLocalQueueIsAnError(t *testing.T) {
	_, err := Run(Config{Pools: []cluster.PoolSpec{pool("p", 1, 2)}, Admission: twoTeams("", admission.BestEffortFIFO, admission.Never),
		Workload: &SliceSource{Jobs: []cluster.JobSpec{queued(job("x", 0, Minute, 1, 1), "team-c")}}})
	require.ErrorContains(t, err, `queue "team-c": no such LocalQueue "team-c"`)
}

// waitForPodsReady: team-a's 8-GPU job is admitted at once, but its node
// takes 10 min to boot in an empty autoscaled pool. With Kueue's 5-minute
// timeout it is evicted at 5, requeued after 60 s and admitted at 6, and
// runs from 10 when the node is Ready. With 2 minutes it is evicted at 2
// (readmitted at 3), 5 (at 5 + 120 s = 7) and 9 (at 9 + 240 s = 13), and
// runs from 13. With backoffLimitCount 2 the third eviction, at 9,
// deactivates it.
func TestWaitForPodsReady(t *testing.T) {
	spec := &capacity.Spec{
		Pools:  []capacity.Pool{{Provisioning: 10 * Minute, Group: 0}},
		Groups: []capacity.Group{{Name: "ca", Kind: capacity.Autoscaler, Pools: []int32{0}, MaxNodes: 1, ScaleDownUnneeded: 10 * Minute, ScaleDownDelayAfterAdd: 10 * Minute}},
	}
	p := pool("p", 0, 8)
	p.MaxNodes = 1
	for _, tc := range []struct {
		timeout  Time
		limit    int32
		start    Time
		timeouts int
		outcome  Outcome
	}{
		{5 * Minute, -1, 10 * Minute, 1, Completed},
		{2 * Minute, -1, 13 * Minute, 3, Completed},
		{2 * Minute, 2, -1, 3, Failed},
	} {
		adm := twoTeams("", admission.BestEffortFIFO, admission.Never)
		adm.ClusterQueues[0].Groups[0].Flavors[0].Resources[2] = quota(8)
		adm.WaitForPodsReady = &admission.WaitForPodsReady{Timeout: tc.timeout, BackoffBase: Minute, BackoffMax: Hour, BackoffLimit: tc.limit}
		res := run(t, Config{Pools: []cluster.PoolSpec{p}, Capacity: spec, Admission: adm}, queued(job("big", 0, Hour, 1, 8), "team-a"))
		j := res.Jobs[0]
		require.Equal(t, tc.outcome, j.Outcome, "timeout %d", tc.timeout)
		require.Equal(t, tc.start, j.Start)
		require.Equal(t, tc.timeouts, res.Admission.Queues[0].PodsReadyTimeouts)
		if tc.outcome == Failed {
			require.Equal(t, 9*Minute, j.End)
			require.Equal(t, "Deactivated by Kueue: not PodsReady within 2m0s 3 times (waitForPodsReady backoffLimitCount 2)", j.Diagnosis())
			require.Equal(t, 1, res.Admission.Queues[0].Deactivated)
		}
	}
}

// blockAdmission: with two 8-GPU jobs and nodes that boot in 10 min, the
// second is admitted only once the first runs (10 min); its node is then
// launched and it runs from 20. Without blocking both are admitted at
// once, two nodes launch together, and both run from 10.
func TestWaitForPodsReadyBlockAdmission(t *testing.T) {
	spec := &capacity.Spec{
		Pools:  []capacity.Pool{{Provisioning: 10 * Minute, Group: 0}},
		Groups: []capacity.Group{{Name: "ca", Kind: capacity.Autoscaler, Pools: []int32{0}, MaxNodes: 2, ScaleDownUnneeded: 10 * Minute, ScaleDownDelayAfterAdd: 10 * Minute}},
	}
	p := pool("p", 0, 8)
	p.MaxNodes = 2
	for _, block := range []bool{false, true} {
		adm := twoTeams("", admission.BestEffortFIFO, admission.Never)
		adm.ClusterQueues[0].Groups[0].Flavors[0].Resources[2] = quota(16)
		adm.WaitForPodsReady = &admission.WaitForPodsReady{Timeout: Hour, BackoffBase: Minute, BackoffMax: Hour, BackoffLimit: -1, BlockAdmission: block}
		res := run(t, Config{Pools: []cluster.PoolSpec{p}, Capacity: spec, Admission: adm, Queue: scheduler.QueueConfig{Backfill: true}},
			queued(job("one", 0, Hour, 1, 8), "team-a"), queued(job("two", 0, Hour, 1, 8), "team-a"))
		two := res.Jobs[1]
		if block {
			require.Equal(t, [2]Time{10 * Minute, 20 * Minute}, [2]Time{two.Admitted, two.Start})
		} else {
			require.Equal(t, [2]Time{0, 10 * Minute}, [2]Time{two.Admitted, two.Start})
		}
	}
}

// A job's topology spread constraints hold under Kueue admission as
// without it (they were dropped with the flavor's node labels added).
// Three 2-GPU nodes, one a zone; w asks for 3 one-GPU pods at most one
// zone apart (maxSkew 1, DoNotSchedule): one pod a node, so every node
// keeps one GPU free and b's 2-GPU pod, submitted at 1 min, waits for w's
// end at 30 min. Packed (the constraint lost), w would leave a node free
// and b start at 1 min.
func TestSpreadConstraintsHoldUnderKueue(t *testing.T) {
	p := pool("p", 3, 2)
	p.Zones = []string{"z1", "z2", "z3"}
	web := &cluster.PodLabels{Labels: map[string]string{"app": "web"}}
	w := queued(job("w", 0, 30*Minute, 3, 1), "team-a")
	w.Pod.Labels = web
	w.Constraints = &cluster.Constraints{Spread: []cluster.SpreadConstraint{{MaxSkew: 1, TopologyKey: cluster.LabelZone, DoNotSchedule: true,
		Selector: []cluster.Requirement{{Key: "app", Op: cluster.OpIn, Values: []string{"web"}}}}}}
	b := queued(job("b", 1*Minute, 5*Minute, 1, 2), "team-b")
	for _, adm := range []*admission.Spec{nil, twoTeams("", admission.BestEffortFIFO, admission.Never)} {
		prof := append(plugins.Default(), scheduler.PluginConfig{Name: podtopologyspread.Name, Weight: podtopologyspread.DefaultWeight})
		tm := times(run(t, Config{Pools: []cluster.PoolSpec{p}, Admission: adm, Plugins: prof}, w, b))
		require.Equal(t, timing{0, 30 * Minute}, tm["w"], "kueue %v", adm != nil)
		require.Equal(t, timing{30 * Minute, 35 * Minute}, tm["b"], "kueue %v", adm != nil)
	}
}

// A job's Equiv is what Kueue's scheduling hash reads of its pod
// templates beyond admission's shape: 2 pods of 1 GPU and 1 pod of 2 GPUs
// ask for the same (2 GPUs) but are not alike; neither are two jobs whose
// tolerations differ, though no flavor may care; equal constraints in two
// objects are alike.
func TestAdmissionEquivReadsPodTemplates(t *testing.T) {
	a := &admState{}
	job := func(replicas, gpus int32, c *cluster.Constraints) *cluster.JobSpec {
		return &cluster.JobSpec{Replicas: replicas, Pod: cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 4096, GPUs: gpus}, Constraints: c}
	}
	tol := func(v string) *cluster.Constraints {
		return &cluster.Constraints{NodeSelector: map[string]string{"k": "v"}, Tolerations: []cluster.Toleration{{Key: "dedicated", Operator: "Equal", Value: v, Effect: cluster.NoSchedule}}}
	}
	require.Equal(t, a.equiv(job(2, 1, nil)), a.equiv(job(2, 1, nil)))
	require.NotEqual(t, a.equiv(job(2, 1, nil)), a.equiv(job(1, 2, nil)))
	require.Equal(t, a.equiv(job(1, 2, tol("f1"))), a.equiv(job(1, 2, tol("f1"))))
	require.NotEqual(t, a.equiv(job(1, 2, tol("f1"))), a.equiv(job(1, 2, tol("f2"))))
	require.NotEqual(t, a.equiv(job(1, 2, nil)), a.equiv(job(1, 2, tol("f1"))))
}
