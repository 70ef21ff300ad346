package services

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/autoscale"
)

// An LLM service (Spec.LLM): each replica is a vLLM-style engine with
// continuous batching, and its requests are measured in tokens. The run
// accounts for it with the fast model (serving.SteadyLLM), never request
// by request: over each piece of an interval the ready replicas share the
// arrivals at random (a Kubernetes Service in front: each replica's
// arrivals Poisson at rate / ready), or behind LLM.Router's gateway
// (serving.SteadyLLMRouted among the ready replicas; behind the
// prefix-aware picker with shared prefixes each replica serves its own
// prefixes, and the service's capacity with c ready is its expected busiest
// replica's, serving.PrefixAwareCapacity), and the requests
// served in the piece have the TTFT and TPOT distributions of one
// replica at that rate. The
// fast model is asked once per rate of a grid 2% apart (the nearest one).
// The plan computes it, once for all its runs, at the grid rates from
// the load's lowest on the most replicas up to capacity, bounded to the
// 65 highest (LLMCurve, built with the scenario); a run reads those and
// computes any other rate it meets once, in its own memo (the plan is
// read-only: nothing is cached in it). A run within the curve evaluates
// the fast model not at all: about 10 ms an evaluation, against a week
// of the default scenario's jobs in a few ms.
//
// Above a replica's capacity (CapacityPerReplica, serving.LLMCapacity:
// where the decoding requests fill max_num_seqs or the KV cache) the
// excess waits in a backlog, served at capacity in arrival order; its
// requests' TTFT is their wait plus the TTFT at capacity, their TPOT the
// TPOT at capacity. The fast model is held to the exact one within 5%
// on mean and p95 up to 63-80% of capacity and is optimistic nearer it
// (TestSteadyLLMAgainstExact in models/serving). With no replica ready,
// requests are refused and dropped (no endpoint behind the Service).
// End-to-end latency is mixed as TTFT is (a backlog's wait delays the
// last token as the first); the KV cache's share is the steady state's
// mean blocks (and the cached prefixes') over the replica's, averaged
// over the ready replicas' time, with the highest piece's as the peak.
// Recompute preemptions are the fast model's per request at each piece's
// rate (serving/llmpreempt.go: where the decoding requests' drift
// reaches the cache), with the latency they add.

// LLM is an LLM service's engine and request lengths.
type LLM struct {
	Config        serving.LLMConfig
	Input, Output serving.TokenDist
	// Router, when set, is the gateway in front of the replicas (round
	// robin, least outstanding, llm-d's prefix-aware picker): with more
	// than one ready a replica's steady state is serving.SteadyLLMRouted
	// at its share of the rate, among that many replicas. nil: a
	// Kubernetes Service spreading the requests at random (SteadyLLM).
	Router *serving.Router
	// Disagg, when set, makes each replica a disaggregated one: a pool
	// of prefill engines and a pool of decode engines (serving.Disagg,
	// Config the engine's limits they share); its steady state is
	// serving.SteadyLLMDisagg at the replica's share of the rate, its KV
	// cache the decode pool's. Router is nil then: the replicas share
	// the requests at random.
	Disagg *serving.Disagg
	// CapacityPerReplica is serving.LLMCapacity of Config (requests a
	// second one replica serves; serving.DisaggCapacity of Disagg); New
	// computes it when 0.
	CapacityPerReplica float64
	// TTFTSLOMs and TPOTSLOMs are the targets whose attainment the report
	// measures (0: none).
	TTFTSLOMs, TPOTSLOMs float64
	// Curve, when set, is the fast model at the grid rates a run may ask
	// for, computed with the plan (NewLLMCurve of this LLM): a run reads
	// it and computes only the rates outside it. It is read-only.
	Curve *LLMCurve
}

// LLMCurve is one replica's steady states at the grid rates from a
// lowest one up to its capacity, and at the capacity itself: what a run
// would compute at each (the same SteadyLLM call), computed once for
// every run of a plan, so that a run need not evaluate the fast model at
// all while its per-replica rates stay within it.
type LLMCurve struct {
	capPer float64
	capSt  serving.LLMSteady
	// lo is the grid key of points[0]; a nil point is a grid rate where
	// the fast model says overload (capacity's state then).
	lo     int
	points []*serving.LLMSteady
}

// llmCurveKeys bounds a curve: the grid rates from capacity down by
// 1.02^64 (to 28% of it), where an autoscaled service's replicas spend
// their time (the shipped examples' runs ask for few rates below it). A
// run computes any lower rate it meets itself, as it would without a
// curve: the same figures, at the run's cost.
const llmCurveKeys = 64

// NewLLMCurve is l's curve from minRate (per replica; 0: as low as the
// bound lets it go) up to l's capacity (l.CapacityPerReplica, or
// serving.LLMCapacity when 0).
func NewLLMCurve(l *LLM, minRate float64) (*LLMCurve, error) {
	capPer, capSt, err := llmCapacity(l)
	if err != nil {
		return nil, err
	}
	c := &LLMCurve{capPer: capPer, capSt: capSt}
	hi := llmKey(capPer)
	lo := hi - llmCurveKeys
	if minRate > 0 {
		lo = max(lo, llmKey(minRate))
	}
	c.lo = lo
	for k := lo; k <= hi; k++ {
		st, err := llmSteadyAt(l, k, capPer)
		if err != nil {
			return nil, err
		}
		c.points = append(c.points, st)
	}
	return c, nil
}

// llmKey is the grid key of a rate: the nearest grid rate's.
func llmKey(rate float64) int { return int(math.Round(math.Log(rate) / llmLogGrid)) }

// llmLogGrid is math.Log1p(llmGrid), the same float64
// (TestLLMLogGrid).
const llmLogGrid = 0.019802627296179712429

// key is llmKey(rate), the last key found remembered with the lowest and
// highest rates that gave it: a rate between them gives it too (llmKey
// does not decrease as the rate grows), without a logarithm.
func (l *llmRun) key(rate float64) int {
	if l.keyOK && rate >= l.keyLo && rate <= l.keyHi {
		return l.keyK
	}
	k := llmKey(rate)
	if l.keyOK && k == l.keyK {
		l.keyLo, l.keyHi = min(l.keyLo, rate), max(l.keyHi, rate)
	} else {
		l.keyK, l.keyLo, l.keyHi, l.keyOK = k, rate, rate, true
	}
	return k
}

// llmSteadyAt is the steady state at grid key k (capped at capacity), nil
// where the fast model says overload.
func llmSteadyAt(l *LLM, k int, capPer float64) (*serving.LLMSteady, error) {
	grid := math.Exp(float64(k) * llmLogGrid)
	st, err := l.steady(min(grid, capPer))
	if err != nil {
		if errors.Is(err, serving.ErrLLMOverload) {
			// Overloaded at the grid rate just below capacity: capacity's.
			return nil, nil
		}
		return nil, err
	}
	return &st, nil
}

// llmCapacity is l's capacity per replica and its steady state there.
func llmCapacity(l *LLM) (float64, serving.LLMSteady, error) {
	capPer := l.CapacityPerReplica
	if capPer == 0 {
		var c float64
		var err error
		if l.Disagg != nil {
			c, err = serving.DisaggCapacity(*l.Disagg, l.Input, l.Output)
		} else {
			c, err = serving.LLMCapacity(l.Config, l.Input, l.Output)
		}
		if err != nil {
			return 0, serving.LLMSteady{}, err
		}
		capPer = c
	}
	st, err := l.steady(capPer)
	return capPer, st, err
}

// steady is one replica's steady state at rate (a second) of a
// Poisson stream: the engine's (serving.SteadyLLM) or the disaggregated
// replica's whole (serving.SteadyLLMDisagg).
func (l *LLM) steady(rate float64) (serving.LLMSteady, error) {
	if l.Disagg != nil {
		st, err := serving.SteadyLLMDisagg(*l.Disagg, rate, l.Input, l.Output)
		return st.Whole(), err
	}
	return serving.SteadyLLM(l.Config, rate, l.Input, l.Output)
}

// blocks is a replica's KV cache in blocks (a disaggregated one's: its
// decode pool's).
func (l *LLM) blocks() int64 {
	if d := l.Disagg; d != nil {
		return d.Decode.Blocks() * int64(d.DecodeReplicas)
	}
	return l.Config.Blocks()
}

// llmGrid is the relative spacing of the rates the fast model is asked
// at: a rate is served with the nearest one's distributions (within
// 1% of it).
const llmGrid = 0.02

// llmCapKey is the grid key of the capacity's steady state.
const llmCapKey = math.MinInt

// pkey names a steady state of a run: grid key k among c ready replicas
// behind the service's router (c 0 at random, or with one ready: the
// state is then the replica's alone, whatever the count).
type pkey struct{ c, k int }

// capPKey is the capacity's steady state.
var capPKey = pkey{0, llmCapKey}

// LLMReport is an LLM service's figures over the run.
type LLMReport struct {
	// TTFT and TPOT of the requests served, ms: mean and quantiles (read
	// from histograms of 2% buckets).
	TTFTMeanMs, TTFTP50Ms, TTFTP95Ms, TTFTP99Ms float64
	TPOTMeanMs, TPOTP50Ms, TPOTP95Ms, TPOTP99Ms float64
	// End-to-end latency, arrival to last token (the fast model's
	// mixture over output lengths, serving.LLMSteady), ms.
	E2EMeanMs, E2EP50Ms, E2EP95Ms, E2EP99Ms float64
	// KVCacheMean is the mean share of a ready replica's KV-cache blocks
	// in use over the ready replicas' time (the fast model's mean blocks
	// at each piece's rate, and the cached prefixes'; at capacity's
	// while a backlog waits), KVCachePeak the highest share of any piece:
	// what vLLM's kv_cache_usage_perc averages to over an interval, not
	// a step's peak. KVCacheBlocks is a replica's cache in blocks.
	KVCacheMean, KVCachePeak float64
	KVCacheBlocks            int64
	// PrefixHitRate is the share of the prompt tokens served that the
	// replicas found in their prefix cache (the prefill pool's in a
	// disaggregated one) instead of prefilling: the cached prefix over
	// the mean prompt (every request hits but each prefix's first on a
	// replica, not counted); 0 without shared prefixes.
	PrefixHitRate float64
	// TTFTSLOMs and TPOTSLOMs are the targets (0: none); the attainments
	// the share of arrived requests served within each.
	TTFTSLOMs, TPOTSLOMs           float64
	TTFTAttainment, TPOTAttainment float64
	// InputTokens and OutputTokens are the prompt and output tokens of
	// the requests served (their mean lengths times the requests).
	InputTokens, OutputTokens float64
	// GPUsPerReplica is the engine's GPUs, tensor x pipeline parallel (a disaggregated
	// replica's: both pools' GPUs); CapacityPerReplica the requests a
	// second one replica serves.
	GPUsPerReplica     int
	CapacityPerReplica float64
	// Disagg is a disaggregated service's pools (nil otherwise).
	Disagg *LLMDisaggReport
	// Preemptions are the recompute preemptions of the requests served
	// (the fast model's count per request at each piece's rate,
	// serving.LLMSteady.PreemptionsPer1k), PreemptionsPer1k per 1,000 of
	// them; PreemptionDelayMs the mean latency they add to a request
	// (not in TTFT, TPOT or E2E).
	Preemptions, PreemptionsPer1k, PreemptionDelayMs float64
}

// LLMDisaggReport is a disaggregated replica's two pools: each pool's
// engines and GPUs an engine, the KV transfer's bandwidth and latency,
// and over the requests served the prefill pool's mean TTFT (queue and
// prefill; behind a backlog its wait too) and the transfer's mean. The
// service's TPOT is the decode pool's, its KV cache figures the decode
// pool's blocks (all its engines').
type LLMDisaggReport struct {
	PrefillReplicas, PrefillTP, DecodeReplicas, DecodeTP int
	KVTransferGBps, KVTransferLatencyMs                  float64
	PrefillTTFTMeanMs, KVTransferMeanMs                  float64
}

// llmCap is a service's capacity with some replicas ready (requests a
// second, all of them), its steady state there (a replica's) and the
// histogram buckets of that state's TPOT points.
type llmCap struct {
	total float64
	st    *serving.LLMSteady
	tpot  []int
}

// llmRun is an LLM service's state over a run.
type llmRun struct {
	spec *LLM
	// err is the first error of the fast model other than an overload
	// (a gpuplan bug: the build checked the engine): the run reports it
	// rather than take the capacity's steady state for it.
	err error
	// points are the fast model's steady states by key (nil:
	// overloaded there), computed when the run first needs them.
	points    map[pkey]*serving.LLMSteady
	eIn, eOut float64
	capSt     *serving.LLMSteady
	// capTPOT are the histogram buckets of capSt's TPOT points.
	capTPOT []int
	// buckets are the histogram buckets of the TTFT, TPOT and E2E points
	// of each steady state the run has flushed (serving.HistBuckets at no
	// shift), found once.
	buckets map[pkey]*pointBuckets
	// capPer is the requests a second one replica serves; blocks its KV
	// cache's blocks.
	capPer float64
	blocks float64
	// sticky: behind the prefix-aware picker with shared prefixes, whose
	// groups stay on the replicas they first went to: the service's
	// capacity with c ready is its expected busiest replica's (serving.
	// PrefixAwareCapacity), in caps by c, with its steady state there.
	sticky bool
	caps   map[int]*llmCap
	// pend is the requests served at each grid key since the last flush,
	// but for key cur's, which curN sums (curOK: it holds one) until
	// another key is served: the same sums, added in the same order,
	// without a map access a piece at a steady rate.
	pend  map[pkey]float64
	cur   pkey
	curN  float64
	curOK bool
	// lastRate and lastReady are the rate and replicas at asked last,
	// lastSt and lastKey its answer.
	lastRate  float64
	lastReady int
	lastSt    *serving.LLMSteady
	lastKey   pkey
	// keyK is the grid key found last, keyLo and keyHi the lowest and
	// highest rates seen to give it (keyOK: there is one).
	keyK         int
	keyLo, keyHi float64
	keyOK        bool
	// ttft, tpot and e2e are the run's distributions up to the last
	// bucket; bttft, btpot and be2e the bucket's.
	ttft, tpot, e2e, bttft, btpot, be2e serving.Histogram
	// ttftSum, tpotSum and e2eSum sum the requests' means; preempt and
	// delaySum the preemptions and the latency they add.
	ttftSum, tpotSum, e2eSum float64
	preempt, delaySum        float64
	inTok, outTok            float64
	// prefillSum and xferSum sum a disaggregated replica's prefill TTFT
	// and transfer means.
	prefillSum, xferSum float64
	// kvSum sums the ready replicas' KV-cache share over their time
	// (replica-ms), kvTime that time; kvPeak is the highest share.
	kvSum, kvTime, kvPeak float64
	// windowMs is the window of the latency quantile the scaler reads (0:
	// none), window the pieces served within it (llmquantile.go), cum
	// the buckets' counts while the quantile is read.
	windowMs int64
	window   []servedPiece
	cum      []float64
}

func (l *LLM) validate() error {
	if err := l.Config.Check(); err != nil {
		return err
	}
	if l.Disagg != nil {
		if err := l.Disagg.Check(); err != nil {
			return err
		}
		if l.Router != nil {
			return llmError("llm: a disaggregated service's replicas share the requests at random (no router)")
		}
	}
	if l.stickyPrefixes() {
		if _, err := serving.PrefixGroups(l.Config); err != nil {
			return err
		}
		if !serving.PrefixSticky(l.Config, l.Input) {
			return serving.ErrPrefixSpill
		}
	}
	if err := l.Input.Check(); err != nil {
		return err
	}
	if err := l.Output.Check(); err != nil {
		return err
	}
	if l.CapacityPerReplica < 0 || l.TTFTSLOMs < 0 || l.TPOTSLOMs < 0 {
		return errNegativeLLM
	}
	return nil
}

type llmError string

func (e llmError) Error() string { return string(e) }

const errNegativeLLM = llmError("llm: capacity and SLO targets must not be negative")

// newLLMRun starts an LLM service's books: its capacity's steady state
// from the plan's curve when it has one.
func newLLMRun(l *LLM) (*llmRun, error) {
	r := &llmRun{spec: l, points: map[pkey]*serving.LLMSteady{}, pend: map[pkey]float64{}}
	if c := l.Curve; c != nil && (l.CapacityPerReplica == 0 || l.CapacityPerReplica == c.capPer) {
		r.capPer, r.capSt = c.capPer, &c.capSt
	} else {
		capPer, st, err := llmCapacity(l)
		if err != nil {
			return nil, err
		}
		r.capPer, r.capSt = capPer, &st
	}
	r.eIn, r.eOut = meanLength(l.Input), meanLength(l.Output)
	r.blocks = float64(l.blocks())
	r.sticky = l.stickyPrefixes()
	for _, x := range r.capSt.TPOTPoints {
		r.capTPOT = append(r.capTPOT, serving.HistBucket(x))
	}
	return r, nil
}

// meanLength is a length distribution's mean, from its quantiles as the
// fast model takes them.
func meanLength(d serving.TokenDist) float64 {
	switch d.Kind {
	case serving.Fixed:
		return d.Mean
	case serving.Uniform:
		return float64(d.Min+d.Max) / 2
	case serving.Empirical:
		return d.Mean
	}
	// A normal clamped to [Min, Max]: its mean over 1,000 quantiles.
	s := 0.0
	for i := range 1000 {
		z := math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/1000-1)
		s += math.Min(math.Max(math.Round(d.Mean+d.StdDev*z), float64(d.Min)), float64(d.Max))
	}
	return s / 1000
}

// stickyPrefixes reports whether l's prefixes stay on the replicas the
// llm-d picker first sent them to (prefix-aware routing of a prefix
// cache: serving's llmprefixroute.go).
func (l *LLM) stickyPrefixes() bool {
	return l.Router != nil && *l.Router == serving.PrefixAware && l.Disagg == nil && l.Config.PrefixHitTokens > 0
}

// capAt is the service's capacity with ready (>= 1) replicas, its state
// there and that state's key: ready times a replica's, but behind the
// prefix-aware picker with prefixes the busiest replica's over its share
// of the groups.
func (l *llmRun) capAt(ready int) (float64, *serving.LLMSteady, pkey) {
	if !l.sticky || ready <= 1 {
		return float64(ready) * l.capPer, l.capSt, capPKey
	}
	c := l.stickyCap(ready)
	return c.total, c.st, pkey{ready, llmCapKey}
}

// stickyCap is capAt's figures for ready (> 1) replicas behind the
// picker, found the first time the run meets that many.
func (l *llmRun) stickyCap(ready int) *llmCap {
	if c, ok := l.caps[ready]; ok {
		return c
	}
	x := l.spec
	c := &llmCap{total: float64(ready) * l.capPer, st: l.capSt, tpot: l.capTPOT}
	total, err := serving.PrefixAwareCapacity(x.Config, ready, x.Input, x.Output)
	if err == nil {
		var st serving.LLMSteady
		if st, err = serving.SteadyLLMRouted(x.Config, total/float64(ready), ready, serving.PrefixAware, x.Input, x.Output); err == nil {
			c = &llmCap{total: total, st: &st}
			for _, v := range st.TPOTPoints {
				c.tpot = append(c.tpot, serving.HistBucket(v))
			}
		}
	}
	if err != nil && !errors.Is(err, serving.ErrLLMOverload) {
		l.fail(fmt.Errorf("prefix-aware capacity of %d replicas: %w", ready, err))
	}
	if l.caps == nil {
		l.caps = map[int]*llmCap{}
	}
	l.caps[ready] = c
	return c
}

// fail keeps the run's first fast-model error.
func (l *llmRun) fail(err error) {
	if l.err == nil {
		l.err = err
	}
}

// Err is the first error the LLM service's fast model met during the run
// other than an overload (nil for any other service): the run's figures
// took the capacity's steady state where it failed, and a run reports it
// as a broken invariant.
func (s *Service) Err() error {
	if s.llm == nil {
		return nil
	}
	return s.llm.err
}

// at is one of ready replicas' steady state at rate (per second each),
// from the grid rate nearest it, and its key; the capacity's above it.
func (l *llmRun) at(rate float64, ready int) (*serving.LLMSteady, pkey) {
	if l.sticky && ready > 1 {
		if c := l.stickyCap(ready); rate >= c.total/float64(ready) {
			return c.st, pkey{ready, llmCapKey}
		}
	} else if rate >= l.capPer {
		return l.capSt, capPKey
	}
	if l.spec.Router == nil || ready <= 1 {
		ready = 0
	}
	if l.lastSt != nil && rate == l.lastRate && ready == l.lastReady {
		return l.lastSt, l.lastKey
	}
	st, k := l.lookup(rate, ready)
	l.lastRate, l.lastReady, l.lastSt, l.lastKey = rate, ready, st, k
	return st, k
}

// lookup is at for a rate below capacity (ready 0: at random, or one
// replica): the plan's curve, the run's memo, or the fast model.
func (l *llmRun) lookup(rate float64, ready int) (*serving.LLMSteady, pkey) {
	k := pkey{ready, l.key(rate)}
	if c := l.spec.Curve; ready == 0 && c != nil && c.capPer == l.capPer && k.k >= c.lo && k.k < c.lo+len(c.points) {
		if st := c.points[k.k-c.lo]; st != nil {
			return st, k
		}
		return l.capSt, capPKey
	}
	if st, ok := l.points[k]; ok {
		if st == nil {
			_, cst, ck := l.capAt(max(ready, 1))
			return cst, ck
		}
		return st, k
	}
	var st *serving.LLMSteady
	var err error
	if ready == 0 {
		st, err = llmSteadyAt(l.spec, k.k, l.capPer)
	} else {
		total, _, _ := l.capAt(ready)
		st, err = llmRoutedAt(l.spec, k, total/float64(ready))
	}
	if err != nil {
		l.fail(fmt.Errorf("steady state at %.6g requests/s a replica: %w", math.Exp(float64(k.k)*llmLogGrid), err))
	}
	if err != nil || st == nil {
		// Overloaded at the grid rate just below capacity: capacity's.
		l.points[k] = nil
		_, cst, ck := l.capAt(max(ready, 1))
		return cst, ck
	}
	l.points[k] = st
	return st, k
}

// llmRoutedAt is the steady state of one of k.c replicas behind l's
// router at grid key k.k (capped at capacity), nil where the fast model
// says overload.
func llmRoutedAt(l *LLM, k pkey, capPer float64) (*serving.LLMSteady, error) {
	grid := math.Exp(float64(k.k) * llmLogGrid)
	st, err := serving.SteadyLLMRouted(l.Config, min(grid, capPer), k.c, *l.Router, l.Input, l.Output)
	if err != nil {
		if errors.Is(err, serving.ErrLLMOverload) {
			return nil, nil
		}
		return nil, err
	}
	return &st, nil
}

// point is the steady state of a key at (the capacity's for capPKey).
func (l *llmRun) point(k pkey) *serving.LLMSteady {
	if k == capPKey {
		return l.capSt
	}
	if k.k == llmCapKey {
		return l.stickyCap(k.c).st
	}
	if c := l.spec.Curve; k.c == 0 && c != nil && c.capPer == l.capPer && k.k >= c.lo && k.k < c.lo+len(c.points) {
		return c.points[k.k-c.lo]
	}
	return l.points[k]
}

// overloaded reports whether lambda on ready (>= 1) replicas is above what
// they serve.
func (s *Service) overloaded(lambda float64, ready int) bool {
	if s.llm != nil {
		total, _, _ := s.llm.capAt(ready)
		return lambda > total
	}
	return s.cycle(lambda, ready).Regime == serving.Overload
}

// llmPieceEnd is where a piece of Advance from a (at most end, before
// which the load's curve does not change) ends for an LLM service on a
// diurnal curve, so that the piece is accounted as its scaler's periods
// would be one by one: a piece whose rate stays within one grid key of
// the curve (below capacity) is served at that key's steady state, as
// is every period within it, so it ends where the rate may leave the key,
// on the periods' grid; a piece starting near a key's edge is its period
// (to the grid's next point), as the period would be. A deferred stretch
// near capacity, where the latencies are steep in the rate, then costs a
// piece per key the rate crosses, with the figures of its periods
// accounted one by one (TestScalerPeriodsWithoutEventsSameRun). ok is
// false where the steady state is not the key's alone (a router among
// several replicas, prefix-aware routing) or no rate arrives: Advance
// then cuts by PieceEnd.
func (s *Service) llmPieceEnd(a, end int64, ready int) (int64, bool) {
	l := s.llm
	if ready < 1 || l.sticky && ready > 1 || l.spec.Router != nil && ready > 1 {
		return 0, false
	}
	ld := &s.spec.Load
	lambda := ld.At(a)
	if !(lambda > 0) {
		return 0, false
	}
	grid := (a/s.step + 1) * s.step
	if grid >= end {
		return end, true // within one period
	}
	r := float64(ready)
	g := llmLogGrid
	k := float64(llmKey(lambda / r))
	lo := math.Exp((k-0.5)*g) * r * (1 + 1e-9)
	hi := math.Min(math.Exp((k+0.5)*g)*r, l.capPer*r) * (1 - 1e-9)
	// The most the rate moves in a period: a rate on the grid within
	// [lo + drift, hi - drift] stays within [lo, hi] until the next (no
	// spike starts or ends within the piece: the one now is the one
	// throughout).
	drift := ld.Drift(a, s.step)
	lo, hi = lo+drift, hi-drift
	if lambda < lo || lambda > hi {
		return grid, true
	}
	return min(end, ld.FirstOutside(grid, s.step, end, lo, hi)), true
}

// advanceLLM accounts for dt ms at rate lambda on ready replicas.
func (s *Service) advanceLLM(dt, lambda float64, ready int) {
	l := s.llm
	arrived := lambda * dt / 1000
	s.Arrived += arrived
	if ready == 0 {
		s.Dropped += s.backlog + arrived
		s.backlog = 0
		return
	}
	capTotal, capSt, _ := l.capAt(ready)
	if s.backlog == 0 && lambda <= capTotal {
		if arrived > 0 {
			st, k := l.at(lambda/float64(ready), ready)
			l.pendAdd(k, arrived)
			l.served(arrived)
			l.kvAdd(st, ready, dt)
			l.recordPiece(s.pieceEnd, dt, arrived, st, 0)
		} else {
			l.kvAdd(nil, ready, dt)
		}
		s.Served += arrived
		return
	}
	l.kvAdd(capSt, ready, dt)
	// Behind: the replicas serve at capacity, the requests waiting
	// behind the backlog (its mean over the piece).
	start := s.backlog
	served := min(capTotal*dt/1000, s.backlog+arrived)
	s.backlog = max(0, s.backlog+arrived-served)
	waitMs := (start + s.backlog) / 2 / capTotal * 1000
	if served > 0 {
		w := served / serving.LLMQuantilePoints
		capTPOT := l.capTPOT
		if capSt != l.capSt {
			capTPOT = l.stickyCap(ready).tpot
		}
		l.bttft.AddPoints(capSt.TTFTPoints, waitMs, w)
		l.btpot.AddToBuckets(capTPOT, w)
		l.be2e.AddPoints(capSt.E2EPoints, waitMs, w)
		if l.spec.Disagg != nil {
			l.prefillSum += served * (capSt.PrefillTTFTMeanMs + waitMs)
			l.xferSum += served * capSt.KVTransferMeanMs
		}
		l.ttftSum += served * (capSt.TTFTMeanMs + waitMs)
		l.tpotSum += served * capSt.TPOTMeanMs
		l.e2eSum += served * (capSt.E2EMeanMs + waitMs)
		l.preempt += served * capSt.PreemptionsPer1k / 1000
		l.delaySum += served * capSt.PreemptionDelayMs
		l.served(served)
		l.recordPiece(s.pieceEnd, dt, served, capSt, waitMs)
	}
	s.Served += served
}

// kvAdd counts dt ms of ready replicas each at steady state st (nil:
// idle, nothing cached but the prefixes).
func (l *llmRun) kvAdd(st *serving.LLMSteady, ready int, dt float64) {
	if l.blocks <= 0 || dt <= 0 {
		return
	}
	share := kvShare(st, l.idlePrefixBlocks(ready), l.blocks)
	t := float64(ready) * dt
	l.kvSum += share * t
	l.kvTime += t
	l.kvPeak = max(l.kvPeak, share)
}

// kvShare is the share of a replica's blocks held at steady state st
// (its requests' and its cached prefixes'), or with none decoding (st
// nil) by the idle prefix blocks.
func kvShare(st *serving.LLMSteady, idle, blocks float64) float64 {
	b := idle
	if st != nil {
		b = st.KVBlocks + st.PrefixBlocks
	}
	return math.Min(1, b/blocks)
}

// idlePrefixBlocks are the cached prefixes' blocks of one of ready
// replicas with none decoding: every prefix's (LLMConfig.
// PrefixCacheBlocks), behind the picker its own groups' (a ready-th of
// them on average), none in a disaggregated replica's decode pool (the
// cache the report counts).
func (l *llmRun) idlePrefixBlocks(ready int) float64 {
	switch {
	case l.spec.Disagg != nil:
		return 0
	case l.sticky && ready > 1:
		return float64(l.spec.Config.PrefixCacheBlocks) / float64(ready)
	}
	return float64(l.spec.Config.PrefixCacheBlocks)
}

// pendAdd adds n requests served at key k to pend.
func (l *llmRun) pendAdd(k pkey, n float64) {
	if !l.curOK || k != l.cur {
		if l.curOK {
			l.pend[l.cur] = l.curN
		}
		l.cur, l.curN, l.curOK = k, l.pend[k], true
	}
	l.curN += n
}

// served counts the tokens of n requests served.
func (l *llmRun) served(n float64) {
	l.inTok += n * l.eIn
	l.outTok += n * l.eOut
}

// flush adds the requests served at each grid rate to the bucket's
// histograms, in the keys' order.
func (l *llmRun) flush() {
	if l.curOK {
		l.pend[l.cur] = l.curN
		l.curOK = false
	}
	if len(l.pend) == 0 {
		return
	}
	keys := make([]pkey, 0, len(l.pend))
	for k := range l.pend {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b pkey) int {
		if a.c != b.c {
			return cmp.Compare(a.c, b.c)
		}
		return cmp.Compare(a.k, b.k)
	})
	for _, k := range keys {
		n, st := l.pend[k], l.point(k)
		w := n / serving.LLMQuantilePoints
		bk := l.bucketsOf(k, st)
		l.bttft.AddToBuckets(bk.ttft, w)
		l.btpot.AddToBuckets(bk.tpot, w)
		l.be2e.AddToBuckets(bk.e2e, w)
		if l.spec.Disagg != nil {
			l.prefillSum += n * st.PrefillTTFTMeanMs
			l.xferSum += n * st.KVTransferMeanMs
		}
		l.ttftSum += n * st.TTFTMeanMs
		l.tpotSum += n * st.TPOTMeanMs
		l.e2eSum += n * st.E2EMeanMs
		l.preempt += n * st.PreemptionsPer1k / 1000
		l.delaySum += n * st.PreemptionDelayMs
	}
	clear(l.pend)
}

// pointBuckets are the histogram buckets of a steady state's TTFT, TPOT
// and E2E points.
type pointBuckets struct{ ttft, tpot, e2e []int }

// bucketsOf is the buckets of steady state st at key k: found the first
// time the run flushes requests served at k.
func (l *llmRun) bucketsOf(k pkey, st *serving.LLMSteady) *pointBuckets {
	if b, ok := l.buckets[k]; ok {
		return b
	}
	b := &pointBuckets{ttft: serving.HistBuckets(st.TTFTPoints, 0, nil), tpot: serving.HistBuckets(st.TPOTPoints, 0, nil),
		e2e: serving.HistBuckets(st.E2EPoints, 0, nil)}
	if l.buckets == nil {
		l.buckets = map[pkey]*pointBuckets{}
	}
	l.buckets[k] = b
	return b
}

// bucketP95 is the bucket's p95 TTFT, and starts a new bucket.
func (l *llmRun) bucketP95() float64 {
	l.flush()
	q := 0.0
	if l.bttft.Total() > 0 {
		q = l.bttft.Quantile(0.95)
	}
	l.ttft.Merge(&l.bttft)
	l.tpot.Merge(&l.btpot)
	l.e2e.Merge(&l.be2e)
	l.bttft.Reset()
	l.btpot.Reset()
	l.be2e.Reset()
	return q
}

// metricsLLM is what an LLM service exports at rate lambda with ready
// (>= 1) replicas: vLLM's num_requests_waiting is the requests not yet
// scheduled, each waiting for the step in progress to end (the mean TTFT
// less the mean step, the prefill's), and behind a backlog its wait too;
// in flight the waiting and the running (Little's law over TTFT and the
// output's decode steps); utilization the rate over capacity.
func (s *Service) metricsLLM(lambda float64, ready int) Metrics {
	l := s.llm
	per := lambda / float64(ready)
	if per <= 0 && s.backlog == 0 {
		return Metrics{Rate: lambda, InFlight: s.backlog} // nothing arrives, nothing waits
	}
	_, st, _ := l.capAt(ready)
	if per > 0 {
		st, _ = l.at(per, ready)
	}
	return s.metricsLLMOf(lambda, ready, st, s.backlog)
}

// metricsLLMOf is metricsLLM with the steady state st of its rate and
// backlog requests waiting.
func (s *Service) metricsLLMOf(lambda float64, ready int, st *serving.LLMSteady, backlog float64) Metrics {
	l := s.llm
	m := Metrics{Rate: lambda, InFlight: backlog}
	per := lambda / float64(ready)
	capTotal, _, _ := l.capAt(ready)
	m.QueueLatencyMs = max(st.TTFTMeanMs-st.StepMs, 0)
	if backlog > 0 {
		m.QueueLatencyMs += backlog / capTotal * 1000
	}
	m.InFlight += lambda * (st.TTFTMeanMs + st.TPOTMeanMs*max(l.eOut-1, 0)) / 1000
	if l.sticky && ready > 1 {
		m.Utilization = 100 * math.Min(1, lambda/capTotal)
	} else {
		m.Utilization = 100 * math.Min(1, per/l.capPer)
	}
	// Running: in flight less waiting (the queue's wait over the rate,
	// and the backlog).
	m.Running = max(m.InFlight-lambda*m.QueueLatencyMs/1000-backlog, 0)
	if l.blocks > 0 {
		m.KVCacheUsage = kvShare(st, l.idlePrefixBlocks(ready), l.blocks)
	}
	return m
}

// SettledBand is, for an LLM service whose scaler reads more than the
// rate, the Hold around the rate at now: the band of request rates
// [Lo, Hi] within which the scaler, asked at a period with all replicas
// ready, keeps them (its HPA Holds them: at its maximum or minimum a
// proposal beyond the bound holds them too), and the rates below it,
// down to Below, at which it proposes fewer but its scale-down window
// still holds them (HPA.Hover: the rate at now may be one of those;
// Hold.End finds where the window lets them go). At each it changes
// nothing but the recommendation it records (SkipPeriods records each
// period's), and no backlog forms (below capacity by the most the rate
// moves in a period). With no backlog its metrics are a function of the
// rate: over one grid key of the plan's curve each is linear in it (the
// steady state is the key's), so the scaler's answer, monotone in its
// metric, keeps the replicas across a key when it does at both ends (and
// proposes fewer, its trigger active, across a key below the band when
// it does at both ends). The
// band is the keys around now's (or above now's) that do, within the
// curve (no rate is evaluated here). ok is false when there is none: a
// backlog, a replica not ready, no curve, a router among more than one
// replica (its steady states are not the curve's), or a scaler that would
// change something.
//
// Periods in the band need no accounting either: nothing a decision
// reads depends on it, so the run accounts the service lazily over them,
// as it does a service whose scaler reads only the rate.
func (s *Service) SettledBand(now int64, replicas, minR, maxR int) (h Hold, ok bool) {
	l := s.llm
	if _, windowed := latencyQuantile(s.scaler); windowed {
		// Its metric is the window's, not the rate's.
		return Hold{}, false
	}
	if l == nil || rateOnly(s.scaler) || s.backlog != 0 || replicas < 1 || replicas < minR || replicas > maxR || l.spec.Router != nil && replicas > 1 {
		return Hold{}, false
	}
	c := l.spec.Curve
	if c == nil || c.capPer != l.capPer {
		return Hold{}, false
	}
	o := autoscale.Observation{Replicas: replicas, Ready: replicas}
	var keeps, fewer func(Metrics) bool
	var held, window int64
	hover := false
	switch x := s.scaler.(type) {
	case HPA:
		if !x.H.Settled(replicas) {
			return Hold{}, false // no metric keeps it steady
		}
		obs := func(m Metrics) autoscale.Observation {
			o.Metric = m.value(x.Metric, replicas)
			if x.H.Spec().Type == autoscale.Value && !x.Metric.Average() {
				o.Metric *= float64(replicas)
			}
			return o
		}
		keeps = func(m Metrics) bool { return x.H.Holds(obs(m)) }
		fewer = func(m Metrics) bool { return x.H.Proposal(obs(m)) < replicas }
		held, window, hover = x.H.Hover(replicas)
	case KEDA:
		if !x.K.Settled(replicas) {
			return Hold{}, false
		}
		trigger := func(m Metrics) float64 {
			v := m.value(x.Metric, replicas)
			if !x.Metric.Average() {
				v *= float64(replicas)
			}
			return v
		}
		keeps = func(m Metrics) bool { return x.K.Holds(o, trigger(m)) }
		fewer = func(m Metrics) bool { v := trigger(m); return x.K.Active(o, v) && x.K.Proposal(o, v) < replicas }
		held, window, hover = x.K.Hover(replicas)
	default:
		return Hold{}, false
	}
	r := float64(replicas)
	// The most the rate moves in a period, which a piece between two
	// periods in the band may reach beyond it.
	ld := &s.spec.Load
	// The band holds until the load's next change (band): the spikes now
	// are those throughout.
	drift := ld.Drift(now, s.step)
	top := 0.99*r*l.capPer - drift
	g := llmLogGrid
	// at reports whether key k's rates, at both ends (a closed interval: a
	// rate on the edge between two keys is either's, and both are asked),
	// are ones where ask holds, below capacity.
	at := func(k int, ask func(Metrics) bool) bool {
		if k < c.lo || k >= c.lo+len(c.points) || c.points[k-c.lo] == nil {
			return false
		}
		st := c.points[k-c.lo]
		a, b := math.Exp((float64(k)-0.5)*g)*r, math.Exp((float64(k)+0.5)*g)*r
		return b <= top && ask(s.metricsLLMOf(a, replicas, st, 0)) && ask(s.metricsLLMOf(b, replicas, st, 0))
	}
	pass := func(k int) bool { return at(k, keeps) }
	// below reports whether key k's rates propose fewer replicas, the
	// trigger active: kept while the window holds them.
	below := func(k int) bool { return hover && at(k, fewer) }
	rate := ld.At(now)
	if !(rate > 0) {
		return Hold{}, false
	}
	k0 := l.key(rate / r)
	k1 := k0
	if !pass(k0) {
		// Below the band, held by the window: the band is above.
		if !below(k0) || now >= held {
			return Hold{}, false
		}
		for k1 = k0 + 1; !pass(k1); k1++ {
			if !below(k1) {
				return Hold{}, false
			}
		}
	}
	k2 := k1
	for pass(k1 - 1) {
		k1--
	}
	for pass(k2 + 1) {
		k2++
	}
	kb := k1
	for below(kb - 1) {
		kb--
	}
	// Shrunk a little: a rate inside is one of the keys k1..k2.
	h = Hold{Lo: math.Exp((float64(k1)-0.5)*g) * r * (1 + 1e-9), Hi: math.Exp((float64(k2)+0.5)*g) * r * (1 - 1e-9)}
	if kb < k1 {
		h.Below = math.Exp((float64(kb)-0.5)*g) * r * (1 + 1e-9)
		h.Held, h.Window = held, window
	}
	return h, true
}

// A Hold is where an LLM service's scaler keeps its replicas
// (SettledBand): at every period whose rate is within [Lo, Hi]; with a
// Window, also at a period whose rate is within [Below, Lo), where it
// proposes fewer, while its scale-down window holds a recommendation of
// the replicas: before Held, or within Window of the last period in
// [Lo, Hi].
type Hold struct {
	Lo, Hi, Below float64
	Held, Window  int64
}

// End is the first of the periods from, from+step, ... (before until)
// at which the scaler may not keep the replicas: the rate of ld above
// Hi or below Below, or below Lo once the window lets them go; until if
// none is.
func (h Hold) End(ld *serving.Load, from, step, until int64) int64 {
	if h.Window <= 0 {
		return ld.FirstOutside(from, step, until, h.Lo, h.Hi)
	}
	held := h.Held
	t := from
	for t < until {
		switch r := ld.At(t); {
		case r >= h.Lo && r <= h.Hi:
			p := ld.FirstOutside(t, step, until, h.Lo, h.Hi)
			held = max(held, p-step+h.Window)
			t = p
		case r > h.Hi || r < h.Below || t >= held:
			return t
		default:
			// Below the band and held: on to the first period back in
			// it, below Below, or no longer held.
			t = ld.FirstOutside(t, step, min(until, held), h.Below, h.Lo)
		}
	}
	return until
}

// reportLLM adds the LLM figures to r.
func (s *Service) reportLLM(r *Report) {
	l := s.llm
	l.bucketP95()
	x := &LLMReport{TTFTSLOMs: l.spec.TTFTSLOMs, TPOTSLOMs: l.spec.TPOTSLOMs, InputTokens: l.inTok, OutputTokens: l.outTok,
		GPUsPerReplica: l.spec.Config.Engine.GPUs(), CapacityPerReplica: l.capPer,
		KVCacheBlocks: int64(l.blocks), KVCachePeak: l.kvPeak}
	if d := l.spec.Disagg; d != nil {
		x.GPUsPerReplica = d.GPUs()
		x.Disagg = &LLMDisaggReport{PrefillReplicas: d.PrefillReplicas, PrefillTP: max(d.Prefill.Engine.TP, 1), DecodeReplicas: d.DecodeReplicas,
			DecodeTP: max(d.Decode.Engine.TP, 1), KVTransferGBps: d.KVTransferGBps, KVTransferLatencyMs: d.KVTransferLatencyMs}
		if n := l.ttft.Total(); n > 0 {
			x.Disagg.PrefillTTFTMeanMs, x.Disagg.KVTransferMeanMs = l.prefillSum/n, l.xferSum/n
		}
	}
	if l.kvTime > 0 {
		x.KVCacheMean = l.kvSum / l.kvTime
	}
	if h := l.spec.Config.PrefixHitTokens; h > 0 && l.inTok > 0 {
		x.PrefixHitRate = float64(h) / l.eIn
	}
	if n := l.ttft.Total(); n > 0 {
		x.TTFTMeanMs, x.TPOTMeanMs, x.E2EMeanMs = l.ttftSum/n, l.tpotSum/n, l.e2eSum/n
		x.Preemptions, x.PreemptionsPer1k, x.PreemptionDelayMs = l.preempt, 1000*l.preempt/n, l.delaySum/n
		x.E2EP50Ms, x.E2EP95Ms, x.E2EP99Ms = l.e2e.Quantile(0.5), l.e2e.Quantile(0.95), l.e2e.Quantile(0.99)
		x.TTFTP50Ms, x.TTFTP95Ms, x.TTFTP99Ms = l.ttft.Quantile(0.5), l.ttft.Quantile(0.95), l.ttft.Quantile(0.99)
		x.TPOTP50Ms, x.TPOTP95Ms, x.TPOTP99Ms = l.tpot.Quantile(0.5), l.tpot.Quantile(0.95), l.tpot.Quantile(0.99)
		if s.Arrived > 0 {
			if x.TTFTSLOMs > 0 {
				x.TTFTAttainment = l.ttft.Within(x.TTFTSLOMs) * s.Served / s.Arrived
			}
			if x.TPOTSLOMs > 0 {
				x.TPOTAttainment = l.tpot.Within(x.TPOTSLOMs) * s.Served / s.Arrived
			}
		}
		// The service's latency figures are its TTFT's.
		r.P50Ms, r.P95Ms, r.P99Ms = x.TTFTP50Ms, x.TTFTP95Ms, x.TTFTP99Ms
		r.SLOMs, r.SLOAttainment = x.TTFTSLOMs, x.TTFTAttainment
	}
	r.LLM = x
}
