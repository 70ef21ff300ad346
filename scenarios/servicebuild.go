package scenarios

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/models/serving"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// ServingModelNote is the assumption every run with services lists.
const ServingModelNote = "inference services: a fluid per-interval model of each service's requests (models/serving.BalancedCycle: dynamic batching per replica under random balancing or from one shared queue under leastRequest, G/D/c queueing near capacity, a backlog carried when replicas fall behind), not request by request; replicas are pods of the same scheduler and serve once bound and past their cold start"

// buildServices builds spec.workload.services into b.Config.Services,
// reading the files they name.
func (s builder) buildServices(b *Built, opts Options) error {
	svcs := s.Spec.Workload.Services
	if len(svcs) == 0 {
		return nil
	}
	if b.Config.Horizon <= 0 {
		switch {
		case opts.Horizon != nil:
			return &InputError{File: "--horizon", Msg: "0 runs until the workload drains, and the scenario's services never drain: give a horizon"}
		case opts.Trace != nil:
			return &InputError{File: "--trace", Msg: "replays the whole trace (the scenario's horizon belongs to its own workload), and the scenario's services never drain: give --horizon"}
		}
		return s.errAt("spec.horizon", "a scenario with services needs a horizon (services never drain); give spec.horizon or --horizon")
	}
	if err := (validator{s.Scenario}).validateServices(); err != nil {
		return err
	}
	pc := &servicePolicy{s: s.Scenario, opts: opts}
	b.Assumptions = append(b.Assumptions, ServingModelNote)
	var names []string
	for _, v := range svcs {
		names = append(names, v.Name)
	}
	b.Workload += "; services " + strings.Join(names, ", ")
	for i := range svcs {
		cfg, notes, err := s.buildService(i, b, pc)
		if err != nil {
			return err
		}
		b.Config.Services = append(b.Config.Services, cfg)
		for _, n := range notes {
			b.Assumptions = append(b.Assumptions, "service "+svcs[i].Name+": "+n)
		}
	}
	return nil
}

// servicePolicy loads spec.policy's manifests once, when a service needs
// a PriorityClass from them.
type servicePolicy struct {
	s      *Scenario
	opts   Options
	pol    *Policy
	loaded bool
}

func (p *servicePolicy) get() (*Policy, error) {
	if p.loaded {
		return p.pol, nil
	}
	p.loaded = true
	manifests := p.opts.PolicyManifests
	if manifests == nil && p.s.Spec.Policy != nil {
		for _, m := range p.s.Spec.Policy.Manifests {
			manifests = append(manifests, p.s.path(m))
		}
	}
	if manifests == nil {
		return nil, nil
	}
	pol, err := LoadPolicy(manifests)
	if err != nil {
		return nil, err
	}
	p.pol = pol
	return pol, nil
}

// readServiceFile reads a file a service names, bounded.
func (s builder) readServiceFile(p string) (string, []byte, error) {
	file := s.path(p)
	data, err := readWholeBounded(file)
	return file, data, err
}

func (s builder) buildService(i int, b *Built, pc *servicePolicy) (sim.ServiceConfig, []string, error) {
	v := &s.Spec.Workload.Services[i]
	at := fmt.Sprintf("spec.workload.services[%d]", i)
	var notes []string
	cfg := sim.ServiceConfig{}
	if v.LLM != nil {
		if _, err := s.buildLLMService(at, v); err != nil {
			return cfg, nil, err
		}
		return cfg, nil, s.errAt(at+".llm", "the cluster run does not serve LLM services yet (issue 31): the engine model is checked, not run")
	}

	// The Deployment or InferenceService, when the service comes from one.
	var wl *kubesvc.Workload
	if len(v.Manifests) > 0 {
		var all []kubesvc.Workload
		for _, m := range v.Manifests {
			file, data, err := s.readServiceFile(m)
			if err != nil {
				return cfg, nil, err
			}
			got, _, err := kubesvc.ReadServing(file, data)
			if err != nil {
				return cfg, nil, err
			}
			all = append(all, got...)
		}
		var names []string
		for k := range all {
			names = append(names, all[k].Kind+"/"+all[k].Name)
			if len(all) == 1 || all[k].Name == v.Name {
				wl = &all[k]
			}
		}
		if wl == nil {
			if len(all) == 0 {
				return cfg, nil, s.errAt(at+".manifests", "the files hold no Deployment or InferenceService")
			}
			return cfg, nil, s.errAt(at+".manifests", "the files hold %s; name the service after the one it is", strings.Join(names, ", "))
		}
		notes = append(notes, fmt.Sprintf("replicas from %s %s (%s:%d)", wl.Kind, wl.Name, wl.File, wl.Line))
	}

	// The replica pod and where it may run.
	var err error
	if v.Pod != nil {
		if cfg.Pod, err = s.servicePod(at+".pod", v.Pod); err != nil {
			return cfg, nil, err
		}
	} else {
		cfg.Pod = cluster.PodSpec{MilliCPU: wl.Pod.MilliCPU, MemoryMiB: wl.Pod.MemoryMiB, GPUs: int32(wl.Pod.GPUs), MIG: wl.Pod.MIG}
		if cfg.Pod.MIG != "" && cfg.Pod.GPUs == 0 {
			cfg.Pod.GPUs = 1
		}
	}
	if err := cfg.Pod.Validate(); err != nil {
		return cfg, nil, s.errAt(at+".pod", "%v", err)
	}
	sel, tols := v.NodeSelector, v.Tolerations
	if wl != nil && sel == nil {
		sel = wl.Pod.NodeSelector
	}
	if wl != nil && tols == nil {
		tols = tolerationsOf(wl.Pod.Tolerations)
	}
	if cfg.Constraints, err = constraintsFrom(sel, v.Affinity, tols); err != nil {
		return cfg, nil, s.errAt(at, "%v", err)
	}
	if len(servicePools(b.Config.Pools, cfg.Constraints, cfg.Pod)) == 0 {
		return cfg, nil, s.errAt(at+".pod", "no pool can run a replica of service %s (its CPU, memory, GPUs, MIG profile, nodeSelector, affinity and tolerations against the pools' nodes, GPUs, labels and taints)", v.Name)
	}

	// Queue and priority.
	cfg.Queue = v.Queue
	if cfg.Queue == "" && wl != nil {
		cfg.Queue = wl.Namespace
	}
	if cfg.Queue == "" {
		cfg.Queue = v.Name
	}
	if err := s.servicePriority(at, v, wl, &cfg, pc); err != nil {
		return cfg, nil, err
	}
	if err := s.serviceQueue(at, v, b, &cfg); err != nil {
		return cfg, nil, err
	}

	// Bounds and the autoscaler.
	scn, err := s.serviceScaler(at, v, wl)
	if err != nil {
		return cfg, nil, err
	}
	cfg.Scaler, cfg.MinReplicas, cfg.MaxReplicas, cfg.InitialReplicas = scn.scaler, scn.min, scn.max, scn.initial
	notes = append(notes, scn.notes...)

	// Batching and service time.
	spec := services.Spec{Name: v.Name, Batch: serving.Batch{Size: 1}, Balancing: serving.Random}
	if _, kpa := scn.scaler.(services.KPA); kpa {
		spec.Balancing = serving.LeastRequest // the activator's queue
	}
	if v.Balancing != "" {
		spec.Balancing, _ = serving.ParseBalancing(v.Balancing) // checked
	}
	if spec.Balancing == serving.Random {
		notes = append(notes, "balancing random: each replica queues and batches its own share of the requests (kube-proxy behind a Kubernetes Service); none ready refuses them")
	} else {
		notes = append(notes, "balancing leastRequest: one shared queue, a replica taking the next batch when free (Knative's activator); none ready holds them")
	}
	if ts := v.TorchServe; ts != nil {
		file, data, err := s.readServiceFile(ts.Path)
		if err != nil {
			return cfg, nil, err
		}
		conf, err := kubesvc.ParseTorchServe(file, data)
		if err != nil {
			return cfg, nil, err
		}
		m, err := s.torchServeModel(at+".torchserve", ts, conf)
		if err != nil {
			return cfg, nil, err
		}
		spec.Batch.Size, spec.Batch.MaxDelayMs = m.BatchSize, float64(m.MaxBatchDelayMs)
		spec.QueueLimit = conf.JobQueueSize
		notes = append(notes, fmt.Sprintf("TorchServe model %s version %s (%s): batchSize %d, maxBatchDelay %d ms, job_queue_size %d; its responseTimeout bounds a batch's inference, not a request's wait, and is not modelled", m.Name, m.Version, file, m.BatchSize, m.MaxBatchDelayMs, conf.JobQueueSize))
	}
	base, per := -1.0, -1.0
	if bt := v.Batching; bt != nil {
		if bt.BatchSize != nil {
			spec.Batch.Size = *bt.BatchSize
		}
		if bt.MaxBatchDelay != nil {
			spec.Batch.MaxDelayMs = float64(bt.MaxBatchDelay.Duration) / float64(time.Millisecond)
		}
		if (bt.BaseMs == nil) != (bt.PerItemMs == nil) {
			return cfg, nil, s.errAt(at+".batching", "give both baseMs and perItemMs (a batch of n takes baseMs + perItemMs x n), or neither for the GPU model's defaults")
		}
		if bt.BaseMs != nil {
			base, per = *bt.BaseMs, *bt.PerItemMs
		}
	}
	if base < 0 {
		var note string
		if base, per, note, err = defaultServiceTime(v.GPUModel, b.Config.Pools, cfg.Constraints, cfg.Pod); err != nil {
			return cfg, nil, s.errAt(at+".batching", "%v", err)
		}
		notes = append(notes, "batch service time assumed for a BERT-base-like model (sequence 128, FP16) on "+note+" (see README: Inference services)")
	}
	spec.Batch.BaseMs, spec.Batch.PerItemMs = base, per
	if err := spec.Batch.Validate(); err != nil {
		return cfg, nil, s.errAt(at+".batching", "%v", err)
	}
	if v.QueueLimit != nil {
		spec.QueueLimit = *v.QueueLimit
	}
	if v.Timeout != nil {
		spec.TimeoutMs = float64(v.Timeout.Millis())
	}
	if v.SLO != nil {
		spec.SLOMs = float64(v.SLO.Latency.Millis())
	}

	// The load.
	if spec.Load, err = s.serviceLoad(at+".load", &v.Load); err != nil {
		return cfg, nil, err
	}
	if err := spec.Validate(); err != nil {
		return cfg, nil, s.errAt(at, "%v", err)
	}
	cfg.Spec = spec
	if c := v.ColdStart; c != nil {
		if c.ImagePull != nil {
			cfg.ImagePull = c.ImagePull.Millis()
		}
		if c.ModelLoad != nil {
			cfg.ModelLoad = c.ModelLoad.Millis()
		}
	}
	if cfg.ImagePull == 0 && cfg.ModelLoad == 0 {
		notes = append(notes, "no coldStart given: a replica serves as soon as it is bound")
	}
	return cfg, notes, nil
}

// tolerationsOf converts a manifest's tolerations.
func tolerationsOf(ts []corev1.Toleration) []TolerationSpec {
	var out []TolerationSpec
	for _, t := range ts {
		out = append(out, TolerationSpec{Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect)})
	}
	return out
}

// servicePriority sets the replicas' priority: priority, priorityClass
// (or the manifest's priorityClassName) from spec.policy's manifests, or
// spec.policy.priorityClasses for the service's queue.
func (s builder) servicePriority(at string, v *ServiceSpec, wl *kubesvc.Workload, cfg *sim.ServiceConfig, pc *servicePolicy) error {
	if v.PreemptionPolicy == PreemptNever {
		cfg.Flags |= cluster.FlagPreemptNever
	}
	if v.Priority != nil {
		cfg.Priority = *v.Priority
		return nil
	}
	class, field, from := v.PriorityClass, at+".priorityClass", "priorityClass"
	if class == "" && wl != nil && wl.Pod.PriorityClassName != "" {
		class, field, from = wl.Pod.PriorityClassName, at+".manifests", fmt.Sprintf("priorityClassName of %s %s", wl.Kind, wl.Name)
	}
	if class == "" && s.Spec.Policy != nil {
		if c, ok := s.Spec.Policy.PriorityClasses[v.Queue]; ok && v.Queue != "" {
			class, field, from = c, "spec.policy.priorityClasses."+v.Queue, "spec.policy.priorityClasses"
		}
	}
	if class == "" {
		return nil
	}
	pol, err := pc.get()
	if err != nil {
		return err
	}
	if pol == nil {
		return s.errAt(field, "%s %s: PriorityClasses come from spec.policy's manifests, and the scenario has none; give priority instead", from, Quote(class))
	}
	val, ok := pol.PriorityClasses[class]
	if !ok {
		return s.errAt(field, "%s %s is not a PriorityClass or WorkloadPriorityClass of spec.policy's manifests (%s)", from, Quote(class), strings.Join(sortedKeys(pol.PriorityClasses), ", "))
	}
	cfg.Priority = val
	if pol.PreemptNever[class] {
		cfg.Flags |= cluster.FlagPreemptNever
	}
	return nil
}

// serviceQueue maps the replicas' queue through spec.policy.queues and
// defaultQueue when the run has admission, as jobs' queues are.
func (s builder) serviceQueue(at string, v *ServiceSpec, b *Built, cfg *sim.ServiceConfig) error {
	adm := b.Config.Admission
	if adm == nil {
		return nil
	}
	known := map[string]bool{}
	for _, l := range adm.LocalQueues {
		known[l.Name] = true
	}
	q := cfg.Queue
	if ps := s.Spec.Policy; ps != nil {
		if to, ok := ps.Queues[q]; ok {
			q = to
		} else if !known[q] && ps.DefaultQueue != "" {
			q = ps.DefaultQueue
		}
	}
	if !known[q] {
		return s.errAt(at+".queue", "service %s: queue %s is not a LocalQueue of the admission policy (%s): map it with spec.policy.queues or set spec.policy.defaultQueue", v.Name, Quote(cfg.Queue), strings.Join(sortedKeys(known), ", "))
	}
	cfg.Queue = q
	return nil
}

// torchServeModel picks the model (and version) a service serves.
func (s builder) torchServeModel(at string, ts *TorchServeSpec, conf *kubesvc.TorchServe) (kubesvc.TorchServeModel, error) {
	var names []string
	var match []kubesvc.TorchServeModel
	for _, m := range conf.Models {
		names = append(names, m.Name+"/"+m.Version)
		if (ts.Model == "" || m.Name == ts.Model) && (ts.Version == "" || m.Version == ts.Version) {
			match = append(match, m)
		}
	}
	switch {
	case len(conf.Models) == 0:
		return kubesvc.TorchServeModel{}, s.errAt(at+".path", "%s has no models key: gpuplan reads batchSize and maxBatchDelay from it", conf.File)
	case len(match) == 1:
		return match[0], nil
	case len(match) == 0:
		return kubesvc.TorchServeModel{}, s.errAt(at+".model", "%s has no model %s version %s (it has %s)", conf.File, Quote(ts.Model), Quote(ts.Version), strings.Join(names, ", "))
	}
	return kubesvc.TorchServeModel{}, s.errAt(at+".model", "%s has several models or versions (%s): name one with model and version", conf.File, strings.Join(names, ", "))
}

// serviceLoad builds the rate curve.
func (s builder) serviceLoad(at string, l *ServiceLoadSpec) (serving.Load, error) {
	var out serving.Load
	switch {
	case l.Constant != nil:
		out.Base = *l.Constant
	case l.Diurnal != nil:
		d := l.Diurnal
		out.Base, out.Amplitude = d.Base, d.Amplitude
		peak, err := timeOfDay(d.Peak)
		if err != nil {
			return out, s.errAt(at+".diurnal.peak", "%v", err)
		}
		// Simulated time 0 is spec.output.startTime: the peak's time of
		// day counts from its midnight.
		st := s.Spec.Output.Start()
		sinceMidnight := int64(st.Hour()*3600+st.Minute()*60+st.Second())*1000 + int64(st.Nanosecond()/1e6)
		const day = 24 * 3600 * 1000
		out.PeakMs = ((peak-sinceMidnight)%day + day) % day
	case l.CSV != nil:
		file, data, err := s.readServiceFile(l.CSV.Path)
		if err != nil {
			return out, err
		}
		if out.Points, err = ReadRateCSV(file, data); err != nil {
			return out, err
		}
	}
	for _, sp := range l.Spikes {
		out.Spikes = append(out.Spikes, serving.Spike{StartMs: sp.Start.Millis(), LengthMs: sp.Length.Millis(), Factor: sp.Multiplier})
	}
	if err := out.Validate(); err != nil {
		return out, s.errAt(at, "%v", err)
	}
	return out, nil
}

// scalerResult is a service's replica bounds and controller.
type scalerResult struct {
	scaler            services.Scaler
	min, max, initial int
	notes             []string
}

var metricKinds = map[string]services.MetricKind{
	MetricRequestsPerReplica: services.RequestsPerReplica,
	MetricConcurrency:        services.Concurrency,
	MetricQueueLatency:       services.QueueLatencyMs,
	MetricUtilization:        services.Utilization,
	MetricQueueDepth:         services.QueueDepth,
}

// serviceScaler builds the autoscaler and the replica bounds: the
// scenario's replicas, else the autoscaler manifest's or the
// InferenceService's bounds.
func (s builder) serviceScaler(at string, v *ServiceSpec, wl *kubesvc.Workload) (scalerResult, error) {
	var out scalerResult
	a := v.Autoscaler
	// Bounds from the manifests first; the scenario's replicas win.
	lo, hi, initial := 1, -1, -1
	loFrom := ""
	var hpaSpec *autoscale.HPASpec
	var kedaSpec *autoscale.ScaledObjectSpec
	var kpaSpec *autoscale.KPASpec
	var kind services.MetricKind
	if wl != nil {
		if wl.Kind == "Deployment" {
			// spec.replicas is where the service starts; without an
			// autoscaler it is what it keeps.
			initial = wl.Replicas
			if a == nil {
				lo, hi = wl.Replicas, wl.Replicas
			}
		} else {
			lo, hi, loFrom = wl.MinReplicas, wl.MaxReplicas, wl.Kind+" "+wl.Name
			if a == nil {
				switch {
				case wl.KPA != nil:
					k := *wl.KPA
					kpaSpec = &k
					out.notes = append(out.notes, fmt.Sprintf("scaled by Knative's KPA as KServe's %s mode sets it up (concurrency target %.3g per replica)", wl.Mode, k.Target))
				case wl.HPA != nil:
					h := *wl.HPA
					hpaSpec = &h
					switch wl.ScaleMetric {
					case "cpu":
						kind = services.Utilization
					default:
						return out, s.errAt(at+".manifests", "%s %s scales on %s, which gpuplan does not model for a replica: give autoscaler", wl.Kind, wl.Name, Quote(wl.ScaleMetric))
					}
					out.notes = append(out.notes, fmt.Sprintf("scaled by the HPA KServe's %s mode sets up (CPU utilization, taken as the replicas' busy share, target %.3g%%)", wl.Mode, h.Target))
				}
			}
		}
	}
	if a != nil && len(a.Manifests) > 0 {
		var hpas []kubesvc.HPA
		var sos []kubesvc.ScaledObject
		for _, m := range a.Manifests {
			file, data, err := s.readServiceFile(m)
			if err != nil {
				return out, err
			}
			set, err := kubesvc.Read(file, data)
			if err != nil {
				return out, err
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
			if hpaSpec == nil && kedaSpec == nil && pick(h.Name, h.Target) {
				sp := h.Spec
				hpaSpec, metric, where = &sp, h.Metric, fmt.Sprintf("HorizontalPodAutoscaler %s (%s:%d)", h.Name, h.File, h.Line)
				lo, hi, loFrom = sp.MinReplicas, sp.MaxReplicas, where
			}
		}
		for k := range sos {
			so := &sos[k]
			found = append(found, "ScaledObject "+so.Name)
			if hpaSpec == nil && kedaSpec == nil && pick(so.Name, so.Target) {
				sp := so.Spec
				kedaSpec, metric, where = &sp, so.Metric, fmt.Sprintf("ScaledObject %s (%s:%d)", so.Name, so.File, so.Line)
				lo, hi, loFrom = sp.MinReplicaCount, sp.MaxReplicaCount, where
			}
		}
		if hpaSpec == nil && kedaSpec == nil {
			if len(found) == 0 {
				return out, s.errAt(at+".autoscaler.manifests", "the files hold no HorizontalPodAutoscaler or ScaledObject")
			}
			return out, s.errAt(at+".autoscaler.manifests", "the files hold %s, none for %s: name the service after its scale target", strings.Join(found, ", "), Quote(target))
		}
		factor := 1.0
		if a.Metric != "" {
			kind = metricKinds[a.Metric]
		} else {
			k, f, err := metric.Kind()
			if err != nil {
				return out, s.errAt(at+".autoscaler.metric", "%s: %v; say which with autoscaler.metric", where, err)
			}
			kind, factor = k, f
		}
		if hpaSpec != nil {
			hpaSpec.Target *= factor
		} else {
			kedaSpec.Threshold *= factor
			kedaSpec.ActivationThreshold *= factor
		}
		unit := ""
		if factor != 1 {
			unit = fmt.Sprintf(", its values times %g for ms", factor)
		}
		out.notes = append(out.notes, fmt.Sprintf("scaled by %s on %s%s", where, kindName(kind), unit))
	}
	if r := v.Replicas; r != nil {
		if r.Min != nil {
			lo, loFrom = *r.Min, ""
		}
		if r.Max != nil {
			hi = *r.Max
		}
		if r.Initial != nil {
			initial = *r.Initial
		}
	}
	if hi < 0 {
		hi = lo
		if a != nil && (a.HPA != nil || a.KEDA != nil || a.KPA != nil) {
			return out, s.errAt(at+".replicas.max", "an autoscaled service needs replicas.max, the most it may scale to")
		}
	}
	if initial < 0 {
		initial = lo
	}
	switch {
	case lo > hi:
		return out, s.errAt(at+".replicas", "min %d is above max %d", lo, hi)
	case hi < 1:
		return out, s.errAt(at+".replicas.max", "must be at least 1")
	case hi > MaxServiceReplicas:
		return out, s.errAt(at+".replicas.max", "%d is more than %d, the most a service has", hi, MaxServiceReplicas)
	case initial < lo || initial > hi:
		return out, s.errAt(at+".replicas.initial", "%d is outside min %d and max %d", initial, lo, hi)
	}
	out.min, out.max, out.initial = lo, hi, initial
	if a != nil {
		switch {
		case a.HPA != nil:
			h := a.HPA
			sp := autoscale.NewHPASpec(hi, h.Target)
			kind = metricKinds[h.Metric]
			if h.Type == "Value" || (h.Type == "" && kind == services.QueueLatencyMs) {
				sp.Type = autoscale.Value
			}
			if h.SyncPeriod != nil {
				sp.SyncMs = h.SyncPeriod.Millis()
			}
			if h.Tolerance != nil {
				sp.Tolerance = *h.Tolerance
			}
			if err := s.behavior(at+".autoscaler.hpa.behavior", h.Behavior, &sp.ScaleUp, &sp.ScaleDown); err != nil {
				return out, err
			}
			hpaSpec = &sp
		case a.KEDA != nil:
			k := a.KEDA
			sp := autoscale.NewScaledObjectSpec(k.Threshold)
			kind = metricKinds[k.Metric]
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
				return out, err
			}
			kedaSpec = &sp
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
			kpaSpec = &sp
		}
	}
	field := at + ".autoscaler"
	if loFrom != "" && v.Replicas == nil {
		field = at + ".replicas"
	}
	switch {
	case hpaSpec != nil:
		if lo < 1 {
			return out, s.errAt(at+".replicas.min", "0: a HorizontalPodAutoscaler cannot scale to zero (minReplicas is at least 1); KEDA or the KPA can")
		}
		hpaSpec.MinReplicas, hpaSpec.MaxReplicas = lo, hi
		h, err := autoscale.NewHPA(*hpaSpec)
		if err != nil {
			return out, s.errAt(field, "%v", err)
		}
		out.scaler = services.HPA{H: h, Metric: kind}
	case kedaSpec != nil:
		kedaSpec.MinReplicaCount, kedaSpec.MaxReplicaCount = lo, hi
		k, err := autoscale.NewKEDA(*kedaSpec)
		if err != nil {
			return out, s.errAt(field, "%v", err)
		}
		out.scaler = services.KEDA{K: k, Metric: kind}
	case kpaSpec != nil:
		kpaSpec.MinScale, kpaSpec.MaxScale = lo, hi
		k, err := autoscale.NewKPA(*kpaSpec)
		if err != nil {
			return out, s.errAt(field, "%v", err)
		}
		out.scaler = services.KPA{K: k, TickMs: kpaSpec.TickMs}
	default:
		if hi > lo {
			return out, s.errAt(at+".replicas.max", "max %d is above min %d and the service has no autoscaler to scale between them", hi, lo)
		}
		if lo < 1 {
			return out, s.errAt(at+".replicas.min", "0 replicas and no autoscaler: the service would never serve")
		}
		out.scaler = services.Fixed{Replicas: lo}
	}
	return out, nil
}

func kindName(k services.MetricKind) string {
	for name, v := range metricKinds {
		if v == k {
			return name
		}
	}
	return "?"
}

// behavior applies a scenario's HPA behavior over the defaults.
func (s builder) behavior(at string, b *HPABehaviorSpec, up, down *autoscale.Rules) error {
	if b == nil {
		return nil
	}
	for _, d := range []struct {
		name string
		r    *ScalingRulesSpec
		dst  *autoscale.Rules
	}{{"scaleUp", b.ScaleUp, up}, {"scaleDown", b.ScaleDown, down}} {
		r := d.r
		if r == nil {
			continue
		}
		if r.StabilizationWindow != nil {
			d.dst.StabilizationMs = r.StabilizationWindow.Millis()
		}
		switch r.SelectPolicy {
		case "Max":
			d.dst.Select = autoscale.SelectMax
		case "Min":
			d.dst.Select = autoscale.SelectMin
		case "Disabled":
			d.dst.Select = autoscale.SelectDisabled
		}
		if r.Policies != nil {
			d.dst.Policies = nil
			for _, p := range r.Policies {
				typ := autoscale.Pods
				if p.Type == "Percent" {
					typ = autoscale.Percent
				}
				d.dst.Policies = append(d.dst.Policies, autoscale.Policy{Type: typ, Value: p.Value, PeriodMs: p.Period.Millis()})
			}
		}
	}
	return nil
}
