package scenarios

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// streamSynthetic is the first random stream of synthetic classes: class i
// draws from stream streamSynthetic+i of the run's seed.
const streamSynthetic = 100

type classGen struct {
	name        string
	queue       string
	priority    int32
	flags       cluster.JobFlag
	process     string
	ratePerMs   float64
	amplitude   float64
	peakHour    float64
	start       float64
	replicas    models.Sampler
	gpus        models.Sampler
	duration    models.Sampler
	cpuMilli    int64
	memMiB      int64
	mig         string
	gpuMemMiB   int64
	constraints *cluster.Constraints
	recovery    *cluster.Recovery
	training    *cluster.Training
	// minAvailable is the class's Volcano gang size (0: whole jobs).
	minAvailable int32

	rng  *rand.Rand
	next float64 // ms
	n    int
}

// classGen builds class i's generator (seed only matters for running).
func (s builder) classGen(i int, seed uint64) (*classGen, error) {
	c := &s.Spec.Workload.Synthetic.Classes[i]
	at := fmt.Sprintf("spec.workload.synthetic.classes[%d]", i)
	if !nameRE.MatchString(c.Name) {
		return nil, s.errAt(at+".name", "%q is not a valid class name (lower-case letters, digits, '-' and '.')", c.Name)
	}
	g := &classGen{name: c.Name, queue: c.Queue, priority: c.Priority}
	switch c.PreemptionPolicy {
	case "", PreemptLowerPriority:
	case PreemptNever:
		g.flags |= cluster.FlagPreemptNever
	default:
		return nil, s.errAt(at+".preemptionPolicy", "is %q; want %s or %s", c.PreemptionPolicy, PreemptLowerPriority, PreemptNever)
	}
	if g.queue == "" {
		g.queue = c.Name
	}
	a := &c.Arrival
	switch a.Process {
	case "poisson", "fixed":
	default:
		return nil, s.errAt(at+".arrival.process", "is %q; want poisson or fixed", a.Process)
	}
	if !(a.RatePerHour > 0) || math.IsInf(a.RatePerHour, 0) {
		return nil, s.errAt(at+".arrival.ratePerHour", "must be a positive number")
	}
	g.process, g.ratePerMs = a.Process, a.RatePerHour/float64(sim.Hour)
	if d := a.Diurnal; d != nil {
		if a.Process != "poisson" {
			return nil, s.errAt(at+".arrival.diurnal", "applies to a poisson process only")
		}
		if d.Amplitude < 0 || d.Amplitude > 1 {
			return nil, s.errAt(at+".arrival.diurnal.amplitude", "must be between 0 and 1")
		}
		if d.PeakHour < 0 || d.PeakHour >= 24 {
			return nil, s.errAt(at+".arrival.diurnal.peakHour", "must be in [0, 24)")
		}
		g.amplitude, g.peakHour = d.Amplitude, d.PeakHour
	}
	if a.Start != nil {
		if a.Start.Duration < 0 {
			return nil, s.errAt(at+".arrival.start", "%s is negative; the first arrival is at or after the start of the run", a.Start.Duration)
		}
		g.start = float64(a.Start.Millis())
	}
	var err error
	g.replicas = models.Constant{Value: 1}
	if c.Replicas != nil {
		if g.replicas, err = c.Replicas.sampler(true); err != nil {
			return nil, s.errAt(at+".replicas", "%v", err)
		}
		if lo := c.Replicas.lowest(); lo < 1 {
			return nil, s.errAt(at+".replicas", "a job has at least one pod, got %g", lo)
		}
		if hi := c.Replicas.highest(); hi > MaxReplicas {
			return nil, s.errAt(at+".replicas", "%g pods is more than %d, the most one job has", hi, MaxReplicas)
		}
	}
	g.gpus = models.Constant{Value: 0}
	if c.Pod.GPUs != nil {
		if g.gpus, err = c.Pod.GPUs.sampler(false); err != nil {
			return nil, s.errAt(at+".pod.gpus", "%v", err)
		}
		if err := checkGPUValues(c.Pod.GPUs); err != nil {
			return nil, s.errAt(at+".pod.gpus", "%v", err)
		}
	}
	if tr := c.Training; tr != nil {
		switch {
		case c.Duration != (DurationDist{}):
			return nil, s.errAt(at+".duration", "a training class's run time comes from its steps: give training or duration, not both")
		case tr.Steps <= 0:
			return nil, s.errAt(at+".training.steps", "must be positive")
		case tr.ComputePerStep.Duration <= 0:
			return nil, s.errAt(at+".training.computePerStep", "must be positive")
		case tr.GradientBytes.Sign() < 0:
			return nil, s.errAt(at+".training.gradientBytes", "must not be negative")
		}
		if tr.ComputePerStep.Duration < time.Millisecond {
			return nil, s.errAt(at+".training.computePerStep", "%s is below 1 ms, the shortest duration gpuplan represents", tr.ComputePerStep.Duration)
		}
		if tr.Steps > maxDurationMs/tr.ComputePerStep.Millis() {
			return nil, s.errAt(at+".training.steps", "%d steps of %s is more than 100 years", tr.Steps, tr.ComputePerStep.Duration)
		}
		grad, err := strict.QuantityIn(tr.GradientBytes, false, 1, MaxPodMemoryMiB<<20, "gradientBytes")
		if err != nil {
			return nil, s.errAt(at+".training.gradientBytes", "%v", err)
		}
		g.training = &cluster.Training{Steps: tr.Steps, ComputePerStep: tr.ComputePerStep.Millis(), GradientBytes: grad}
		g.duration = models.Constant{Value: float64(tr.Steps * tr.ComputePerStep.Millis())}
	} else {
		var field string
		if g.duration, field, err = c.Duration.sampler(); err != nil {
			return nil, s.errAt(s.subfield(at+".duration", field), "%v", err)
		}
	}
	g.mig = c.Pod.MIG
	if g.mig != "" && c.Pod.GPUs == nil {
		return nil, s.errAt(at+".pod.gpus", "a pod asking for MIG instances says how many (gpus)")
	}
	if g.mig != "" {
		if lo := c.Pod.GPUs.lowest(); lo < 1 {
			return nil, s.errAt(at+".pod.gpus", "MIG instances are whole: at least 1")
		}
	}
	if c.Pod.GPUMemory != nil {
		if g.gpuMemMiB, err = strict.QuantityIn(*c.Pod.GPUMemory, false, 1<<20, MaxPodMemoryMiB, "gpuMemory"); err != nil {
			return nil, s.errAt(at+".pod.gpuMemory", "%v", err)
		}
	}
	if g.cpuMilli, err = MilliCPU(c.Pod.CPU); err != nil {
		return nil, s.errAt(at+".pod.cpu", "%v", err)
	}
	if g.memMiB, err = MemoryMiB(c.Pod.Memory); err != nil {
		return nil, s.errAt(at+".pod.memory", "%v", err)
	}
	if g.constraints, err = constraintsFrom(c.NodeSelector, c.Affinity, c.Tolerations); err != nil {
		return nil, s.errAt(at, "%v", err)
	}
	if t := c.Topology; t != nil {
		r := &cluster.TASRequest{Mode: topology.TASRequired, Level: t.Required}
		if (t.Required == "") == (t.Preferred == "") {
			return nil, s.errAt(at+".topology", "give one of required and preferred (a level's node label key)")
		}
		if t.Preferred != "" {
			r.Mode, r.Level = topology.TASPreferred, t.Preferred
		}
		if g.constraints == nil {
			g.constraints = &cluster.Constraints{}
		}
		g.constraints.TAS = r
	}
	rec := c.Recovery
	if rec == nil {
		rec = s.Spec.Workload.Recovery
	}
	if g.recovery, err = s.recovery(at+".recovery", rec); err != nil {
		return nil, err
	}
	vat, vol := at+".volcano", c.Volcano
	if vol == nil {
		vat, vol = "spec.workload.volcano", s.Spec.Workload.Volcano
	}
	if g.recovery, g.minAvailable, err = s.volcano(vat, vol, rec, g.recovery); err != nil {
		return nil, err
	}
	g.rng = models.NewStream(seed, streamSynthetic+uint64(i))
	g.next = g.start
	g.advance()
	return g, nil
}

// lowest is the smallest value the distribution can give.
func (n *NumDist) lowest() float64 {
	lo := math.Inf(1)
	if n.Value != nil {
		lo = *n.Value
	}
	for i, v := range n.Values {
		if len(n.Weights) == 0 || n.Weights[i] > 0 {
			lo = min(lo, v)
		}
	}
	if n.Min != nil {
		lo = min(lo, math.Ceil(*n.Min))
	}
	return lo
}

func checkGPUValues(n *NumDist) error {
	var vals []float64
	if n.Value != nil {
		vals = append(vals, *n.Value)
	}
	vals = append(vals, n.Values...)
	for _, v := range vals {
		if v > 0 && v < 1 && math.Round(v*cluster.MilliGPU) < 1 {
			return fmt.Errorf("a GPU share of %g is below 1/1000 of a GPU", v)
		}
		if v >= 1 && v != math.Trunc(v) {
			return fmt.Errorf("%g GPUs: a pod asks for whole GPUs, or a share below 1 of one GPU", v)
		}
		if v > MaxPodGPUs {
			return fmt.Errorf("%g GPUs is more than a node can have (%d)", v, MaxPodGPUs)
		}
	}
	if hi := n.highest(); hi > MaxPodGPUs {
		return fmt.Errorf("%g GPUs is more than a node can have (%d)", hi, MaxPodGPUs)
	}
	return nil
}

// advance draws the time of the class's next arrival after g.next.
func (g *classGen) advance() {
	if g.n == 0 && g.process == "fixed" {
		return // the first fixed arrival is at the start
	}
	if g.process == "fixed" {
		g.next += 1 / g.ratePerMs
		return
	}
	peak := g.ratePerMs * (1 + g.amplitude)
	for {
		g.next += g.rng.ExpFloat64() / peak
		if g.amplitude == 0 {
			return
		}
		h := math.Mod(g.next/float64(sim.Hour), 24)
		rate := g.ratePerMs * (1 + g.amplitude*math.Cos(2*math.Pi*(h-g.peakHour)/24))
		if g.rng.Float64()*peak <= rate {
			return
		}
	}
}

func (g *classGen) job(j *cluster.JobSpec) {
	*j = cluster.JobSpec{
		Name:         g.name + "-" + strconv.Itoa(g.n),
		Queue:        g.queue,
		Priority:     g.priority,
		Flags:        g.flags,
		Submit:       int64(g.next),
		Replicas:     int32(g.replicas.Sample(g.rng)),
		Constraints:  g.constraints,
		Recovery:     g.recovery,
		Training:     g.training,
		MinAvailable: g.minAvailable,
		Pod:          cluster.PodSpec{MilliCPU: g.cpuMilli, MemoryMiB: g.memMiB, MIG: g.mig, GPUMemMiB: g.gpuMemMiB},
	}
	setGPUs(&j.Pod, g.gpus.Sample(g.rng))
	j.Duration = max(1, int64(math.Round(g.duration.Sample(g.rng))))
	g.n++
}

// setGPUs puts a GPU count on a pod: whole GPUs from 1 up, a share of
// one GPU (milli-GPU) below 1, none at 0.
func setGPUs(p *cluster.PodSpec, n float64) {
	if n >= 1 {
		p.GPUs = int32(n)
	} else if n > 0 {
		p.GPUMilli = int32(math.Round(n * cluster.MilliGPU))
	}
}

// Generator is a synthetic workload: every class's arrivals merged in time
// order (ties to the earlier class). It is a sim.JobSource.
type Generator struct {
	classes []*classGen
	h       classHeap
	limit   int
	horizon int64
	n       int
}

// generator builds the scenario's synthetic workload for a seed.
func (s builder) generator(seed uint64, horizon int64) (*Generator, error) {
	sy := s.Spec.Workload.Synthetic
	g := &Generator{limit: sy.Jobs, horizon: horizon}
	for i := range sy.Classes {
		c, err := s.classGen(i, seed)
		if err != nil {
			return nil, err
		}
		g.classes = append(g.classes, c)
		g.h.ids = append(g.h.ids, i)
	}
	g.h.g = g
	heap.Init(&g.h)
	return g, nil
}

// Next implements sim.JobSource.
func (g *Generator) Next(j *cluster.JobSpec) (bool, error) {
	if len(g.h.idx()) == 0 || (g.limit > 0 && g.n >= g.limit) {
		return false, nil
	}
	c := g.classes[g.h.idx()[0]]
	if g.horizon > 0 && int64(c.next) >= g.horizon {
		return false, nil
	}
	c.job(j)
	g.n++
	c.advance()
	heap.Fix(&g.h, 0)
	return true, nil
}

// Describe lists the classes for reports.
func (g *Generator) Describe() string {
	var parts []string
	for _, c := range g.classes {
		parts = append(parts, fmt.Sprintf("%s (%s %.3g/h)", c.name, c.process, c.ratePerMs*float64(sim.Hour)))
	}
	return strings.Join(parts, ", ")
}

type classHeap struct {
	ids []int
	g   *Generator
}

func (h *classHeap) idx() []int { return h.ids }
func (h classHeap) Len() int    { return len(h.ids) }
func (h classHeap) Less(a, b int) bool {
	ca, cb := h.g.classes[h.ids[a]], h.g.classes[h.ids[b]]
	if ca.next != cb.next {
		return ca.next < cb.next
	}
	return h.ids[a] < h.ids[b]
}
func (h classHeap) Swap(a, b int) { h.ids[a], h.ids[b] = h.ids[b], h.ids[a] }
func (h *classHeap) Push(x any)   { h.ids = append(h.ids, x.(int)) }
func (h *classHeap) Pop() any {
	n := len(h.ids)
	x := h.ids[n-1]
	h.ids = h.ids[:n-1]
	return x
}
