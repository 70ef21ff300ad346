package scenarios

import (
	"fmt"
	"strings"
	"time"

	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/sim/services"
)

// scalerDraft is a service's autoscaler as serviceScaler assembles it from
// its sources in turn: the replica bounds (lo, hi and initial; -1 while
// unset) and where lo came from, the spec of the one autoscaler found,
// the metric it reads, and the notes for the report.
type scalerDraft struct {
	lo, hi, initial int
	loFrom          string
	hpa             *autoscale.HPASpec
	keda            *autoscale.ScaledObjectSpec
	kpa             *autoscale.KPASpec
	kind            services.MetricKind
	// quantile is the query when kind is LatencyQuantileMs.
	quantile services.LatencyQuantile
	notes    []string
}

// serviceScaler builds the autoscaler and the replica bounds: the
// scenario's replicas, else the autoscaler manifest's or the
// InferenceService's bounds.
func (s serviceBuilder) serviceScaler(at string, v *ServiceSpec, wl *kubesvc.Workload) (scalerResult, error) {
	// Bounds from the manifests first; the scenario's replicas win.
	d := &scalerDraft{lo: 1, hi: -1, initial: -1}
	if err := s.workloadScaler(at, v, wl, d); err != nil {
		return scalerResult{}, err
	}
	if a := v.Autoscaler; a != nil && len(a.Manifests) > 0 {
		if err := s.manifestScaler(at, v, wl, d); err != nil {
			return scalerResult{}, err
		}
	}
	if err := s.replicaBounds(at, v, d); err != nil {
		return scalerResult{}, err
	}
	if a := v.Autoscaler; a != nil {
		if err := s.specScaler(at, a, d); err != nil {
			return scalerResult{}, err
		}
	}
	sc, err := s.scaler(at, v, d)
	if err != nil {
		return scalerResult{}, err
	}
	if d.kind.LLMOnly() && v.LLM == nil {
		return scalerResult{}, s.errAt(at+".autoscaler", "scales on %s, which only an LLM service's engines export (vLLM's KV cache, running requests and latency histograms); this service has no llm block", d.kindName())
	}
	return scalerResult{scaler: sc, min: d.lo, max: d.hi, initial: d.initial, notes: d.notes}, nil
}

// workloadScaler takes the bounds from the service's Deployment,
// ReplicaSet, StatefulSet or LeaderWorkerSet (its replicas, groups for an
// LWS) or InferenceService (min and max replicas) and, when the
// scenario gives no autoscaler, the autoscaler KServe's mode sets up (the
// KPA, or an HPA on CPU utilization).
func (s serviceBuilder) workloadScaler(at string, v *ServiceSpec, wl *kubesvc.Workload, d *scalerDraft) error {
	if wl == nil {
		return nil
	}
	a := v.Autoscaler
	if wl.Kind == "Deployment" || wl.Kind == "ReplicaSet" || wl.Kind == "StatefulSet" || wl.Kind == "LeaderWorkerSet" {
		// spec.replicas is where the service starts; without an
		// autoscaler it is what it keeps.
		d.initial = wl.Replicas
		if a == nil {
			d.lo, d.hi = wl.Replicas, wl.Replicas
		}
		return nil
	}
	if wl.Kind == "LLMInferenceService" && wl.ScaleMetric == "" {
		// spec.replicas, as a Deployment's.
		d.initial = wl.Replicas
		if a == nil {
			d.lo, d.hi = wl.Replicas, wl.Replicas
		}
		return nil
	}
	d.lo, d.hi, d.loFrom = wl.MinReplicas, wl.MaxReplicas, wl.Kind+" "+wl.Name
	if a != nil {
		return nil
	}
	if wl.Kind == "LLMInferenceService" {
		return s.errAt(at+".manifests", "LLMInferenceService %s scales by spec.scaling (KEDA or the workload variant autoscaler), which gpuplan does not read: give the service an autoscaler", wl.Name)
	}
	switch {
	case wl.KPA != nil:
		k := *wl.KPA
		d.kpa = &k
		d.notes = append(d.notes, fmt.Sprintf("scaled by Knative's KPA as KServe's %s mode sets it up (concurrency target %.3g per replica)", wl.Mode, k.Target))
	case wl.HPA != nil:
		h := *wl.HPA
		d.hpa = &h
		switch wl.ScaleMetric {
		case "cpu":
			d.kind = services.Utilization
		default:
			return s.errAt(at+".manifests", "%s %s scales on %s, which gpuplan does not model for a replica: give autoscaler", wl.Kind, wl.Name, Quote(wl.ScaleMetric))
		}
		d.notes = append(d.notes, fmt.Sprintf("scaled by the HPA KServe's %s mode sets up (CPU utilization, taken as the replicas' busy share, target %.3g%%)", wl.Mode, h.Target))
	}
	return nil
}

// manifestScaler reads the HorizontalPodAutoscaler or KEDA ScaledObject
// for the service from autoscaler.manifests (the only one, or the one
// that targets the service's workload or name): its spec, bounds and
// metric, the metric's values scaled to the unit the simulation reads.
func (s serviceBuilder) manifestScaler(at string, v *ServiceSpec, wl *kubesvc.Workload, d *scalerDraft) error {
	a := v.Autoscaler
	var hpas []kubesvc.HPA
	var sos []kubesvc.ScaledObject
	for _, m := range a.Manifests {
		file, data, err := s.readServiceFile(m)
		if err != nil {
			return err
		}
		set, err := kubesvc.Read(file, data)
		if err != nil {
			return err
		}
		hpas = append(hpas, set.HPAs...)
		sos = append(sos, set.ScaledObjects...)
	}
	target := v.Name
	if wl != nil {
		target = wl.Name
	}
	pick := func(name, t string) bool {
		return len(hpas)+len(sos) == 1 || name == target || strings.HasSuffix(t, "/"+target)
	}
	var metric kubesvc.Metric
	var where string
	var found []string
	for k := range hpas {
		h := &hpas[k]
		found = append(found, "HorizontalPodAutoscaler "+h.Name)
		if d.hpa == nil && d.keda == nil && pick(h.Name, h.Target) {
			sp := h.Spec
			d.hpa, metric, where = &sp, h.Metric, fmt.Sprintf("HorizontalPodAutoscaler %s (%s:%d)", h.Name, h.File, h.Line)
			d.lo, d.hi, d.loFrom = sp.MinReplicas, sp.MaxReplicas, where
		}
	}
	for k := range sos {
		so := &sos[k]
		found = append(found, "ScaledObject "+so.Name)
		if d.hpa == nil && d.keda == nil && pick(so.Name, so.Target) {
			sp := so.Spec
			d.keda, metric, where = &sp, so.Metric, fmt.Sprintf("ScaledObject %s (%s:%d)", so.Name, so.File, so.Line)
			d.lo, d.hi, d.loFrom = sp.MinReplicaCount, sp.MaxReplicaCount, where
		}
	}
	if d.hpa == nil && d.keda == nil {
		if len(found) == 0 {
			return s.errAt(at+".autoscaler.manifests", "the files hold no HorizontalPodAutoscaler or ScaledObject")
		}
		return s.errAt(at+".autoscaler.manifests", "the files hold %s, none for %s: name the service after its scale target", strings.Join(found, ", "), Quote(target))
	}
	factor := 1.0
	if a.Metric != "" {
		d.kind = metricKinds[a.Metric]
	} else {
		k, f, err := metric.Kind()
		if err != nil {
			return s.errAt(at+".autoscaler.metric", "%s: %v; say which with autoscaler.metric", where, err)
		}
		d.kind, factor = k, f
		if k == services.LatencyQuantileMs {
			d.quantile, _, _ = metric.Latency()
			if d.keda != nil && d.keda.Type == autoscale.AverageValue || d.hpa != nil && d.hpa.Type == autoscale.AverageValue {
				d.notes = append(d.notes, fmt.Sprintf("%s: a latency quantile is one value for the service, and as an AverageValue target it is divided by the ready replicas: the HPA then asks for ceil(quantile / target) replicas whatever it has; metricType Value asks for ceil(replicas x quantile / target)", where))
			}
		}
	}
	if d.hpa != nil {
		d.hpa.Target *= factor
	} else {
		d.keda.Threshold *= factor
		d.keda.ActivationThreshold *= factor
	}
	unit := ""
	if factor != 1 {
		unit = fmt.Sprintf(", its values times %g for ms", factor)
	}
	d.notes = append(d.notes, fmt.Sprintf("scaled by %s on %s%s", where, d.kindName(), unit))
	return nil
}

// replicaBounds applies the scenario's replicas over the bounds found so
// far, fills in what is still unset (max = min, initial = min) and checks
// the bounds against each other and MaxServiceReplicas.
func (s serviceBuilder) replicaBounds(at string, v *ServiceSpec, d *scalerDraft) error {
	a := v.Autoscaler
	if r := v.Replicas; r != nil {
		if r.Min != nil {
			d.lo, d.loFrom = *r.Min, ""
		}
		if r.Max != nil {
			d.hi = *r.Max
		}
		if r.Initial != nil {
			d.initial = *r.Initial
		}
	}
	if d.hi < 0 {
		d.hi = d.lo
		if a != nil && (a.HPA != nil || a.KEDA != nil || a.KPA != nil) {
			return s.errAt(at+".replicas.max", "an autoscaled service needs replicas.max, the most it may scale to")
		}
	}
	if d.initial < 0 {
		d.initial = d.lo
	}
	lo, hi, initial := d.lo, d.hi, d.initial
	switch {
	case lo > hi:
		return s.errAt(at+".replicas", "min %d is above max %d", lo, hi)
	case hi < 1:
		return s.errAt(at+".replicas.max", "must be at least 1")
	case hi > MaxServiceReplicas:
		return s.errAt(at+".replicas.max", "%d is more than %d, the most a service has", hi, MaxServiceReplicas)
	case initial < lo || initial > hi:
		return s.errAt(at+".replicas.initial", "%d is outside min %d and max %d", initial, lo, hi)
	}
	return nil
}

// specScaler builds the autoscaler the scenario gives in autoscaler.hpa,
// .keda or .kpa, over the autoscalers' defaults; it replaces one found in
// manifests.
func (s serviceBuilder) specScaler(at string, a *AutoscalerSpec, d *scalerDraft) error {
	switch {
	case a.HPA != nil:
		h := a.HPA
		sp := autoscale.NewHPASpec(d.hi, h.Target)
		d.kind = metricKinds[h.Metric]
		if h.Type == "Value" || (h.Type == "" && d.kind == services.QueueLatencyMs) {
			sp.Type = autoscale.Value
		}
		if h.SyncPeriod != nil {
			sp.SyncMs = h.SyncPeriod.Millis()
		}
		if h.Tolerance != nil {
			sp.Tolerance = *h.Tolerance
		}
		if err := s.behavior(at+".autoscaler.hpa.behavior", h.Behavior, &sp.ScaleUp, &sp.ScaleDown); err != nil {
			return err
		}
		d.hpa = &sp
	case a.KEDA != nil:
		k := a.KEDA
		sp := autoscale.NewScaledObjectSpec(k.Threshold)
		d.kind = metricKinds[k.Metric]
		sp.ActivationThreshold = k.ActivationThreshold
		if k.MetricType == "Value" {
			sp.Type = autoscale.Value
		}
		if k.PollingInterval != nil {
			sp.PollingMs = k.PollingInterval.Millis()
		}
		if k.CooldownPeriod != nil {
			sp.CooldownMs = k.CooldownPeriod.Millis()
		}
		if err := s.behavior(at+".autoscaler.keda.behavior", k.Behavior, &sp.ScaleUp, &sp.ScaleDown); err != nil {
			return err
		}
		d.keda = &sp
	case a.KPA != nil:
		k := a.KPA
		sp := autoscale.NewKPASpec(k.Target)
		for _, f := range []struct {
			src *float64
			dst *float64
		}{{k.PanicWindowPercentage, &sp.PanicWindowPct}, {k.PanicThresholdPercentage, &sp.PanicThresholdPct}, {k.MaxScaleUpRate, &sp.MaxScaleUpRate}, {k.MaxScaleDownRate, &sp.MaxScaleDownRate}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		for _, f := range []struct {
			src *Duration
			dst *int64
		}{{k.StableWindow, &sp.StableWindowMs}, {k.ScaleToZeroGracePeriod, &sp.ScaleToZeroGraceMs}, {k.TickInterval, &sp.TickMs}} {
			if f.src != nil {
				*f.dst = f.src.Millis()
			}
		}
		d.kpa = &sp
	}
	return nil
}

// scaler is the draft's autoscaler (the HPA, KEDA or KPA found, within
// the bounds), or a fixed count of replicas when there is none.
func (s serviceBuilder) scaler(at string, v *ServiceSpec, d *scalerDraft) (services.Scaler, error) {
	lo, hi := d.lo, d.hi
	field := at + ".autoscaler"
	if d.loFrom != "" && v.Replicas == nil {
		field = at + ".replicas"
	}
	switch {
	case d.hpa != nil:
		if lo < 1 {
			return nil, s.errAt(at+".replicas.min", "0: a HorizontalPodAutoscaler cannot scale to zero (minReplicas is at least 1); KEDA or the KPA can")
		}
		d.hpa.MinReplicas, d.hpa.MaxReplicas = lo, hi
		h, err := autoscale.NewHPA(*d.hpa)
		if err != nil {
			return nil, s.errAt(field, "%v", err)
		}
		return services.HPA{H: h, Metric: d.kind, Quantile: d.quantile}, nil
	case d.keda != nil:
		d.keda.MinReplicaCount, d.keda.MaxReplicaCount = lo, hi
		k, err := autoscale.NewKEDA(*d.keda)
		if err != nil {
			return nil, s.errAt(field, "%v", err)
		}
		return services.KEDA{K: k, Metric: d.kind, Quantile: d.quantile}, nil
	case d.kpa != nil:
		d.kpa.MinScale, d.kpa.MaxScale = lo, hi
		k, err := autoscale.NewKPA(*d.kpa)
		if err != nil {
			return nil, s.errAt(field, "%v", err)
		}
		return services.KPA{K: k, TickMs: d.kpa.TickMs}, nil
	}
	if hi > lo {
		return nil, s.errAt(at+".replicas.max", "max %d is above min %d and the service has no autoscaler to scale between them", hi, lo)
	}
	if lo < 1 {
		return nil, s.errAt(at+".replicas.min", "0 replicas and no autoscaler: the service would never serve")
	}
	return services.Fixed{Replicas: lo}, nil
}

// kindName names the metric the draft's autoscaler reads: the scenario's
// name for it, or the latency quantile and its window.
func (d *scalerDraft) kindName() string {
	if d.kind == services.LatencyQuantileMs {
		q := d.quantile
		return fmt.Sprintf("the %g quantile of %s over %s (histogram_quantile, as Prometheus reads it from vLLM's buckets)", q.Q, q.Of, time.Duration(q.WindowMs)*time.Millisecond)
	}
	return kindName(d.kind)
}
