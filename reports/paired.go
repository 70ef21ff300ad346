package reports

import (
	"fmt"
	"iter"

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
	n := min(a.NumJobs(), b.NumJobs())
	var sa, sb float64
	next, stop := iter.Pull2(b.Records())
	defer stop()
	for i, x := range a.Records() {
		if i >= n {
			break
		}
		_, y, ok := next()
		if !ok {
			break
		}
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

func censoredJCT(res *sim.Result) CensoredStats { return censoredJCTWith(res, nil, nil) }

// censoredJCTWith is censoredJCT with room for the observations and the
// sort's scratch (nil, or a value a job each).
func censoredJCTWith(res *sim.Result, room, scratch []float64) CensoredStats {
	q := kmQuantilesWith(res, room, scratch, 0.5, 0.95)
	c := CensoredStats{Jobs: res.NumJobs(), P50: q[0], P95: q[1]}
	for _, j := range res.Records() {
		if j.Outcome != sim.Completed {
			c.Censored++
		}
	}
	return c
}

// kmMedian is the Kaplan-Meier median time from submission to completion.
func kmMedian(res *sim.Result) float64 { return kmQuantiles(res, 0.5)[0] }

// kmQuantiles are Kaplan-Meier quantiles (qs ascending) of the time from
// submission to completion: a job that completed is an event at its
// completion time; any other (running, pending, failed) is censored at
// the end of the run, or at its end when it ended without completing.
// -1: not reached. One sort of one value a job serves every quantile.
func kmQuantiles(res *sim.Result, qs ...float64) []float64 {
	return kmQuantilesWith(res, nil, nil, qs...)
}

// kmQuantilesWith is kmQuantiles keeping the observations in room and
// sorting them with scratch (nil, or a value a job each), so that a
// summary's lists serve it too.
func kmQuantilesWith(res *sim.Result, room, scratch []float64, qs ...float64) []float64 {
	// Each observation is 2t, +1 when censored: sorted, events come
	// before censorings at the same time, as the estimator takes them.
	// They are whole numbers below 2^53 (t below 2^52 ms, 142,000 years),
	// exact in a float64 and ordered as the integers are.
	n := res.NumJobs()
	if len(room) < n {
		room = make([]float64, n)
	}
	xs := room[:n]
	for i, j := range res.Records() {
		switch {
		case j.Outcome == sim.Completed:
			xs[i] = float64(2 * (j.End - j.Submit))
		case j.End >= 0:
			xs[i] = float64(2*(j.End-j.Submit) + 1)
		default:
			xs[i] = float64(2*(res.End-j.Submit) + 1)
		}
	}
	sortFloatsWith(xs, scratch)
	out := make([]float64, len(qs))
	for k := range out {
		out[k] = -1
	}
	next := 0 // the first quantile not yet reached
	s, atRisk := 1.0, float64(len(xs))
	for i := 0; i < len(xs) && next < len(qs); {
		t := int64(xs[i]) >> 1
		k, d := i, 0.0
		for k < len(xs) && int64(xs[k])>>1 == t {
			if int64(xs[k])&1 == 0 {
				d++
			}
			k++
		}
		if d > 0 {
			s *= 1 - d/atRisk
			for next < len(qs) && s <= 1-qs[next]+1e-12 {
				out[next] = float64(t) / 1000
				next++
			}
		}
		atRisk -= float64(k - i)
		i = k
	}
	return out
}

// sameWorkText states spot savings for the same completed work.
func sameWorkText(c *SpotComparison) string {
	if c.Spot.BySide || c.OnDemand.BySide {
		return bySideText(c)
	}
	if c.Spot.Completed == 0 && c.OnDemand.Completed == 0 && c.Spot.CostPerMillionRequests > 0 && c.OnDemand.CostPerMillionRequests > 0 {
		return servedWorkText(c)
	}
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

// servedWorkText compares runs of inference services alone by the bill
// per million requests served, with each service's SLO attainment beside
// it (spot interruptions cost cold starts, not lost work).
func servedWorkText(c *SpotComparison) string {
	verb := "saves"
	if c.SameWorkSavingsPct < 0 {
		verb = "costs"
	}
	out := fmt.Sprintf("For the same requests, spot %s %.1f%% (%s against %s a million requests served); its bill is %s against %s all on-demand (%s lower).",
		verb, abs(c.SameWorkSavingsPct), money(c.Spot.CostPerMillionRequests), money(c.OnDemand.CostPerMillionRequests),
		money(c.Spot.Cost), money(c.OnDemand.Cost), money(c.Savings))
	return out + sloText(c)
}

// sloText sets each service's SLO attainment on spot beside on demand.
func sloText(c *SpotComparison) string {
	out := ""
	for _, a := range c.Spot.Services {
		for _, b := range c.OnDemand.Services {
			if a.Name == b.Name && (a.SLOAttainment > 0 || b.SLOAttainment > 0) {
				out += fmt.Sprintf(" %s within its SLO: %s on spot, %s on demand.", a.Name, pct(a.SLOAttainment), pct(b.SLOAttainment))
			}
		}
	}
	return out
}

// bySideText compares runs with both jobs and services side by side,
// each side on its share of the bill: training by the cost of a useful
// GPU-hour, inference by the cost of a million requests served. A run
// that completes less training or serves fewer requests pays more per
// unit of its work, not less.
func bySideText(c *SpotComparison) string {
	verb := func(x float64) string {
		if x < 0 {
			return "costs"
		}
		return "saves"
	}
	out := "Each side on its share of the bill: training, "
	if c.Spot.CostPerUsefulGPUHour > 0 && c.OnDemand.CostPerUsefulGPUHour > 0 {
		out += fmt.Sprintf("for the same completed work, spot %s %.1f%% (%s against %s a useful GPU-hour; jobs completed: %d on spot, %d on demand)",
			verb(c.SameWorkSavingsPct), abs(c.SameWorkSavingsPct), money(c.Spot.CostPerUsefulGPUHour), money(c.OnDemand.CostPerUsefulGPUHour),
			c.Spot.Completed, c.OnDemand.Completed)
	} else {
		out += fmt.Sprintf("the runs did not both complete work, so no like-for-like figure (jobs completed: %d on spot, %d on demand)", c.Spot.Completed, c.OnDemand.Completed)
	}
	out += "; inference, "
	if c.Spot.CostPerMillionRequests > 0 && c.OnDemand.CostPerMillionRequests > 0 {
		out += fmt.Sprintf("for the same requests, spot %s %.1f%% (%s against %s a million requests served).",
			verb(c.ServedWorkSavingsPct), abs(c.ServedWorkSavingsPct), money(c.Spot.CostPerMillionRequests), money(c.OnDemand.CostPerMillionRequests))
	} else {
		out += "the runs did not both serve requests, so no like-for-like figure."
	}
	out += fmt.Sprintf(" The bills are %s on spot (training %s, inference %s) against %s all on-demand (training %s, inference %s), %s lower, for different work.",
		money(c.Spot.Cost), money(c.Spot.TrainingCost), money(c.Spot.InferenceCost),
		money(c.OnDemand.Cost), money(c.OnDemand.TrainingCost), money(c.OnDemand.InferenceCost), money(c.Savings))
	return out + sloText(c)
}

func pairedText(p *PairedJCT) string {
	if p == nil || p.Both == 0 && p.OnlyThis == 0 && p.OnlyOther == 0 {
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
