package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// InflateConfig is the FGD paper's workload-inflation experiment: pods are
// shuffled, cloned (drawn uniformly from the original list) until their GPU
// requests reach Target times the cluster's GPUs, and scheduled one after
// another, never deleted; the allocation and fragmentation are recorded as
// the load arrives.
type InflateConfig struct {
	Pools []cluster.PoolSpec
	// Pods are one-pod jobs; submit times and durations are ignored.
	Pods    []cluster.JobSpec
	Plugins []scheduler.PluginConfig
	Seed    uint64
	// Target is the arrived GPU demand to stop at, as a multiple of the
	// cluster's GPUs (the paper uses 1.3).
	Target float64
	// TieBreak between equal scores: nodeOrder (default: a fixed random order
	// of the nodes drawn from the seed, which is what the paper's simulator
	// does by naming nodes after a seeded permutation), random (uniform per
	// decision) or lowestIndex.
	TieBreak string
}

// InflatePoint is the cluster when the arrived GPU demand first reached
// Arrived (a multiple of the cluster's GPUs; the point at the target is the
// final state, which may be up to half a percent short of it).
type InflatePoint struct {
	Arrived float64 `json:"arrived"`
	// AllocationRatio is allocated GPUs over all GPUs.
	AllocationRatio float64 `json:"allocation_ratio"`
	// FragGPUs is the cluster's fragmented GPU capacity, in GPUs.
	FragGPUs float64 `json:"frag_gpus"`
	// FragRatio is fragmented over unallocated GPU capacity.
	FragRatio float64 `json:"frag_ratio"`
}

// InflateResult is the outcome of an inflation run.
type InflateResult struct {
	Points        []InflatePoint
	Pods          int // pods arrived, clones included
	Clones        int
	Failed        int // pods that found no node
	CapacityGPUs  int64
	ArrivedGPUs   float64
	AllocatedGPUs float64
	Mix           *models.PodMix
}

// Inflate runs the inflation experiment.
func Inflate(cfg InflateConfig) (*InflateResult, error) {
	if len(cfg.Pods) == 0 {
		return nil, fmt.Errorf("inflation needs pods")
	}
	if !(cfg.Target > 0) || math.IsInf(cfg.Target, 0) {
		return nil, fmt.Errorf("inflation target %g must be a positive number", cfg.Target)
	}
	c, err := cluster.New(cfg.Pools)
	if err != nil {
		return nil, err
	}
	var capMilli int64
	for i := range c.Pools {
		capMilli += int64(c.Pools[i].Spec.Nodes) * int64(c.Pools[i].Spec.GPUsPerNode) * cluster.MilliGPU
	}
	if capMilli == 0 {
		return nil, fmt.Errorf("the cluster has no GPUs")
	}
	shapes := map[models.PodShape]int{}
	for i := range cfg.Pods {
		p := &cfg.Pods[i]
		if p.Replicas != 1 {
			return nil, fmt.Errorf("pod %s: the inflation experiment takes one-pod jobs", p.Name)
		}
		if err := p.Pod.Validate(); err != nil {
			return nil, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		shapes[ShapeOf(p)]++
	}
	mix, err := models.NewPodMix(shapes, MixCoverage)
	if err != nil {
		return nil, err
	}
	handle := &scheduler.Handle{Rand: models.NewStream(cfg.Seed, streamScheduler), Mix: mix, MixVersion: 1}
	fw, err := newFramework(c, cfg.Plugins, handle, cfg.Seed, cfg.TieBreak, TieBreakNodeOrder)
	if err != nil {
		return nil, err
	}

	// Originals in name order, shuffled; then clones drawn from the name
	// order until the next one would pass the target.
	byName := make([]*cluster.JobSpec, len(cfg.Pods))
	var total int64
	for i := range cfg.Pods {
		byName[i] = &cfg.Pods[i]
		total += cfg.Pods[i].Pod.MilliGPUs()
	}
	slices.SortStableFunc(byName, func(a, b *cluster.JobSpec) int { return strings.Compare(a.Name, b.Name) })
	order := slices.Clone(byName)
	shuffle := models.NewStream(cfg.Seed, streamShuffle)
	shuffle.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	target := int64(cfg.Target * float64(capMilli))
	clone := models.NewStream(cfg.Seed, streamInflation)
	res := &InflateResult{CapacityGPUs: capMilli / cluster.MilliGPU, Mix: mix}
	for total < target {
		p := byName[clone.IntN(len(byName))]
		if total+p.Pod.MilliGPUs() > target {
			break
		}
		total += p.Pod.MilliGPUs()
		order = append(order, p)
		res.Clones++
	}

	in := &inflation{c: c, mix: mix, capMilli: capMilli, nodeFrag: make([]float64, len(c.Nodes))}
	for n := range c.Nodes {
		in.nodeFrag[n] = models.Fragmentation(c.FragState(int32(n)), mix)
		in.frag += in.nodeFrag[n]
	}
	steps := int(math.Floor(cfg.Target*100 + 1e-9))
	res.Points = make([]InflatePoint, 0, steps+1)
	res.Points = append(res.Points, in.point(0))
	var arrived int64
	next := 1
	info := &scheduler.JobInfo{}
	for i, p := range order {
		*info = scheduler.JobInfo{ID: int32(i), Spec: p, FirstReason: -1, LastReason: -1}
		placed, st, err := fw.Attempt(0, info, in)
		if err != nil {
			return nil, invariant(err)
		}
		if err := st.Err(); err != nil {
			return nil, err
		}
		if placed == 0 {
			res.Failed++
		}
		arrived += p.Pod.MilliGPUs()
		for next <= steps && arrived*100 >= int64(next)*capMilli {
			res.Points = append(res.Points, in.point(next))
			next++
		}
	}
	// The last clone that would pass the target is not added, so the
	// arrived demand may end a hair under it: within half a percent, the
	// final state stands for the target.
	if next == steps && arrived*200 >= int64(2*steps-1)*capMilli {
		res.Points = append(res.Points, in.point(steps))
	}
	res.Pods = len(order)
	res.ArrivedGPUs = float64(arrived) / cluster.MilliGPU
	res.AllocatedGPUs = float64(in.alloc) / cluster.MilliGPU
	if err := in.check(); err != nil {
		return nil, invariant(err)
	}
	return res, nil
}

type inflation struct {
	c        *cluster.Cluster
	mix      *models.PodMix
	capMilli int64
	alloc    int64
	nodeFrag []float64
	frag     float64
	placed   []cluster.Placement
	pods     []*cluster.PodSpec
}

// Bind implements scheduler.Binder: it keeps the allocation and the
// fragmentation of the changed node up to date.
func (in *inflation) Bind(job *scheduler.JobInfo, pls []cluster.Placement) error {
	for _, pl := range pls {
		in.alloc += int64(pl.Milli)
		n := pl.Node
		in.frag -= in.nodeFrag[n]
		in.nodeFrag[n] = models.Fragmentation(in.c.FragState(n), in.mix)
		in.frag += in.nodeFrag[n]
		in.placed = append(in.placed, pl)
		in.pods = append(in.pods, &job.Spec.Pod)
	}
	return nil
}

func (in *inflation) point(k int) InflatePoint {
	idle := float64(in.capMilli - in.alloc)
	p := InflatePoint{
		Arrived:         float64(k) / 100,
		AllocationRatio: round4(float64(in.alloc) / float64(in.capMilli)),
		FragGPUs:        round4(in.frag / cluster.MilliGPU),
	}
	if idle > 0 {
		p.FragRatio = round4(in.frag / idle)
	}
	return p
}

// check recomputes the allocation from the placements and the cluster.
func (in *inflation) check() error {
	// A node offers CapMilli (less than its GPUs when a MIG layout leaves
	// slices unused): what its pods hold is CapMilli - FreeMilli.
	var held int64
	for n := range in.c.Nodes {
		held += in.c.Nodes[n].CapMilli - in.c.Nodes[n].FreeMilli
	}
	if held != in.alloc {
		return fmt.Errorf("inflation counted %d milli-GPU allocated, the nodes hold %d", in.alloc, held)
	}
	return nil
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
