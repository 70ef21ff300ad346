package reports

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
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

func statCells(name string, st Stats) []any {
	if st.Count == 0 {
		return []any{name, "0", "-", "-", "-", "-", "-"}
	}
	return []any{name, fmt.Sprint(st.Count), durSecs(st.Mean), durSecs(st.P50), durSecs(st.P95), durSecs(st.P99), durSecs(st.Max)}
}

// statRows are the wait and completion-time rows, their durations in one
// unit per column.
func statRows(waitName, jctName string, s *Summary) [][]string {
	return columns([][]any{statCells(waitName, s.QueueWait), statCells(jctName, s.JCT)})
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

// termTable writes a terminal table: the header in capitals, then the
// rows, columns aligned two spaces apart.
func termTable(w io.Writer, header []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// poolRows are the supply table's rows. A pool's nodes and GPUs are its
// count at the start; one that an autoscaler grew (a Karpenter NodePool
// starts at 0) shows its most at once beside it, and the cluster's total
// then says it is the start's.
func poolRows(s *Summary) [][]string {
	most := map[string]int{}
	for _, c := range s.Capacity {
		most[c.Pool] = int(c.MaxNodes)
	}
	grew := false
	var rows [][]string
	for _, p := range append(append([]PoolSummary{}, s.Pools...), s.Cluster) {
		name := p.Name
		nodes, gpus := fmt.Sprint(p.Nodes), fmt.Sprint(p.GPUs)
		if m := most[p.Name]; m > p.Nodes {
			grew = true
			nodes += fmt.Sprintf(" (max %d)", m)
			gpus += fmt.Sprintf(" (max %d)", m*int(p.GPUsPerNode))
		}
		if p.Name == "cluster" {
			name = "all pools"
			nodes, gpus = fmt.Sprint(p.Nodes), fmt.Sprint(p.GPUs)
			if grew {
				nodes += " at the start"
				gpus += " at the start"
			}
		}
		rows = append(rows, []string{name, p.InstanceType, p.GPUModel, nodes, gpus,
			fmt.Sprintf("%.1f", p.GPUHoursSupplied), fmt.Sprintf("%.1f", p.GPUHoursAllocated),
			fmt.Sprintf("%.1f", p.GPUHoursIdle), pct(p.Allocation)})
	}
	return rows
}

func queueRows(s *Summary) [][]string {
	var rows [][]any
	for _, q := range s.Queues {
		w, j := q.QueueWait, q.JCT
		cell := func(st Stats, v float64) any {
			if st.Count == 0 {
				return "-"
			}
			return durSecs(v)
		}
		rows = append(rows, []any{q.Name, fmt.Sprint(q.Jobs), fmt.Sprint(q.Completed), fmt.Sprintf("%.1f", q.GPUHoursAllocated),
			cell(w, w.Mean), cell(w, w.P95), cell(j, j.P50), cell(j, j.P95)})
	}
	return columns(rows)
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

func waterfallRows(ws []WaterfallStep) [][]string {
	var rows [][]any
	for _, s := range ws {
		switch {
		case s.Of:
			rows = append(rows, []any{s.Name, usd(s.Delta), ""})
		case s.Delta == 0 && (s.Name == "all on-demand bill" || s.Name == "spot bill"):
			rows = append(rows, []any{s.Name, "", usd(s.Total)})
		default:
			rows = append(rows, []any{s.Name, signedUSD(s.Delta), usd(s.Total)})
		}
	}
	return columns(rows)
}

func teamSpotHeader() []string {
	return []string{"team", "with spot", "all on-demand", "change"}
}

func teamSpotRows(sc *SpotComparison) [][]string {
	var rows [][]any
	for _, t := range sc.ByTeam {
		ch := ""
		if t.OnDemand > 0 {
			ch = fmt.Sprintf("%+.1f%%", 100*(t.Spot-t.OnDemand)/t.OnDemand)
		}
		rows = append(rows, []any{t.Team, usd(t.Spot), usd(t.OnDemand), ch})
	}
	return columns(rows)
}

func gpuRateHeader() []string {
	return []string{"pool", "GPU", "capacity", "$/node-h", "$/GPU-h", "GPUs' share of the node"}
}

func gpuRateRows(c *CostSummary) [][]string {
	var rows [][]any
	for _, g := range c.GPURates {
		rows = append(rows, []any{g.Pool, g.GPUModel, g.CapacityType, usd(g.NodePerHour), usd(g.PerGPUHour), fmt.Sprintf("%.1f%%", 100*g.GPUShare)})
	}
	return columns(rows)
}

func money(x float64) string { return Money(x) }

// Money is the one way gpuplan writes dollars: cents below $1,000, whole
// dollars with thousands separators from $1,000 up ($23,777), never
// scientific notation.
func Money(x float64) string {
	if x < 0 {
		return "-" + Money(-x)
	}
	if x < 999.995 {
		return fmt.Sprintf("$%.2f", x)
	}
	return "$" + thousands(int64(math.Round(x)))
}

// thousands writes n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// bySide says the run is priced and has jobs and services: its cost
// figures are each side's share of the bill over its own work, and it
// has no single cost per unit of work.
func bySide(s *Summary) bool {
	return s.Cost != nil && len(s.Cost.ByWorkload) == 2 && s.Jobs.Total > 0
}

// usefulText states the cost of completed jobs' work under the cost
// table: the bill over it, or with services too, training's share over
// it and inference's over the requests served.
func usefulText(s *Summary) string {
	c := s.Cost
	if servicesOnly(s) {
		// No job did any work: the services' cost per million requests
		// is the figure.
		return ""
	}
	if !bySide(s) {
		return fmt.Sprintf("Useful GPU-hours (completed jobs' work): %.1f, at %s each. Checkpoint writes cost %s.", c.UsefulGPUHours, money(c.CostPerUsefulGPUHour), money(c.CheckpointCost))
	}
	tr, inf := c.ByWorkload[0], c.ByWorkload[1]
	useful, perM := "no job completed", "no request served"
	if tr.PerUsefulGPUHour > 0 {
		useful = money(tr.PerUsefulGPUHour) + " each"
	}
	if inf.PerMillionRequests > 0 {
		perM = money(inf.PerMillionRequests) + " a million"
	}
	return fmt.Sprintf("Useful GPU-hours (completed jobs' work): %.1f, at %s on training's share of the bill (%s); requests served: %s, at %s on inference's share (%s). The run has no single cost per unit of work: the whole bill over training's work would charge inference to it. Checkpoint writes cost %s.",
		c.UsefulGPUHours, useful, money(tr.Total), requests(inf.RequestsServed), perM, money(inf.Total), money(c.CheckpointCost))
}

// bySideKPI writes a run's two cost figures, each side's share of the
// bill over its own work; "" when the run is not bySide.
func bySideKPI(s *Summary) (training, inference string) {
	if !bySide(s) {
		return "", ""
	}
	training, inference = "no job completed", "no request served"
	if w := s.Cost.ByWorkload[0]; w.PerUsefulGPUHour > 0 {
		training = money(w.PerUsefulGPUHour) + " a useful GPU-hour"
	}
	if w := s.Cost.ByWorkload[1]; w.PerMillionRequests > 0 {
		inference = money(w.PerMillionRequests) + " a million requests"
	}
	return training, inference
}

func costRows(c *CostSummary) [][]string {
	var rows [][]any
	for _, l := range c.ByPool {
		price := "-"
		if l.PricePerHour > 0 {
			price = fmt.Sprintf("%.4g", l.PricePerHour)
		}
		rows = append(rows, []any{l.Name, l.CapacityType, price, fmt.Sprintf("%.1f", l.NodeHours), usd(l.Cost), usd(l.Allocated), usd(l.Idle), usd(l.IdleGPU), usd(l.LostCost)})
	}
	rows = append(rows, []any{"all pools", "", "", "", usd(c.Total), usd(c.Allocated), usd(c.Idle), usd(c.IdleGPU), usd(c.LostCost)})
	return columns(rows)
}

func costLineRows(lines []CostLine) [][]string {
	var rows [][]any
	for _, l := range lines {
		rows = append(rows, []any{l.Name, fmt.Sprintf("%.1f", l.GPUHours), usd(l.Cost), usd(l.Idle), usd(l.LostCost)})
	}
	return columns(rows)
}

// deallocatedText says what Azure's eviction policy Deallocate did in a
// pool: nodes stopped, restarted, their stopped hours and the OS disks'
// bill ("" when it did nothing).
func deallocatedText(s *Summary, c CapacityLine) string {
	if c.Deallocated == 0 {
		return ""
	}
	disk := 0.0
	if s.Cost != nil {
		for _, l := range s.Cost.ByPool {
			if l.Name == c.Pool {
				disk = l.DiskCost
			}
		}
	}
	return fmt.Sprintf("%d evictions stopped-deallocated the node, %d restarted when capacity came back; %.1f node-hours deallocated, their OS disks billed %s (in the pool's cost and idle)",
		c.Deallocated, c.Restarted, c.DeallocatedHours, Money(disk))
}

func capacityRows(s *Summary) [][]string {
	var rows [][]string
	for _, c := range s.Capacity {
		rows = append(rows, []string{c.Pool, c.CapacityType, fmt.Sprint(c.InitialNodes), fmt.Sprint(c.MaxNodes), fmt.Sprintf("%.1f", c.NodeHours),
			fmt.Sprint(c.Launched), fmt.Sprint(c.Interrupted), fmt.Sprint(c.Failed), fmt.Sprint(c.ScaledDown + c.Consolidated), fmt.Sprint(c.SpotFallbacks)})
	}
	return rows
}

func spotRows(c *SpotComparison) [][]string {
	vs := []RunFigures{c.Spot, c.OnDemand}
	row := func(f RunFigures) []any {
		return withServed(vs, f, []any{f.Name, usd(f.Cost), usd(f.IdleCost), fmt.Sprintf("%.1f", f.LostGPUHours), usd(f.LostCost),
			usd(f.CostPerUsefulGPUHour), fmt.Sprint(f.Completed), fmt.Sprint(f.Disruptions), kmCell(f.JCTAllP50), kmCell(f.JCTAllP95)})
	}
	return columns([][]any{row(c.Spot), row(c.OnDemand)})
}

// A comparison of runs with services adds, after the cost per useful
// GPU-hour (column 5), the cost per million requests served; in runs
// with jobs and services too (BySide), both are each side's share of
// the bill, and the headers say so.
const perWorkCol = 5

func anyBySide(vs []RunFigures) bool {
	for _, f := range vs {
		if f.BySide {
			return true
		}
	}
	return false
}

func anyServed(vs []RunFigures) bool {
	for _, f := range vs {
		if f.CostPerMillionRequests > 0 {
			return true
		}
	}
	return false
}

// bySideHeader renames header's per-work column and adds the served
// one, as the runs vs need.
func bySideHeader(vs []RunFigures, h []string) []string {
	if anyBySide(vs) {
		h[perWorkCol] = "training $/useful GPU-h"
	}
	if anyServed(vs) {
		name := "$/M requests"
		if anyBySide(vs) {
			name = "inference $/M requests"
		}
		h = slices.Insert(h, perWorkCol+1, name)
	}
	return h
}

// withServed adds f's cost per million requests to its row r when the
// runs vs have one.
func withServed(vs []RunFigures, f RunFigures, r []any) []any {
	if !anyServed(vs) {
		return r
	}
	var x any = "-"
	if f.CostPerMillionRequests > 0 {
		x = usd(f.CostPerMillionRequests)
	}
	return slices.Insert(r, perWorkCol+1, x)
}

func variantHeader() []string {
	return []string{"run", "cost", "idle", "GPU-h lost", "lost cost", "$/useful GPU-h", "completed", "failed", "disruptions", "p95 wait", "p50 JCT*", "p95 JCT*", "allocation"}
}

// censoredNote explains the starred completion times.
const censoredNote = "* Completion time over every job, the unfinished ones counted as censored at the end of the run (Kaplan-Meier), not dropped; \"not reached\" when more than that share never completed."

// kmCell is a censored quantile's cell.
func kmCell(x float64) any {
	if x < 0 {
		return "not reached"
	}
	return durSecs(x)
}

func pairedHeader() []string {
	return []string{"run", "completed", "both completed", "mean JCT, both", "as given, both", "slower", "only this", "only as given", "$/useful GPU-h", "same-work saving"}
}

// pairedHeaderFor is pairedHeader for the runs vs: with services, the
// cost per million requests served and the saving for the same requests
// follow; with jobs and services both, each side's share of the bill.
func pairedHeaderFor(vs []RunFigures) []string {
	h := pairedHeader()
	if anyBySide(vs) {
		h[8], h[9] = "training $/useful GPU-h", "training same-work saving"
	}
	if anyServed(vs) {
		if anyBySide(vs) {
			h = append(h, "inference $/M requests", "inference same-requests saving")
		} else {
			h = append(h, "$/M requests", "same-requests saving")
		}
	}
	return h
}

// pairedRows compares each variant with the scenario as given, job by job.
func pairedRows(vs []RunFigures) [][]string {
	var rows [][]any
	for _, f := range vs {
		p := f.Paired
		if p == nil {
			continue
		}
		rows = append(rows, []any{f.Name, fmt.Sprint(f.Completed), fmt.Sprint(p.Both), durSecs(p.MeanSeconds), durSecs(p.OtherMeanSecs),
			fmt.Sprint(p.Slower), fmt.Sprint(p.OnlyThis), fmt.Sprint(p.OnlyOther), usd(f.CostPerUsefulGPUHour), signedPct(f.SameWorkVsBasePct)})
		if anyServed(vs) {
			var perM, saving any = "-", "-"
			if f.CostPerMillionRequests > 0 {
				perM = usd(f.CostPerMillionRequests)
			}
			if f.ServedVsBasePct != 0 || f.CostPerMillionRequests > 0 && base0(vs).CostPerMillionRequests > 0 {
				saving = signedPct(f.ServedVsBasePct)
			}
			rows[len(rows)-1] = append(rows[len(rows)-1], perM, saving)
		}
	}
	return columns(rows)
}

// base0 is the scenario as given among the runs vs (the first).
func base0(vs []RunFigures) RunFigures {
	if len(vs) == 0 {
		return RunFigures{}
	}
	return vs[0]
}

func variantRows(vs []RunFigures) [][]string {
	var rows [][]any
	for _, f := range vs {
		r := withServed(vs, f, []any{f.Name, usd(f.Cost), usd(f.IdleCost), fmt.Sprintf("%.1f", f.LostGPUHours), usd(f.LostCost),
			usd(f.CostPerUsefulGPUHour), fmt.Sprint(f.Completed), fmt.Sprint(f.Failed), fmt.Sprint(f.Disruptions),
			durSecs(f.WaitP95), kmCell(f.JCTAllP50), kmCell(f.JCTAllP95), pct(f.Allocation)})
		if hasSteps(vs) {
			r = append(r, fmt.Sprintf("%.3f s", f.StepSeconds))
		}
		rows = append(rows, r)
	}
	return columns(rows)
}

func hasSteps(vs []RunFigures) bool {
	for _, f := range vs {
		if f.StepSeconds > 0 {
			return true
		}
	}
	return false
}

func variantHeaderFor(vs []RunFigures) []string {
	h := bySideHeader(vs, variantHeader())
	if hasSteps(vs) {
		h = append(h, "mean step")
	}
	return h
}

func spotHeader() []string {
	return []string{"run", "cost", "idle", "GPU-h lost", "lost cost", "$/useful GPU-h", "completed", "disruptions", "p50 JCT*", "p95 JCT*"}
}

func spotHeaderFor(c *SpotComparison) []string {
	return bySideHeader([]RunFigures{c.Spot, c.OnDemand}, spotHeader())
}

// writeCapacityAndCost writes the capacity, disruption and cost sections.
func writeCapacityAndCost(w io.Writer, s *Summary) {
	if len(s.Capacity) > 0 {
		fmt.Fprintf(w, "## Node supply\n\n")
		mdTable(w, []string{"pool", "capacity", "initial nodes", "max nodes", "node-h", "launched", "interrupted", "failed", "scaled in", "spot fallbacks"}, capacityRows(s))
		for _, c := range s.Capacity {
			if c.Interruptions != "" {
				fmt.Fprintf(w, "- %s interruptions: %s\n", c.Pool, c.Interruptions)
			}
			if c.Failures != "" {
				fmt.Fprintf(w, "- %s failures: %s\n", c.Pool, c.Failures)
			}
			if t := deallocatedText(s, c); t != "" {
				fmt.Fprintf(w, "- %s deallocated: %s\n", c.Pool, t)
			}
		}
		fmt.Fprintln(w)
	}
	if t := replicaDisruptions(s); t != "" {
		fmt.Fprintf(w, "%s\n\n", t)
	} else if d := s.Disruptions; d != nil {
		fmt.Fprintf(w, "Disruptions: %d jobs stopped by lost nodes or preemption (%d restarts; %d spot, %d failure, %d consolidation, %d preemption); %d failed (past a backoff limit or Volcano maxRetry, or by a Volcano policy). "+
			"GPU-hours lost to them: %.1f; spent writing checkpoints: %.1f.\n\n",
			d.JobsDisrupted, d.Restarts, d.ByCause["spot interruption"], d.ByCause["node failure"], d.ByCause["consolidation"], d.ByCause["preemption"], d.JobsFailed, d.LostGPUHours, d.CheckpointGPUHours)
	}
	if c := s.Cost; c != nil {
		fmt.Fprintf(w, "## Cost (USD)\n\n")
		mdTable(w, []string{"pool", "capacity", "$/node-h", "node-h", "cost", "allocated", "idle", "idle GPU", "lost to disruptions"}, costRows(c))
		if t := usefulText(s); t != "" {
			fmt.Fprintf(w, "%s\n\n", t)
		}
		if s.Cost.Commitments != nil {
			writeCommitments(w, s.Cost.Commitments)
			fmt.Fprintln(w)
		}
		if s.Cost.CommitmentAdvice != nil {
			writeCommitmentAdvice(w, s.Cost.CommitmentAdvice)
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "By capacity type:\n\n")
		mdTable(w, []string{"capacity", "GPU-h", "cost", "idle", "lost"}, costLineRows(c.ByCapacityType))
		fmt.Fprintf(w, "By instance type:\n\n")
		mdTable(w, []string{"instance", "GPU-h", "cost", "idle", "lost"}, costLineRows(c.ByInstanceType))
		if len(c.ByGroup) > 0 {
			fmt.Fprintf(w, "By NodePool or node group:\n\n")
			mdTable(w, []string{"group", "GPU-h", "cost", "idle", "lost"}, costLineRows(c.ByGroup))
		}
		fmt.Fprintf(w, "By queue (what its pods paid):\n\n")
		mdTable(w, []string{"queue", "GPU-h", "cost", "idle", "lost"}, costLineRows(c.ByQueue))
		if len(c.ByWorkload) > 0 && !servicesOnly(s) {
			fmt.Fprintf(w, "Training and inference, the whole bill:\n\n")
			mdTable(w, workloadHeader(), workloadRows(c.ByWorkload))
			fmt.Fprintf(w, "%s\n\n", workloadNote)
		}
		if sb := c.Showback; sb != nil && len(sb.Teams) > 0 {
			fmt.Fprintf(w, "Showback by team (queue), the whole bill:\n\n")
			mdTable(w, showbackHeader(sb), showbackRows(sb))
			fmt.Fprintf(w, "%s\n\n", showbackText(sb))
		}
		for _, p := range c.ByPool {
			if p.PriceBasis != "" {
				fmt.Fprintf(w, "- %s: %s\n", p.Name, p.PriceBasis)
			}
		}
		if len(c.Unpriced) > 0 {
			fmt.Fprintf(w, "- no price, not counted: %s\n", strings.Join(c.Unpriced, ", "))
		}
		fmt.Fprintf(w, "- %s.\n\n", c.Model)
		if len(c.GPURates) > 0 {
			fmt.Fprintf(w, "Effective GPU-hour price (what idle and allocated GPU time is charged at):\n\n")
			mdTable(w, gpuRateHeader(), gpuRateRows(c))
		}
	}
	if len(s.Training) > 0 {
		fmt.Fprintf(w, "## Distributed training\n\nEach training job's step: compute plus the all-reduce of its gradients, limited by the fabric shown (the network's bus bandwidth scaled by the share of a node's rails the job uses).\n\n")
		mdTable(w, trainingHeader(), trainingRows(s))
	}
	if len(s.Variants) > 0 {
		fmt.Fprintf(w, "## What-if variants\n\nThe scenario as given and each of its variants, same seed and workload.\n\n")
		h, rows := variantTable(s)
		mdTable(w, h, rows)
		fmt.Fprintf(w, "%s\n\n", runsNote(s))
		if rows := variantServiceRows(s.Variants); len(rows) > 0 {
			fmt.Fprintf(w, "Inference services in each run:\n\n")
			mdTable(w, variantServiceHeader(), rows)
		}
		if rows := variantLLMRows(s.Variants); len(rows) > 0 {
			fmt.Fprintf(w, "LLM services in each run:\n\n")
			mdTable(w, variantLLMHeader(), rows)
		}
		if h, rows := pairedTable(s); len(rows) > 0 {
			fmt.Fprintf(w, "%s\n\n", pairedCaption(s))
			mdTable(w, h, rows)
		}
	}
	if sc := s.SpotVsOnDemand; sc != nil {
		fmt.Fprintf(w, "## Spot against on-demand\n\nThe same run with every spot node bought on-demand instead (no spot interruptions; node failures kept).\n\n")
		h, rows := spotTable(s, sc)
		mdTable(w, h, rows)
		if !servicesOnly(s) {
			fmt.Fprintf(w, "%s\n\n", censoredNote)
		}
		fmt.Fprintf(w, "%s\n\n", sameWorkText(sc))
		if len(sc.Waterfall) > 0 {
			fmt.Fprintf(w, "From the all-on-demand bill to the spot bill:\n\n")
			mdTable(w, []string{"step", "change", "running total"}, waterfallRows(sc.Waterfall))
		}
		if len(sc.ByTeam) > 0 {
			fmt.Fprintf(w, "Each team's showback with spot and all on-demand:\n\n")
			mdTable(w, teamSpotHeader(), teamSpotRows(sc))
		}
		if t := pairedText(sc.Paired); t != "" {
			fmt.Fprintf(w, "%s\n\n", t)
		}
	}
	for i := range s.SpotSensitivity {
		c := &s.SpotSensitivity[i]
		fmt.Fprintf(w, "## Spot savings against the interruption rate: %s\n\n", c.Run)
		h, rows := spotCurveTable(s, c)
		mdTable(w, h, rows)
		fmt.Fprintf(w, "%s\n\n", spotCurveText(c))
		if len(c.Waterfall) > 0 {
			fmt.Fprintf(w, "From the all-on-demand bill to this run's bill:\n\n")
			mdTable(w, []string{"step", "change", "running total"}, waterfallRows(c.Waterfall))
		}
	}
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
	if n := s.Jobs.ByOutcome[sim.Pending.String()] + s.Jobs.ByOutcome[sim.Running.String()]; n > 0 {
		// Nothing was left to happen, but not every job finished: the
		// workload did not drain.
		h = fmt.Sprintf("until nothing more could happen, %d job(s) unfinished", n)
	}
	if sc.HorizonSeconds > 0 {
		h = "horizon " + Human(sc.HorizonSeconds)
		if sc.Truncated {
			h += ", jobs after it not submitted"
		}
	}
	lines = append(lines, fmt.Sprintf("Seed %d; simulated %s (%s).", sc.Seed, Human(s.SimulatedSeconds), h))
	return lines
}

// clockLine says which wall-clock time simulated time 0 stands for, in
// UTC, and how the diurnal loads read it (none without a start: a
// summary read back).
func clockLine(s *Summary) []string {
	if s.start.IsZero() {
		return nil
	}
	return []string{fmt.Sprintf("Simulated time 0 is %s UTC (spec.output.startTime); timestamps count from it. A service's diurnal peak is a time of day in UTC, a job class's diurnal peakHour hours after time 0.",
		s.start.UTC().Format("2006-01-02 15:04"))}
}

// WriteMarkdown writes the Markdown report.
func WriteMarkdown(w io.Writer, s *Summary) error {
	fmt.Fprintf(w, "# gpuplan report: %s\n\n", s.Scenario.Name)
	for _, l := range append(header(s), clockLine(s)...) {
		fmt.Fprintf(w, "%s\n", l)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "## GPU supply and allocation\n\n")
	mdTable(w, []string{"pool", "instance", "GPU", "nodes", "GPUs", "GPU-h supplied", "GPU-h allocated", "GPU-h idle", "allocation"}, poolRows(s))
	fmt.Fprintf(w, "## Jobs\n\n")
	if servicesOnly(s) {
		fmt.Fprintf(w, "None: inference services only.\n\n")
	} else {
		writeJobsMarkdown(w, s)
	}
	if len(s.Services) > 0 {
		fmt.Fprintf(w, "## Inference services\n\n")
		mdTable(w, serviceHeaderFor(s), serviceRows(s))
		fmt.Fprintf(w, "%s\n\n", servicesNote)
		if hasLLM(s) {
			lat, eng := llmTables(s)
			mdTable(w, lat[0], lat[1:])
			mdTable(w, eng[0], eng[1:])
			fmt.Fprintf(w, "%s\n\n", llmServicesNote)
			if pd := llmDisaggTable(s); pd != nil {
				mdTable(w, pd[0], pd[1:])
				fmt.Fprintf(w, "%s\n\n", llmDisaggNote)
			}
		}
	}
	writeWhyMarkdown(w, s)
	writeAdmissionMarkdown(w, s)
	writeCapacityAndCost(w, s)
	writeSchedulerMarkdown(w, s)
	e := s.Engine
	_, err := fmt.Fprintf(w, "Engine: %d events, %d scheduling passes, %d placement attempts (%d skipped as dominated).\n", e.Events, e.Passes, e.Attempts, e.Skipped)
	return err
}

// writeJobsMarkdown writes the jobs' outcomes, waits and completion
// times, and each queue's.
func writeJobsMarkdown(w io.Writer, s *Summary) {
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
	if t := s.TopologySlots; t != nil {
		fmt.Fprintf(w, "%s\n\n", slotsLine(t))
	}
	fmt.Fprintf(w, "## Waiting and completion\n\n")
	mdTable(w, []string{"", "jobs", "mean", "p50", "p95", "p99", "max"}, statRows("queue wait (started jobs)", "completion time (completed jobs)", s))
	fmt.Fprintf(w, "## Queues\n\n")
	mdTable(w, []string{"queue", "jobs", "completed", "GPU-h", "mean wait", "p95 wait", "p50 JCT", "p95 JCT"}, queueRows(s))
}

// writeWhyMarkdown writes why jobs waited, which were left pending and
// which never fit.
func writeWhyMarkdown(w io.Writer, s *Summary) {
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
}

// writeSchedulerMarkdown writes the scheduler's profile and the
// assumptions.
func writeSchedulerMarkdown(w io.Writer, s *Summary) {
	fmt.Fprintf(w, "## Scheduler\n\n")
	fmt.Fprintf(w, "Queue policy %s.\n\n", queueText(s.Scheduler))
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
}

// stopsByCause counts the stops by what caused them (a job can be
// stopped more than once): ", 4 stops by preemption", or "" with none.
func stopsByCause(d *DisruptionSummary) string {
	out := ""
	for c := capacity.Cause(0); c < capacity.NumCauses; c++ {
		if n := d.ByCause[c.String()]; n > 0 {
			stops := "stops"
			if n == 1 {
				stops = "stop"
			}
			out += fmt.Sprintf(", %d %s by %s", n, stops, c)
		}
	}
	return out
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
	if servicesOnly(s) {
		fmt.Fprintf(tw, "Jobs: none (inference services only)\n")
	} else {
		fmt.Fprintf(tw, "Jobs: %d (%s)\n\n", s.Jobs.Total, strings.Join(parts, ", "))
		row("", "JOBS", "MEAN", "P50", "P95", "P99", "MAX")
		for _, r := range statRows("queue wait", "completion time", s) {
			row(r...)
		}
		fmt.Fprintln(tw)
		row("QUEUE", "JOBS", "COMPLETED", "GPU-H", "MEAN WAIT", "P95 WAIT", "P50 JCT", "P95 JCT")
		for _, r := range queueRows(s) {
			row(r...)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeServicesTable(w, s)
	list := func(title string, rc []ReasonCount) {
		if len(rc) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		for _, r := range reasonRows(rc, 5) {
			fmt.Fprintf(w, "  %6s  %s\n", r[1], r[0])
		}
	}
	writeAdmissionTable(w, s)
	if c := s.Cost; c != nil {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "COST (USD)\tCAPACITY\t$/NODE-H\tNODE-H\tCOST\tALLOCATED\tIDLE\tIDLE GPU\tLOST")
		for _, r := range costRows(c) {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		tw.Flush()
		switch {
		case servicesOnly(s):
			// The services table and the inference line below hold the
			// figures; no job did any work.
		case bySide(s):
			fmt.Fprintf(w, "Useful GPU-hours %.1f; GPU-hours lost to disruptions %.1f (%s). Each side on its share of the bill:\n", c.UsefulGPUHours, c.LostGPUHours, money(c.LostCost))
		default:
			fmt.Fprintf(w, "Useful GPU-hours %.1f at %s each; GPU-hours lost to disruptions %.1f (%s).\n", c.UsefulGPUHours, money(c.CostPerUsefulGPUHour), c.LostGPUHours, money(c.LostCost))
		}
		writeCommitments(w, c.Commitments)
		writeCommitmentAdvice(w, c.CommitmentAdvice)
		for _, k := range c.ByWorkload {
			if k.Kind == KindTraining && servicesOnly(s) {
				continue
			}
			fmt.Fprintf(w, "%s: %.1f GPU-hours, %s (%s of the bill, idle share included)", titleCase(k.Kind), k.GPUHours, money(k.Total), pct(k.BillShare))
			if k.PerUsefulGPUHour > 0 {
				fmt.Fprintf(w, "; %s per useful GPU-hour", money(k.PerUsefulGPUHour))
			}
			if k.PerMillionRequests > 0 {
				fmt.Fprintf(w, "; %s per million requests served", money(k.PerMillionRequests))
			}
			fmt.Fprintln(w, ".")
		}
	}
	if t := replicaDisruptions(s); t != "" {
		fmt.Fprintln(w, t)
	} else if d := s.Disruptions; d != nil {
		fmt.Fprintf(w, "Disruptions: %d jobs stopped%s, %d restarts, %d failed.\n", d.JobsDisrupted, stopsByCause(d), d.Restarts, d.JobsFailed)
	}
	if len(s.Training) > 0 {
		fmt.Fprintln(w, "\nTraining steps (compute + all-reduce) by placement:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FABRIC\tNODES\tGPUS\tGPUS/NODE\tJOBS\tMEAN STEP\tALL-REDUCE\tCOMM")
		for _, t := range s.Training {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.3f s\t%.3f s\t%s\n", t.Fabric, t.Nodes, t.Ranks, t.GPUsPerNode, t.Jobs, t.StepSeconds, t.CommSeconds, pct(t.CommShare))
		}
		tw.Flush()
	}
	if len(s.Variants) > 0 {
		fmt.Fprintln(w, "\nWhat-if variants (same seed and workload):")
		vh, vrows := variantTable(s)
		termTable(w, vh, vrows)
		if rows := variantServiceRows(s.Variants); len(rows) > 0 {
			fmt.Fprintln(w, "\nInference services in each run:")
			termTable(w, variantServiceHeader(), rows)
		}
		if rows := variantLLMRows(s.Variants); len(rows) > 0 {
			fmt.Fprintln(w, "\nLLM services in each run:")
			termTable(w, variantLLMHeader(), rows)
		}
		if ph, rows := pairedTable(s); len(rows) > 0 {
			fmt.Fprintf(w, "\n%s\n", pairedCaptionShort(s))
			termTable(w, ph, rows)
		}
		fmt.Fprintln(w, runsNote(s))
	}
	if sc := s.SpotVsOnDemand; sc != nil {
		fmt.Fprintln(w)
		sh, srows := spotTable(s, sc)
		termTable(w, sh, srows)
		fmt.Fprintf(w, "%s\n", sameWorkText(sc))
		if t := pairedText(sc.Paired); t != "" {
			fmt.Fprintf(w, "%s\n", t)
		}
	}
	for i := range s.SpotSensitivity {
		fmt.Fprintf(w, "\nSpot break-even: %s\n", spotCurveText(&s.SpotSensitivity[i]))
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

func trainingHeader() []string {
	return []string{"fabric", "nodes", "GPUs", "GPUs per node", "jobs", "mean step", "all-reduce", "communicating"}
}

// trainingRows are the distributed-training table's rows.
func trainingRows(s *Summary) [][]string {
	var rows [][]string
	for _, t := range s.Training {
		f := t.Fabric
		if f == "" {
			f = "(one GPU)"
		}
		rows = append(rows, []string{f, fmt.Sprint(t.Nodes), fmt.Sprint(t.Ranks), fmt.Sprint(t.GPUsPerNode), fmt.Sprint(t.Jobs),
			fmt.Sprintf("%.3f s", t.StepSeconds), fmt.Sprintf("%.3f s", t.CommSeconds), pct(t.CommShare)})
	}
	return rows
}

// queueText describes the queue policy of a run.
func queueText(si SchedulerInfo) string {
	if si.Policy == "SchedulingQueue" {
		return "SchedulingQueue (kube-scheduler's: a job that does not fit is set aside and the jobs behind it are tried; it is tried again when capacity frees up, after a backoff of 1s doubling to 10s)"
	}
	t := fmt.Sprintf("%s, backfill %v", si.Policy, si.Backfill)
	if si.BackfillDepth > 0 {
		t += fmt.Sprintf(" (depth %d)", si.BackfillDepth)
	}
	return t
}
