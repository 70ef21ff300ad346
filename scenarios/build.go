package scenarios

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/validate/strict"
)

// TieBreaks lists the tie-breaks between nodes of equal score that
// spec.scheduler.tieBreak and --tie-break take: the one list the check
// and the command line's completion read.
func TieBreaks() []string {
	return []string{sim.TieBreakLowestIndex, sim.TieBreakRandom, sim.TieBreakNodeOrder}
}

func knownTieBreak(t string) bool {
	for _, k := range TieBreaks() {
		if k == t {
			return true
		}
	}
	return false
}

// Options override parts of a scenario from the command line.
type Options struct {
	// Seed replaces spec.seed when set.
	Seed *uint64
	// Trace replaces spec.workload with a trace (its path as given, not
	// relative to the scenario file). The scenario's horizon belongs to its
	// own workload: with Trace the whole trace is replayed unless Horizon
	// is set.
	Trace *TraceSpec
	// TraceScan is what a light pass over Trace already learned
	// (traces.SizeTrace, for a cluster sized from the trace): opening the
	// trace then does not read it again to check its order.
	TraceScan *traces.TraceScan
	// Horizon replaces spec.horizon when set (0: run until drained).
	Horizon *time.Duration
	// Policy replaces the scheduler profile with a placement policy's.
	Policy string
	// TieBreak replaces spec.scheduler.tieBreak.
	TieBreak string
	// Pools, when set, replace the scenario's cluster (fixed on-demand
	// pools, no prices); ClusterNotes say where they came from.
	Pools        []cluster.PoolSpec
	ClusterNotes []string
	// PolicyManifests, when set, replace spec.policy.manifests (paths as
	// given, not relative to the scenario).
	PolicyManifests []string
	// Planted plants known bugs in the run (tests only: see
	// sim.PlantedBugs).
	Planted *sim.PlantedBugs
	// MaxEvents is the work budget: a scenario estimated to make more
	// events is refused before it runs (0: DefaultMaxEvents; see
	// checkBudget).
	MaxEvents int64
	// Cache, when set, keeps the request traces read and the LLM plans
	// computed for the other builds sharing it (the runs of one gpuplan
	// command; see BuildCache).
	Cache *BuildCache
}

// Built is a scenario ready to run: the complete plan that the run and
// its pricing read, and nothing changes once it is built. The run reads
// Config; the reports read the rest (Meta) with the run's result, never
// the scenario document.
type Built struct {
	Config sim.Config
	// Scenario and Description name and describe the scenario run (a
	// variant's are its own); Start is the wall-clock time of simulated
	// time 0.
	Scenario, Description string
	Start                 time.Time
	// Workload describes the job source in words, for reports.
	Workload string
	// Assumptions lists what the run assumed that the input did not say.
	Assumptions []string
	// Prices is what each pool's nodes cost and how it was found.
	Prices []PoolPrice
	// Pricing is every rule the run's costs are read with: the pools'
	// prices and their on-demand twins, base rates, the split and its
	// CPU and memory rates, the catalog's sources, showback and budgets.
	Pricing *reports.Pricing
	closers []func() error
	// tasLevels are the levels of the policy's Kueue Topology (nil: none).
	tasLevels []string
	// hyperNodes are the policy's Volcano HyperNodes (nil: none).
	hyperNodes []cluster.HyperNode
}

// Meta is what the reports say of the run besides its result: file is
// the scenario's path as the user gave it. A trace's reader adds its notes
// as it reads, so Meta is taken once the run is over.
func (b *Built) Meta(file string) reports.Meta {
	assumptions := append([]string{}, b.Assumptions...)
	if n, ok := b.Config.Workload.(interface{ Notes() []string }); ok {
		assumptions = append(assumptions, n.Notes()...)
	}
	return reports.Meta{
		Scenario: b.Scenario, File: file, Description: b.Description,
		Workload: b.Workload, Assumptions: assumptions, Pricing: b.Pricing,
		Start: b.Start,
	}
}

// Close releases the files the workload streams from.
func (b *Built) Close() error {
	var first error
	for _, c := range b.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	b.closers = nil
	return first
}

func (s *Scenario) path(p string) string {
	if filepath.IsAbs(p) || s.dir == "" {
		return p
	}
	return filepath.Join(s.dir, p)
}

func (s builder) pluginConfigs() []scheduler.PluginConfig {
	if p := s.Spec.Scheduler.Policy; p != "" {
		out, _ := plugins.PolicyProfile(p) // validated on load
		return out
	}
	var out []scheduler.PluginConfig
	for _, p := range s.Spec.Scheduler.Plugins {
		out = append(out, scheduler.PluginConfig{Name: p.Name, Weight: p.Weight, Resources: p.Resources})
	}
	return out
}

// Seed is the scenario's seed (1 when it gives none).
func (s *Scenario) Seed() uint64 {
	if s.Spec.Seed != nil {
		return *s.Spec.Seed
	}
	return 1
}

// Pools returns the cluster's pools, importing the node list if any.
func (s *Scenario) Pools() ([]cluster.PoolSpec, error) {
	c, err := s.Cluster()
	if err != nil {
		return nil, err
	}
	return c.Pools, nil
}

// ClusterModel is the cluster a scenario describes: its pools (NodePools
// expanded into one pool per instance type and capacity type), their
// prices, and the capacity behaviour (nil when every pool is a fixed set
// of on-demand nodes).
type ClusterModel struct {
	Pools    []cluster.PoolSpec
	Prices   []PoolPrice
	Capacity *capacity.Spec
	// notes are what the NodeOverlays did that the prices do not say
	// (PriceNotes gives them).
	notes []string
}

// Cluster builds the scenario's cluster model, reading the price catalog
// for pools that name an instance type.
func (s *Scenario) Cluster() (*ClusterModel, error) { return builder{s}.clusterModel() }

// clusterModel is Cluster.
func (s builder) clusterModel() (*ClusterModel, error) {
	m := &ClusterModel{}
	var caps []capacity.Pool
	var groups []capacity.Group
	for i, p := range s.Spec.Cluster.Pools {
		at := fmt.Sprintf("spec.cluster.pools[%d]", i)
		res, err := s.instance(p.InstanceType)
		if err != nil {
			return nil, err
		}
		// Validate bounded the quantities; a variant's or a caller's
		// changes are checked again here.
		milliCPU, err := MilliCPU(p.CPU)
		if err != nil {
			return nil, s.errAt(at+".cpu", "%v", err)
		}
		if _, err := MemoryMiB(p.Memory); err != nil {
			return nil, s.errAt(at+".memory", "%v", err)
		}
		memMiB := p.Memory.Value() >> 20 // a node's memory rounds down
		ps := cluster.PoolSpec{
			Name: p.Name, InstanceType: p.InstanceType, GPUModel: p.GPUModel,
			Nodes: p.Count, GPUsPerNode: p.GPUsPerNode,
			MilliCPU: milliCPU, MemoryMiB: memMiB,
			Labels: map[string]string{LabelCapacityType: capacityType(p.CapacityType)},
			Fabric: p.Fabric, Network: p.Network,
		}
		if p.InstanceType != "" {
			ps.Labels[LabelRegion] = s.region(p.Region)
			if p.Zone != "" {
				ps.Labels[LabelZone] = p.Zone
			}
		}
		for k, v := range p.Labels {
			ps.Labels[k] = v
		}
		ps.Taints = taintsFrom(p.Taints)
		ps.GPUMemoryMiB = models.GPUMemoryMiB(p.GPUModel)
		if p.GPUMemory != nil {
			if _, err := strict.QuantityIn(*p.GPUMemory, false, 1<<20, MaxPodMemoryMiB, "gpuMemory"); err != nil {
				return nil, s.errAt(at+".gpuMemory", "%v", err)
			}
			ps.GPUMemoryMiB = p.GPUMemory.Value() >> 20
		}
		fillFromCatalog(&ps, res, p.GPUModel != "", p.GPUsPerNode != 0, !p.CPU.IsZero(), !p.Memory.IsZero())
		if p.InstanceType != "" && !res.ok && (p.CPU.IsZero() || p.Memory.IsZero()) {
			return nil, s.errAt(at+".instanceType", "instance type %q is not in the price catalog: give cpu and memory (and gpuModel, gpusPerNode)", p.InstanceType)
		}
		if ps.GPUsPerNode > 0 && ps.GPUModel == "" {
			return nil, s.errAt(at+".gpuModel", "a pool with GPUs needs a gpuModel")
		}
		if ps.Topology, err = s.poolTopology(at, p.Topology, ps.GPUsPerNode, ps.GPUModel); err != nil {
			return nil, err
		}
		if p.Topology != nil {
			ps.Zones = p.Topology.Zones
		}
		ps.LevelKeys = p.levelKeys
		if a := p.Autoscaling; a != nil {
			ps.MaxNodes = a.MaxNodes
		}
		if sh := p.Sharing; sh != nil {
			if sh.TimeSlicing != nil {
				ps.Sharing.TimeSlicing = sh.TimeSlicing.Replicas
				ps.Sharing.SliceOverhead = sh.TimeSlicing.Overhead
			}
			if m := sh.MIG; m != nil {
				if models.MIGProfiles(ps.GPUModel) == nil {
					return nil, s.errAt(at+".sharing.mig", "gpuModel %q has no MIG support (MIG models: %s)", ps.GPUModel, strings.Join(models.MIGModels(), ", "))
				}
				ps.Sharing.MIGStrategy = m.Strategy
				ps.Sharing.MIGLayout = m.Profiles
				if rl := m.Relayout; rl != nil {
					ps.Sharing.MIGRelayout = true
					ps.Sharing.MIGDrain, ps.Sharing.MIGReconfigure = rl.Drain.Millis(), rl.Reconfigure.Millis()
				}
				if m.Layout != "" {
					l, err := models.MIGLayout(ps.GPUModel, m.Layout)
					if err != nil {
						return nil, s.errAt(at+".sharing.mig.layout", "%v", err)
					}
					ps.Sharing.MIGLayout = l
				}
			}
		}
		if err := ps.Validate(); err != nil {
			return nil, s.errAt(at, "%v", err)
		}
		cp, price, err := s.poolCapacity(i, &ps, res, &groups)
		if err != nil {
			return nil, err
		}
		m.Pools = append(m.Pools, ps)
		caps = append(caps, cp)
		m.Prices = append(m.Prices, price)
	}
	ovs := s.overlays()
	npPools, npCaps, npPrices, npGroups, err := s.nodePools(len(m.Pools), ovs)
	if err != nil {
		return nil, err
	}
	m.notes = ovs.notes
	for k := range npCaps {
		npCaps[k].Group += int32(len(groups))
	}
	m.Pools = append(m.Pools, npPools...)
	caps = append(caps, npCaps...)
	m.Prices = append(m.Prices, npPrices...)
	groups = append(groups, npGroups...)
	if nl := s.Spec.Cluster.NodeList; nl != nil {
		read := traces.ReadOpenbNodes
		if nl.Format == traces.FormatPAI {
			read = traces.ReadPAIMachines
		}
		imported, err := read(s.path(nl.Path))
		if err != nil {
			return nil, err
		}
		for _, p := range imported {
			for _, q := range m.Pools {
				if q.Name == p.Name {
					return nil, s.errAt("spec.cluster.nodeList", "imported pool %q has the name of a pool given inline", p.Name)
				}
			}
			m.Pools = append(m.Pools, p)
			caps = append(caps, capacity.Pool{CapacityType: models.OnDemand, Group: -1})
			m.Prices = append(m.Prices, PoolPrice{Pool: p.Name, CapacityType: models.OnDemand, Basis: "no price (imported node list)"})
		}
	}
	if err := s.checkClusterSize(m.Pools); err != nil {
		return nil, err
	}
	if s.capacityNeeded() {
		m.Capacity = &capacity.Spec{Pools: caps, Groups: groups}
		if err := m.Capacity.Validate(m.Pools); err != nil {
			return nil, s.errAt("spec.cluster", "%v", err)
		}
	}
	return m, nil
}

// Build turns the scenario into a simulation config. The caller must Close
// the result when the run is over.
func (s *Scenario) Build(opts Options) (*Built, error) { return builder{s}.build(opts) }

// build is Build.
func (s builder) build(opts Options) (*Built, error) {
	b, err := s.buildJobs(opts)
	if err != nil {
		return nil, err
	}
	if err := s.retracePrices(b, opts); err != nil {
		b.Close()
		return nil, err
	}
	if err := (serviceBuilder{Scenario: s.Scenario, cache: opts.Cache}).buildServices(b, opts); err != nil {
		b.Close()
		return nil, err
	}
	s.spreadProfile(b)
	from := ""
	if opts.Horizon != nil {
		from = " (--horizon)"
	}
	if err := (budgeter{s.Scenario}).checkBudget(b, opts, from); err != nil {
		b.Close()
		return nil, err
	}
	b.Config.MaxEvents = uint64(opts.maxEvents())
	b.Scenario, b.Description, b.Start = s.Metadata.Name, s.Metadata.Description, s.Spec.Output.Start()
	b.Pricing, err = pricer{s.Scenario}.pricingPlan(b.Config.Pools, b.Prices)
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// buildJobs builds everything but the services.
func (s builder) buildJobs(opts Options) (*Built, error) {
	b, err := s.newBuilt(opts)
	if err != nil {
		return nil, err
	}
	trace := s.Spec.Workload.Trace
	traceFile := ""
	if trace != nil {
		traceFile = s.path(trace.Path)
	}
	if opts.Trace != nil {
		trace = opts.Trace
		traceFile = trace.Path
		b.Config.Horizon = 0
		if err := (validator{&Scenario{file: "--trace"}}).validateTrace(trace, "--trace"); err != nil {
			return nil, err
		}
	}
	if opts.Horizon != nil {
		if *opts.Horizon < 0 {
			return nil, &InputError{File: "--horizon", Msg: "must not be negative"}
		}
		b.Config.Horizon = opts.Horizon.Milliseconds()
	}
	manifests := trace == nil && len(s.Spec.Workload.Manifests) > 0
	servicesOnly := trace == nil && !manifests && s.Spec.Workload.Synthetic == nil
	if err := s.checkDrains(b, opts, trace == nil, manifests, servicesOnly); err != nil {
		return nil, err
	}
	from := ""
	if opts.Horizon != nil {
		from = " (--horizon)"
	}
	if err := s.checkTimeline(b.Config.Horizon, from); err != nil {
		return nil, err
	}
	if servicesOnly {
		b.Config.Workload = &sim.SliceSource{}
		b.Workload = "services only"
		return b, s.policy(b, opts)
	}
	if trace == nil {
		if err := s.checkArrivals(b.Config.Horizon, from); err != nil {
			return nil, err
		}
	}
	if trace != nil {
		return b, s.buildTrace(b, opts, trace, traceFile)
	}
	if manifests {
		return b, s.buildManifests(b, opts)
	}
	return b, s.buildSynthetic(b, opts)
}

// newBuilt starts the plan: the cluster (or --trace's derived pools), the
// fabrics training jobs talk over, the scheduler's profile, tie-break and
// preemption, the seed, horizon, timeline and fragmentation, with the
// command line's overrides.
func (s builder) newBuilt(opts Options) (*Built, error) {
	cm, err := s.Cluster()
	if err != nil {
		return nil, err
	}
	if opts.Pools != nil {
		cm = &ClusterModel{Pools: opts.Pools}
		for _, p := range opts.Pools {
			cm.Prices = append(cm.Prices, PoolPrice{Pool: p.Name, CapacityType: "on-demand", Basis: "no price (derived cluster)"})
		}
	}
	b := &Built{Assumptions: append(append([]string(nil), opts.ClusterNotes...), s.nodeNotes...), Prices: cm.Prices, Config: sim.Config{
		Seed:     s.Seed(),
		Pools:    cm.Pools,
		Capacity: cm.Capacity,
		Plugins:  s.pluginConfigs(),
		Queue:    queueConfig(s.Spec.Queueing),
	}}
	b.Assumptions = append(b.Assumptions, cm.PriceNotes()...)
	b.Assumptions = append(b.Assumptions, topologyNotes(cm.Pools)...)
	if s.hasTraining() || s.Spec.Calibration != "" {
		names := map[string]bool{}
		var named []string
		for _, p := range cm.Pools {
			for _, n := range []string{p.Fabric, p.Network, p.Topology.DomainFabric} {
				if n != "" {
					names[n] = true
					named = append(named, p.Name)
				}
			}
		}
		fabs, from, err := s.fabrics(named, names)
		if err != nil {
			return nil, err
		}
		b.Config.Fabrics = fabs
		b.Assumptions = append(b.Assumptions, "training jobs communicate over "+from+"; across nodes the network's bus bandwidth is scaled by the share of a node's rails a job uses")
	}
	b.Config.Planted = opts.Planted
	b.Config.TieBreak = s.Spec.Scheduler.TieBreak
	b.Config.Preemption = s.Spec.Scheduler.Preemption
	if opts.Seed != nil {
		b.Config.Seed = *opts.Seed
	}
	if opts.Policy != "" {
		prof, err := plugins.PolicyProfile(opts.Policy)
		if err != nil {
			return nil, &InputError{File: "--policy", Msg: err.Error()}
		}
		b.Config.Plugins = prof
	}
	if opts.TieBreak != "" {
		if !knownTieBreak(opts.TieBreak) {
			return nil, &InputError{File: "--tie-break", Msg: fmt.Sprintf("%q is not one of %s", opts.TieBreak, strings.Join(TieBreaks(), ", "))}
		}
		b.Config.TieBreak = opts.TieBreak
	}
	if s.Spec.Horizon != nil {
		b.Config.Horizon = s.Spec.Horizon.Millis()
	}
	if t := s.Spec.Output.TimelineInterval; t != nil {
		b.Config.TimelineInterval = t.Millis()
	}
	b.Config.Fragmentation = s.Spec.Output.Fragmentation
	return b, nil
}

// checkDrains refuses a run with no horizon whose workload never drains:
// a synthetic workload without a jobs limit, manifests submitted by a rate
// or a schedule without a count.
func (s builder) checkDrains(b *Built, opts Options, noTrace, manifests, servicesOnly bool) error {
	if noTrace && !manifests && !servicesOnly && b.Config.Horizon == 0 && s.Spec.Workload.Synthetic.Jobs == 0 {
		return &InputError{File: "--horizon", Msg: "a synthetic workload without a jobs limit needs a horizon"}
	}
	if manifests && b.Config.Horizon == 0 {
		// Manifests submitted by a rate or a schedule never drain.
		for i, m := range s.Spec.Workload.Manifests {
			if m.Count > 0 {
				continue
			}
			how := "by a rate"
			switch {
			case m.Arrival != nil:
			case m.Schedule != "":
				how = "on a schedule"
			default:
				how = "its objects (a CronJob on its schedule)"
			}
			if opts.Horizon != nil {
				return &InputError{File: "--horizon", Msg: fmt.Sprintf("0 runs until the workload drains, and %s (%s) submits %s without a count, so it never does: give a horizon (or a count)", fmt.Sprintf("spec.workload.manifests[%d]", i), m.Path, how)}
			}
			return s.errAt(fmt.Sprintf("spec.workload.manifests[%d]", i), "submitting manifests by a rate or a schedule needs spec.horizon or a count, or it never ends")
		}
	}
	return nil
}

// buildTrace makes a trace replay the workload: the trace file opened as
// a stream (closed with b), with the workload's recovery and Volcano
// settings, then the policy.
func (s builder) buildTrace(b *Built, opts Options, trace *TraceSpec, traceFile string) error {
	jobTable := trace.JobTable
	if jobTable != "" && opts.Trace == nil {
		jobTable = s.path(jobTable)
	}
	topts := traces.TraceOptions{PendingPods: trace.PendingPods, GPUsPerNode: trace.GPUsPerNode, JobTable: jobTable}
	if opts.Trace != nil {
		topts.Scan = opts.TraceScan
	}
	src, err := traces.OpenTrace(traceFile, trace.Format, topts)
	if err != nil {
		return err
	}
	b.closers = append(b.closers, src.Close)
	b.Config.Workload = src
	rec, err := s.recovery("spec.workload.recovery", s.Spec.Workload.Recovery)
	if err != nil {
		return err
	}
	rec, minAvail, err := s.volcano("spec.workload.volcano", s.Spec.Workload.Volcano, s.Spec.Workload.Recovery, rec)
	if err != nil {
		return err
	}
	if rec != nil || minAvail > 0 {
		b.Config.Workload = withRecovery{src, rec, minAvail}
	}
	b.Workload = fmt.Sprintf("trace %s (format %s)", traceFile, trace.Format)
	return s.policy(b, opts)
}

// buildSynthetic makes the synthetic classes the workload: their
// generator, checked against the pools' MIG profiles, then the policy.
func (s builder) buildSynthetic(b *Built, opts Options) error {
	gen, err := s.generator(b.Config.Seed, b.Config.Horizon)
	if err != nil {
		return err
	}
	b.Config.Workload = gen
	if err := s.checkClassMIG(b.Config.Pools); err != nil {
		return err
	}
	var names []string
	for _, c := range s.Spec.Workload.Synthetic.Classes {
		names = append(names, c.Name)
	}
	b.Workload = fmt.Sprintf("synthetic, classes %s", strings.Join(names, ", "))
	if err := s.policy(b, opts); err != nil {
		return err
	}
	return s.classTopology(b)
}

// classTopology sets the run's topology levels when a synthetic class
// asks for topology (the policy's Kueue Topology's, else the pools'),
// each class's level checked to be one of them.
func (s builder) classTopology(b *Built) error {
	levels := sim.TASLevels(b.tasLevels, b.Config.Pools)
	asked := false
	for i, c := range s.Spec.Workload.Synthetic.Classes {
		t := c.Topology
		if t == nil {
			continue
		}
		asked = true
		at, key := fmt.Sprintf("spec.workload.synthetic.classes[%d].topology.required", i), t.Required
		if key == "" {
			at, key = strings.TrimSuffix(at, "required")+"preferred", t.Preferred
		}
		if !slices.Contains(levels, key) {
			return s.errAt(at, "topology level %s is not a level of the run's topology (%s)", Quote(key), strings.Join(levels, ", "))
		}
	}
	if asked {
		b.Config.TASLevels = levels
		b.Assumptions = append(b.Assumptions, tasNotes(levels, b.tasLevels != nil)...)
	}
	return nil
}

func taintsFrom(ts []TaintSpec) []cluster.Taint {
	var out []cluster.Taint
	for _, t := range ts {
		out = append(out, cluster.Taint{Key: t.Key, Value: t.Value, Effect: cluster.TaintEffect(t.Effect)})
	}
	return out
}

// withRecovery gives trace jobs the scenario's recovery settings and
// Volcano gang size.
type withRecovery struct {
	sim.JobSource
	rec          *cluster.Recovery
	minAvailable int32
}

// Notes passes on the trace reader's notes.
func (w withRecovery) Notes() []string {
	if n, ok := w.JobSource.(interface{ Notes() []string }); ok {
		return n.Notes()
	}
	return nil
}

// Info passes on the trace reader's description: the pipeline sizes the
// run's records from it and parses the trace on another core only for a
// source that has one.
func (w withRecovery) Info() traces.TraceInfo {
	if i, ok := w.JobSource.(interface{ Info() traces.TraceInfo }); ok {
		return i.Info()
	}
	return traces.TraceInfo{}
}

func (w withRecovery) Next(j *cluster.JobSpec) (bool, error) {
	ok, err := w.JobSource.Next(j)
	if ok && j.Recovery == nil {
		j.Recovery = w.rec
	}
	if ok && j.MinAvailable == 0 {
		j.MinAvailable = w.minAvailable
	}
	return ok, err
}

func constraintsFrom(sel map[string]string, terms []TermSpec, tols []TolerationSpec) (*cluster.Constraints, error) {
	return traces.ConstraintsFrom(sel, terms, tols)
}

// queueConfig is the engine's queue for a queueing spec.
func queueConfig(q QueueingSpec) scheduler.QueueConfig {
	switch q.Effective() {
	case QueueStrictFIFO:
		return scheduler.QueueConfig{Policy: scheduler.FIFO}
	case QueueBackfill:
		return scheduler.QueueConfig{Policy: scheduler.FIFO, Backfill: true, BackfillDepth: q.BackfillDepth}
	}
	return scheduler.QueueConfig{Policy: scheduler.SchedulingQueue}
}
