package autoscale

import (
	"fmt"
	"math"
)

// KPASpec is Knative's pod autoscaler configuration (config-autoscaler and
// the revision's autoscaling.knative.dev annotations), as KServe's
// serverless mode uses it.
type KPASpec struct {
	// Target is the concurrency each replica should carry: the
	// containerConcurrency target (default 100) times the target
	// utilization (default 70%).
	Target float64
	// MinScale (default 0) and MaxScale (0: unbounded).
	MinScale, MaxScale int
	// StableWindowMs (60 s) and PanicWindowPct (10% of it).
	StableWindowMs int64
	PanicWindowPct float64
	// PanicThresholdPct (200%): panic when the panic window asks for this
	// share of the ready pods.
	PanicThresholdPct float64
	// MaxScaleUpRate (1000) and MaxScaleDownRate (2) bound one step.
	MaxScaleUpRate, MaxScaleDownRate float64
	// ScaleToZeroGraceMs (30 s): the wait after the stable window saw no
	// traffic before the last replica goes.
	ScaleToZeroGraceMs int64
	// TickMs is the autoscaler's tick (2 s).
	TickMs int64
}

// NewKPASpec is Knative's defaults with a concurrency target per replica
// (containerConcurrency target x utilization).
func NewKPASpec(target float64) KPASpec {
	return KPASpec{Target: target, StableWindowMs: 60_000, PanicWindowPct: 10, PanicThresholdPct: 200,
		MaxScaleUpRate: 1000, MaxScaleDownRate: 2, ScaleToZeroGraceMs: 30_000, TickMs: 2_000}
}

// KPA is one revision's autoscaler state: the concurrency seen at each tick
// of the stable window, and panic mode.
type KPA struct {
	spec       KPASpec
	samples    []float64 // one per tick, a ring over the stable window
	next       int
	seen       int
	panicSince int64 // -1: not in panic
	maxPanic   int
	zeroSince  int64 // when the stable window first saw no traffic; -1
}

// Spec is the configuration the KPA was made from.
func (k *KPA) Spec() KPASpec { return k.spec }

// NewKPA refuses an invalid spec.
func NewKPA(spec KPASpec) (*KPA, error) {
	switch {
	case !(spec.Target > 0) || math.IsInf(spec.Target, 0):
		return nil, fmt.Errorf("target: concurrency per replica must be positive, got %g", spec.Target)
	case spec.TickMs <= 0 || spec.StableWindowMs < 6_000 || spec.StableWindowMs > 3_600_000 || spec.StableWindowMs%spec.TickMs != 0:
		return nil, fmt.Errorf("stable window: 6 s to 1 h and a multiple of the %d ms tick, got %d ms", spec.TickMs, spec.StableWindowMs)
	case spec.PanicWindowPct < 1 || spec.PanicWindowPct > 100:
		return nil, fmt.Errorf("panic window: 1%% to 100%% of the stable window, got %g%%", spec.PanicWindowPct)
	case spec.PanicThresholdPct < 110 || spec.PanicThresholdPct > 1000:
		return nil, fmt.Errorf("panic threshold: 110%% to 1000%%, got %g%%", spec.PanicThresholdPct)
	case spec.MaxScaleUpRate <= 1 || spec.MaxScaleDownRate <= 1:
		return nil, fmt.Errorf("max scale up and down rates must exceed 1")
	case spec.MinScale < 0 || (spec.MaxScale > 0 && spec.MinScale > spec.MaxScale):
		return nil, fmt.Errorf("min-scale %d and max-scale %d: 0 <= min <= max", spec.MinScale, spec.MaxScale)
	}
	n := int(spec.StableWindowMs / spec.TickMs)
	return &KPA{spec: spec, samples: make([]float64, n), panicSince: -1, zeroSince: -1}, nil
}

// InPanic reports whether the autoscaler is in panic mode.
func (k *KPA) InPanic() bool { return k.panicSince >= 0 }

// Tick is one autoscaler tick at now: the total concurrency (requests in
// flight and queued at the activator and the replicas) averaged over the
// tick, and the ready replicas. It returns the desired scale.
func (k *KPA) Tick(now int64, concurrency float64, ready int) int {
	k.samples[k.next] = concurrency
	k.next = (k.next + 1) % len(k.samples)
	k.seen = min(k.seen+1, len(k.samples))
	panicTicks := max(1, int(math.Round(float64(len(k.samples))*k.spec.PanicWindowPct/100)))
	stable, panicAvg := k.average(k.seen), k.average(min(panicTicks, k.seen))

	readyF := float64(max(ready, 1))
	maxUp := int(math.Ceil(k.spec.MaxScaleUpRate * readyF))
	maxDown := 0
	if ready > 0 {
		maxDown = int(math.Floor(float64(ready) / k.spec.MaxScaleDownRate))
	}
	clamp := func(x int) int { return min(max(x, maxDown), maxUp) }
	dspc := clamp(ceilInt(stable / k.spec.Target))
	dppc := clamp(ceilInt(panicAvg / k.spec.Target))

	over := float64(dppc)/readyF >= k.spec.PanicThresholdPct/100
	switch {
	case k.panicSince < 0 && over:
		k.panicSince = now
		k.maxPanic = ready
	case k.panicSince >= 0 && over:
		k.panicSince = now // a new cause: the stable window starts again
	case k.panicSince >= 0 && now-k.panicSince >= k.spec.StableWindowMs:
		k.panicSince, k.maxPanic = -1, 0
	}
	desired := dspc
	if k.panicSince >= 0 {
		// In panic the revision never scales down.
		k.maxPanic = max(k.maxPanic, dppc)
		desired = k.maxPanic
	}
	// Scale to zero: only after a whole stable window without traffic and
	// the grace period.
	if desired == 0 {
		if k.zeroSince < 0 {
			k.zeroSince = now
		}
		if stable > 0 || now-k.zeroSince < k.spec.ScaleToZeroGraceMs {
			desired = max(ready, 1)
			if stable > 0 {
				k.zeroSince = -1
			}
		}
	} else {
		k.zeroSince = -1
	}
	desired = max(desired, k.spec.MinScale)
	if k.spec.MaxScale > 0 {
		desired = min(desired, k.spec.MaxScale)
	}
	return desired
}

// average is the mean of the last n samples.
func (k *KPA) average(n int) float64 {
	if n == 0 {
		return 0
	}
	sum := 0.0
	for i := 1; i <= n; i++ {
		sum += k.samples[(k.next-i+len(k.samples))%len(k.samples)]
	}
	return sum / float64(n)
}
