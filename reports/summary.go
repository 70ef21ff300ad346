package reports

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// SchemaVersion is the version of the summary.json layout. It changes
// when a field is removed or changes meaning; new fields may appear
// without a bump.
const SchemaVersion = 1

// Meta describes the run for the report header.
type Meta struct {
	Scenario    string
	File        string
	Description string
	Workload    string
	Assumptions []string
}

// Summary is the content of summary.json.
type Summary struct {
	SchemaVersion    int           `json:"schemaVersion"`
	Scenario         ScenarioInfo  `json:"scenario"`
	SimulatedSeconds float64       `json:"simulatedSeconds"`
	Cluster          PoolSummary   `json:"cluster"`
	Pools            []PoolSummary `json:"pools"`
	Jobs             JobCounts     `json:"jobs"`
	QueueWait        Stats         `json:"queueWait"`
	JCT              Stats         `json:"jct"`
	Queues           []QueueStats  `json:"queues"`
	PendingReasons   []ReasonCount `json:"pendingReasons"`
	Unschedulable    []ReasonCount `json:"unschedulable"`
	PendingAtEnd     []ReasonCount `json:"pendingAtEnd"`
	// OOMKilled counts jobs that overfilled a time-sliced GPU's memory.
	OOMKilled int `json:"oomKilled"`
	// Fragmentation, when sampled: the cluster's fragmented GPUs (FGD
	// measure) over the timeline's interval ends.
	Fragmentation *FragSummary  `json:"fragmentation,omitempty"`
	Scheduler     SchedulerInfo `json:"scheduler"`
	Assumptions   []string      `json:"assumptions"`
	Engine        EngineStats   `json:"engine"`
}

// EngineStats counts the work the simulation did.
type EngineStats struct {
	Events   uint64 `json:"events"`
	Passes   uint64 `json:"schedulingPasses"`
	Attempts uint64 `json:"placementAttempts"`
	Skipped  uint64 `json:"attemptsSkipped"`
	// Relayouts counts MIG re-layouts of idle GPUs.
	Relayouts uint64 `json:"migRelayouts"`
}

// ScenarioInfo names what was run.
type ScenarioInfo struct {
	Name           string  `json:"name"`
	File           string  `json:"file,omitempty"`
	Description    string  `json:"description,omitempty"`
	Workload       string  `json:"workload"`
	Seed           uint64  `json:"seed"`
	HorizonSeconds float64 `json:"horizonSeconds,omitempty"`
	Truncated      bool    `json:"truncatedAtHorizon,omitempty"`
}

// PoolSummary is a pool's (or the whole cluster's) GPU ledger.
type PoolSummary struct {
	Name              string  `json:"name"`
	InstanceType      string  `json:"instanceType,omitempty"`
	GPUModel          string  `json:"gpuModel,omitempty"`
	Nodes             int     `json:"nodes"`
	GPUsPerNode       int32   `json:"gpusPerNode,omitempty"`
	GPUs              int     `json:"gpus"`
	GPUHoursSupplied  float64 `json:"gpuHoursSupplied"`
	GPUHoursAllocated float64 `json:"gpuHoursAllocated"`
	GPUHoursIdle      float64 `json:"gpuHoursIdle"`
	// Allocation is allocated / supplied GPU-hours (0..1).
	Allocation float64 `json:"allocation"`
}

// JobCounts counts jobs by outcome.
type JobCounts struct {
	Total     int            `json:"total"`
	Pods      int64          `json:"pods"`
	GPUJobs   int            `json:"gpuJobs"`
	ByOutcome map[string]int `json:"byOutcome"`
}

// Stats summarises a sample of durations, in seconds.
type Stats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"meanSeconds"`
	P50   float64 `json:"p50Seconds"`
	P95   float64 `json:"p95Seconds"`
	P99   float64 `json:"p99Seconds"`
	Max   float64 `json:"maxSeconds"`
}

// QueueStats is one queue's (tenant's) share of the results.
type QueueStats struct {
	Name              string  `json:"name"`
	Jobs              int     `json:"jobs"`
	Completed         int     `json:"completed"`
	GPUHoursAllocated float64 `json:"gpuHoursAllocated"`
	QueueWait         Stats   `json:"queueWait"`
	JCT               Stats   `json:"jct"`
}

// FragSummary summarises the sampled fragmentation.
type FragSummary struct {
	MeanFragGPUs float64 `json:"meanFragGPUs"`
	MaxFragGPUs  float64 `json:"maxFragGPUs"`
}

// ReasonCount is how many jobs a reason applied to.
type ReasonCount struct {
	Reason string `json:"reason"`
	Jobs   int    `json:"jobs"`
}

// SchedulerInfo records the scheduler profile and queue policy used.
type SchedulerInfo struct {
	Plugins       map[string][]string `json:"plugins"`
	Policy        string              `json:"policy"`
	Backfill      bool                `json:"backfill"`
	BackfillDepth int                 `json:"backfillDepth,omitempty"`
}

const milliGPUHour = float64(cluster.MilliGPU) * float64(sim.Hour)

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func gpuHours(milliMs int64) float64 { return round(float64(milliMs)/milliGPUHour, 3) }

func secs(ms sim.Time) float64 { return float64(ms) / 1000 }

// Describe computes Stats of durations given in milliseconds (sorted in place).
func Describe(ms []float64) Stats {
	if len(ms) == 0 {
		return Stats{}
	}
	sort.Float64s(ms)
	q := func(p float64) float64 { return round(stat.Quantile(p, stat.Empirical, ms, nil)/1000, 3) }
	return Stats{
		Count: len(ms),
		Mean:  round(stat.Mean(ms, nil)/1000, 3),
		P50:   q(0.50),
		P95:   q(0.95),
		P99:   q(0.99),
		Max:   round(ms[len(ms)-1]/1000, 3),
	}
}

func ledger(name string, supplied, allocated int64) PoolSummary {
	p := PoolSummary{
		Name:              name,
		GPUHoursSupplied:  gpuHours(supplied),
		GPUHoursAllocated: gpuHours(allocated),
		GPUHoursIdle:      gpuHours(supplied - allocated),
	}
	if supplied > 0 {
		p.Allocation = round(float64(allocated)/float64(supplied), 4)
	}
	return p
}

func countReasons(m map[string]int) []ReasonCount {
	out := make([]ReasonCount, 0, len(m))
	for k, v := range m {
		out = append(out, ReasonCount{Reason: k, Jobs: v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Jobs != out[j].Jobs {
			return out[i].Jobs > out[j].Jobs
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// Summarize computes the summary of a result.
func Summarize(res *sim.Result, meta Meta) *Summary {
	s := &Summary{
		SchemaVersion: SchemaVersion,
		Scenario: ScenarioInfo{
			Name: meta.Scenario, File: meta.File, Description: meta.Description,
			Workload: meta.Workload, Seed: res.Seed, HorizonSeconds: secs(res.Horizon), Truncated: res.Truncated,
		},
		SimulatedSeconds: secs(res.End),
		Assumptions:      append([]string{}, meta.Assumptions...),
		Engine: EngineStats{Events: res.Stats.Events, Passes: res.Stats.Passes, Attempts: res.Stats.Attempts,
			Skipped: res.Stats.Skipped, Relayouts: res.Stats.Relayouts},
		Scheduler: SchedulerInfo{
			Plugins: res.Profile, Policy: "FIFO",
			Backfill: res.Queue.Backfill, BackfillDepth: res.Queue.BackfillDepth,
		},
	}
	var sup, alloc int64
	nodes, gpus := 0, 0
	for _, p := range res.Pools {
		ps := ledger(p.Spec.Name, p.SuppliedMilliMs, p.AllocatedMilliMs)
		ps.InstanceType, ps.GPUModel = p.Spec.InstanceType, p.Spec.GPUModel
		ps.Nodes, ps.GPUsPerNode = p.Spec.Nodes, p.Spec.GPUsPerNode
		ps.GPUs = p.Spec.Nodes * int(p.Spec.GPUsPerNode)
		s.Pools = append(s.Pools, ps)
		sup += p.SuppliedMilliMs
		alloc += p.AllocatedMilliMs
		nodes += ps.Nodes
		gpus += ps.GPUs
	}
	s.Cluster = ledger("cluster", sup, alloc)
	s.Cluster.Nodes, s.Cluster.GPUs = nodes, gpus

	s.Jobs.ByOutcome = map[string]int{}
	for _, o := range sim.Outcomes() {
		s.Jobs.ByOutcome[o.String()] = 0
	}
	type qacc struct {
		q         QueueStats
		wait, jct []float64
		held      int64
	}
	queues := map[string]*qacc{}
	var waits, jcts []float64
	waited, unsched, pending := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range res.Jobs {
		j := &res.Jobs[i]
		s.Jobs.Total++
		s.Jobs.Pods += int64(j.Replicas)
		if j.Pod.MilliGPUs() > 0 {
			s.Jobs.GPUJobs++
		}
		s.Jobs.ByOutcome[j.Outcome.String()]++
		qa := queues[j.Queue]
		if qa == nil {
			qa = &qacc{q: QueueStats{Name: j.Queue}}
			queues[j.Queue] = qa
		}
		qa.q.Jobs++
		qa.held += j.HeldMilliMs
		if w := j.Wait(); w >= 0 {
			waits = append(waits, float64(w))
			qa.wait = append(qa.wait, float64(w))
		}
		if j.Outcome == sim.Completed {
			qa.q.Completed++
			jcts = append(jcts, float64(j.JCT()))
			qa.jct = append(qa.jct, float64(j.JCT()))
		}
		if j.Reason >= 0 {
			waited[res.Reason(j.Reason)]++
		}
		switch j.Outcome {
		case sim.Unschedulable:
			unsched[j.Diagnosis]++
		case sim.Pending:
			pending[j.Diagnosis]++
		case sim.OOMKilled:
			s.OOMKilled++
		}
	}
	s.QueueWait = Describe(waits)
	s.JCT = Describe(jcts)
	names := make([]string, 0, len(queues))
	for k := range queues {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		qa := queues[n]
		qa.q.QueueWait = Describe(qa.wait)
		qa.q.JCT = Describe(qa.jct)
		qa.q.GPUHoursAllocated = gpuHours(qa.held)
		s.Queues = append(s.Queues, qa.q)
	}
	if fm := res.Timeline.FragMilli; fm != nil && len(res.Pools) > 0 && len(fm[0]) > 0 {
		fs := &FragSummary{}
		for i := range fm[0] {
			var sum int64
			for p := range fm {
				sum += fm[p][i]
			}
			g := float64(sum) / cluster.MilliGPU
			fs.MeanFragGPUs += g / float64(len(fm[0]))
			fs.MaxFragGPUs = max(fs.MaxFragGPUs, g)
		}
		fs.MeanFragGPUs, fs.MaxFragGPUs = round(fs.MeanFragGPUs, 3), round(fs.MaxFragGPUs, 3)
		s.Fragmentation = fs
	}
	s.PendingReasons = countReasons(waited)
	s.Unschedulable = countReasons(unsched)
	s.PendingAtEnd = countReasons(pending)
	return s
}
