package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Time-slicing by hand. One GPU advertised 4 times, 16 GiB of memory.
//   - A (10 min of work, 6 GiB) starts at 0 alone: full speed.
//   - B (4 min, 6 GiB) starts at 2 min: two sharers, each at half speed.
//     A has 8 min left, B 4: B ends at 2 + 8 = 10 min.
//   - then A runs alone again with 8 - 4 = 4 min left: it ends at 14 min.
//   - C (8 GiB) at 3 min would bring the GPU to 20 GiB of 16: OOM-killed.
func TestTimeSlicingSlowdownAndOOM(t *testing.T) {
	p := pool("ts", 1, 1)
	p.GPUModel = "T4"
	p.GPUMemoryMiB = 16 << 10
	p.Sharing.TimeSlicing = 4
	mk := func(name string, submit, dur Time, mem int64) cluster.JobSpec {
		j := job(name, submit, dur, 1, 1)
		j.Pod.GPUMemMiB = mem
		return j
	}
	res := run(t, Config{Pools: []cluster.PoolSpec{p}, Queue: scheduler.QueueConfig{Backfill: true}},
		mk("A", 0, 10*Minute, 6<<10), mk("B", 2*Minute, 4*Minute, 6<<10), mk("C", 3*Minute, Minute, 8<<10))
	tm := times(res)
	require.Equal(t, timing{0, 14 * Minute}, tm["A"])
	require.Equal(t, timing{2 * Minute, 10 * Minute}, tm["B"])
	require.True(t, res.Jobs[0].Slowed)
	require.Equal(t, Completed, res.Jobs[0].Outcome)
	require.Equal(t, OOMKilled, res.Jobs[2].Outcome)
	require.Equal(t, timing{3 * Minute, 3 * Minute}, tm["C"])
	require.Contains(t, res.Jobs[2].Diagnosis(), "20480 MiB of the GPU's 16384 MiB")
	// A replica holds a quarter of the GPU: A 250 milli for 14 min.
	require.Equal(t, int64(250*14*Minute), res.Jobs[0].HeldMilliMs)
	require.Equal(t, int64(250), res.Jobs[0].AllocMilli)
}

func TestMIGMixedAndSingle(t *testing.T) {
	mixed := pool("mig", 1, 1)
	mixed.GPUModel = "H100-80GB"
	mixed.Sharing.MIGStrategy = cluster.MIGMixed
	layout, err := models.MIGLayout("H100-80GB", "all-balanced")
	require.NoError(t, err)
	mixed.Sharing.MIGLayout = layout
	mig := func(name string, submit Time, profile string) cluster.JobSpec {
		j := job(name, submit, 10*Second, 1, 1)
		j.Pod.MIG = profile
		return j
	}
	res := run(t, Config{Pools: []cluster.PoolSpec{mixed}, Queue: scheduler.QueueConfig{Backfill: true}},
		mig("a", 0, "1g.10gb"), mig("b", 0, "1g.10gb"), mig("c", 0, "1g.10gb"), mig("d", 0, "3g.40gb"),
		job("whole", 0, Second, 1, 1), mig("big", 0, "7g.80gb"))
	tm := times(res)
	require.Equal(t, Time(0), tm["a"].start)
	require.Equal(t, Time(0), tm["b"].start)
	require.Equal(t, 10*Second, tm["c"].start, "only two 1g instances in the balanced layout")
	require.Equal(t, Time(0), tm["d"].start)
	// Balanced on H100: 2g@0, 1g@2, 1g@3, 3g@4; a 1g instance is 1/7 of the GPU.
	require.Equal(t, int64(143), res.Jobs[0].AllocMilli)
	require.Equal(t, int64(429), res.Jobs[3].AllocMilli)
	require.Equal(t, Unschedulable, res.Jobs[4].Outcome)
	require.Contains(t, res.Jobs[4].Diagnosis(), "Insufficient nvidia.com/gpu")
	require.Equal(t, Unschedulable, res.Jobs[5].Outcome)
	require.Contains(t, res.Jobs[5].Diagnosis(), "Insufficient nvidia.com/mig-7g.80gb")

	single := pool("single", 1, 1)
	single.GPUModel = "A100-40GB"
	single.Sharing.MIGStrategy = cluster.MIGSingle
	single.Sharing.MIGLayout, err = models.MIGLayout("A100-40GB", "all-1g.5gb")
	require.NoError(t, err)
	res = run(t, Config{Pools: []cluster.PoolSpec{single}}, job("seven", 0, Second, 1, 7), job("eight", 0, Second, 1, 8))
	require.Equal(t, Completed, res.Jobs[0].Outcome)
	require.Equal(t, int64(1000), res.Jobs[0].AllocMilli, "7 x 1/7 of the GPU")
	require.Equal(t, Unschedulable, res.Jobs[1].Outcome)

	bad := single
	bad.Sharing.MIGLayout = []string{"1g.5gb", "2g.10gb"}
	_, err = Run(Config{Pools: []cluster.PoolSpec{bad}, Workload: &SliceSource{}})
	require.ErrorContains(t, err, "single MIG strategy needs one profile")
}

// Fragmentation sampled over time, by hand: one node of 2 GPUs. A holds a
// whole GPU, B a 500-milli share of the other; the mix is half of each.
// A whole-GPU pod finds no free GPU: all 500 free milli are fragmented,
// weighted 0.5; a 500-milli share fits (nothing below 500 free but the
// full GPU's 0): 0. Fragmentation = 250 milli at the first interval's end.
func TestFragmentationTimeline(t *testing.T) {
	a := job("A", 0, 3*Hour, 1, 1)
	b := job("B", 0, 3*Hour, 1, 0)
	b.Pod.GPUMilli = 500
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 2)}, Fragmentation: true, Horizon: 2 * Hour}, a, b)
	require.Equal(t, []int64{250, 250}, res.Timeline.FragMilli[0])
	require.Equal(t, int64(250), res.Nodes[0].FragMilliGPU, "per node at the end")
}

// MIG re-layout: two H100s as one 7g instance each; re-layout on demand
// with a 30 s drain and a 90 s reconfigure.
//   - X (7g, 1 h) takes GPU 0 at 0.
//   - A (1g, at 0) finds no 1g instance: idle GPU 1 leaves service and is
//     back at 2 min as seven 1g instances; A starts then.
//   - B (1g, at 1 min) waits for that same re-layout and starts at 2 min.
//   - C (7g, at 3 min) finds no idle GPU to re-lay; when A and B end at
//     12 min GPU 1 is idle again and is re-laid as a 7g: C starts at 14 min,
//     long before X frees GPU 0 at 1 h.
func TestMIGRelayout(t *testing.T) {
	p := pool("mig", 1, 2)
	p.GPUModel = "H100-80GB"
	p.Sharing = cluster.Sharing{MIGStrategy: cluster.MIGMixed, MIGLayout: []string{"7g.80gb"},
		MIGRelayout: true, MIGDrain: 30 * Second, MIGReconfigure: 90 * Second}
	mig := func(name string, submit, dur Time, profile string) cluster.JobSpec {
		j := job(name, submit, dur, 1, 1)
		j.Pod.MIG = profile
		return j
	}
	res := run(t, Config{Pools: []cluster.PoolSpec{p}, Queue: scheduler.QueueConfig{Backfill: true}},
		mig("X", 0, Hour, "7g.80gb"), mig("A", 0, 10*Minute, "1g.10gb"), mig("B", Minute, 10*Minute, "1g.10gb"), mig("C", 3*Minute, Minute, "7g.80gb"))
	tm := times(res)
	require.Equal(t, Time(0), tm["X"].start)
	require.Equal(t, 2*Minute, tm["A"].start)
	require.Equal(t, 2*Minute, tm["B"].start)
	require.Equal(t, 14*Minute, tm["C"].start)
	require.Equal(t, uint64(2), res.Stats.Relayouts)
	// Seven 1g instances split the GPU exactly: 142 + 6 x 143 = 1000 milli.
	require.Equal(t, int64(142), res.Jobs[1].AllocMilli, "the first 1g instance of the new layout")
}

// With a 20% context-switch overhead two sharers each run at 0.8/2 = 0.4:
// A (10 min) alone for 2 min, then with B (2 min of work) at 0.4: B takes
// 5 min (ends at 7), A does 2 of its 8 left; then 6 min alone: ends at 13.
func TestTimeSlicingOverhead(t *testing.T) {
	p := pool("ts", 1, 1)
	p.Sharing.TimeSlicing, p.Sharing.SliceOverhead = 2, 0.2
	res := run(t, Config{Pools: []cluster.PoolSpec{p}, Queue: scheduler.QueueConfig{Backfill: true}},
		job("A", 0, 10*Minute, 1, 1), job("B", 2*Minute, 2*Minute, 1, 1))
	tm := times(res)
	require.Equal(t, timing{2 * Minute, 7 * Minute}, tm["B"])
	require.Equal(t, timing{0, 13 * Minute}, tm["A"])
}
