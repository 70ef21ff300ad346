package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
)

// SpotSensitivity runs sc with every spot node interrupted at each MTBF
// of grid, each MTBF on SpotSeeds(sc, o) seeds of node supply, and the
// same workload all on-demand, and reports what spot saves at each for
// the same completed work (the mean over the seeds, with its 95%
// interval), and the break-even MTBF with its interval. The runs go to a
// pool of o.Workers; the result does not depend on how many.
//
// spot, when given, is the run's own summary: the curve then carries the
// waterfall from the all-on-demand bill to its bill.
func SpotSensitivity(name string, sc *scenarios.Scenario, o Options, grid []time.Duration, spot *reports.Summary) (*reports.SpotCurve, error) {
	c := newSpotCurve(name, func() (*scenarios.Scenario, error) { return sc, nil }, o, grid, SpotSeeds(sc, o))
	sums, err := Pool(context.Background(), c.runs(), o.Workers, func(_ context.Context, i int) (*reports.Summary, error) {
		return c.run(i)
	})
	if err != nil {
		return nil, err
	}
	return c.finish(sums[0], spot), nil
}

// DefaultSpotSeeds is how many seeds of node supply each point of the
// spot sensitivity replays when neither the options nor the scenario say.
const DefaultSpotSeeds = 5

// MaxSpotSeeds bounds the seeds a point may replay.
const MaxSpotSeeds = scenarios.MaxSpotSensitivitySeeds

// SpotSeeds is how many seeds each point of sc's spot sensitivity
// replays: o.SpotSeeds, else spec.output.spotSensitivitySeeds, else
// DefaultSpotSeeds.
func SpotSeeds(sc *scenarios.Scenario, o Options) int {
	switch {
	case o.SpotSeeds > 0:
		return o.SpotSeeds
	case sc != nil && sc.Spec.Output.SpotSensitivitySeeds > 0:
		return sc.Spec.Output.SpotSensitivitySeeds
	}
	return DefaultSpotSeeds
}

// spotCurve is one spot sensitivity's runs, for a pool of its own
// (SpotSensitivity) or one shared with other runs (Scenario): run 0 is
// the all-on-demand one, run 1+i*seeds+k the grid's point i on supply
// seed k; each keeps its sample only, not the run's job records. Its
// scenario and the all-on-demand one are built on the workers, once, by
// the first run that needs them (a variant's is built by the variant's
// own run or by the curve's first), not before the pool starts.
type spotCurve struct {
	name  string
	sc    func() (*scenarios.Scenario, error)
	od    func() (*scenarios.Scenario, error)
	o     Options
	grid  []time.Duration
	seeds int
	// samples[i*seeds+k] and fails[i*seeds+k] are point i's run on
	// supply seed k (each run writes its own).
	samples []reports.SpotSample
	fails   []string
	curve   *reports.SpotCurve
}

// newSpotCurve is the curve of the scenario sc returns (sc may be called
// from several workers at once and must build it once), seeds runs a
// point.
func newSpotCurve(name string, sc func() (*scenarios.Scenario, error), o Options, grid []time.Duration, seeds int) *spotCurve {
	od := sync.OnceValues(func() (*scenarios.Scenario, error) {
		s, err := sc()
		if err != nil {
			return nil, err
		}
		return s.OnDemandOnly()
	})
	seeds = max(seeds, 1)
	curve := &reports.SpotCurve{Run: name, Seeds: seeds, Points: make([]reports.SpotPoint, len(grid))}
	return &spotCurve{name: name, sc: sc, od: od, o: o, grid: grid, seeds: seeds,
		samples: make([]reports.SpotSample, len(grid)*seeds), fails: make([]string, len(grid)*seeds), curve: curve}
}

func (c *spotCurve) runs() int { return len(c.grid)*c.seeds + 1 }

// run runs run i; runs may go at once (each fills its own sample).
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
	j := i - 1
	mtbf, k := c.grid[j/c.seeds], j%c.seeds
	if err := spotPoint(sc, c.o, c.name, mtbf, uint64(k), &c.samples[j]); err != nil {
		c.fails[j] = failure(err)
		if c.seeds > 1 {
			c.fails[j] = fmt.Sprintf("replay %d of %d: %s", k+1, c.seeds, c.fails[j])
		}
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
	curve.Note = fmt.Sprintf("Each point replays the whole workload with every spot node's lifetime exponential at that mean (notice kept), %s; the run itself uses the interruption model its report states.", seedsText(seed, c.seeds))
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
		runs := c.samples[i*c.seeds : (i+1)*c.seeds]
		failed := ""
		for _, f := range c.fails[i*c.seeds : (i+1)*c.seeds] {
			if f != "" {
				failed = f // a point stands only on all its seeds
				break
			}
		}
		if failed != "" {
			curve.Points[i] = reports.SpotPoint{MTBFHours: c.grid[i].Hours(), Failed: failed}
			continue
		}
		curve.Points[i] = reports.SpotPointOf(c.grid[i].Hours(), runs, curve.OnDemand)
	}
	curve.BreakEvenHours = curve.BreakEven()
	if c.seeds > 1 {
		curve.BreakEvenLoHours, curve.BreakEvenHiHours = curve.BreakEvenRange()
	}
	if spot != nil && spot.Cost != nil && odSum.Cost != nil {
		curve.Waterfall = reports.SpotWaterfall(spot.Cost, odSum.Cost)
	}
	return curve
}

// seedsText says which seeds a curve's points ran on.
func seedsText(seed uint64, seeds int) string {
	if seeds == 1 {
		return fmt.Sprintf("seed %d", seed)
	}
	return fmt.Sprintf("seed %d; each is the mean over %d seeds of node supply (%d to %d; the workload stays seed %d's) with its 95%% interval (Student's t)", seed, seeds, seed, seed+uint64(seeds)-1, seed)
}

// spotPoint runs sc at one spot MTBF with node supply from the run's
// seed plus replicate, and fills the sample.
func spotPoint(sc *scenarios.Scenario, o Options, name string, mtbf time.Duration, replicate uint64, p *reports.SpotSample) error {
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
	o.supplyReplicate = replicate
	label := fmt.Sprintf("%s at spot MTBF %s", name, mtbf)
	if replicate > 0 {
		label += fmt.Sprintf(", supply seed +%d", replicate)
	}
	r, err := One(v, o, label, false)
	if err != nil {
		return err
	}
	*p = reports.SpotSampleOf(r.Summary)
	return nil
}
