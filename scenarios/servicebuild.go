package scenarios

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	kubesvc "gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
	"gpuplan.dev/gpuplan/validate/strict"
)

// ServingModelNote is the assumption every run with services lists.
const ServingModelNote = "inference services: a fluid per-interval model of each service's requests (models/serving.BalancedCycle: dynamic batching per replica under random balancing or from one shared queue under leastRequest, G/D/c queueing near capacity, a backlog carried when replicas fall behind), not request by request; replicas are pods of the same scheduler and serve once bound and past their cold start"

// buildServices builds spec.workload.services into b.Config.Services,
// reading the files they name.
func (s serviceBuilder) buildServices(b *Built, opts Options) error {
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
func (s serviceBuilder) readServiceFile(p string) (string, []byte, error) {
	file := s.path(p)
	data, err := readWholeBounded(file)
	return file, data, err
}

func (s serviceBuilder) buildService(i int, b *Built, pc *servicePolicy) (sim.ServiceConfig, []string, error) {
	v := &s.Spec.Workload.Services[i]
	at := fmt.Sprintf("spec.workload.services[%d]", i)
	var notes []string
	cfg := sim.ServiceConfig{}
	// The Deployment or InferenceService, when the service comes from one.
	wl, note, err := s.serviceWorkload(at, v, pc)
	if err != nil {
		return cfg, nil, err
	}
	if wl != nil {
		notes = append(notes, note)
		notes = append(notes, wl.Notes...)
	}

	// The replica pod and where it may run.
	if err := s.replicaPod(at, v, wl, b, &cfg); err != nil {
		return cfg, nil, err
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

	// An LLM engine (servicellmbuild.go), or batching and service time.
	if wl != nil && wl.VLLM != nil {
		if v.LLM == nil {
			return cfg, nil, s.errAt(at, "%s %s runs a vLLM server (%s:%d, container %s): give the service an llm block with the requests' inputTokens and outputTokens; the engine's arguments come from the manifest", wl.Kind, wl.Name, wl.File, wl.Line, Quote(wl.VLLM.Container))
		}
		var more []string
		v, more = withVLLMArgs(v, wl)
		notes = append(notes, more...)
		if wl.Disagg != nil {
			v, more = withManifestDisagg(v, wl)
			notes = append(notes, more...)
		}
	}
	if wl != nil && wl.InferencePool != nil {
		if v.LLM == nil {
			return cfg, nil, strict.Errorf(wl.InferencePool.File, wl.InferencePool.Line, "", "%s routes to %s %s, which serves no LLM: an InferencePool's endpoint picker routes model servers (give the service an llm block)", wl.InferencePool.Where(), wl.Kind, wl.Name)
		}
		var note string
		v, note = withInferencePool(v, wl)
		notes = append(notes, note)
	}
	if v.LLM != nil {
		return s.buildLLMServiceSpec(at, v, wl, b, cfg, notes)
	}
	spec, more, err := s.serviceBatching(at, v, b, &cfg)
	if err != nil {
		return cfg, nil, err
	}
	notes = append(notes, more...)

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

// serviceWorkload is the Deployment, ReplicaSet, StatefulSet or
// InferenceService the service comes from (nil when it has no manifests):
// the only one in its files, or the one named after the service; and the
// note that says so.
func (s serviceBuilder) serviceWorkload(at string, v *ServiceSpec, pc *servicePolicy) (*kubesvc.Workload, string, error) {
	if len(v.Manifests) == 0 {
		return nil, "", nil
	}
	// The policy's DeviceClasses are the cluster's: the replicas' claims
	// may name them.
	pol, err := pc.get()
	if err != nil {
		return nil, "", err
	}
	var cluster *dra.Set
	if pol != nil {
		cluster = pol.Devices
	}
	// The DeviceClasses of every file listed: the replicas' claims may
	// name a class of another (kubernetes/04-dra-deviceclasses.yaml
	// beside the service's file, as gpuplan manifests writes them).
	files := make([]string, len(v.Manifests))
	datas := make([][]byte, len(v.Manifests))
	shared := dra.NewSet()
	for i, m := range v.Manifests {
		file, data, err := s.readServiceFile(m)
		if err != nil {
			return nil, "", err
		}
		files[i], datas[i] = file, data
		if len(v.Manifests) == 1 {
			break
		}
		docs, err := strict.Manifests(file, data)
		if err != nil {
			return nil, "", err
		}
		set, err := dra.Read(file, docs)
		if err != nil {
			return nil, "", err
		}
		shared.AddClasses(set)
	}
	var all []kubesvc.Workload
	for i := range v.Manifests {
		got, _, err := kubesvc.ReadServingWith(files[i], datas[i], shared, cluster)
		if err != nil {
			return nil, "", err
		}
		all = append(all, got...)
	}
	var names []string
	var wl *kubesvc.Workload
	for k := range all {
		names = append(names, all[k].Kind+"/"+all[k].Name)
		if len(all) == 1 || all[k].Name == v.Name {
			wl = &all[k]
		}
	}
	if wl == nil {
		if len(all) == 0 {
			return nil, "", s.errAt(at+".manifests", "the files hold no Deployment, ReplicaSet, StatefulSet, LeaderWorkerSet, InferenceService or LLMInferenceService")
		}
		return nil, "", s.errAt(at+".manifests", "the files hold %s; name the service after the one it is", strings.Join(names, ", "))
	}
	// An InferencePool routing to the replicas: the gateway's endpoint
	// picker in front of them.
	for i := range v.Manifests {
		pools, err := kubesvc.ReadInferencePools(files[i], datas[i])
		if err != nil {
			return nil, "", err
		}
		for k := range pools {
			p := &pools[k]
			if !p.Selects(wl) {
				return nil, "", strict.Errorf(p.File, p.Line, "spec.selector.matchLabels", "%s selects no replica of %s %s (its pods' labels do not hold %s, or another namespace)", p.Where(), wl.Kind, wl.Name, p.SelectorText())
			}
			if wl.InferencePool != nil {
				return nil, "", strict.Errorf(p.File, p.Line, "", "%s and %s both route to %s %s: give one", wl.InferencePool.Where(), p.Where(), wl.Kind, wl.Name)
			}
			wl.InferencePool = p
		}
	}
	return wl, fmt.Sprintf("replicas from %s %s (%s:%d)", wl.Kind, wl.Name, wl.File, wl.Line), nil
}

// replicaPod sets the service's replica pod (the scenario's, else the
// workload manifest's) and the constraints on where it may run, and
// checks that some pool can run it.
func (s serviceBuilder) replicaPod(at string, v *ServiceSpec, wl *kubesvc.Workload, b *Built, cfg *sim.ServiceConfig) error {
	var err error
	if v.Pod != nil {
		if cfg.Pod, err = s.servicePod(at+".pod", v.Pod); err != nil {
			return err
		}
	} else {
		cfg.Pod = cluster.PodSpec{MilliCPU: wl.Pod.MilliCPU, MemoryMiB: wl.Pod.MemoryMiB, GPUs: int32(wl.Pod.GPUs), MIG: wl.Pod.MIG}
		if cfg.Pod.MIG != "" && cfg.Pod.GPUs == 0 {
			cfg.Pod.GPUs = 1
		}
	}
	if err := cfg.Pod.Validate(); err != nil {
		return s.errAt(at+".pod", "%v", err)
	}
	size := 0
	if wl != nil {
		size = wl.Size
	}
	pods, field := replicaPods(at, v, size)
	switch {
	case pods > 1 && v.LLM == nil && (wl == nil || wl.VLLM == nil):
		return s.errAt(field, "%d pods a replica: a batch server's replica is one pod; multi-pod replicas are LLM engines (give an llm block)", pods)
	case pods > 1:
		cfg.PodsPerReplica = pods
	}
	sel, tols := v.NodeSelector, v.Tolerations
	if wl != nil && sel == nil {
		sel = wl.Pod.NodeSelector
	}
	if wl != nil && tols == nil {
		tols = tolerationsOf(wl.Pod.Tolerations)
	}
	if cfg.Constraints, err = constraintsFrom(sel, v.Affinity, tols); err != nil {
		return s.errAt(at, "%v", err)
	}
	if wl != nil && v.Affinity == nil && len(wl.Pod.NodeAffinity) > 0 {
		// The manifest's required node affinity, unless the scenario
		// gives its own.
		if cfg.Constraints == nil {
			cfg.Constraints = &cluster.Constraints{}
		}
		cfg.Constraints.Affinity = wl.Pod.NodeAffinity
	}
	labels, spread, err := validator{s.Scenario}.serviceSpread(at, v)
	if err != nil {
		return err
	}
	if wl != nil && len(v.TopologySpreadConstraints) == 0 {
		spread = wl.Pod.Spread
	}
	if wl != nil && v.Labels == nil {
		labels = wl.Pod.Labels
	}
	var terms []cluster.PodAffinityTerm
	if wl != nil {
		terms = wl.Pod.PodAffinity
	}
	cfg.Pod.Labels, cfg.Constraints = withSpread(cfg.Constraints, labels, spread, terms)
	if len(servicePools(b.Config.Pools, cfg.Constraints, cfg.Pod)) == 0 {
		return s.errAt(at+".pod", "no pool can run a replica of service %s (its CPU, memory, GPUs, MIG profile, nodeSelector, affinity and tolerations against the pools' nodes, GPUs, labels and taints)", v.Name)
	}
	return nil
}

// serviceBatching is the service's serving model but its load: the
// balancing (leastRequest behind the KPA's activator), the batch size and
// delay (TorchServe's config, then batching), the batch service time
// (given, else the GPU model's defaults), the queue limit, timeout and
// SLO; with the notes that say what was assumed. cfg holds the replica
// pod, its constraints and the scaler already.
func (s serviceBuilder) serviceBatching(at string, v *ServiceSpec, b *Built, cfg *sim.ServiceConfig) (services.Spec, []string, error) {
	var notes []string
	var err error
	spec := services.Spec{Name: v.Name, Batch: serving.Batch{Size: 1}, Balancing: serving.Random}
	if _, kpa := cfg.Scaler.(services.KPA); kpa {
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
			return spec, nil, err
		}
		conf, err := kubesvc.ParseTorchServe(file, data)
		if err != nil {
			return spec, nil, err
		}
		m, err := s.torchServeModel(at+".torchserve", ts, conf)
		if err != nil {
			return spec, nil, err
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
			return spec, nil, s.errAt(at+".batching", "give both baseMs and perItemMs (a batch of n takes baseMs + perItemMs x n), or neither for the GPU model's defaults")
		}
		if bt.BaseMs != nil {
			base, per = *bt.BaseMs, *bt.PerItemMs
		}
	}
	if base < 0 {
		var note string
		if base, per, note, err = defaultServiceTime(v.GPUModel, b.Config.Pools, cfg.Constraints, cfg.Pod); err != nil {
			return spec, nil, s.errAt(at+".batching", "%v", err)
		}
		notes = append(notes, "batch service time assumed for a BERT-base-like model (sequence 128, FP16) on "+note+" (see README: Inference services)")
	}
	spec.Batch.BaseMs, spec.Batch.PerItemMs = base, per
	if err := spec.Batch.Validate(); err != nil {
		return spec, nil, s.errAt(at+".batching", "%v", err)
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
	return spec, notes, nil
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
func (s serviceBuilder) servicePriority(at string, v *ServiceSpec, wl *kubesvc.Workload, cfg *sim.ServiceConfig, pc *servicePolicy) error {
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
func (s serviceBuilder) serviceQueue(at string, v *ServiceSpec, b *Built, cfg *sim.ServiceConfig) error {
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
func (s serviceBuilder) torchServeModel(at string, ts *TorchServeSpec, conf *kubesvc.TorchServe) (kubesvc.TorchServeModel, error) {
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
func (s serviceBuilder) serviceLoad(at string, l *ServiceLoadSpec) (serving.Load, error) {
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
	MetricRequestsRunning:    services.Running,
	MetricKVCacheUsage:       services.KVCacheUsage,
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
func (s serviceBuilder) behavior(at string, b *HPABehaviorSpec, up, down *autoscale.Rules) error {
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
