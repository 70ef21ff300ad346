package pipeline

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
)

// SpotSensitivity runs sc with every spot node interrupted at each MTBF
// of grid, and the same workload all on-demand, and reports what spot
// saves at each for the same completed work, and the break-even MTBF.
// The runs go to a pool of o.Workers; the result does not depend on how
// many.
//
// spot, when given, is the run's own summary: the curve then carries the
// waterfall from the all-on-demand bill to its bill.
func SpotSensitivity(name string, sc *scenarios.Scenario, o Options, grid []time.Duration, spot *reports.Summary) (*reports.SpotCurve, error) {
	c := newSpotCurve(name, func() (*scenarios.Scenario, error) { return sc, nil }, o, grid)
	sums, err := Pool(context.Background(), c.runs(), o.Workers, func(_ context.Context, i int) (*reports.Summary, error) {
		return c.run(i)
	})
	if err != nil {
		return nil, err
	}
	return c.finish(sums[0], spot), nil
}

// spotCurve is one spot sensitivity's runs, for a pool of its own
// (SpotSensitivity) or one shared with other runs (Scenario): run 0 is
// the all-on-demand one, run i the grid's point i-1; each keeps its
// summary only, not the run's job records. Its scenario and the
// all-on-demand one are built on the workers, once, by the first run
// that needs them (a variant's is built by the variant's own run or by
// the curve's first), not before the pool starts.
type spotCurve struct {
	name  string
	sc    func() (*scenarios.Scenario, error)
	od    func() (*scenarios.Scenario, error)
	o     Options
	grid  []time.Duration
	curve *reports.SpotCurve
}

// newSpotCurve is the curve of the scenario sc returns (sc may be called
// from several workers at once and must build it once).
func newSpotCurve(name string, sc func() (*scenarios.Scenario, error), o Options, grid []time.Duration) *spotCurve {
	od := sync.OnceValues(func() (*scenarios.Scenario, error) {
		s, err := sc()
		if err != nil {
			return nil, err
		}
		return s.OnDemandOnly()
	})
	curve := &reports.SpotCurve{Run: name, Points: make([]reports.SpotPoint, len(grid))}
	return &spotCurve{name: name, sc: sc, od: od, o: o, grid: grid, curve: curve}
}

func (c *spotCurve) runs() int { return len(c.grid) + 1 }

// run runs run i; runs may go at once (each fills its own point).
// A run that fails is its point's failure (the curve's, for the
// all-on-demand run), reported in the curve, never an error of the whole:
// only a scenario that does not build (the run it varies fails first) is.
func (c *spotCurve) run(i int) (*reports.Summary, error) {
	if i == 0 {
		od, err := c.od()
		var r *Run
		if err == nil {
			r, err = One(od, c.o, c.name+" all on-demand", false)
		}
		if err != nil {
			c.curve.Failed = failure(err)
			return nil, nil
		}
		return r.Summary, nil
	}
	sc, err := c.sc()
	if err != nil {
		return nil, err
	}
	p := &c.curve.Points[i-1]
	mtbf := c.grid[i-1]
	if err := spotPoint(sc, c.o, c.name, mtbf, p); err != nil {
		*p = reports.SpotPoint{MTBFHours: mtbf.Hours(), Failed: failure(err)}
	}
	return nil, nil
}

// maxFailure bounds the text of a failed run kept in a curve.
const maxFailure = 600

// failure is a failed run's error as one line of at most maxFailure bytes.
func failure(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if len(msg) > maxFailure {
		cut := maxFailure
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return msg
}

// pointStall bounds a replay without a horizon that stops draining
// (sim.Config.StallLimit): at a short MTBF, a job that restarts from
// scratch after every interruption may never finish.
const pointStall = 30 * 24 * sim.Hour

// finish completes the curve from the all-on-demand run's summary odSum;
// spot, when given, is the spot run's own summary: the curve then carries
// the waterfall from the all-on-demand bill to its bill.
func (c *spotCurve) finish(odSum, spot *reports.Summary) *reports.SpotCurve {
	curve := c.curve
	if odSum == nil {
		curve.Failed = nameOr(curve.Failed, "no all-on-demand run")
	}
	seed := uint64(0)
	if c.o.Build.Seed != nil {
		seed = *c.o.Build.Seed
	} else if sc, err := c.sc(); err == nil { // built by the runs
		seed = sc.Seed()
	}
	curve.Note = fmt.Sprintf("Each point replays the whole workload with every spot node's lifetime exponential at that mean (notice kept), seed %d; the run itself uses the interruption model its report states.", seed)
	if curve.Failed != "" {
		for i := range curve.Points {
			curve.Points[i] = reports.SpotPoint{MTBFHours: c.grid[i].Hours(), Failed: "the curve's all-on-demand run failed"}
		}
		return curve
	}
	odFig := reports.Figures("", odSum)
	curve.OnDemand = reports.SpotOnDemand{CostPerUsefulGPUHour: odFig.CostPerUsefulGPUHour, Completed: odFig.Completed,
		CostPerMillionRequests: odFig.CostPerMillionRequests}
	for i := range curve.Points {
		if curve.Points[i].Failed != "" {
			continue
		}
		setSaving(&curve.Points[i], odFig.CostPerUsefulGPUHour)
		setServedSaving(&curve.Points[i], odFig.CostPerMillionRequests)
	}
	curve.BreakEvenHours = curve.BreakEven()
	if spot != nil && spot.Cost != nil && odSum.Cost != nil {
		curve.Waterfall = reports.SpotWaterfall(spot.Cost, odSum.Cost)
	}
	return curve
}

// setSaving sets a point's saving against the all-on-demand cost of a
// useful GPU-hour.
func setSaving(p *reports.SpotPoint, odCost float64) {
	if odCost > 0 && p.CostPerUsefulGPUHour > 0 {
		p.SavingPct = math.Round(10000*(1-p.CostPerUsefulGPUHour/odCost)) / 100
	} else if odCost > 0 {
		p.SavingPct = -100 // no useful work at all
	}
}

// setServedSaving sets a point's saving against the all-on-demand cost
// of a million requests served (runs with services; in a run with jobs
// too, each is inference's share of its bill).
func setServedSaving(p *reports.SpotPoint, odCost float64) {
	if odCost > 0 && p.CostPerMillionRequests > 0 {
		p.ServedSavingPct = math.Round(10000*(1-p.CostPerMillionRequests/odCost)) / 100
	} else if odCost > 0 {
		p.ServedSavingPct = -100 // no request served at all
	}
}

// spotPoint runs sc at one spot MTBF and fills p but for its saving
// (setSaving), which needs the all-on-demand run.
func spotPoint(sc *scenarios.Scenario, o Options, name string, mtbf time.Duration, p *reports.SpotPoint) error {
	if o.pointHook != nil {
		if err := o.pointHook(mtbf); err != nil {
			return err
		}
	}
	v, err := sc.WithSpotMTBF(mtbf)
	if err != nil {
		return err
	}
	o.stallLimit = pointStall
	r, err := One(v, o, fmt.Sprintf("%s at spot MTBF %s", name, mtbf), false)
	if err != nil {
		return err
	}
	f := reports.Figures("", r.Summary)
	p.MTBFHours = mtbf.Hours()
	p.Completed = f.Completed
	p.CostPerUsefulGPUHour = f.CostPerUsefulGPUHour
	p.CostPerMillionRequests = f.CostPerMillionRequests
	for _, c := range r.Summary.Capacity {
		p.Interruptions += c.Interrupted
	}
	return nil
}
