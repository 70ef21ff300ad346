package reports

import (
	"fmt"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"math"
	"time"
)

// SpotCurve is what spot saves for one run at each mean time between
// interruptions (per node), for the same completed work, against the
// same workload all on-demand; BreakEvenHours is where the saving
// crosses zero (interpolated in log MTBF between the points around it; 0
// when it never does over the curve).
type SpotCurve struct {
	Run            string       `json:"run"`
	Points         []SpotPoint  `json:"points"`
	BreakEvenHours float64      `json:"breakEvenMTBFHours"`
	Note           string       `json:"note"`
	OnDemand       SpotOnDemand `json:"onDemand"`
	// Waterfall goes from the all-on-demand bill to this run's spot bill.
	Waterfall []WaterfallStep `json:"waterfall,omitempty"`
	// Failed, when set, is why the curve's all-on-demand run failed: no
	// point then has a saving.
	Failed string `json:"failed,omitempty"`
}

// SpotOnDemand is the all-on-demand run the curve compares with.
// In a run with jobs and services, the costs are each side's share of
// the bill: training's per useful GPU-hour, inference's per million
// requests served.
type SpotOnDemand struct {
	CostPerUsefulGPUHour   float64 `json:"costPerUsefulGPUHour"`
	Completed              int     `json:"completed"`
	CostPerMillionRequests float64 `json:"costPerMillionRequests,omitempty"`
}

// SpotPoint is one run at one MTBF.
type SpotPoint struct {
	MTBFHours            float64 `json:"mtbfHours"`
	Interruptions        int64   `json:"interruptions"`
	Completed            int     `json:"completed"`
	CostPerUsefulGPUHour float64 `json:"costPerUsefulGPUHour"`
	SavingPct            float64 `json:"sameWorkSavingPct"`
	// With services: the cost per million requests served and the saving
	// for the same requests (the break-even stays training's).
	CostPerMillionRequests float64 `json:"costPerMillionRequests,omitempty"`
	ServedSavingPct        float64 `json:"servedWorkSavingPct,omitempty"`
	// Failed, when set, is why this point's run failed: it has no figures
	// and the curve's break-even and savings leave it out.
	Failed string `json:"failed,omitempty"`
}

// done is the curve's points that ran (not Failed), in order.
func (c *SpotCurve) done() []SpotPoint {
	out := make([]SpotPoint, 0, len(c.Points))
	for _, p := range c.Points {
		if p.Failed == "" {
			out = append(out, p)
		}
	}
	return out
}

// failures says which points failed and why ("" when none did).
func (c *SpotCurve) failures() string {
	var out []string
	for _, p := range c.Points {
		if p.Failed != "" {
			out = append(out, fmt.Sprintf("MTBF %s: failed: %s", Human(p.MTBFHours*3600), p.Failed))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return fmt.Sprintf(" %d of %d points failed and are left out (%s).", len(out), len(c.Points), strings.Join(out, "; "))
}

// SpotMTBFGrid is the curve's MTBFs: 15 minutes to a year, each about
// 1.8 times the last (16 points), wide enough to hold a preemption every
// hour or two (published spot GPU traces) and the Spot Advisor's bands
// (thousands of node-hours).
func SpotMTBFGrid() []time.Duration {
	const n = 16
	lo, hi := math.Log(0.25), math.Log(8760)
	out := make([]time.Duration, n)
	for i := range out {
		h := math.Exp(lo + (hi-lo)*float64(i)/float64(n-1))
		out[i] = time.Duration(h * float64(time.Hour)).Round(time.Minute)
	}
	return out
}

// BreakEven finds where the saving crosses zero between two points of
// the curve, interpolating linearly in log MTBF; 0 when it never does.
func (c *SpotCurve) BreakEven() float64 {
	pts := c.done()
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if (a.SavingPct < 0) != (b.SavingPct < 0) {
			f := a.SavingPct / (a.SavingPct - b.SavingPct)
			return round(math.Exp(math.Log(a.MTBFHours)+f*(math.Log(b.MTBFHours)-math.Log(a.MTBFHours))), 3)
		}
	}
	return 0
}

func spotCurveRows(c *SpotCurve) [][]string {
	var rows [][]any
	for _, p := range c.Points {
		r := []any{inHours(p.MTBFHours * 3600), fmt.Sprint(p.Interruptions), fmt.Sprint(p.Completed),
			usd(p.CostPerUsefulGPUHour), fmt.Sprintf("%+.1f%%", p.SavingPct)}
		if p.Failed != "" {
			r = []any{inHours(p.MTBFHours * 3600), "failed", "-", "-", "-"}
		}
		if c.OnDemand.CostPerMillionRequests > 0 {
			if p.Failed != "" {
				r = append(r, "-", "-")
			} else {
				r = append(r, usd(p.CostPerMillionRequests), fmt.Sprintf("%+.1f%%", p.ServedSavingPct))
			}
		}
		rows = append(rows, r)
	}
	return columns(rows)
}

func spotCurveHeader() []string {
	return []string{"MTBF per node", "interruptions", "completed", "$/useful GPU-h", "same-work saving"}
}

// spotCurveHeaderFor is the curve's header; with services, the cost per
// million requests served and the saving for the same requests follow,
// and with jobs too each side's share of the bill is named.
func spotCurveHeaderFor(c *SpotCurve) []string {
	h := spotCurveHeader()
	if c.OnDemand.CostPerMillionRequests > 0 {
		if c.OnDemand.Completed > 0 {
			h[3], h[4] = "training $/useful GPU-h", "training same-work saving"
			return append(h, "inference $/M requests", "inference same-requests saving")
		}
		return append(h, "$/M requests", "same-requests saving")
	}
	return h
}

// PublishedSpotGPU is a preset from published measurements: single-node
// V100 spot instances on AWS saw a preemption every 1.5 to 4 hours in the
// 2023 traces of Wu et al., "Can't Be Late: Optimizing Spot Instance
// Savings under Deadlines" (NSDI '24, SkyPilot). The figures are carried
// over, not the data.
var PublishedSpotGPU = struct {
	Source             string
	MinHours, MaxHours float64
}{"single-node V100 spot preemptions in SkyPilot's 2023 traces (Wu et al., NSDI '24)", models.PublishedGPUMinHours, models.PublishedGPUMaxHours}

// SavingAt interpolates the curve's saving at an MTBF (log MTBF, linear
// saving); ok is false outside the curve.
func (c *SpotCurve) SavingAt(hours float64) (float64, bool) {
	pts := c.done()
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if hours >= a.MTBFHours && hours <= b.MTBFHours {
			f := (math.Log(hours) - math.Log(a.MTBFHours)) / (math.Log(b.MTBFHours) - math.Log(a.MTBFHours))
			return a.SavingPct + f*(b.SavingPct-a.SavingPct), true
		}
	}
	return 0, false
}

func spotCurveText(c *SpotCurve) string {
	if c.Failed != "" {
		return fmt.Sprintf("%s: no curve: its all-on-demand run failed: %s. %s", c.Run, c.Failed, c.Note)
	}
	if f := c.failures(); f != "" {
		// The figures below are of the points that ran.
		c2 := *c
		c2.Note = strings.TrimPrefix(f, " ") + " " + c.Note
		c = &c2
	}
	if c.OnDemand.Completed == 0 && c.OnDemand.CostPerUsefulGPUHour == 0 {
		// Nothing to measure the same work by: no job completed (a run of
		// inference services alone, say).
		// Nothing to measure the same work by: no job completed (a run of
		// inference services alone, say).
		if c.OnDemand.CostPerMillionRequests > 0 {
			return fmt.Sprintf("%s: no job completed all on-demand, so the break-even, which measures completed jobs' work, says nothing here; the same-requests saving at each MTBF (all on-demand: %s a million requests served) is the like-for-like figure. %s", c.Run, Money(c.OnDemand.CostPerMillionRequests), c.Note)
		}
		return fmt.Sprintf("%s: no job completed all on-demand, so the curve, which measures completed jobs' work, says nothing here; compare the runs' cost per million requests served instead. %s", c.Run, c.Note)
	}
	if c.OnDemand.CostPerMillionRequests > 0 {
		// Jobs and services: the break-even is training's, on its share.
		c2 := *c
		c2.Note = fmt.Sprintf("Training's figures are its share of each bill over its completed jobs' work, inference's its share over the requests served (all on-demand: %s a million); the break-even is training's. %s", Money(c.OnDemand.CostPerMillionRequests), c.Note)
		c = &c2
	}
	od := fmt.Sprintf("all on-demand: %s a useful GPU-hour, %d jobs completed", Money(c.OnDemand.CostPerUsefulGPUHour), c.OnDemand.Completed)
	p := PublishedSpotGPU
	if lo, ok1 := c.SavingAt(p.MinHours); ok1 {
		if hi, ok2 := c.SavingAt(p.MaxHours); ok2 {
			od += fmt.Sprintf("; at the rate of %s, a preemption every %.1f to %.0f hours, spot saves %+.0f%% to %+.0f%% here", p.Source, p.MinHours, p.MaxHours, lo, hi)
		}
	}
	if c.BreakEvenHours > 0 {
		return fmt.Sprintf("%s: spot stops paying for this workload and checkpoint setting when a node is interrupted more often than every %s on average (%s). %s", c.Run, Human(c.BreakEvenHours*3600), od, c.Note)
	}
	if pts := c.done(); len(pts) > 0 && pts[0].SavingPct > 0 {
		return fmt.Sprintf("%s: spot pays at every MTBF tried, down to %s (%s). %s", c.Run, Human(pts[0].MTBFHours*3600), od, c.Note)
	}
	return fmt.Sprintf("%s: spot does not pay at any MTBF tried (%s). %s", c.Run, od, c.Note)
}
