package scenarios

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// ManifestsSpec is a file of Kubernetes workload manifests and when it is
// submitted: every object in it each time the file arrives, by an arrival
// process, a cron schedule or a count (count alone: that many copies at
// start; with arrival or schedule: at most that many arrivals). CronJobs
// in the file run on their own schedules.
type ManifestsSpec struct {
	Path    string       `json:"path"`
	Arrival *ArrivalSpec `json:"arrival,omitempty"`
	// Schedule is a cron expression (five fields, or @daily...) read in
	// TimeZone (an IANA name, default UTC) from spec.output.startTime.
	Schedule string    `json:"schedule,omitempty"`
	TimeZone string    `json:"timeZone,omitempty"`
	Count    int       `json:"count,omitempty"`
	Start    *Duration `json:"start,omitempty"`
	// Duration is how long an object runs when its manifest does not say
	// (the gpuplan.dev/duration annotation, or a sleep command).
	Duration DurationDist `json:"duration,omitempty"`
	// Queue takes the objects without a kueue.x-k8s.io/queue-name label
	// (default: the file's name without its extension).
	Queue string `json:"queue,omitempty"`
}

// streamManifests is the first random stream of manifest files: file i
// draws from stream streamManifests+i of the run's seed.
const streamManifests = 300

// manifestEntry reads file entry i: its objects and when they arrive.
func (s builder) manifestEntry(i int, seed uint64, pools []cluster.PoolSpec, classes *dra.Set) (workloads.Entry, []string, error) {
	m := &s.Spec.Workload.Manifests[i]
	at := fmt.Sprintf("spec.workload.manifests[%d]", i)
	if m.Path == "" {
		return workloads.Entry{}, nil, s.errAt(at+".path", "is required")
	}
	objs, skipped, err := workloads.LoadWith(s.path(m.Path), pools, classes)
	if err != nil {
		return workloads.Entry{}, nil, err
	}
	if err := s.fillWorkspacePods(objs); err != nil {
		return workloads.Entry{}, nil, err
	}
	name := strings.TrimSuffix(filepath.Base(m.Path), filepath.Ext(m.Path))
	e := workloads.Entry{Name: name, Objects: objs, Limit: m.Count, Queue: m.Queue}
	if e.Queue == "" {
		e.Queue = name
	}
	rng := models.NewStream(seed, streamManifests+uint64(i))
	var start int64
	if m.Start != nil {
		if m.Start.Duration < 0 {
			return e, nil, s.errAt(at+".start", "must not be negative")
		}
		start = m.Start.Millis()
	}
	given := 0
	if m.Arrival != nil {
		given++
	}
	if m.Schedule != "" {
		given++
	}
	if m.TimeZone != "" && m.Schedule == "" {
		return e, nil, s.errAt(at+".timeZone", "applies to a schedule")
	}
	if given > 1 {
		return e, nil, s.errAt(at, "give one of arrival or schedule (with count as a cap), or count alone")
	}
	if m.Count < 0 || m.Count > MaxJobs {
		return e, nil, s.errAt(at+".count", "must be between 0 and %d", MaxJobs)
	}
	switch {
	case m.Arrival != nil:
		a := m.Arrival
		if a.Process != "poisson" && a.Process != "fixed" {
			return e, nil, s.errAt(at+".arrival.process", "is %q; want poisson or fixed", a.Process)
		}
		if !(a.RatePerHour > 0) || a.RatePerHour > 1e9 {
			return e, nil, s.errAt(at+".arrival.ratePerHour", "must be a positive number")
		}
		r := &workloads.Rate{Fixed: a.Process == "fixed", RatePerHour: a.RatePerHour, Start: start, Rng: rng}
		if a.Start != nil {
			if a.Start.Duration < 0 {
				return e, nil, s.errAt(at+".arrival.start", "%s is negative; the first arrival is at or after the start of the run", a.Start.Duration)
			}
			r.Start = a.Start.Millis()
		}
		if d := a.Diurnal; d != nil {
			if a.Process != "poisson" || d.Amplitude < 0 || d.Amplitude > 1 || d.PeakHour < 0 || d.PeakHour >= 24 {
				return e, nil, s.errAt(at+".arrival.diurnal", "applies to a poisson process, with amplitude in [0, 1] and peakHour in [0, 24)")
			}
			r.Amplitude, r.PeakHour = d.Amplitude, d.PeakHour
		}
		e.Arrivals = r
	case m.Schedule != "":
		c, err := workloads.ParseSchedule(m.Schedule, m.TimeZone)
		if err != nil {
			field := at + ".schedule"
			if strings.Contains(err.Error(), "time zone of") {
				field = at + ".timeZone"
			}
			return e, nil, s.errAt(field, "%v", err)
		}
		e.Arrivals = &workloads.Schedule{Cron: c, Origin: s.Spec.Output.Start().Add(time.Duration(start) * time.Millisecond)}
		if start > 0 {
			e.Arrivals = &shifted{workloads.Arrivals(e.Arrivals), start}
		}
	case m.Count > 0:
		e.Arrivals = &workloads.Once{At: start, Count: m.Count}
	}
	plain := false
	for _, o := range objs {
		if o.Cron == nil {
			plain = true
		}
	}
	if plain && e.Arrivals == nil {
		return e, nil, s.errAt(at, "%s has objects other than CronJobs: say when they are submitted (arrival, schedule or count)", m.Path)
	}
	if !plain && (m.Arrival != nil || m.Schedule != "") {
		return e, nil, s.errAt(at, "%s holds only CronJobs, which run on their own schedules: give no arrival or schedule (a count caps each CronJob's runs)", m.Path)
	}
	if m.Duration != (DurationDist{}) {
		smp, field, err := m.Duration.sampler()
		if err != nil {
			return e, nil, s.errAt(s.subfield(at+".duration", field), "%v", err)
		}
		e.Duration = smp
	}
	rec, err := s.recovery("spec.workload.recovery", s.Spec.Workload.Recovery)
	if err != nil {
		return e, nil, err
	}
	e.Recovery = rec
	notes := skipped
	for _, o := range objs {
		notes = append(notes, o.Notes...)
		if o.Duration > 0 && m.Duration != (DurationDist{}) {
			notes = append(notes, fmt.Sprintf("%s:%d: %s %s runs for %s (%s), not the file's duration", o.File, o.Line, o.Kind, o.Name, s.millis(o.Duration), o.DurationFrom))
		} else if o.Duration > 0 {
			notes = append(notes, fmt.Sprintf("%s:%d: %s %s runs for %s (%s)", o.File, o.Line, o.Kind, o.Name, s.millis(o.Duration), o.DurationFrom))
		}
	}
	return e, notes, nil
}

// shifted delays arrivals by a fixed time.
type shifted struct {
	workloads.Arrivals
	by int64
}

func (s *shifted) Next() (int64, bool) {
	t, ok := s.Arrivals.Next()
	return t + s.by, ok
}

func (s builder) millis(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}

// validateManifests reads every manifest file (so scenario check finds
// what simulate would refuse) and checks when they arrive.
func (s validator) validateManifests() error {
	if s.Spec.Horizon == nil {
		for i, m := range s.Spec.Workload.Manifests {
			if m.Count == 0 {
				return s.errAt(fmt.Sprintf("spec.workload.manifests[%d]", i), "submitting manifests by a rate or a schedule needs spec.horizon or a count, or it never ends")
			}
		}
	}
	var pools []cluster.PoolSpec
	if cm, err := s.Cluster(); err == nil {
		pools = cm.Pools
	}
	_, _, err := builder{s.Scenario}.manifestSource(0, 0, pools)
	return err
}

// manifestSource builds the workload of spec.workload.manifests, with the
// priorities of the objects' priority classes from the policy.
// pools are the cluster's node pools, for the objects' DRA claims.
func (s builder) manifestSource(seed uint64, horizon int64, pools []cluster.PoolSpec, policyFiles ...string) (*workloads.Source, []string, error) {
	var entries []workloads.Entry
	var notes []string
	var prio map[string]int32
	var never map[string]bool
	var shared map[string]bool
	if policyFiles == nil {
		policyFiles = s.policyFiles // as loaded (LoadOptions.PolicyManifests)
	}
	// The policy's DeviceClasses are the cluster's: the pods' claims may
	// name them.
	pol, err := s.kueuePolicy(policyFiles)
	if err != nil {
		return nil, nil, err
	}
	for i := range s.Spec.Workload.Manifests {
		e, n, err := s.manifestEntry(i, seed, pools, pol.Devices)
		if err != nil {
			return nil, nil, err
		}
		if shared == nil && namespacedQueues(e.Objects) {
			shared = s.sharedLocalQueues(policyFiles)
		}
		e.SharedQueues = shared
		notes = append(notes, n...)
		if draGPUs(e.Objects) {
			qn, err := kueueDRAQuota(e.Objects, pol)
			if err != nil {
				return nil, nil, err
			}
			notes = append(notes, qn...)
		}
		if o := exclusiveJobSet(e.Objects); o != nil {
			if len(pol.Spec.ClusterQueues) > 0 {
				return nil, nil, &InputError{File: o.File, Line: o.Line, Field: o.Kind + " " + o.Name, Msg: "JobSet exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology) under Kueue is not modelled: Kueue admits the JobSet as one workload, and gpuplan keeps child Jobs apart only as jobs of their own; drop the annotation or the ClusterQueues"}
			}
		}
		for k, o := range e.Objects {
			if o.PriorityClass == "" {
				continue
			}
			if prio == nil {
				if prio, never, err = s.priorityClasses(policyFiles); err != nil {
					return nil, nil, err
				}
			}
			v, ok := prio[o.PriorityClass]
			if !ok {
				return nil, nil, &InputError{File: o.File, Line: o.Line, Field: o.Kind + " " + o.Name, Msg: fmt.Sprintf("priority class %s is not a PriorityClass or WorkloadPriorityClass of spec.policy's manifests", Quote(o.PriorityClass))}
			}
			if e.Priority == nil {
				e.Priority = make([]int32, len(e.Objects))
				e.Flags = make([]cluster.JobFlag, len(e.Objects))
			}
			e.Priority[k] = v
			if never[o.PriorityClass] {
				e.Flags[k] = cluster.FlagPreemptNever
			}
		}
		entries = append(entries, e)
	}
	src, err := workloads.NewSource(entries, workloads.SourceOptions{
		Rng:     models.NewStream(seed, streamManifests-1),
		Origin:  s.Spec.Output.Start(),
		Horizon: horizon,
	})
	if err != nil {
		return nil, nil, &InputError{File: s.file, Field: "spec.workload.manifests", Msg: err.Error()}
	}
	// The source's own notes reach the run through its Notes method.
	return src, notes, nil
}

// namespacedQueues says whether an object gives both a namespace and a
// queue.
func namespacedQueues(objs []workloads.Object) bool {
	for _, o := range objs {
		if o.Namespace != "" && o.Queue != "" {
			return true
		}
	}
	return false
}

// sharedLocalQueues are the LocalQueue names the policy (files, else
// spec.policy's manifests) defines in several namespaces. A policy that
// does not load gives none here: the policy step reports its error.
func (s *Scenario) sharedLocalQueues(files []string) map[string]bool {
	if files == nil && s.Spec.Policy != nil {
		for _, m := range s.Spec.Policy.Manifests {
			files = append(files, s.path(m))
		}
	}
	if len(files) == 0 {
		return map[string]bool{}
	}
	pol, err := LoadPolicy(files)
	if err != nil {
		return map[string]bool{}
	}
	return pol.SharedLocalQueueNames()
}

// priorityClasses reads the values of the policy's priority classes.
func (s builder) priorityClasses(files []string) (map[string]int32, map[string]bool, error) {
	if files == nil && s.Spec.Policy != nil {
		for _, m := range s.Spec.Policy.Manifests {
			files = append(files, s.path(m))
		}
	}
	if len(files) == 0 {
		return map[string]int32{}, map[string]bool{}, nil
	}
	pol, err := LoadPolicy(files)
	if err != nil {
		return nil, nil, err
	}
	return pol.PriorityClasses, pol.PreemptNever, nil
}

// kueuePolicy is the scenario's policy (files, else those it was loaded
// with, LoadOptions.PolicyManifests, else spec.policy's manifests; an
// empty Policy when there is none).
func (s builder) kueuePolicy(files []string) (*Policy, error) {
	if files == nil {
		files = s.policyFiles
	}
	if files == nil && s.Spec.Policy != nil {
		for _, m := range s.Spec.Policy.Manifests {
			files = append(files, s.path(m))
		}
	}
	if len(files) == 0 {
		return &Policy{}, nil
	}
	return LoadPolicy(files)
}

// draGPUs reports whether an object's pods get GPUs by DRA.
func draGPUs(objs []workloads.Object) bool {
	for _, o := range objs {
		for _, g := range o.Groups {
			if g.DRA != nil {
				return true
			}
		}
	}
	return false
}

// exclusiveJobSet is the first object with JobSet child Jobs under
// exclusive placement (nil: none).
func exclusiveJobSet(objs []workloads.Object) *workloads.Object {
	for i := range objs {
		for _, g := range objs[i].Groups {
			if g.Alone {
				return &objs[i]
			}
		}
	}
	return nil
}

// kueueDRAQuota sets the resource Kueue admission charges each group's DRA
// GPUs as, as Kueue v0.19.2's DRA integration does (pkg/dra, behind its
// KueueDRAIntegration gate, beta and on by default since v0.18, taken at
// its default): a ResourceClaimTemplate's devices, counted per DeviceClass,
// as their class's resources.deviceClassMappings name; a DRA-backed
// extended resource as its DeviceClass's mapping, else as itself. What
// Kueue marks inadmissible, and so never admits, is an input error here:
// a pod naming a ResourceClaim, a template's firstAvailable, adminAccess
// or allocationMode All (or a CEL-selected request the cluster never has
// the devices for), a class no mapping names (every class, when the
// Configuration gives none). Without ClusterQueues nothing is charged and
// nothing is set.
func kueueDRAQuota(objs []workloads.Object, pol *Policy) ([]string, error) {
	if len(pol.Spec.ClusterQueues) == 0 {
		return nil, nil
	}
	kueue := "Kueue " + dra.KueueVersion
	var notes []string
	for i := range objs {
		o := &objs[i]
		for k := range o.Groups {
			g := &o.Groups[k]
			u := g.DRA
			if u == nil {
				continue
			}
			where := fmt.Sprintf("%s:%d: %s %s", u.File, u.Line, o.Kind, o.Name)
			refuse := func(format string, args ...any) error {
				return &InputError{File: u.File, Line: u.Line, Field: o.Kind + " " + o.Name, Msg: kueue + " would never admit it: " + fmt.Sprintf(format, args...)}
			}
			if u.Named != "" {
				return nil, refuse("%s: its pods name %s, and Kueue's DRA integration (KueueDRAIntegration, on by default since v0.18) marks a workload naming a ResourceClaim inadmissible (\"KueueDRAIntegration feature does not support use of resource claims\"): claim the devices by resourceClaimTemplateName", u.NamedField, u.Named)
			}
			if u.Unsupported != "" {
				return nil, refuse("%s: its DRA integration refuses %s in a ResourceClaimTemplate", u.Field, u.Unsupported)
			}
			charge := map[string]int64{}
			var how []string
			for _, c := range u.Counts {
				n, ok := pol.DeviceClassMappings[c.Class]
				if !ok {
					why := "is not mapped in the Kueue Configuration's resources.deviceClassMappings"
					if pol.DeviceClassMappings == nil {
						why = "is not mapped: the Kueue Configuration gives no resources.deviceClassMappings, and with KueueDRAIntegration on (its default since v0.18) Kueue counts every ResourceClaimTemplate's devices through them"
					}
					return nil, refuse("DeviceClass %s of its pods' ResourceClaimTemplates %s (Kueue: \"DeviceClass %s is not mapped in DRA configuration\")", Quote(c.Class), why, c.Class)
				}
				charge[n] += c.Count
				how = append(how, fmt.Sprintf("%d of DeviceClass %s as %s", c.Count, Quote(c.Class), Quote(n)))
			}
			for _, e := range u.Ext {
				n, by := e.Name, "itself"
				if m, ok := pol.DeviceClassMappings[e.Class]; ok {
					n, by = m, "its DeviceClass "+Quote(e.Class)+"'s mapping"
				}
				charge[n] += e.Count
				how = append(how, fmt.Sprintf("%s %d as %s (%s)", Quote(e.Name), e.Count, Quote(n), by))
			}
			if len(charge) > 1 {
				names := make([]string, 0, len(charge))
				for n := range charge {
					names = append(names, Quote(n))
				}
				sort.Strings(names)
				return nil, refuse("its pods' DRA devices are charged as several quota resources (%s: %s); gpuplan charges a pod's GPUs as one", strings.Join(names, ", "), strings.Join(how, "; "))
			}
			gpus := int64(g.Pod.GPUs)
			if g.Pod.Shared() {
				gpus = 1
			}
			for n, c := range charge {
				if c != gpus {
					return nil, refuse("%s counts %d device(s) a pod as %s (%s) and gpuplan charges a pod's %d GPU(s); gpuplan charges the GPUs it places", kueue, c, Quote(n), strings.Join(how, "; "), gpus)
				}
				g.GPUQuota = n
			}
			if g.GPUQuota == "" {
				g.GPUQuota = cluster.NoGPUQuota
				continue
			}
			var from []string
			if len(u.Counts) > 0 {
				from = append(from, "DeviceClass "+strings.Join(u.Classes(), ", "))
			}
			for _, e := range u.Ext {
				from = append(from, "extended resource "+e.Name)
			}
			notes = append(notes, fmt.Sprintf("%s: its pods' DRA devices (%s) are charged to Kueue quota as %s, as %s counts them: %s a pod (resources.deviceClassMappings; its KueueDRAIntegration and KueueDRAIntegrationExtendedResource gates at their defaults, on)", where, strings.Join(from, "; "), Quote(g.GPUQuota), kueue, strings.Join(how, "; ")))
		}
	}
	return notes, nil
}

// buildManifests makes spec.workload.manifests the run's workload.
func (s builder) buildManifests(b *Built, opts Options) error {
	src, notes, err := s.manifestSource(b.Config.Seed, b.Config.Horizon, b.Config.Pools, opts.PolicyManifests...)
	if err != nil {
		return err
	}
	b.Config.Workload = src
	var files []string
	for _, m := range s.Spec.Workload.Manifests {
		files = append(files, m.Path)
	}
	b.Workload = "manifests " + strings.Join(files, ", ")
	b.Assumptions = append(b.Assumptions, "workload manifests: each file's objects are submitted together at each of its arrivals; a Job's completions run in rounds of parallelism pods; CronJobs run on their schedules in their time zones from spec.output.startTime (a concurrencyPolicy Forbid run counts as running from its submission for its duration; Replace deletes a run still pending or running when the next is due)")
	b.Assumptions = append(b.Assumptions, notes...)
	if err := s.policy(b, opts); err != nil {
		return err
	}
	return s.checkTAS(b, src, b.tasLevels, b.hyperNodes)
}
