package reports

import (
	"fmt"
	"sort"

	"gpuplan.dev/gpuplan/sim"
)

// PairedJCT compares two runs of the same workload job by job: the jobs
// both completed, and completion times with the jobs that did not
// complete counted as censored (Kaplan-Meier), not dropped. Dropping them
// flatters the run that completed less: its long jobs leave the sample.
type PairedJCT struct {
	// Both is the number of jobs both runs completed; the means are over
	// them; Slower counts those that took longer in the first run.
	Both          int     `json:"bothCompleted"`
	MeanSeconds   float64 `json:"meanSeconds"`
	OtherMeanSecs float64 `json:"otherMeanSeconds"`
	Slower        int     `json:"slower"`
	// OnlyThis and OnlyOther count jobs only one run completed.
	OnlyThis  int `json:"onlyThisCompleted"`
	OnlyOther int `json:"onlyOtherCompleted"`
	// KMMedian is each run's median completion time over all its jobs,
	// unfinished ones censored at the end of the run (-1: more than half
	// never completed).
	KMMedian      float64 `json:"kmMedianSeconds"`
	OtherKMMedian float64 `json:"otherKMMedianSeconds"`
}

// PairJCT pairs run a with run b (the same workload: jobs match by ID).
func PairJCT(a, b *sim.Result) *PairedJCT {
	p := &PairedJCT{KMMedian: kmMedian(a), OtherKMMedian: kmMedian(b)}
	n := min(len(a.Jobs), len(b.Jobs))
	var sa, sb float64
	for i := 0; i < n; i++ {
		x, y := &a.Jobs[i], &b.Jobs[i]
		if x.Name != y.Name || x.Submit != y.Submit {
			continue // not the same job: the workloads differ here
		}
		ca, cb := x.Outcome == sim.Completed, y.Outcome == sim.Completed
		switch {
		case ca && cb:
			p.Both++
			ja, jb := float64(x.End-x.Submit)/1000, float64(y.End-y.Submit)/1000
			sa += ja
			sb += jb
			if ja > jb {
				p.Slower++
			}
		case ca:
			p.OnlyThis++
		case cb:
			p.OnlyOther++
		}
	}
	if p.Both > 0 {
		p.MeanSeconds, p.OtherMeanSecs = round(sa/float64(p.Both), 3), round(sb/float64(p.Both), 3)
	}
	return p
}

// CensoredStats are completion-time quantiles over every job of a run,
// Kaplan-Meier estimates with the unfinished jobs censored; -1 where more
// than that share of the jobs never completed.
type CensoredStats struct {
	Jobs     int     `json:"count"`
	Censored int     `json:"censored"`
	P50      float64 `json:"p50Seconds"`
	P95      float64 `json:"p95Seconds"`
}

func censoredJCT(res *sim.Result) CensoredStats {
	c := CensoredStats{Jobs: len(res.Jobs), P50: kmQuantile(res, 0.5), P95: kmQuantile(res, 0.95)}
	for i := range res.Jobs {
		if res.Jobs[i].Outcome != sim.Completed {
			c.Censored++
		}
	}
	return c
}

// kmMedian is the Kaplan-Meier median time from submission to completion.
func kmMedian(res *sim.Result) float64 { return kmQuantile(res, 0.5) }

// kmQuantile is the Kaplan-Meier q-quantile of the time from submission
// to completion: a job that completed is an event at its completion time;
// any other (running, pending, failed) is censored at the end of the run,
// or at its end when it ended without completing. -1: not reached.
func kmQuantile(res *sim.Result, q float64) float64 {
	type obs struct {
		t     int64
		event bool
	}
	var xs []obs
	for i := range res.Jobs {
		j := &res.Jobs[i]
		switch {
		case j.Outcome == sim.Completed:
			xs = append(xs, obs{j.End - j.Submit, true})
		case j.End >= 0:
			xs = append(xs, obs{j.End - j.Submit, false})
		default:
			xs = append(xs, obs{res.End - j.Submit, false})
		}
	}
	// Events before censorings at the same time, as the estimator takes them.
	sort.Slice(xs, func(i, k int) bool {
		if xs[i].t != xs[k].t {
			return xs[i].t < xs[k].t
		}
		return xs[i].event && !xs[k].event
	})
	s, atRisk := 1.0, float64(len(xs))
	for i := 0; i < len(xs); {
		k, d := i, 0.0
		for k < len(xs) && xs[k].t == xs[i].t {
			if xs[k].event {
				d++
			}
			k++
		}
		if d > 0 {
			s *= 1 - d/atRisk
			if s <= 1-q+1e-12 {
				return float64(xs[i].t) / 1000
			}
		}
		atRisk -= float64(k - i)
		i = k
	}
	return -1
}

// sameWorkText states spot savings for the same completed work.
func sameWorkText(c *SpotComparison) string {
	if c.OnDemand.CostPerUsefulGPUHour <= 0 || c.Spot.CostPerUsefulGPUHour <= 0 {
		return fmt.Sprintf("Spot costs %s against %s all on-demand (%s lower); the runs did not both complete work, so no like-for-like figure.",
			money(c.Spot.Cost), money(c.OnDemand.Cost), money(c.Savings))
	}
	verb := "saves"
	if c.SameWorkSavingsPct < 0 {
		verb = "costs"
	}
	return fmt.Sprintf("For the same completed work, spot %s %.1f%% (%s against %s a useful GPU-hour). The spot run completed %d jobs and the all-on-demand run %d; its bill is %s against %s (%s lower), for different work.",
		verb, abs(c.SameWorkSavingsPct), money(c.Spot.CostPerUsefulGPUHour), money(c.OnDemand.CostPerUsefulGPUHour),
		c.Spot.Completed, c.OnDemand.Completed, money(c.Spot.Cost), money(c.OnDemand.Cost), money(c.Savings))
}

func pairedText(p *PairedJCT) string {
	if p == nil {
		return ""
	}
	km := func(x float64) string {
		if x < 0 {
			return "not reached (more than half unfinished)"
		}
		return Human(x)
	}
	return fmt.Sprintf("Completion time, like for like: over the %d jobs both runs completed, %s on spot against %s on demand (%d slower on spot); %d completed only on demand, %d only on spot. Median over every job, unfinished ones censored (Kaplan-Meier): %s on spot, %s on demand.",
		p.Both, Human(p.MeanSeconds), Human(p.OtherMeanSecs), p.Slower, p.OnlyOther, p.OnlyThis, km(p.KMMedian), km(p.OtherKMMedian))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
