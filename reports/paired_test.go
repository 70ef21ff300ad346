package reports

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

func rec(name string, submit, end sim.Time, o sim.Outcome) sim.JobRecord {
	return sim.JobRecord{Name: name, Submit: submit, Start: submit, End: end, Outcome: o}
}

// Kaplan-Meier by hand: completions at 10, 20 and 30 s, censorings at 15
// and 25 s (five jobs). S(10) = 4/5 = 0.8; at 20 three are at risk: S =
// 0.8 x 2/3 = 0.533; at 30 one is: S = 0. The median is 30 s, where the
// completed jobs alone say 20 s.
func TestKaplanMeierMedianCountsUnfinishedJobs(t *testing.T) {
	res := &sim.Result{End: 100 * sim.Second, Jobs: []sim.JobRecord{
		rec("a", 0, 10*sim.Second, sim.Completed),
		rec("b", 0, 20*sim.Second, sim.Completed),
		rec("c", 0, 30*sim.Second, sim.Completed),
		rec("d", 85*sim.Second, -1, sim.Running), // censored at 100-85 = 15 s
		rec("e", 0, 25*sim.Second, sim.Failed),   // censored at its end
	}}
	require.Equal(t, 30.0, kmMedian(res))
	// More than half unfinished: the median is not reached.
	res.Jobs[0].Outcome, res.Jobs[0].End = sim.Running, -1
	res.Jobs[1].Outcome, res.Jobs[1].End = sim.Pending, -1
	require.Equal(t, -1.0, kmMedian(res))
}

// Several quantiles from one sort, by hand: completions at 10, 20, 30 and
// 40 s, a failure at 20 s (censored after the completion at the same
// time) and a job pending at the end (censored at 100 s); six jobs.
// S(10) = 5/6; S(20) = 5/6 x 4/5 = 2/3, then the failure leaves 3 at
// risk; S(30) = 2/3 x 2/3 = 4/9 = 0.444; S(40) = 4/9 x 1/2 = 2/9 = 0.222.
// p50 is 30 s (first S <= 0.5), p75 40 s (first S <= 0.25), p95 never.
func TestKaplanMeierQuantilesByHand(t *testing.T) {
	res := &sim.Result{End: 100 * sim.Second, Jobs: []sim.JobRecord{
		rec("a", 0, 40*sim.Second, sim.Completed),
		rec("b", 0, 20*sim.Second, sim.Failed),
		rec("c", 0, 20*sim.Second, sim.Completed),
		rec("d", 0, -1, sim.Pending),
		rec("e", 0, 10*sim.Second, sim.Completed),
		rec("f", 0, 30*sim.Second, sim.Completed),
	}}
	require.Equal(t, []float64{30, 30, 40, -1}, kmQuantiles(res, 0.5, 0.55, 0.75, 0.95))
	c := censoredJCT(res)
	require.Equal(t, CensoredStats{Jobs: 6, Censored: 2, P50: 30, P95: -1}, c)
	// The summary finds the same from its pass over the completion times
	// (its jobs need pods).
	for i := range res.Jobs {
		res.Jobs[i].Pod, res.Jobs[i].Queue = &cluster.PodSpec{}, "q"
	}
	require.Equal(t, c, Summarize(res, Meta{}).JCTAllJobs)
}

// Pairing by job: only jobs both runs completed enter the means.
func TestPairJCT(t *testing.T) {
	spot := &sim.Result{End: 1000 * sim.Second, Jobs: []sim.JobRecord{
		rec("a", 0, 100*sim.Second, sim.Completed),
		rec("b", 0, 300*sim.Second, sim.Completed),
		rec("c", 0, -1, sim.Running),
		rec("d", 0, 50*sim.Second, sim.Completed),
	}}
	od := &sim.Result{End: 1000 * sim.Second, Jobs: []sim.JobRecord{
		rec("a", 0, 80*sim.Second, sim.Completed),
		rec("b", 0, 320*sim.Second, sim.Completed),
		rec("c", 0, 900*sim.Second, sim.Completed),
		rec("d", 0, -1, sim.Pending),
	}}
	p := PairJCT(spot, od)
	require.Equal(t, 2, p.Both)
	require.Equal(t, 200.0, p.MeanSeconds)   // (100 + 300) / 2
	require.Equal(t, 200.0, p.OtherMeanSecs) // (80 + 320) / 2
	require.Equal(t, 1, p.Slower)            // a
	require.Equal(t, 1, p.OnlyThis)          // d
	require.Equal(t, 1, p.OnlyOther)         // c
}

// The same-work figure compares costs per useful GPU-hour, not bills.
func TestCompareSpotSameWork(t *testing.T) {
	spot := &Summary{MoneyFigures: MoneyFigures{Cost: &CostSummary{Total: 300, CostPerUsefulGPUHour: 3}}, JobFigures: JobFigures{Jobs: JobCounts{ByOutcome: map[string]int{"completed": 10}}}}
	od := &Summary{MoneyFigures: MoneyFigures{Cost: &CostSummary{Total: 1000, CostPerUsefulGPUHour: 5}}, JobFigures: JobFigures{Jobs: JobCounts{ByOutcome: map[string]int{"completed": 20}}}}
	c := CompareSpot(spot, od, nil, nil)
	require.Equal(t, 700.0, c.Savings)
	require.Equal(t, 70.0, c.SavingsPct)
	require.Equal(t, 40.0, c.SameWorkSavingsPct) // 1 - 3/5
	require.Contains(t, sameWorkText(c), "For the same completed work, spot saves 40.0% ($3.00 against $5.00 a useful GPU-hour). The spot run completed 10 jobs and the all-on-demand run 20")
}

func TestMoney(t *testing.T) {
	for x, want := range map[float64]string{
		0: "$0.00", 3267.07: "$3,267", 999.99: "$999.99", 999.996: "$1,000", 23777.4: "$23,777",
		27044.35: "$27,044", 1234567.8: "$1,234,568", -10192.2: "-$10,192", 0.5: "$0.50", 5.0758: "$5.08",
	} {
		require.Equal(t, want, Money(x), "%v", x)
	}
}
