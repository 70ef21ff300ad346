package serving

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// SimConfig is one window of a service for the request-level simulator.
type SimConfig struct {
	// Replicas serve one shared FCFS queue (a load balancer that sends each
	// request to the first free replica).
	Replicas int
	Batch    Batch
	// ExpService draws each batch's service time from an exponential with
	// the model's mean; otherwise it is the model's time exactly.
	ExpService bool
	// QueueLimit drops an arrival that finds this many waiting (0: none).
	QueueLimit int
	// TimeoutMs drops a request that has waited longer when its batch
	// would start (0: none).
	TimeoutMs float64
	// StepMs and Rates give the arrival rate (requests per second),
	// constant over each step: a Poisson process, piecewise.
	StepMs float64
	Rates  []float64
}

// SimResult is what the window served.
type SimResult struct {
	// LatencyMs and WaitMs of each served request, in the order their
	// batches started.
	LatencyMs, WaitMs []float64
	Arrived, Dropped  int
	Batches           int
}

// MeanBatch is the mean batch size.
func (r SimResult) MeanBatch() float64 {
	if r.Batches == 0 {
		return 0
	}
	return float64(len(r.LatencyMs)) / float64(r.Batches)
}

// maxSimArrivals bounds one window: the simulator is for short windows.
const maxSimArrivals = 50_000_000

type timeHeap []float64

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *timeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Simulate runs the window request by request.
func Simulate(cfg SimConfig, rng *rand.Rand) (SimResult, error) {
	if err := cfg.Batch.Validate(); err != nil {
		return SimResult{}, err
	}
	if cfg.Replicas < 1 || !(cfg.StepMs > 0) || len(cfg.Rates) == 0 {
		return SimResult{}, fmt.Errorf("request simulator: need replicas >= 1 and a rate curve with a positive step")
	}
	expected := 0.0
	for i, r := range cfg.Rates {
		if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			return SimResult{}, fmt.Errorf("rate %d: %g requests/s is not a rate", i, r)
		}
		expected += r * cfg.StepMs / 1000
	}
	if expected > maxSimArrivals {
		return SimResult{}, fmt.Errorf("request simulator: about %.3g requests, more than %d: use the per-interval model", expected, maxSimArrivals)
	}
	end := cfg.StepMs * float64(len(cfg.Rates))
	b := cfg.Batch
	var res SimResult
	busy := &timeHeap{}
	idle := cfg.Replicas
	queue := make([]float64, 0, 1024)
	head := 0

	// The next arrival: exponential gaps at the step's rate; a gap that
	// crosses a step boundary restarts there (memoryless).
	step := 0
	t := 0.0
	nextArrival := func() float64 {
		for step < len(cfg.Rates) {
			stepEnd := cfg.StepMs * float64(step+1)
			if r := cfg.Rates[step]; r > 0 {
				if x := t + rng.ExpFloat64()/r*1000; x < stepEnd {
					t = x
					return t
				}
			}
			t = stepEnd
			step++
		}
		return math.Inf(1)
	}
	na := nextArrival()
	dispatch := func(now float64) {
		for idle > 0 && head < len(queue) {
			if cfg.TimeoutMs > 0 {
				for head < len(queue) && now-queue[head] > cfg.TimeoutMs {
					head++
					res.Dropped++
				}
				if head == len(queue) {
					return
				}
			}
			n := len(queue) - head
			if n < b.Size && now < queue[head]+b.MaxDelayMs {
				return // the batch is still forming
			}
			n = min(n, b.Size)
			svc := b.ServiceMs(n)
			if cfg.ExpService {
				svc *= rng.ExpFloat64()
			}
			for _, a := range queue[head : head+n] {
				res.WaitMs = append(res.WaitMs, now-a)
				res.LatencyMs = append(res.LatencyMs, now-a+svc)
			}
			head += n
			res.Batches++
			idle--
			heap.Push(busy, now+svc)
		}
		if head > 4096 && head*2 > len(queue) {
			queue = append(queue[:0], queue[head:]...)
			head = 0
		}
	}
	for {
		nc := math.Inf(1)
		if busy.Len() > 0 {
			nc = (*busy)[0]
		}
		nt := math.Inf(1)
		if idle > 0 && head < len(queue) {
			nt = queue[head] + b.MaxDelayMs
		}
		now := min(na, nc, nt)
		if math.IsInf(now, 1) {
			break
		}
		switch {
		case nc == now:
			heap.Pop(busy)
			idle++
		case na == now:
			res.Arrived++
			if cfg.QueueLimit > 0 && len(queue)-head >= cfg.QueueLimit {
				res.Dropped++
			} else {
				queue = append(queue, na)
			}
			if na = nextArrival(); na > end {
				na = math.Inf(1)
			}
		}
		dispatch(now)
	}
	return res, nil
}

// Quantile is the p-quantile of xs (sorted in place): the smallest value
// with at least p of the sample at or below it.
func Quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	i := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// Mean is the mean of xs.
func Mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
