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
	// Replicas serve one shared FCFS queue (LeastRequest: a balancer that
	// sends each request to the first free replica), or each its own queue
	// (Random: each request to a replica drawn uniformly, which batches
	// what it queues).
	Replicas  int
	Balancing Balancing
	// Batch is each replica's batching and service time (Batch.Exponential
	// draws each batch's time from an exponential of its mean).
	Batch Batch
	// QueueLimit drops an arrival that finds this many waiting in the
	// queue it joins (the shared one, or its replica's) (0: none).
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

// done is a replica's batch ending at t, the replica serving queue q.
type done struct {
	t float64
	q int
}

type doneHeap []done

func (h doneHeap) Len() int           { return len(h) }
func (h doneHeap) Less(i, j int) bool { return h[i].t < h[j].t }
func (h doneHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *doneHeap) Push(x any)        { *h = append(*h, x.(done)) }
func (h *doneHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// simQueue is a FCFS queue of arrival times and its idle replicas.
type simQueue struct {
	at   []float64
	head int
	idle int
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
	busy := &doneHeap{}
	// One shared queue with every replica, or one queue per replica.
	queues := []simQueue{{idle: cfg.Replicas}}
	if cfg.Balancing == Random {
		queues = make([]simQueue, cfg.Replicas)
		for i := range queues {
			queues[i].idle = 1
		}
	}

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
	dispatch := func(now float64, qi int) {
		q := &queues[qi]
		for q.idle > 0 && q.head < len(q.at) {
			if cfg.TimeoutMs > 0 {
				for q.head < len(q.at) && now-q.at[q.head] > cfg.TimeoutMs {
					q.head++
					res.Dropped++
				}
				if q.head == len(q.at) {
					break
				}
			}
			n := len(q.at) - q.head
			if n < b.Size && now < q.at[q.head]+b.MaxDelayMs {
				break // the batch is still forming
			}
			n = min(n, b.Size)
			svc := b.ServiceMs(n)
			if b.Exponential {
				svc *= rng.ExpFloat64()
			}
			for _, a := range q.at[q.head : q.head+n] {
				res.WaitMs = append(res.WaitMs, now-a)
				res.LatencyMs = append(res.LatencyMs, now-a+svc)
			}
			q.head += n
			res.Batches++
			q.idle--
			heap.Push(busy, done{now + svc, qi})
		}
		if q.head > 4096 && q.head*2 > len(q.at) {
			q.at = append(q.at[:0], q.at[q.head:]...)
			q.head = 0
		}
	}
	for {
		nc := math.Inf(1)
		if busy.Len() > 0 {
			nc = (*busy)[0].t
		}
		// The earliest batch whose delay runs out on an idle replica.
		nt, tq := math.Inf(1), -1
		for i := range queues {
			if q := &queues[i]; q.idle > 0 && q.head < len(q.at) && q.at[q.head]+b.MaxDelayMs < nt {
				nt, tq = q.at[q.head]+b.MaxDelayMs, i
			}
		}
		now := min(na, nc, nt)
		if math.IsInf(now, 1) {
			break
		}
		qi := tq
		switch {
		case nc == now:
			d := heap.Pop(busy).(done)
			qi = d.q
			queues[qi].idle++
		case na == now:
			res.Arrived++
			qi = 0
			if len(queues) > 1 {
				qi = rng.IntN(len(queues))
			}
			q := &queues[qi]
			if cfg.QueueLimit > 0 && len(q.at)-q.head >= cfg.QueueLimit {
				res.Dropped++
			} else {
				q.at = append(q.at, na)
			}
			if na = nextArrival(); na > end {
				na = math.Inf(1)
			}
		}
		dispatch(now, qi)
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
