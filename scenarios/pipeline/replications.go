package pipeline

import (
	"context"
	"fmt"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
)

// Side is one scenario to run on several seeds: validate's baseline or
// candidate.
type Side struct {
	Name     string
	Scenario *scenarios.Scenario
	// File is the scenario's path as the user gave it, for the reports.
	File string
	// MaxEvents is the work budget each run is built with
	// (scenarios.Options.MaxEvents; 0: the default).
	MaxEvents int64
}

// Replications runs every side on reps seeds from seed on, on a pool of
// workers (0: one per core), and keeps each run's summary (not its job
// records): out[i][k] is side i on seed+k. The runs go to the pool seed
// by seed, side by side, so the first to fail in that order is the error
// ("NAME, seed S: ..."), and the summaries are the same whatever the
// number of workers.
func Replications(sides []Side, seed uint64, reps, workers int) ([][]*reports.Summary, error) {
	return ReplicationsWith(sides, seed, reps, workers, Options{})
}

// ReplicationsWith is Replications telling o.Planned how many runs it
// makes and o.Progress about each (the other fields of o are not read).
func ReplicationsWith(sides []Side, seed uint64, reps, workers int, o Options) ([][]*reports.Summary, error) {
	n := len(sides)
	if o.Planned != nil {
		o.Planned(n * reps)
	}
	gc := startGCFloor(min(Workers(workers), max(1, n*reps))) // before anything is built: see gcFloor
	defer gc.stop()
	cache := &scenarios.BuildCache{} // shared by the runs' builds
	sums, err := Pool(context.Background(), n*reps, workers, func(_ context.Context, i int) (*reports.Summary, error) {
		sd, s := &sides[i%n], seed+uint64(i/n)
		r, err := One(sd.Scenario, Options{Build: scenarios.Options{Seed: &s, MaxEvents: sd.MaxEvents, Cache: cache}, File: sd.File, Progress: o.Progress},
			fmt.Sprintf("%s, seed %d", sd.Name, s), o.Progress != nil)
		if err != nil {
			return nil, fmt.Errorf("%s, seed %d: %w", sd.Name, s, err)
		}
		return r.Summary, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([][]*reports.Summary, n)
	for i := range out {
		out[i] = make([]*reports.Summary, reps)
		for k := range reps {
			out[i][k] = sums[k*n+i]
		}
	}
	return out, nil
}
