package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Bounds on what a service may ask for, so that a typo is an error at its
// field rather than a run of nonsense.
const (
	// MaxServiceRate bounds a request rate (requests per second).
	MaxServiceRate = 1e9
	// MaxServiceReplicas bounds a service's replicas.
	MaxServiceReplicas = strict.MaxServiceReplicas
	// MaxBatchSize bounds a batch.
	MaxBatchSize = 1 << 16
	// maxServiceMs bounds a batch's base or per-item time: an hour.
	maxServiceMs = 3.6e6
	// maxSpikeFactor bounds a spike's multiplier.
	maxSpikeFactor = 1e6
	// maxQueueLimit bounds a replica's queue.
	maxQueueLimit = 1 << 30
)

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// namedDuration and namedFloat are optional fields checked in order.
type namedDuration struct {
	name string
	d    *Duration
}

type namedFloat struct {
	name string
	x    *float64
}

// validateServices checks every service's own fields when the scenario is
// read; what they take from files is checked when it is built.
func (s validator) validateServices() error {
	names := map[string]bool{}
	for i := range s.Spec.Workload.Services {
		if err := s.validateService(i); err != nil {
			return err
		}
		n := s.Spec.Workload.Services[i].Name
		if names[n] {
			return s.errAt(fmt.Sprintf("spec.workload.services[%d].name", i), "service %q is defined twice", n)
		}
		names[n] = true
	}
	return nil
}

func (s validator) validateService(i int) error {
	v := &s.Spec.Workload.Services[i]
	at := fmt.Sprintf("spec.workload.services[%d]", i)
	if !nameRE.MatchString(v.Name) {
		return s.errAt(at+".name", "%q is not a valid service name (lower-case letters, digits, '-' and '.')", v.Name)
	}
	switch v.PreemptionPolicy {
	case "", PreemptLowerPriority, PreemptNever:
	default:
		return s.errAt(at+".preemptionPolicy", "is %q; want %s or %s", v.PreemptionPolicy, PreemptLowerPriority, PreemptNever)
	}
	if v.Balancing != "" && v.LLM != nil {
		if _, err := llmRouter(v.Balancing); err != nil {
			return s.errAt(at+".balancing", "%v", err)
		}
	} else if v.Balancing != "" {
		if _, err := serving.ParseBalancing(v.Balancing); err != nil {
			return s.errAt(at+".balancing", "is %s; want random or leastRequest", Quote(v.Balancing))
		}
	}
	if v.Priority != nil && v.PriorityClass != "" {
		return s.errAt(at+".priorityClass", "give priority or priorityClass, not both")
	}
	// An llm block without its model takes it from a vLLM server in the
	// service's manifests, read when the scenario is built (and checked
	// then).
	if v.LLM != nil && (v.LLM.Model != "" || len(v.Manifests) == 0) {
		if _, err := s.llmService(at, v); err != nil {
			return err
		}
	}
	if err := s.validateLeaderWorker(at, v); err != nil {
		return err
	}
	if v.Pod == nil && len(v.Manifests) == 0 {
		return s.errAt(at+".pod", "a service needs its replica pod: give pod, or manifests of a Deployment or InferenceService")
	}
	if v.Pod != nil {
		if _, err := (serviceBuilder{Scenario: s.Scenario}).servicePod(at+".pod", v.Pod); err != nil {
			return err
		}
	}
	if _, err := constraintsFrom(v.NodeSelector, v.Affinity, v.Tolerations); err != nil {
		return s.errAt(at, "%v", err)
	}
	if _, _, err := s.serviceSpread(at, v); err != nil {
		return err
	}
	if v.GPUModel != "" {
		if _, ok := serviceTimeDefaults[v.GPUModel]; !ok {
			return s.errAt(at+".gpuModel", "%s has no service-time defaults (known: %s); give batching.baseMs and perItemMs", Quote(v.GPUModel), strings.Join(serviceTimeModels(), ", "))
		}
	}
	for j, m := range v.Manifests {
		if m == "" {
			return s.errAt(fmt.Sprintf("%s.manifests[%d]", at, j), "is empty: name a file")
		}
	}
	if r := v.Replicas; r != nil {
		for _, f := range []struct {
			name string
			v    *int
			low  int
		}{{"min", r.Min, 0}, {"max", r.Max, 1}, {"initial", r.Initial, 0}} {
			if f.v != nil && (*f.v < f.low || *f.v > MaxServiceReplicas) {
				return s.errAt(at+".replicas."+f.name, "%d: must be from %d to %d", *f.v, f.low, MaxServiceReplicas)
			}
		}
		if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
			return s.errAt(at+".replicas.min", "min %d is above max %d", *r.Min, *r.Max)
		}
	}
	if c := v.ColdStart; c != nil {
		for _, f := range []namedDuration{{"imagePull", c.ImagePull}, {"modelLoad", c.ModelLoad}} {
			if err := s.checkServiceDuration(at+".coldStart."+f.name, f.d, false); err != nil {
				return err
			}
		}
	}
	if v.LLM != nil && v.LLM.RequestTrace != nil {
		// The trace's arrivals are the load (servicellmbuild.go).
		if l := &v.Load; l.Constant != nil || l.Diurnal != nil || l.CSV != nil || len(l.Spikes) > 0 {
			return s.errAt(at+".load", "give a load or llm.requestTrace, not both: the trace's arrivals, binned by llm.requestTrace.bin, are the service's load")
		}
	} else if err := s.validateLoad(at+".load", &v.Load); err != nil {
		return err
	}
	if b := v.Batching; b != nil {
		if b.BatchSize != nil && (*b.BatchSize < 1 || *b.BatchSize > MaxBatchSize) {
			return s.errAt(at+".batching.batchSize", "must be from 1 to %d, got %d (1: no batching)", MaxBatchSize, *b.BatchSize)
		}
		if err := s.checkServiceDuration(at+".batching.maxBatchDelay", b.MaxBatchDelay, false); err != nil {
			return err
		}
		for _, f := range []namedFloat{{"baseMs", b.BaseMs}, {"perItemMs", b.PerItemMs}} {
			if f.x != nil && (!finite(*f.x) || *f.x < 0 || *f.x > maxServiceMs) {
				return s.errAt(at+".batching."+f.name, "%g: must be from 0 to %g ms", *f.x, maxServiceMs)
			}
		}
		if b.BaseMs != nil && b.PerItemMs != nil && *b.BaseMs+*b.PerItemMs <= 0 {
			return s.errAt(at+".batching", "baseMs and perItemMs are both 0: a batch would take no time")
		}
	}
	if t := v.TorchServe; t != nil && t.Path == "" {
		return s.errAt(at+".torchserve.path", "is required: TorchServe's config.properties")
	}
	if q := v.QueueLimit; q != nil && (*q < 0 || *q > maxQueueLimit) {
		return s.errAt(at+".queueLimit", "%d: must be from 0 (unbounded) to %d", *q, maxQueueLimit)
	}
	if err := s.checkServiceDuration(at+".timeout", v.Timeout, false); err != nil {
		return err
	}
	if o := v.SLO; o != nil {
		if err := s.checkServiceDuration(at+".slo.latency", &o.Latency, true); err != nil {
			return err
		}
	}
	if a := v.Autoscaler; a != nil {
		if err := s.validateAutoscaler(at+".autoscaler", a); err != nil {
			return err
		}
	}
	return nil
}

// checkServiceDuration refuses a negative duration (or 0 when positive is
// asked), or one past a century.
func (s validator) checkServiceDuration(at string, d *Duration, positive bool) error {
	if d == nil {
		return nil
	}
	switch {
	case d.Duration < 0:
		return s.errAt(at, "%s: must not be negative", d.Duration)
	case positive && d.Duration < time.Millisecond:
		return s.errAt(at, "%s: must be at least 1ms", d.Duration)
	case d.Millis() > maxDurationMs:
		return s.errAt(at, "%s is more than 100 years", d.Duration)
	}
	return nil
}

// checkRate refuses a rate that is not a number of requests per second.
func (s validator) checkRate(at string, r float64) error {
	if !finite(r) || r < 0 || r > MaxServiceRate {
		return s.errAt(at, "%g requests/s: a rate is from 0 to %g", r, MaxServiceRate)
	}
	return nil
}

func (s validator) validateLoad(at string, l *ServiceLoadSpec) error {
	given := 0
	for _, g := range []bool{l.Constant != nil, l.Diurnal != nil, l.CSV != nil} {
		if g {
			given++
		}
	}
	if given != 1 {
		return s.errAt(at, "give exactly one of constant, diurnal or csv")
	}
	if l.Constant != nil {
		if err := s.checkRate(at+".constant", *l.Constant); err != nil {
			return err
		}
	}
	if d := l.Diurnal; d != nil {
		if err := s.checkRate(at+".diurnal.base", d.Base); err != nil {
			return err
		}
		if err := s.checkRate(at+".diurnal.amplitude", d.Amplitude); err != nil {
			return err
		}
		if d.Amplitude > d.Base {
			return s.errAt(at+".diurnal.amplitude", "%g is above the base %g: the rate would be negative at the trough", d.Amplitude, d.Base)
		}
		if _, err := timeOfDay(d.Peak); err != nil {
			return s.errAt(at+".diurnal.peak", "%v", err)
		}
	}
	if c := l.CSV; c != nil && c.Path == "" {
		return s.errAt(at+".csv.path", "is required")
	}
	for j, sp := range l.Spikes {
		sat := fmt.Sprintf("%s.spikes[%d]", at, j)
		if err := s.checkServiceDuration(sat+".start", &sp.Start, false); err != nil {
			return err
		}
		if err := s.checkServiceDuration(sat+".length", &sp.Length, true); err != nil {
			return err
		}
		if !finite(sp.Multiplier) || sp.Multiplier < 0 || sp.Multiplier > maxSpikeFactor {
			return s.errAt(sat+".multiplier", "%g: must be from 0 to %g", sp.Multiplier, maxSpikeFactor)
		}
	}
	return nil
}

// timeOfDay reads "HH:MM" (or "HH:MM:SS") as ms after midnight; "" is 0.
func timeOfDay(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	parts := strings.Split(v, ":")
	bad := fmt.Errorf("%s is not a time of day (\"14:00\", \"09:30\")", Quote(v))
	if len(parts) < 2 || len(parts) > 3 {
		return 0, bad
	}
	var hms [3]int64
	for k, p := range parts {
		if len(p) != 2 {
			return 0, bad
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, bad
		}
		hms[k] = int64(n)
	}
	if hms[0] > 23 || hms[1] > 59 || hms[2] > 59 {
		return 0, bad
	}
	return ((hms[0]*60+hms[1])*60 + hms[2]) * 1000, nil
}

// metricNames are the service metrics an autoscaler may scale on.
var metricNames = []string{MetricRequestsPerReplica, MetricConcurrency, MetricQueueLatency, MetricUtilization, MetricQueueDepth, MetricRequestsRunning, MetricKVCacheUsage}

func (s validator) checkMetric(at, m string, required bool) error {
	if m == "" && !required {
		return nil
	}
	for _, k := range metricNames {
		if m == k {
			return nil
		}
	}
	return s.errAt(at, "is %s; want one of %s", Quote(m), strings.Join(metricNames, ", "))
}

func (s validator) validateAutoscaler(at string, a *AutoscalerSpec) error {
	given := 0
	for _, g := range []bool{a.HPA != nil, a.KEDA != nil, a.KPA != nil, len(a.Manifests) > 0} {
		if g {
			given++
		}
	}
	if given != 1 {
		return s.errAt(at, "give exactly one of hpa, keda, kpa or manifests")
	}
	if a.Metric != "" && len(a.Manifests) == 0 {
		return s.errAt(at+".metric", "says what an autoscaler manifest's metric measures; hpa and keda give their own metric")
	}
	if err := s.checkMetric(at+".metric", a.Metric, false); err != nil {
		return err
	}
	if h := a.HPA; h != nil {
		if err := s.checkMetric(at+".hpa.metric", h.Metric, true); err != nil {
			return err
		}
		if !finite(h.Target) || h.Target <= 0 {
			return s.errAt(at+".hpa.target", "must be a positive number, got %g: a target of 0 asks for infinitely many replicas", h.Target)
		}
		switch h.Type {
		case "", "AverageValue", "Value":
		default:
			return s.errAt(at+".hpa.type", "is %s; want AverageValue or Value", Quote(h.Type))
		}
		if h.SyncPeriod != nil && h.SyncPeriod.Duration < time.Second {
			return s.errAt(at+".hpa.syncPeriod", "%s: must be at least 1s", h.SyncPeriod.Duration)
		}
		if err := s.checkServiceDuration(at+".hpa.syncPeriod", h.SyncPeriod, true); err != nil {
			return err
		}
		if t := h.Tolerance; t != nil && (!finite(*t) || *t < 0 || *t >= 1) {
			return s.errAt(at+".hpa.tolerance", "%g: must be in [0, 1)", *t)
		}
		if err := s.validateBehavior(at+".hpa.behavior", h.Behavior); err != nil {
			return err
		}
	}
	if k := a.KEDA; k != nil {
		if err := s.checkMetric(at+".keda.metric", k.Metric, true); err != nil {
			return err
		}
		if !finite(k.Threshold) || k.Threshold <= 0 {
			return s.errAt(at+".keda.threshold", "must be a positive number, got %g: a target of 0 asks for infinitely many replicas", k.Threshold)
		}
		if !finite(k.ActivationThreshold) || k.ActivationThreshold < 0 {
			return s.errAt(at+".keda.activationThreshold", "must not be negative, got %g", k.ActivationThreshold)
		}
		switch k.MetricType {
		case "", "AverageValue", "Value":
		default:
			return s.errAt(at+".keda.metricType", "is %s; want AverageValue or Value", Quote(k.MetricType))
		}
		if p := k.PollingInterval; p != nil && p.Duration < time.Second {
			return s.errAt(at+".keda.pollingInterval", "%s: must be at least 1s", p.Duration)
		}
		for _, f := range []namedDuration{{"pollingInterval", k.PollingInterval}, {"cooldownPeriod", k.CooldownPeriod}} {
			if err := s.checkServiceDuration(at+".keda."+f.name, f.d, false); err != nil {
				return err
			}
		}
		if err := s.validateBehavior(at+".keda.behavior", k.Behavior); err != nil {
			return err
		}
	}
	if k := a.KPA; k != nil {
		if !finite(k.Target) || k.Target <= 0 {
			return s.errAt(at+".kpa.target", "must be a positive number, got %g: a target of 0 asks for infinitely many replicas", k.Target)
		}
		for _, f := range []namedFloat{{"panicWindowPercentage", k.PanicWindowPercentage}, {"panicThresholdPercentage", k.PanicThresholdPercentage}, {"maxScaleUpRate", k.MaxScaleUpRate}, {"maxScaleDownRate", k.MaxScaleDownRate}} {
			if f.x != nil && (!finite(*f.x) || *f.x <= 0) {
				return s.errAt(at+".kpa."+f.name, "must be a positive number, got %g", *f.x)
			}
		}
		for _, f := range []namedDuration{{"stableWindow", k.StableWindow}, {"tickInterval", k.TickInterval}} {
			if err := s.checkServiceDuration(at+".kpa."+f.name, f.d, true); err != nil {
				return err
			}
		}
		if err := s.checkServiceDuration(at+".kpa.scaleToZeroGracePeriod", k.ScaleToZeroGracePeriod, false); err != nil {
			return err
		}
	}
	for j, m := range a.Manifests {
		if m == "" {
			return s.errAt(fmt.Sprintf("%s.manifests[%d]", at, j), "is empty: name a file")
		}
	}
	return nil
}

func (s validator) validateBehavior(at string, b *HPABehaviorSpec) error {
	if b == nil {
		return nil
	}
	for _, d := range []struct {
		name string
		r    *ScalingRulesSpec
	}{{"scaleUp", b.ScaleUp}, {"scaleDown", b.ScaleDown}} {
		r := d.r
		if r == nil {
			continue
		}
		rat := at + "." + d.name
		if w := r.StabilizationWindow; w != nil && (w.Duration < 0 || w.Duration > time.Hour) {
			return s.errAt(rat+".stabilizationWindow", "%s: must be from 0s to 1h", w.Duration)
		}
		switch r.SelectPolicy {
		case "", "Max", "Min", "Disabled":
		default:
			return s.errAt(rat+".selectPolicy", "is %s; want Max, Min or Disabled", Quote(r.SelectPolicy))
		}
		for k, p := range r.Policies {
			pat := fmt.Sprintf("%s.policies[%d]", rat, k)
			if p.Type != "Pods" && p.Type != "Percent" {
				return s.errAt(pat+".type", "is %s; want Pods or Percent", Quote(p.Type))
			}
			if p.Value < 1 {
				return s.errAt(pat+".value", "must be positive, got %d", p.Value)
			}
			if p.Period.Duration < time.Second || p.Period.Duration > 30*time.Minute {
				return s.errAt(pat+".period", "%s: must be from 1s to 30m", p.Period.Duration)
			}
		}
	}
	return nil
}

// servicePod is a replica's pod: the class pod schema with one number of
// GPUs (whole, or a share below 1 of one GPU) or MIG instances.
func (s serviceBuilder) servicePod(at string, p *PodTemplate) (cluster.PodSpec, error) {
	var out cluster.PodSpec
	var err error
	if out.MilliCPU, err = MilliCPU(p.CPU); err != nil {
		return out, s.errAt(at+".cpu", "%v", err)
	}
	if out.MemoryMiB, err = MemoryMiB(p.Memory); err != nil {
		return out, s.errAt(at+".memory", "%v", err)
	}
	if g := p.GPUs; g != nil {
		if g.Value == nil || len(g.Values) > 0 || g.Min != nil || g.Max != nil {
			return out, s.errAt(at+".gpus", "a replica asks for one number of GPUs, not a distribution")
		}
		if err := checkGPUValues(g); err != nil {
			return out, s.errAt(at+".gpus", "%v", err)
		}
		if v := *g.Value; v < 0 {
			return out, s.errAt(at+".gpus", "%g: must not be negative", v)
		}
		setGPUs(&out, *g.Value)
	}
	if p.MIG != "" {
		if out.GPUs < 1 {
			return out, s.errAt(at+".gpus", "a replica asking for MIG instances says how many (gpus: 1 or more)")
		}
		out.MIG = p.MIG
	}
	if p.GPUMemory != nil {
		if out.GPUMemMiB, err = strict.QuantityIn(*p.GPUMemory, false, 1<<20, MaxPodMemoryMiB, "gpuMemory"); err != nil {
			return out, s.errAt(at+".gpuMemory", "%v", err)
		}
	}
	return out, nil
}
