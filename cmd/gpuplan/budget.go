package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"gpuplan.dev/gpuplan/scenarios"
)

// addMaxEvents adds --max-events, the work budget every run of the
// command is built with (simulate's; see its --help).
func addMaxEvents(f *pflag.FlagSet, p *int64, runs string) {
	f.Int64Var(p, "max-events", scenarios.DefaultMaxEvents, "the work budget of "+runs+": refuse, before it runs, a scenario whose settings are estimated to make more simulation events (failures, interruptions, scaler periods, jobs, timeline buckets), naming the setting and what would fit (see simulate --help)")
}

// checkMaxEvents refuses a budget that is not a positive number of events.
func checkMaxEvents(n int64) error {
	if n <= 0 {
		return usageError{fmt.Errorf("--max-events %d: want a positive number of events", n)}
	}
	return nil
}
