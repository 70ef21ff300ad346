package reports

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"gpuplan.dev/gpuplan/sim"
)

// ServiceSummary is one inference service's record over the run: its
// requests, their latency against the SLO, the replicas it held and what
// they cost. Requests are the serving model's (fluid) counts, so they may
// be fractional.
type ServiceSummary struct {
	Name     string `json:"name"`
	Queue    string `json:"queue,omitempty"`
	Priority int32  `json:"priority"`
	// Requests arrived, served and dropped (queue limit, timeout); at the
	// end of the run the rest were still waiting.
	RequestsArrived float64 `json:"requestsArrived"`
	RequestsServed  float64 `json:"requestsServed"`
	RequestsDropped float64 `json:"requestsDropped"`
	// Latency quantiles of served requests: queueing, batching wait and
	// service, in milliseconds.
	P50Ms float64 `json:"p50Ms"`
	P95Ms float64 `json:"p95Ms"`
	P99Ms float64 `json:"p99Ms"`
	// SLOMs is the latency target (0: none); SLOAttainment the share of
	// arrived requests served within it.
	SLOMs         float64 `json:"sloMs,omitempty"`
	SLOAttainment float64 `json:"sloAttainment,omitempty"`
	// ReplicaHours are replica pods held (pending ones included),
	// ReadyHours those serving; GPUHours the GPU time the replica pods
	// held (milli-GPU shares counted as their fraction).
	ReplicaHours float64 `json:"replicaHours"`
	ReadyHours   float64 `json:"readyHours"`
	GPUHours     float64 `json:"gpuHours"`
	// MeanReplicas is ReplicaHours over the run's length; PeakReplicas
	// and PeakGPUs the highest timeline-bucket means.
	MeanReplicas float64 `json:"meanReplicas"`
	PeakReplicas float64 `json:"peakReplicas"`
	PeakGPUs     float64 `json:"peakGPUs"`
	// ColdStarts counts replicas that became ready; MeanColdStartSeconds
	// is their mean time from creation to ready.
	ColdStarts           int     `json:"coldStarts"`
	MeanColdStartSeconds float64 `json:"meanColdStartSeconds"`
	// Preempted counts replica pods evicted by the scheduler or admission;
	// Disrupted those lost with their node.
	Preempted int `json:"preempted"`
	Disrupted int `json:"disrupted"`
	// Cost is what the replicas cost, when the run is priced.
	Cost *ServiceCost `json:"cost,omitempty"`
	// LLM holds an LLM service's token figures (llmservices.go).
	LLM *LLMServiceSummary `json:"llm,omitempty"`
}

// ServiceCost prices a service's replicas as jobs are priced: the
// resource time its pods held at each pool's split of its node price.
type ServiceCost struct {
	// Cost is what its pods paid; GPUCost the GPU part of it.
	Cost    float64 `json:"cost"`
	GPUCost float64 `json:"gpuCost"`
	// PerMillionRequests is Cost over the requests served, per million
	// (0 when none was served).
	PerMillionRequests float64 `json:"costPerMillionRequests"`
	// Showback adds the service's share of its team's idle cost (the
	// showback's rule: its cost times its team's showback over what the
	// team's pods paid), and ShowbackPerMillionRequests divides that.
	Showback                   float64 `json:"showback,omitempty"`
	ShowbackPerMillionRequests float64 `json:"showbackPerMillionRequests,omitempty"`
}

// serviceCosts prices each service's replica pods from their ledger:
// what they paid, its GPU part and what they lost.
func serviceCosts(res *sim.Result, pr *Pricing) (cost, gpu, lost []float64) {
	rates := allRates(res, pr)
	n := len(res.Services)
	cost, gpu, lost = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range res.Services {
		for _, u := range res.Services[i].Usage {
			r := rates[u.Pool]
			cost[i] += r.price(u.Held)
			gpu[i] += r[sim.ResGPU] * float64(u.Held[sim.ResGPU])
			lost[i] += r.price(u.Lost)
		}
	}
	return cost, gpu, lost
}

// perMillion is cost over requests, per million requests.
func perMillion(cost, requests float64) float64 {
	if requests <= 0 {
		return 0
	}
	return cost / requests * 1e6
}

// summarizeServices fills the services section, with costs when the run
// is priced (s.Cost set).
func (s *Summary) summarizeServices(res *sim.Result, pr *Pricing) {
	if len(res.Services) == 0 {
		return
	}
	var cost, gpu []float64
	factor := map[string]float64{}
	if s.Cost != nil {
		cost, gpu, _ = serviceCosts(res, pr)
		if sb := s.Cost.Showback; sb != nil {
			for _, t := range sb.Teams {
				if t.Allocated > 0 {
					factor[t.Team] = t.Total / t.Allocated
				}
			}
		}
	}
	const gpuMs = float64(sim.Hour) * 1000
	for i := range res.Services {
		r := &res.Services[i]
		l := ServiceSummary{Name: r.Name, Queue: r.Queue, Priority: r.Priority,
			RequestsArrived: round(r.Arrived, 1), RequestsServed: round(r.Served, 1), RequestsDropped: round(r.Dropped, 1),
			P50Ms: round(r.P50Ms, 2), P95Ms: round(r.P95Ms, 2), P99Ms: round(r.P99Ms, 2),
			SLOMs: r.SLOMs, ReplicaHours: round(r.ReplicaHours, 4), ReadyHours: round(r.ReadyHours, 4),
			ColdStarts: r.ColdStarts, MeanColdStartSeconds: round(r.ColdStartMs/1000, 3),
			Preempted: r.Preempted, Disrupted: r.Disrupted}
		if r.SLOMs > 0 {
			l.SLOAttainment = round(r.SLOAttainment, 4)
		}
		var held int64
		for _, u := range r.Usage {
			held += u.Held[sim.ResGPU]
		}
		l.GPUHours = round(float64(held)/gpuMs, 4)
		if res.End > 0 {
			l.MeanReplicas = round(r.ReplicaHours/(float64(res.End)/float64(sim.Hour)), 3)
		}
		for _, p := range r.Timeline {
			l.PeakReplicas = math.Max(l.PeakReplicas, p.Replicas)
			l.PeakGPUs = math.Max(l.PeakGPUs, p.GPUs)
		}
		l.PeakReplicas, l.PeakGPUs = round(l.PeakReplicas, 3), round(l.PeakGPUs, 3)
		if cost != nil {
			c := &ServiceCost{Cost: round(cost[i], 4), GPUCost: round(gpu[i], 4), PerMillionRequests: round(perMillion(cost[i], r.Served), 4)}
			if f, ok := factor[r.Queue]; ok {
				c.Showback = round(cost[i]*f, 4)
				c.ShowbackPerMillionRequests = round(perMillion(cost[i]*f, r.Served), 4)
			}
			l.Cost = c
		}
		if cost != nil {
			l.LLM = llmSummary(r, l.GPUHours, cost[i])
		} else {
			l.LLM = llmSummary(r, l.GPUHours, -1)
		}
		s.Services = append(s.Services, l)
	}
}

// ServiceFigures are one service's headline figures in a run, for
// comparisons (variants, gpuplan compare).
type ServiceFigures struct {
	Name           string  `json:"name"`
	P95Ms          float64 `json:"p95Ms"`
	SLOAttainment  float64 `json:"sloAttainment,omitempty"`
	Dropped        float64 `json:"requestsDropped"`
	ReplicaHours   float64 `json:"replicaHours"`
	GPUHours       float64 `json:"gpuHours"`
	ColdStarts     int     `json:"coldStarts"`
	CostPerMillion float64 `json:"costPerMillionRequests,omitempty"`
	// LLM is an LLM service's token figures (nil for a batch server).
	LLM *LLMFigures `json:"llm,omitempty"`
}

// variantServiceHeader and variantServiceRows set each run's services
// side by side: one row per run and service.
func variantServiceHeader() []string {
	return []string{"run", "service", "p95", "within SLO", "dropped", "replica-h", "GPU-h", "cold starts", "$/M requests"}
}

func variantServiceRows(vs []RunFigures) [][]string {
	var rows [][]any
	for _, f := range vs {
		for _, v := range f.Services {
			var att, cost any = "-", "-"
			if v.SLOAttainment > 0 {
				att = pct(v.SLOAttainment)
			}
			if v.CostPerMillion > 0 {
				cost = usd(v.CostPerMillion)
			}
			rows = append(rows, []any{f.Name, v.Name, millis(v.P95Ms), att, requests(v.Dropped), fmt.Sprintf("%.1f", v.ReplicaHours),
				fmt.Sprintf("%.1f", v.GPUHours), fmt.Sprint(v.ColdStarts), cost})
		}
	}
	return columns(rows)
}

// WorkloadCost is one side of the bill when a run has services: what
// training jobs' pods and inference services' replicas paid, and their
// shares of the idle cost by the showback's rule.
type WorkloadCost struct {
	// Kind is "training" (the workload's jobs) or "inference" (the
	// services' replicas).
	Kind     string  `json:"kind"`
	GPUHours float64 `json:"gpuHours"`
	// GPUCost is the GPU part of Allocated, what the pods paid.
	GPUCost   float64 `json:"gpuCost"`
	Allocated float64 `json:"allocated"`
	LostCost  float64 `json:"lostCost"`
	// IdleShare is the kind's part of its teams' idle shares (each team's
	// share split between its jobs and replicas in proportion to what
	// they paid); Total is Allocated plus IdleShare.
	IdleShare float64 `json:"idleShare"`
	Total     float64 `json:"total"`
	// BillShare is Total over the whole bill.
	BillShare float64 `json:"billShare"`
	// PerUsefulGPUHour is, for training, Total over the GPU-hours of work
	// its completed jobs needed (the bill's costPerUsefulGPUHour divides
	// the whole bill, inference included).
	PerUsefulGPUHour float64 `json:"costPerUsefulGPUHour,omitempty"`
	// RequestsServed and PerMillionRequests are, for inference, the
	// requests its services served and Total over them, per million:
	// what a million requests served cost, idle share included.
	RequestsServed     float64 `json:"requestsServed,omitempty"`
	PerMillionRequests float64 `json:"costPerMillionRequests,omitempty"`
}

// Workload kinds of the cost split.
const (
	KindTraining  = "training"
	KindInference = "inference"
)

// workloadSplit splits the bill between training and inference. jobAlloc
// and svcAlloc are what each queue's jobs and replicas paid.
func workloadSplit(cs *CostSummary, kinds *[2]WorkloadCost, jobAlloc, svcAlloc map[string]float64) []WorkloadCost {
	if sb := cs.Showback; sb != nil {
		for _, t := range sb.Teams {
			a := jobAlloc[t.Team] + svcAlloc[t.Team]
			if a <= 0 || t.IdleShare == 0 {
				continue
			}
			inf := t.IdleShare * svcAlloc[t.Team] / a
			kinds[1].IdleShare += inf
			kinds[0].IdleShare += t.IdleShare - inf
		}
	}
	out := make([]WorkloadCost, 2)
	for k := range kinds {
		w := kinds[k]
		w.Total = w.Allocated + w.IdleShare
		if cs.Total > 0 {
			w.BillShare = round(w.Total/cs.Total, 4)
		}
		if k == 0 && cs.UsefulGPUHours > 0 {
			w.PerUsefulGPUHour = round(w.Total/cs.UsefulGPUHours, 4)
		}
		if k == 1 {
			w.PerMillionRequests = round(perMillion(w.Total, w.RequestsServed), 4)
			w.RequestsServed = round(w.RequestsServed, 1)
		}
		w.GPUHours, w.GPUCost, w.Allocated, w.LostCost = round(w.GPUHours, 4), round(w.GPUCost, 4), round(w.Allocated, 4), round(w.LostCost, 4)
		w.IdleShare, w.Total = round(w.IdleShare, 4), round(w.Total, 4)
		out[k] = w
	}
	return out
}

func serviceHeader() []string {
	return []string{"service", "queue", "arrived", "served", "dropped", "p50", "p95", "p99", "SLO", "within SLO",
		"replica-h", "GPU-h", "peak replicas", "cold starts", "mean cold start", "preempted"}
}

// serviceRows are the services table's rows; with costs, two more
// columns (see serviceCostHeader).
func serviceRows(s *Summary) [][]string {
	var rows [][]any
	for _, v := range s.Services {
		var slo, att any = "-", "-"
		if v.SLOMs > 0 {
			slo, att = millis(v.SLOMs), pct(v.SLOAttainment)
		}
		var cold any = "-"
		if v.ColdStarts > 0 {
			cold = durSecs(v.MeanColdStartSeconds)
		}
		r := []any{v.Name, v.Queue, requests(v.RequestsArrived), requests(v.RequestsServed), requests(v.RequestsDropped),
			millis(v.P50Ms), millis(v.P95Ms), millis(v.P99Ms), slo, att,
			fmt.Sprintf("%.1f", v.ReplicaHours), fmt.Sprintf("%.1f", v.GPUHours), fmt.Sprintf("%.1f", v.PeakReplicas),
			fmt.Sprint(v.ColdStarts), cold, fmt.Sprint(v.Preempted + v.Disrupted)}
		if v.Cost != nil {
			r = append(r, usd(v.Cost.Cost), usd(v.Cost.PerMillionRequests))
		}
		rows = append(rows, r)
	}
	return columns(rows)
}

// servicesOnly says the run had inference services and no job: the job
// figures are left out of the terminal table, the headline figures and
// the plots.
func servicesOnly(s *Summary) bool { return s.Jobs.Total == 0 && len(s.Services) > 0 }

func hasServiceCost(s *Summary) bool { return len(s.Services) > 0 && s.Services[0].Cost != nil }

func serviceHeaderFor(s *Summary) []string {
	h := serviceHeader()
	if hasServiceCost(s) {
		h = append(h, "cost", "$/M requests")
	}
	return h
}

// requests writes a request count for people: 1234, 1.23M, 4.56B.
func requests(x float64) string {
	switch {
	case x < 1e4:
		return fmt.Sprintf("%.0f", x)
	case x < 1e6:
		return fmt.Sprintf("%.1fk", x/1e3)
	case x < 1e9:
		return fmt.Sprintf("%.2fM", x/1e6)
	}
	return fmt.Sprintf("%.2fB", x/1e9)
}

// msText2 writes a latency: 85.3 ms under a second, else seconds.
func msText2(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.1f ms", ms)
	}
	return Human(ms / 1000)
}

func workloadHeader() []string {
	return []string{"workload", "GPU-h", "GPU cost", "its pods paid", "share of idle", "total", "share of bill", "lost", "$/useful GPU-h", "$/M requests"}
}

func workloadRows(ws []WorkloadCost) [][]string {
	var rows [][]any
	for _, w := range ws {
		var useful, perM any = "-", "-"
		if w.PerUsefulGPUHour > 0 {
			useful = usd(w.PerUsefulGPUHour)
		}
		if w.PerMillionRequests > 0 {
			perM = usd(w.PerMillionRequests)
		}
		rows = append(rows, []any{w.Kind, fmt.Sprintf("%.1f", w.GPUHours), usd(w.GPUCost), usd(w.Allocated), usd(w.IdleShare),
			usd(w.Total), pct(w.BillShare), usd(w.LostCost), useful, perM})
	}
	return columns(rows)
}

// servicesNote says what the services table counts.
const servicesNote = "Requests and latency come from the fluid serving model (per scaler interval, not request by request); latency is queueing, batching wait and service. Within SLO is the share of arrived requests served within the target. Replica-hours count replica pods held, pending ones included; GPU-hours what they held. Preempted counts replica pods evicted or lost with their node. Replicas are not jobs: no job table or job figure counts them."

// workloadNote says how the bill is split.
const workloadNote = "Training is the workload's jobs, inference the services' replica pods, each priced by the resource time its pods held; each team's share of idle cost (the showback's rule) is split between its jobs and its replicas in proportion to what they paid. Training's cost per useful GPU-hour divides its total by its completed jobs' work, inference's cost per million requests its total by the requests its services served: these two, not the bill's cost per useful GPU-hour (the whole bill over training's work), are what comparisons of runs with both (variants, spot) set side by side."

// writeServicesTable writes the terminal's services block.
func writeServicesTable(w io.Writer, s *Summary) {
	if len(s.Services) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	h := []string{"SERVICE", "REQUESTS", "DROPPED", "P50", "P95", "P99", "WITHIN SLO", "REPLICA-H", "GPU-H", "PEAK", "COLD STARTS", "PREEMPTED"}
	if hasServiceCost(s) {
		h = append(h, "COST", "$/M REQ")
	}
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	for _, r := range serviceRows(s) {
		att := r[9]
		if r[8] != "-" {
			att += " of " + r[8]
		}
		cold := r[13]
		if r[14] != "-" {
			cold += " (" + r[14] + ")"
		}
		row := []string{r[0], r[2], r[4], r[5], r[6], r[7], att, r[10], r[11], r[12], cold, r[15]}
		fmt.Fprintln(tw, strings.Join(append(row, r[16:]...), "\t"))
	}
	tw.Flush()
	writeLLMTable(w, s)
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
