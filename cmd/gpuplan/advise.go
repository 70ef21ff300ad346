package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

func newAdviseCmd(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "advise",
		Short: "Work out settings from theory and simulation",
	}
	c.AddCommand(newAdviseCheckpointCmd(stdout))
	return c
}

type adviseCheckpointOptions struct {
	mtbf, cost, jobLength, restart, restore string
	simulate                                bool
	jobs, points                            int
	seed                                    uint64
	output                                  string
	stdout                                  io.Writer

	delta, m, work, restartD, restoreD time.Duration
}

type checkpointAdvice struct {
	CheckpointCostMinutes float64            `json:"checkpoint_cost_minutes"`
	MTBFMinutes           float64            `json:"mtbf_minutes"`
	YoungMinutes          float64            `json:"young_minutes"`
	DalyMinutes           float64            `json:"daly_minutes"`
	Simulation            *checkpointSimInfo `json:"simulation,omitempty"`
}

type checkpointSimInfo struct {
	JobHours       float64           `json:"job_hours"`
	RestartMinutes float64           `json:"restart_minutes"`
	RestoreMinutes float64           `json:"restore_minutes"`
	Jobs           int               `json:"jobs"`
	Seed           uint64            `json:"seed"`
	Points         []checkpointPoint `json:"points"`
	BestGridMin    float64           `json:"best_grid_minutes"`
	BestFitMin     float64           `json:"best_fitted_minutes"`
}

type checkpointPoint struct {
	IntervalMinutes     float64 `json:"interval_minutes"`
	MeanCompletionHours float64 `json:"mean_completion_hours"`
	DalyModelHours      float64 `json:"daly_model_hours"`
	FailuresPerJob      float64 `json:"failures_per_job"`
}

func newAdviseCheckpointCmd(stdout io.Writer) *cobra.Command {
	o := &adviseCheckpointOptions{stdout: stdout}
	c := &cobra.Command{
		Use:   "checkpoint --mtbf DURATION --checkpoint-cost DURATION",
		Short: "The checkpoint interval that minimises expected completion time",
		Long: `Print the optimum checkpoint interval for a checkpoint that takes --checkpoint-cost
to write (delta) on nodes lost on average every --mtbf (M): Young's (1974)
sqrt(2 delta M) and Daly's (2006, eq. 37) higher-order estimate.

With --simulate it also runs the simulator: --jobs copies of a job of --job-length,
each on a node that fails after exponential lifetimes of mean --mtbf and is
replaced --restart later, the job restoring its last checkpoint in --restore. It
tries --points intervals from a quarter to four times Daly's and reports the mean
completion time of each (beside Daly's model of it), the best interval of the
grid and the vertex of a parabola through the best points. Every interval sees
the same node lifetimes, so the comparison between intervals is not noise.`,
		Example: `  gpuplan advise checkpoint --mtbf 4h --checkpoint-cost 5m
  gpuplan advise checkpoint --mtbf 4h --checkpoint-cost 5m --simulate --job-length 24h --output json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	f := c.Flags()
	f.StringVar(&o.mtbf, "mtbf", "", "mean time between losses of a node (e.g. 4h)")
	f.StringVar(&o.cost, "checkpoint-cost", "", "time to write one checkpoint (e.g. 5m)")
	f.BoolVar(&o.simulate, "simulate", false, "also find the best interval by simulation")
	f.StringVar(&o.jobLength, "job-length", "24h", "work of the simulated job (with --simulate)")
	f.StringVar(&o.restart, "restart", "5m", "time to replace a lost node (with --simulate)")
	f.StringVar(&o.restore, "restore", "0s", "time to restore a checkpoint on restart (with --simulate)")
	f.IntVar(&o.jobs, "jobs", 1000, "simulated jobs per interval (with --simulate)")
	f.IntVar(&o.points, "points", 13, "intervals tried (with --simulate)")
	f.Uint64Var(&o.seed, "seed", 1, "random seed (with --simulate)")
	f.StringVarP(&o.output, "output", "o", "table", "what to print: table, json or yaml")
	enumFlag(c, "output", choicesOf(outputsTJY))
	freeFlag(c, "mtbf", "checkpoint-cost", "job-length", "restart", "restore", "jobs", "points", "seed")
	return c
}

func (o *adviseCheckpointOptions) validate() error {
	for _, r := range []struct{ flag, v string }{{"mtbf", o.mtbf}, {"checkpoint-cost", o.cost}} {
		if r.v == "" {
			return usageError{fmt.Errorf("--%s is required: a positive duration (examples: 5m, 4h, 1d)", r.flag)}
		}
	}
	parse := func(flag, v string, positive bool) (time.Duration, error) {
		d, err := scenarios.ParseDuration(v)
		if err != nil || d < 0 || (positive && d == 0) {
			return 0, usageError{fmt.Errorf("--%s %s is not a positive duration (examples: 5m, 4h, 1d)", flag, q(v))}
		}
		return d, nil
	}
	var err error
	if o.m, err = parse("mtbf", o.mtbf, true); err != nil {
		return err
	}
	if o.delta, err = parse("checkpoint-cost", o.cost, true); err != nil {
		return err
	}
	if o.work, err = parse("job-length", o.jobLength, true); err != nil {
		return err
	}
	if o.restartD, err = parse("restart", o.restart, false); err != nil {
		return err
	}
	if o.restoreD, err = parse("restore", o.restore, false); err != nil {
		return err
	}
	if o.jobs < 1 || o.jobs > 1_000_000 {
		return usageError{fmt.Errorf("--jobs %d must be in 1..1000000", o.jobs)}
	}
	if o.points < 3 || o.points > 200 {
		return usageError{fmt.Errorf("--points %d must be in 3..200", o.points)}
	}
	return outputsTJY().check("output", o.output)
}

func (o *adviseCheckpointOptions) run() error {
	delta, m := o.delta.Minutes(), o.m.Minutes()
	adv := checkpointAdvice{CheckpointCostMinutes: delta, MTBFMinutes: m,
		YoungMinutes: models.YoungInterval(delta, m), DalyMinutes: models.DalyInterval(delta, m)}
	if o.simulate {
		st, err := pipeline.StudyCheckpoints(pipeline.CheckpointStudy{Work: o.work, MTBF: o.m, CheckpointCost: o.delta,
			RestoreCost: o.restoreD, Restart: o.restartD, AroundMinutes: adv.DalyMinutes, Points: o.points, Jobs: o.jobs, Seed: o.seed})
		if err != nil {
			return err
		}
		info := &checkpointSimInfo{JobHours: o.work.Hours(), RestartMinutes: o.restartD.Minutes(), RestoreMinutes: o.restoreD.Minutes(),
			Jobs: o.jobs, Seed: o.seed, BestGridMin: st.BestGridMinutes, BestFitMin: st.BestFitMinutes}
		for _, p := range st.Points {
			info.Points = append(info.Points, checkpointPoint{IntervalMinutes: p.IntervalMinutes,
				MeanCompletionHours: p.MeanCompletionHours, DalyModelHours: p.DalyModelHours, FailuresPerJob: p.FailuresPerJob})
		}
		adv.Simulation = info
	}
	switch o.output {
	case "json":
		return jsonOf(adv)(o.stdout)
	case "yaml":
		return writeYAML(o.stdout, jsonOf(adv))
	}
	w := o.stdout
	fmt.Fprintf(w, "Checkpoint cost %s, MTBF %s:\n", o.delta, o.m)
	fmt.Fprintf(w, "  Young (1974), sqrt(2 delta M):  %.1f min\n", adv.YoungMinutes)
	fmt.Fprintf(w, "  Daly (2006, eq. 37):            %.1f min\n", adv.DalyMinutes)
	if s := adv.Simulation; s != nil {
		fmt.Fprintf(w, "\nSimulated %d jobs of %s per interval (node replaced in %s, restore %s, seed %d):\n\n", s.Jobs, o.work, o.restartD, o.restoreD, s.Seed)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "INTERVAL\tMEAN COMPLETION\tDALY MODEL\tFAILURES/JOB\t")
		for _, p := range s.Points {
			fmt.Fprintf(tw, "%.1f min\t%.3f h\t%.3f h\t%.2f\t\n", p.IntervalMinutes, p.MeanCompletionHours, p.DalyModelHours, p.FailuresPerJob)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nBest simulated interval: %.1f min on the grid, %.1f min fitted (%+.1f%% from Daly's).\n",
			s.BestGridMin, s.BestFitMin, 100*(s.BestFitMin-adv.DalyMinutes)/adv.DalyMinutes)
	}
	return nil
}
