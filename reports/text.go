package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"gpuplan.dev/gpuplan/sim"
)

// Human formats seconds for people: 42.0s, 12.5m, 3.40h, 2.10d.
func Human(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	case s < 3600:
		return fmt.Sprintf("%.1fm", s/60)
	case s < 48*3600:
		return fmt.Sprintf("%.2fh", s/3600)
	}
	return fmt.Sprintf("%.2fd", s/86400)
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func statRow(name string, st Stats) []string {
	if st.Count == 0 {
		return []string{name, "0", "-", "-", "-", "-", "-"}
	}
	return []string{name, fmt.Sprint(st.Count), Human(st.Mean), Human(st.P50), Human(st.P95), Human(st.P99), Human(st.Max)}
}

func outcomeOrder(s *Summary) []string {
	var out []string
	for _, o := range sim.Outcomes() {
		if _, ok := s.Jobs.ByOutcome[o.String()]; ok {
			out = append(out, o.String())
		}
	}
	return out
}

func mdTable(w io.Writer, header []string, rows [][]string) {
	esc := func(c string) string { return strings.ReplaceAll(c, "|", `\|`) }
	cells := make([]string, len(header))
	for i, h := range header {
		cells[i] = esc(h)
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	seps := make([]string, len(header))
	for i := range seps {
		seps[i] = "---"
		if i > 0 {
			seps[i] = "---:"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = esc(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

func poolRows(s *Summary) [][]string {
	var rows [][]string
	for _, p := range append(append([]PoolSummary{}, s.Pools...), s.Cluster) {
		name := p.Name
		if p.Name == "cluster" {
			name = "all pools"
		}
		rows = append(rows, []string{name, p.InstanceType, p.GPUModel, fmt.Sprint(p.Nodes), fmt.Sprint(p.GPUs),
			fmt.Sprintf("%.1f", p.GPUHoursSupplied), fmt.Sprintf("%.1f", p.GPUHoursAllocated),
			fmt.Sprintf("%.1f", p.GPUHoursIdle), pct(p.Allocation)})
	}
	return rows
}

func queueRows(s *Summary) [][]string {
	var rows [][]string
	for _, q := range s.Queues {
		w, j := q.QueueWait, q.JCT
		cell := func(st Stats, v float64) string {
			if st.Count == 0 {
				return "-"
			}
			return Human(v)
		}
		rows = append(rows, []string{q.Name, fmt.Sprint(q.Jobs), fmt.Sprint(q.Completed), fmt.Sprintf("%.1f", q.GPUHoursAllocated),
			cell(w, w.Mean), cell(w, w.P95), cell(j, j.P50), cell(j, j.P95)})
	}
	return rows
}

func reasonRows(rc []ReasonCount, limit int) [][]string {
	var rows [][]string
	for i, r := range rc {
		if limit > 0 && i == limit {
			rest := 0
			for _, x := range rc[i:] {
				rest += x.Jobs
			}
			rows = append(rows, []string{fmt.Sprintf("(%d more reasons)", len(rc)-i), fmt.Sprint(rest)})
			break
		}
		rows = append(rows, []string{r.Reason, fmt.Sprint(r.Jobs)})
	}
	return rows
}

func header(s *Summary) []string {
	sc := s.Scenario
	lines := []string{}
	if sc.Description != "" {
		lines = append(lines, sc.Description)
	}
	src := sc.File
	if src == "" {
		src = "built in"
	}
	lines = append(lines, fmt.Sprintf("Scenario file: %s. Workload: %s.", src, sc.Workload))
	h := "until the workload drained"
	if sc.HorizonSeconds > 0 {
		h = "horizon " + Human(sc.HorizonSeconds)
		if sc.Truncated {
			h += ", jobs after it not submitted"
		}
	}
	lines = append(lines, fmt.Sprintf("Seed %d; simulated %s (%s).", sc.Seed, Human(s.SimulatedSeconds), h))
	return lines
}

// WriteMarkdown writes the Markdown report.
func WriteMarkdown(w io.Writer, s *Summary) error {
	fmt.Fprintf(w, "# gpuplan report: %s\n\n", s.Scenario.Name)
	for _, l := range header(s) {
		fmt.Fprintf(w, "%s\n", l)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "## GPU supply and allocation\n\n")
	mdTable(w, []string{"pool", "instance", "GPU", "nodes", "GPUs", "GPU-h supplied", "GPU-h allocated", "GPU-h idle", "allocation"}, poolRows(s))
	fmt.Fprintf(w, "## Jobs\n\n")
	var rows [][]string
	for _, o := range outcomeOrder(s) {
		rows = append(rows, []string{o, fmt.Sprint(s.Jobs.ByOutcome[o])})
	}
	rows = append(rows, []string{"total", fmt.Sprint(s.Jobs.Total)})
	mdTable(w, []string{"outcome", "jobs"}, rows)
	fmt.Fprintf(w, "%d jobs ask for GPUs; %d pods in all.\n\n", s.Jobs.GPUJobs, s.Jobs.Pods)
	if s.OOMKilled > 0 {
		fmt.Fprintf(w, "%d jobs were OOM-killed: their time-sliced GPU's sharers declared more GPU memory than it has.\n\n", s.OOMKilled)
	}
	if f := s.Fragmentation; f != nil {
		fmt.Fprintf(w, "Fragmented GPUs (FGD measure, at each timeline interval's end): mean %.1f, max %.1f.\n\n", f.MeanFragGPUs, f.MaxFragGPUs)
	}
	fmt.Fprintf(w, "## Waiting and completion\n\n")
	mdTable(w, []string{"", "jobs", "mean", "p50", "p95", "p99", "max"}, [][]string{statRow("queue wait (started jobs)", s.QueueWait), statRow("completion time (completed jobs)", s.JCT)})
	fmt.Fprintf(w, "## Queues\n\n")
	mdTable(w, []string{"queue", "jobs", "completed", "GPU-h", "mean wait", "p95 wait", "p50 JCT", "p95 JCT"}, queueRows(s))
	if len(s.PendingReasons) > 0 {
		fmt.Fprintf(w, "## Why jobs waited\n\nThe first reason the scheduler gave for each job that could not start on arrival.\n\n")
		mdTable(w, []string{"reason", "jobs"}, reasonRows(s.PendingReasons, 20))
	}
	if len(s.PendingAtEnd) > 0 {
		fmt.Fprintf(w, "## Still pending at the end\n\n")
		mdTable(w, []string{"diagnosis", "jobs"}, reasonRows(s.PendingAtEnd, 20))
	}
	if len(s.Unschedulable) > 0 {
		fmt.Fprintf(w, "## Never schedulable\n\nJobs no pool could hold even when empty; they were not queued.\n\n")
		mdTable(w, []string{"diagnosis", "jobs"}, reasonRows(s.Unschedulable, 20))
	}
	fmt.Fprintf(w, "## Scheduler\n\n")
	fmt.Fprintf(w, "Queue policy %s, backfill %v", s.Scheduler.Policy, s.Scheduler.Backfill)
	if s.Scheduler.BackfillDepth > 0 {
		fmt.Fprintf(w, " (depth %d)", s.Scheduler.BackfillDepth)
	}
	fmt.Fprintf(w, ".\n\n")
	points := make([]string, 0, len(s.Scheduler.Plugins))
	for k := range s.Scheduler.Plugins {
		points = append(points, k)
	}
	sort.Strings(points)
	for _, k := range points {
		fmt.Fprintf(w, "- %s: %s\n", k, strings.Join(s.Scheduler.Plugins[k], ", "))
	}
	fmt.Fprintln(w)
	if len(s.Assumptions) > 0 {
		fmt.Fprintf(w, "## Assumptions\n\n")
		for _, a := range s.Assumptions {
			fmt.Fprintf(w, "- %s\n", a)
		}
		fmt.Fprintln(w)
	}
	e := s.Engine
	_, err := fmt.Fprintf(w, "Engine: %d events, %d scheduling passes, %d placement attempts (%d skipped as dominated).\n", e.Events, e.Passes, e.Attempts, e.Skipped)
	return err
}

// WriteTable writes the terminal summary.
func WriteTable(w io.Writer, s *Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	fmt.Fprintf(tw, "Scenario %s\n", s.Scenario.Name)
	for _, l := range header(s) {
		fmt.Fprintf(tw, "%s\n", l)
	}
	fmt.Fprintln(tw)
	row("POOL", "GPU", "NODES", "GPUS", "GPU-H SUPPLIED", "ALLOCATED", "IDLE", "ALLOCATION")
	for _, r := range poolRows(s) {
		row(r[0], r[2], r[3], r[4], r[5], r[6], r[7], r[8])
	}
	fmt.Fprintln(tw)
	var parts []string
	for _, o := range outcomeOrder(s) {
		if n := s.Jobs.ByOutcome[o]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
	}
	fmt.Fprintf(tw, "Jobs: %d (%s)\n\n", s.Jobs.Total, strings.Join(parts, ", "))
	row("", "JOBS", "MEAN", "P50", "P95", "P99", "MAX")
	row(statRow("queue wait", s.QueueWait)...)
	row(statRow("completion time", s.JCT)...)
	fmt.Fprintln(tw)
	row("QUEUE", "JOBS", "COMPLETED", "GPU-H", "MEAN WAIT", "P95 WAIT", "P50 JCT", "P95 JCT")
	for _, r := range queueRows(s) {
		row(r...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	list := func(title string, rc []ReasonCount) {
		if len(rc) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		for _, r := range reasonRows(rc, 5) {
			fmt.Fprintf(w, "  %6s  %s\n", r[1], r[0])
		}
	}
	list("Why jobs waited (first reason, jobs):", s.PendingReasons)
	list("Still pending at the end (jobs):", s.PendingAtEnd)
	list("Never schedulable (jobs):", s.Unschedulable)
	for i, a := range s.Assumptions {
		if i == 0 {
			fmt.Fprintln(w, "\nAssumptions:")
		}
		fmt.Fprintf(w, "  - %s\n", a)
	}
	return nil
}
