package compose

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// Composition is one composed scenario, in pieces the shrinker can take
// away one at a time. Render writes it as the files a user writes.
type Composition struct {
	// Seed is the scenario's spec.seed (kept while shrinking).
	Seed uint64
	// Horizon is spec.horizon ("": none, the run goes until the workload
	// drains; only with a bounded workload: a job cap and no services or
	// CronJobs).
	Horizon string
	// Jobs caps the synthetic jobs (always set: compositions stay tiny).
	Jobs      int
	Pools     []Pool
	NodePools []NodePool
	Classes   []Class
	Services  []Service
	// CronJobs replace the synthetic classes as the workload (a scenario's
	// workload is one of synthetic or manifests).
	CronJobs []CronJob
	// Policy is the admission in front of the scheduler (nil: none).
	Policy *Policy
	// Preemption is kube-scheduler's priority preemption.
	Preemption bool
	// Checkpoint and IgnoreDisruptions are spec.workload.recovery.
	Checkpoint        bool
	IgnoreDisruptions bool
	// Volcano runs every job as a Volcano Job (spec.workload.volcano).
	Volcano *VolcanoJobs
	// Backfill is spec.queueing.backfill.
	Backfill bool
	// Sensitivity runs the spot sensitivity's replays (runs that buy spot).
	Sensitivity bool
	// Trace writes the classes' jobs as a trace file in the native CSV
	// format (spec.workload.trace) instead of synthetic classes: Jobs
	// rows, the classes' in turn, each class's at its mean spacing.
	Trace bool
	// Variants are spec.variants, what-ifs run beside the scenario: each
	// one of the kinds more-nodes (pool0 one node more), double-rate
	// (class0 arriving twice as fast), no-failures (pool0's failures
	// removed).
	Variants []string
	// Busy marks a composition drawn as a busy, contended cluster: Kueue
	// preemption, nodes failing every quarter hour to hour, a service of
	// high priority and jobs arriving faster (the coverage table counts
	// them; the pieces themselves are the ordinary fields).
	Busy bool
}

// Pool is one spec.cluster.pools entry.
type Pool struct {
	Name string
	// Kind is on-demand, spot, mig or time-sliced.
	Kind         string
	InstanceType string
	Count        int
	// MaxNodes > 0 makes it a cluster-autoscaler node group.
	MaxNodes int
	// Failures is a node failure MTBF ("": none).
	Failures string
	// Interruptions of a spot pool (nil: the Spot Advisor's band).
	Interruptions *Interruptions
	// Replicas of a time-sliced GPU.
	Replicas int
	// MIGSingle is a MIG pool of the single strategy: every GPU cut into
	// instances of one profile, each offered as an nvidia.com/gpu.
	MIGSingle string
}

// NodePool is one Karpenter NodePool.
type NodePool struct {
	Name          string
	InstanceTypes []string
	Spot          bool
	LimitGPUs     int
	Consolidation bool
	Failures      string
	Interruptions *Interruptions
}

// Interruptions is a spot reclaim process in one of the schema's models.
type Interruptions struct {
	// Model is rate, mtbf, band, times, path or skypilot.
	Model string
	// Value is the rate per hour, the MTBF, the band's label, or the
	// times (comma separated).
	Value string
	// Notice is the notice before a reclaim ("": the provider's default;
	// "0s": none).
	Notice string
}

// Class is one synthetic job class.
type Class struct {
	Name, Queue string
	Priority    int32
	// PreemptNever is the PriorityClass's preemptionPolicy: Never.
	PreemptNever bool
	RatePerHour  float64
	// Replicas > 1 is a gang of that many pods.
	Replicas int
	GPUs     int
	// MIG asks for a MIG instance of this profile (rendered only while a
	// MIG pool exists); Pool pins the class to a pool by name (rendered
	// only while that pool exists).
	MIG    string
	Pool   string
	Median string
}

// Service is one inference service.
type Service struct {
	Name string
	// Scaler is none, hpa, keda or kpa.
	Scaler   string
	Min, Max int
	Rate     float64
	// Priority is the replicas' priority (0: none); PriorityClass gives it
	// as a PriorityClass object of the Kueue policy the service names,
	// else as spec.workload.services[].priority.
	Priority      int32
	PriorityClass bool
}

// CronJob is one batch/v1 CronJob of the workload manifests.
type CronJob struct {
	Name        string
	Schedule    string
	Parallelism int
	Duration    string
}

// Policy is the admission policy: Kueue or Volcano queues.
type Policy struct {
	// Kind is kueue or volcano.
	Kind string
	// Queues are the ClusterQueues (Volcano Queues), one per queue name.
	Queues []Queue
	// Cohort puts the ClusterQueues in one cohort; CohortQuota gives the
	// cohort a quota of its own.
	Cohort      bool
	CohortQuota int
	// Preemption is withinClusterQueue LowerPriority and
	// reclaimWithinCohort Any (else Never).
	Preemption bool
	// Flavors gives each pool and NodePool a ResourceFlavor of its own
	// (nodeLabels gpuplan.dev/pool or karpenter.sh/nodepool), each with a
	// quota; else one flavor covers every node.
	Flavors          bool
	FairSharing      bool
	WaitForPodsReady bool
	StrictFIFO       bool
	// BatchClass gives team-b's jobs the priority of a PriorityClass
	// object "batch" (spec.policy.priorityClasses) in place of their
	// classes' own.
	BatchClass bool
}

// Queue is one ClusterQueue (or Volcano Queue).
type Queue struct {
	Name string
	GPUs int
	// BorrowingLimit >= 0 caps borrowing from the cohort (-1: no limit).
	BorrowingLimit int
	Weight         int
}

// VolcanoJobs is spec.workload.volcano.
type VolcanoJobs struct {
	MaxRetry int
	// Policy is RestartJob, AbortJob or "" (none).
	Policy       string
	MinAvailable int
}

// Generate composes scenario n of a hunt seeded seed: deterministic.
func Generate(seed uint64, n int) *Composition {
	d := drawer{rand.New(rand.NewPCG(seed, uint64(n)))}
	r := d.r
	c := &Composition{Seed: uint64(1 + r.IntN(1000)), Jobs: 2 + r.IntN(14), Backfill: r.IntN(2) == 0}
	// A third of the compositions are busy, contended clusters, where
	// users meet trouble: queues that preempt while nodes fail, a
	// service of high priority beside the jobs, jobs arriving faster
	// than the nodes free up. Uniform draws over each feature alone
	// reach that combination in about 1 of 200 compositions.
	c.Busy = d.chance(0.35)
	if c.Busy {
		c.Jobs = 20 + r.IntN(41)
	}
	// Each part draws in turn from the one stream: their order is part of
	// what a seed means.
	d.pools(c)
	d.karpenter(c)
	queues := d.admission(c)
	d.workload(c, queues)
	d.services(c)
	d.runSettings(c)
	return c
}

// drawer is a composition's random stream and the two draws every part
// of it uses.
type drawer struct{ r *rand.Rand }

func (d drawer) chance(p float64) bool    { return d.r.Float64() < p }
func (d drawer) pick(xs ...string) string { return xs[d.r.IntN(len(xs))] }

// pools draws the fixed pools: none to three, of the four kinds (on-demand,
// spot, MIG, time-sliced), some that fail or scale.
func (d drawer) pools(c *Composition) {
	// Pools: one to three, of the four kinds; sometimes Karpenter instead
	// or beside.
	np := 1 + d.r.IntN(3)
	if d.chance(0.25) {
		np = d.r.IntN(2)
	}
	for i := range np {
		p := Pool{Name: fmt.Sprintf("pool%d", i), Count: 1 + d.r.IntN(2)}
		switch k := d.r.IntN(10); {
		case k < 4:
			p.Kind = "on-demand"
		case k < 7:
			p.Kind = "spot"
		case k < 8:
			p.Kind = "mig"
		default:
			p.Kind = "time-sliced"
		}
		switch p.Kind {
		case "mig":
			p.InstanceType, p.Count = "p5.48xlarge", 1
			if d.chance(0.35) {
				p.MIGSingle = d.pick("1g.10gb", "3g.40gb")
			}
		case "time-sliced":
			p.InstanceType, p.Replicas = d.pick("g6.12xlarge", "g5.12xlarge"), 2+d.r.IntN(3)
		default:
			// Instance types of the embedded catalog and the Spot
			// Advisor's data for us-east-1.
			p.InstanceType = d.pick("g5.xlarge", "g6.2xlarge", "g5.12xlarge", "g6.12xlarge")
		}
		if p.Kind != "mig" && d.chance(0.25) {
			p.MaxNodes = p.Count + 1 + d.r.IntN(2)
		}
		if d.chance(0.3) {
			p.Failures = d.pick("30m", "2h", "6h", "20h")
		}
		if c.Busy && p.Kind != "mig" && d.chance(0.7) {
			p.Failures = d.pick("15m", "30m", "1h")
		}
		if p.Kind == "spot" {
			p.Interruptions = interruptions(d.r, p.MaxNodes == 0)
		}
		c.Pools = append(c.Pools, p)
	}
}

// karpenter draws a Karpenter NodePool, when there is no pool or by
// chance (most busy clusters have one).
func (d drawer) karpenter(c *Composition) {
	if len(c.Pools) == 0 || d.chance(0.2) || (c.Busy && d.chance(0.8)) {
		n := NodePool{Name: "karp", InstanceTypes: []string{"g5.xlarge", "g5.12xlarge"}, LimitGPUs: 4 + 4*d.r.IntN(2),
			Consolidation: d.chance(0.5), Spot: d.chance(0.5)}
		if c.Busy {
			// Room for a few nodes of 4 GPUs that fail and come back.
			n.LimitGPUs = 8 * (1 + d.r.IntN(4))
			if d.chance(0.5) {
				n.InstanceTypes = []string{"g5.12xlarge"}
			}
		}
		if d.chance(0.25) {
			n.Failures = d.pick("20m", "3h", "12h")
		}
		if c.Busy && d.chance(0.9) {
			// Karpenter replaces a failed node: jobs and replicas come
			// and go on fresh nodes.
			n.Failures = d.pick("15m", "15m", "30m", "1h")
		}
		if n.Spot && d.chance(0.7) {
			n.Interruptions = interruptions(d.r, false)
		}
		c.NodePools = append(c.NodePools, n)
	}

}

// admission draws the admission policy (none, Kueue or Volcano queues)
// and returns the queues jobs may go to.
func (d drawer) admission(c *Composition) []string {
	// Admission: none, Kueue or Volcano queues.
	queues := []string{"team-a"}
	k := d.r.IntN(10)
	if c.Busy {
		k = 0
	}
	switch {
	case k < 4:
		queues = append(queues, "team-b")
		p := &Policy{Kind: "kueue", Cohort: d.chance(0.6), Preemption: c.Busy || d.chance(0.6), StrictFIFO: d.chance(0.2), BatchClass: d.chance(0.15)}
		if c.Busy {
			// A cohort lends a full queue the other's quota, and its
			// jobs borrow instead of preempting: most busy queues stand
			// alone.
			p.Cohort = d.chance(0.3)
		}
		p.FairSharing = p.Cohort && d.chance(0.4)
		p.WaitForPodsReady = d.chance(0.3)
		p.Flavors = d.chance(0.4)
		if p.Cohort && d.chance(0.4) {
			p.CohortQuota = 1 + d.r.IntN(3)
		}
		for _, q := range queues {
			bl := -1
			if p.Cohort && d.chance(0.4) {
				bl = d.r.IntN(3)
			}
			gpus := 1 + d.r.IntN(4)
			if c.Busy {
				// A quota the service's replicas and the jobs contend
				// for: admission, not the nodes, is what holds jobs back,
				// so Kueue preempts.
				gpus = 4 * (1 + d.r.IntN(4))
			}
			p.Queues = append(p.Queues, Queue{Name: q, GPUs: gpus, BorrowingLimit: bl, Weight: 1 + d.r.IntN(3)})
		}
		c.Policy = p
	case k < 5:
		queues = append(queues, "team-b")
		p := &Policy{Kind: "volcano"}
		for _, q := range queues {
			p.Queues = append(p.Queues, Queue{Name: q, GPUs: 2 + d.r.IntN(4), Weight: 1 + d.r.IntN(3), BorrowingLimit: -1})
		}
		c.Policy = p
	}

	return queues
}

// workload draws the jobs: synthetic classes in the queues, or CronJobs.
func (d drawer) workload(c *Composition, queues []string) {
	// The workload: synthetic classes, or CronJobs; services beside.
	if d.chance(0.12) {
		for i := range 1 + d.r.IntN(2) {
			c.CronJobs = append(c.CronJobs, CronJob{Name: fmt.Sprintf("cron%d", i), Schedule: d.pick("*/30 * * * *", "0 * * * *", "15 */2 * * *"),
				Parallelism: 1 + d.r.IntN(2), Duration: d.pick("10m", "25m", "50m")})
		}
	} else {
		for i := range 1 + d.r.IntN(3) {
			cl := Class{Name: fmt.Sprintf("class%d", i), Queue: queues[d.r.IntN(len(queues))], RatePerHour: float64(1 + d.r.IntN(8)),
				Replicas: 1, GPUs: 1, Median: d.pick("10m", "30m", "1h", "2h")}
			if c.Busy {
				// More work than the nodes hold, in the service's queue
				// most often: the service's replicas preempt jobs.
				cl.RatePerHour, cl.Median = float64(6+d.r.IntN(15)), d.pick("30m", "1h", "90m")
				if d.chance(0.7) {
					cl.Queue = queues[0]
				}
				if d.chance(0.4) {
					cl.GPUs = []int{2, 4}[d.r.IntN(2)]
				}
			}
			if d.chance(0.3) {
				cl.Replicas = 2 + d.r.IntN(2)
			}
			if d.chance(0.5) {
				cl.Priority = int32(100 * d.r.IntN(4))
				cl.PreemptNever = d.chance(0.2)
			}
			// Pin some classes to a MIG or time-sliced pool.
			for _, p := range c.Pools {
				if p.Kind == "mig" && d.chance(0.5) {
					cl.MIG, cl.Replicas, cl.GPUs = d.pick("1g.10gb", "3g.40gb"), 1, 1
					break
				}
				if p.Kind == "time-sliced" && d.chance(0.4) {
					cl.Pool, cl.GPUs = p.Name, 1
					break
				}
			}
			c.Classes = append(c.Classes, cl)
		}
	}
}

// services draws inference services beside the jobs, where a pool has
// whole GPUs.
func (d drawer) services(c *Composition) {
	// Services ask for a whole GPU: only beside pools that have one.
	whole := len(c.NodePools) > 0
	for _, p := range c.Pools {
		whole = whole || p.Kind != "mig"
	}
	if whole && (d.chance(0.25) || (c.Busy && d.chance(0.8))) {
		for i := range 1 + d.r.IntN(2) {
			s := Service{Name: fmt.Sprintf("svc%d", i), Scaler: d.pick("none", "hpa", "keda", "kpa"), Min: 1, Max: 1 + d.r.IntN(3), Rate: float64(20 + d.r.IntN(200))}
			if c.Busy {
				// Enough load to scale out and back as nodes come and go.
				s.Max, s.Rate = 4+d.r.IntN(13), float64(100+d.r.IntN(700))
			}
			if s.Scaler == "kpa" || s.Scaler == "keda" {
				s.Min = d.r.IntN(2)
			}
			// A service usually outranks the batch jobs beside it.
			if d.chance(0.2) || (c.Busy && d.chance(0.7)) {
				s.Priority = []int32{1000, 100000}[d.r.IntN(2)]
				s.PriorityClass = c.Policy != nil && c.Policy.Kind == "kueue" && d.chance(0.5)
			}
			c.Services = append(c.Services, s)
		}
	}
}

// runSettings draws the rest: preemption, checkpoints, disruptions,
// Volcano's job settings, the horizon (and failures rare enough to drain
// without one), the sensitivity, the trace and the variants.
func (d drawer) runSettings(c *Composition) {
	c.Preemption = d.chance(0.3)
	c.Checkpoint = d.chance(0.4)
	c.IgnoreDisruptions = d.chance(0.4)
	if !c.IgnoreDisruptions && d.chance(0.2) {
		c.Volcano = &VolcanoJobs{MaxRetry: 1 + d.r.IntN(4), Policy: d.pick("", "RestartJob", "AbortJob")}
		if d.chance(0.3) {
			c.Volcano.MinAvailable = 1
		}
	}
	if len(c.Services) > 0 || len(c.CronJobs) > 0 || d.chance(0.6) || c.Busy {
		c.Horizon = d.pick("3h", "8h", "24h")
	}
	if c.Horizon == "" {
		// Without a horizon a run goes until its jobs drain: node failures
		// every half hour could keep one going for minutes (a job that
		// never fits waits through every failure).
		for i := range c.Pools {
			switch c.Pools[i].Failures {
			case "15m", "30m", "1h":
				c.Pools[i].Failures = "2h"
			}
		}
		for i := range c.NodePools {
			switch c.NodePools[i].Failures {
			case "15m", "20m", "30m", "1h":
				c.NodePools[i].Failures = "3h"
			}
		}
	}
	c.Sensitivity = d.chance(0.03)
	c.Trace = len(c.CronJobs) == 0 && d.chance(0.1)
	if d.chance(0.1) {
		for _, v := range []string{"more-nodes", "double-rate", "no-failures"} {
			if d.chance(0.5) {
				c.Variants = append(c.Variants, v)
			}
		}
	}
}

// interruptions draws a spot reclaim process from every model the
// schema offers (a SkyPilot trace only for a fixed pool).
func interruptions(r *rand.Rand, fixed bool) *Interruptions {
	models := []string{"rate", "mtbf", "band", "times", "path"}
	if fixed {
		models = append(models, "skypilot")
	}
	in := &Interruptions{Model: models[r.IntN(len(models))]}
	switch in.Model {
	case "rate":
		in.Value = []string{"0.1", "0.5", "1"}[r.IntN(3)]
	case "mtbf":
		in.Value = []string{"1h", "3h", "12h"}[r.IntN(3)]
	case "band":
		in.Value = []string{"<5%", ">20%", "published-gpu-2023", "auto"}[r.IntN(4)]
	case "times", "path":
		in.Value = []string{"20m,1h", "45m", "10m,2h,2h30m"}[r.IntN(3)]
	}
	in.Notice = []string{"", "0s", "30s", "2m"}[r.IntN(4)]
	return in
}

// Features are the features a composition has, by the names of the
// coverage table.
func (c *Composition) Features() []string {
	set := map[string]bool{}
	add := func(f string) { set[f] = true }
	spot := false
	for _, p := range c.Pools {
		add("pool " + p.Kind)
		if p.MaxNodes > 0 {
			add("pool autoscaled")
		}
		if p.Failures != "" {
			add("node failures")
		}
		if p.Kind == "spot" {
			spot = true
			interruptionFeatures(p.Interruptions, add)
		}
	}
	for _, n := range c.NodePools {
		add("karpenter nodepool")
		if n.Consolidation {
			add("karpenter consolidation")
		}
		if n.Failures != "" {
			add("node failures")
		}
		if n.Spot {
			spot = true
			add("karpenter spot")
			interruptionFeatures(n.Interruptions, add)
		}
	}
	if p := c.Policy; p != nil {
		add(p.Kind)
		if p.Kind == "kueue" {
			if p.Cohort {
				add("kueue cohort")
			}
			if p.CohortQuota > 0 {
				add("kueue cohort quota")
			}
			for _, q := range p.Queues {
				if q.BorrowingLimit >= 0 {
					add("kueue borrowing limit")
				}
			}
			if p.Preemption {
				add("kueue preemption")
			}
			if p.FairSharing {
				add("kueue fair sharing")
			}
			if p.WaitForPodsReady {
				add("kueue waitForPodsReady")
			}
			if p.StrictFIFO {
				add("kueue StrictFIFO")
			}
			if p.Flavors {
				add("kueue flavor per pool")
			}
			if p.BatchClass {
				add("PriorityClass objects")
			}
		}
	}
	if len(c.CronJobs) > 0 {
		add("cronjobs")
	} else {
		for _, cl := range c.classes() {
			if cl.Replicas > 1 {
				add("gang")
			}
			if cl.GPUs > 1 {
				add("multi-GPU pods")
			}
			if cl.MIG != "" {
				add("MIG profile request")
			}
			if cl.Priority > 0 {
				add("priority class")
			}
		}
	}
	for _, s := range c.Services {
		add("service " + s.Scaler)
		if s.Scaler != "none" && s.Min == 0 {
			add("service scale to zero")
		}
		if s.Priority != 0 {
			add("service priority")
		}
		if s.PriorityClass && c.Policy != nil && c.Policy.Kind == "kueue" {
			add("PriorityClass objects")
		}
	}
	if c.Busy {
		add("busy profile")
	}
	for _, p := range c.Pools {
		if p.Kind == "mig" && p.MIGSingle != "" {
			add("MIG single strategy")
		}
	}
	if len(c.variants()) > 0 {
		add("variants")
	}
	if c.Trace && len(c.CronJobs) == 0 && len(c.Classes) > 0 {
		add("trace file")
	}
	// The combination users met trouble in: Kueue preemption while nodes
	// fail, a service of priority beside the jobs.
	if c.Policy != nil && c.Policy.Kind == "kueue" && c.Policy.Preemption && set["node failures"] && set["service priority"] {
		add("kueue preemption+failures+service")
	}
	if c.Preemption {
		add("priority preemption")
	}
	if c.Checkpoint {
		add("checkpoints")
	}
	if c.IgnoreDisruptions && c.Volcano == nil {
		add("ignore disruptions")
	}
	if c.Volcano != nil {
		add("volcano jobs")
	}
	if c.Horizon == "" {
		add("no horizon")
	} else {
		add("horizon")
	}
	if spot && c.Sensitivity {
		add("spot sensitivity")
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

func interruptionFeatures(in *Interruptions, add func(string)) {
	if in == nil {
		add("interruptions default (the measured spot preset)")
		return
	}
	add("interruptions " + in.Model)
	if in.Notice == "0s" {
		add("interruptions without notice")
	} else {
		add("interruptions with notice")
	}
}

// classes are the classes as rendered: a MIG request only while a MIG
// pool of the mixed strategy exists (the single strategy offers its
// instances as whole GPUs), a pin only while its pool exists.
func (c *Composition) classes() []Class {
	mig, pools := false, map[string]bool{}
	for _, p := range c.Pools {
		mig = mig || (p.Kind == "mig" && p.MIGSingle == "")
		pools[p.Name] = true
	}
	out := slices.Clone(c.Classes)
	for i := range out {
		if !mig {
			out[i].MIG = ""
		}
		if !pools[out[i].Pool] {
			out[i].Pool = ""
		}
	}
	return out
}

// variants are the variants as rendered: each only while what it changes
// exists.
func (c *Composition) variants() []string {
	var out []string
	for _, v := range c.Variants {
		switch v {
		case "more-nodes":
			if len(c.Pools) == 0 {
				continue
			}
		case "double-rate":
			if len(c.CronJobs) > 0 || len(c.Classes) == 0 || c.Trace {
				continue
			}
		case "no-failures":
			if len(c.Pools) == 0 || c.Pools[0].Failures == "" {
				continue
			}
		}
		out = append(out, v)
	}
	return out
}

// Size is how big a composition is, for the shrinker's report: pools
// (NodePools included), classes (CronJobs included), services.
func (c *Composition) Size() (pools, classes, services int) {
	return len(c.Pools) + len(c.NodePools), len(c.Classes) + len(c.CronJobs), len(c.Services)
}

// String is a one-line description.
func (c *Composition) String() string {
	p, cl, s := c.Size()
	return fmt.Sprintf("seed %d, %d pools, %d classes, %d services, horizon %q: %s", c.Seed, p, cl, s, c.Horizon, strings.Join(c.Features(), ", "))
}

// clone is a deep copy.
func (c *Composition) clone() *Composition {
	d := *c
	d.Pools = slices.Clone(c.Pools)
	for i := range d.Pools {
		if in := d.Pools[i].Interruptions; in != nil {
			x := *in
			d.Pools[i].Interruptions = &x
		}
	}
	d.NodePools = slices.Clone(c.NodePools)
	for i := range d.NodePools {
		if in := d.NodePools[i].Interruptions; in != nil {
			x := *in
			d.NodePools[i].Interruptions = &x
		}
	}
	d.Classes = slices.Clone(c.Classes)
	d.Variants = slices.Clone(c.Variants)
	d.Services = slices.Clone(c.Services)
	d.CronJobs = slices.Clone(c.CronJobs)
	if c.Policy != nil {
		p := *c.Policy
		p.Queues = slices.Clone(c.Policy.Queues)
		d.Policy = &p
	}
	if c.Volcano != nil {
		v := *c.Volcano
		d.Volcano = &v
	}
	return &d
}
