package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/gang"
)

func pool(name string, nodes int, gpus int32) cluster.PoolSpec {
	return cluster.PoolSpec{Name: name, Nodes: nodes, GPUsPerNode: gpus, MilliCPU: 64000, MemoryMiB: 256 << 10}
}

func job(name string, submit, dur Time, replicas, gpus int32) cluster.JobSpec {
	return cluster.JobSpec{Name: name, Submit: submit, Duration: dur, Replicas: replicas, Pod: cluster.PodSpec{MilliCPU: 1000, MemoryMiB: 1024, GPUs: gpus}}
}

func run(t *testing.T, cfg Config, jobs ...cluster.JobSpec) *Result {
	t.Helper()
	cfg.Workload = &SliceSource{Jobs: jobs}
	res, err := Run(cfg)
	require.NoError(t, err)
	var held, alloc int64
	for _, j := range res.Records() {
		held += j.HeldMilliMs
	}
	for _, s := range res.Services {
		for _, u := range s.Usage {
			held += u.Held[ResGPU]
		}
	}
	for _, p := range res.Pools {
		alloc += p.AllocatedMilliMs
		require.LessOrEqual(t, p.AllocatedMilliMs, p.SuppliedMilliMs)
	}
	require.Equal(t, alloc, held, "GPU time held by jobs and replica pods equals GPU time allocated on pools")
	return res
}

type timing struct{ start, end Time }

func times(res *Result) map[string]timing {
	m := map[string]timing{}
	for _, j := range res.Jobs {
		m[j.Name] = timing{j.Start, j.End}
	}
	return m
}

func TestStrictFIFOBlocksAndBackfillDoesNot(t *testing.T) {
	// One node of 8 GPUs. A (4 GPUs, 10 s) runs; B wants all 8 and must wait
	// for A; C (2 GPUs, 3 s) fits beside A at once if backfill is allowed.
	jobs := []cluster.JobSpec{
		job("A", 0, 10*Second, 1, 4),
		job("B", 1*Second, 5*Second, 1, 8),
		job("C", 2*Second, 3*Second, 1, 2),
	}
	cfg := Config{Pools: []cluster.PoolSpec{pool("p", 1, 8)}}
	fifo := times(run(t, cfg, jobs...))
	require.Equal(t, timing{0, 10 * Second}, fifo["A"])
	require.Equal(t, timing{10 * Second, 15 * Second}, fifo["B"])
	require.Equal(t, timing{15 * Second, 18 * Second}, fifo["C"], "strict FIFO: C waits behind B")

	cfg.Queue.Backfill = true
	bf := times(run(t, cfg, jobs...))
	require.Equal(t, timing{2 * Second, 5 * Second}, bf["C"], "backfill: C starts beside A")
	require.Equal(t, timing{10 * Second, 15 * Second}, bf["B"], "C ended before A, so B is not delayed")
}

func TestGangAllOrNothing(t *testing.T) {
	// Two nodes of 4 GPUs. X holds node 0 until 10 s, Y node 1 until 20 s.
	// G wants 2 pods x 4 GPUs; S wants 1 pod x 4 GPUs for 5 s.
	jobs := []cluster.JobSpec{
		job("X", 0, 10*Second, 1, 4),
		job("Y", 0, 20*Second, 1, 4),
		job("G", 1*Second, 30*Second, 2, 4),
		job("S", 2*Second, 5*Second, 1, 4),
	}
	cfg := Config{Pools: []cluster.PoolSpec{pool("p", 2, 4)}, Queue: scheduler.QueueConfig{Backfill: true}}
	res := run(t, cfg, jobs...)
	tm := times(res)
	// With the gang plugin G holds nothing until both nodes are free; S backfills node 0 at 10 s.
	require.Equal(t, timing{10 * Second, 15 * Second}, tm["S"])
	require.Equal(t, timing{20 * Second, 50 * Second}, tm["G"])
	require.Equal(t, int64(2*4*1000*30*Second), res.Jobs[2].HeldMilliMs)
	require.NotEqual(t, int32(-1), res.Jobs[2].Reason)
	require.Contains(t, res.Reason(res.Jobs[2].Reason), "Insufficient nvidia.com/gpu")

	// Without it, G's first pod binds at 10 s and holds node 0 idle; S waits.
	var noGang []scheduler.PluginConfig
	for _, p := range plugins.Default() {
		if p.Name != gang.Name {
			noGang = append(noGang, p)
		}
	}
	cfg.Plugins = noGang
	res = run(t, cfg, jobs...)
	tm = times(res)
	require.Equal(t, timing{20 * Second, 50 * Second}, tm["G"])
	require.Equal(t, timing{50 * Second, 55 * Second}, tm["S"])
	// G held 4 GPUs from 10 s and 4 more from 20 s until 50 s.
	require.Equal(t, int64(4*1000*40*Second+4*1000*30*Second), res.Jobs[2].HeldMilliMs)
}

func TestConstraintsAndUnschedulable(t *testing.T) {
	train := pool("train", 1, 8)
	train.Taints = []cluster.Taint{{Key: "dedicated", Value: "training", Effect: cluster.NoSchedule}}
	gen := pool("general", 1, 4)
	tol := &cluster.Constraints{Tolerations: []cluster.Toleration{{Key: "dedicated", Operator: "Exists"}},
		NodeSelector: map[string]string{cluster.LabelPool: "train"}}
	big := job("big", 0, Second, 1, 8) // needs the tainted pool but does not tolerate it
	ok := job("ok", 0, Second, 1, 8)
	ok.Constraints = tol
	huge := job("huge", 0, Second, 1, 16)
	gangTooBig := job("gang3", 0, Second, 3, 4) // 3 x 4 GPUs: the pools hold 1+2 = 3... but general holds only 1
	gangTooBig.Constraints = &cluster.Constraints{NodeSelector: map[string]string{cluster.LabelPool: "general"}}
	res := run(t, Config{Pools: []cluster.PoolSpec{train, gen}}, big, ok, huge, gangTooBig)
	out := map[string]*JobRecord{}
	for i := range res.Jobs {
		out[res.Jobs[i].Name] = &res.Jobs[i]
	}
	require.Equal(t, Unschedulable, out["big"].Outcome)
	require.Equal(t, "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {dedicated: training}.", out["big"].Diagnosis())
	require.Equal(t, Completed, out["ok"].Outcome)
	require.Equal(t, int32(0), out["ok"].Pool)
	require.Equal(t, Unschedulable, out["huge"].Outcome)
	require.Equal(t, Unschedulable, out["gang3"].Outcome)
	require.Contains(t, out["gang3"].Diagnosis(), "gang of 3 pods")
}

func TestDeadlinesDeleteRunningAndPendingJobs(t *testing.T) {
	a := job("A", 0, 100*Second, 1, 8)
	a.Deadline = 30 * Second // deleted while running
	b := job("B", Second, 10*Second, 1, 8)
	b.Deadline = 20 * Second // still pending at 20 s
	c := job("C", 2*Second, 10*Second, 1, 8)
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 8)}}, a, b, c)
	require.Equal(t, Deleted, res.Jobs[0].Outcome)
	require.Equal(t, 30*Second, res.Jobs[0].End)
	require.Equal(t, Abandoned, res.Jobs[1].Outcome)
	require.Equal(t, Time(-1), res.Jobs[1].Start)
	require.Equal(t, timing{30 * Second, 40 * Second}, times(res)["C"])
	require.Equal(t, 40*Second, res.End)
	require.Equal(t, int64(8*1000*40*Second), res.Pools[0].SuppliedMilliMs)
}

func TestHorizonLeavesRunningAndPending(t *testing.T) {
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 8)}, Horizon: 10 * Second},
		job("A", 0, 20*Second, 1, 8), job("B", Second, Second, 1, 8), job("late", 11*Second, Second, 1, 1))
	require.Len(t, res.Jobs, 2, "jobs submitted after the horizon are not read")
	require.True(t, res.Truncated)
	require.Equal(t, Running, res.Jobs[0].Outcome)
	require.Equal(t, int64(8*1000*10*Second), res.Jobs[0].HeldMilliMs)
	require.Equal(t, Pending, res.Jobs[1].Outcome)
	require.Equal(t, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", res.Jobs[1].Diagnosis())
}

func TestSharedGPUs(t *testing.T) {
	// Two 0.5-GPU pods share GPU 0; a third waits for the whole-GPU pod.
	half := job("h1", 0, 10*Second, 1, 0)
	half.Pod.GPUMilli = 500
	half2 := half
	half2.Name = "h2"
	whole := job("w", 0, 10*Second, 1, 1)
	third := half
	third.Name = "h3"
	third.Pod.GPUMilli = 600
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 2)}, Queue: scheduler.QueueConfig{Backfill: true}}, half, half2, whole, third)
	tm := times(res)
	require.Equal(t, Time(0), tm["h1"].start)
	require.Equal(t, Time(0), tm["h2"].start)
	require.Equal(t, Time(0), tm["w"].start)
	require.Equal(t, 10*Second, tm["h3"].start)
	require.Equal(t, int64(2*1000*10*Second+600*10*Second), res.Pools[0].AllocatedMilliMs)
}

// Poisson arrivals of 1-GPU jobs with exponential durations on c GPUs is an
// M/M/c FCFS queue: the mean wait must match Erlang C.
func TestMMcMeanWaitMatchesErlangC(t *testing.T) {
	const (
		c      = 8
		lambda = 6.0 // jobs per hour
		mu     = 1.0 // per hour per GPU: mean duration 1 h, offered load 6 Erlangs, rho 0.75
		n      = 200000
	)
	want, err := models.MMcMeanWait(lambda, mu, c)
	require.NoError(t, err)
	var got float64
	seeds := []uint64{1, 2, 3, 4}
	for _, seed := range seeds {
		r := models.NewStream(seed, 1)
		jobs := make([]cluster.JobSpec, n)
		var at float64
		for i := range jobs {
			at += models.Exponential{MeanValue: 1 / lambda}.Sample(r)
			d := models.Exponential{MeanValue: 1 / mu}.Sample(r)
			jobs[i] = job("j", Time(at*float64(Hour)), max(1, Time(d*float64(Hour))), 1, 1)
		}
		res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 2, 4)}}, jobs...)
		var sum float64
		for _, j := range res.Jobs {
			require.Equal(t, Completed, j.Outcome)
			sum += float64(j.Wait())
		}
		got += sum / n / float64(Hour) / float64(len(seeds))
	}
	// Wq = C(8, 6)/(8-6) h; 800k waits, tolerance 4% of Wq.
	t.Logf("mean wait: simulated %.4f h, Erlang C %.4f h", got, want)
	require.InEpsilon(t, want, got, 0.04)
}

// The hot path allocates nothing per event: doubling the jobs must not
// double the allocations (only slices that grow, amortised, may allocate).
func TestAllocationsDoNotGrowWithJobs(t *testing.T) {
	mk := func(n int) []cluster.JobSpec {
		r := models.NewStream(3, 1)
		jobs := make([]cluster.JobSpec, n)
		var at float64
		for i := range jobs {
			at += models.Exponential{MeanValue: float64(Minute)}.Sample(r)
			jobs[i] = job("j", Time(at), Time(models.Exponential{MeanValue: float64(10 * Minute)}.Sample(r))+1, 1+int32(i%2), 1+int32(i%4))
		}
		return jobs
	}
	allocs := func(jobs []cluster.JobSpec) float64 {
		return testing.AllocsPerRun(3, func() {
			_, err := Run(Config{Pools: []cluster.PoolSpec{pool("p", 8, 8)}, Queue: scheduler.QueueConfig{Backfill: true}, Workload: &SliceSource{Jobs: jobs}})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(mk(20000)), allocs(mk(40000))
	t.Logf("allocations per run: %.0f for 20k jobs, %.0f for 40k jobs", small, large)
	require.Less(t, large-small, 200.0, "allocations grow with the number of jobs")
}
