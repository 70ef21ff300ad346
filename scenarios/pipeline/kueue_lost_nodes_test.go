package pipeline

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// Issue 33's reproduction (testdata/kueue-preemption-lost-nodes, see its
// PROVENANCE): Kueue preemption, Karpenter nodes lost to failures, a
// KPA-scaled service and two job classes stopped as a bug on 18 of seeds
// 1-20. A job Kueue preempted while it waited out the restart backoff of a
// lost node and admitted again before the backoff ended was started by the
// admission and again by the backoff's end. Every seed now runs clean and
// passes every invariant, and each run does mix the two: failures and
// preemptions, and no job starts more often than once plus the times it
// was stopped.
func TestKueuePreemptionWithLostNodesEverySeed(t *testing.T) {
	file := "testdata/kueue-preemption-lost-nodes/min6-ondemand-failures.yaml"
	sc := load(t, file)
	type run struct {
		res *sim.Result
		err error
	}
	runs := make([]run, 21)
	seeds := make(chan uint64)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range seeds {
				built, res, err := simulate(sc, Options{Build: scenarios.Options{Seed: &s}, File: file}, "", false)
				if err == nil {
					built.Close()
				}
				runs[s] = run{res, err}
			}
		}()
	}
	for s := uint64(1); s <= 20; s++ {
		seeds <- s
	}
	close(seeds)
	wg.Wait()
	for seed := 1; seed <= 20; seed++ {
		require.NoError(t, runs[seed].err, "seed %d", seed)
		res := runs[seed].res
		require.Positive(t, res.Stats.Disruptions[capacity.CauseFailure], "seed %d: nodes lost to failures", seed)
		preempted := 0
		for _, q := range res.Admission.Queues {
			preempted += q.PreemptionsCaused
		}
		require.Positive(t, preempted, "seed %d: Kueue preemptions", seed)
		for _, j := range res.Jobs {
			require.LessOrEqual(t, j.Attempts, 1+j.Disruptions+j.Preemptions, "seed %d job %d (%s): every restart follows a stop", seed, j.ID, j.Name)
		}
	}
}
