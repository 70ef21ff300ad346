package reports

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/stat"

	"gpuplan.dev/gpuplan/reports/focus"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
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
	// Pricing, when set, prices the run (cost section).
	Pricing *Pricing
	// Start is the wall-clock time of simulated time 0, for the metric
	// series' timestamps (zero: the scenarios' default).
	Start time.Time
}

// Summary is the content of summary.json.
type Summary struct {
	SchemaVersion    int           `json:"schemaVersion"`
	Scenario         ScenarioInfo  `json:"scenario"`
	SimulatedSeconds float64       `json:"simulatedSeconds"`
	Cluster          PoolSummary   `json:"cluster"`
	Pools            []PoolSummary `json:"pools"`
	// JobFigures: the jobs' outcomes, waits and completion times.
	JobFigures
	// Fragmentation, when sampled: the cluster's fragmented GPUs (FGD
	// measure) over the timeline's interval ends.
	Fragmentation *FragSummary `json:"fragmentation,omitempty"`
	// TopologySlots: the free GPUs that form a whole slot at each level
	// of the pools' topology (nil: no pool has one).
	TopologySlots *SlotsSummary `json:"topologySlots,omitempty"`
	Scheduler     SchedulerInfo `json:"scheduler"`
	// SupplyFigures: the nodes' comings and goings and what they cost
	// the jobs.
	SupplyFigures
	// MoneyFigures: the bill, and what spot saves.
	MoneyFigures
	// Admission is each Kueue ClusterQueue's record, with a policy.
	Admission []AdmissionLine `json:"admission,omitempty"`
	// FairSharing lists the fair-sharing preemption strategies when
	// Kueue's fair sharing is on.
	FairSharing []string `json:"fairSharing,omitempty"`
	// Training summarises data-parallel training jobs by placement.
	Training []TrainingLine `json:"training,omitempty"`
	// Services is each inference service's record, when the run has
	// services.
	Services []ServiceSummary `json:"services,omitempty"`
	// Variants sets the scenario as given beside its what-if variants.
	Variants    []RunFigures `json:"variants,omitempty"`
	Assumptions []string     `json:"assumptions"`
	Engine      EngineStats  `json:"engine"`

	pricing *Pricing  // for the per-job costs of jobs.csv
	start   time.Time // for the metric series
	// focusVersion is focus.csv's FOCUS version ("": the default).
	focusVersion focus.Version
}

// JobFigures are a summary's figures of the jobs: outcomes, queue wait,
// completion time (of the completed jobs, and of all of them, the
// unfinished censored), per queue, and why jobs waited. Embedded in
// Summary, its fields sit in summary.json at the top level.
type JobFigures struct {
	Jobs      JobCounts `json:"jobs"`
	QueueWait Stats     `json:"queueWait"`
	JCT       Stats     `json:"jct"`
	// JCTAllJobs is completion time over every job, the unfinished ones
	// censored at the end of the run (Kaplan-Meier): JCT over completed
	// jobs alone flatters a run that completed less.
	JCTAllJobs     CensoredStats `json:"jctAllJobs"`
	Queues         []QueueStats  `json:"queues"`
	PendingReasons []ReasonCount `json:"pendingReasons"`
	Unschedulable  []ReasonCount `json:"unschedulable"`
	PendingAtEnd   []ReasonCount `json:"pendingAtEnd"`
	// OOMKilled counts jobs that overfilled a time-sliced GPU's memory.
	OOMKilled int `json:"oomKilled"`
}

// SupplyFigures are a summary's figures of the node supply. Embedded in
// Summary, its fields sit in summary.json at the top level.
type SupplyFigures struct {
	// Capacity is what happened to the nodes, when they came and went.
	Capacity []CapacityLine `json:"capacity,omitempty"`
	// Disruptions summarises jobs stopped by lost nodes or preemption.
	Disruptions *DisruptionSummary `json:"disruptions,omitempty"`
}

// MoneyFigures are a summary's money: the FinOps view and what spot
// saves. Embedded in Summary, its fields sit in summary.json at the top
// level.
type MoneyFigures struct {
	// Cost is the FinOps view, when pools have prices.
	Cost *CostSummary `json:"cost,omitempty"`
	// SpotVsOnDemand compares the run with the same run on on-demand
	// nodes only, when the run used spot.
	SpotVsOnDemand *SpotComparison `json:"spotVsOnDemand,omitempty"`
	// SpotSensitivity is, for each run that buys spot (the scenario as
	// given or a variant), what spot saves at each interruption rate.
	SpotSensitivity []SpotCurve `json:"spotSensitivity,omitempty"`
}

// CapacityLine is one pool's node supply over the run.
type CapacityLine struct {
	Pool          string  `json:"pool"`
	CapacityType  string  `json:"capacityType"`
	Group         string  `json:"group,omitempty"`
	InitialNodes  int     `json:"initialNodes"`
	MaxNodes      int32   `json:"maxNodes"`
	NodeHours     float64 `json:"nodeHours"`
	Launched      int64   `json:"launched"`
	Interrupted   int64   `json:"interrupted"`
	Failed        int64   `json:"failed"`
	ScaledDown    int64   `json:"scaledDown"`
	Consolidated  int64   `json:"consolidated"`
	SpotFallbacks int64   `json:"spotFallbacks"`
	// Deallocated counts evictions that stopped-deallocated a node (Azure's
	// eviction policy Deallocate), Restarted the nodes started again, and
	// DeallocatedHours the node-hours they spent stopped.
	Deallocated      int64   `json:"deallocated,omitempty"`
	Restarted        int64   `json:"restarted,omitempty"`
	DeallocatedHours float64 `json:"deallocatedHours,omitempty"`
	Interruptions    string  `json:"interruptionModel,omitempty"`
	Failures         string  `json:"failureModel,omitempty"`
}

// DisruptionSummary counts jobs stopped by losing a node.
type DisruptionSummary struct {
	// ByCause counts disruptions: spot interruption, node failure,
	// consolidation.
	ByCause            map[string]int64 `json:"byCause"`
	JobsDisrupted      int              `json:"jobsDisrupted"`
	Restarts           int64            `json:"restarts"`
	JobsFailed         int64            `json:"jobsFailed"`
	LostGPUHours       float64          `json:"lostGPUHours"`
	CheckpointGPUHours float64          `json:"checkpointGPUHours"`
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
	// Preempted counts evictions its jobs suffered (admission or the
	// scheduler); Preempting the evictions the scheduler made for them.
	Preempted  int `json:"preempted,omitempty"`
	Preempting int `json:"preempting,omitempty"`
}

// FragSummary summarises the sampled fragmentation.
type FragSummary struct {
	MeanFragGPUs float64 `json:"meanFragGPUs"`
	MaxFragGPUs  float64 `json:"maxFragGPUs"`
}

// SlotsSummary is the mean, over the timeline's bucket ends, of the free
// GPUs of the pools with a topology and of those on nodes, in racks and
// in blocks whose every GPU is free (sim.LevelSlots): what a gang of whole
// nodes, racks or blocks can use.
type SlotsSummary struct {
	MeanFreeGPUs     float64 `json:"meanFreeGPUs"`
	MeanInFreeNodes  float64 `json:"meanInFreeNodes"`
	MeanInFreeRacks  float64 `json:"meanInFreeRacks"`
	MeanInFreeBlocks float64 `json:"meanInFreeBlocks"`
}

func topologySlots(res *sim.Result) *SlotsSummary {
	ls := res.Timeline.Levels
	if ls == nil || len(ls.Free) == 0 {
		return nil
	}
	mean := func(v []int64) float64 {
		var sum int64
		for _, x := range v {
			sum += x
		}
		return round(float64(sum)/float64(len(v)), 3)
	}
	return &SlotsSummary{MeanFreeGPUs: mean(ls.Free), MeanInFreeNodes: mean(ls.Node), MeanInFreeRacks: mean(ls.Rack), MeanInFreeBlocks: mean(ls.Block)}
}

// slotsLine is the report's sentence of the summary's TopologySlots.
func slotsLine(t *SlotsSummary) string {
	return fmt.Sprintf("Free GPUs by topology level (mean at each timeline interval's end): %.1f free, %.1f of them on wholly free nodes, %.1f in wholly free racks, %.1f in wholly free blocks.",
		t.MeanFreeGPUs, t.MeanInFreeNodes, t.MeanInFreeRacks, t.MeanInFreeBlocks)
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

// parallelStatsMin: a run of this many jobs sorts its queues' waits and
// completion times on every core at once; a smaller one on its own
// goroutine (runs side by side on a pool already use the cores).
const parallelStatsMin = 1 << 16

// runAll runs every task, on GOMAXPROCS goroutines when parallel (taking
// them in order), else one after another. Each task writes only what is
// its own, so the outcome is the same either way.
func runAll(parallel bool, tasks []func()) {
	workers := min(runtime.GOMAXPROCS(0), len(tasks))
	if !parallel || workers <= 1 {
		for _, t := range tasks {
			t()
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(tasks)); i = next.Add(1) - 1 {
				tasks[i]()
			}
		})
	}
	wg.Wait()
}

func round(x float64, digits int) float64 {
	// math.Pow10 is math.Pow(10, digits) exactly (10^digits is exact in a
	// float64 up to 10^22), from a table.
	p := math.Pow10(digits)
	return math.Round(x*p) / p
}

func gpuHours(milliMs int64) float64 { return round(float64(milliMs)/milliGPUHour, 3) }

func secs(ms sim.Time) float64 { return float64(ms) / 1000 }

// Describe computes Stats of durations given in milliseconds (sorted in place).
func Describe(ms []float64) Stats { return describeWith(ms, nil) }

// describeWith is Describe sorting with scratch (nil, or as long as ms).
func describeWith(ms, scratch []float64) Stats {
	sortFloatsWith(ms, scratch)
	return describeSorted(ms)
}

// describeRuns is Describe of all, whose values are the sorted runs (of
// non-negative values, no NaN), with scratch as long as all: one run is
// all sorted, two are merged into scratch, more are sorted again.
func describeRuns(all, scratch []float64, runs [][]float64) Stats {
	switch len(runs) {
	case 1:
		return describeSorted(all)
	case 2:
		a, b := runs[0], runs[1]
		out := scratch[:0]
		for len(a) > 0 && len(b) > 0 {
			if b[0] < a[0] {
				out, b = append(out, b[0]), b[1:]
			} else {
				out, a = append(out, a[0]), a[1:]
			}
		}
		out = append(append(out, a...), b...)
		return describeSorted(out)
	}
	return describeWith(all, scratch)
}

// describeSorted is Describe of sorted values.
func describeSorted(ms []float64) Stats {
	if len(ms) == 0 {
		return Stats{}
	}
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
		start:         meta.Start,
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
			Plugins: res.Profile, Policy: res.Queue.Policy.String(),
			Backfill: res.Queue.Backfill, BackfillDepth: res.Queue.BackfillDepth,
		},
	}
	s.ledgers(res)

	s.Jobs.ByOutcome = map[string]int{}
	for _, o := range sim.Outcomes() {
		s.Jobs.ByOutcome[o.String()] = 0
	}
	queues, names, nwait, njct := queueWindows(res)
	var last *qacc
	queueOf := func(j *sim.JobRecord) *qacc {
		if last == nil || j.Queue != last.q.Name {
			last = queues[j.Queue]
		}
		return last
	}
	// One list of a value a job holds the waits, then the completion
	// times, then the Kaplan-Meier observations.
	vals := make([]float64, res.NumJobs())
	waited, unsched, pending := map[string]int{}, map[string]int{}, map[string]int{}
	byOutcome, byReason := make([]int, len(sim.Outcomes())), make([]int, len(res.Reasons))
	var training trainingTally
	for _, j := range res.Records() {
		training.add(j)
		s.Jobs.Total++
		s.Jobs.Pods += int64(j.Replicas)
		if j.Pod.MilliGPUs() > 0 {
			s.Jobs.GPUJobs++
		}
		if int(j.Outcome) < len(byOutcome) {
			byOutcome[j.Outcome]++
		} else {
			s.Jobs.ByOutcome[j.Outcome.String()]++
		}
		qa := queueOf(j)
		qa.q.Jobs++
		qa.held += j.HeldMilliMs
		qa.q.Preempted += int(j.Preemptions)
		qa.q.Preempting += int(j.PreemptionsCaused)
		if w := j.Wait(); w >= 0 {
			vals[qa.wat] = float64(w)
			qa.wat++
		}
		if j.Outcome == sim.Completed {
			qa.q.Completed++
		}
		switch r := j.Reason; {
		case r >= 0 && int(r) < len(byReason):
			byReason[r]++
		case r >= 0:
			waited[res.Reason(r)]++
		}
		switch j.Outcome {
		case sim.Unschedulable:
			unsched[j.Diagnosis()]++
		case sim.Pending:
			pending[j.Diagnosis()]++
		case sim.OOMKilled:
			s.OOMKilled++
		}
	}
	for o, n := range byOutcome {
		s.Jobs.ByOutcome[sim.Outcome(o).String()] += n
	}
	for r, n := range byReason {
		if n > 0 {
			waited[res.Reasons[r]] += n
		}
	}
	if res.Admission != nil {
		s.Admission = summarizeAdmission(res)
		s.FairSharing = res.Admission.FairSharing
	}
	// The statistics of waits and completion times take a sort each, with
	// one scratch list a job for all of them (a 3M-job run's summary used
	// 229 MB for them, each list and each queue's its own, each sort its
	// own scratch; now 46): each queue's window sorted with the matching
	// window of scratch (a large run's queues on every core at once), then
	// the run's: one queue's are the run's, two queues' are merged, more
	// are sorted again (describeRuns).
	scratch := make([]float64, res.NumJobs())
	par := res.NumJobs() >= parallelStatsMin
	var perQueue []func()
	var runs [][]float64
	for _, n := range names {
		qa := queues[n]
		w, sw := vals[qa.woff:qa.woff+qa.nwait], scratch[qa.woff:qa.woff+qa.nwait]
		perQueue = append(perQueue, func() { qa.q.QueueWait = describeWith(w, sw) })
		runs = append(runs, w)
	}
	runAll(par, perQueue)
	s.QueueWait = describeRuns(vals[:nwait], scratch, runs)
	// The completion times go to their queues' windows, the Kaplan-Meier
	// observations of the jobs that did not complete after them: doubled,
	// the completion times are those of the jobs that did (one pass for
	// both).
	censored := njct
	for _, j := range res.Records() {
		if j.Outcome == sim.Completed {
			qa := queueOf(j)
			vals[qa.jat] = float64(j.JCT())
			qa.jat++
		} else {
			vals[censored] = kmObservation(res, j)
			censored++
		}
	}
	perQueue, runs = perQueue[:0], runs[:0]
	for _, n := range names {
		qa := queues[n]
		c, sc := vals[qa.joff:qa.joff+qa.njct], scratch[qa.joff:qa.joff+qa.njct]
		perQueue = append(perQueue, func() { qa.q.JCT = describeWith(c, sc) })
		runs = append(runs, c)
	}
	runAll(par, perQueue)
	s.JCT = describeRuns(vals[:njct], scratch, runs)
	s.JCTAllJobs = censoredJCTOf(vals, njct, scratch)
	for _, n := range names {
		qa := queues[n]
		qa.q.GPUHoursAllocated = gpuHours(qa.held)
		s.Queues = append(s.Queues, qa.q)
	}
	s.Fragmentation = fragmentation(res)
	s.TopologySlots = topologySlots(res)
	s.PendingReasons = countReasons(waited)
	s.Unschedulable = countReasons(unsched)
	s.PendingAtEnd = countReasons(pending)
	s.capacity(res, meta.Pricing)
	s.Training = training.lines()
	s.price(res, meta.Pricing)
	s.summarizeServices(res, meta.Pricing)
	return s
}

// qacc is one queue's figures as Summarize gathers them.
type qacc struct {
	q           QueueStats
	nwait, njct int
	// The queue's waits are waits[woff:woff+nwait], its completion
	// times jcts[joff:joff+njct]; wat and jat fill them.
	woff, joff, wat, jat int
	held                 int64
}

// queueWindows counts each queue's waits and completion times first, so
// that each queue's are a window of one list, allocated at its size: the
// queues, their names in order, and the run's counts of waits and of
// completion times.
func queueWindows(res *sim.Result) (map[string]*qacc, []string, int, int) {
	queues := map[string]*qacc{}
	// Most jobs are in the queue of the job before them.
	var last *qacc
	var nwait, njct int
	for _, j := range res.Records() {
		if last == nil || j.Queue != last.q.Name {
			last = queues[j.Queue]
		}
		qa := last
		if qa == nil {
			qa = &qacc{q: QueueStats{Name: j.Queue}}
			queues[j.Queue] = qa
			last = qa
		}
		if j.Start >= 0 {
			nwait++
			qa.nwait++
		}
		if j.Outcome == sim.Completed {
			njct++
			qa.njct++
		}
	}
	names := make([]string, 0, len(queues))
	for k := range queues {
		names = append(names, k)
	}
	sort.Strings(names)
	wo, jo := 0, 0
	for _, n := range names {
		qa := queues[n]
		qa.woff, qa.wat, qa.joff, qa.jat = wo, wo, jo, jo
		wo += qa.nwait
		jo += qa.njct
	}
	return queues, names, nwait, njct
}

// ledgers fills the GPU-hour ledger of each pool and of the cluster.
func (s *Summary) ledgers(res *sim.Result) {
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
}

// fragmentation is the mean and peak of the GPUs stranded by
// fragmentation over the timeline (nil when the run did not measure it).
func fragmentation(res *sim.Result) *FragSummary {
	fm := res.Timeline.FragMilli
	if fm == nil || len(res.Pools) == 0 || len(fm[0]) == 0 {
		return nil
	}
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
	return fs
}

// price fills the cost section when the plan prices any pool.
func (s *Summary) price(res *sim.Result, pr *Pricing) {
	if pr == nil {
		return
	}
	priced := false
	for _, p := range pr.Pools {
		priced = priced || p.PerHour > 0
	}
	if priced {
		s.Cost = Cost(res, pr)
		s.pricing = pr
	}
}

// capacity fills the capacity and disruption sections of a dynamic run.
func (s *Summary) capacity(res *sim.Result, pr *Pricing) {
	if !res.Dynamic {
		if res.Stats.Disruptions[capacity.CausePreemption] > 0 {
			s.disruptions(res)
		}
		return
	}
	for i := range res.Pools {
		p := &res.Pools[i]
		c := p.Capacity
		l := CapacityLine{Pool: p.Spec.Name, InitialNodes: p.Spec.Nodes, MaxNodes: max(c.MaxPresent, int32(p.Spec.Nodes)),
			NodeHours: round(p.Usage.NodeHours, 4), Launched: c.Launched, Interrupted: c.Interrupted, Failed: c.Failed,
			ScaledDown: c.ScaledDown, Consolidated: c.Consolidated, SpotFallbacks: c.SpotFallbacks,
			Deallocated: c.Deallocated, Restarted: c.Restarted, DeallocatedHours: round(float64(c.DeallocatedMs)/float64(sim.Hour), 4)}
		if pr != nil && i < len(pr.Pools) {
			pp := pr.Pools[i]
			l.CapacityType, l.Group, l.Interruptions, l.Failures = pp.CapacityType, pp.Group, pp.Interruptions, pp.Failures
		}
		s.Capacity = append(s.Capacity, l)
	}
	s.disruptions(res)
}

// disruptions fills the disruption section: jobs stopped by lost nodes or
// scheduler preemption.
func (s *Summary) disruptions(res *sim.Result) {
	d := &DisruptionSummary{ByCause: map[string]int64{}}
	for c, n := range res.Stats.Disruptions {
		if n == 0 && capacity.Cause(c) == capacity.CauseBlockEnd {
			continue // named only where a capacity block ended under jobs
		}
		d.ByCause[capacity.Cause(c).String()] = n
	}
	d.JobsFailed = res.Stats.JobsFailed
	const gpuMs = float64(sim.Hour) * 1000
	for _, j := range res.Records() {
		if j.Disruptions > 0 {
			d.JobsDisrupted++
		}
		if j.Attempts > 1 {
			d.Restarts += int64(j.Attempts - 1)
		}
		for u := range j.Usage() {
			d.LostGPUHours += float64(u.Lost[sim.ResGPU]) / gpuMs
			d.CheckpointGPUHours += float64(u.Checkpoint[sim.ResGPU]) / gpuMs
		}
	}
	d.LostGPUHours, d.CheckpointGPUHours = round(d.LostGPUHours, 4), round(d.CheckpointGPUHours, 4)
	s.Disruptions = d
}

// TrainingLine is the training jobs of one placement shape: the fabric
// their all-reduce was limited by, nodes, ranks and the fewest GPUs on a
// node; their mean step, and the share of it spent communicating.
type TrainingLine struct {
	Fabric      string  `json:"fabric"`
	Nodes       int     `json:"nodes"`
	Ranks       int     `json:"ranks"`
	GPUsPerNode int     `json:"gpusPerNode"`
	Jobs        int     `json:"jobs"`
	StepSeconds float64 `json:"meanStepSeconds"`
	CommSeconds float64 `json:"meanCommSeconds"`
	CommShare   float64 `json:"commShare"`
}

// trainingTally gathers the training lines job by job (Summarize feeds it
// from the pass that counts the jobs).
type trainingTally struct {
	acc  map[trainingKey]*TrainingLine
	keys []trainingKey
}

type trainingKey struct {
	f             string
	n, r, perNode int
}

// add counts job j (nothing for a job without a step).
func (t *trainingTally) add(j *sim.JobRecord) {
	st := j.Step()
	if st == nil {
		return
	}
	k := trainingKey{st.Fabric, st.Nodes, st.Ranks, st.GPUsPerNode}
	l := t.acc[k]
	if l == nil {
		if t.acc == nil {
			t.acc = map[trainingKey]*TrainingLine{}
		}
		l = &TrainingLine{Fabric: st.Fabric, Nodes: st.Nodes, Ranks: st.Ranks, GPUsPerNode: st.GPUsPerNode}
		t.acc[k] = l
		t.keys = append(t.keys, k)
	}
	l.Jobs++
	l.StepSeconds += (st.ComputeMs + st.CommMs) / 1000
	l.CommSeconds += st.CommMs / 1000
}

// lines is the lines of the jobs added, by ranks, nodes and fabric.
func (t *trainingTally) lines() []TrainingLine {
	keys := t.keys
	sort.Slice(keys, func(a, b int) bool {
		x, y := keys[a], keys[b]
		if x.r != y.r {
			return x.r < y.r
		}
		if x.n != y.n {
			return x.n < y.n
		}
		return x.f < y.f
	})
	var out []TrainingLine
	for _, k := range keys {
		l := *t.acc[k]
		l.StepSeconds, l.CommSeconds = round(l.StepSeconds/float64(l.Jobs), 4), round(l.CommSeconds/float64(l.Jobs), 4)
		if l.StepSeconds > 0 {
			l.CommShare = round(l.CommSeconds/l.StepSeconds, 4)
		}
		out = append(out, l)
	}
	return out
}

// SpotComparison sets a run on spot beside the same run on on-demand nodes.
type SpotComparison struct {
	Spot     RunFigures `json:"spot"`
	OnDemand RunFigures `json:"onDemand"`
	// Savings is on-demand cost minus spot cost (negative: spot cost more):
	// the bills, for whatever work each run completed.
	Savings    float64 `json:"savings"`
	SavingsPct float64 `json:"savingsPct"`
	// SameWorkSavingsPct is what spot saves for the same completed work:
	// one minus the ratio of the runs' costs per useful GPU-hour (in a
	// run with services too, training's share of each bill; in a run of
	// services alone, the ratio of the costs per million requests).
	SameWorkSavingsPct float64 `json:"sameWorkSavingsPct"`
	// ServedWorkSavingsPct is what spot saves for the same requests
	// served: one minus the ratio of the costs per million requests (in
	// a run with jobs too, inference's share of each bill).
	ServedWorkSavingsPct float64 `json:"servedWorkSavingsPct,omitempty"`
	// Paired compares the runs' completion times job by job (spot first).
	Paired *PairedJCT `json:"paired,omitempty"`
	// ByTeam is each team's showback in both runs: the effect of spot on
	// each team.
	ByTeam []TeamSpot `json:"byTeam,omitempty"`
	// Waterfall goes from the all-on-demand bill to the spot bill.
	Waterfall []WaterfallStep `json:"waterfall,omitempty"`
}

// WaterfallStep is one step from the all-on-demand bill to the spot
// bill: a change (Delta) or a total.
type WaterfallStep struct {
	Name  string  `json:"name"`
	Delta float64 `json:"delta"`
	Total float64 `json:"total"`
	// Of marks a part of the spot bill shown beside it, not a step.
	Of bool `json:"partOfSpotBill,omitempty"`
}

// SpotWaterfall explains the spot bill from the all-on-demand one: the
// node-hours each run bought (priced on demand), the spot discount on
// the spot run's nodes, and, as parts of the spot bill, what went to
// work lost to interruptions and to checkpoint writes. It needs every
// spot pool's on-demand price; nil without.
func SpotWaterfall(spot, od *CostSummary) []WaterfallStep {
	var atOD float64
	for _, l := range spot.ByPool {
		switch {
		case l.CapacityType != "spot":
			atOD += l.Cost
		case l.OnDemandPricePerHour > 0:
			atOD += l.NodeHours * l.OnDemandPricePerHour
		case l.NodeHours > 0:
			return nil
		}
	}
	r := func(x float64) float64 { return round(x, 2) }
	return []WaterfallStep{
		{Name: "all on-demand bill", Total: r(od.Total)},
		{Name: "node-hours bought differ (at on-demand prices)", Delta: r(atOD - od.Total), Total: r(atOD)},
		{Name: "spot discount", Delta: r(spot.Total - atOD), Total: r(spot.Total)},
		{Name: "spot bill", Total: r(spot.Total)},
		{Name: "of which work lost to interruptions", Delta: r(spot.LostCost), Of: true},
		{Name: "of which checkpoint writes", Delta: r(spot.CheckpointCost), Of: true},
	}
}

// TeamSpot is one team's showback with spot and all on-demand.
type TeamSpot struct {
	Team     string  `json:"team"`
	Spot     float64 `json:"spot"`
	OnDemand float64 `json:"onDemand"`
}

// RunFigures are the headline figures of one run, for comparisons.
type RunFigures struct {
	Name         string  `json:"name"`
	Cost         float64 `json:"cost"`
	IdleCost     float64 `json:"idleCost"`
	LostGPUHours float64 `json:"lostGPUHours"`
	LostCost     float64 `json:"lostCost"`
	// CostPerUsefulGPUHour is the bill over completed jobs' work; in a
	// run with jobs and services (BySide) it is training's share of the
	// bill over that work, so inference does not weigh on it.
	CostPerUsefulGPUHour float64 `json:"costPerUsefulGPUHour"`
	Completed            int     `json:"completed"`
	Failed               int     `json:"failed"`
	Disruptions          int64   `json:"disruptions"`
	WaitP95              float64 `json:"waitP95Seconds"`
	// StepSeconds is the training jobs' mean step (0 without any).
	StepSeconds float64 `json:"meanStepSeconds,omitempty"`
	JCTP50      float64 `json:"jctP50Seconds"`
	JCTP95      float64 `json:"jctP95Seconds"`
	// JCTAllP50 and JCTAllP95 count every job, unfinished ones censored
	// (-1: more than that share never completed).
	JCTAllP50  float64 `json:"jctAllJobsP50Seconds"`
	JCTAllP95  float64 `json:"jctAllJobsP95Seconds"`
	Allocation float64 `json:"allocation"`
	// Paired compares this run with the scenario as given, job by job
	// (variants only).
	Paired *PairedJCT `json:"pairedWithBase,omitempty"`
	// SameWorkVsBasePct is what this run saves against the scenario as
	// given for the same completed work (cost per useful GPU-hour).
	SameWorkVsBasePct float64 `json:"sameWorkSavingsVsBasePct,omitempty"`
	// ServedVsBasePct is what it saves against the scenario as given for
	// the same requests served (cost per million requests).
	ServedVsBasePct float64 `json:"servedWorkSavingsVsBasePct,omitempty"`
	// Services are the run's inference services' headline figures;
	// CostPerMillionRequests is the bill over the requests they served,
	// per million (with services and prices): the whole bill in a run of
	// services alone, inference's share of it in a run with jobs too
	// (BySide).
	Services               []ServiceFigures `json:"services,omitempty"`
	CostPerMillionRequests float64          `json:"costPerMillionRequests,omitempty"`
	// BySide marks a priced run with both jobs and services: its cost
	// figures are each side's share of the bill (cost.byWorkload) over
	// its own work, TrainingCost and InferenceCost those shares. Such a
	// run has no single cost-per-work figure: a variant is compared side
	// by side.
	BySide        bool    `json:"costFiguresBySide,omitempty"`
	TrainingCost  float64 `json:"trainingCost,omitempty"`
	InferenceCost float64 `json:"inferenceCost,omitempty"`
}

// Figures extracts a summary's headline figures.
func Figures(name string, s *Summary) RunFigures {
	f := RunFigures{Name: name, Completed: s.Jobs.ByOutcome[sim.Completed.String()], Failed: s.Jobs.ByOutcome[sim.Failed.String()],
		WaitP95: s.QueueWait.P95, JCTP50: s.JCT.P50, JCTP95: s.JCT.P95, Allocation: s.Cluster.Allocation,
		JCTAllP50: s.JCTAllJobs.P50, JCTAllP95: s.JCTAllJobs.P95}
	if c := s.Cost; c != nil {
		f.Cost, f.IdleCost, f.LostCost, f.CostPerUsefulGPUHour = c.Total, c.Idle, c.LostCost, c.CostPerUsefulGPUHour
	}
	var steps, jobs float64
	for _, t := range s.Training {
		steps += t.StepSeconds * float64(t.Jobs)
		jobs += float64(t.Jobs)
	}
	if jobs > 0 {
		f.StepSeconds = round(steps/jobs, 4)
	}
	if d := s.Disruptions; d != nil {
		f.LostGPUHours = d.LostGPUHours
		for _, n := range d.ByCause {
			f.Disruptions += n
		}
	}
	var served float64
	for _, v := range s.Services {
		served += v.RequestsServed
	}
	if s.Cost != nil {
		f.CostPerMillionRequests = round(perMillion(s.Cost.Total, served), 4)
		if w := s.Cost.ByWorkload; len(w) == 2 && s.Jobs.Total > 0 {
			// Jobs and services: each side's share over its own work.
			f.BySide = true
			f.TrainingCost, f.InferenceCost = w[0].Total, w[1].Total
			f.CostPerUsefulGPUHour, f.CostPerMillionRequests = w[0].PerUsefulGPUHour, w[1].PerMillionRequests
		}
	}
	for _, v := range s.Services {
		sf := ServiceFigures{Name: v.Name, P95Ms: v.P95Ms, SLOAttainment: v.SLOAttainment, Dropped: v.RequestsDropped,
			ReplicaHours: v.ReplicaHours, GPUHours: v.GPUHours, ColdStarts: v.ColdStarts}
		if v.Cost != nil {
			sf.CostPerMillion = v.Cost.PerMillionRequests
		}
		sf.LLM = llmFigures(v.LLM)
		f.Services = append(f.Services, sf)
	}
	return f
}

// CompareSpot sets the spot run beside the same workload on on-demand
// nodes: the bills, the cost for the same work, and completion times job
// by job (the results may be nil: no pairing).
func CompareSpot(spot, onDemand *Summary, spotRes, onDemandRes *sim.Result) *SpotComparison {
	c := &SpotComparison{Spot: Figures("as given (spot)", spot), OnDemand: Figures("all on-demand", onDemand)}
	c.Savings = round(c.OnDemand.Cost-c.Spot.Cost, 4)
	if c.OnDemand.Cost > 0 {
		c.SavingsPct = round(100*c.Savings/c.OnDemand.Cost, 2)
	}
	if s, o := c.Spot.CostPerUsefulGPUHour, c.OnDemand.CostPerUsefulGPUHour; s > 0 && o > 0 {
		c.SameWorkSavingsPct = round(100*(1-s/o), 2)
	} else if s, o := c.Spot.CostPerMillionRequests, c.OnDemand.CostPerMillionRequests; servicesOnly(spot) && s > 0 && o > 0 {
		// Inference alone: the same work is the requests served.
		c.SameWorkSavingsPct = round(100*(1-s/o), 2)
	}
	c.ServedWorkSavingsPct = savingPct(c.Spot.CostPerMillionRequests, c.OnDemand.CostPerMillionRequests)
	if spotRes != nil && onDemandRes != nil {
		c.Paired = PairJCT(spotRes, onDemandRes)
	}
	if spot.Cost != nil && onDemand.Cost != nil {
		c.Waterfall = SpotWaterfall(spot.Cost, onDemand.Cost)
	}
	if spot.Cost != nil && onDemand.Cost != nil && spot.Cost.Showback != nil && onDemand.Cost.Showback != nil {
		od := map[string]float64{}
		for _, t := range onDemand.Cost.Showback.Teams {
			od[t.Team] = t.Total
		}
		for _, t := range spot.Cost.Showback.Teams {
			c.ByTeam = append(c.ByTeam, TeamSpot{Team: t.Team, Spot: t.Total, OnDemand: od[t.Team]})
		}
	}
	return c
}

// PairWithBase sets f's job-by-job comparison with the scenario as given
// (res against base, the same workload) and its savings for the same
// work.
func PairWithBase(f *RunFigures, base *RunFigures, res, baseRes *sim.Result) {
	f.Paired = PairJCT(res, baseRes)
	if s, o := f.CostPerUsefulGPUHour, base.CostPerUsefulGPUHour; s > 0 && o > 0 {
		f.SameWorkVsBasePct = round(100*(1-s/o), 2)
	}
	f.ServedVsBasePct = savingPct(f.CostPerMillionRequests, base.CostPerMillionRequests)
}

// savingPct is what a run costing s a unit of work saves against one
// costing o: one minus their ratio, in percent; 0 when either did none.
func savingPct(s, o float64) float64 {
	if s <= 0 || o <= 0 {
		return 0
	}
	return round(100*(1-s/o), 2)
}
