package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// A MIG layout that leaves compute slices unused, by hand. One A100-80GB
// node of 2 GPUs as all-3g.40gb: each GPU has two 3g instances (3/7 of the
// GPU each: 428 and 429 milli, splitting 6/7 = 857 exactly) and one compute
// slice no instance uses. Four 3g jobs of 1 h fill every instance; the
// horizon is 2 h.
//   - allocated: 2 GPUs x 857 milli x 1 h = 1.714 GPU-h
//   - supplied: 2 GPUs x 2 h = 4 GPU-h (the node is paid for whole)
//   - while every instance is held the pool is 857/1000 = 85.7% allocated:
//     the unused slice (2 x 1/7 x 2 h = 0.571 GPU-h) is idle, not dropped.
//
// Before the node's capacity counted its instances, the end-of-run books
// expected 2000 milli per node and the run ended with exit 4.
func TestMIGUnusedSlicesAreIdle(t *testing.T) {
	p := pool("a100", 1, 2)
	p.GPUModel = "A100-80GB"
	layout, err := models.MIGLayout("A100-80GB", "all-3g.40gb")
	require.NoError(t, err)
	p.Sharing = cluster.Sharing{MIGStrategy: cluster.MIGMixed, MIGLayout: layout}
	var jobs []cluster.JobSpec
	for i := range 4 {
		j := job(fmt.Sprint("j", i), 0, Hour, 1, 1)
		j.Pod.MIG = "3g.40gb"
		jobs = append(jobs, j)
	}
	res := run(t, Config{Pools: []cluster.PoolSpec{p}, Horizon: 2 * Hour, TimelineInterval: Hour}, jobs...)
	for _, j := range res.Jobs {
		require.Equal(t, Completed, j.Outcome, j.Name)
		require.Equal(t, Time(0), j.Start, j.Name)
	}
	require.Equal(t, []int64{428, 429, 428, 429}, []int64{res.Jobs[0].AllocMilli, res.Jobs[1].AllocMilli, res.Jobs[2].AllocMilli, res.Jobs[3].AllocMilli})
	require.Equal(t, int64(2*857)*Hour, res.Pools[0].AllocatedMilliMs, "1.714 GPU-h allocated")
	require.Equal(t, int64(2*1000*2)*Hour, res.Pools[0].SuppliedMilliMs, "4 GPU-h supplied")
}

// A re-layout that lands on a layout with an unused slice, and a run that
// ends while a GPU is out of service. Two H100s as one 7g each, re-layout
// with a 30 s drain and a 90 s reconfigure.
//   - X (7g, 1 h) takes GPU 0 at 0; A (3g, 10 min) finds no 3g: GPU 1 is
//     re-laid as all-3g.40gb (two 3g, 6/7 of the GPU) and A starts at 2 min.
//   - A holds 429 or 428 milli: the books close with GPU 1 offering 857.
//   - With a 1-minute horizon GPU 1 is still out of service at the end: it
//     offers nothing, yet is supplied (paid for) all along: 2 GPUs x 1 min.
func TestMIGRelayoutToUnusedSlices(t *testing.T) {
	p := pool("mig", 1, 2)
	p.GPUModel = "H100-80GB"
	p.Sharing = cluster.Sharing{MIGStrategy: cluster.MIGMixed, MIGLayout: []string{"7g.80gb"},
		MIGRelayout: true, MIGDrain: 30 * Second, MIGReconfigure: 90 * Second}
	mig := func(name string, dur Time, profile string) cluster.JobSpec {
		j := job(name, 0, dur, 1, 1)
		j.Pod.MIG = profile
		return j
	}
	cfg := Config{Pools: []cluster.PoolSpec{p}, Queue: scheduler.QueueConfig{Backfill: true}, Horizon: 30 * Minute}
	res := run(t, cfg, mig("X", Hour, "7g.80gb"), mig("A", 10*Minute, "3g.40gb"))
	tm := times(res)
	require.Equal(t, 2*Minute, tm["A"].start)
	require.Equal(t, 12*Minute, tm["A"].end)
	require.Equal(t, int64(428), res.Jobs[1].AllocMilli, "the first 3g instance of the new layout")
	require.Equal(t, int64(1000*30+428*10)*Minute, res.Pools[0].AllocatedMilliMs)
	require.Equal(t, int64(2000*30)*Minute, res.Pools[0].SuppliedMilliMs)

	cfg.Horizon = Minute
	res = run(t, cfg, mig("X", Hour, "7g.80gb"), mig("A", 10*Minute, "3g.40gb"))
	require.Equal(t, Pending, res.Jobs[1].Outcome)
	require.Equal(t, int64(1000)*Minute, res.Pools[0].AllocatedMilliMs)
	require.Equal(t, int64(2000)*Minute, res.Pools[0].SuppliedMilliMs, "a GPU being re-laid is still paid for")
}

// Every MIG layout the models know, on every MIG GPU model, under the
// mixed strategy (static and with re-layout) and the single one, with jobs
// asking for every profile of the model and for whole GPUs: seeds 1..5,
// a 6-hour horizon. No run may break an invariant (exit 4), and a static
// pool can never be more allocated than its layout's compute share.
func TestMIGLayoutSweep(t *testing.T) {
	type variant struct {
		strategy string
		relayout bool
	}
	runs := 0
	for _, model := range models.MIGModels() {
		profiles := models.MIGProfiles(model)
		layouts := []string{"all-balanced"}
		for _, mp := range profiles {
			layouts = append(layouts, "all-"+mp.Name)
		}
		for _, name := range layouts {
			layout, err := models.MIGLayout(model, name)
			require.NoError(t, err)
			placed, err := models.PlaceMIG(model, layout)
			require.NoError(t, err)
			compute := 0
			for _, x := range placed {
				compute += x.Profile.Compute
			}
			variants := []variant{{cluster.MIGMixed, false}, {cluster.MIGMixed, true}}
			if name != "all-balanced" {
				variants = append(variants, variant{cluster.MIGSingle, false})
			}
			for _, v := range variants {
				p := pool("mig", 2, 2)
				p.GPUModel = model
				p.Sharing = cluster.Sharing{MIGStrategy: v.strategy, MIGLayout: layout,
					MIGRelayout: v.relayout, MIGDrain: 30 * Second, MIGReconfigure: 2 * Minute}
				for seed := uint64(1); seed <= 5; seed++ {
					label := fmt.Sprintf("%s %s %s relayout=%v seed %d", model, name, v.strategy, v.relayout, seed)
					rng := rand.New(rand.NewPCG(seed, 7))
					var jobs []cluster.JobSpec
					at := Time(0)
					for i := 0; ; i++ {
						at += Time(rng.ExpFloat64() * float64(6*Minute))
						if at >= 6*Hour {
							break
						}
						j := job(fmt.Sprint("j", i), at, Minute+Time(rng.ExpFloat64()*float64(40*Minute)), 1, 1+rng.Int32N(2))
						if k := rng.IntN(len(profiles) + 1); k < len(profiles) {
							j.Pod.MIG = profiles[k].Name
						}
						jobs = append(jobs, j)
					}
					res, err := Run(Config{Seed: seed, Horizon: 6 * Hour, Pools: []cluster.PoolSpec{p},
						Queue: scheduler.QueueConfig{Backfill: true}, Workload: &SliceSource{Jobs: jobs}})
					require.NoError(t, err, label)
					pr := res.Pools[0]
					require.Equal(t, int64(2*2*1000)*6*Hour, pr.SuppliedMilliMs, label)
					if !v.relayout {
						require.LessOrEqual(t, pr.AllocatedMilliMs*7, pr.SuppliedMilliMs*int64(compute), label)
					}
					var held int64
					for _, j := range res.Jobs {
						held += j.HeldMilliMs
					}
					require.Equal(t, pr.AllocatedMilliMs, held, label)
					runs++
				}
			}
		}
	}
	// 8 models (A100-40GB, A100-80GB, B200, B300, GB200, GB300, H100-80GB,
	// H200-141GB), 7 layouts each (all-balanced and one per profile), 2
	// mixed variants of each and a single one of all but all-balanced, 5
	// seeds.
	require.Equal(t, 8*(7*2+6)*5, runs)
}

// The inflation experiment on a single-strategy MIG pool whose layout
// leaves a slice unused: one A100-40GB node of 2 GPUs as all-3g.20gb offers
// four 3g instances as nvidia.com/gpu. Whole-GPU pods fill them: 4 x 3/7 of
// a GPU = 1714 milli of the 2000 supplied, 0.857 GPUs allocated per GPU.
func TestInflateMIGUnusedSlices(t *testing.T) {
	p := pool("m", 1, 2)
	p.GPUModel = "A100-40GB"
	p.Sharing = cluster.Sharing{MIGStrategy: cluster.MIGSingle, MIGLayout: []string{"3g.20gb", "3g.20gb"}}
	var pods []cluster.JobSpec
	for i := range 8 {
		pods = append(pods, job(fmt.Sprint("p", i), 0, Hour, 1, 1))
	}
	res, err := Inflate(InflateConfig{Pools: []cluster.PoolSpec{p}, Pods: pods, Seed: 1, Target: 1.3})
	require.NoError(t, err)
	require.Equal(t, int64(2), res.CapacityGPUs)
	require.InDelta(t, 1.714, res.AllocatedGPUs, 1e-9)
}
