package reports

import (
	"sort"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
)

// Pricing is what a run's nodes cost: one entry per pool of the result,
// and the ratios that split a node's price over its resources.
type Pricing struct {
	Pools     []PoolPricing
	BaseRates models.BaseRates
	// CPUMemory, when set (VCPU > 0), splits a GPU node's price so that
	// its vCPUs and memory cost what they cost on GPU-less instances and
	// its GPUs carry the rest; otherwise the base rates set the ratio
	// (OpenCost's way).
	CPUMemory models.CPUMemoryRates
	// Sources describe the price catalog.
	Sources []string
	// IdleDistribution is how the showback spreads idle cost over teams
	// (IdleByAllocation, the default, or IdleEven); Budgets are USD per
	// team (queue) for 30 days, prorated to the run.
	IdleDistribution string
	Budgets          map[string]float64
	// Commitments are reserved instances, Savings Plans and committed-use
	// discounts the bill is read with (commitments.go).
	Commitments []PricedCommitment
	// AdviseDiscount, when positive, asks for a spend commitment's
	// recommendation at that discount (commitadvice.go).
	AdviseDiscount float64
}

// PoolPricing is one pool's node price and how it was found.
type PoolPricing struct {
	PerHour float64
	// OnDemandPerHour is the node's on-demand price when known (0: take
	// PerHour): a spot node's CPU and memory get the node's discount.
	OnDemandPerHour float64
	CapacityType    string
	Basis           string
	// Group is the autoscaler or NodePool of the pool ("" none).
	Group string
	// Interruptions and Failures name the models used ("" none).
	Interruptions, Failures string
	// BlockStart and BlockEnd are a capacity block's window (BlockEnd 0:
	// none): its nodes are paid for the whole window, within the run,
	// whether present or not.
	BlockStart, BlockEnd sim.Time
	// Held is a capacity reservation a NodePool launches into: that many
	// nodes paid for the whole run, launched or not (0: none).
	Held int
	// DeallocatedDiskPerHour is what an Azure spot pool with the eviction
	// policy Deallocate pays an hour for each evicted node's OS disk while
	// it is stopped-deallocated (0: the pool deletes its evicted nodes).
	DeallocatedDiskPerHour float64
}

// paidNodeHours is what a pool of nodes nodes is billed for: a capacity
// block's whole window within the run [0, end); a NodePool's reservation
// its nodes over the whole run; else the node-hours used.
func (pp *PoolPricing) paidNodeHours(used float64, nodes int, end sim.Time) float64 {
	switch {
	case pp.BlockEnd > 0:
		held := max(min(pp.BlockEnd, end)-pp.BlockStart, 0)
		return float64(nodes) * float64(held) / float64(sim.Hour)
	case pp.Held > 0:
		return float64(pp.Held) * float64(end) / float64(sim.Hour)
	}
	return used
}

// CostSummary is the FinOps view of a run, in USD. Allocation follows
// OpenCost: a node's price is split over its GPUs, vCPUs and memory by the
// base rates; a pod pays for what it requests (its usage is its request
// here) for as long as it holds it, a GPU share or MIG instance its
// fraction of the GPU; what no pod holds is idle.
type CostSummary struct {
	Currency string  `json:"currency"`
	Total    float64 `json:"total"`
	// Allocated is what the pods pay; Idle the rest, IdleGPU its GPU part.
	Allocated float64 `json:"allocated"`
	Idle      float64 `json:"idle"`
	IdleGPU   float64 `json:"idleGPU"`
	// UsefulGPUHours is the GPU-hours of work completed jobs needed;
	// CostPerUsefulGPUHour divides the total by it (the whole bill: in a
	// run with services too, compare ByWorkload's figures, each side's
	// share over its own work, instead).
	UsefulGPUHours       float64 `json:"usefulGPUHours"`
	CostPerUsefulGPUHour float64 `json:"costPerUsefulGPUHour"`
	// Lost is work lost to disruptions (since the last checkpoint, and
	// restores); Checkpoint the time spent writing checkpoints.
	LostGPUHours       float64    `json:"lostGPUHours"`
	LostCost           float64    `json:"lostCost"`
	CheckpointGPUHours float64    `json:"checkpointGPUHours"`
	CheckpointCost     float64    `json:"checkpointCost"`
	ByPool             []CostLine `json:"byPool"`
	ByCapacityType     []CostLine `json:"byCapacityType"`
	ByInstanceType     []CostLine `json:"byInstanceType"`
	ByGroup            []CostLine `json:"byGroup,omitempty"`
	ByQueue            []CostLine `json:"byQueue"`
	// ByWorkload splits the bill between training (jobs) and inference
	// (services' replicas), when the run has services.
	ByWorkload []WorkloadCost `json:"byWorkload,omitempty"`
	// Unpriced lists pools with no price: their cost is not counted.
	Unpriced []string `json:"unpriced,omitempty"`
	// Showback is the bill shown back to teams, idle cost included.
	Showback *Showback `json:"showback,omitempty"`
	// GPURates is the effective price of a GPU-hour each pool's split
	// used, by GPU model and capacity type.
	GPURates []GPURate `json:"gpuRates,omitempty"`
	// Commitments is what the commitments did to the bill, when there
	// are any: Total stays the bill at list prices.
	Commitments *CommitmentSummary `json:"commitments,omitempty"`
	// CommitmentAdvice is the recommended spend commitment, when asked.
	CommitmentAdvice *CommitmentAdvice `json:"commitmentAdvice,omitempty"`
	Model            string            `json:"model"`
	Sources          []string          `json:"sources,omitempty"`
}

// CostLine is one line of a cost breakdown.
type CostLine struct {
	Name         string  `json:"name"`
	CapacityType string  `json:"capacityType,omitempty"`
	InstanceType string  `json:"instanceType,omitempty"`
	PricePerHour float64 `json:"pricePerHour,omitempty"`
	// OnDemandPricePerHour is a spot pool's on-demand price, when known.
	OnDemandPricePerHour float64 `json:"onDemandPricePerHour,omitempty"`
	PriceBasis           string  `json:"priceBasis,omitempty"`
	NodeHours            float64 `json:"nodeHours,omitempty"`
	GPUHours             float64 `json:"gpuHours"`
	Cost                 float64 `json:"cost"`
	Allocated            float64 `json:"allocated"`
	Idle                 float64 `json:"idle"`
	IdleGPU              float64 `json:"idleGPU"`
	LostCost             float64 `json:"lostCost"`
	// DeallocatedHours are node-hours an Azure spot pool's evicted nodes
	// spent stopped-deallocated (eviction policy Deallocate), DiskCost what
	// their OS disks billed meanwhile (in Cost, and in Idle: no pod holds
	// a stopped node).
	DeallocatedHours float64 `json:"deallocatedHours,omitempty"`
	DiskCost         float64 `json:"diskCost,omitempty"`
}

// GPURate is the price of one GPU-hour in a pool, after the split.
type GPURate struct {
	GPUModel     string  `json:"gpuModel"`
	CapacityType string  `json:"capacityType"`
	Pool         string  `json:"pool"`
	NodePerHour  float64 `json:"nodePricePerHour"`
	PerGPUHour   float64 `json:"perGPUHour"`
	// GPUShare is the part of the node's price its GPUs carry.
	GPUShare float64 `json:"gpuShare"`
}

// CostModel says in words how cost is allocated with OpenCost's split.
const CostModel = "OpenCost allocation: node price split over GPU, vCPU and memory by base rates; pods pay their requests (usage = requests) while held; GPU shares and MIG instances pay their fraction; the rest is idle"

// CostModelGPUResidual says it for the split that puts a GPU node's cost
// on its GPUs.
const CostModelGPUResidual = "GPU nodes' prices split so the GPUs carry what they cost: vCPUs and memory at the rates of GPU-less instances of the same provider (at the node's own discount), the GPUs the rest; nodes without GPUs split by OpenCost's base rates; pods pay their requests (usage = requests) while held; GPU shares and MIG instances pay their fraction; the rest is idle"

// poolRates is one pool's price per resource-ms: milli-GPU, milli-CPU, MiB.
type poolRates [3]float64

// splitOf is how a pool's node price divides over its resources.
func splitOf(p *sim.PoolResult, pp PoolPricing, pr *Pricing) models.NodePriceSplit {
	s := p.Spec
	vcpus, gib := float64(s.MilliCPU)/1000, float64(s.MemoryMiB)/1024
	if pr.CPUMemory.VCPU > 0 {
		return models.SplitGPUResidual(pr.CPUMemory, pr.BaseRates, pp.PerHour, pp.OnDemandPerHour, s.GPUsPerNode, vcpus, gib)
	}
	return pr.BaseRates.Split(pp.PerHour, s.GPUsPerNode, vcpus, gib)
}

func ratesOf(p *sim.PoolResult, pp PoolPricing, pr *Pricing) poolRates {
	split := splitOf(p, pp, pr)
	const ms = float64(sim.Hour)
	return poolRates{split.PerGPU / 1000 / ms, split.PerVCPU / 1000 / ms, split.PerGiB / 1024 / ms}
}

func (r poolRates) price(x [3]int64) float64 {
	return r[0]*float64(x[0]) + r[1]*float64(x[1]) + r[2]*float64(x[2])
}

func allRates(res *sim.Result, pr *Pricing) []poolRates {
	rates := make([]poolRates, len(res.Pools))
	for i := range res.Pools {
		if i < len(pr.Pools) {
			rates[i] = ratesOf(&res.Pools[i], pr.Pools[i], pr)
		}
	}
	return rates
}

// JobCosts prices each job of a run: what it paid, and the part lost to
// disruptions. Jobs that held nothing cost 0.
func JobCosts(res *sim.Result, pr *Pricing) (cost, lost []float64) {
	rates := allRates(res, pr)
	cost, lost = make([]float64, res.NumJobs()), make([]float64, res.NumJobs())
	for i, j := range res.Records() {
		for u := range j.Usage() {
			cost[i] += rates[u.Pool].price(u.Held)
			lost[i] += rates[u.Pool].price(u.Lost)
		}
	}
	return cost, lost
}

// Cost computes the FinOps summary of a run.
func Cost(res *sim.Result, pr *Pricing) *CostSummary {
	cs := &CostSummary{Currency: "USD", Model: CostModel, Sources: pr.Sources}
	if pr.CPUMemory.VCPU > 0 {
		cs.Model = CostModelGPUResidual + " (" + pr.CPUMemory.Basis + ")"
	}
	b := &costBook{cs: cs, rates: allRates(res, pr),
		byCT: map[string]*costAcc{}, byIT: map[string]*costAcc{}, byGroup: map[string]*costAcc{}, byQueue: map[string]*costAcc{},
		poolAlloc: make([]float64, len(res.Pools)), poolLost: make([]float64, len(res.Pools)),
		jobAlloc: map[string]float64{}, svcAlloc: map[string]float64{}}
	jobCost, jobLost := JobCosts(res, pr)
	b.jobs(res, jobCost, jobLost)
	if len(res.Services) > 0 {
		b.training(res, jobCost, jobLost)
	}
	b.services(res, pr)
	b.pools(res, pr)
	b.finish(res, pr)
	return cs
}

// costAcc is one line of a grouping as Cost adds to it; order ranks the
// lines of a grouping that keeps its first-seen order.
type costAcc struct {
	line  CostLine
	order int
}

// costBook is what Cost adds up as it goes through the jobs, the services
// and the pools: the summary, the lines by capacity type, instance type,
// group and queue, each pool's cost of pods (allocated) and of lost work,
// and the split between training and inference.
type costBook struct {
	cs                           *CostSummary
	rates                        []poolRates
	byCT, byIT, byGroup, byQueue map[string]*costAcc
	poolAlloc, poolLost          []float64
	kinds                        [2]WorkloadCost
	jobAlloc, svcAlloc           map[string]float64
}

const gpuMs = float64(sim.Hour) * 1000

// group is the line of m for key, added (with order) when new.
func group(m map[string]*costAcc, key string, order int) *CostLine {
	a := m[key]
	if a == nil {
		a = &costAcc{line: CostLine{Name: key}, order: order}
		m[key] = a
	}
	return &a.line
}

// addLine adds l's hours and costs to dst.
func addLine(dst *CostLine, l *CostLine) {
	dst.NodeHours += l.NodeHours
	dst.GPUHours += l.GPUHours
	dst.Cost += l.Cost
	dst.Allocated += l.Allocated
	dst.Idle += l.Idle
	dst.IdleGPU += l.IdleGPU
	dst.LostCost += l.LostCost
	dst.DeallocatedHours += l.DeallocatedHours
	dst.DiskCost += l.DiskCost
}

// jobs adds each job's cost to its queue and its pods' usage to their
// pools, with the GPU-hours lost, checkpointed and (completed) useful.
func (b *costBook) jobs(res *sim.Result, jobCost, jobLost []float64) {
	cs, rates := b.cs, b.rates
	for i, j := range res.Records() {
		q := group(b.byQueue, j.Queue, 0)
		q.Cost += jobCost[i]
		q.Allocated += jobCost[i]
		q.LostCost += jobLost[i]
		for u := range j.Usage() {
			b.poolAlloc[u.Pool] += rates[u.Pool].price(u.Held)
			b.poolLost[u.Pool] += rates[u.Pool].price(u.Lost)
			q.GPUHours += float64(u.Held[sim.ResGPU]) / gpuMs
			cs.LostGPUHours += float64(u.Lost[sim.ResGPU]) / gpuMs
			cs.CheckpointGPUHours += float64(u.Checkpoint[sim.ResGPU]) / gpuMs
			cs.CheckpointCost += rates[u.Pool].price(u.Checkpoint)
		}
		if j.Outcome == sim.Completed {
			cs.UsefulGPUHours += float64(j.Duration) * float64(j.AllocMilli) / gpuMs
		}
	}
}

// training adds the jobs to the training side of the workload split (a
// run with services only).
func (b *costBook) training(res *sim.Result, jobCost, jobLost []float64) {
	b.kinds[0].Kind, b.kinds[1].Kind = KindTraining, KindInference
	for i, j := range res.Records() {
		b.jobAlloc[j.Queue] += jobCost[i]
		b.kinds[0].Allocated += jobCost[i]
		b.kinds[0].LostCost += jobLost[i]
		for u := range j.Usage() {
			b.kinds[0].GPUHours += float64(u.Held[sim.ResGPU]) / gpuMs
			b.kinds[0].GPUCost += b.rates[u.Pool][sim.ResGPU] * float64(u.Held[sim.ResGPU])
		}
	}
}

// services adds the services' replica pods the same way, under their
// queue, and to the inference side of the workload split.
func (b *costBook) services(res *sim.Result, pr *Pricing) {
	rates := b.rates
	svcCost, svcGPU, svcLost := serviceCosts(res, pr)
	for i := range res.Services {
		sv := &res.Services[i]
		q := group(b.byQueue, sv.Queue, 0)
		q.Cost += svcCost[i]
		q.Allocated += svcCost[i]
		q.LostCost += svcLost[i]
		b.svcAlloc[sv.Queue] += svcCost[i]
		b.kinds[1].Allocated += svcCost[i]
		b.kinds[1].GPUCost += svcGPU[i]
		b.kinds[1].LostCost += svcLost[i]
		b.kinds[1].RequestsServed += sv.Served
		for _, u := range sv.Usage {
			b.poolAlloc[u.Pool] += rates[u.Pool].price(u.Held)
			b.poolLost[u.Pool] += rates[u.Pool].price(u.Lost)
			q.GPUHours += float64(u.Held[sim.ResGPU]) / gpuMs
			b.kinds[1].GPUHours += float64(u.Held[sim.ResGPU]) / gpuMs
		}
	}
}

// pools prices each pool's node-hours, splits them into allocated and
// idle, adds each to the totals and its capacity type's, instance type's
// and group's lines, and lists the GPU rates.
func (b *costBook) pools(res *sim.Result, pr *Pricing) {
	cs, rates := b.cs, b.rates
	for i := range res.Pools {
		p := &res.Pools[i]
		var pp PoolPricing
		if i < len(pr.Pools) {
			pp = pr.Pools[i]
		}
		if pp.PerHour == 0 {
			cs.Unpriced = append(cs.Unpriced, p.Spec.Name)
		}
		l := CostLine{Name: p.Spec.Name, CapacityType: pp.CapacityType, InstanceType: p.Spec.InstanceType, OnDemandPricePerHour: pp.OnDemandPerHour,
			PricePerHour: pp.PerHour, PriceBasis: pp.Basis, NodeHours: p.Usage.NodeHours,
			GPUHours: float64(p.SuppliedMilliMs) / gpuMs}
		l.Cost = pp.paidNodeHours(p.Usage.NodeHours, p.Spec.Nodes, res.End) * pp.PerHour
		if pp.DeallocatedDiskPerHour > 0 {
			l.DeallocatedHours = float64(p.Capacity.DeallocatedMs) / float64(sim.Hour)
			l.DiskCost = l.DeallocatedHours * pp.DeallocatedDiskPerHour
			l.Cost += l.DiskCost
		}
		l.Allocated = b.poolAlloc[i]
		l.Idle = l.Cost - l.Allocated
		l.IdleGPU = rates[i][0] * float64(p.SuppliedMilliMs-p.AllocatedMilliMs)
		l.LostCost = b.poolLost[i]
		cs.ByPool = append(cs.ByPool, l)
		if g := p.Spec.GPUsPerNode; g > 0 && pp.PerHour > 0 {
			split := splitOf(p, pp, pr)
			ct := pp.CapacityType
			if ct == "" {
				ct = models.OnDemand
			}
			cs.GPURates = append(cs.GPURates, GPURate{GPUModel: p.Spec.GPUModel, CapacityType: ct, Pool: p.Spec.Name,
				NodePerHour: pp.PerHour, PerGPUHour: round(split.PerGPU, 4), GPUShare: round(split.PerGPU*float64(g)/pp.PerHour, 4)})
		}
		cs.Total += l.Cost
		cs.Allocated += l.Allocated
		cs.Idle += l.Idle
		cs.IdleGPU += l.IdleGPU
		cs.LostCost += l.LostCost
		ct := pp.CapacityType
		if ct == "" {
			ct = models.OnDemand
		}
		addLine(group(b.byCT, ct, 0), &l)
		it := p.Spec.InstanceType
		if it == "" {
			it = "(none)"
		}
		addLine(group(b.byIT, it, 0), &l)
		if pp.Group != "" {
			addLine(group(b.byGroup, pp.Group, i), &l)
		}
	}
}

// costLines are m's lines sorted by name (by order first when byOrder),
// rounded.
func costLines(m map[string]*costAcc, byOrder bool) []CostLine {
	out := make([]*costAcc, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if byOrder && out[i].order != out[j].order {
			return out[i].order < out[j].order
		}
		return out[i].line.Name < out[j].line.Name
	})
	res := make([]CostLine, len(out))
	for i, a := range out {
		res[i] = roundLine(a.line)
	}
	return res
}

// finish rounds the summary, sorts its groupings, and adds the showback
// (budgets prorated to the run's length) and the workload split.
func (b *costBook) finish(res *sim.Result, pr *Pricing) {
	cs := b.cs
	if cs.UsefulGPUHours > 0 {
		cs.CostPerUsefulGPUHour = cs.Total / cs.UsefulGPUHours
	}
	cs.Commitments = commitmentsOf(res, pr, cs.Total)
	cs.CommitmentAdvice = commitmentAdviceOf(res, pr)
	cs.ByCapacityType = costLines(b.byCT, false)
	cs.ByInstanceType = costLines(b.byIT, false)
	cs.ByGroup = costLines(b.byGroup, true)
	cs.ByQueue = costLines(b.byQueue, false)
	for i := range cs.ByPool {
		cs.ByPool[i] = roundLine(cs.ByPool[i])
	}
	cs.Total, cs.Allocated, cs.Idle, cs.IdleGPU = round(cs.Total, 4), round(cs.Allocated, 4), round(cs.Idle, 4), round(cs.IdleGPU, 4)
	cs.LostCost, cs.CheckpointCost = round(cs.LostCost, 4), round(cs.CheckpointCost, 4)
	cs.LostGPUHours, cs.CheckpointGPUHours = round(cs.LostGPUHours, 4), round(cs.CheckpointGPUHours, 4)
	cs.UsefulGPUHours, cs.CostPerUsefulGPUHour = round(cs.UsefulGPUHours, 4), round(cs.CostPerUsefulGPUHour, 4)
	budgets := map[string]float64{}
	for t, bu := range pr.Budgets {
		budgets[t] = round(bu*float64(res.End)/float64(30*24*sim.Hour), 2)
	}
	// The rule was checked when the scenario was read.
	cs.Showback, _ = ShowbackOf(cs, pr.IdleDistribution, budgets)
	if len(res.Services) > 0 {
		cs.ByWorkload = workloadSplit(cs, &b.kinds, b.jobAlloc, b.svcAlloc)
	}
}

func roundLine(l CostLine) CostLine {
	l.NodeHours, l.GPUHours = round(l.NodeHours, 4), round(l.GPUHours, 4)
	l.Cost, l.Allocated, l.Idle, l.IdleGPU, l.LostCost = round(l.Cost, 4), round(l.Allocated, 4), round(l.Idle, 4), round(l.IdleGPU, 4), round(l.LostCost, 4)
	l.DeallocatedHours, l.DiskCost = round(l.DeallocatedHours, 4), round(l.DiskCost, 4)
	return l
}
