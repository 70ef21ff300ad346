package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// replicaPod is one GPU, 4 CPUs and 16 GiB.
var replicaPod = cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 16 << 10, GPUs: 1}

// light is a batching model far from its capacity at the rates used here:
// a batch of up to 8 in 5 + 1 x n ms, 615 requests/s a replica.
var light = serving.Batch{Size: 8, MaxDelayMs: 10, BaseMs: 5, PerItemMs: 1}

func service(name string, rate float64, b serving.Batch) ServiceConfig {
	return ServiceConfig{Spec: services.Spec{Name: name, Load: serving.Load{Base: rate}, Batch: b}, Pod: replicaPod}
}

// Two fixed replicas on an empty cluster for 10 h, each cold-starting for
// 1 min of image pull and 2 min of model load: both are bound at 0 and
// ready at 3 min, so ReadyHours = 2 x (10 h - 3 min) = 19.9 and the
// replica pods hold 2 GPUs for the whole 10 h: 20 GPU-hours, in the
// service's usage and in the pool's allocation. A one-hour, one-GPU job
// beside them is job 0 of the result, whatever the replica pods' entries.
func TestFixedReplicasColdStartByHand(t *testing.T) {
	svc := service("bert", 50, light)
	svc.MinReplicas, svc.MaxReplicas, svc.InitialReplicas = 2, 2, 2
	svc.ImagePull, svc.ModelLoad = Minute, 2*Minute
	var last Progress
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 4)}, Horizon: 10 * Hour, Services: []ServiceConfig{svc},
		Progress: func(p Progress) { last = p }, ProgressEvery: 1},
		job("train", 0, Hour, 1, 1))
	require.Equal(t, 1, last.Submitted, "progress counts the job, not the replica pods")
	require.Equal(t, 1, last.Finished)

	require.Len(t, res.Services, 1)
	s := res.Services[0]
	require.Equal(t, 2, s.ColdStarts)
	require.Equal(t, float64(3*Minute), s.ColdStartMs)
	require.InDelta(t, 2*(10-0.05), s.ReadyHours, 1e-9)
	require.InDelta(t, 20.0, s.ReplicaHours, 1e-9)
	gpuMs := int64(2 * cluster.MilliGPU * 10 * Hour)
	require.Len(t, s.Usage, 1)
	require.Equal(t, gpuMs, s.Usage[0].Held[ResGPU])
	require.Equal(t, int64(2*4000*10*Hour), s.Usage[0].Held[ResCPU])
	require.Equal(t, gpuMs+int64(cluster.MilliGPU*Hour), res.Pools[0].AllocatedMilliMs, "the replicas' GPUs are allocation, with the job's")

	// The job is the only job record, numbered 0, and the only job in the
	// running-job series: one hour of it.
	require.Len(t, res.Jobs, 1)
	require.Equal(t, int32(0), res.Jobs[0].ID)
	require.Equal(t, "train", res.Jobs[0].Name)
	require.Equal(t, Completed, res.Jobs[0].Outcome)
	var runMs, pendMs int64
	for i := range res.Timeline.RunningJobMs {
		runMs += res.Timeline.RunningJobMs[i]
		pendMs += res.Timeline.PendingJobMs[i]
	}
	require.Equal(t, int64(Hour), runMs)
	require.Equal(t, int64(0), pendMs)
	require.Equal(t, 10*Hour, res.End, "a run with services runs to its horizon")

	// 50 requests/s for 10 h all arrive and are served (those of the first
	// 3 min once the replicas are ready); nothing waits at the end.
	require.InDelta(t, 50*36000.0, s.Arrived, 1e-6)
	require.InDelta(t, s.Arrived, s.Served, 1e-6)
	require.Zero(t, s.Dropped)

	// One point an hour: the first has the 3 min cold start in it.
	require.Len(t, s.Timeline, 10)
	require.InDelta(t, 2*57.0/60, s.Timeline[0].Ready, 1e-9)
	for i, p := range s.Timeline {
		require.InDelta(t, 50, p.Rate, 1e-9, "bucket %d", i)
		require.InDelta(t, 2, p.Replicas, 1e-9)
		require.InDelta(t, 2, p.GPUs, 1e-9)
		if i > 0 {
			require.InDelta(t, 2, p.Ready, 1e-9)
			require.InDelta(t, 50*3600.0, p.Served, 1e-6)
			require.Greater(t, p.P95Ms, light.ServiceMs(1))
		}
	}
}

// Fixed replicas of a model serving one request in 10 ms (100/s each),
// ready at once. Two of them at 150/s are 75% busy: everything is served.
// One of them at 150/s with a queue of 50 is overloaded: it serves 100/s,
// keeps 50 waiting and drops the rest, (150 - 100) x 3600 - 50 = 179,950
// in the hour; arrived = served + dropped + waiting.
func TestFixedReplicasLoadAndOverload(t *testing.T) {
	one := serving.Batch{Size: 1, BaseMs: 10}
	pools := []cluster.PoolSpec{pool("p", 1, 4)}

	svc := service("ok", 150, one)
	svc.MinReplicas = 2
	s := run(t, Config{Pools: pools, Horizon: Hour, Services: []ServiceConfig{svc}}).Services[0]
	require.InDelta(t, 150*3600.0, s.Arrived, 1e-6)
	require.InDelta(t, s.Arrived, s.Served, 1e-6)
	require.Zero(t, s.Dropped)
	require.Greater(t, s.P95Ms, 10.0)

	svc = service("over", 150, one)
	svc.MinReplicas = 1
	svc.Spec.QueueLimit = 50
	s = run(t, Config{Pools: pools, Horizon: Hour, Services: []ServiceConfig{svc}}).Services[0]
	require.InDelta(t, 150*3600.0, s.Arrived, 1e-6)
	require.InDelta(t, 100*3600.0, s.Served, 1e-6)
	require.InDelta(t, 179_950, s.Dropped, 1e-6)
	require.InDelta(t, s.Arrived, s.Served+s.Dropped+50, 1e-6)
}

// stepScaler wants before replicas until at, then after.
type stepScaler struct {
	at            int64
	before, after int
}

func (s stepScaler) PeriodMs() int64 { return Minute }
func (s stepScaler) Decide(now int64, _, _, _ int, _ services.Metrics) int {
	if now >= s.at {
		return s.after
	}
	return s.before
}

// One node of 4 GPUs held by a training job L (priority 0, 10 h of work,
// a checkpoint every 10 min of work taking 1 min, 30 s of grace: too short
// for a write). At 25 min a service of priority 100 scales from 0 to one
// 1-GPU replica: the replica preempts L, which wrote at 10-11 and 21-22
// and loses the 3 min it computed since (as TestPriorityPreemptionByHand
// works out). The replica binds at 25 min and is ready 3 min later; L,
// needing all 4 GPUs, waits to the end.
func TestServicePreemptsTraining(t *testing.T) {
	l := prio(job("L", 0, 10*Hour, 1, 4), 0)
	l.Recovery = &cluster.Recovery{CheckpointInterval: 10 * Minute, CheckpointCost: Minute, BackoffLimit: 6, TerminationGrace: 30 * Second}
	svc := service("isvc", 10, light)
	svc.Priority = 100
	svc.MaxReplicas = 1
	svc.Scaler = stepScaler{at: 25 * Minute, after: 1}
	svc.ImagePull, svc.ModelLoad = Minute, 2*Minute
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 4)}, Horizon: 2 * Hour, Preemption: true, Services: []ServiceConfig{svc}}, l)

	require.Len(t, res.Jobs, 1)
	rl := res.Jobs[0]
	require.Equal(t, int32(1), rl.Preemptions)
	require.Equal(t, 3*Minute, rl.LostMs)
	require.Equal(t, Pending, rl.Outcome)
	s := res.Services[0]
	require.Equal(t, 1, s.ColdStarts)
	require.Equal(t, float64(3*Minute), s.ColdStartMs)
	require.Zero(t, s.Preempted)
	require.InDelta(t, (120-28)/60.0, s.ReadyHours, 1e-9)
	require.Equal(t, int64(cluster.MilliGPU*(2*Hour-25*Minute)), s.Usage[0].Held[ResGPU])
	// Requests of the first 28 min wait for the replica, then are served.
	require.InDelta(t, s.Arrived, s.Served, 1e-6)
	require.Greater(t, s.P99Ms, float64(Minute))
}

// A low-priority replica holding a whole 4-GPU node is preempted at 30 min
// by a job of priority 10 that wants 2 GPUs for 10 min. Its ReplicaSet
// makes a new pod at once, which waits for the job to end (the node has 2
// GPUs free, the pod wants 4) and binds at 40 min, ready at 43: two cold
// starts of 3 and 13 min (8 min mean), ready 3-30 and 43-120 min.
func TestReplicaPreemptedAndReplaced(t *testing.T) {
	svc := service("batch-infer", 10, light)
	svc.Pod.GPUs = 4
	svc.MinReplicas = 1
	svc.ImagePull, svc.ModelLoad = Minute, 2*Minute
	h := prio(job("H", 30*Minute, 10*Minute, 1, 2), 10)
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 4)}, Horizon: 2 * Hour, Preemption: true, Services: []ServiceConfig{svc}}, h)

	require.Equal(t, timing{30 * Minute, 40 * Minute}, times(res)["H"])
	require.Equal(t, int32(1), res.Jobs[0].PreemptionsCaused)
	s := res.Services[0]
	require.Equal(t, 1, s.Preempted)
	require.Equal(t, 2, s.ColdStarts)
	require.Equal(t, float64(8*Minute), s.ColdStartMs)
	require.InDelta(t, (27+77)/60.0, s.ReadyHours, 1e-9)
	require.InDelta(t, 2.0, s.ReplicaHours, 1e-9, "the ReplicaSet always has its one pod")
	require.Equal(t, int64(4*cluster.MilliGPU*(2*Hour-10*Minute)), s.Usage[0].Held[ResGPU])
}

// hpaService is a service scaled by an HPA on requests per replica
// (target 50/s, Kubernetes' default behaviors), 100/s until 60 s, 1,000/s
// until 120 s, 100/s after; replicas ready once bound.
func hpaService(t *testing.T) ServiceConfig {
	h, err := autoscale.NewHPA(autoscale.NewHPASpec(30, 50))
	require.NoError(t, err)
	load := serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 100}, {AtMs: 60_000, Rate: 1000}, {AtMs: 120_000, Rate: 100}}}
	return ServiceConfig{Spec: services.Spec{Name: "rec", Load: load, Batch: serving.Batch{Size: 1, BaseMs: 1}},
		Scaler: services.HPA{H: h, Metric: services.RequestsPerReplica}, Pod: replicaPod,
		MinReplicas: 1, MaxReplicas: 30, InitialReplicas: 2}
}

// The HPA's syncs every 15 s, by hand from its rules: at 15, 30 and 45 s,
// 100/s over 2 ready is the target (2). At 60 s, 1,000/2 = 500 is 10x the
// target: 20 wanted, but the default scale-up allows max(100% = +2, 4
// pods) per 15 s: 6. At 75 s 1,000/6 asks 20; +100% of 6: 12. At 90 s
// 1,000/12 asks 20, within +100%: 20. At 120 s the load falls to 100/s
// (2 wanted), but the scale-down stabilization window keeps the highest
// recommendation of the last 300 s: the 20 of 105 s holds until 405 s,
// when the replicas fall to 2 (100% per 15 s allows it). One timeline
// point per 15 s shows the replicas each sync left.
func TestHPAFollowsTheLoadByHand(t *testing.T) {
	cfg := Config{Pools: []cluster.PoolSpec{pool("p", 8, 4)}, Horizon: 450 * Second, TimelineInterval: 15 * Second,
		Services: []ServiceConfig{hpaService(t)}}
	s := run(t, cfg).Services[0]
	want := []float64{2, 2, 2, 2, 6, 12}
	for len(want) < 27 {
		want = append(want, 20)
	}
	want = append(want, 2, 2, 2)
	got := make([]float64, len(s.Timeline))
	for i, p := range s.Timeline {
		got[i] = p.Replicas
		require.Equal(t, p.Replicas, p.Ready, "ready once bound")
		require.Equal(t, p.Replicas, p.GPUs)
	}
	require.Equal(t, want, got)
	require.Equal(t, 29, s.Decisions, "a sync every 15 s from 15 to 435 s")
	require.Zero(t, s.Dropped)
}

// Same config and seed, same result (the scalers are fresh each run: they
// keep state).
func TestServicesDeterministic(t *testing.T) {
	mk := func() *Result {
		cfg := Config{Seed: 7, Pools: []cluster.PoolSpec{pool("p", 8, 4)}, Horizon: 450 * Second, TimelineInterval: 15 * Second,
			Services: []ServiceConfig{hpaService(t)}, Preemption: true}
		return run(t, cfg, job("a", 0, 100*Second, 2, 4), prio(job("b", 30*Second, 200*Second, 4, 4), -1))
	}
	require.Equal(t, mk(), mk())

	// One Config run twice: the HPA's history is the run's, not the
	// Config's, so the second run is the first again.
	cfg := Config{Pools: []cluster.PoolSpec{pool("p", 8, 4)}, Horizon: 450 * Second, TimelineInterval: 15 * Second,
		Services: []ServiceConfig{hpaService(t)}}
	require.Equal(t, run(t, cfg), run(t, cfg))
}

// KEDA with minReplicaCount 0 on the total request rate: the service
// starts at zero; 20 requests/s from 10 to 20 min and from 40 to 50 min.
// KEDA polls every 30 s from the first sync at 15 s: the poll at 615 s
// sees the load and makes one replica, ready 3 min later (795 s); the
// requests of 600-795 s wait for it. The last active poll is at 1,185 s;
// after the 300 s cooldown the poll at 1,485 s removes the replica. The
// same again from 2,415 to 3,285 s: two cold starts, 870 s of replica
// each, 690 s of it ready.
func TestScaleFromZeroWithKEDA(t *testing.T) {
	k, err := autoscale.NewKEDA(autoscale.NewScaledObjectSpec(100))
	require.NoError(t, err)
	load := serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 0}, {AtMs: 600_000, Rate: 20}, {AtMs: 1_200_000, Rate: 0}, {AtMs: 2_400_000, Rate: 20}, {AtMs: 3_000_000, Rate: 0}}}
	svc := ServiceConfig{Spec: services.Spec{Name: "night", Load: load, Batch: light},
		Scaler: services.KEDA{K: k, Metric: services.RequestsPerReplica}, Pod: replicaPod,
		MaxReplicas: 4, ImagePull: Minute, ModelLoad: 2 * Minute}
	s := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 4)}, Horizon: Hour, Services: []ServiceConfig{svc}}).Services[0]
	require.Equal(t, 2, s.ColdStarts)
	require.Equal(t, float64(3*Minute), s.ColdStartMs)
	require.InDelta(t, 2*870/3600.0, s.ReplicaHours, 1e-9)
	require.InDelta(t, 2*690/3600.0, s.ReadyHours, 1e-9)
	require.InDelta(t, 20*1200.0, s.Arrived, 1e-6)
	require.InDelta(t, s.Arrived, s.Served, 1e-6)
	require.Zero(t, s.Dropped)
	// 195 s of the 600 s of load waited for a cold start (a third): the
	// p95 shows the wait, the median does not.
	require.Greater(t, s.P95Ms, float64(Minute))
	require.Less(t, s.P50Ms, 1000.0)
}

func TestServiceConfigErrors(t *testing.T) {
	base := service("x", 10, light)
	base.MinReplicas = 1
	pools := []cluster.PoolSpec{pool("p", 1, 4)}
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"no horizon":  {Config{Pools: pools, Services: []ServiceConfig{base}}, "needs a positive horizon"},
		"too big pod": {Config{Pools: pools, Horizon: Hour, Services: []ServiceConfig{func() ServiceConfig { c := base; c.Pod.GPUs = 8; return c }()}}, "fits no node"},
		"min > max":   {Config{Pools: pools, Horizon: Hour, Services: []ServiceConfig{func() ServiceConfig { c := base; c.MinReplicas, c.MaxReplicas = 3, 2; return c }()}}, "minReplicas 3 is above maxReplicas 2"},
		"bad batch":   {Config{Pools: pools, Horizon: Hour, Services: []ServiceConfig{func() ServiceConfig { c := base; c.Spec.Batch.Size = 0; return c }()}}, "batchSize"},
		"no replicas": {Config{Pools: pools, Horizon: Hour, Services: []ServiceConfig{func() ServiceConfig { c := base; c.MinReplicas = 0; return c }()}}, "maxReplicas must be at least 1"},
	} {
		tc.cfg.Workload = &SliceSource{}
		_, err := Run(tc.cfg)
		require.ErrorContains(t, err, tc.want, name)
	}
}

// A service whose scaler never wants a replica, with no jobs: the run
// still goes to the horizon, and every request that arrived is still
// waiting at the end (none served, none dropped without a limit).
func TestServiceAtZeroKeepsItsRequests(t *testing.T) {
	svc := service("idle", 5, light)
	svc.MaxReplicas = 1
	svc.Scaler = stepScaler{at: math.MaxInt64}
	s := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 4)}, Horizon: Hour, Services: []ServiceConfig{svc}}).Services[0]
	require.InDelta(t, 5*3600.0, s.Arrived, 1e-6)
	require.Zero(t, s.Served)
	require.Zero(t, s.P95Ms)
	require.Zero(t, s.ReplicaHours)
}

// Replica pods go through admission: team-b's ClusterQueue has 2 GPUs of
// quota and the service asks for 3 one-GPU replicas (ready once bound):
// 2 are admitted and serve, the third waits for quota. At 30 min the
// service scales to 1: the ReplicaSet deletes the unadmitted pod first,
// then the newest bound one. By hand: ReplicaHours 3 x 0.5 + 1 x 0.5 = 2,
// ReadyHours 2 x 0.5 + 1 x 0.5 = 1.5, team-b used 2 GPUs for 30 min and
// 1 for 30 min (90 GPU-min), with 2 admissions.
func TestReplicasThroughAdmission(t *testing.T) {
	svc := service("team-b-svc", 10, light)
	svc.Queue = "team-b"
	svc.MinReplicas, svc.MaxReplicas, svc.InitialReplicas = 1, 3, 3
	svc.Scaler = stepScaler{at: 30 * Minute, before: 3, after: 1}
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 3, 2)}, Horizon: Hour,
		Admission: twoTeams("", admission.BestEffortFIFO, admission.Never), Services: []ServiceConfig{svc}})
	s := res.Services[0]
	require.InDelta(t, 2.0, s.ReplicaHours, 1e-9)
	require.InDelta(t, 1.5, s.ReadyHours, 1e-9)
	require.Equal(t, int64(cluster.MilliGPU*90*Minute), s.Usage[0].Held[ResGPU])
	b := res.Admission.Queues[1]
	require.Equal(t, "team-b", b.Name)
	require.Equal(t, 2, b.Admissions)
	require.InDelta(t, float64(90*Minute), b.UsedGPUMs, 1e-6)
	require.Empty(t, res.Jobs)

	// A queue the policy does not have is bad input.
	svc.Queue = "team-c"
	_, err := Run(Config{Pools: []cluster.PoolSpec{pool("p", 3, 2)}, Horizon: Hour, Workload: &SliceSource{},
		Admission: twoTeams("", admission.BestEffortFIFO, admission.Never), Services: []ServiceConfig{svc}})
	require.ErrorContains(t, err, `queue "team-c" is not a LocalQueue`)
}

// windowScaler wants one replica in [from, to), none otherwise.
type windowScaler struct{ from, to int64 }

func (s windowScaler) PeriodMs() int64 { return Minute }
func (s windowScaler) Decide(now int64, _, _, _ int, _ services.Metrics) int {
	if now >= s.from && now < s.to {
		return 1
	}
	return 0
}

// A replica on a time-sliced GPU takes its turn: job A (10 min of work)
// runs alone from 0; a replica shares its GPU from 2 to 6 min, when A runs
// at half speed (2 min of work in 4); alone again, A has 6 min left and
// ends at 12 min. Kept to the end, the replica would leave A its 8 min at
// half speed: 2 + 16 = 18 min.
func TestReplicaOnTimeSlicedGPU(t *testing.T) {
	p := pool("ts", 1, 1)
	p.GPUModel = "T4"
	p.Sharing.TimeSlicing = 4
	svc := service("small", 5, light)
	svc.MaxReplicas = 1
	svc.Scaler = windowScaler{from: 2 * Minute, to: 6 * Minute}
	res := run(t, Config{Pools: []cluster.PoolSpec{p}, Horizon: Hour, Services: []ServiceConfig{svc}}, job("A", 0, 10*Minute, 1, 1))
	require.Equal(t, timing{0, 12 * Minute}, times(res)["A"])
	require.True(t, res.Jobs[0].Slowed)
	require.Equal(t, int64(250*4*Minute), res.Services[0].Usage[0].Held[ResGPU], "a quarter of the GPU for 4 min")

	svc.Scaler = windowScaler{from: 2 * Minute, to: Hour}
	res = run(t, Config{Pools: []cluster.PoolSpec{p}, Horizon: Hour, Services: []ServiceConfig{svc}}, job("A", 0, 10*Minute, 1, 1))
	require.Equal(t, timing{0, 18 * Minute}, times(res)["A"])
}

// BenchmarkServiceWeek is a week of a 2,000 requests/s service (diurnal,
// 1,000 to 3,000/s) scaled by an HPA every 15 s on 64 GPUs, with no jobs:
// the engine's cost of a service alone.
func BenchmarkServiceWeek(b *testing.B) {
	for i := 0; i < b.N; i++ {
		h, err := autoscale.NewHPA(autoscale.NewHPASpec(64, 150))
		if err != nil {
			b.Fatal(err)
		}
		svc := ServiceConfig{Spec: services.Spec{Name: "week", Load: serving.Load{Base: 2000, Amplitude: 1000}, Batch: serving.Batch{Size: 32, MaxDelayMs: 50, BaseMs: 20, PerItemMs: 2}, SLOMs: 200},
			Scaler: services.HPA{H: h, Metric: services.RequestsPerReplica}, Pod: replicaPod, MinReplicas: 1, MaxReplicas: 64, InitialReplicas: 10,
			ImagePull: 30 * Second, ModelLoad: Minute}
		res, err := Run(Config{Pools: []cluster.PoolSpec{pool("p", 8, 8)}, Horizon: 7 * 24 * Hour, Workload: &SliceSource{}, Services: []ServiceConfig{svc}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Stats.Events), "events")
		b.ReportMetric(res.Services[0].SLOAttainment, "slo")
	}
}

// Knative's KPA scales a service to zero and back: 50 requests/s from 5
// to 10 min and from 30 to 35 min, a concurrency target of 10, ticks of
// 2 s, a 60 s stable window, 30 s of grace, a 1 min model load. Its first
// tick (2 s) sees no traffic yet within the grace period and keeps one
// pod (Knative's initial scale), deleted at 32 s, before it was ready.
// From zero, the requests held at the activator are the concurrency that
// wakes it: the 100 that arrived by the next tick, against a target of
// 10, ask for more than the 4 allowed, so each burst makes 4 replicas at
// once, ready a minute later: 8 cold starts of 1 min. After each burst the
// stable window empties, the grace passes and it is back at zero.
func TestScaleToZeroWithKPA(t *testing.T) {
	k, err := autoscale.NewKPA(autoscale.NewKPASpec(10))
	require.NoError(t, err)
	load := serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 0}, {AtMs: 5 * 60_000, Rate: 50}, {AtMs: 10 * 60_000, Rate: 0}, {AtMs: 30 * 60_000, Rate: 50}, {AtMs: 35 * 60_000, Rate: 0}}}
	svc := ServiceConfig{Spec: services.Spec{Name: "kserve", Load: load, Batch: light},
		Scaler: services.KPA{K: k, TickMs: 2000}, Pod: replicaPod, MaxReplicas: 4, ModelLoad: Minute}
	s := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 4)}, Horizon: Hour, TimelineInterval: 5 * Minute, Services: []ServiceConfig{svc}}).Services[0]
	require.Equal(t, 8, s.ColdStarts)
	require.Equal(t, float64(Minute), s.ColdStartMs)
	require.InDelta(t, 50*600.0, s.Arrived, 1e-6)
	require.InDelta(t, s.Arrived, s.Served, 1e-6)
	require.InDelta(t, 0.1, s.Timeline[0].Replicas, 1e-12, "30 s of 5 min")
	require.Zero(t, s.Timeline[0].Ready)
	for _, i := range []int{3, 4, 5, 8, 9, 10, 11} { // 15-30 and 40-60 min
		require.Zero(t, s.Timeline[i].Replicas, "bucket %d", i)
	}
	require.Equal(t, s.Timeline[1], s.Timeline[6], "the two bursts go the same way")
	require.Greater(t, s.P95Ms, 30_000.0, "the requests of the cold start waited for it")
}

// waitForPodsReady with a backoff limit never gives up on a replica pod:
// team-a's 8-GPU replica is admitted at once but its node boots for 10
// min; with a 2 min timeout it is evicted at 2, 5 and 9 min as the job of
// TestWaitForPodsReady is, and where that job is deactivated at the third
// eviction (backoffLimitCount 2), the replica is readmitted at 13 and
// serves from then: a cold start of 13 min from its creation.
func TestReplicaOutlivesWaitForPodsReadyLimit(t *testing.T) {
	spec := &capacity.Spec{
		Pools:  []capacity.Pool{{Provisioning: 10 * Minute, Group: 0}},
		Groups: []capacity.Group{{Name: "ca", Kind: capacity.Autoscaler, Pools: []int32{0}, MaxNodes: 1, ScaleDownUnneeded: 10 * Minute, ScaleDownDelayAfterAdd: 10 * Minute}},
	}
	p := pool("p", 0, 8)
	p.MaxNodes = 1
	adm := twoTeams("", admission.BestEffortFIFO, admission.Never)
	adm.ClusterQueues[0].Groups[0].Flavors[0].Resources[2] = quota(8)
	adm.WaitForPodsReady = &admission.WaitForPodsReady{Timeout: 2 * Minute, BackoffBase: Minute, BackoffMax: Hour, BackoffLimit: 2}
	svc := service("big", 10, light)
	svc.Queue, svc.Pod.GPUs, svc.MinReplicas = "team-a", 8, 1
	res := run(t, Config{Pools: []cluster.PoolSpec{p}, Capacity: spec, Admission: adm, Horizon: Hour, Services: []ServiceConfig{svc}})
	require.Equal(t, 3, res.Admission.Queues[0].PodsReadyTimeouts)
	require.Zero(t, res.Admission.Queues[0].Deactivated)
	s := res.Services[0]
	require.Equal(t, 1, s.ColdStarts)
	require.Equal(t, float64(13*Minute), s.ColdStartMs)
	require.InDelta(t, 47/60.0, s.ReadyHours, 1e-9)
	require.Zero(t, s.Preempted, "waitForPodsReady evictions are counted as PodsReadyTimeouts, as for jobs")
}

// A scaler period with nothing else before it is done without an event of
// its own (nextSync), a stretch of periods the scaler keeps is done in one
// step, and a service whose scaler reads only the rate is accounted
// lazily: the run must be the one where every period is an event and
// accounts the services (Config.periodEvents), with the same replicas,
// jobs, event count and progress reports to the bit, and the same
// requests (to rounding) and latency quantiles (within a 2% histogram
// bucket). Services under an HPA (diurnal load with a spike, and a
// constant one), the KPA and KEDA together, beside jobs that arrive every
// 7 to 20 min (at any ms), preempt and are preempted, with timeline
// buckets that fall on periods; and each HPA service alone and a fixed
// one on rate points (alone, nothing else's periods stand in the way of
// the skips).
func TestScalerPeriodsWithoutEventsSameRun(t *testing.T) {
	diurnal := func() ServiceConfig {
		h, err := autoscale.NewHPA(autoscale.NewHPASpec(6, 40))
		require.NoError(t, err)
		return ServiceConfig{Spec: services.Spec{Name: "diurnal", Batch: light, SLOMs: 50,
			Load: serving.Load{Base: 100, Amplitude: 80, PeakMs: Hour, PeriodMs: 4 * Hour,
				Spikes: []serving.Spike{{StartMs: 5 * Hour, LengthMs: 30 * Minute, Factor: 3}}}},
			Scaler: services.HPA{H: h, Metric: services.RequestsPerReplica}, Pod: replicaPod,
			MinReplicas: 1, MaxReplicas: 6, InitialReplicas: 2, ImagePull: 30 * Second, ModelLoad: 15 * Second, Priority: 5}
	}
	steady := func() ServiceConfig {
		h2, err := autoscale.NewHPA(autoscale.NewHPASpec(4, 60))
		require.NoError(t, err)
		steady := service("steady", 100, light)
		steady.Scaler = services.HPA{H: h2, Metric: services.RequestsPerReplica}
		steady.MinReplicas, steady.MaxReplicas, steady.InitialReplicas = 1, 4, 1
		return steady
	}
	kpa := func() ServiceConfig {
		kp, err := autoscale.NewKPA(autoscale.NewKPASpec(10))
		require.NoError(t, err)
		return ServiceConfig{Spec: services.Spec{Name: "kpa", Batch: light,
			Load: serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 0}, {AtMs: Hour, Rate: 40}, {AtMs: 2 * Hour, Rate: 0}, {AtMs: 6 * Hour, Rate: 30}}}},
			Scaler: services.KPA{K: kp, TickMs: 2000}, Pod: replicaPod, MaxReplicas: 3, ModelLoad: Minute}
	}
	keda := func() ServiceConfig {
		kd, err := autoscale.NewKEDA(autoscale.NewScaledObjectSpec(100))
		require.NoError(t, err)
		return ServiceConfig{Spec: services.Spec{Name: "keda", Batch: light,
			Load: serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 0}, {AtMs: 3 * Hour, Rate: 150}, {AtMs: 4 * Hour, Rate: 0}}}},
			Scaler: services.KEDA{K: kd, Metric: services.RequestsPerReplica}, Pod: replicaPod, MaxReplicas: 3, ImagePull: Minute}
	}
	// An LLM service (Llama-3-8B on one H100 a replica, chat lengths:
	// 37.5 requests/s a replica) on a diurnal curve of 100 to 300/s (its
	// peak at 4 h), or at 200/s with half as much again for 30 min at 5 h,
	// above the jobs' priority or below it (preempted by them),
	// scaled by KEDA on vllm:num_requests_waiting (0.5 a replica): its
	// scaler reads the queue, not the rate, so it is accounted every
	// period, but a settled stretch is still skipped (SettledBand) and
	// accounted lazily. The plan's curve is built once for both runs.
	llmSpec := llmChat(t)
	llmDiurnal := serving.Load{Base: 200, Amplitude: 100, PeakMs: 4 * Hour}
	llmSteady := serving.Load{Base: 200, Spikes: []serving.Spike{{StartMs: 5 * Hour, LengthMs: 30 * Minute, Factor: 1.5}}}
	llmMax := func(load serving.Load, prio int32, maxR int) ServiceConfig {
		spec := autoscale.NewScaledObjectSpec(0.5)
		spec.MinReplicaCount, spec.MaxReplicaCount = 2, maxR
		kd, err := autoscale.NewKEDA(spec)
		require.NoError(t, err)
		return ServiceConfig{Spec: services.Spec{Name: "llm", Balancing: serving.Random, LLM: llmSpec,
			Load: load},
			Scaler: services.KEDA{K: kd, Metric: services.QueueDepth}, Pod: replicaPod,
			MinReplicas: 2, MaxReplicas: maxR, InitialReplicas: 6, ModelLoad: 40 * Second, Priority: prio}
	}
	llm := func(load serving.Load, prio int32) ServiceConfig { return llmMax(load, prio, 12) }
	// 170 +- 40/s on at most 6 replicas (225/s in all): the queue asks
	// for more than 6 most of the day, below capacity, so the replicas
	// are held at the maximum and its periods skipped.
	llmAtMax := serving.Load{Base: 170, Amplitude: 40, PeakMs: 4 * Hour}
	// Ten HPA services of 1 to 3 replicas (a target of 30/s a replica)
	// whose syncs are 10 to 45 s apart, diurnal (20 to 60/s over 4 h,
	// their peaks 24 min apart) or steady, every other one below the
	// jobs' priority.
	ten := func() []ServiceConfig {
		var svcs []ServiceConfig
		for i, sync := range []Time{15, 10, 20, 15, 30, 15, 15, 10, 45, 15} {
			spec := autoscale.NewHPASpec(3, 30)
			spec.SyncMs = sync * Second
			h, err := autoscale.NewHPA(spec)
			require.NoError(t, err)
			load := serving.Load{Base: 40, Amplitude: 20, PeakMs: Time(i) * 24 * Minute, PeriodMs: 4 * Hour}
			if i%3 == 2 {
				load = serving.Load{Base: 25}
			}
			svcs = append(svcs, ServiceConfig{Spec: services.Spec{Name: fmt.Sprint("hpa", i), Batch: light, Load: load},
				Scaler: services.HPA{H: h, Metric: services.RequestsPerReplica}, Pod: replicaPod,
				MinReplicas: 1, MaxReplicas: 3, InitialReplicas: 1 + i%2, ModelLoad: Time(i) * 5 * Second, Priority: int32(i % 2 * 10)})
		}
		return svcs
	}
	points := func() ServiceConfig {
		// Overloaded from 2 h to 3 h (900/s on 2 x 615/s... 1,230/s: a
		// backlog builds under a queue limit, accounted period by period).
		f := service("points", 0, light)
		f.Spec.Load = serving.Load{Points: []serving.Point{{AtMs: 0, Rate: 300}, {AtMs: 2*Hour + 7*Second, Rate: 1500}, {AtMs: 3 * Hour, Rate: 200}}}
		f.Spec.QueueLimit = 500
		f.MinReplicas, f.MaxReplicas, f.InitialReplicas = 2, 2, 2
		return f
	}
	for _, c := range []struct {
		name  string
		svcs  func() []ServiceConfig
		skips bool
		// grid: the jobs come on the 15 s periods' grid (a period and a
		// job event at the same ms, in either order) to a cluster of 2
		// nodes where they preempt replicas within deferred stretches.
		grid bool
	}{
		{"four services", func() []ServiceConfig { return []ServiceConfig{diurnal(), steady(), kpa(), keda()} }, false, false},
		{"diurnal HPA", func() []ServiceConfig { return []ServiceConfig{diurnal()} }, true, false},
		{"steady HPA", func() []ServiceConfig { return []ServiceConfig{steady()} }, true, false},
		{"fixed on points", func() []ServiceConfig { return []ServiceConfig{points()} }, true, false},
		{"steady HPA, jobs on the grid preempting replicas", func() []ServiceConfig { return []ServiceConfig{steady()} }, true, true},
		{"LLM under KEDA on the queue, diurnal", func() []ServiceConfig { return []ServiceConfig{llm(llmDiurnal, 10)} }, true, false},
		{"LLM under KEDA on the queue, steady with a spike", func() []ServiceConfig { return []ServiceConfig{llm(llmSteady, 10)} }, true, false},
		{"LLM under KEDA on the queue, held at its maximum", func() []ServiceConfig { return []ServiceConfig{llmMax(llmAtMax, 10, 6)} }, true, false},
		{"LLM under KEDA, its replicas preempted by the jobs", func() []ServiceConfig { return []ServiceConfig{llm(llmSteady, 0)} }, false, false},
		{"LLM under KEDA and an HPA service", func() []ServiceConfig { return []ServiceConfig{llm(llmDiurnal, 10), steady()} }, false, false},
		{"ten HPA services, periods 10 to 45 s", ten, true, false},
		{"three HPA services, jobs on the grid preempting replicas", func() []ServiceConfig { return []ServiceConfig{steady(), ten()[2], ten()[4]} }, true, true},
		{"LLM under KEDA and ten HPA services", func() []ServiceConfig { return append(ten(), llm(llmSteady, 10)) }, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mk := func(periodEvents bool, skipped *int) (*Result, []Progress) {
				var jobs []cluster.JobSpec
				nodes := 4
				for i, at := 0, Time(0); at < 8*Hour; i++ {
					if c.grid {
						// 1 to 16 min apart, 1 or 2 pods of 2 to 4 GPUs at priority 9
						// (the replicas' is 0) for 15 s to 5 min.
						nodes = 2
						at += Time(1+i*7%16) * Minute
						jobs = append(jobs, prio(job(fmt.Sprint("g", i), at, Time(1+i*13%20)*15*Second, int32(1+i%2), int32(2+i%3)), 9))
						continue
					}
					// Off the periods' grid too.
					at += Time(7+i*5%14)*Minute + Time(i*7919%15000)
					jobs = append(jobs, prio(job(fmt.Sprint("j", i), at, Time(20+i*11%90)*Minute, int32(1+i%2), int32(1+i%4)), int32(i%3*4)))
				}
				var prog []Progress
				every := uint64(97)
				if c.grid {
					// Every event: a period and a job event at the same
					// ms in the other order would report another count.
					every = 1
				}
				cfg := Config{Seed: 3, Pools: []cluster.PoolSpec{pool("p", nodes, 4)}, Horizon: 8 * Hour, TimelineInterval: 15 * Minute,
					Preemption: true, Services: c.svcs(),
					Progress: func(p Progress) { prog = append(prog, p) }, ProgressEvery: every, periodEvents: periodEvents, periodsSkipped: skipped}
				return run(t, cfg, jobs...), prog
			}
			want, wantProg := mk(true, nil)
			var skipped int
			got, gotProg := mk(false, &skipped)
			sameServiceRun(t, want, got)
			require.Equal(t, want, got)
			require.Equal(t, wantProg, gotProg)
			require.NotEmpty(t, wantProg)
			periods := 0
			for i, s := range got.Services {
				require.Greater(t, s.Decisions, 0)
				period := Minute // Fixed's
				if sc := c.svcs()[i].Scaler; sc != nil {
					period = sc.PeriodMs()
				}
				periods += int(8*Hour/period) - 1
			}
			require.Greater(t, got.Stats.Events, uint64(periods), "every period counted as an event")
			if c.skips {
				require.Greater(t, skipped, periods/4, "periods done in skipped stretches")
			}
			if c.grid {
				preempted := 0
				for _, s := range got.Services {
					preempted += s.Preempted
				}
				require.Greater(t, preempted, 10, "replicas preempted")
			}
			t.Logf("events %d, periods %d, skipped %d", got.Stats.Events, periods, skipped)
		})
	}
}

// sameServiceRun checks that got's services are want's, their requests to
// rounding and their latency quantiles within a 2% histogram bucket (an
// LLM service's to rounding too: a stretch accounted lazily is cut where
// the rate leaves a grid key of the curve, so it is served as its
// periods are), and then makes those figures want's, for the caller to
// compare the rest to the bit.
func sameServiceRun(t *testing.T, want, got *Result) {
	t.Helper()
	require.Len(t, got.Services, len(want.Services))
	for i := range want.Services {
		w, g := &want.Services[i], &got.Services[i]
		near := func(what string, x, y, rel float64) {
			t.Helper()
			require.InDelta(t, x, y, rel*math.Max(math.Abs(x), 1), "%s: %s", w.Name, what)
		}
		bucket := 0.021
		if w.LLM != nil {
			bucket = 1e-9
		}
		near("arrived", w.Arrived, g.Arrived, 1e-9)
		near("served", w.Served, g.Served, 1e-9)
		near("dropped", w.Dropped, g.Dropped, 1e-9)
		near("p50", w.P50Ms, g.P50Ms, bucket)
		near("p95", w.P95Ms, g.P95Ms, bucket)
		near("p99", w.P99Ms, g.P99Ms, bucket)
		near("SLO attainment", w.SLOAttainment, g.SLOAttainment, 0.01)
		require.Len(t, g.Timeline, len(w.Timeline))
		for b := range w.Timeline {
			wp, gp := &w.Timeline[b], &g.Timeline[b]
			near("rate", wp.Rate, gp.Rate, 1e-9)
			near("served", wp.Served, gp.Served, 1e-9)
			near("dropped", wp.Dropped, gp.Dropped, 1e-9)
			near("bucket p95", wp.P95Ms, gp.P95Ms, bucket)
			*gp = ServicePoint{Rate: wp.Rate, Served: wp.Served, Dropped: wp.Dropped, P95Ms: wp.P95Ms,
				Replicas: gp.Replicas, Ready: gp.Ready, GPUs: gp.GPUs}
		}
		if w.LLM != nil {
			// An LLM service's token figures, to rounding.
			wl, gl := w.LLM, g.LLM
			require.NotNil(t, gl)
			pairs := [][2]float64{{wl.TTFTMeanMs, gl.TTFTMeanMs}, {wl.TPOTMeanMs, gl.TPOTMeanMs}, {wl.E2EMeanMs, gl.E2EMeanMs},
				{wl.TTFTP50Ms, gl.TTFTP50Ms}, {wl.TTFTP95Ms, gl.TTFTP95Ms}, {wl.TTFTP99Ms, gl.TTFTP99Ms},
				{wl.TPOTP50Ms, gl.TPOTP50Ms}, {wl.TPOTP95Ms, gl.TPOTP95Ms}, {wl.TPOTP99Ms, gl.TPOTP99Ms},
				{wl.E2EP95Ms, gl.E2EP95Ms}, {wl.KVCacheMean, gl.KVCacheMean}, {wl.KVCachePeak, gl.KVCachePeak},
				{wl.InputTokens, gl.InputTokens}, {wl.OutputTokens, gl.OutputTokens},
				{wl.TTFTAttainment, gl.TTFTAttainment}, {wl.TPOTAttainment, gl.TPOTAttainment}}
			for _, f := range pairs {
				near("LLM figure", f[0], f[1], 1e-9)
			}
			*gl = *wl
		}
		g.Arrived, g.Served, g.Dropped = w.Arrived, w.Served, w.Dropped
		g.P50Ms, g.P95Ms, g.P99Ms, g.SLOAttainment = w.P50Ms, w.P95Ms, w.P99Ms, w.SLOAttainment
	}
}

// llmChat is Llama-3-8B on one H100 a replica with chat lengths (prompts
// 512 +- 256 tokens, outputs 256 +- 128) and TTFT and TPOT targets of
// 200 and 30 ms, with its curve from 100/s on 12 replicas, as a plan
// holds it.
func llmChat(t *testing.T) *services.LLM {
	t.Helper()
	roof, ok := serving.RooflineFor("H100-80GB")
	require.True(t, ok)
	l := &services.LLM{Config: serving.LLMConfig{Engine: serving.Engine{Model: serving.Llama3_8B(), GPU: roof, TP: 1}, MaxModelLen: 8192}.WithDefaults(),
		Input:     serving.TokenDist{Kind: serving.Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048},
		Output:    serving.TokenDist{Kind: serving.Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024},
		TTFTSLOMs: 200, TPOTSLOMs: 30}
	c, err := serving.LLMCapacity(l.Config, l.Input, l.Output)
	require.NoError(t, err)
	l.CapacityPerReplica = c
	l.Curve, err = services.NewLLMCurve(l, 100.0/12)
	require.NoError(t, err)
	return l
}
