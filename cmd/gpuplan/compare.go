package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
)

type comparison struct {
	A, B reports.RunFigures
	Rows []compareRow
}

type compareRow struct {
	Metric string  `json:"metric"`
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	Change float64 `json:"change"`
	// RelativeChange is change / a (0 when a is 0).
	RelativeChange float64 `json:"relativeChange"`
	// Unit says what the figures are: count, seconds, milliseconds, usd,
	// usd-per-gpu-hour, gpu-hours or fraction (a change of a fraction is in
	// percentage points).
	Unit string `json:"unit"`
}

func readSummaryFile(path string) (*reports.Summary, error) {
	b, err := scenarios.ReadFileBounded(path)
	if err != nil {
		var ie *scenarios.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, usageError{fmt.Errorf("%s: %s", path, scenarios.ReadErr(err))}
	}
	var s reports.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, usageError{fmt.Errorf("%s: not a gpuplan summary.json: %v", path, err)}
	}
	if s.SchemaVersion != reports.SchemaVersion {
		return nil, usageError{fmt.Errorf("%s: schemaVersion %d, this gpuplan reads %d", path, s.SchemaVersion, reports.SchemaVersion)}
	}
	return &s, nil
}

func newCompareCmd(stdout io.Writer) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "compare A/summary.json B/summary.json",
		Short: "Set two runs' key figures side by side",
		Long: `Set two runs' key figures side by side, with the change: jobs, waits, completion times, the
bill, idle cost and the cost per useful GPU-hour (the bill over completed jobs' work); for runs
with both jobs and services, training's cost per useful GPU-hour and inference's cost per million
requests served instead, each on its share of the bill (cost.byWorkload); and for each inference
service both runs have, its p95 latency, SLO attainment, drops, GPU-hours and cost per million
requests.`,
		Example: `  gpuplan simulate a.yaml --out out/a && gpuplan simulate b.yaml --out out/b
  gpuplan compare out/a/summary.json out/b/summary.json`,
		Args: argsUsage(cobra.ExactArgs(2)),
		RunE: func(_ *cobra.Command, args []string) error {
			switch output {
			case "table", "json", "markdown":
			default:
				return usageError{fmt.Errorf("--output is %s; want table, json or markdown", q(output))}
			}
			a, err := readSummaryFile(args[0])
			if err != nil {
				return err
			}
			b, err := readSummaryFile(args[1])
			if err != nil {
				return err
			}
			fa, fb := reports.Figures(args[0], a), reports.Figures(args[1], b)
			cmp := comparison{A: fa, B: fb}
			add := func(name string, x, y float64, unit string) {
				r := compareRow{Metric: name, A: x, B: y, Change: y - x, Unit: unit}
				if x != 0 {
					r.RelativeChange = (y - x) / x
				}
				cmp.Rows = append(cmp.Rows, r)
			}
			add("jobs completed", float64(fa.Completed), float64(fb.Completed), "count")
			add("jobs failed", float64(fa.Failed), float64(fb.Failed), "count")
			add("GPU allocation", fa.Allocation, fb.Allocation, "fraction")
			add("p95 queue wait", fa.WaitP95, fb.WaitP95, "seconds")
			add("p50 completion time", fa.JCTP50, fb.JCTP50, "seconds")
			add("p95 completion time", fa.JCTP95, fb.JCTP95, "seconds")
			add("cost (USD)", fa.Cost, fb.Cost, "usd")
			add("idle cost (USD)", fa.IdleCost, fb.IdleCost, "usd")
			if fa.BySide || fb.BySide {
				// Jobs and services: each side on its share of the bill.
				add("training cost per useful GPU-hour (its share)", fa.CostPerUsefulGPUHour, fb.CostPerUsefulGPUHour, "usd-per-gpu-hour")
				add("inference cost per million requests (its share)", fa.CostPerMillionRequests, fb.CostPerMillionRequests, "usd")
			} else {
				add("cost per useful GPU-hour", fa.CostPerUsefulGPUHour, fb.CostPerUsefulGPUHour, "usd-per-gpu-hour")
			}
			add("GPU-hours lost to disruptions", fa.LostGPUHours, fb.LostGPUHours, "gpu-hours")
			add("disruptions", float64(fa.Disruptions), float64(fb.Disruptions), "count")
			if fa.StepSeconds > 0 || fb.StepSeconds > 0 {
				add("mean training step", fa.StepSeconds, fb.StepSeconds, "seconds")
			}
			// Inference services both runs have, by name.
			for _, x := range fa.Services {
				for _, y := range fb.Services {
					if x.Name != y.Name {
						continue
					}
					add(x.Name+" p95 latency", x.P95Ms, y.P95Ms, "milliseconds")
					if x.SLOAttainment > 0 || y.SLOAttainment > 0 {
						add(x.Name+" within SLO", x.SLOAttainment, y.SLOAttainment, "fraction")
					}
					add(x.Name+" requests dropped", x.Dropped, y.Dropped, "count")
					add(x.Name+" GPU-hours", x.GPUHours, y.GPUHours, "gpu-hours")
					if x.CostPerMillion > 0 || y.CostPerMillion > 0 {
						add(x.Name+" cost per million requests", x.CostPerMillion, y.CostPerMillion, "usd")
					}
				}
			}
			switch output {
			case "json":
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(cmp.Rows)
			}
			val := func(r compareRow, x float64) string {
				switch r.Unit {
				case "seconds":
					return reports.Human(x)
				case "milliseconds":
					return fmt.Sprintf("%.1f ms", x)
				case "usd", "usd-per-gpu-hour":
					return reports.Money(x)
				case "fraction":
					return fmt.Sprintf("%.1f%%", 100*x)
				case "gpu-hours":
					return fmt.Sprintf("%.1f", x)
				}
				return fmt.Sprintf("%.0f", x)
			}
			rows := [][]string{}
			for _, r := range cmp.Rows {
				// A share changes by percentage points; anything else by
				// percent of A.
				rel := ""
				switch {
				case r.Unit == "fraction":
					rel = fmt.Sprintf("%+.1f pp", 100*r.Change)
				case r.A != 0:
					rel = fmt.Sprintf("%+.1f%%", 100*r.RelativeChange)
				}
				rows = append(rows, []string{r.Metric, val(r, r.A), val(r, r.B), rel})
			}
			if output == "markdown" {
				fmt.Fprintf(stdout, "| | %s | %s | change |\n|---|---:|---:|---:|\n", a.Scenario.Name, b.Scenario.Name)
				for _, r := range rows {
					fmt.Fprintf(stdout, "| %s |\n", strings.Join(r, " | "))
				}
				return nil
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "\tA: %s\tB: %s\tCHANGE\n", a.Scenario.Name, b.Scenario.Name)
			for _, r := range rows {
				fmt.Fprintln(tw, strings.Join(r, "\t"))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "table, json or markdown")
	return c
}
