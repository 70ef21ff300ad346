package services

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Metric is what an autoscaler scales on.
type Metric struct {
	// Source is the HPA metric source type (Resource, ContainerResource,
	// Pods, Object, External) or the KEDA trigger type (prometheus, ...).
	Source string
	// Name is the resource or metric name (cpu, a Prometheus query's
	// metric, ...).
	Name string
	// Query is a Prometheus trigger's query, when there is one.
	Query string
}

// HPA is one HorizontalPodAutoscaler read.
type HPA struct {
	File            string
	Line            int
	Name, Namespace string
	// Target is the scale target's kind/name.
	Target string
	Metric Metric
	Spec   autoscale.HPASpec
}

// ScaledObject is one KEDA ScaledObject read.
type ScaledObject struct {
	File            string
	Line            int
	Name, Namespace string
	Target          string
	Metric          Metric
	Spec            autoscale.ScaledObjectSpec
}

// Set is what a file held.
type Set struct {
	HPAs          []HPA
	ScaledObjects []ScaledObject
	// Skipped names the documents of other kinds, with their lines.
	Skipped []string
}

// scaledObject is keda.sh/v1alpha1 ScaledObject, typed after the fields of
// its published CRD schema.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		ScaleTargetRef struct {
			APIVersion             string `json:"apiVersion,omitempty"`
			Kind                   string `json:"kind,omitempty"`
			Name                   string `json:"name"`
			EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
		} `json:"scaleTargetRef"`
		PollingInterval       *int32 `json:"pollingInterval,omitempty"`
		CooldownPeriod        *int32 `json:"cooldownPeriod,omitempty"`
		InitialCooldownPeriod *int32 `json:"initialCooldownPeriod,omitempty"`
		IdleReplicaCount      *int32 `json:"idleReplicaCount,omitempty"`
		MinReplicaCount       *int32 `json:"minReplicaCount,omitempty"`
		MaxReplicaCount       *int32 `json:"maxReplicaCount,omitempty"`
		Fallback              *struct {
			FailureThreshold int32  `json:"failureThreshold"`
			Replicas         int32  `json:"replicas"`
			Behavior         string `json:"behavior,omitempty"`
		} `json:"fallback,omitempty"`
		Advanced *struct {
			RestoreToOriginalReplicaCount bool `json:"restoreToOriginalReplicaCount,omitempty"`
			HorizontalPodAutoscalerConfig *struct {
				Name     string                                         `json:"name,omitempty"`
				Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
			} `json:"horizontalPodAutoscalerConfig,omitempty"`
			ScalingModifiers *struct {
				Formula          string `json:"formula,omitempty"`
				Target           string `json:"target,omitempty"`
				ActivationTarget string `json:"activationTarget,omitempty"`
				MetricType       string `json:"metricType,omitempty"`
			} `json:"scalingModifiers,omitempty"`
		} `json:"advanced,omitempty"`
		Triggers []struct {
			Type              string            `json:"type"`
			Name              string            `json:"name,omitempty"`
			Metadata          map[string]string `json:"metadata"`
			MetricType        string            `json:"metricType,omitempty"`
			UseCachedMetrics  bool              `json:"useCachedMetrics,omitempty"`
			AuthenticationRef *struct {
				Kind string `json:"kind,omitempty"`
				Name string `json:"name"`
			} `json:"authenticationRef,omitempty"`
		} `json:"triggers"`
	} `json:"spec"`
}

// Read reads the autoscalers of a manifest file.
func Read(file string, data []byte) (*Set, error) {
	docs, err := strict.Manifests(file, data)
	if err != nil {
		return nil, err
	}
	set := &Set{}
	for _, m := range docs {
		switch {
		case strings.HasPrefix(m.APIVersion, "autoscaling/") && m.Kind == "HorizontalPodAutoscaler":
			if m.APIVersion != "autoscaling/v2" {
				return nil, strict.Errorf(file, m.Line, "apiVersion", "%s: gpuplan reads autoscaling/v2 HorizontalPodAutoscalers", strict.Quote(m.APIVersion))
			}
			var x autoscalingv2.HorizontalPodAutoscaler
			pos, err := m.Decode(file, &x, strict.Options{What: "a manifest"})
			if err != nil {
				return nil, err
			}
			h, err := readHPA(file, m.Line, pos, &x)
			if err != nil {
				return nil, err
			}
			set.HPAs = append(set.HPAs, h)
		case m.APIVersion == "keda.sh/v1alpha1" && m.Kind == "ScaledObject":
			var x scaledObject
			pos, err := m.Decode(file, &x, strict.Options{What: "a manifest"})
			if err != nil {
				return nil, err
			}
			so, err := readScaledObject(file, m.Line, pos, &x)
			if err != nil {
				return nil, err
			}
			set.ScaledObjects = append(set.ScaledObjects, so)
		default:
			set.Skipped = append(set.Skipped, fmt.Sprintf("%s:%d: %s %s %s is not an autoscaler", file, m.Line, strict.Quote(m.APIVersion), strict.Quote(m.Kind), strict.Quote(m.Name)))
		}
	}
	return set, nil
}

func readHPA(file string, line int, pos strict.Positions, x *autoscalingv2.HorizontalPodAutoscaler) (HPA, error) {
	at := func(field, format string, args ...any) error {
		return strict.At(file, line, pos, field, format, args...)
	}
	h := HPA{File: file, Line: line, Name: x.Name, Namespace: x.Namespace,
		Target: x.Spec.ScaleTargetRef.Kind + "/" + x.Spec.ScaleTargetRef.Name}
	spec := autoscale.NewHPASpec(int(x.Spec.MaxReplicas), 1)
	if x.Spec.MinReplicas != nil {
		spec.MinReplicas = int(*x.Spec.MinReplicas)
	}
	if x.Spec.MaxReplicas < 1 {
		return h, at("spec.maxReplicas", "must be at least 1, got %d", x.Spec.MaxReplicas)
	}
	if spec.MinReplicas < 1 || spec.MinReplicas > spec.MaxReplicas {
		return h, at("spec.minReplicas", "must be from 1 to maxReplicas (%d), got %d", spec.MaxReplicas, spec.MinReplicas)
	}
	switch len(x.Spec.Metrics) {
	case 0:
		// The API server's default: 80% CPU utilization.
		h.Metric, spec.Target = Metric{Source: "Resource", Name: "cpu"}, 80
	case 1:
	default:
		return h, at("spec.metrics", "gpuplan models one metric per HorizontalPodAutoscaler, got %d", len(x.Spec.Metrics))
	}
	if len(x.Spec.Metrics) == 1 {
		m := x.Spec.Metrics[0]
		var target autoscalingv2.MetricTarget
		h.Metric.Source = string(m.Type)
		// The API server's validation: the type names the source given.
		source := map[autoscalingv2.MetricSourceType]bool{
			autoscalingv2.ResourceMetricSourceType:          m.Resource != nil,
			autoscalingv2.ContainerResourceMetricSourceType: m.ContainerResource != nil,
			autoscalingv2.PodsMetricSourceType:              m.Pods != nil,
			autoscalingv2.ObjectMetricSourceType:            m.Object != nil,
			autoscalingv2.ExternalMetricSourceType:          m.External != nil,
		}
		if given, ok := source[m.Type]; !ok {
			return h, at("spec.metrics[0].type", "%s is not a metric source type (one of Resource, ContainerResource, Pods, Object, External)", strict.Quote(string(m.Type)))
		} else if !given {
			return h, at("spec.metrics[0].type", "is %s but spec.metrics[0] has no %s source", m.Type, strings.ToLower(string(m.Type[:1]))+string(m.Type[1:]))
		}
		switch {
		case m.Resource != nil:
			h.Metric.Name, target = string(m.Resource.Name), m.Resource.Target
		case m.ContainerResource != nil:
			h.Metric.Name, target = string(m.ContainerResource.Name), m.ContainerResource.Target
		case m.Pods != nil:
			h.Metric.Name, target = m.Pods.Metric.Name, m.Pods.Target
		case m.Object != nil:
			h.Metric.Name, target = m.Object.Metric.Name, m.Object.Target
		case m.External != nil:
			h.Metric.Name, target = m.External.Metric.Name, m.External.Target
		default:
			return h, at("spec.metrics[0]", "names no metric source")
		}
		if _, ok, err := h.Metric.Latency(); ok && err != nil {
			return h, at("spec.metrics[0]", "%v", err)
		}
		v, typ, err := targetValue(target)
		if err != nil {
			return h, at("spec.metrics[0]", "%v", err)
		}
		spec.Target, spec.Type = v, typ
	}
	// An HPA that gives no behavior is stored without one, and the
	// controller then takes its older path (HPASpec.NoBehavior), not the
	// documented default behavior.
	spec.NoBehavior = x.Spec.Behavior == nil
	if b := x.Spec.Behavior; b != nil {
		var err error
		if spec.ScaleUp, err = rules(b.ScaleUp, autoscale.DefaultScaleUp()); err != nil {
			return h, at("spec.behavior.scaleUp", "%v", err)
		}
		if spec.ScaleDown, err = rules(b.ScaleDown, autoscale.DefaultScaleDown()); err != nil {
			return h, at("spec.behavior.scaleDown", "%v", err)
		}
	}
	if err := spec.Validate(); err != nil {
		return h, at("spec", "%v", err)
	}
	h.Spec = spec
	return h, nil
}

// targetValue is a metric target's value and how it is compared.
func targetValue(t autoscalingv2.MetricTarget) (float64, autoscale.MetricType, error) {
	var v float64
	typ := autoscale.AverageValue
	switch t.Type {
	case autoscalingv2.UtilizationMetricType:
		if t.AverageUtilization == nil {
			return 0, 0, fmt.Errorf("target.type Utilization needs averageUtilization")
		}
		v = float64(*t.AverageUtilization)
	case autoscalingv2.AverageValueMetricType:
		if t.AverageValue == nil {
			return 0, 0, fmt.Errorf("target.type AverageValue needs averageValue")
		}
		v = t.AverageValue.AsApproximateFloat64()
	case autoscalingv2.ValueMetricType:
		if t.Value == nil {
			return 0, 0, fmt.Errorf("target.type Value needs value")
		}
		v, typ = t.Value.AsApproximateFloat64(), autoscale.Value
	default:
		return 0, 0, fmt.Errorf("target.type %s: one of Utilization, AverageValue, Value", strict.Quote(string(t.Type)))
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, 0, fmt.Errorf("the target must be positive, got %g: a target of 0 asks for infinitely many replicas", v)
	}
	return v, typ, nil
}

// rules merges one direction's behavior over the defaults, as the API
// server does: an unset field keeps its default.
func rules(r *autoscalingv2.HPAScalingRules, def autoscale.Rules) (autoscale.Rules, error) {
	if r == nil {
		return def, nil
	}
	out := def
	if r.StabilizationWindowSeconds != nil {
		s := *r.StabilizationWindowSeconds
		if s < 0 || s > 3600 {
			return out, fmt.Errorf("stabilizationWindowSeconds: 0 to 3600, got %d", s)
		}
		out.StabilizationMs = int64(s) * 1000
	}
	if r.SelectPolicy != nil {
		switch *r.SelectPolicy {
		case autoscalingv2.MaxChangePolicySelect:
			out.Select = autoscale.SelectMax
		case autoscalingv2.MinChangePolicySelect:
			out.Select = autoscale.SelectMin
		case autoscalingv2.DisabledPolicySelect:
			out.Select = autoscale.SelectDisabled
		default:
			return out, fmt.Errorf("selectPolicy %s: one of Max, Min, Disabled", strict.Quote(string(*r.SelectPolicy)))
		}
	}
	if r.Policies != nil {
		out.Policies = nil
		for i, p := range r.Policies {
			var typ autoscale.PolicyType
			switch p.Type {
			case autoscalingv2.PodsScalingPolicy:
				typ = autoscale.Pods
			case autoscalingv2.PercentScalingPolicy:
				typ = autoscale.Percent
			default:
				return out, fmt.Errorf("policies[%d].type %s: Pods or Percent", i, strict.Quote(string(p.Type)))
			}
			if p.Value < 1 || p.PeriodSeconds < 1 || p.PeriodSeconds > 1800 {
				return out, fmt.Errorf("policies[%d]: value must be positive and periodSeconds 1 to 1800, got %d per %d s", i, p.Value, p.PeriodSeconds)
			}
			out.Policies = append(out.Policies, autoscale.Policy{Type: typ, Value: int(p.Value), PeriodMs: int64(p.PeriodSeconds) * 1000})
		}
	}
	if r.Tolerance != nil {
		t := r.Tolerance.AsApproximateFloat64()
		if t < 0 || t >= 1 {
			return out, fmt.Errorf("tolerance: 0 to 1, got %g", t)
		}
		out.Tolerance, out.HasTolerance = t, true
	}
	return out, nil
}

func readScaledObject(file string, line int, pos strict.Positions, x *scaledObject) (ScaledObject, error) {
	at := func(field, format string, args ...any) error {
		return strict.At(file, line, pos, field, format, args...)
	}
	kind := x.Spec.ScaleTargetRef.Kind
	if kind == "" {
		kind = "Deployment"
	}
	so := ScaledObject{File: file, Line: line, Name: x.Name, Namespace: x.Namespace, Target: kind + "/" + x.Spec.ScaleTargetRef.Name}
	if x.Spec.ScaleTargetRef.Name == "" {
		return so, at("spec.scaleTargetRef.name", "is required")
	}
	if len(x.Spec.Triggers) != 1 {
		return so, at("spec.triggers", "gpuplan models one trigger per ScaledObject, got %d", len(x.Spec.Triggers))
	}
	tr := x.Spec.Triggers[0]
	so.Metric = Metric{Source: tr.Type, Name: tr.Metadata["metricName"], Query: tr.Metadata["query"]}
	if _, ok, err := so.Metric.Latency(); ok && err != nil {
		return so, at(`spec.triggers[0].metadata["query"]`, "%v", err)
	}
	thresholdKey := "threshold"
	if _, ok := tr.Metadata[thresholdKey]; !ok {
		if _, ok := tr.Metadata["value"]; ok {
			thresholdKey = "value" // the cpu and memory scalers
		}
	}
	num := func(key string, required bool) (float64, error) {
		s, ok := tr.Metadata[key]
		if !ok {
			if required {
				return 0, at("spec.triggers[0].metadata", "has no %s", key)
			}
			return 0, nil
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, at(fmt.Sprintf("spec.triggers[0].metadata[%q]", key), "%s is not a number", strict.Quote(s))
		}
		return v, nil
	}
	spec := autoscale.NewScaledObjectSpec(0)
	var err error
	if spec.Threshold, err = num(thresholdKey, true); err != nil {
		return so, err
	}
	if !(spec.Threshold > 0) {
		return so, at(fmt.Sprintf("spec.triggers[0].metadata[%q]", thresholdKey), "must be positive, got %g: a target of 0 asks for infinitely many replicas", spec.Threshold)
	}
	if spec.ActivationThreshold, err = num("activationThreshold", false); err != nil {
		return so, err
	}
	switch tr.MetricType {
	case "", "AverageValue":
	case "Value":
		spec.Type = autoscale.Value
	case "Utilization":
		spec.Type = autoscale.AverageValue
	default:
		return so, at("spec.triggers[0].metricType", "%s: AverageValue, Value or Utilization", strict.Quote(tr.MetricType))
	}
	if p := x.Spec.PollingInterval; p != nil {
		if *p < 1 {
			return so, at("spec.pollingInterval", "must be at least 1 s, got %d", *p)
		}
		spec.PollingMs = int64(*p) * 1000
	}
	if c := x.Spec.CooldownPeriod; c != nil {
		if *c < 0 {
			return so, at("spec.cooldownPeriod", "must not be negative, got %d", *c)
		}
		spec.CooldownMs = int64(*c) * 1000
	}
	if m := x.Spec.MinReplicaCount; m != nil {
		spec.MinReplicaCount = int(*m)
	}
	if m := x.Spec.MaxReplicaCount; m != nil {
		spec.MaxReplicaCount = int(*m)
	}
	if spec.MinReplicaCount < 0 || spec.MaxReplicaCount < 1 || spec.MinReplicaCount > spec.MaxReplicaCount {
		return so, at("spec.maxReplicaCount", "minReplicaCount %d and maxReplicaCount %d: 0 <= min <= max, max >= 1", spec.MinReplicaCount, spec.MaxReplicaCount)
	}
	if a := x.Spec.Advanced; a != nil && a.HorizontalPodAutoscalerConfig != nil && a.HorizontalPodAutoscalerConfig.Behavior != nil {
		b := a.HorizontalPodAutoscalerConfig.Behavior
		if spec.ScaleUp, err = rules(b.ScaleUp, spec.ScaleUp); err != nil {
			return so, at("spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleUp", "%v", err)
		}
		if spec.ScaleDown, err = rules(b.ScaleDown, spec.ScaleDown); err != nil {
			return so, at("spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown", "%v", err)
		}
	}
	if _, err := autoscale.NewKEDA(spec); err != nil {
		return so, at("spec", "%v", err)
	}
	so.Spec = spec
	return so, nil
}
