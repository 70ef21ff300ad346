package pipeline

import (
	"time"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
)

// CheckpointStudy is `gpuplan advise checkpoint --simulate`: Jobs jobs of
// Work each on a node failing every MTBF on average, for each of Points
// checkpoint intervals spaced evenly in log from a quarter of
// AroundMinutes to four times it.
type CheckpointStudy struct {
	Work, MTBF, CheckpointCost, RestoreCost, Restart time.Duration
	AroundMinutes                                    float64
	Points, Jobs                                     int
	Seed                                             uint64
}

// CheckpointStudyPoint is one interval's outcome.
type CheckpointStudyPoint struct {
	IntervalMinutes float64
	// MeanCompletionHours is the jobs' mean time from start to end;
	// DalyModelHours is Daly's model of it.
	MeanCompletionHours, DalyModelHours float64
	// FailuresPerJob is the mean failures per job.
	FailuresPerJob float64
}

// CheckpointStudyResult is the study: every interval, the best one on
// the grid and the vertex of a parabola fitted around it.
type CheckpointStudyResult struct {
	Points                          []CheckpointStudyPoint
	BestGridMinutes, BestFitMinutes float64
}

// StudyCheckpoints runs the study, every run's invariants checked (a
// violation is a *BugError, exit 4).
func StudyCheckpoints(st CheckpointStudy) (*CheckpointStudyResult, error) {
	ms := func(d time.Duration) sim.Time { return sim.Time(d.Milliseconds()) }
	around := st.AroundMinutes * float64(sim.Minute)
	grid := sim.CheckpointGrid(max(sim.Time(around/4), 1), sim.Time(around*4), st.Points)
	pts, err := sim.StudyCheckpoints(sim.CheckpointStudy{Work: ms(st.Work), MTBF: ms(st.MTBF),
		CheckpointCost: ms(st.CheckpointCost), RestoreCost: ms(st.RestoreCost), Restart: ms(st.Restart),
		Intervals: grid, Jobs: st.Jobs, Seed: st.Seed, Check: validate.Invariants})
	if err != nil {
		if validate.IsInvariant(err) {
			return nil, &BugError{Scenario: "(gpuplan advise checkpoint --simulate)", Seed: st.Seed, Run: "checkpoint study", Err: err}
		}
		return nil, err
	}
	best, fitted := sim.CheckpointOptimum(pts)
	out := &CheckpointStudyResult{BestGridMinutes: float64(best) / float64(sim.Minute), BestFitMinutes: float64(fitted) / float64(sim.Minute)}
	for _, p := range pts {
		out.Points = append(out.Points, CheckpointStudyPoint{IntervalMinutes: float64(p.Interval) / float64(sim.Minute),
			MeanCompletionHours: p.MeanCompletion / float64(sim.Hour), DalyModelHours: p.Daly / float64(sim.Hour), FailuresPerJob: p.Failures})
	}
	return out, nil
}
