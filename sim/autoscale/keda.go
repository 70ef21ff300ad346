package autoscale

import "fmt"

// ScaledObjectSpec is a KEDA ScaledObject (keda.sh/v1alpha1) with one
// trigger.
type ScaledObjectSpec struct {
	// MinReplicaCount (default 0) and MaxReplicaCount (default 100).
	MinReplicaCount, MaxReplicaCount int
	// PollingMs is pollingInterval (30 s): how often KEDA checks the
	// trigger for activation.
	PollingMs int64
	// CooldownMs is cooldownPeriod (300 s): how long after the trigger was
	// last active the last replica is removed (only with MinReplicaCount 0).
	CooldownMs int64
	// Threshold is the trigger's target; ActivationThreshold the value it
	// must exceed to be active (default 0).
	Threshold, ActivationThreshold float64
	// Type is the trigger's metricType: AverageValue (the default) or Value.
	Type MetricType
	// HPA behavior passed through (advanced.horizontalPodAutoscalerConfig).
	ScaleUp, ScaleDown Rules
}

// NewScaledObjectSpec is a spec with KEDA's defaults and the HPA's default
// behaviors.
func NewScaledObjectSpec(threshold float64) ScaledObjectSpec {
	return ScaledObjectSpec{MaxReplicaCount: 100, PollingMs: 30_000, CooldownMs: 300_000,
		Threshold: threshold, ScaleUp: DefaultScaleUp(), ScaleDown: DefaultScaleDown()}
}

// KEDA is a ScaledObject's state: its activation loop and the HPA it
// creates for 1 <-> N.
type KEDA struct {
	spec       ScaledObjectSpec
	hpa        *HPA
	lastActive int64
	nextPoll   int64
	everActive bool
}

// NewKEDA refuses an invalid spec.
func NewKEDA(spec ScaledObjectSpec) (*KEDA, error) {
	if spec.MinReplicaCount < 0 || spec.MaxReplicaCount < 1 || spec.MinReplicaCount > spec.MaxReplicaCount {
		return nil, fmt.Errorf("minReplicaCount %d and maxReplicaCount %d must satisfy 0 <= min <= max, max >= 1", spec.MinReplicaCount, spec.MaxReplicaCount)
	}
	if spec.PollingMs <= 0 || spec.CooldownMs < 0 {
		return nil, fmt.Errorf("pollingInterval must be positive and cooldownPeriod not negative")
	}
	if spec.ActivationThreshold < 0 {
		return nil, fmt.Errorf("activationThreshold must not be negative, got %g", spec.ActivationThreshold)
	}
	h := HPASpec{MinReplicas: max(spec.MinReplicaCount, 1), MaxReplicas: spec.MaxReplicaCount,
		Target: spec.Threshold, Type: spec.Type, ScaleUp: spec.ScaleUp, ScaleDown: spec.ScaleDown,
		Tolerance: 0.1, SyncMs: 15_000}
	hpa, err := NewHPA(h)
	if err != nil {
		return nil, fmt.Errorf("threshold: %w", err)
	}
	return &KEDA{spec: spec, hpa: hpa}, nil
}

// Spec is the ScaledObject the KEDA state was made from.
func (k *KEDA) Spec() ScaledObjectSpec { return k.spec }

// HPASyncMs is how often the HPA KEDA created syncs.
func (k *KEDA) HPASyncMs() int64 { return k.hpa.spec.SyncMs }

// Sync is one step at now: the trigger's metric (its value, summed over the
// service; with AverageValue the HPA divides by the ready pods) and the
// replicas. KEDA's activation is checked at its polling interval, the HPA
// at its own sync period; call Sync at every multiple of either.
func (k *KEDA) Sync(now int64, o Observation, metric float64) int {
	if now >= k.nextPoll {
		k.nextPoll = now + k.spec.PollingMs
		if metric > k.spec.ActivationThreshold {
			k.lastActive, k.everActive = now, true
		}
		if o.Replicas == 0 {
			if metric > k.spec.ActivationThreshold {
				return max(k.spec.MinReplicaCount, 1)
			}
			return 0
		}
		if k.spec.MinReplicaCount == 0 && metric <= k.spec.ActivationThreshold &&
			(!k.everActive || now-k.lastActive >= k.spec.CooldownMs) {
			return 0
		}
	}
	if o.Replicas == 0 || now%k.hpa.spec.SyncMs != 0 {
		return o.Replicas
	}
	if k.spec.Type == AverageValue {
		// The external metric's total, averaged over the ready pods.
		o.Metric = metric / float64(max(o.Ready, 1))
	} else {
		o.Metric = metric
	}
	return k.hpa.Sync(now, o)
}

// Keeps reports whether a Sync at a multiple of the HPA's period after the
// last one, with o (all of its replicas ready) and the trigger's metric,
// keeps the replicas and changes nothing but the records a steady sync
// makes (SkipSteady): at least one replica, the trigger active (so the
// activation loop neither scales to zero nor leaves a record other than
// the poll's), and the HPA on the steady path.
func (k *KEDA) Keeps(o Observation, metric float64) bool {
	return k.active(o, metric) && k.hpa.Keeps(k.observed(o, metric))
}

// Holds is Keeps with the HPA's Holds: the replicas at a bound may be
// held there by a proposal beyond it.
func (k *KEDA) Holds(o Observation, metric float64) bool {
	return k.active(o, metric) && k.hpa.Holds(k.observed(o, metric))
}

// Hover is the HPA's Hover: a Sync whose trigger is active and whose
// proposal is below cur keeps cur while the window holds it.
func (k *KEDA) Hover(cur int) (held, window int64, ok bool) { return k.hpa.Hover(cur) }

// Active reports whether a Sync with o (all of its replicas ready) and the
// trigger's metric leaves the scaling to the HPA: at least one replica
// and the trigger active.
func (k *KEDA) Active(o Observation, metric float64) bool { return k.active(o, metric) }

// Proposal is the recommendation the HPA records at a Sync with o and
// the trigger's metric.
func (k *KEDA) Proposal(o Observation, metric float64) int {
	return k.hpa.Proposal(k.observed(o, metric))
}

// active reports whether a Sync with o (all of its replicas ready) and
// the trigger's metric leaves the scaling to the HPA: at least one
// replica and the trigger active.
func (k *KEDA) active(o Observation, metric float64) bool {
	return o.Replicas > 0 && o.Ready == o.Replicas && o.NotReady == 0 && metric > k.spec.ActivationThreshold
}

// observed is o with the metric the HPA reads: the trigger's, averaged
// over the ready pods for AverageValue.
func (k *KEDA) observed(o Observation, metric float64) Observation {
	if k.spec.Type == AverageValue {
		o.Metric = metric / float64(max(o.Ready, 1))
	} else {
		o.Metric = metric
	}
	return o
}

// Settled is the part of Keeps that does not read the metric: with cur
// replicas (all ready), the HPA KEDA made could take its steady path.
func (k *KEDA) Settled(cur int) bool { return cur > 0 && k.hpa.Settled(cur) }

// SkipSteady records the syncs at first, first+step, ..., last (multiples
// of the HPA's period) that Hold cur replicas, as calling Sync at each
// would: the polls that fall due (each active), and the HPA's steady
// syncs, each recording rec (HPA.SkipSteady). A poll is taken at the first sync at or after it falls
// due, so after the first they come every ceil(polling / step) syncs:
// the last is found at once, whatever the stretch's length.
func (k *KEDA) SkipSteady(first, last, step int64, cur int, rec func(now int64) int) {
	if last < first || step <= 0 {
		return
	}
	t := first
	if k.nextPoll > t {
		// The first sync at or after the poll that falls due.
		t = first + (k.nextPoll-first+step-1)/step*step
	}
	if t <= last {
		every := max((k.spec.PollingMs+step-1)/step, 1) * step
		t += (last - t) / every * every
		k.nextPoll = t + k.spec.PollingMs
		k.lastActive, k.everActive = t, true
	}
	k.hpa.SkipSteady(first, last, step, cur, rec)
}
