package serving

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models"
)

// Regime is what sets the pace of batches in the fluid model.
type Regime int

const (
	// Timeout: batches start when their oldest request has waited
	// maxBatchDelay, partly full, a replica being free.
	Timeout Regime = iota
	// Fill: batches fill (batchSize) before the delay runs out.
	Fill
	// Busy: every replica is always serving; a batch holds what arrived
	// during the one before it.
	Busy
	// Overload: arrivals exceed what full batches on every replica serve;
	// a backlog grows.
	Overload
)

func (r Regime) String() string {
	return [...]string{"timeout", "fill", "busy", "overload"}[r]
}

// Cycle is the fluid model's steady state for one interval: a batch
// gathers for IntervalMs and holds Size requests taking ServiceMs (with a
// shared queue batches start every IntervalMs across the service; with
// random balancing, every IntervalMs on each replica, see BalancedCycle). A request waits for its batch to start, then for its service:
// latency = wait + ServiceMs. In the Fill and Busy regimes arrivals spread
// evenly over the gathering, so the wait is Uniform(0, IntervalMs). In the
// Timeout regime the batch's first request waits the whole delay and the
// Size-1 after it less: the wait is Uniform(0, delay) with an atom of
// 1/Size at the delay.
type Cycle struct {
	Regime     Regime
	IntervalMs float64
	Size       float64
	ServiceMs  float64
	// Served is the requests per second served (less than offered only in
	// Overload).
	Served float64
	// DelayMs is the batch delay in the Timeout regime (0 otherwise).
	DelayMs float64
	// BacklogMs is a wait every request adds ahead of its batch: the time
	// to serve a backlog left by an overload (the service model sets it).
	BacklogMs float64
	// QueueP and QueueRatePerMs: a ready batch finds every replica busy
	// with probability QueueP and then waits Exp(QueueRatePerMs) more (the
	// stochastic queueing the fluid misses near capacity; see FluidCycle).
	QueueP, QueueRatePerMs float64
}

// FluidCycle is the steady state of c replicas with dynamic batching at an
// arrival rate of lambda requests per second, treating arrivals as a fluid.
// It is accurate when batches hold many requests (its error is the
// Poisson spread of a batch's size, about 1/sqrt(size)), and it is what
// the cluster run evaluates per service per interval: weeks of thousands
// of requests a second cost one evaluation per interval.
func FluidCycle(lambda float64, c int, b Batch) (Cycle, error) {
	if err := b.Validate(); err != nil {
		return Cycle{}, err
	}
	if c < 1 || lambda < 0 || math.IsNaN(lambda) || math.IsInf(lambda, 0) {
		return Cycle{}, fmt.Errorf("fluid model: need replicas >= 1 and a finite rate >= 0 (replicas %d, rate %g)", c, lambda)
	}
	cf := float64(c)
	perMs := lambda / 1000
	if perMs == 0 {
		return Cycle{Regime: Timeout, IntervalMs: b.MaxDelayMs, DelayMs: b.MaxDelayMs, Size: 1, ServiceMs: b.ServiceMs(1)}, nil
	}
	B := float64(b.Size)
	// Gathering paced by the delay or by filling, whichever is first.
	tau := b.MaxDelayMs + 1/perMs // the first request, then the delay
	regime := Timeout
	if perMs*tau >= B {
		tau, regime = B/perMs, Fill
	}
	n := perMs * tau
	if b.serviceOf(n) <= cf*tau {
		cy := Cycle{Regime: regime, IntervalMs: tau, Size: n, ServiceMs: b.serviceOf(n), Served: lambda}
		if regime == Timeout {
			cy.DelayMs = b.MaxDelayMs
		} else {
			cy.queueing(c, b.Exponential)
		}
		return cy, nil
	}
	// Replicas are the bottleneck: each serves back to back, a batch
	// every S(n)/c, holding what arrived meanwhile: n = perMs S(n) / c.
	// No queue of ready batches is added: the batches' offered load is
	// c replicas' worth by construction (a = c), where a G/G/c queue has
	// no steady state; the batch size absorbs the variation instead.
	if den := cf - perMs*b.PerItemMs; den > 0 {
		n = perMs * b.BaseMs / den
		if n <= B {
			s := b.serviceOf(n)
			return Cycle{Regime: Busy, IntervalMs: s / cf, Size: n, ServiceMs: s, Served: lambda}, nil
		}
	}
	s := b.ServiceMs(b.Size)
	return Cycle{Regime: Overload, IntervalMs: s / cf, Size: B, ServiceMs: s, Served: cf * B / s * 1000}, nil
}

// queueing adds the wait of ready batches for a replica: batches become
// ready every Size arrivals (Erlang-Size gaps, squared coefficient of
// variation ca^2 = 1/Size) and take ServiceMs on one of c replicas (fixed:
// cs^2 = 0; exponential: cs^2 = 1): a G/G/c queue, whose wait Allen and
// Cunneen approximate as M/M/c's probability of waiting, C(c, a), with an
// exponential tail of rate (c mu - lambda_b) x 2 / (ca^2 + cs^2). Without
// batching and with exponential service that is Erlang C exactly.
func (cy *Cycle) queueing(c int, exp bool) {
	lb := cy.Served / 1000 / cy.Size // batches per ms
	mu := 1 / cy.ServiceMs
	a := lb / mu
	if a >= float64(c) {
		return
	}
	pw, err := models.ErlangC(c, a)
	if err != nil {
		return
	}
	cy.QueueP = pw
	cs2 := 0.0
	if exp {
		cs2 = 1
	}
	cy.QueueRatePerMs = (float64(c)*mu - lb) * 2 / (1/cy.Size + cs2)
}

// gatherMs is the width of a request's wait for its batch to gather: the
// interval, except for batches of one, which start when their request
// arrives.
func (c Cycle) gatherMs() float64 {
	if c.Regime == Fill && c.Size <= 1 {
		return 0
	}
	return c.IntervalMs
}

// WaitCDF is P(wait <= w), w in ms: the gathering wait, plus the queueing
// wait of a ready batch where there is one.
func (c Cycle) WaitCDF(w float64) float64 {
	if w < 0 {
		return 0
	}
	if c.QueueP > 0 {
		// U + Q with U ~ Uniform(0, I) and Q = 0 or Exp(theta):
		// P(U + Exp <= w) = (H(w) - H(w-I)) / I, H(z) = z - (1-e^{-theta z})/theta.
		th, I := c.QueueRatePerMs, c.gatherMs()
		if I == 0 {
			return 1 - c.QueueP*math.Exp(-th*w)
		}
		H := func(z float64) float64 {
			if z <= 0 {
				return 0
			}
			return z - (1-math.Exp(-th*z))/th
		}
		return (1-c.QueueP)*min(w/I, 1) + c.QueueP*(H(w)-H(w-I))/I
	}
	if c.Regime == Timeout {
		if w >= c.DelayMs {
			return 1
		}
		return (1 - 1/max(c.Size, 1)) * w / c.DelayMs
	}
	if c.gatherMs() == 0 {
		return 1
	}
	return min(w/c.IntervalMs, 1)
}

// LatencyCDF is P(latency <= x), x in ms.
func (c Cycle) LatencyCDF(x float64) float64 { return c.WaitCDF(x - c.ServiceMs - c.BacklogMs) }

// MeanLatencyMs is the mean latency: the mean gathering wait, the mean
// queueing of a ready batch, the backlog and the service.
func (c Cycle) MeanLatencyMs() float64 {
	wait := c.gatherMs() / 2
	if c.Regime == Timeout && c.Size > 0 {
		// The first of Size waits the delay, the rest half of it.
		wait = c.DelayMs * (1 + (c.Size-1)/2) / c.Size
	}
	if c.QueueP > 0 {
		wait += c.QueueP / c.QueueRatePerMs
	}
	return wait + c.BacklogMs + c.ServiceMs
}

// LatencyQuantile is the p-quantile of latency in a steady cycle, ms.
func (c Cycle) LatencyQuantile(p float64) float64 {
	return MixtureQuantile([]Cycle{c}, []float64{1}, p)
}

// MixtureQuantile is the p-quantile of latency over intervals with these
// cycles, each weighted by the requests it served (rate x length): the
// latency a window's requests saw, as a whole.
func MixtureQuantile(cycles []Cycle, weights []float64, p float64) float64 {
	total, hi := 0.0, 0.0
	for i, c := range cycles {
		total += weights[i]
		hi = max(hi, c.ServiceMs+c.IntervalMs+c.BacklogMs)
		if c.QueueP > 0 {
			hi = max(hi, c.ServiceMs+c.IntervalMs+c.BacklogMs+50/c.QueueRatePerMs)
		}
	}
	if total == 0 {
		return math.NaN()
	}
	cdf := func(x float64) float64 {
		s := 0.0
		for i, c := range cycles {
			s += weights[i] * c.LatencyCDF(x)
		}
		return s / total
	}
	lo := 0.0
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if cdf(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// serviceOf is the service time of a batch of (fluid) size n.
func (b Batch) serviceOf(n float64) float64 { return b.BaseMs + b.PerItemMs*n }
