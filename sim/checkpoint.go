package sim

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// CheckpointStudy asks which checkpoint interval finishes a job soonest
// when its node fails at random: Jobs copies of a job of Work, each alone
// in a run of its own on one node that fails after exponential lifetimes
// of mean MTBF and is replaced Restart later; the job restores
// (RestoreCost) from its last checkpoint and goes on.
type CheckpointStudy struct {
	Work, MTBF, CheckpointCost, RestoreCost, Restart Time
	// Intervals are the checkpoint intervals to try.
	Intervals []Time
	Jobs      int
	Seed      uint64
	// Check, when set, is called on every run's result (the run
	// pipeline passes its invariant checks); its error stops the study.
	Check func(*Result) error
}

// CheckpointPoint is one interval's outcome.
type CheckpointPoint struct {
	Interval Time
	// MeanCompletion is the jobs' mean time from start to end, in ms.
	MeanCompletion float64
	// Daly is Daly's model of the same (restart and restore together).
	Daly float64
	// Failures is the mean failures per job.
	Failures float64
}

// StudyCheckpoints simulates every interval of the study. Each interval
// sees the same node lifetimes (each slot draws from its own stream), so
// the differences between intervals are not noise between runs.
func StudyCheckpoints(st CheckpointStudy) ([]CheckpointPoint, error) {
	if st.Work <= 0 || st.MTBF <= 0 || st.Jobs <= 0 || st.CheckpointCost < 0 || st.RestoreCost < 0 || st.Restart < 0 {
		return nil, fmt.Errorf("checkpoint study: work, MTBF and jobs must be positive, costs not negative")
	}
	pools := []cluster.PoolSpec{{Name: "node", Nodes: 1, GPUsPerNode: 8, MilliCPU: 1000, MemoryMiB: 1024}}
	caps := &capacity.Spec{Pools: []capacity.Pool{{CapacityType: models.OnDemand, Provisioning: st.Restart, Replace: true, FailureMTBF: st.MTBF, Group: -1}}}
	var out []CheckpointPoint
	jobs := make([]cluster.JobSpec, 1)
	for _, tau := range st.Intervals {
		if tau <= 0 {
			return nil, fmt.Errorf("checkpoint study: interval %d ms is not positive", tau)
		}
		rec := &cluster.Recovery{CheckpointInterval: tau, CheckpointCost: st.CheckpointCost, RestoreCost: st.RestoreCost,
			BackoffLimit: math.MaxInt32, IgnoreDisruptions: true}
		p := CheckpointPoint{Interval: tau}
		// Job i runs alone with seed Seed+i: the same node lifetimes for
		// every interval.
		for i := 0; i < st.Jobs; i++ {
			jobs[0] = cluster.JobSpec{Name: "job", Duration: st.Work, Replicas: 1, Recovery: rec, Pod: cluster.PodSpec{GPUs: 8}}
			res, err := Run(Config{Seed: st.Seed + uint64(i), Pools: pools, Capacity: caps, Workload: &SliceSource{Jobs: jobs},
				TimelineInterval: 1 << 40})
			if err == nil && st.Check != nil {
				err = st.Check(res)
			}
			if err != nil {
				return nil, err
			}
			j := res.Jobs[0]
			if j.Outcome != Completed {
				return nil, fmt.Errorf("checkpoint study: the job did not complete (%s)", j.Outcome)
			}
			p.MeanCompletion += float64(j.End-j.Start) / float64(st.Jobs)
			p.Failures += float64(j.Disruptions) / float64(st.Jobs)
		}
		p.Daly = models.DalyExpectedTime(float64(st.Work), float64(tau), float64(st.CheckpointCost), float64(st.Restart+st.RestoreCost), float64(st.MTBF))
		out = append(out, p)
	}
	return out, nil
}

// CheckpointGrid is n intervals spaced evenly in log from lo to hi.
func CheckpointGrid(lo, hi Time, n int) []Time {
	if n < 2 || lo <= 0 || hi <= lo {
		return []Time{lo}
	}
	out := make([]Time, n)
	for i := range out {
		out[i] = Time(math.Round(float64(lo) * math.Pow(float64(hi)/float64(lo), float64(i)/float64(n-1))))
	}
	return out
}

// CheckpointOptimum reads the best interval off a study: the grid point
// with the least mean completion time, and the vertex of a parabola (in
// log interval) through it and its neighbours (up to two each side),
// which smooths the simulation noise. fitted is the grid point when the
// fit has no minimum inside the points used.
func CheckpointOptimum(pts []CheckpointPoint) (grid, fitted Time) {
	if len(pts) == 0 {
		return 0, 0
	}
	best := 0
	for i, p := range pts {
		if p.MeanCompletion < pts[best].MeanCompletion {
			best = i
		}
	}
	lo, hi := max(best-2, 0), min(best+3, len(pts))
	var x, y []float64
	for _, p := range pts[lo:hi] {
		x = append(x, math.Log(float64(p.Interval)))
		y = append(y, p.MeanCompletion)
	}
	v, ok := models.ParabolaVertex(x, y)
	if !ok || v < x[0] || v > x[len(x)-1] {
		return pts[best].Interval, pts[best].Interval
	}
	return pts[best].Interval, Time(math.Round(math.Exp(v)))
}
