package pipeline

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
)

// SpotSensitivity runs sc with every spot node interrupted at each MTBF
// of grid, and the same workload all on-demand, and reports what spot
// saves at each for the same completed work, and the break-even MTBF.
// The points run on all cores; the result does not depend on how many.
//
// spot, when given, is the run's own summary: the curve then carries the
// waterfall from the all-on-demand bill to its bill.
func SpotSensitivity(name string, sc *scenarios.Scenario, o Options, grid []time.Duration, spot *reports.Summary) (*reports.SpotCurve, error) {
	od, err := sc.OnDemandOnly()
	if err != nil {
		return nil, err
	}
	odRun, err := One(od, o, name+" all on-demand", false)
	if err != nil {
		return nil, err
	}
	odFig := reports.Figures("", odRun.Summary)
	seed := sc.Seed()
	if o.Build.Seed != nil {
		seed = *o.Build.Seed
	}
	curve := &reports.SpotCurve{Run: name, Points: make([]reports.SpotPoint, len(grid)),
		OnDemand: reports.SpotOnDemand{CostPerUsefulGPUHour: odFig.CostPerUsefulGPUHour, Completed: odFig.Completed},
		Note:     fmt.Sprintf("Each point replays the whole workload with every spot node's lifetime exponential at that mean (notice kept), seed %d; the run itself uses the interruption model its report states.", seed)}
	errs := make([]error, len(grid))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(grid)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				errs[i] = spotPoint(sc, o, name, grid[i], odFig.CostPerUsefulGPUHour, &curve.Points[i])
			}
		}()
	}
	for i := range grid {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	curve.BreakEvenHours = curve.BreakEven()
	if spot != nil && spot.Cost != nil && odRun.Summary.Cost != nil {
		curve.Waterfall = reports.SpotWaterfall(spot.Cost, odRun.Summary.Cost)
	}
	return curve, nil
}

func spotPoint(sc *scenarios.Scenario, o Options, name string, mtbf time.Duration, odCost float64, p *reports.SpotPoint) error {
	v, err := sc.WithSpotMTBF(mtbf)
	if err != nil {
		return err
	}
	r, err := One(v, o, fmt.Sprintf("%s at spot MTBF %s", name, mtbf), false)
	if err != nil {
		return err
	}
	f := reports.Figures("", r.Summary)
	p.MTBFHours = mtbf.Hours()
	p.Completed = f.Completed
	p.CostPerUsefulGPUHour = f.CostPerUsefulGPUHour
	for _, c := range r.Summary.Capacity {
		p.Interruptions += c.Interrupted
	}
	if odCost > 0 && f.CostPerUsefulGPUHour > 0 {
		p.SavingPct = math.Round(10000*(1-f.CostPerUsefulGPUHour/odCost)) / 100
	} else if odCost > 0 {
		p.SavingPct = -100 // no useful work at all
	}
	return nil
}
