// Package recommend searches a space of settings for the cheapest one
// that meets every constraint: `gpuplan recommend`.
//
// The space is a sweep's grid (parameters as paths into the scenario's
// spec, or a pool's spot share). The search runs a coarse grid first (a
// few evenly spread values of each parameter), then the whole fine grid
// in the box around the best point found, then steps to neighbours until
// no neighbour is better. Each point starts with MinReps seeds; a point
// whose 95% interval misses a constraint is discarded at once, one whose
// intervals meet them all is accepted, and only the points in between get
// more seeds, up to MaxReps, after which their means decide. Every run goes
// through the run pipeline, invariants checked.
package recommend

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

// Options shape the search.
type Options struct {
	// Objective is the metric minimised (maximised when
	// sweep.HigherIsBetter says so).
	Objective sweep.Metric
	// Constraints must all be met.
	Constraints []sweep.Constraint
	// MinReps seeds per point first, MaxReps at most (defaults 3 and 5).
	MinReps, MaxReps int
	// Coarse is how many values of each parameter the first grid takes
	// (default 4).
	Coarse int
	// Workers run at once (0: one per core).
	Workers int
	// Progress, when set, hears of every run: Plan before each batch
	// (what the search is doing and how many runs), Done after each run,
	// from the workers at once.
	Progress Progress
}

// Progress follows a search as it goes. The search plans its runs a
// batch at a time (how many settings the next stage holds, how many are
// still undecided), so the runs planned grow as it goes; Result.GridRuns
// bounds them.
type Progress interface {
	Plan(stage string, runs int)
	Done()
}

// Status is what the search concluded of a point.
type Status string

const (
	Feasible   Status = "meets every constraint"
	Infeasible Status = "misses a constraint"
)

// Candidate is an evaluated point: its figures over the seeds run (the
// objective first, then each constraint's metric) and its status.
type Candidate struct {
	Point  sweep.Point
	Stats  []sweep.Stat
	Seeds  int
	Status Status
	// Confident is true when the intervals decided, false when MaxReps
	// ran out and the means did.
	Confident bool
	// samples[m][r] is metric m of seed r's run, advice[r] its
	// commitment advice (with a commitment metric).
	samples [][]float64
	advice  []*reports.CommitmentAdvice
}

// Result is the search's answer.
type Result struct {
	Sweep *sweep.Sweep
	// Metrics name Candidate.Stats' columns.
	Metrics []string
	// Objective and Constraints are the question asked, MinReps and
	// MaxReps the seeds a point ran.
	Objective        sweep.Metric
	Constraints      []sweep.Constraint
	MinReps, MaxReps int
	// Winner is the best feasible point (nil: none), RunnerUp the next.
	Winner, RunnerUp *Candidate
	// Pareto is the front of the objective against the first
	// constraint's metric over every point evaluated.
	Pareto []*Candidate
	// Evaluated is every point run, by index.
	Evaluated []*Candidate
	// Runs is how many simulations the search ran; GridRuns how many a
	// sweep of the whole grid at MaxReps seeds would.
	Runs, GridRuns int
}

// Search finds the best setting of sw's parameters. sw's first metric is
// the objective; every constraint's metric is among them (Space builds
// such a sweep).
func Search(ctx context.Context, sw *sweep.Sweep, o Options) (*Result, error) {
	if o.MinReps <= 0 {
		o.MinReps = 3
	}
	if o.MaxReps <= 0 {
		o.MaxReps = 5
	}
	if o.MinReps > o.MaxReps {
		return nil, fmt.Errorf("at least %d seeds a point but at most %d", o.MinReps, o.MaxReps)
	}
	if o.Coarse < 2 {
		o.Coarse = 4
	}
	if len(sw.Seeds) < o.MaxReps {
		return nil, fmt.Errorf("the space has %d seeds a point; the search needs %d", len(sw.Seeds), o.MaxReps)
	}
	if len(sw.Metrics) == 0 || sw.Metrics[0].Name != o.Objective.Name {
		return nil, fmt.Errorf("the space's first metric must be the objective %s", o.Objective.Name)
	}
	s := &search{sw: sw, o: o, seen: map[int]*Candidate{}, pts: sw.Points()}
	for _, c := range o.Constraints {
		k := slices.IndexFunc(sw.Metrics, func(m sweep.Metric) bool { return m.Name == c.Metric.Name })
		if k < 0 {
			return nil, fmt.Errorf("constraint %s: its metric is not in the space's metrics", c.Text)
		}
		s.conIdx = append(s.conIdx, k)
	}
	s.sizes = make([]int, len(sw.Params))
	for j, p := range sw.Params {
		s.sizes[j] = len(p.Values)
	}
	// The coarse grid: Coarse values of each parameter, ends included.
	coarse := make([][]int, len(s.sizes))
	for j, m := range s.sizes {
		coarse[j] = spread(m, o.Coarse)
	}
	if err := s.evaluate(ctx, s.product(coarse), "the coarse grid"); err != nil {
		return nil, err
	}
	// The fine grid in the box around the best coarse point: between its
	// coarse neighbours in each parameter.
	if best := s.best(); best != nil {
		at := s.coords(best.Point.Index)
		box := make([][]int, len(s.sizes))
		for j := range s.sizes {
			k := slices.Index(coarse[j], at[j])
			lo, hi := at[j], at[j]
			if k > 0 {
				lo = coarse[j][k-1] + 1
			}
			if k < len(coarse[j])-1 {
				hi = coarse[j][k+1] - 1
			}
			for v := lo; v <= hi; v++ {
				box[j] = append(box[j], v)
			}
		}
		if err := s.evaluate(ctx, s.product(box), "the fine grid around the best"); err != nil {
			return nil, err
		}
	}
	// Then step to neighbours while one is better.
	for {
		best := s.best()
		if best == nil {
			break
		}
		at := s.coords(best.Point.Index)
		var next []int
		for j := range s.sizes {
			for _, d := range []int{-1, 1} {
				c := slices.Clone(at)
				c[j] += d
				if c[j] < 0 || c[j] >= s.sizes[j] {
					continue
				}
				if i := s.index(c); s.seen[i] == nil {
					next = append(next, i)
				}
			}
		}
		if len(next) == 0 {
			break
		}
		if err := s.evaluate(ctx, next, "the best's neighbours"); err != nil {
			return nil, err
		}
		if s.best() == best {
			break
		}
	}
	return s.result(), nil
}

type search struct {
	sw    *sweep.Sweep
	o     Options
	pts   []sweep.Point
	sizes []int
	// conIdx[k] is constraint k's metric's column.
	conIdx []int
	seen   map[int]*Candidate
	runs   int
}

// spread is k indices of 0..m-1 spread evenly, both ends included.
func spread(m, k int) []int {
	if m <= k {
		out := make([]int, m)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for i := range k {
		v := (i*(m-1) + (k-1)/2) / (k - 1)
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// coords is a grid index's value index in each parameter (the last
// parameter fastest, as sweep's grid).
func (s *search) coords(i int) []int {
	c := make([]int, len(s.sizes))
	for j := len(s.sizes) - 1; j >= 0; j-- {
		c[j] = i % s.sizes[j]
		i /= s.sizes[j]
	}
	return c
}

func (s *search) index(c []int) int {
	i := 0
	for j, v := range c {
		i = i*s.sizes[j] + v
	}
	return i
}

func (s *search) product(axes [][]int) []int {
	out := []int{0}
	for j, ax := range axes {
		var next []int
		for _, i := range out {
			for _, v := range ax {
				next = append(next, i*s.sizes[j]+v)
			}
		}
		out = next
	}
	sort.Ints(out)
	return out
}

// evaluate runs the points not yet seen: MinReps seeds each, then more
// seeds, two at a time, for the points still undecided. stage names the
// points for the progress line.
func (s *search) evaluate(ctx context.Context, idx []int, stage string) error {
	var todo []*Candidate
	for _, i := range idx {
		if s.seen[i] == nil {
			c := &Candidate{Point: s.pts[i], samples: make([][]float64, len(s.sw.Metrics))}
			s.seen[i] = c
			todo = append(todo, c)
		}
	}
	reps := s.o.MinReps
	for len(todo) > 0 {
		type job struct {
			c    *Candidate
			seed uint64
		}
		var jobs []job
		for _, c := range todo {
			for r := c.Seeds; r < reps; r++ {
				jobs = append(jobs, job{c, s.sw.Seeds[r]})
			}
		}
		if p := s.o.Progress; p != nil && len(jobs) > 0 {
			n := fmt.Sprintf("%d settings", len(todo))
			if len(todo) == 1 {
				n = "1 setting"
			}
			what := fmt.Sprintf("%s: %s, %d seeds each", stage, n, reps)
			if reps > s.o.MinReps {
				what = fmt.Sprintf("%s: %s undecided, seeds up to %d", stage, n, reps)
			}
			p.Plan(what, len(jobs))
		}
		res, err := pipeline.Pool(ctx, len(jobs), s.o.Workers, func(_ context.Context, k int) (*sweep.Result, error) {
			if p := s.o.Progress; p != nil {
				defer p.Done()
			}
			return s.sw.RunPoint(jobs[k].c.Point, []uint64{jobs[k].seed})
		})
		if err != nil {
			return err
		}
		s.runs += len(jobs)
		for k, j := range jobs {
			for m := range j.c.samples {
				j.c.samples[m] = append(j.c.samples[m], res[k].Metrics[m][0])
			}
			j.c.advice = append(j.c.advice, res[k].Advice...)
		}
		var undecided []*Candidate
		for _, c := range todo {
			c.Seeds = reps
			c.Stats = c.Stats[:0]
			// One commitment level for all the seeds run so far: each
			// seed's figures at it.
			at := make([][]float64, len(c.samples))
			for m := range c.samples {
				at[m] = slices.Clone(c.samples[m])
			}
			if err := s.sw.OneCommitmentLevel(at, c.advice); err != nil {
				return err
			}
			for m := range at {
				c.Stats = append(c.Stats, sweep.Summarize(at[m]))
			}
			if !s.decide(c, reps >= s.o.MaxReps) {
				undecided = append(undecided, c)
			}
		}
		todo = undecided
		reps = min(reps+2, s.o.MaxReps)
	}
	return nil
}

// decide sets c's status when its intervals (or, with final, its means)
// settle every constraint.
func (s *search) decide(c *Candidate, final bool) bool {
	met := true
	for k, con := range s.o.Constraints {
		switch con.Judge(c.Stats[s.conIdx[k]]) {
		case sweep.Missed:
			c.Status, c.Confident = Infeasible, true
			return true
		case sweep.Unsure:
			met = false
		}
	}
	if met {
		c.Status, c.Confident = Feasible, true
		return true
	}
	if !final {
		return false
	}
	c.Status = Feasible
	for k, con := range s.o.Constraints {
		if !con.Meets(c.Stats[s.conIdx[k]].Mean) {
			c.Status = Infeasible
		}
	}
	return true
}

// better orders feasible points by the objective's mean, then by index.
func (s *search) better(a, b *Candidate) bool {
	x, y := a.Stats[0].Mean, b.Stats[0].Mean
	if sweep.HigherIsBetter(s.o.Objective.Name) {
		x, y = -x, -y
	}
	if x != y {
		return x < y
	}
	return a.Point.Index < b.Point.Index
}

func (s *search) feasible() []*Candidate {
	var out []*Candidate
	for _, c := range s.seen {
		if c.Status == Feasible {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return s.better(out[i], out[j]) })
	return out
}

func (s *search) best() *Candidate {
	if f := s.feasible(); len(f) > 0 {
		return f[0]
	}
	return nil
}

// paretoOn reports whether the space's second metric is a constraint's,
// the front's other axis (the commitment figures Space adds are not).
func (r *Result) paretoOn() bool {
	return len(r.Metrics) > 1 && slices.ContainsFunc(r.Constraints, func(c sweep.Constraint) bool { return c.Metric.Name == r.Metrics[1] })
}

func (s *search) result() *Result {
	r := &Result{Sweep: s.sw, Runs: s.runs, GridRuns: s.sw.NumPoints() * s.o.MaxReps,
		Objective: s.o.Objective, Constraints: s.o.Constraints, MinReps: s.o.MinReps, MaxReps: s.o.MaxReps}
	for _, m := range s.sw.Metrics {
		r.Metrics = append(r.Metrics, m.Name)
	}
	f := s.feasible()
	if len(f) > 0 {
		r.Winner = f[0]
	}
	if len(f) > 1 {
		r.RunnerUp = f[1]
	}
	for _, c := range s.seen {
		r.Evaluated = append(r.Evaluated, c)
	}
	sort.Slice(r.Evaluated, func(i, j int) bool { return r.Evaluated[i].Point.Index < r.Evaluated[j].Point.Index })
	if r.paretoOn() {
		x, y := make([]float64, len(r.Evaluated)), make([]float64, len(r.Evaluated))
		for i, c := range r.Evaluated {
			x[i], y[i] = c.Stats[0].Mean, c.Stats[1].Mean
		}
		for _, i := range sweep.Pareto(x, y, sweep.HigherIsBetter(r.Metrics[0]), sweep.HigherIsBetter(r.Metrics[1])) {
			r.Pareto = append(r.Pareto, r.Evaluated[i])
		}
	}
	return r
}
