package reports

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
)

//go:embed report.html.tmpl
var reportTemplate string

type htmlTable struct {
	Caption string
	Header  []string
	Rows    [][]string
}

type htmlSection struct {
	Title  string
	Intro  string
	Tables []htmlTable
	Notes  []string
}

type htmlKPI struct{ Label, Value, Detail string }

type htmlPlot struct {
	Name, Title string
	// PNG is a data: URI, so the file needs nothing beside it.
	PNG template.URL
}

type htmlPage struct {
	Title  string
	Header []string
	// Lead is what the page opens with: for a scenario with variants, the
	// comparison (its chart and tables).
	LeadPlots []htmlPlot
	Lead      []htmlSection
	KPIs      []htmlKPI
	Plots     []htmlPlot
	Sections  []htmlSection
	Engine    string
}

// WriteHTML writes the report as one self-contained HTML file: the
// summary, its tables and the plots, inlined as PNG data URIs.
func WriteHTML(w io.Writer, s *Summary, plots []Plot) error {
	t, err := template.New("report").Parse(reportTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, htmlModel(s, plots))
}

func htmlModel(s *Summary, plots []Plot) htmlPage {
	pg := htmlPage{Title: "gpuplan report: " + s.Scenario.Name, Header: append(header(s), clockLine(s)...)}
	pg.KPIs = htmlKPIs(s)
	for _, p := range plots {
		if p.Name == "compare" {
			pg.LeadPlots = append(pg.LeadPlots, htmlPlot{Name: p.Name, Title: p.Title,
				PNG: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(p.PNG))})
			continue
		}
		pg.Plots = append(pg.Plots, htmlPlot{Name: p.Name, Title: p.Title,
			PNG: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(p.PNG))})
	}
	add := func(sec htmlSection) { pg.Sections = append(pg.Sections, sec) }
	add(htmlSection{Title: "GPU supply and allocation", Tables: []htmlTable{{
		Header: []string{"pool", "instance", "GPU", "nodes", "GPUs", "GPU-h supplied", "GPU-h allocated", "GPU-h idle", "allocation"}, Rows: poolRows(s)}}})
	var outcomes [][]string
	for _, o := range outcomeOrder(s) {
		outcomes = append(outcomes, []string{o, fmt.Sprint(s.Jobs.ByOutcome[o])})
	}
	outcomes = append(outcomes, []string{"total", fmt.Sprint(s.Jobs.Total)})
	jobs := htmlSection{Title: "Jobs", Tables: []htmlTable{
		{Header: []string{"outcome", "jobs"}, Rows: outcomes},
		{Header: []string{"", "jobs", "mean", "p50", "p95", "p99", "max"}, Rows: statRows("queue wait (started jobs)", "completion time (completed jobs)", s)},
		{Caption: "Queues", Header: []string{"queue", "jobs", "completed", "GPU-h", "mean wait", "p95 wait", "p50 JCT", "p95 JCT"}, Rows: queueRows(s)},
	}, Notes: []string{fmt.Sprintf("%d jobs ask for GPUs; %d pods in all.", s.Jobs.GPUJobs, s.Jobs.Pods)}}
	if f := s.Fragmentation; f != nil {
		jobs.Notes = append(jobs.Notes, fmt.Sprintf("Fragmented GPUs (FGD measure): mean %.1f, max %.1f.", f.MeanFragGPUs, f.MaxFragGPUs))
	}
	if t := s.TopologySlots; t != nil {
		jobs.Notes = append(jobs.Notes, slotsLine(t))
	}
	if servicesOnly(s) {
		jobs = htmlSection{Title: "Jobs", Intro: "None: inference services only."}
	}
	add(jobs)
	if len(s.Services) > 0 {
		sec := htmlSection{Title: "Inference services", Intro: "Each service's requests, latency against its SLO, replicas and cold starts; its plots show replicas held and ready against the load, and the p95 latency of each interval against the SLO.",
			Tables: []htmlTable{{Header: serviceHeaderFor(s), Rows: serviceRows(s)}}, Notes: []string{servicesNote}}
		if hasLLM(s) {
			lat, eng := llmTables(s)
			sec.Tables = append(sec.Tables, htmlTable{Caption: "LLM services: token latencies, throughput and cost", Header: lat[0], Rows: lat[1:]},
				htmlTable{Caption: "LLM services: end to end, KV cache and tokens served", Header: eng[0], Rows: eng[1:]})
			sec.Notes = append(sec.Notes, llmServicesNote)
			if pd := llmDisaggTable(s); pd != nil {
				sec.Tables = append(sec.Tables, htmlTable{Caption: "LLM services: prefill and decode pools", Header: pd[0], Rows: pd[1:]})
				sec.Notes = append(sec.Notes, llmDisaggNote)
			}
		}
		add(sec)
	}
	if len(s.PendingReasons) > 0 || len(s.PendingAtEnd) > 0 || len(s.Unschedulable) > 0 {
		sec := htmlSection{Title: "Why jobs waited", Intro: "The first reason the scheduler gave for each job that could not start on arrival, and the diagnoses of jobs left waiting."}
		if len(s.PendingReasons) > 0 {
			sec.Tables = append(sec.Tables, htmlTable{Header: []string{"first reason", "jobs"}, Rows: reasonRows(s.PendingReasons, 20)})
		}
		if len(s.PendingAtEnd) > 0 {
			sec.Tables = append(sec.Tables, htmlTable{Caption: "Still pending at the end", Header: []string{"diagnosis", "jobs"}, Rows: reasonRows(s.PendingAtEnd, 20)})
		}
		if len(s.Unschedulable) > 0 {
			sec.Tables = append(sec.Tables, htmlTable{Caption: "Never schedulable", Header: []string{"diagnosis", "jobs"}, Rows: reasonRows(s.Unschedulable, 20)})
		}
		add(sec)
	}
	if len(s.Admission) > 0 {
		add(htmlSection{Title: "Admission (Kueue)", Tables: []htmlTable{{Header: admissionHeader(), Rows: admissionRows(s.Admission)}},
			Notes: admissionNotes(s)})
	}
	if len(s.Capacity) > 0 {
		add(supplySection(s))
	}
	if c := s.Cost; c != nil {
		add(costSection(s, c))
	}
	if sc := s.SpotVsOnDemand; sc != nil {
		add(htmlSection{Title: "Spot against on-demand", Intro: "The same run with every spot node bought on-demand instead (no spot interruptions; node failures kept).",
			Tables: []htmlTable{spotHTML(s, sc), {Caption: "From the all-on-demand bill to the spot bill", Header: []string{"step", "change", "running total"}, Rows: waterfallRows(sc.Waterfall)}, {Caption: "Each team's showback with spot and all on-demand", Header: teamSpotHeader(), Rows: teamSpotRows(sc)}},
			Notes:  nonEmpty(sameWorkText(sc), pairedText(sc.Paired), jobsOnly(s, censoredNote))})
	}
	for i := range s.SpotSensitivity {
		c := &s.SpotSensitivity[i]
		add(htmlSection{Title: "Spot savings against the interruption rate: " + c.Run,
			Intro:  "What spot saves for the same completed work, against the same workload all on-demand, when every spot node is interrupted at each mean time between interruptions.",
			Tables: []htmlTable{curveHTML(s, c), {Caption: "From the all-on-demand bill to this run's bill", Header: []string{"step", "change", "running total"}, Rows: waterfallRows(c.Waterfall)}},
			Notes:  []string{spotCurveText(c)}})
	}
	if len(s.Training) > 0 {
		add(htmlSection{Title: "Distributed training", Intro: "Each training job's step: compute plus the all-reduce of its gradients, limited by the fabric shown.",
			Tables: []htmlTable{{Header: trainingHeader(), Rows: trainingRows(s)}}})
	}
	if len(s.Variants) > 0 {
		// The page opens with the comparison.
		pg.Lead = append(pg.Lead, variantsSection(s))
	}
	sched := htmlSection{Title: "Scheduler", Intro: "Queue policy " + queueText(s.Scheduler) + "."}
	points := make([]string, 0, len(s.Scheduler.Plugins))
	for k := range s.Scheduler.Plugins {
		points = append(points, k)
	}
	sort.Strings(points)
	for _, k := range points {
		sched.Notes = append(sched.Notes, k+": "+strings.Join(s.Scheduler.Plugins[k], ", "))
	}
	add(sched)
	if len(s.Assumptions) > 0 {
		add(htmlSection{Title: "Assumptions", Notes: s.Assumptions})
	}
	e := s.Engine
	pg.Engine = fmt.Sprintf("Engine: %d events, %d scheduling passes, %d placement attempts (%d skipped as dominated).", e.Events, e.Passes, e.Attempts, e.Skipped)
	return pg
}

// htmlKPIs are the page's headline figures: allocation, jobs, wait and
// completion time (allocation alone for services only), each service's
// latency or SLO, and the bill.
func htmlKPIs(s *Summary) []htmlKPI {
	completed := s.Jobs.ByOutcome["completed"]
	kpis := []htmlKPI{
		{"GPU allocation", pct(s.Cluster.Allocation), fmt.Sprintf("%.0f of %.0f GPU-hours", s.Cluster.GPUHoursAllocated, s.Cluster.GPUHoursSupplied)},
		{"jobs completed", fmt.Sprint(completed), fmt.Sprintf("of %d", s.Jobs.Total)},
		{"p95 queue wait", Human(s.QueueWait.P95), "mean " + Human(s.QueueWait.Mean)},
		{"p95 completion time", Human(s.JCT.P95), "p50 " + Human(s.JCT.P50)},
	}
	if servicesOnly(s) {
		kpis = kpis[:1]
	}
	for i, v := range s.Services {
		if i == maxServiceKPIs {
			break
		}
		if v.SLOMs > 0 {
			kpis = append(kpis, htmlKPI{v.Name + " within SLO", pct(v.SLOAttainment), fmt.Sprintf("p95 %s against %s", msText2(v.P95Ms), msText2(v.SLOMs))})
		} else {
			kpis = append(kpis, htmlKPI{v.Name + " p95 latency", msText2(v.P95Ms), "p99 " + msText2(v.P99Ms)})
		}
	}
	if c := s.Cost; c != nil {
		detail := fmt.Sprintf("%s per useful GPU-hour", money(c.CostPerUsefulGPUHour))
		if len(c.ByWorkload) == 2 {
			// With services the bill is not all training's.
			detail = fmt.Sprintf("training %s, inference %s", money(c.ByWorkload[0].Total), money(c.ByWorkload[1].Total))
		}
		if servicesOnly(s) {
			detail = "no jobs: the whole bill is inference's"
			if n := len(c.ByWorkload); n > 0 && c.ByWorkload[n-1].PerMillionRequests > 0 {
				detail = money(c.ByWorkload[n-1].PerMillionRequests) + " a million requests served"
			}
		}
		if tr, inf := bySideKPI(s); tr != "" {
			// Jobs and services: two figures, each side's share over its
			// own work, and no single one.
			detail = fmt.Sprintf("training %s (%s), inference %s (%s)", money(c.ByWorkload[0].Total), tr, money(c.ByWorkload[1].Total), inf)
		}
		kpis = append(kpis,
			htmlKPI{"cost", money(c.Total), detail},
			htmlKPI{"idle cost", money(c.Idle), fmt.Sprintf("%.1f%% of the bill", 100*safeDiv(c.Idle, c.Total))})
		if c.LostCost > 0 {
			kpis = append(kpis, htmlKPI{"lost to disruptions", money(c.LostCost), fmt.Sprintf("%.1f GPU-hours", c.LostGPUHours)})
		}
	}
	return kpis
}

// supplySection is the node supply: each pool's nodes over the run, its
// interruption and failure processes, and the work disruptions cost.
func supplySection(s *Summary) htmlSection {
	sec := htmlSection{Title: "Node supply", Tables: []htmlTable{{Header: []string{"pool", "capacity", "initial nodes", "max nodes", "node-h", "launched", "interrupted", "failed", "scaled in", "spot fallbacks"}, Rows: capacityRows(s)}}}
	for _, c := range s.Capacity {
		if c.Interruptions != "" {
			sec.Notes = append(sec.Notes, c.Pool+" interruptions: "+c.Interruptions)
		}
		if c.Failures != "" {
			sec.Notes = append(sec.Notes, c.Pool+" failures: "+c.Failures)
		}
		if t := deallocatedText(s, c); t != "" {
			sec.Notes = append(sec.Notes, c.Pool+" deallocated: "+t)
		}
	}
	if t := replicaDisruptions(s); t != "" {
		sec.Notes = append(sec.Notes, t)
	} else if d := s.Disruptions; d != nil {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d jobs stopped by lost nodes or preemption%s (%d restarts); %d failed (past a backoff limit or Volcano maxRetry, or by a Volcano policy); %.1f GPU-hours lost, %.1f spent writing checkpoints.",
			d.JobsDisrupted, stopsByCause(d), d.Restarts, d.JobsFailed, d.LostGPUHours, d.CheckpointGPUHours))
	}
	return sec
}

// costSection is the bill: by pool, capacity type, instance type, queue,
// workload and group, the price bases, the showback and the GPU-hour
// prices.
func costSection(s *Summary, c *CostSummary) htmlSection {
	sec := htmlSection{Title: "Cost (USD)", Tables: []htmlTable{
		{Header: []string{"pool", "capacity", "$/node-h", "node-h", "cost", "allocated", "idle", "idle GPU", "lost to disruptions"}, Rows: costRows(c)},
		{Caption: "By capacity type", Header: []string{"capacity", "GPU-h", "cost", "idle", "lost"}, Rows: costLineRows(c.ByCapacityType)},
		{Caption: "By instance type", Header: []string{"instance", "GPU-h", "cost", "idle", "lost"}, Rows: costLineRows(c.ByInstanceType)},
		{Caption: "By queue (what its pods paid)", Header: []string{"queue", "GPU-h", "cost", "idle", "lost"}, Rows: costLineRows(c.ByQueue)},
	}, Notes: nonEmpty(usefulText(s))}
	if len(c.ByWorkload) > 0 && !servicesOnly(s) {
		sec.Tables = append(sec.Tables, htmlTable{Caption: "Training and inference, the whole bill", Header: workloadHeader(), Rows: workloadRows(c.ByWorkload)})
		sec.Notes = append(sec.Notes, workloadNote)
	}
	if len(c.ByGroup) > 0 {
		sec.Tables = append(sec.Tables, htmlTable{Caption: "By NodePool or node group", Header: []string{"group", "GPU-h", "cost", "idle", "lost"}, Rows: costLineRows(c.ByGroup)})
	}
	for _, p := range c.ByPool {
		if p.PriceBasis != "" {
			sec.Notes = append(sec.Notes, p.Name+": "+p.PriceBasis)
		}
	}
	if len(c.Unpriced) > 0 {
		sec.Notes = append(sec.Notes, "No price, not counted: "+strings.Join(c.Unpriced, ", "))
	}
	sec.Notes = append(sec.Notes, c.Model+".")
	if sb := c.Showback; sb != nil && len(sb.Teams) > 0 {
		sec.Tables = append(sec.Tables, htmlTable{Caption: "Showback by team (queue), the whole bill", Header: showbackHeader(sb), Rows: showbackRows(sb)})
		sec.Notes = append(sec.Notes, showbackText(sb))
	}
	if len(c.GPURates) > 0 {
		sec.Tables = append(sec.Tables, htmlTable{Caption: "Effective GPU-hour price", Header: gpuRateHeader(), Rows: gpuRateRows(c)})
	}
	return sec
}

// variantsSection is the comparison the page opens with when the
// scenario has variants: each run, like for like against the scenario as
// given, the services in each, and the spot break-evens.
func variantsSection(s *Summary) htmlSection {
	sec := htmlSection{Title: "What-if variants compared", Intro: "The scenario as given and each of its variants, same seed and workload. The rest of the page is the scenario as given.",
		Tables: []htmlTable{variantHTML(s)},
		Notes:  []string{runsNote(s)}}
	if p := pairedHTML(s); len(p.Rows) > 0 || !servicesOnly(s) {
		sec.Tables = append(sec.Tables, p)
	}
	if rows := variantServiceRows(s.Variants); len(rows) > 0 {
		sec.Tables = append(sec.Tables, htmlTable{Caption: "Inference services in each run", Header: variantServiceHeader(), Rows: rows})
	}
	if rows := variantLLMRows(s.Variants); len(rows) > 0 {
		sec.Tables = append(sec.Tables, htmlTable{Caption: "LLM services in each run", Header: variantLLMHeader(), Rows: rows})
	}
	for i := range s.SpotSensitivity {
		c := &s.SpotSensitivity[i]
		sec.Notes = append(sec.Notes, "Spot break-even: "+spotCurveText(c))
	}
	return sec
}

// maxServiceKPIs is how many services get a headline figure.
const maxServiceKPIs = 4

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func nonEmpty(xs ...string) []string {
	var out []string
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// spotHTML, curveHTML, variantHTML and pairedHTML are the run
// comparisons as HTML tables, fitted to s (servicesonly.go).
func spotHTML(s *Summary, sc *SpotComparison) htmlTable {
	h, rows := spotTable(s, sc)
	return htmlTable{Header: h, Rows: rows}
}

func curveHTML(s *Summary, c *SpotCurve) htmlTable {
	h, rows := spotCurveTable(s, c)
	return htmlTable{Header: h, Rows: rows}
}

func variantHTML(s *Summary) htmlTable {
	h, rows := variantTable(s)
	return htmlTable{Header: h, Rows: rows}
}

func pairedHTML(s *Summary) htmlTable {
	h, rows := pairedTable(s)
	caption := "Like for like against the scenario as given: jobs both runs completed, cost for the same work"
	if servicesOnly(s) {
		caption = "Like for like against the scenario as given: the bill for the same requests served"
	}
	return htmlTable{Caption: caption, Header: h, Rows: rows}
}

// jobsOnly is note, or "" in a run of services alone.
func jobsOnly(s *Summary, note string) string {
	if servicesOnly(s) {
		return ""
	}
	return note
}
