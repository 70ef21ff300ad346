package reports

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"gpuplan.dev/gpuplan/models"
)

// SpotCurve is what spot saves for one run at each mean time between
// interruptions (per node), for the same completed work, against the
// same workload all on-demand; each point is the mean over Seeds replays
// with its 95% interval. BreakEvenHours is where the mean saving crosses
// zero (interpolated in log MTBF between the points around it; 0 when it
// never does over the curve), BreakEvenLoHours and BreakEvenHiHours where
// the upper and the lower ends of the saving's interval cross it (0: not
// on the curve).
type SpotCurve struct {
	Run              string       `json:"run"`
	Seeds            int          `json:"seeds"`
	Points           []SpotPoint  `json:"points"`
	BreakEvenHours   float64      `json:"breakEvenMTBFHours"`
	BreakEvenLoHours float64      `json:"breakEvenMTBFLo95Hours,omitempty"`
	BreakEvenHiHours float64      `json:"breakEvenMTBFHi95Hours,omitempty"`
	Note             string       `json:"note"`
	OnDemand         SpotOnDemand `json:"onDemand"`
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

// SpotPoint is one MTBF: each figure is the mean over Seeds replays
// (the same workload, node supply drawn from another seed each), and each
// ...HW95 beside it the half-width of its 95% interval (Student's t; 0
// with one seed).
type SpotPoint struct {
	MTBFHours            float64 `json:"mtbfHours"`
	Seeds                int     `json:"seeds,omitempty"`
	Interruptions        float64 `json:"interruptions"`
	InterruptionsHW95    float64 `json:"interruptionsHalfWidth95,omitempty"`
	Completed            float64 `json:"completed"`
	CostPerUsefulGPUHour float64 `json:"costPerUsefulGPUHour"`
	SavingPct            float64 `json:"sameWorkSavingPct"`
	SavingHW95           float64 `json:"sameWorkSavingPctHalfWidth95,omitempty"`
	// With services: the cost per million requests served and the saving
	// for the same requests (the break-even stays training's), the share
	// of requests within the SLO of the worst-served service that has one
	// (0: no service has an SLO) and the requests dropped, all services
	// together.
	CostPerMillionRequests float64 `json:"costPerMillionRequests,omitempty"`
	ServedSavingPct        float64 `json:"servedWorkSavingPct,omitempty"`
	ServedSavingHW95       float64 `json:"servedWorkSavingPctHalfWidth95,omitempty"`
	SLOAttainment          float64 `json:"sloAttainment,omitempty"`
	SLOAttainmentHW95      float64 `json:"sloAttainmentHalfWidth95,omitempty"`
	Dropped                float64 `json:"requestsDropped,omitempty"`
	DroppedHW95            float64 `json:"requestsDroppedHalfWidth95,omitempty"`
	// Failed, when set, is why this point's run failed: it has no figures
	// and the curve's break-even and savings leave it out.
	Failed string `json:"failed,omitempty"`
}

// SpotSample is one replay of a point: the figures a SpotPoint averages.
type SpotSample struct {
	Interruptions          int64
	Completed              int
	CostPerUsefulGPUHour   float64
	CostPerMillionRequests float64
	// SLOAttainment is the worst-served service's share within its SLO
	// (HasSLO: some service has one); Dropped all services' drops.
	SLOAttainment float64
	HasSLO        bool
	Dropped       float64
}

// SpotSampleOf is a replay's sample read from its summary.
func SpotSampleOf(s *Summary) SpotSample {
	f := Figures("", s)
	out := SpotSample{Completed: f.Completed, CostPerUsefulGPUHour: f.CostPerUsefulGPUHour, CostPerMillionRequests: f.CostPerMillionRequests}
	for _, c := range s.Capacity {
		out.Interruptions += c.Interrupted
	}
	for _, v := range f.Services {
		out.Dropped += v.Dropped
		if v.SLOAttainment > 0 && (!out.HasSLO || v.SLOAttainment < out.SLOAttainment) {
			out.SLOAttainment, out.HasSLO = v.SLOAttainment, true
		}
	}
	return out
}

// SpotPointOf is the point at mtbfHours from its replays' samples and the
// all-on-demand run od: each saving is a replay's, against od's cost of
// the same work (-100% for a replay with none), then averaged.
func SpotPointOf(mtbfHours float64, samples []SpotSample, od SpotOnDemand) SpotPoint {
	p := SpotPoint{MTBFHours: mtbfHours, Seeds: len(samples)}
	n := len(samples)
	col := func(f func(SpotSample) float64) []float64 {
		xs := make([]float64, n)
		for i, s := range samples {
			xs[i] = f(s)
		}
		return xs
	}
	p.Interruptions, p.InterruptionsHW95 = MeanHW95(col(func(s SpotSample) float64 { return float64(s.Interruptions) }))
	p.Completed, _ = MeanHW95(col(func(s SpotSample) float64 { return float64(s.Completed) }))
	p.CostPerUsefulGPUHour, _ = MeanHW95(col(func(s SpotSample) float64 { return s.CostPerUsefulGPUHour }))
	p.CostPerMillionRequests, _ = MeanHW95(col(func(s SpotSample) float64 { return s.CostPerMillionRequests }))
	if odc := od.CostPerUsefulGPUHour; odc > 0 {
		p.SavingPct, p.SavingHW95 = MeanHW95(col(func(s SpotSample) float64 { return spotSavingPct(s.CostPerUsefulGPUHour, odc) }))
	}
	if odc := od.CostPerMillionRequests; odc > 0 {
		p.ServedSavingPct, p.ServedSavingHW95 = MeanHW95(col(func(s SpotSample) float64 { return spotSavingPct(s.CostPerMillionRequests, odc) }))
		p.Dropped, p.DroppedHW95 = MeanHW95(col(func(s SpotSample) float64 { return s.Dropped }))
		var att []float64
		for _, s := range samples {
			if s.HasSLO {
				att = append(att, s.SLOAttainment)
			}
		}
		if len(att) == n {
			p.SLOAttainment, p.SLOAttainmentHW95 = MeanHW95(att)
		}
	}
	p.SavingPct, p.SavingHW95 = round(p.SavingPct, 2), round(p.SavingHW95, 2)
	p.ServedSavingPct, p.ServedSavingHW95 = round(p.ServedSavingPct, 2), round(p.ServedSavingHW95, 2)
	return p
}

// spotSavingPct is what a cost saves against odCost, in percent; -100 for no
// cost (no work done at all).
func spotSavingPct(cost, odCost float64) float64 {
	if cost > 0 {
		return 100 * (1 - cost/odCost)
	}
	return -100
}

// MeanHW95 is the mean of xs and the half-width of its 95% confidence
// interval (Student's t with len(xs)-1 degrees of freedom; 0 with fewer
// than two values).
func MeanHW95(xs []float64) (mean, hw float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	if len(xs) == 1 {
		return xs[0], 0
	}
	m, sd := stat.MeanStdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	return m, t * sd / math.Sqrt(float64(len(xs)))
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

// BreakEven finds where the mean saving crosses zero between two points
// of the curve, interpolating linearly in log MTBF; 0 when it never does.
func (c *SpotCurve) BreakEven() float64 {
	return c.crossing(func(p SpotPoint) float64 { return p.SavingPct })
}

// BreakEvenRange is the break-even's 95% interval: where the upper end
// of the saving's interval crosses zero (lo: spot may still pay down to
// there) and where its lower end does (hi); each 0 when that end does
// not cross over the curve.
func (c *SpotCurve) BreakEvenRange() (lo, hi float64) {
	lo = c.crossing(func(p SpotPoint) float64 { return p.SavingPct + p.SavingHW95 })
	hi = c.crossing(func(p SpotPoint) float64 { return p.SavingPct - p.SavingHW95 })
	return lo, hi
}

// crossing is where saving(point) first crosses zero between two points
// that ran, interpolated linearly in log MTBF; 0 when it never does.
func (c *SpotCurve) crossing(saving func(SpotPoint) float64) float64 {
	pts := c.done()
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		sa, sb := saving(a), saving(b)
		if (sa < 0) != (sb < 0) {
			f := sa / (sa - sb)
			return round(math.Exp(math.Log(a.MTBFHours)+f*(math.Log(b.MTBFHours)-math.Log(a.MTBFHours))), 3)
		}
	}
	return 0
}

func spotCurveRows(c *SpotCurve) [][]string {
	services := c.OnDemand.CostPerMillionRequests > 0
	var rows [][]any
	for _, p := range c.Points {
		ints := count(p.Interruptions)
		if p.InterruptionsHW95 > 0 {
			ints = plusMinus("%.1f", p.Interruptions, p.InterruptionsHW95)
		}
		r := []any{inHours(p.MTBFHours * 3600), ints, count(p.Completed),
			usd(p.CostPerUsefulGPUHour), plusMinus("%+.1f%%", p.SavingPct, p.SavingHW95)}
		if p.Failed != "" {
			r = []any{inHours(p.MTBFHours * 3600), "failed", "-", "-", "-"}
		}
		if services {
			switch {
			case p.Failed != "":
				r = append(r, "-", "-", "-", "-")
			default:
				att := "-"
				if p.SLOAttainment > 0 {
					att = plusMinus("%.1f%%", 100*p.SLOAttainment, 100*p.SLOAttainmentHW95)
				}
				r = append(r, usd(p.CostPerMillionRequests), plusMinus("%+.1f%%", p.ServedSavingPct, p.ServedSavingHW95),
					att, plusMinus("%.0f", p.Dropped, p.DroppedHW95))
			}
		}
		rows = append(rows, r)
	}
	return columns(rows)
}

// plusMinus writes a mean in format f and, when its interval has a
// width, the half-width after ± in the same format less any sign.
func plusMinus(f string, mean, hw float64) string {
	s := fmt.Sprintf(f, mean)
	if hw > 0 {
		s += " ± " + fmt.Sprintf(strings.Replace(f, "+", "", 1), hw)
	}
	return s
}

// count writes a mean count: whole when it is, else to one decimal.
func count(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprint(int64(x))
	}
	return fmt.Sprintf("%.1f", x)
}

func spotCurveHeader() []string {
	return []string{"MTBF per node", "interruptions", "completed", "$/useful GPU-h", "same-work saving"}
}

// spotCurveHeaderFor is the curve's header; with services, the cost per
// million requests served, the saving for the same requests, the
// worst-served service's share within its SLO and the requests dropped
// follow, and with jobs too each side's share of the bill is named.
func spotCurveHeaderFor(c *SpotCurve) []string {
	h := spotCurveHeader()
	if c.OnDemand.CostPerMillionRequests > 0 {
		if c.OnDemand.Completed > 0 {
			h[3], h[4] = "training $/useful GPU-h", "training same-work saving"
			return append(h, "inference $/M requests", "inference same-requests saving", "within SLO (worst service)", "requests dropped")
		}
		return append(h, "$/M requests", "same-requests saving", "within SLO (worst service)", "requests dropped")
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

// breakEvenRangeText is the break-even's 95% interval in words ("" with
// one seed).
func (c *SpotCurve) breakEvenRangeText() string {
	if c.Seeds < 2 {
		return ""
	}
	lo, hi := "below the curve's shortest MTBF", "above its longest"
	if c.BreakEvenLoHours > 0 {
		lo = Human(c.BreakEvenLoHours * 3600)
	}
	if c.BreakEvenHiHours > 0 {
		hi = Human(c.BreakEvenHiHours * 3600)
	}
	return fmt.Sprintf(" (95%% interval %s to %s over %d seeds)", lo, hi, c.Seeds)
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
		if c.OnDemand.CostPerMillionRequests > 0 {
			return fmt.Sprintf("%s: no job completed all on-demand (a run of inference services alone has none), so the break-even, which measures completed jobs' work, says nothing here; the same-requests saving at each MTBF (all on-demand: %s a million requests served) is the like-for-like figure. %s", c.Run, Money(c.OnDemand.CostPerMillionRequests), c.Note)
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
		return fmt.Sprintf("%s: spot stops paying for this workload and checkpoint setting when a node is interrupted more often than every %s on average%s (%s). %s", c.Run, Human(c.BreakEvenHours*3600), c.breakEvenRangeText(), od, c.Note)
	}
	if pts := c.done(); len(pts) > 0 && pts[0].SavingPct > 0 {
		return fmt.Sprintf("%s: spot pays at every MTBF tried, down to %s (%s). %s", c.Run, Human(pts[0].MTBFHours*3600), od, c.Note)
	}
	return fmt.Sprintf("%s: spot does not pay at any MTBF tried (%s). %s", c.Run, od, c.Note)
}
