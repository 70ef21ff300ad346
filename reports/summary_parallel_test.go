package reports

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// runAll runs every task exactly once, on one goroutine or several.
func TestRunAllRunsEachTaskOnce(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		var runs [100]atomic.Int32
		tasks := make([]func(), len(runs))
		for i := range tasks {
			tasks[i] = func() { runs[i].Add(1) }
		}
		runAll(parallel, tasks)
		for i := range runs {
			require.Equal(t, int32(1), runs[i].Load(), "task %d, parallel %v", i, parallel)
		}
	}
}

// A run past parallelStatsMin jobs computes its statistics on several
// goroutines; they are the figures worked out by hand. Of 2 x 70,000 jobs
// (jobsResult), the even ones started 1.5 s after submission and ran an
// hour (completion 3601.5 s); the odd ones never started (no wait, still
// pending at the end, 10,000 s after the last submission: censored later
// than any completion).
func TestSummaryStatisticsOfALargeRun(t *testing.T) {
	const n = 140_000
	require.Greater(t, n, parallelStatsMin)
	res := jobsResult(n)
	res.End = n*1000 + 10_000_000
	s := Summarize(res, Meta{})
	for _, st := range []Stats{s.QueueWait, s.Queues[0].QueueWait} {
		require.Equal(t, Stats{Count: n / 2, Mean: 1.5, P50: 1.5, P95: 1.5, P99: 1.5, Max: 1.5}, st)
	}
	for _, st := range []Stats{s.JCT, s.Queues[0].JCT} {
		require.Equal(t, Stats{Count: n / 2, Mean: 3601.5, P50: 3601.5, P95: 3601.5, P99: 3601.5, Max: 3601.5}, st)
	}
	require.Equal(t, n, s.JCTAllJobs.Jobs)
	require.Equal(t, n/2, s.JCTAllJobs.Censored)
	// Kaplan-Meier: at 3601.5 s all n jobs are at risk and n/2 complete,
	// none after: survival 0.5, so the median is 3601.5 s and the 95th
	// percentile is never reached.
	require.Equal(t, 3601.5, s.JCTAllJobs.P50)
	require.Equal(t, -1.0, s.JCTAllJobs.P95)
}

// Each queue's statistics and the run's come from windows of one list: two
// queues of a large run, interleaved, keep their own figures. Of 140,000
// jobs (jobsResult, then every fourth job from the third on moved to
// team-b and, when it ran, started and ended 2 s later): team-a's 35,000
// completed jobs waited 1.5 s and completed in 3,601.5 s, team-b's 35,000
// waited 3.5 s and completed in 3,603.5 s. The run's 70,000 waits have mean
// 2.5 s; the empirical median is the 35,000th smallest, 1.5 s, and the
// 95th and 99th percentiles 3.5 s. Kaplan-Meier: at 3,601.5 s 35,000 of
// the 140,000 at risk complete (survival 0.75), at 3,603.5 s 35,000 of the
// 105,000 left (0.75 x 2/3 = 0.5): the median is 3,603.5 s.
func TestSummaryQueuesOfALargeRun(t *testing.T) {
	const n = 140_000
	res := jobsResult(n)
	res.End = n*1000 + 10_000_000
	for i := range res.Jobs {
		j := &res.Jobs[i]
		if i%4 < 2 {
			continue
		}
		j.Queue = "team-b"
		if j.Start >= 0 {
			j.Start += 2000
			j.End += 2000
		}
	}
	s := Summarize(res, Meta{})
	require.Len(t, s.Queues, 2)
	a, b := s.Queues[0], s.Queues[1]
	require.Equal(t, []string{"team-a", "team-b"}, []string{a.Name, b.Name})
	require.Equal(t, Stats{Count: n / 4, Mean: 1.5, P50: 1.5, P95: 1.5, P99: 1.5, Max: 1.5}, a.QueueWait)
	require.Equal(t, Stats{Count: n / 4, Mean: 3.5, P50: 3.5, P95: 3.5, P99: 3.5, Max: 3.5}, b.QueueWait)
	require.Equal(t, Stats{Count: n / 4, Mean: 3601.5, P50: 3601.5, P95: 3601.5, P99: 3601.5, Max: 3601.5}, a.JCT)
	require.Equal(t, Stats{Count: n / 4, Mean: 3603.5, P50: 3603.5, P95: 3603.5, P99: 3603.5, Max: 3603.5}, b.JCT)
	require.Equal(t, Stats{Count: n / 2, Mean: 2.5, P50: 1.5, P95: 3.5, P99: 3.5, Max: 3.5}, s.QueueWait)
	require.Equal(t, Stats{Count: n / 2, Mean: 3602.5, P50: 3601.5, P95: 3603.5, P99: 3603.5, Max: 3603.5}, s.JCT)
	require.Equal(t, CensoredStats{Jobs: n, Censored: n / 2, P50: 3603.5, P95: -1}, s.JCTAllJobs)
}

// describeRuns, given a list made of sorted runs, describes it as Describe
// does: one run, two merged, three sorted again; ties and runs of very
// different lengths included.
func TestDescribeRunsAsDescribe(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sizes := range [][]int{{0}, {5000}, {1, 9000}, {7000, 0}, {3000, 3000}, {10, 20, 5000}} {
		var all []float64
		var runs [][]float64
		for _, n := range sizes {
			run := make([]float64, n)
			for i := range run {
				run[i] = float64(r.IntN(2000) * 1000)
			}
			all = append(all, run...)
			runs = append(runs, run)
		}
		want := Describe(slices.Clone(all))
		off := 0
		for k, n := range sizes {
			runs[k] = all[off : off+n]
			slices.Sort(runs[k])
			off += n
		}
		require.Equal(t, want, describeRuns(all, make([]float64, len(all)), runs), "runs of %v", sizes)
	}
}
