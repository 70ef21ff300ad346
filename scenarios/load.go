package scenarios

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/validate/strict"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultName is how the embedded default scenario is named in messages.
const DefaultName = "<built-in default scenario>"

// DefaultYAML returns the text of the embedded default scenario.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Default returns the embedded default scenario: a mixed cluster of
// H100 training nodes and A10G nodes, with training gangs, fine-tuning
// jobs and short interactive jobs over three days.
func Default() (*Scenario, error) { return Parse(DefaultName, "", defaultYAML) }

// LoadFile reads, strictly decodes and validates a scenario file.
func LoadFile(path string) (*Scenario, error) { return LoadFileWith(path, LoadOptions{}) }

func readErr(err error) string { return strict.ReadErr(err) }

// Parse decodes and validates a scenario; file names it in errors and dir
// resolves the relative paths inside it.
func Parse(file, dir string, data []byte) (*Scenario, error) {
	return ParseWith(file, dir, data, LoadOptions{})
}

// ParseWith is Parse as the options say.
func ParseWith(file, dir string, data []byte, o LoadOptions) (*Scenario, error) {
	if len(data) > strict.MaxScenarioBytes {
		return nil, &strict.InputError{File: file, Line: 1, Msg: fmt.Sprintf("the scenario is %d KiB, over the %d KiB a scenario document may be: long lists (spikes, rates, jobs) belong in the files it names (a load's csv, a trace)", len(data)>>10, strict.MaxScenarioBytes>>10)}
	}
	s := &Scenario{}
	pos, err := decodeStrict(file, data, s)
	if err != nil {
		return nil, err
	}
	s.file, s.dir, s.pos, s.restrict, s.policyFiles = file, dir, pos, o.RestrictPaths, o.PolicyManifests
	if err := (validator{s}).checkPaths(); err != nil {
		return nil, err
	}
	if err := s.readInputs(); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// readInputs reads, as the scenario loads, everything besides the
// document that building it reads: the price catalog, the NodePools of
// spec.policy's manifests, the nodes of spec.cluster.nodes and Karpenter's
// catalog for NodePools. None of it changes afterwards, so runs on several
// workers share a scenario without a lock.
func (s *Scenario) readInputs() error {
	if err := s.loadPriceCatalog(); err != nil {
		return err
	}
	if err := s.importNodePools(); err != nil {
		return err
	}
	if err := s.importNodes(); err != nil {
		return err
	}
	if err := s.importAgentPools(); err != nil {
		return err
	}
	if err := s.importWorkspaces(); err != nil {
		return err
	}
	if err := s.applyGPUConfigs(); err != nil {
		return err
	}
	return s.loadKarpenterCatalog()
}

// File is where the scenario was loaded from.
func (s *Scenario) File() string { return s.file }

// errAt is an InputError at a field path, placed at the line of the
// nearest enclosing field the file has.
func (s *Scenario) errAt(path, format string, args ...any) *InputError {
	path = s.alias(path)
	e := &InputError{File: s.file, Field: path, Msg: fmt.Sprintf(format, args...)}
	for p := path; ; {
		if lc, ok := s.pos[p]; ok {
			e.Line, e.Column = lc[0], lc[1]
			break
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			if lc, ok := s.pos[""]; ok {
				e.Line, e.Column = lc[0], lc[1]
			}
			break
		}
		p = p[:i]
	}
	return e
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// Validate checks the scenario's meaning (its shape was checked on decoding).
func (s *Scenario) Validate() error { return validator{s}.validate() }

// validate is Validate.
func (s validator) validate() error {
	if s.APIVersion != APIVersion {
		return s.errAt("apiVersion", "is %q, want %q", s.APIVersion, APIVersion)
	}
	if s.Kind != Kind {
		return s.errAt("kind", "is %q, want %q", s.Kind, Kind)
	}
	if s.Metadata.Name == "" {
		return s.errAt("metadata.name", "a scenario needs a name")
	}
	if n := len(s.Metadata.Name); n > maxNameBytes {
		return s.errAt("metadata.name", "is %d bytes; a name is at most %d", n, maxNameBytes)
	}
	if n := len(s.Metadata.Description); n > MaxDescriptionBytes {
		return s.errAt("metadata.description", "is %d bytes; a description, carried into every report, is at most %d (%d KiB)", n, MaxDescriptionBytes, MaxDescriptionBytes>>10)
	}
	sp := &s.Spec
	if sp.Horizon != nil && sp.Horizon.Duration <= 0 {
		return s.errAt("spec.horizon", "must be positive")
	}
	if sp.Horizon != nil && sp.Horizon.Duration < time.Millisecond {
		return s.errAt("spec.horizon", "%s is below 1 ms, the shortest duration gpuplan represents", sp.Horizon.Duration)
	}
	if sp.Horizon != nil && sp.Horizon.Millis() > maxDurationMs {
		return s.errAt("spec.horizon", "%s is more than 100 years", sp.Horizon.Duration)
	}
	if len(sp.Cluster.Pools) == 0 && len(sp.Cluster.NodePools) == 0 && sp.Cluster.NodeList == nil {
		return s.errAt("spec.cluster", "give at least one pool or NodePool, or a nodeList or nodes")
	}
	seen := map[string]bool{}
	for i := range sp.Cluster.Pools {
		if err := s.validatePool(i, seen); err != nil {
			return err
		}
	}
	for i := range sp.Cluster.NodePools {
		if err := s.validateNodePool(i, seen); err != nil {
			return err
		}
	}
	if err := s.checkNodeCount(); err != nil {
		return err
	}
	if r := sp.Pricing.BaseRates; r != nil {
		for _, x := range []float64{r.GPU, r.CPU, r.Memory} {
			if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				return s.errAt("spec.pricing.baseRates", "rates must not be negative")
			}
		}
		if r.GPU+r.CPU+r.Memory == 0 {
			return s.errAt("spec.pricing.baseRates", "give at least one positive rate")
		}
	}
	rec, err := builder{s.Scenario}.recovery("spec.workload.recovery", sp.Workload.Recovery)
	if err != nil {
		return err
	}
	if _, _, err := (builder{s.Scenario}).volcano("spec.workload.volcano", sp.Workload.Volcano, sp.Workload.Recovery, rec); err != nil {
		return err
	}
	if nl := sp.Cluster.NodeList; nl != nil {
		if nl.Path == "" {
			return s.errAt("spec.cluster.nodeList.path", "is required")
		}
		if nl.Format != traces.FormatOpenb && nl.Format != traces.FormatPAI {
			return s.errAt("spec.cluster.nodeList.format", "is %q; the known node list formats are openb (openb_node_list) and pai (pai_machine_spec)", nl.Format)
		}
	}
	if err := s.validateWorkload(); err != nil {
		return err
	}
	if err := s.validateScheduler(); err != nil {
		return err
	}
	if p := sp.Policy; p != nil && len(p.Manifests) == 0 {
		return s.errAt("spec.policy.manifests", "name the files or folders of Kueue manifests")
	}
	if err := s.validateQueueing(); err != nil {
		return err
	}
	if err := s.validateOutput(); err != nil {
		return err
	}
	return s.validateVariants()
}

// validateScheduler checks spec.scheduler: a known policy or known plugins
// (not both) that make a profile, and the tie-break.
func (s validator) validateScheduler() error {
	sp := &s.Spec
	names := map[string]bool{}
	for _, n := range plugins.Names() {
		names[n] = true
	}
	if pol := sp.Scheduler.Policy; pol != "" {
		if len(sp.Scheduler.Plugins) > 0 {
			return s.errAt("spec.scheduler.policy", "give a policy or a plugin list, not both")
		}
		if _, ok := plugins.Policies()[pol]; !ok {
			return s.errAt("spec.scheduler.policy", "unknown policy %q (known: %s)", pol, strings.Join(plugins.PolicyNames(), ", "))
		}
	}
	if tb := sp.Scheduler.TieBreak; tb != "" && !knownTieBreak(tb) {
		return s.errAt("spec.scheduler.tieBreak", "is %q; want one of %s", tb, strings.Join(TieBreaks(), ", "))
	}
	for i, p := range sp.Scheduler.Plugins {
		if !names[p.Name] {
			return s.errAt(fmt.Sprintf("spec.scheduler.plugins[%d].name", i), "unknown plugin %q (known: %s)", p.Name, strings.Join(plugins.Names(), ", "))
		}
	}
	if len(sp.Scheduler.Plugins) > 0 {
		if _, err := plugins.NewProfile(builder{s.Scenario}.pluginConfigs(), nil); err != nil {
			return s.errAt("spec.scheduler.plugins", "%v", err)
		}
	}
	return nil
}

// validateQueueing checks spec.queueing: a known policy, and backfill
// and its depth only where the policy backfills.
func (s validator) validateQueueing() error {
	sp := &s.Spec
	switch q := sp.Queueing; q.Policy {
	case "", QueueFIFO:
	case QueueSchedulingQueue, QueueStrictFIFO:
		if q.Backfill {
			return s.errAt("spec.queueing.backfill", "is true with policy %s; backfill goes with policy Backfill or FIFO", q.Policy)
		}
	case QueueBackfill:
	default:
		return s.errAt("spec.queueing.policy", "is %s; the known policies are SchedulingQueue (the default), StrictFIFO, Backfill and FIFO (with backfill: true or false)", Quote(q.Policy))
	}
	if sp.Queueing.BackfillDepth < 0 {
		return s.errAt("spec.queueing.backfillDepth", "must not be negative")
	}
	if sp.Queueing.BackfillDepth > 0 && sp.Queueing.Effective() != QueueBackfill {
		return s.errAt("spec.queueing.backfillDepth", "is set but the queueing policy is %s; it bounds Backfill only", sp.Queueing.Effective())
	}
	return nil
}

// validateOutput checks spec.output: the timeline's interval (and its
// buckets over the horizon), the spot sensitivity and the start time.
func (s validator) validateOutput() error {
	sp := &s.Spec
	if sp.Output.TimelineInterval != nil && sp.Output.TimelineInterval.Duration < 1e6 {
		return s.errAt("spec.output.timelineInterval", "must be at least 1ms")
	}
	if sp.Horizon != nil {
		if err := (builder{s.Scenario}).checkTimeline(sp.Horizon.Millis(), ""); err != nil {
			return err
		}
	}
	switch sp.Output.SpotSensitivity {
	case "", Off, On:
	default:
		return s.errAt("spec.output.spotSensitivity", "is %s; want off or on", Quote(string(sp.Output.SpotSensitivity)))
	}
	if n := sp.Output.SpotSensitivitySeeds; n < 0 || n > MaxSpotSensitivitySeeds {
		return s.errAt("spec.output.spotSensitivitySeeds", "is %d; want 1 to %d", n, MaxSpotSensitivitySeeds)
	}
	if st := sp.Output.StartTime; st != "" {
		if _, err := time.Parse(time.RFC3339, st); err != nil {
			return s.errAt("spec.output.startTime", "%q is not an RFC 3339 time (2026-01-01T00:00:00Z)", st)
		}
	}
	return nil
}

// validateVariants checks spec.variants: unique valid names, bounded
// descriptions, and a patch that applies to a valid scenario.
func (s validator) validateVariants() error {
	sp := &s.Spec
	vnames := map[string]bool{}
	for i, v := range sp.Variants {
		if !nameRE.MatchString(v.Name) {
			return s.errAt(fmt.Sprintf("spec.variants[%d].name", i), "%q is not a valid variant name (lower-case letters, digits, '-' and '.')", v.Name)
		}
		if vnames[v.Name] {
			return s.errAt(fmt.Sprintf("spec.variants[%d].name", i), "variant %q is defined twice", v.Name)
		}
		vnames[v.Name] = true
		if n := len(v.Description); n > MaxDescriptionBytes {
			return s.errAt(fmt.Sprintf("spec.variants[%d].description", i), "is %d bytes; a description, carried into every report, is at most %d (%d KiB)", n, MaxDescriptionBytes, MaxDescriptionBytes>>10)
		}
		if v.Patch.raw == nil || string(v.Patch.raw) == "null" {
			return s.errAt(fmt.Sprintf("spec.variants[%d].patch", i), "a variant needs a patch")
		}
		if _, err := s.Variant(v.Name); err != nil {
			return err
		}
	}
	return nil
}

func (s validator) validatePool(i int, seen map[string]bool) error {
	p := &s.Spec.Cluster.Pools[i]
	at := func(f string) string { return fmt.Sprintf("spec.cluster.pools[%d].%s", i, f) }
	if !nameRE.MatchString(p.Name) {
		return s.errAt(at("name"), "%q is not a valid pool name (lower-case letters, digits, '-' and '.')", p.Name)
	}
	if seen[p.Name] {
		return s.errAt(at("name"), "pool %q is defined twice", p.Name)
	}
	seen[p.Name] = true
	if p.Count < 0 {
		return s.errAt(at("count"), "must not be negative")
	}
	if p.Count > MaxNodes {
		return s.errAt(at("count"), "%d nodes is more than %d, the most one cluster has", p.Count, MaxNodes)
	}
	if p.GPUsPerNode < 0 || p.GPUsPerNode > MaxPodGPUs {
		return s.errAt(at("gpusPerNode"), "must be between 0 and %d", MaxPodGPUs)
	}
	// An instance type the catalog knows fills in what the pool leaves out
	// (checked when the cluster is built).
	byType := p.InstanceType != ""
	if p.GPUsPerNode > 0 && p.GPUModel == "" && !byType {
		return s.errAt(at("gpuModel"), "a pool with GPUs needs a gpuModel")
	}
	if p.GPUModel != "" && p.GPUMemory == nil && !models.KnownGPUModel(p.GPUModel) {
		return s.errAt(at("gpuModel"), "%s is not a GPU model gpuplan knows (known: %s); for another model give gpuMemory too", Quote(p.GPUModel), strings.Join(models.GPUModels(), ", "))
	}
	// An instance type fills in what is left out; a zero given is a zero.
	_, cpuGiven := s.pos[at("cpu")]
	_, memGiven := s.pos[at("memory")]
	if cpu, err := MilliCPU(p.CPU); err != nil {
		return s.errAt(at("cpu"), "%v", err)
	} else if cpu == 0 && (!byType || cpuGiven) {
		return s.errAt(at("cpu"), "must be positive")
	}
	if mem, err := MemoryMiB(p.Memory); err != nil {
		return s.errAt(at("memory"), "%v", err)
	} else if mem == 0 && (!byType || memGiven) {
		return s.errAt(at("memory"), "must be positive")
	}
	if p.GPUMemory != nil {
		if _, err := strict.QuantityIn(*p.GPUMemory, false, 1<<20, MaxPodMemoryMiB, "gpuMemory"); err != nil {
			return s.errAt(at("gpuMemory"), "%v", err)
		}
	}
	if err := s.validateCapacity(fmt.Sprintf("spec.cluster.pools[%d]", i), &p.CapacitySpec); err != nil {
		return err
	}
	if err := s.validatePoolTopology(i); err != nil {
		return err
	}
	if a := p.Autoscaling; a != nil {
		switch {
		case a.MinNodes < 0:
			return s.errAt(at("autoscaling.minNodes"), "must not be negative")
		case a.MaxNodes < 1 || a.MaxNodes < a.MinNodes || a.MaxNodes < p.Count:
			return s.errAt(at("autoscaling.maxNodes"), "must be at least 1, minNodes and count")
		case a.MaxNodes > MaxNodes:
			return s.errAt(at("autoscaling.maxNodes"), "%d nodes is more than %d, the most one cluster has", a.MaxNodes, MaxNodes)
		case p.Count < a.MinNodes:
			return s.errAt(at("count"), "the initial count %d is below minNodes %d", p.Count, a.MinNodes)
		case p.Replace != nil:
			return s.errAt(at("replace"), "an autoscaled pool replaces lost nodes by scaling up; replace is for fixed pools")
		}
		switch a.Expander {
		case "", capacity.ExpanderRandom, capacity.ExpanderLeastWaste, capacity.ExpanderPrice:
		default:
			return s.errAt(at("autoscaling.expander"), "is %q; want random, least-waste or price", a.Expander)
		}
		for f, d := range map[string]*Duration{"scaleDownUnneededTime": a.ScaleDownUnneededTime, "scaleDownDelayAfterAdd": a.ScaleDownDelayAfterAdd, "scanInterval": a.ScanInterval} {
			if d != nil && d.Duration < 0 {
				return s.errAt(at("autoscaling."+f), "must not be negative")
			}
		}
	}
	if sh := p.Sharing; sh != nil {
		at := at("sharing")
		if (sh.TimeSlicing == nil) == (sh.MIG == nil) {
			return s.errAt(at, "give one of timeSlicing or mig")
		}
		if ts := sh.TimeSlicing; ts != nil && ts.Replicas < 2 {
			return s.errAt(at+".timeSlicing.replicas", "must be at least 2")
		}
		if m := sh.MIG; m != nil {
			if m.Strategy != cluster.MIGSingle && m.Strategy != cluster.MIGMixed {
				return s.errAt(at+".mig.strategy", "is %q; want single or mixed", m.Strategy)
			}
			if (m.Layout == "") == (len(m.Profiles) == 0) {
				return s.errAt(at+".mig", "give one of layout or profiles")
			}
			if p.GPUModel != "" && models.MIGProfiles(p.GPUModel) == nil {
				return s.errAt(at+".mig", "gpuModel %q has no MIG support (MIG models: %s)", p.GPUModel, strings.Join(models.MIGModels(), ", "))
			}
		}
	}
	for j, t := range p.Taints {
		if t.Key == "" {
			return s.errAt(fmt.Sprintf("%s[%d].key", at("taints"), j), "is required")
		}
		switch cluster.TaintEffect(t.Effect) {
		case cluster.NoSchedule, cluster.PreferNoSchedule, cluster.NoExecute:
		default:
			return s.errAt(fmt.Sprintf("%s[%d].effect", at("taints"), j), "is %q; want NoSchedule, PreferNoSchedule or NoExecute", t.Effect)
		}
	}
	return nil
}

func (s validator) validateWorkload() error {
	w := &s.Spec.Workload
	given := 0
	for _, g := range []bool{w.Trace != nil, w.Synthetic != nil, len(w.Manifests) > 0} {
		if g {
			given++
		}
	}
	if err := s.validateServices(); err != nil {
		return err
	}
	if given == 0 && len(w.Services) > 0 {
		if s.Spec.Horizon == nil {
			return s.errAt("spec.workload.services", "a scenario with services needs spec.horizon: services never drain")
		}
		return nil
	}
	if given != 1 {
		return s.errAt("spec.workload", "give exactly one of trace, synthetic or manifests (and services beside it, or services alone)")
	}
	if len(w.Manifests) > 0 {
		return s.validateManifests()
	}
	if t := w.Trace; t != nil {
		return s.validateTrace(t, "spec.workload.trace")
	}
	sy := w.Synthetic
	if len(sy.Classes) == 0 {
		return s.errAt("spec.workload.synthetic.classes", "give at least one job class")
	}
	if sy.Jobs < 0 {
		return s.errAt("spec.workload.synthetic.jobs", "must not be negative")
	}
	if sy.Jobs > MaxJobs {
		return s.errAt("spec.workload.synthetic.jobs", "%d jobs is more than %d, the most one run holds", sy.Jobs, MaxJobs)
	}
	if sy.Jobs == 0 && s.Spec.Horizon == nil {
		return s.errAt("spec.workload.synthetic", "a synthetic workload needs spec.horizon or a jobs limit, or it never ends")
	}
	names := map[string]bool{}
	for i := range sy.Classes {
		if _, err := (builder{s.Scenario}).classGen(i, 0); err != nil {
			return err
		}
		n := sy.Classes[i].Name
		if names[n] {
			return s.errAt(fmt.Sprintf("spec.workload.synthetic.classes[%d].name", i), "class %q is defined twice", n)
		}
		names[n] = true
	}
	if s.Spec.Horizon != nil {
		return builder{s.Scenario}.checkArrivals(s.Spec.Horizon.Millis(), "")
	}
	return nil
}

func (s validator) validateTrace(t *TraceSpec, at string) error {
	if t.Path == "" {
		return s.errAt(at+".path", "is required")
	}
	if !traces.KnownFormat(t.Format) {
		return s.errAt(at+".format", "is %q; known trace formats: %s", t.Format, strings.Join(traces.TraceFormats(), ", "))
	}
	switch t.PendingPods {
	case "", traces.PendingReplay, traces.PendingExclude:
	default:
		return s.errAt(at+".pendingPods", "is %q; want %s or %s", t.PendingPods, traces.PendingReplay, traces.PendingExclude)
	}
	if t.GPUsPerNode < 0 || t.GPUsPerNode > cluster.MaxGPUsPerNode {
		return s.errAt(at+".gpusPerNode", "must be between 1 and %d", cluster.MaxGPUsPerNode)
	}
	if t.JobTable != "" && t.Format != traces.FormatPAI {
		return s.errAt(at+".jobTable", "is for the pai format")
	}
	return nil
}
