package services

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/autoscale"
)

// MetricKind is what an HPA or KEDA trigger reads of the service.
type MetricKind int

const (
	// RequestsPerReplica: requests per second per ready replica (a Pods
	// metric; KEDA's AverageValue on the total rate).
	RequestsPerReplica MetricKind = iota
	// Concurrency: requests in flight per ready replica.
	Concurrency
	// QueueLatencyMs: the mean wait before service, ms (TorchServe's
	// ts_queue_latency as a Value metric).
	QueueLatencyMs
	// Utilization: percent of the ready replicas' time spent serving (GPU
	// or CPU utilization).
	Utilization
	// QueueDepth: requests waiting, not yet in service, per ready replica
	// (vLLM's vllm:num_requests_waiting gauge; KEDA's AverageValue on the
	// sum): the arrival rate times the mean wait before service (Little's
	// law), and with no replica ready the requests held.
	QueueDepth
	// Running: requests running in the engine per ready replica (vLLM's
	// vllm:num_requests_running gauge; KEDA's AverageValue on the sum):
	// those in flight less those waiting. LLM services only.
	Running
	// KVCacheUsage: the share of a replica's KV-cache blocks in use, 0 to
	// 1, averaged over the ready replicas (vLLM's
	// vllm:kv_cache_usage_perc, vllm:gpu_cache_usage_perc before v0.10):
	// the decoding requests' blocks and the cached prefixes'. LLM
	// services only.
	KVCacheUsage
	// LatencyQuantileMs: a quantile of one of vLLM's latency histograms
	// (TTFT, TPOT, end to end) over the requests served in a window, ms,
	// as Prometheus's histogram_quantile reads it (the scaler's
	// LatencyQuantile, llmquantile.go): one value for the service, no
	// per-replica share. LLM services only.
	LatencyQuantileMs
)

// Average reports a metric that is a mean over the replicas or requests
// (its value is no per-replica share of a total a Value or KEDA metric
// would sum): queue latency, utilization and KV-cache usage.
func (k MetricKind) Average() bool {
	return k == QueueLatencyMs || k == Utilization || k == KVCacheUsage || k == LatencyQuantileMs
}

// LLMOnly reports a metric only an LLM service exports.
func (k MetricKind) LLMOnly() bool {
	return k == Running || k == KVCacheUsage || k == LatencyQuantileMs
}

// Spec is one service.
type Spec struct {
	Name  string
	Load  serving.Load
	Batch serving.Batch
	// QueueLimit is the requests one replica queues (TorchServe's
	// job_queue_size); beyond it arrivals are dropped. 0: unbounded.
	QueueLimit int
	// TimeoutMs drops requests that would wait longer (0: none).
	TimeoutMs float64
	// SLOMs is the latency target the report measures attainment of.
	SLOMs float64
	// Balancing is how requests reach the ready replicas: LeastRequest
	// (the zero value: one shared queue, Knative's activator) or Random
	// (kube-proxy: each replica queues and batches its own share).
	Balancing serving.Balancing
	// LLM, when set, makes the replicas vLLM-style engines (llm.go): Batch,
	// QueueLimit, TimeoutMs and SLOMs are then unused.
	LLM *LLM
}

// Validate refuses a service that cannot be simulated.
func (s Spec) Validate() error {
	if err := s.Load.Validate(); err != nil {
		return err
	}
	if s.LLM != nil {
		return s.LLM.validate()
	}
	if err := s.Batch.Validate(); err != nil {
		return err
	}
	if s.QueueLimit < 0 || s.TimeoutMs < 0 || s.SLOMs < 0 {
		return fmt.Errorf("queue limit, timeout and SLO must not be negative")
	}
	if s.Balancing != serving.LeastRequest && s.Balancing != serving.Random {
		return fmt.Errorf("balancing: unknown mode %d", s.Balancing)
	}
	return nil
}

// Scaler is a service's replica controller.
type Scaler interface {
	// PeriodMs is how often it acts.
	PeriodMs() int64
	// Decide is its answer at now: the replicas it wants.
	Decide(now int64, replicas, ready, starting int, m Metrics) int
}

// Freshener is a scaler that keeps state between decisions (an HPA's
// recommendations and changes, KEDA's last activity, the KPA's windows).
// Fresh is a copy of it with no history: a run asks every such scaler for
// one, so that one configuration can be run again, or by several runs at
// once, each run's controller starting from scratch. A stateful Scaler
// must implement it.
type Freshener interface {
	Fresh() (Scaler, error)
}

// Metrics is what the service exports at an instant.
type Metrics struct {
	Rate           float64 // requests per second arriving
	InFlight       float64 // requests in the system (Little's law, plus the backlog)
	QueueLatencyMs float64 // mean wait before service
	Utilization    float64 // percent of ready replicas' time serving
	// Running is the requests in the engines (LLM services);
	// KVCacheUsage the mean share of a replica's KV cache in use.
	Running, KVCacheUsage float64
	// LatencyQuantileMs is the scaler's latency quantile over its window
	// (an LLM service whose scaler reads one; 0 otherwise).
	LatencyQuantileMs float64
}

// value is the metric an HPA or trigger reads, per ready replica where the
// kind is an average.
func (m Metrics) value(k MetricKind, ready int) float64 {
	r := float64(max(ready, 1))
	switch k {
	case Concurrency:
		return m.InFlight / r
	case QueueLatencyMs:
		return m.QueueLatencyMs
	case Utilization:
		return m.Utilization
	case QueueDepth:
		if ready == 0 {
			return m.InFlight
		}
		return m.Rate * m.QueueLatencyMs / 1000 / r
	case Running:
		return m.Running / r
	case KVCacheUsage:
		return m.KVCacheUsage
	case LatencyQuantileMs:
		return m.LatencyQuantileMs
	}
	return m.Rate / r
}

// HPA scales on one metric of the service.
type HPA struct {
	H      *autoscale.HPA
	Metric MetricKind
	// Quantile is the query when Metric is LatencyQuantileMs.
	Quantile LatencyQuantile
}

func (h HPA) PeriodMs() int64 { return h.H.Spec().SyncMs }

// Fresh is the HPA with no history.
func (h HPA) Fresh() (Scaler, error) {
	c, err := autoscale.NewHPA(h.H.Spec())
	return HPA{H: c, Metric: h.Metric, Quantile: h.Quantile}, err
}

func (h HPA) Decide(now int64, replicas, ready, starting int, m Metrics) int {
	v := m.value(h.Metric, ready)
	if h.H.Spec().Type == autoscale.Value && !h.Metric.Average() {
		v *= float64(max(ready, 1)) // a Value metric is the service's total
	}
	return h.H.Sync(now, autoscale.Observation{Replicas: replicas, Ready: ready, NotReady: starting, Metric: v})
}

// KEDA scales on one trigger metric, the service's total for AverageValue.
type KEDA struct {
	K      *autoscale.KEDA
	Metric MetricKind
	// Quantile is the trigger's query when Metric is LatencyQuantileMs.
	Quantile LatencyQuantile
}

func (k KEDA) PeriodMs() int64 { return k.K.HPASyncMs() }

// Fresh is the ScaledObject with no history.
func (k KEDA) Fresh() (Scaler, error) {
	c, err := autoscale.NewKEDA(k.K.Spec())
	return KEDA{K: c, Metric: k.Metric, Quantile: k.Quantile}, err
}

func (k KEDA) Decide(now int64, replicas, ready, starting int, m Metrics) int {
	v := m.value(k.Metric, ready)
	if !k.Metric.Average() {
		v *= float64(max(ready, 1)) // the trigger reports the total
	}
	return k.K.Sync(now, autoscale.Observation{Replicas: replicas, Ready: ready, NotReady: starting}, v)
}

// KPA scales on concurrency, Knative's way.
type KPA struct {
	K      *autoscale.KPA
	TickMs int64
}

func (k KPA) PeriodMs() int64 { return k.TickMs }

// Fresh is the KPA with no history.
func (k KPA) Fresh() (Scaler, error) {
	c, err := autoscale.NewKPA(k.K.Spec())
	return KPA{K: c, TickMs: k.TickMs}, err
}

func (k KPA) Decide(now int64, replicas, ready, starting int, m Metrics) int {
	return k.K.Tick(now, m.InFlight, ready)
}

// Fixed keeps the replicas it is given.
type Fixed struct{ Replicas int }

func (f Fixed) PeriodMs() int64                          { return 60_000 }
func (f Fixed) Decide(int64, int, int, int, Metrics) int { return f.Replicas }

// Service is one service's state over a run.
type Service struct {
	spec    Spec
	scaler  Scaler
	backlog float64 // requests waiting beyond what the fluid cycle holds
	// backlogAge is the mean time the backlog has waited (ms): it grows
	// while no replica is ready (a cold start from zero, requests held at
	// the activator or the load balancer).
	backlogAge float64
	last       serving.Cycle
	lastOK     bool
	// hist holds the run's latencies up to the last BucketP95, bucket
	// those since (a timeline bucket's): each interval is added once, to
	// bucket, and a bucket is merged into hist when it ends.
	hist, bucket serving.Histogram
	// pend is the first cycle of the group not yet added to bucket, with
	// the requests pendN the group served: consecutive pieces whose cycles
	// are pend's within groupTolerance (a steady or slowly changing rate on
	// steady replicas) cost one Add.
	pend  serving.Cycle
	pendN float64
	// pendSum sums the group's cycles' times weighted by their requests
	// (the queueing rate by the requests that queue); pendMixed: they are
	// not all pend.
	pendSum   serving.Cycle
	pendMixed bool
	// steady: the load is a constant rate; memo is the last fluid cycle
	// computed, for rate memoRate on memoReady replicas.
	steady, smooth bool
	memo           serving.Cycle
	memoRate       float64
	memoReady      int
	// step is the scaler's period: the grid of pieces while Advance is
	// not linear.
	step int64
	// pieceEnd is when the piece being accounted ends.
	pieceEnd int64

	Arrived, Served, Dropped float64
	// ReplicaMs and ReadyMs integrate the replicas held and ready.
	ReplicaMs, ReadyMs float64
	// llm is an LLM service's state (llm.go), nil for a batch server.
	llm *llmRun
}

// New is a service with its scaler.
func New(spec Spec, scaler Scaler) (*Service, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("service %s: %w", spec.Name, err)
	}
	step := scaler.PeriodMs()
	if step <= 0 {
		return nil, fmt.Errorf("service %s: the scaler's period is %d ms: it must be positive", spec.Name, step)
	}
	s := &Service{spec: spec, scaler: scaler, steady: spec.Load.Steady(), smooth: spec.Load.Amplitude > 0 && len(spec.Load.Points) == 0, memoReady: -1, step: step}
	if spec.LLM != nil {
		l, err := newLLMRun(spec.LLM)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", spec.Name, err)
		}
		s.llm = l
	}
	if q, ok := latencyQuantile(scaler); ok {
		if err := q.Validate(); err != nil {
			return nil, fmt.Errorf("service %s: %w", spec.Name, err)
		}
		if s.llm == nil {
			return nil, fmt.Errorf("service %s: its scaler reads %s, which only an LLM service's engines export", spec.Name, q.Of)
		}
		s.llm.windowMs = q.WindowMs
	}
	return s, nil
}

// Scaler is the service's controller.
func (s *Service) Scaler() Scaler { return s.scaler }

// Advance accounts for [from, to): the load arriving, what ready replicas
// serve (a fluid cycle per piece of the interval, at the piece's mean
// rate), the backlog carried and what it drops. replicas counts every
// replica pod held (for cost).
//
// The counts held over the whole interval, so it may be long (a service
// whose scaler reads only the rate is accounted lazily, when its counts
// change and at timeline bucket ends). It is cut into pieces where the
// model is not linear in their length: at every change of the curve
// (spike edges, rate points); for a diurnal curve wherever the rate has
// moved by pieceTolerance (Load.PieceEnd, never shorter than the scaler's
// period), or for an LLM service wherever the rate may leave a grid key
// of the curve (llmPieceEnd: a piece within one period near a key's
// edge, as the period would be accounted); and while a backlog is
// carried, the load is above capacity or no replica is ready, at each
// of the scaler's periods, as when the service is accounted every
// period. A constant rate served without a backlog is one piece,
// whatever the interval's length.
func (s *Service) Advance(from, to int64, replicas, ready int) {
	dt := float64(to - from)
	if dt <= 0 {
		return
	}
	s.ReplicaMs += float64(replicas) * dt
	s.ReadyMs += float64(ready) * dt
	l := &s.spec.Load
	for a := from; a < to; {
		b := to
		lambda := l.Base
		if !s.steady {
			b = l.PieceEnd(a, to, s.step, pieceTolerance)
			if s.llm != nil && s.smooth {
				if e, ok := s.llmPieceEnd(a, min(to, l.NextChange(a)), ready); ok {
					b = e
				}
			}
			lambda = s.rate(a, b)
		}
		if s.backlog > 0 || ready == 0 || s.overloaded(lambda, ready) {
			// Not linear in the piece's length: a piece per period.
			if g := (a/s.step + 1) * s.step; g < b {
				b = g
				if !s.steady {
					lambda = s.rate(a, b)
				}
			}
		}
		s.pieceEnd = b
		s.advance(float64(b-a), lambda, ready)
		a = b
	}
}

// rate is the mean rate over the piece [a, b), which no change of the
// curve cuts: the diurnal curve's integral, or the rate at a where it is
// constant.
func (s *Service) rate(a, b int64) float64 {
	if s.smooth {
		return s.spec.Load.Mean(a, b)
	}
	return s.spec.Load.At(a)
}

// advance accounts for dt ms at rate lambda on ready replicas.
func (s *Service) advance(dt, lambda float64, ready int) {
	if s.llm != nil {
		s.advanceLLM(dt, lambda, ready)
		return
	}
	arrived := lambda * dt / 1000
	s.Arrived += arrived
	if ready == 0 && s.spec.Balancing == serving.Random {
		// A Kubernetes Service with no ready endpoint refuses connections
		// (kube-proxy rejects them): nothing holds the requests, and what
		// the replicas had queued went with them.
		s.Dropped += s.backlog + arrived
		s.backlog, s.backlogAge = 0, 0
		s.lastOK = false
		return
	}
	if ready == 0 {
		// Held at the activator (or a balancer that waits for a replica).
		if q := s.backlog + arrived; q > 0 {
			s.backlogAge = (s.backlog*(s.backlogAge+dt) + arrived*dt/2) / q
		}
		s.backlog += arrived
		s.drop(0)
		s.lastOK = false
		return
	}
	b := s.spec.Batch
	capacity := float64(ready) * b.Capacity() // requests/s with full batches
	cy := s.cycle(lambda, ready)
	served := cy.Served * dt / 1000
	if s.backlog > 0 || cy.Regime == serving.Overload {
		// Behind: every replica serves full batches until the backlog is
		// gone; requests wait behind it in arrival order.
		// Batches are full and start back to back on every replica; the
		// backlog is the queue (no further queueing term). A shared queue
		// starts a batch every sb/ready; with random balancing each
		// replica works off its own share of the backlog (backlog/ready
		// at capacity/ready: the same time) and starts its next batch
		// within sb.
		sb := b.ServiceMs(b.Size)
		gather := sb / float64(ready)
		if s.spec.Balancing == serving.Random {
			gather = sb
		}
		full := serving.Cycle{Regime: serving.Overload, IntervalMs: gather, Size: float64(b.Size), ServiceMs: sb}
		start := s.backlog
		served = min(capacity*dt/1000, s.backlog+arrived)
		s.backlog = max(0, s.backlog+arrived-served)
		// Requests wait behind the backlog; those that waited for a
		// replica to be ready waited their age too.
		full.BacklogMs = max((start+s.backlog)/2/capacity*1000, s.backlogAge)
		full.Served = served / dt * 1000
		cy = full
		s.backlogAge = s.backlog / capacity * 1000
	}
	s.drop(capacity)
	s.addLatency(cy, served)
	s.Served += served
	s.last, s.lastOK = cy, true
}

// cycle is the fluid cycle of rate lambda on ready replicas (ready >= 1)
// under the service's balancing, the last one remembered: a steady rate on
// steady replicas asks for the same one at every accounting and every
// metric read.
func (s *Service) cycle(lambda float64, ready int) serving.Cycle {
	if lambda != s.memoRate || ready != s.memoReady {
		s.memo, _ = serving.BalancedCycle(lambda, ready, s.spec.Batch, s.spec.Balancing)
		s.memoRate, s.memoReady = lambda, ready
	}
	return s.memo
}

// addLatency adds n requests served with cycle cy's latency.
func (s *Service) addLatency(cy serving.Cycle, n float64) {
	if n <= 0 {
		return
	}
	// The same cycle again (a steady rate on steady replicas) is near
	// without the comparisons.
	if s.pendN > 0 && cy != s.pend && !nearCycle(cy, s.pend, groupTolerance) {
		s.flush()
	}
	if s.pendN == 0 {
		s.pend, s.pendSum, s.pendMixed = cy, serving.Cycle{}, false
	}
	if cy != s.pend {
		s.pendMixed = true
	}
	m := &s.pendSum
	m.IntervalMs += n * cy.IntervalMs
	m.Size += n * cy.Size
	m.ServiceMs += n * cy.ServiceMs
	m.Served += n * cy.Served
	m.DelayMs += n * cy.DelayMs
	m.BacklogMs += n * cy.BacklogMs
	m.QueueP += n * cy.QueueP
	m.QueueRatePerMs += n * cy.QueueP * cy.QueueRatePerMs
	s.pendN += n
}

// groupTolerance is how far apart (relatively) the cycles of consecutive
// pieces may be for their requests to be added to the histogram as one
// group, with the group's mean cycle (weighted by the requests): a piece's
// latencies are then off by at most about half of it, half of one of the
// histogram's 2% buckets. A steady cycle is one group however long.
const groupTolerance = 0.02

// pieceTolerance is how far (relatively) the rate may move within one
// piece of an interval that Advance serves with one cycle, at the piece's
// mean rate: within half of it either way.
const pieceTolerance = groupTolerance / 2

// nearCycle reports whether b's latency distribution is a's within tol:
// the same regime, every time within it relatively, the probability of
// queueing within it absolutely, and when either queues more often than
// that, the queueing tail's rate within it relatively.
func nearCycle(a, b serving.Cycle, tol float64) bool {
	if a.Regime != b.Regime || math.Abs(a.QueueP-b.QueueP) > tol {
		return false
	}
	near := func(x, y float64) bool {
		return math.Abs(x-y) <= tol*math.Max(math.Abs(x), math.Abs(y))
	}
	if max(a.QueueP, b.QueueP) > tol && !near(a.QueueRatePerMs, b.QueueRatePerMs) {
		return false
	}
	return near(a.IntervalMs, b.IntervalMs) && near(a.Size, b.Size) && near(a.ServiceMs, b.ServiceMs) &&
		near(a.DelayMs, b.DelayMs) && near(a.BacklogMs, b.BacklogMs)
}

// flush adds the pending group to the bucket: its one cycle, or when its
// cycles differ, their mean weighted by the requests each served (the
// queueing tail's rate weighted by the requests that queue).
func (s *Service) flush() {
	if s.pendN <= 0 {
		return
	}
	c := s.pend
	if s.pendMixed {
		m, n := s.pendSum, s.pendN
		c = serving.Cycle{Regime: c.Regime, IntervalMs: m.IntervalMs / n, Size: m.Size / n, ServiceMs: m.ServiceMs / n,
			Served: m.Served / n, DelayMs: m.DelayMs / n, BacklogMs: m.BacklogMs / n, QueueP: m.QueueP / n}
		if m.QueueP > 0 {
			c.QueueRatePerMs = m.QueueRatePerMs / m.QueueP
		}
	}
	s.bucket.Add(c, s.pendN)
	s.pendN = 0
}

// Backlog is the requests waiting beyond what the fluid cycle holds: at
// any time Arrived = Served + Dropped + Backlog.
func (s *Service) Backlog() float64 { return s.backlog }

// BucketP95 is the 95th-percentile latency (ms) of the requests served
// since the last call (0 when none was served), and starts a new bucket.
func (s *Service) BucketP95() float64 {
	if s.llm != nil {
		return s.llm.bucketP95()
	}
	s.flush()
	if s.bucket.Total() == 0 {
		return 0
	}
	q := s.bucket.Quantile(0.95)
	s.hist.Merge(&s.bucket)
	s.bucket.Reset()
	return q
}

// drop removes what the queue limit or the timeout refuse. The queue
// limit is each replica's (job_queue_size): ready replicas hold ready
// times it, whether they share the queue or each holds its share of the
// backlog (random balancing spreads it evenly in the fluid model).
func (s *Service) drop(capacity float64) {
	limit := math.Inf(1)
	if s.spec.QueueLimit > 0 {
		limit = float64(s.spec.QueueLimit) * math.Max(capacity/max(s.spec.Batch.Capacity(), 1e-9), 1)
	}
	if s.spec.TimeoutMs > 0 && capacity > 0 {
		limit = math.Min(limit, capacity*s.spec.TimeoutMs/1000)
	}
	if s.backlog > limit {
		s.Dropped += s.backlog - limit
		s.backlog = limit
	}
}

// Metrics is what the service exports at now with ready replicas.
func (s *Service) Metrics(now int64, ready int) Metrics {
	lambda := s.spec.Load.At(now)
	m := Metrics{Rate: lambda, InFlight: s.backlog}
	if ready == 0 {
		m.QueueLatencyMs = math.Inf(1)
		if s.backlog == 0 && lambda == 0 {
			m.QueueLatencyMs = 0
		}
		return m
	}
	if s.llm != nil {
		return s.metricsLLM(lambda, ready)
	}
	cy := s.cycle(lambda, ready)
	cy.BacklogMs = s.backlog / (float64(ready) * s.spec.Batch.Capacity()) * 1000
	lat := cy.MeanLatencyMs()
	m.InFlight += lambda * lat / 1000
	m.QueueLatencyMs = lat - cy.ServiceMs
	// Busy share: batches per ms x service time, over the replicas (Served
	// is the service's in either balancing, Size and ServiceMs a batch's).
	if cy.Size > 0 {
		m.Utilization = math.Min(100, 100*(cy.Served/1000/cy.Size)*cy.ServiceMs/float64(ready))
	}
	return m
}

// Observe is what the service's own scaler reads at now: Metrics, less
// the fluid cycle when the scaler reads only the request rate (a fixed
// count, or an HPA or KEDA trigger on requests per replica), which then
// costs nothing but the rate.
func (s *Service) Observe(now int64, ready int) Metrics {
	if rateOnly(s.scaler) {
		return Metrics{Rate: s.spec.Load.At(now), InFlight: s.backlog}
	}
	m := s.Metrics(now, ready)
	if q, ok := latencyQuantile(s.scaler); ok && s.llm != nil {
		m.LatencyQuantileMs = s.llm.latencyQuantile(now, q)
	}
	return m
}

// latencyQuantile is the latency quantile a scaler reads, if it reads
// one.
func latencyQuantile(sc Scaler) (LatencyQuantile, bool) {
	switch x := sc.(type) {
	case HPA:
		return x.Quantile, x.Metric == LatencyQuantileMs
	case KEDA:
		return x.Quantile, x.Metric == LatencyQuantileMs
	}
	return LatencyQuantile{}, false
}

// rateOnly reports whether a scaler reads nothing but Metrics.Rate.
func rateOnly(sc Scaler) bool {
	switch x := sc.(type) {
	case Fixed:
		return true
	case HPA:
		return x.Metric == RequestsPerReplica
	case KEDA:
		return x.Metric == RequestsPerReplica
	}
	return false
}

// Report is a service's figures over the run. The latency quantiles are
// 0 when no request was served.
type Report struct {
	Name                     string
	Arrived, Served, Dropped float64
	P50Ms, P95Ms, P99Ms      float64
	SLOMs, SLOAttainment     float64 // share of arrivals served within the SLO
	ReplicaHours, ReadyHours float64
	// LLM holds an LLM service's token figures (nil for a batch server).
	LLM *LLMReport
}

// Report sums up the run.
func (s *Service) Report() Report {
	s.flush()
	s.hist.Merge(&s.bucket)
	s.bucket.Reset()
	r := Report{Name: s.spec.Name, Arrived: s.Arrived, Served: s.Served, Dropped: s.Dropped,
		SLOMs: s.spec.SLOMs, ReplicaHours: s.ReplicaMs / 3.6e6, ReadyHours: s.ReadyMs / 3.6e6}
	if s.hist.Total() > 0 {
		r.P50Ms, r.P95Ms, r.P99Ms = s.hist.Quantile(0.5), s.hist.Quantile(0.95), s.hist.Quantile(0.99)
	}
	if s.spec.SLOMs > 0 && s.Arrived > 0 && s.hist.Total() > 0 {
		r.SLOAttainment = s.hist.Within(s.spec.SLOMs) * s.Served / s.Arrived
	}
	if s.llm != nil {
		s.reportLLM(&r)
	}
	return r
}

// RateOnly reports whether the service's scaler reads nothing but the
// request rate (Observe): its decisions do not depend on what the service
// served, so the service need not be accounted at each of its periods.
func (s *Service) RateOnly() bool { return rateOnly(s.scaler) }

// KeepBand is the band of request rates [lo, hi] within which the
// scaler, asked at a period with all of its replicas ready, keeps them
// (bounded to [minR, maxR] as the run bounds them) and changes nothing
// but the record of a steady sync, so that SkipPeriods stands for any
// number of such periods. ok is false when there is no such band now: a
// scaler that reads more than the rate (KEDA's activation, the KPA), or
// an HPA not Settled (a change still counting in a policy's period, or,
// without behavior, a different recommendation in its window).
//
// For an HPA the replica calculator's proposal does not decrease as the
// rate grows, so the band is found from the tolerance (and the rounding
// up that keeps the replicas below the target) and checked at both ends:
// every rate between them keeps the replicas too.
func (s *Service) KeepBand(replicas, minR, maxR int) (lo, hi float64, ok bool) {
	switch x := s.scaler.(type) {
	case Fixed:
		return 0, math.Inf(1), min(max(x.Replicas, minR), maxR) == replicas
	case HPA:
		if x.Metric != RequestsPerReplica || replicas < 1 || replicas < minR || replicas > maxR {
			return 0, 0, false
		}
		sp := x.H.Spec()
		obs := func(rate float64) autoscale.Observation {
			v := Metrics{Rate: rate}.value(x.Metric, replicas)
			if sp.Type == autoscale.Value {
				v *= float64(replicas)
			}
			return autoscale.Observation{Replicas: replicas, Ready: replicas, Metric: v}
		}
		tolUp, tolDown := sp.ScaleUp.ToleranceOr(sp.Tolerance), sp.ScaleDown.ToleranceOr(sp.Tolerance)
		// The ratio of the metric to its target that keeps the replicas,
		// shrunk a little so that rounding cannot put an end outside.
		r := float64(replicas)
		rlo := max(math.Min(1-tolDown, (r-1)/r), 1e-6) * (1 + 1e-6)
		rhi := (1 + tolUp) * (1 - 1e-6)
		scale := sp.Target * r // rate at ratio 1: the target on every replica
		if sp.Type == autoscale.Value {
			scale = sp.Target
		}
		lo, hi = rlo*scale, rhi*scale
		if !(lo <= hi) || !x.H.Keeps(obs(lo)) || !x.H.Keeps(obs(hi)) {
			return 0, 0, false
		}
		return lo, hi, true
	}
	return 0, 0, false
}

// SkipPeriods records that the scaler was asked at first, first+step,
// ..., last with replicas all ready and kept them (each at a rate within
// KeepBand, where each proposal is the replicas, or SettledBand, where
// the HPA records the proposal of each period's rate with no backlog).
func (s *Service) SkipPeriods(first, last, step int64, replicas int) {
	var rec func(now int64) int
	if s.llm != nil && !rateOnly(s.scaler) {
		o := autoscale.Observation{Replicas: replicas, Ready: replicas}
		m := func(now int64) Metrics {
			lambda := s.spec.Load.At(now)
			st, _ := s.llm.at(lambda/float64(replicas), replicas)
			return s.metricsLLMOf(lambda, replicas, st, 0)
		}
		switch x := s.scaler.(type) {
		case HPA:
			rec = func(now int64) int {
				o.Metric = m(now).value(x.Metric, replicas)
				if x.H.Spec().Type == autoscale.Value && !x.Metric.Average() {
					o.Metric *= float64(replicas)
				}
				return x.H.Proposal(o)
			}
		case KEDA:
			rec = func(now int64) int {
				v := m(now).value(x.Metric, replicas)
				if !x.Metric.Average() {
					v *= float64(replicas)
				}
				return x.K.Proposal(o, v)
			}
		}
	}
	switch x := s.scaler.(type) {
	case HPA:
		x.H.SkipSteady(first, last, step, replicas, rec)
	case KEDA:
		x.K.SkipSteady(first, last, step, replicas, rec)
	}
}
