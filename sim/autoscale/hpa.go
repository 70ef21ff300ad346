package autoscale

import (
	"fmt"
	"math"
)

// PolicyType is what a scaling policy counts: pods, or a percentage of the
// replicas at the start of its period.
type PolicyType int

const (
	Pods PolicyType = iota
	Percent
)

// Select is how several policies of one direction combine: Max allows the
// largest change (the default), Min the smallest, Disabled none.
type Select int

const (
	SelectMax Select = iota
	SelectMin
	SelectDisabled
)

// Policy is one HPAScalingPolicy: at most Value pods (or Value percent)
// of change within any PeriodMs.
type Policy struct {
	Type     PolicyType
	Value    int
	PeriodMs int64
}

// Rules is one direction's HPAScalingRules.
type Rules struct {
	StabilizationMs int64
	Policies        []Policy
	Select          Select
	// Tolerance, when HasTolerance, replaces the cluster-wide tolerance
	// for this direction (the behavior's tolerance field; 0 is a
	// tolerance too: the controller then compares exactly).
	Tolerance    float64
	HasTolerance bool
}

// ToleranceOr is this direction's tolerance: its own where the behavior
// gives one, else the cluster's.
func (r Rules) ToleranceOr(cluster float64) float64 {
	if r.HasTolerance {
		return r.Tolerance
	}
	return cluster
}

// MetricType is how a metric's target is read: the average per ready pod
// (AverageValue and resource Utilization) or the metric as one value
// (Value, for object and external metrics).
type MetricType int

const (
	AverageValue MetricType = iota
	Value
)

// HPASpec is a HorizontalPodAutoscaler's spec with the controller's
// cluster-wide settings.
type HPASpec struct {
	MinReplicas, MaxReplicas int
	Target                   float64
	Type                     MetricType
	ScaleUp, ScaleDown       Rules
	// Tolerance is --horizontal-pod-autoscaler-tolerance (0.1).
	Tolerance float64
	// SyncMs is --horizontal-pod-autoscaler-sync-period (15 s).
	SyncMs int64
	// NoBehavior is a HorizontalPodAutoscaler that gives no
	// spec.behavior (the API server then stores none): the controller
	// takes its older path (normalizeDesiredReplicas), not the documented
	// default behavior. A scale-down waits for the highest recommendation
	// of the last ScaleDown.StabilizationMs
	// (--horizontal-pod-autoscaler-downscale-stabilization, 300 s), one
	// made exactly that long ago included; a scale-up goes at most to
	// max(2 x current, 4) replicas in one sync, whatever the syncs before
	// it did; no scale event is remembered. The rest of ScaleUp and
	// ScaleDown is unused.
	NoBehavior bool
}

// DefaultScaleUp and DefaultScaleDown are the behaviors the HPA applies
// when the spec gives none (the Kubernetes documentation's "Default
// behavior").
func DefaultScaleUp() Rules {
	return Rules{Policies: []Policy{{Percent, 100, 15_000}, {Pods, 4, 15_000}}, Select: SelectMax}
}

// DefaultScaleDown: 300 s of stabilization, then up to 100% of the
// replicas per 15 s.
func DefaultScaleDown() Rules {
	return Rules{StabilizationMs: 300_000, Policies: []Policy{{Percent, 100, 15_000}}, Select: SelectMax}
}

// NewHPASpec is a spec with Kubernetes' defaults: minReplicas 1, the
// default behaviors, tolerance 0.1, a 15 s sync.
func NewHPASpec(maxReplicas int, target float64) HPASpec {
	return HPASpec{MinReplicas: 1, MaxReplicas: maxReplicas, Target: target,
		ScaleUp: DefaultScaleUp(), ScaleDown: DefaultScaleDown(), Tolerance: 0.1, SyncMs: 15_000}
}

// Validate refuses a spec the API server would refuse, or one with no
// meaning (a target of 0).
func (s HPASpec) Validate() error {
	switch {
	case s.MinReplicas < 0 || s.MaxReplicas < 1 || s.MinReplicas > s.MaxReplicas:
		return fmt.Errorf("replicas: min %d and max %d must satisfy 0 <= min <= max and max >= 1", s.MinReplicas, s.MaxReplicas)
	case !(s.Target > 0) || math.IsInf(s.Target, 0):
		return fmt.Errorf("target: must be a positive number, got %g", s.Target)
	case s.Tolerance < 0 || s.Tolerance >= 1:
		return fmt.Errorf("tolerance: must be in [0, 1), got %g", s.Tolerance)
	case s.SyncMs <= 0:
		return fmt.Errorf("sync period: must be positive, got %d ms", s.SyncMs)
	}
	for _, r := range []Rules{s.ScaleUp, s.ScaleDown} {
		if r.StabilizationMs < 0 || r.StabilizationMs > 3_600_000 {
			return fmt.Errorf("stabilizationWindowSeconds: must be within 0..3600 s, got %d ms", r.StabilizationMs)
		}
		for _, p := range r.Policies {
			if p.Value <= 0 || p.PeriodMs <= 0 || p.PeriodMs > 1_800_000 {
				return fmt.Errorf("policy: value must be positive and periodSeconds within 1..1800, got %d per %d ms", p.Value, p.PeriodMs)
			}
		}
	}
	return nil
}

// Observation is what the metrics source reports at a sync.
type Observation struct {
	// Replicas is the scale target's spec.replicas now.
	Replicas int
	// Ready pods report the metric; NotReady pods (starting: waiting for a
	// node, pulling the image, loading the model) do not.
	Ready, NotReady int
	// Metric is the average over the ready pods (AverageValue) or the
	// metric's value (Value).
	Metric float64
}

type stamped struct {
	at       int64
	replicas int
}

// scaleEvent is one applied change of one direction, as the controller
// remembers it: the replicas added (or removed), when, and whether it has
// been marked outdated (older than its direction's longest policy period
// at a later change of that direction, which may then take its place).
type scaleEvent struct {
	at       int64
	replicas int
	outdated bool
}

// HPA is one HorizontalPodAutoscaler's controller state: the
// recommendations it made, kept only as long as a window looks back, and
// the scale changes it applied, kept as the controller keeps them.
type HPA struct {
	spec HPASpec
	recs []stamped // recommendations, oldest first
	// ups and downs are the scale-up and scale-down events, in the
	// controller's order (an outdated event's slot is reused).
	ups, downs []scaleEvent
	last       int64 // the last sync
	// flat is the replicas every one of recs recommends, -1 when they
	// differ (any value when recs is empty): a steady sync checks it
	// instead of walking the windows.
	flat int
	// synced is whether a sync has happened: the first records the
	// replicas it finds as a recommendation.
	synced bool
}

// NewHPA is a controller for spec; it refuses an invalid spec.
func NewHPA(spec HPASpec) (*HPA, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return &HPA{spec: spec, flat: -1}, nil
}

// Spec is the controller's spec.
func (h *HPA) Spec() HPASpec { return h.spec }

// Sync is one reconcile at now (ms): the replicas the target should have.
func (h *HPA) Sync(now int64, o Observation) int {
	cur := o.Replicas
	h.start(now, cur)
	if cur == 0 && h.spec.MinReplicas > 0 {
		// The target scaled to zero by hand: the HPA stands aside.
		return 0
	}
	if cur > h.spec.MaxReplicas || cur < h.spec.MinReplicas {
		// Outside the bounds (edited by hand, or the bounds changed): the
		// controller sets the bound without reading the metric, recording
		// no recommendation, and remembers the change for the policies.
		desired := min(max(cur, h.spec.MinReplicas), h.spec.MaxReplicas)
		if !h.spec.NoBehavior {
			h.store(now, desired-cur)
		}
		return desired
	}
	proposal := h.proposal(o)
	if proposal == cur && h.quiet(now) && cur >= h.spec.MinReplicas && cur <= h.spec.MaxReplicas &&
		(len(h.recs) == 0 || h.flat == cur) {
		h.steady(now, cur, cur)
		return cur
	}
	desired := h.normalize(now, cur, proposal)
	h.flat = flatOf(h.recs)
	if !h.spec.NoBehavior {
		h.store(now, desired-cur)
	}
	return desired
}

// store remembers a change of delta replicas at now as the controller's
// storeScaleEvent does: each direction keeps its own events; at a new
// event, those older than the direction's longest policy period are
// marked outdated, and the new event takes the slot of the last outdated
// one (or is appended). An event so replaced is forgotten even where the
// other direction's (longer) periods would still count it.
func (h *HPA) store(now int64, delta int) {
	if delta == 0 {
		return
	}
	list, rules, n := &h.ups, h.spec.ScaleUp, delta
	if delta < 0 {
		list, rules, n = &h.downs, h.spec.ScaleDown, -delta
	}
	longest := longestPeriod(rules)
	slot := -1
	for i := range *list {
		if (*list)[i].at < now-longest {
			(*list)[i].outdated = true
		}
		if (*list)[i].outdated {
			slot = i
		}
	}
	e := scaleEvent{at: now, replicas: n}
	if slot >= 0 {
		(*list)[slot] = e
	} else {
		*list = append(*list, e)
	}
}

func longestPeriod(r Rules) int64 {
	var longest int64
	for _, p := range r.Policies {
		longest = max(longest, p.PeriodMs)
	}
	return longest
}

// quiet reports whether no remembered change counts in any policy's
// period at now (nor at any later time).
func (h *HPA) quiet(now int64) bool {
	longest := max(longestPeriod(h.spec.ScaleUp), longestPeriod(h.spec.ScaleDown))
	for _, l := range [][]scaleEvent{h.ups, h.downs} {
		for _, e := range l {
			if e.at+longest > now {
				return false
			}
		}
	}
	return true
}

// start is the first sync's bookkeeping: the controller records the
// replicas it first finds as a recommendation made now
// (recordInitialRecommendation in k8s.io/kubernetes
// pkg/controller/podautoscaler/horizontal.go), so a stabilization window
// holds them back from a change until it has passed: a scale-down waits
// out the down window, a scale-up the up window.
func (h *HPA) start(now int64, cur int) {
	h.last = now
	if h.synced {
		return
	}
	h.synced = true
	h.recs = append(h.recs, stamped{now, cur})
	h.flat = cur
}

// proposal is the replica calculator's answer for one metric.
func (h *HPA) proposal(o Observation) int {
	cur := o.Replicas
	if h.spec.Type == Value {
		ratio := o.Metric / h.spec.Target
		if h.within(ratio) {
			return cur
		}
		return ceilInt(ratio * float64(max(o.Ready, 1)))
	}
	if o.Ready == 0 {
		return cur // no metrics to go by
	}
	ratio := o.Metric / h.spec.Target
	if o.NotReady > 0 && ratio > 1 {
		// Scaling up: the not-yet-ready pods count as using nothing.
		total := float64(o.Ready + o.NotReady)
		newRatio := o.Metric * float64(o.Ready) / (h.spec.Target * total)
		if newRatio <= 1 || h.within(newRatio) {
			return cur
		}
		return ceilInt(newRatio * total)
	}
	if h.within(ratio) {
		return cur
	}
	return ceilInt(ratio * float64(o.Ready))
}

func (h *HPA) within(ratio float64) bool {
	up, down := h.spec.ScaleUp.ToleranceOr(h.spec.Tolerance), h.spec.ScaleDown.ToleranceOr(h.spec.Tolerance)
	// The controller's test, 1 - down <= ratio <= 1 + up, is on a ratio
	// of milli-unit integers: a metric at exactly 90% of its target is
	// within a 0.1 tolerance. The same ratio of floats (0.09 / 0.1) can
	// land an ulp outside, so the bounds get the slack ceilInt gives.
	return 1-down-1e-9 <= ratio && ratio <= 1+up+1e-9
}

// normalize applies the stabilization windows, the scaling policies and
// the min/max bounds, as the controller's behavior path does.
func (h *HPA) normalize(now int64, cur, proposal int) int {
	if h.spec.NoBehavior {
		return h.normalizeWithoutBehavior(now, cur, proposal)
	}
	h.recs = append(h.recs, stamped{now, proposal})
	// Stabilize: a scale-up takes the lowest recommendation of the up
	// window, a scale-down the highest of the down window (a window holds
	// what was recommended less than its length ago, and now's).
	up, down := proposal, proposal
	keep := h.recs[:0]
	longest := max(h.spec.ScaleUp.StabilizationMs, h.spec.ScaleDown.StabilizationMs)
	for _, r := range h.recs {
		if r.at+longest <= now && r.at != now {
			continue // out of every window
		}
		keep = append(keep, r)
		if r.at+h.spec.ScaleUp.StabilizationMs > now {
			up = min(up, r.replicas)
		}
		if r.at+h.spec.ScaleDown.StabilizationMs > now {
			down = max(down, r.replicas)
		}
	}
	h.recs = keep
	rec := cur
	if up > cur {
		rec = up
	}
	if down < cur {
		rec = down
	}
	// Rate limits from the changes within each policy's period.
	desired := rec
	if rec > cur {
		limit := h.limit(now, cur, +1)
		desired = min(rec, max(limit, cur))
	} else if rec < cur {
		limit := h.limit(now, cur, -1)
		desired = max(rec, min(limit, cur))
	}
	return min(max(desired, h.spec.MinReplicas), h.spec.MaxReplicas)
}

// reach is how long a recommendation counts: one made at or before now -
// reach (and not at now) is out of every window at now.
func (h *HPA) reach() int64 {
	if h.spec.NoBehavior {
		// The downscale window counts a recommendation exactly its
		// length old.
		return h.spec.ScaleDown.StabilizationMs + 1
	}
	return max(h.spec.ScaleUp.StabilizationMs, h.spec.ScaleDown.StabilizationMs)
}

// normalizeWithoutBehavior is the controller's path for an HPA without
// behavior (stabilizeRecommendation and convertDesiredReplicasWithRules):
// the highest recommendation within the downscale window, a
// recommendation exactly the window's length old included, then at most
// max(2 x cur, 4) and within the bounds.
func (h *HPA) normalizeWithoutBehavior(now int64, cur, proposal int) int {
	window := h.spec.ScaleDown.StabilizationMs
	rec := proposal
	keep := h.recs[:0]
	for _, r := range h.recs {
		if r.at+window < now {
			continue
		}
		keep = append(keep, r)
		rec = max(rec, r.replicas)
	}
	h.recs = append(keep, stamped{now, proposal})
	limit := min(h.spec.MaxReplicas, max(2*cur, 4))
	return max(min(rec, limit), h.spec.MinReplicas)
}

// flatOf is the replicas every one of recs recommends, -1 when they
// differ.
func flatOf(recs []stamped) int {
	if len(recs) == 0 {
		return -1
	}
	flat := recs[0].replicas
	for _, r := range recs[1:] {
		if r.replicas != flat {
			return -1
		}
	}
	return flat
}

// steady is normalize's work when the answer is cur (Holds) and rec the
// proposal: all that changes is the recommendations, which gain this one
// and lose those out of every window (the oldest: they are in time
// order).
func (h *HPA) steady(now int64, cur, rec int) {
	h.last = now
	same := rec == cur && (len(h.recs) == 0 || h.flat == cur)
	h.recs = append(h.recs, stamped{now, rec})
	longest := h.reach()
	i := 0
	for i < len(h.recs) && h.recs[i].at+longest <= now && h.recs[i].at != now {
		i++
	}
	if i > 0 {
		h.recs = h.recs[:copy(h.recs, h.recs[i:])]
	}
	if same {
		h.flat = rec
	} else {
		h.flat = flatOf(h.recs)
	}
}

// Keeps reports whether a Sync with o, at any time after the last one,
// returns o.Replicas having only recorded its recommendation (Settled, and
// the replica calculator proposing o.Replicas).
func (h *HPA) Keeps(o Observation) bool {
	return h.Settled(o.Replicas) && h.proposal(o) == o.Replicas
}

// Settled reports the part of Keeps that does not read the metric: with
// cur replicas, a Sync whose replica calculator proposes cur returns cur
// (Keeps is false for every observation when it is false). The replicas
// are within the bounds and no remembered change counts in a policy's
// period. With behavior, whatever the windows remember: the proposal is
// in both, so the up window's lowest recommendation is at most cur and
// the down window's highest at least cur, and cur it is (a window still
// holding other recommendations, such as the lower ones from before a
// scale-up, changes nothing).
// Without behavior the downscale window's highest recommendation wins
// even over cur: every remembered recommendation must be cur.
func (h *HPA) Settled(cur int) bool {
	if cur == 0 && h.spec.MinReplicas > 0 {
		return false
	}
	return h.quiet(h.last) && cur >= h.spec.MinReplicas && cur <= h.spec.MaxReplicas &&
		(!h.spec.NoBehavior || len(h.recs) == 0 || h.flat == cur)
}

// Holds reports whether a Sync with o, at any time after the last one,
// returns o.Replicas and remembers no change, only its recommendation
// (the replica calculator's proposal): Settled, and the proposal
// o.Replicas (Keeps), or above it with the replicas at the maximum, or
// below it at the minimum. At a bound the windows and policies may ask
// for more (or fewer), but the bound holds the answer at o.Replicas:
// with behavior a proposal above cur leaves the down window's highest
// recommendation at least cur and the up window's answer, rate-limited
// or not, at least cur; below cur, the reverse; without behavior every
// remembered recommendation is cur (Settled), so the highest is at least
// cur above and cur below.
func (h *HPA) Holds(o Observation) bool {
	cur := o.Replicas
	if !h.Settled(cur) {
		return false
	}
	p := h.proposal(o)
	return p == cur || p > cur && cur == h.spec.MaxReplicas || p < cur && cur == h.spec.MinReplicas
}

// Hover reports how a Settled HPA with behavior at cur replicas answers
// a sync whose proposal is below cur: cur (recording the proposal) while
// its scale-down window still holds a recommendation of cur or more,
// as the controller's stabilization takes the window's highest. held is
// the time from which the recommendations remembered now no longer hold
// it (one made at a counts while a + window > now: 0 when none does),
// window the scale-down window, which a later recommendation of cur holds
// it for from when it is made. ok is false without behavior (the window
// then also counts a recommendation exactly its length old, and takes
// the highest even over a proposal of cur) or with no scale-down window.
func (h *HPA) Hover(cur int) (held, window int64, ok bool) {
	window = h.spec.ScaleDown.StabilizationMs
	if h.spec.NoBehavior || window <= 0 {
		return 0, 0, false
	}
	for _, r := range h.recs {
		if r.replicas >= cur {
			held = max(held, r.at+window)
		}
	}
	return held, window, true
}

// Proposal is the replica calculator's answer for o: the recommendation
// a Sync with o records.
func (h *HPA) Proposal(o Observation) int { return h.proposal(o) }

// SkipSteady records the syncs at first, first+step, ..., last (last -
// first a multiple of step) that Hold cur replicas, as calling Sync at
// each would: only those still within a stabilization window at last
// are kept, so the cost is the window's syncs, not the stretch's. rec
// is the recommendation each records, its Proposal (nil: cur, as every
// sync that Keeps records).
func (h *HPA) SkipSteady(first, last, step int64, cur int, rec func(now int64) int) {
	if last < first || step <= 0 {
		return
	}
	longest := h.reach()
	from := first
	if lim := last - longest; lim >= first {
		// The first sync after lim: those at or before it leave every
		// window by last.
		from = min(first+((lim-first)/step+1)*step, last)
	}
	h.start(first, cur)
	for t := from; t <= last; t += step {
		r := cur
		if rec != nil {
			r = rec(t)
		}
		h.steady(t, cur, r)
	}
}

// changedWithin sums the replicas added (sign > 0) or removed (sign < 0)
// within period before now.
func (h *HPA) changedWithin(now, period int64, sign int) int {
	list := h.ups
	if sign < 0 {
		list = h.downs
	}
	n := 0
	for _, e := range list {
		if e.at+period > now {
			n += e.replicas
		}
	}
	return n
}

// limit is the furthest the policies of one direction (dir +1 up, -1
// down) let the replicas go from cur: each policy measures from the
// replicas at the start of its period, which is cur less the replicas
// added within the period plus those removed within it, whichever the
// direction (a scale-down inside a scale-up's period gives the scale-up
// back its room, and the mirror); Max selects the policy allowing the
// most change, Min the least. A Percent step up rounds up; a Percent step
// down truncates the replicas it leaves. This is the controller's
// calculateScaleUpLimitWithScalingRules and
// calculateScaleDownLimitWithBehaviors (k8s.io/kubernetes
// pkg/controller/podautoscaler/horizontal.go), both of which take
// periodStartReplicas = currentReplicas - replicasAddedInCurrentPeriod +
// replicasDeletedInCurrentPeriod.
func (h *HPA) limit(now int64, cur, dir int) int {
	r := h.spec.ScaleUp
	if dir < 0 {
		r = h.spec.ScaleDown
	}
	if r.Select == SelectDisabled || len(r.Policies) == 0 {
		return cur
	}
	found := false
	best := cur
	for _, p := range r.Policies {
		start := cur - h.changedWithin(now, p.PeriodMs, +1) + h.changedWithin(now, p.PeriodMs, -1)
		var prop int
		switch {
		case p.Type == Pods:
			prop = start + dir*p.Value
		case dir > 0:
			prop = ceilInt(float64(start) * (1 + float64(p.Value)/100))
		default:
			prop = int(float64(start) * (1 - float64(p.Value)/100))
		}
		// "More change" is further from cur in direction dir.
		more := (prop-best)*dir > 0
		if !found || more == (r.Select != SelectMin) {
			best, found = prop, true
		}
	}
	return best
}

func ceilInt(x float64) int {
	if x >= math.MaxInt32 {
		return math.MaxInt32
	}
	// A ratio computed as 2.0000000001 must not ask for a third replica.
	return int(math.Ceil(x - 1e-9))
}
