package workloads

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/scenarios/kube/podspread"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Labels and annotations read from workload manifests.
const (
	// LabelQueue is Kueue's queue label: the job's LocalQueue.
	LabelQueue = "kueue.x-k8s.io/queue-name"
	// LabelPriorityClass is Kueue's WorkloadPriorityClass label.
	LabelPriorityClass = "kueue.x-k8s.io/priority-class"
	// AnnotationDuration is how long the workload runs once all its pods
	// are bound (a Go duration, or days as "2d"), on the object or its pod
	// template.
	AnnotationDuration = "gpuplan.dev/duration"
	// AnnotationDoNotDisrupt keeps Karpenter's consolidation off the pod's
	// node.
	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// resourceMIGPrefix is the mixed strategy's MIG resource prefix.
	resourceMIGPrefix = "nvidia.com/mig-"
	resourceGPU       = "nvidia.com/gpu"
)

// Object is one workload manifest as gpuplan runs it.
type Object struct {
	File string
	Line int
	Kind string
	Name string
	// Namespace is metadata.namespace ("" when the manifest gives none).
	Namespace string
	// Queue is the kueue.x-k8s.io/queue-name label (or a Volcano Job's
	// spec.queue, a Kubeflow job's schedulingPolicy.queue).
	Queue string
	// PriorityClass is the Kueue WorkloadPriorityClass label, else the pod
	// template's priorityClassName (a Volcano Job's spec.priorityClassName,
	// a Kubeflow job's schedulingPolicy.priorityClass).
	PriorityClass string
	// Groups are the object's pods, by role.
	Groups []Group
	// MinAvailable is the object's gang size across its groups (a Volcano
	// Job's spec.minAvailable, a Kubeflow schedulingPolicy.minAvailable; 0:
	// every pod).
	MinAvailable int32
	// Duration is how long the object runs (ms) when the manifest says it
	// (0: it does not), and DurationFrom where that came from.
	Duration     int64
	DurationFrom string
	// Restart is how the object survives failures.
	Restart Restart
	// Cron is a CronJob's schedule (nil for other kinds).
	Cron *Cron
	// Notes name what the manifest says that gpuplan reads but does not
	// model, each with its line.
	Notes []string
	// Workspace is a KAITO Workspace's nodes (nil for other kinds).
	Workspace *Workspace
	// copies is how many objects the document is (a LeaderWorkerSet's
	// replicas: each group its own gang); 0 or 1: one.
	copies int32
	// podGroup is a bare Pod's Kueue pod group (its
	// kueue.x-k8s.io/pod-group-name label) and groupTotal the group's
	// kueue.x-k8s.io/pod-group-total-count (0: not given), at groupLine.
	podGroup              string
	groupTotal, groupLine int
	// tasAt is where each Kueue topology request of the object's pod
	// templates is written (its level annotation), for errors at it.
	tasAt map[*cluster.TASRequest]strict.InputError
	// named are the ResourceClaims its pods name (shareClaims divides
	// them).
	named []namedClaim
	// channel is the first ComputeDomain channel its pods claim (nil:
	// none), for domainFits.
	channel *dra.Channel
}

// Group is one role's pods: identical pods, Pods of them at a time.
type Group struct {
	Name string
	Pods int32
	// MinAvailable is the group's own gang size (a Volcano task's
	// minAvailable, a Ray worker group's minReplicas; 0: all its pods).
	MinAvailable int32
	// Waves is how many times the group's pods run one after the other: a
	// Job's completions in rounds of parallelism (at least 1).
	Waves       int32
	Pod         cluster.PodSpec
	Constraints *cluster.Constraints
	// DRA, when the pods' GPUs come by DRA, is what Kueue counts of them
	// (nil: the device plugin's resources, or no GPU; also set for pods
	// of no GPU whose claims Kueue refuses, a named ResourceClaim or an
	// adminAccess request); GPUQuota the
	// resource Kueue admission charges them as (cluster.JobSpec.GPUQuota;
	// the scenario's policy decides it).
	DRA      *DRAUse
	GPUQuota string
	// Alone: the group is a job of its own, never merged with another
	// group of the same pods (a JobSet child Job under exclusive
	// placement: its pods' labels tell it from its siblings; each
	// submission re-keys them, the source's relabel).
	Alone bool
}

// DRAUse is what Kueue counts of a group's DRA devices (per pod; see
// dra.KueueView), and where the pod template names what Kueue refuses
// first (else the object's line).
type DRAUse struct {
	dra.KueueView
	File string
	Line int
}

// Restart is what an object says about failures; unset fields keep the
// scenario's (or Kubernetes') defaults.
type Restart struct {
	BackoffLimit      *int32
	IgnoreDisruptions bool
	// ActiveDeadline (ms, 0: none) fails the object that long after it is
	// submitted.
	ActiveDeadline int64
	// TerminationGrace (ms, 0: not said) is the pods' grace period.
	TerminationGrace int64
	DoNotDisrupt     bool
	// Volcano is a Volcano Job's lifecycle policies.
	Volcano *cluster.VolcanoPolicies
}

// Recovery is base (the scenario's recovery, nil for none) with what the
// object says applied over it.
func (o *Object) Recovery(base *cluster.Recovery) *cluster.Recovery {
	r := o.Restart
	if r == (Restart{}) {
		return base
	}
	out := &cluster.Recovery{BackoffLimit: cluster.DefaultBackoffLimit}
	if base != nil {
		*out = *base
	}
	if r.BackoffLimit != nil {
		out.BackoffLimit = *r.BackoffLimit
	}
	out.IgnoreDisruptions = out.IgnoreDisruptions || r.IgnoreDisruptions
	out.DoNotDisrupt = out.DoNotDisrupt || r.DoNotDisrupt
	if r.ActiveDeadline > 0 {
		out.ActiveDeadline = r.ActiveDeadline
	}
	if r.TerminationGrace > 0 {
		out.TerminationGrace = r.TerminationGrace
	}
	if r.Volcano != nil {
		out.Volcano = r.Volcano
	}
	return out
}

// Pods is the object's pod count (every group, one wave).
func (o *Object) Pods() int64 {
	var n int64
	for _, g := range o.Groups {
		n += int64(g.Pods)
	}
	return n
}

func convert(d *doc, o *Object, v any) error {
	switch x := v.(type) {
	case *corev1.Pod:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return podObject(d, o, x)
	case *batchv1.Job:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return jobObject(d, o, x.ObjectMeta, &x.Spec, "spec")
	case *batchv1.CronJob:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return cronJobObject(d, o, x)
	case *kubeflowJob:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return kubeflowObject(d, o, x)
	case *volcanoJob:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return volcanoObject(d, o, x)
	case *jobSet:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return jobSetObject(d, o, x)
	case *rayJob:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return rayJobObject(d, o, x)
	case *leaderWorkerSet:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return lwsObject(d, o, x)
	case *rayService:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return rayServiceObject(d, o, x)
	case *kaitoWorkspace:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return kaitoObject(d, o, x)
	case *trainJob:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return trainJobObject(d, o, x)
	case *appWrapper:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return appWrapperObject(d, o, x)
	case *volcanoCronJob:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		return volcanoCronJobObject(d, o, x)
	case *rayCluster:
		o.Name = objName(x.ObjectMeta)
		d.objField = o.Name
		o.readMeta(x.ObjectMeta)
		if err := rayClusterGroups(d, o, &x.Spec, "spec"); err != nil {
			return err
		}
		return o.readDuration(d, x.ObjectMeta)
	}
	return fmt.Errorf("internal: no conversion for %T", v)
}

// Kueue's plain-pod integration: pods of one group (this label, in one
// namespace) are one Workload, admitted together once the annotation's
// count of them exists.
const (
	LabelPodGroup           = "kueue.x-k8s.io/pod-group-name"
	AnnotationPodGroupTotal = "kueue.x-k8s.io/pod-group-total-count"
)

// podObject reads a bare Pod: one pod, run for the object's duration (a
// Pod that restarts its containers, restartPolicy Always, the default,
// is run for that duration all the same: noted).
func podObject(d *doc, o *Object, x *corev1.Pod) error {
	o.readMeta(x.ObjectMeta)
	g := Group{Name: "pod", Pods: 1, Waves: 1}
	var err error
	t := corev1.PodTemplateSpec{ObjectMeta: x.ObjectMeta, Spec: x.Spec}
	if g.Pod, g.Constraints, g.DRA, err = podOf(d, o, &t, ""); err != nil {
		return err
	}
	o.Groups = append(o.Groups, g)
	if x.Spec.RestartPolicy == "" || x.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		d.note("spec.restartPolicy", "a Pod that restarts its containers whenever they exit (Always, the default) never completes in Kubernetes; gpuplan runs it for its duration")
	}
	if x.Spec.NodeName != "" {
		d.note("spec.nodeName", "not modelled: the pod is scheduled like any other")
	}
	if name := x.Labels[LabelPodGroup]; name != "" {
		o.podGroup = name
		o.groupLine = d.line
		at := fmt.Sprintf("metadata.annotations[%q]", AnnotationPodGroupTotal)
		if p, ok := d.pos[at]; ok {
			o.groupLine = p[0]
		}
		v, ok := x.Annotations[AnnotationPodGroupTotal]
		if !ok {
			return d.errAt(fmt.Sprintf("metadata.labels[%q]", LabelPodGroup), "a pod of Kueue pod group %s needs the %s annotation (the group's pod count), as Kueue's webhook requires", strict.Quote(name), AnnotationPodGroupTotal)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || int64(n) > strict.MaxReplicas {
			return d.errAt(at, "%s is not a pod count between 1 and %d", strict.Quote(v), strict.MaxReplicas)
		}
		o.groupTotal = n
	}
	return o.readDuration(d, x.ObjectMeta)
}

// podGroups merges the Pods of one Kueue pod group (label
// kueue.x-k8s.io/pod-group-name, in one namespace) into one object whose
// groups are its pods: one gang. A group whose pods in the file are fewer
// than its total count would never be admitted, and is refused.
func podGroups(file string, objs []Object) ([]Object, error) {
	var out []Object
	index := map[string]int{}
	for _, o := range objs {
		if o.podGroup == "" {
			out = append(out, o)
			continue
		}
		key := o.Namespace + "/" + o.podGroup
		i, ok := index[key]
		if !ok {
			index[key] = len(out)
			first := o
			first.Name = o.podGroup
			out = append(out, first)
			continue
		}
		g := &out[i]
		if o.groupTotal != g.groupTotal {
			return nil, &strict.InputError{File: file, Line: o.groupLine, Field: fmt.Sprintf("metadata.annotations[%q]", AnnotationPodGroupTotal), Msg: fmt.Sprintf("pod group %s: %d here, %d at line %d; the pods of a group give one count", strict.Quote(o.podGroup), o.groupTotal, g.groupTotal, g.groupLine)}
		}
		g.Groups = append(g.Groups, o.Groups...)
		g.Notes = append(g.Notes, o.Notes...)
		if o.Duration > g.Duration && g.DurationFrom != fromAnnotation {
			g.Duration, g.DurationFrom = o.Duration, o.DurationFrom
		}
		g.Restart.DoNotDisrupt = g.Restart.DoNotDisrupt || o.Restart.DoNotDisrupt
		g.Restart.TerminationGrace = max(g.Restart.TerminationGrace, o.Restart.TerminationGrace)
	}
	for _, o := range out {
		if o.podGroup != "" && int(o.Pods()) != o.groupTotal {
			return nil, &strict.InputError{File: file, Line: o.groupLine, Field: fmt.Sprintf("metadata.annotations[%q]", AnnotationPodGroupTotal), Msg: fmt.Sprintf("pod group %s counts %d pods and the file has %d of them: Kueue admits the group only once all its pods exist", strict.Quote(o.podGroup), o.groupTotal, o.Pods())}
		}
	}
	return out, nil
}

// objName is the object's name, or its generateName with a trailing "-"
// dropped.
func objName(m metav1.ObjectMeta) string {
	if m.Name != "" {
		return m.Name
	}
	if m.GenerateName != "" {
		return strings.TrimSuffix(m.GenerateName, "-")
	}
	return "unnamed"
}

// readMeta takes the namespace and the queue and priority labels of the
// object's metadata.
func (o *Object) readMeta(m metav1.ObjectMeta) {
	if o.Namespace == "" {
		o.Namespace = m.Namespace
	}
	if q := m.Labels[LabelQueue]; q != "" {
		o.Queue = q
	}
	if p := m.Labels[LabelPriorityClass]; p != "" {
		o.PriorityClass = p
	}
}

// readDuration takes the duration annotation of the object's metadata,
// which wins over one found in its pods.
func (o *Object) readDuration(d *doc, m metav1.ObjectMeta) error {
	v, ok := m.Annotations[AnnotationDuration]
	if !ok {
		return nil
	}
	ms, err := parseDuration(v)
	if err != nil {
		return d.errAt(fmt.Sprintf("metadata.annotations[%q]", AnnotationDuration), "%v", err)
	}
	o.Duration, o.DurationFrom = ms, fromAnnotation
	return nil
}

// parseDuration reads a duration annotation: a Go duration ("90m",
// "1h30m") with days allowed ("2d", "1d12h").
func parseDuration(s string) (int64, error) {
	t := strings.TrimSpace(s)
	var days int64
	if i := strings.IndexByte(t, 'd'); i > 0 {
		n, err := strconv.ParseInt(t[:i], 10, 64)
		if err != nil || n < 0 || n > 36500 {
			return 0, fmt.Errorf("%s is not a duration (examples: 90s, 30m, 6h, 2d, 1d12h)", strict.Quote(s))
		}
		days, t = n, t[i+1:]
	}
	var rest time.Duration
	if t != "" {
		var err error
		if rest, err = time.ParseDuration(t); err != nil {
			return 0, fmt.Errorf("%s is not a duration (examples: 90s, 30m, 6h, 2d, 1d12h)", strict.Quote(s))
		}
	}
	ms := days*24*3600*1000 + rest.Milliseconds()
	switch {
	case ms < 1:
		return 0, fmt.Errorf("%s: a workload runs at least 1 ms", strict.Quote(s))
	case ms > maxDurationMs:
		return 0, fmt.Errorf("%s is more than 100 years", strict.Quote(s))
	}
	return ms, nil
}

// Where an object's duration came from.
const (
	fromAnnotation = "annotation " + AnnotationDuration
	fromSleep      = "the sleep in its command"
)

// maxDurationMs bounds a duration read from a manifest: 100 years.
const maxDurationMs = 100 * 365 * 24 * 3600 * 1000

// jobObject reads a batch/v1 Job's spec (at field path at) into o.
func jobObject(d *doc, o *Object, meta metav1.ObjectMeta, s *batchv1.JobSpec, at string) error {
	o.readMeta(meta)
	g, err := jobGroup(d, o, s, at, "job")
	if err != nil {
		return err
	}
	o.Groups = append(o.Groups, g)
	if s.BackoffLimit != nil {
		if *s.BackoffLimit < 0 {
			return d.errAt(at+".backoffLimit", "must not be negative")
		}
		o.Restart.BackoffLimit = s.BackoffLimit
	}
	if s.ActiveDeadlineSeconds != nil {
		if err := o.activeDeadline(d, at+".activeDeadlineSeconds", *s.ActiveDeadlineSeconds); err != nil {
			return err
		}
	}
	if p := s.PodFailurePolicy; p != nil {
		for i, r := range p.Rules {
			rat := fmt.Sprintf("%s.podFailurePolicy.rules[%d]", at, i)
			disruption := false
			for _, c := range r.OnPodConditions {
				if c.Type == corev1.DisruptionTarget {
					disruption = true
				}
			}
			switch {
			case disruption && r.Action == batchv1.PodFailurePolicyActionIgnore:
				o.Restart.IgnoreDisruptions = true
			case disruption && r.Action == batchv1.PodFailurePolicyActionFailJob:
				zero := int32(0)
				o.Restart.BackoffLimit = &zero
				d.note(rat, "FailJob on DisruptionTarget: the first node lost fails the job (backoff limit 0)")
			default:
				d.note(rat, "action %s on exit codes or other conditions is not modelled: gpuplan's pods fail only by losing their node (DisruptionTarget)", r.Action)
			}
		}
	}
	if v, ok := meta.Annotations["kueue.x-k8s.io/job-min-parallelism"]; ok {
		d.note("metadata.annotations[\"kueue.x-k8s.io/job-min-parallelism\"]", "Kueue's partial admission (at least %s pods) is not modelled: the job is admitted whole or waits", strict.Quote(v))
	}
	if s.BackoffLimitPerIndex != nil {
		d.note(at+".backoffLimitPerIndex", "read but not modelled: the job's backoffLimit (or 6) counts its failures")
	}
	if s.SuccessPolicy != nil {
		d.note(at+".successPolicy", "read but not modelled: the job succeeds when every index completes")
	}
	return o.readDuration(d, meta)
}

// jobGroup reads a Job spec's pods: parallelism pods at a time over
// ceil(completions/parallelism) waves.
func jobGroup(d *doc, o *Object, s *batchv1.JobSpec, at, name string) (Group, error) {
	par := int32(1)
	if s.Parallelism != nil {
		par = *s.Parallelism
		if par < 1 {
			return Group{}, d.errAt(at+".parallelism", "a job with parallelism %d runs no pods", par)
		}
	}
	comp := par
	if s.Completions != nil {
		comp = *s.Completions
		if comp < 1 {
			return Group{}, d.errAt(at+".completions", "must be at least 1")
		}
	}
	if par > comp {
		par = comp // the Job controller never runs more pods than completions left
	}
	if int64(par) > strict.MaxReplicas {
		return Group{}, d.errAt(at+".parallelism", "%d pods is more than %d, the most one job has", par, strict.MaxReplicas)
	}
	waves := (comp + par - 1) / par
	if comp%par != 0 {
		d.note(at+".completions", "%d completions in rounds of %d pods: modelled as %d rounds of %d pods (the last round holds %d pods more than it needs)", comp, par, waves, par, par*waves-comp)
	}
	if s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion {
		d.note(at+".completionMode", "Indexed: each index is one pod completion; the indexes run %d at a time", par)
	}
	g := Group{Name: name, Pods: par, Waves: waves}
	var err error
	if g.Pod, g.Constraints, g.DRA, err = podOf(d, o, &s.Template, at+".template"); err != nil {
		return Group{}, err
	}
	return g, nil
}

func (o *Object) activeDeadline(d *doc, at string, secs int64) error {
	if secs < 1 {
		return d.errAt(at, "must be at least 1")
	}
	if secs > maxDurationMs/1000 {
		return d.errAt(at, "%d seconds is more than 100 years", secs)
	}
	o.Restart.ActiveDeadline = secs * 1000
	return nil
}

// sleepRE is a container whose whole command is a sleep: `sleep 60`,
// `/bin/sh -c "sleep 60"`, `sleep 100s`.
var sleepRE = regexp.MustCompile(`^(?:(?:/usr)?(?:/bin/)?(?:ba)?sh -c )?(?:/bin/)?sleep ([0-9]+(?:\.[0-9]+)?)([smhd]?)$`)

// sleepMs is how long a container's command sleeps, when that is all it
// does (0: it is not a sleep).
func sleepMs(c *corev1.Container) int64 {
	cmd := strings.Join(append(append([]string(nil), c.Command...), c.Args...), " ")
	m := sleepRE.FindStringSubmatch(strings.TrimSpace(cmd))
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	unit := map[string]float64{"": 1000, "s": 1000, "m": 60e3, "h": 3600e3, "d": 86400e3}[m[2]]
	ms := v * unit
	if ms < 1 || ms > maxDurationMs {
		return 0
	}
	return int64(ms)
}

// podOf reads a pod template: its requests, node constraints, priority
// class, duration annotation or sleep, grace period and annotations.
func podOf(d *doc, o *Object, t *corev1.PodTemplateSpec, at string) (cluster.PodSpec, *cluster.Constraints, *DRAUse, error) {
	ps := &t.Spec
	var pod cluster.PodSpec
	// dot prefixes the template's fields (a bare Pod's are at the top).
	dot := at + "."
	if at == "" {
		dot = ""
	}
	if len(ps.Containers) == 0 {
		return pod, nil, nil, d.errAt(dot+"spec.containers", "a pod needs at least one container")
	}
	tas, err := checkGPUFields(d, t, dot)
	if err != nil {
		return pod, nil, nil, err
	}
	// The first pod template's annotation wins over later ones and over
	// sleeps; the longest sleep counts when no annotation is given.
	if v, ok := t.Annotations[AnnotationDuration]; ok {
		ms, err := parseDuration(v)
		if err != nil {
			return pod, nil, nil, d.errAt(fmt.Sprintf("%smetadata.annotations[%q]", dot, AnnotationDuration), "%v", err)
		}
		if o.DurationFrom != fromAnnotation {
			o.Duration, o.DurationFrom = ms, fromAnnotation
		}
	}
	if o.DurationFrom != fromAnnotation {
		for _, c := range ps.Containers {
			if ms := sleepMs(&c); ms > o.Duration {
				o.Duration, o.DurationFrom = ms, fromSleep
			}
		}
	}
	if t.Annotations[AnnotationDoNotDisrupt] == "true" {
		o.Restart.DoNotDisrupt = true
	}
	if ps.PriorityClassName != "" && o.PriorityClass == "" {
		o.PriorityClass = ps.PriorityClassName
	}
	if g := ps.TerminationGracePeriodSeconds; g != nil {
		if *g < 0 || *g > maxDurationMs/1000 {
			return pod, nil, nil, d.errAt(dot+"spec.terminationGracePeriodSeconds", "must be between 0 and 100 years of seconds")
		}
		o.Restart.TerminationGrace = max(o.Restart.TerminationGrace, max(*g*1000, 1))
	}
	// Requests per resource: the containers' sum, or the largest init
	// container's if larger (they run before the others); a limit stands
	// for a request not given, as the API server defaults it.
	total := corev1.ResourceList{}
	where := map[corev1.ResourceName]string{} // the first container asking, for errors
	add := func(kind string, i int, c *corev1.Container, sum bool) {
		for name, q := range requests(c) {
			if _, ok := where[name]; !ok {
				list := "limits"
				if _, ok := c.Resources.Requests[name]; ok {
					list = "requests"
				}
				where[name] = fmt.Sprintf("%sspec.%s[%d].resources.%s[%q]", dot, kind, i, list, name)
			}
			cur, ok := total[name]
			switch {
			case sum:
				cur.Add(q)
				total[name] = cur
			case !ok || q.Cmp(cur) > 0:
				total[name] = q
			}
		}
	}
	for i := range ps.Containers {
		add("containers", i, &ps.Containers[i], true)
	}
	for i := range ps.InitContainers {
		add("initContainers", i, &ps.InitContainers[i], false)
	}
	names := make([]string, 0, len(total))
	for n := range total {
		names = append(names, string(n))
	}
	sort.Strings(names)
	backed := d.dra.ExtendedResources()
	var ext []dra.ExtRequest
	for _, n := range names {
		q := total[corev1.ResourceName(n)]
		field := where[corev1.ResourceName(n)]
		switch {
		case backed[n] != "" && n != string(corev1.ResourceCPU) && n != string(corev1.ResourceMemory):
			c, err := strict.QuantityIn(q, false, 0, strict.MaxPodGPUs, n)
			if err != nil {
				return pod, nil, nil, d.errAt(field, "%v", err)
			}
			if q.MilliValue()%1000 != 0 {
				return pod, nil, nil, d.errAt(field, "%s %s: devices are whole", n, strict.Quote(q.String()))
			}
			ext = append(ext, dra.ExtRequest{Name: n, Count: c, Field: field})
		case n == string(corev1.ResourceCPU):
			if pod.MilliCPU, err = strict.MilliCPU(q); err != nil {
				return pod, nil, nil, d.errAt(field, "%v", err)
			}
		case n == string(corev1.ResourceMemory):
			if pod.MemoryMiB, err = strict.MemoryMiB(q); err != nil {
				return pod, nil, nil, d.errAt(field, "%v", err)
			}
		case strings.HasPrefix(n, resourceMIGPrefix) && !models.IsMIGProfile(strings.TrimPrefix(n, resourceMIGPrefix)):
			return pod, nil, nil, d.errAt(field, "resource %s names no MIG profile (profiles: %s)", strict.Quote(n), strings.Join(models.MIGProfileNames(), ", "))
		case n == resourceGPU || strings.HasPrefix(n, resourceMIGPrefix):
			c, err := strict.QuantityIn(q, false, 0, strict.MaxPodGPUs, n)
			if err != nil {
				return pod, nil, nil, d.errAt(field, "%v", err)
			}
			if q.MilliValue()%1000 != 0 {
				return pod, nil, nil, d.errAt(field, "%s %s: GPUs and MIG instances are whole", n, strict.Quote(q.String()))
			}
			if c == 0 {
				continue
			}
			if pod.GPUs > 0 {
				return pod, nil, nil, d.errAt(field, "a pod asks for one kind of GPU (nvidia.com/gpu or one MIG profile); it also asks for %s", gpuKind(pod))
			}
			pod.GPUs = int32(c)
			if mig, ok := strings.CutPrefix(n, resourceMIGPrefix); ok {
				pod.MIG = mig
			}
		case gpufields.IsHAMi(n):
			// refused or noted by checkGPUFields
		default:
			d.note(field, "resource %s is not modelled", strict.Quote(n))
		}
	}
	c, err := constraintsOf(d, ps, dot+"spec")
	if err != nil {
		return pod, nil, nil, err
	}
	if tas != nil {
		if c == nil {
			c = &cluster.Constraints{}
		}
		c.TAS = tas
		if o.tasAt == nil {
			o.tasAt = map[*cluster.TASRequest]strict.InputError{}
		}
		o.tasAt[tas] = *d.errAt(dot+"metadata"+tasField(t.Annotations), "").(*strict.InputError)
	}
	use, err := claims(d, o, ps, dot, ext, &pod, &c)
	if err != nil {
		return pod, nil, nil, err
	}
	if err := pod.Validate(); err != nil {
		return pod, nil, nil, d.errAt(dot+"spec", "%v", err)
	}
	pod.Labels = podspread.Labels(t.Labels)
	if cd := d.computeDomain; cd != "" {
		d.computeDomain = "" // this template's only
		l := maps.Clone(t.Labels)
		if l == nil {
			l = map[string]string{}
		}
		l[labelComputeDomain] = cd
		pod.Labels = podspread.Labels(l)
	}
	return pod, c, use, nil
}

func gpuKind(p cluster.PodSpec) string {
	if p.MIG != "" {
		return resourceMIGPrefix + p.MIG
	}
	return resourceGPU
}

func requests(c *corev1.Container) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n, q := range c.Resources.Limits {
		out[n] = q
	}
	for n, q := range c.Resources.Requests {
		out[n] = q
	}
	return out
}

// constraintsOf reads the pod's node selector, required node affinity
// and tolerations.
func constraintsOf(d *doc, ps *corev1.PodSpec, at string) (*cluster.Constraints, error) {
	c := &cluster.Constraints{}
	if len(ps.NodeSelector) > 0 {
		c.NodeSelector = ps.NodeSelector
	}
	if a := ps.Affinity; a != nil {
		na, notes, f := podspread.ReadNodeAffinity(a)
		if f != nil {
			return nil, d.errAt(at+"."+f.Field, "%s", f.Msg)
		}
		for _, n := range notes {
			d.note(at+"."+n.Field, "%s", n.Msg)
		}
		c.Affinity = na
		terms, notes, f := podspread.ReadAffinity(a)
		if f != nil {
			return nil, d.errAt(at+"."+f.Field, "%s", f.Msg)
		}
		for _, n := range notes {
			d.note(at+"."+n.Field, "%s", n.Msg)
		}
		c.PodAffinity = terms
	}
	spread, notes, f := podspread.Read(ps.TopologySpreadConstraints)
	if f != nil {
		return nil, d.errAt(at+"."+f.Field, "%s", f.Msg)
	}
	for _, n := range notes {
		d.note(at+"."+n.Field, "%s", n.Msg)
	}
	c.Spread = spread
	for i, t := range ps.Tolerations {
		tol := cluster.Toleration{Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: cluster.TaintEffect(t.Effect)}
		if tol.Operator == "" {
			tol.Operator = "Equal"
		}
		if tol.Operator != "Equal" && tol.Operator != "Exists" {
			return nil, d.errAt(fmt.Sprintf("%s.tolerations[%d].operator", at, i), "%s is not Equal or Exists", strict.Quote(tol.Operator))
		}
		c.Tolerations = append(c.Tolerations, tol)
	}
	if c.NodeSelector == nil && c.Affinity == nil && c.Tolerations == nil && c.Spread == nil && c.PodAffinity == nil {
		return nil, nil
	}
	return c, nil
}

// cronJobObject reads a CronJob: its job template and its schedule.
func cronJobObject(d *doc, o *Object, x *batchv1.CronJob) error {
	o.readMeta(x.ObjectMeta)
	if err := jobObject(d, o, x.Spec.JobTemplate.ObjectMeta, &x.Spec.JobTemplate.Spec, "spec.jobTemplate.spec"); err != nil {
		return err
	}
	if err := o.readDuration(d, x.ObjectMeta); err != nil {
		return err
	}
	c, err := parseCron(d, &x.Spec)
	if err != nil {
		return err
	}
	o.Cron = c
	return nil
}

// kubeflowObject reads a PyTorchJob, TFJob, JAXJob, MPIJob, PaddleJob or
// XGBoostJob: its replica specs (Master, Worker, PS, Chief, Evaluator,
// Launcher) in name order, one gang.
func kubeflowObject(d *doc, o *Object, x *kubeflowJob) error {
	o.readMeta(x.ObjectMeta)
	all := []struct {
		kind, field string
		specs       map[string]*kubeflowReplicaSpec
	}{
		{"PyTorchJob", "spec.pytorchReplicaSpecs", x.Spec.PyTorchReplicaSpecs},
		{"TFJob", "spec.tfReplicaSpecs", x.Spec.TFReplicaSpecs},
		{"JAXJob", "spec.jaxReplicaSpecs", x.Spec.JAXReplicaSpecs},
		{"MPIJob", "spec.mpiReplicaSpecs", x.Spec.MPIReplicaSpecs},
		{"PaddleJob", "spec.paddleReplicaSpecs", x.Spec.PaddleReplicaSpecs},
		{"XGBoostJob", "spec.xgbReplicaSpecs", x.Spec.XGBReplicaSpecs},
	}
	var specs map[string]*kubeflowReplicaSpec
	var field string
	for _, k := range all {
		if k.kind == o.Kind {
			specs, field = k.specs, k.field
		} else if len(k.specs) > 0 {
			return d.errAt(k.field, "is not a field of a %s", o.Kind)
		}
	}
	if err := kubeflowKindRules(d, o, x); err != nil {
		return err
	}
	if len(specs) == 0 {
		return d.errAt(field, "a %s needs at least one replica spec", o.Kind)
	}
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rs := specs[n]
		at := fmt.Sprintf("%s[%q]", field, n)
		if rs == nil {
			return d.errAt(at, "a replica spec needs a template")
		}
		reps := int32(1)
		if rs.Replicas != nil {
			reps = *rs.Replicas
		}
		if reps < 0 || int64(reps) > strict.MaxReplicas {
			return d.errAt(at+".replicas", "%d is not between 0 and %d", reps, strict.MaxReplicas)
		}
		if reps == 0 {
			continue
		}
		g := Group{Name: n, Pods: reps, Waves: 1}
		var err error
		if g.Pod, g.Constraints, g.DRA, err = podOf(d, o, &rs.Template, at+".template"); err != nil {
			return err
		}
		o.Groups = append(o.Groups, g)
	}
	if len(o.Groups) == 0 {
		return d.errAt(field, "every replica spec has 0 replicas")
	}
	rp := &x.Spec.RunPolicy
	if rp.BackoffLimit != nil {
		if *rp.BackoffLimit < 0 {
			return d.errAt("spec.runPolicy.backoffLimit", "must not be negative")
		}
		o.Restart.BackoffLimit = rp.BackoffLimit
	}
	if rp.ActiveDeadlineSeconds != nil {
		if err := o.activeDeadline(d, "spec.runPolicy.activeDeadlineSeconds", *rp.ActiveDeadlineSeconds); err != nil {
			return err
		}
	}
	if sp := rp.SchedulingPolicy; sp != nil {
		if sp.MinAvailable != nil {
			if *sp.MinAvailable < 1 || int64(*sp.MinAvailable) > o.Pods() {
				return d.errAt("spec.runPolicy.schedulingPolicy.minAvailable", "%d is not between 1 and the job's %d pods", *sp.MinAvailable, o.Pods())
			}
			o.MinAvailable = *sp.MinAvailable
		}
		if sp.Queue != "" && o.Queue == "" {
			o.Queue = sp.Queue
		}
		if sp.PriorityClass != "" {
			o.PriorityClass = sp.PriorityClass
		}
	}
	if x.Spec.ElasticPolicy != nil {
		d.note("spec.elasticPolicy", "elastic training is not modelled: the job runs with its replicas")
	}
	return o.readDuration(d, x.ObjectMeta)
}

// volcanoObject reads a Volcano Job: its tasks, minAvailable, queue,
// priority class, policies and maxRetry.
func volcanoObject(d *doc, o *Object, x *volcanoJob) error {
	o.readMeta(x.ObjectMeta)
	s := &x.Spec
	if o.Queue == "" {
		o.Queue = s.Queue
	}
	if len(s.Tasks) == 0 {
		return d.errAt("spec.tasks", "a Volcano Job needs at least one task")
	}
	if err := volcanoTaskRules(d, s.Tasks); err != nil {
		return err
	}
	vp := &cluster.VolcanoPolicies{MaxRetry: cluster.DefaultMaxRetry}
	if s.MaxRetry != 0 {
		if s.MaxRetry < 1 {
			return d.errAt("spec.maxRetry", "must be at least 1")
		}
		vp.MaxRetry = s.MaxRetry
	}
	if err := volcanoPolicies(d, vp, s.Policies, "spec.policies"); err != nil {
		return err
	}
	for i, t := range s.Tasks {
		at := fmt.Sprintf("spec.tasks[%d]", i)
		if t.Replicas < 0 || int64(t.Replicas) > strict.MaxReplicas {
			return d.errAt(at+".replicas", "%d is not between 0 and %d", t.Replicas, strict.MaxReplicas)
		}
		if t.Replicas == 0 {
			continue
		}
		g := Group{Name: t.Name, Pods: t.Replicas, Waves: 1}
		if t.MinAvailable != nil {
			if *t.MinAvailable < 0 || *t.MinAvailable > t.Replicas {
				return d.errAt(at+".minAvailable", "%d is not between 0 and the task's %d replicas", *t.MinAvailable, t.Replicas)
			}
			g.MinAvailable = *t.MinAvailable
		}
		var err error
		if g.Pod, g.Constraints, g.DRA, err = podOf(d, o, &t.Template, at+".template"); err != nil {
			return err
		}
		if len(t.Policies) > 0 {
			// gpuplan's policies are per job: a task's apply to the whole job.
			if err := volcanoPolicies(d, vp, t.Policies, at+".policies"); err != nil {
				return err
			}
			d.note(at+".policies", "a task's policies apply to the whole job in gpuplan")
		}
		if t.MaxRetry != 0 {
			d.note(at+".maxRetry", "per-task maxRetry is not modelled: the job's maxRetry counts")
		}
		o.Groups = append(o.Groups, g)
	}
	if len(o.Groups) == 0 {
		return d.errAt("spec.tasks", "every task has 0 replicas")
	}
	if err := volcanoNetwork(d, o, s.NetworkTopology); err != nil {
		return err
	}
	if s.MinAvailable != 0 {
		if s.MinAvailable < 0 || int64(s.MinAvailable) > o.Pods() {
			return d.errAt("spec.minAvailable", "%d is not between 1 and the job's %d pods", s.MinAvailable, o.Pods())
		}
		o.MinAvailable = s.MinAvailable
	}
	if s.PriorityClassName != "" && o.PriorityClass == "" {
		o.PriorityClass = s.PriorityClassName
	}
	if s.MinSuccess != nil {
		d.note("spec.minSuccess", "read but not modelled: the job completes when all its pods do")
	}
	if len(s.Plugins) > 0 {
		d.note("spec.plugins", "job plugins (env, svc, ssh, ...) change nothing gpuplan models")
	}
	noteUnmodelled(d, "spec", s)
	for i := range s.Tasks {
		noteUnmodelled(d, fmt.Sprintf("spec.tasks[%d]", i), &s.Tasks[i])
	}
	o.Restart.Volcano = vp
	return o.readDuration(d, x.ObjectMeta)
}

// volcanoNetwork reads a Volcano Job's spec.networkTopology (checked as
// its CRD and Volcano's scheduler do) into every task's topology request.
func volcanoNetwork(d *doc, o *Object, nt *volcanoNetworkTopology) error {
	if nt == nil {
		return nil
	}
	v := &cluster.VolcanoTopology{HighestTier: nt.HighestTierAllowed, HighestTierName: nt.HighestTierName}
	switch nt.Mode {
	case "", "hard": // the CRD's default: hard
		v.Hard = true
	case "soft":
	default:
		return d.errAt("spec.networkTopology.mode", "%s is not hard or soft (Volcano's CRD)", strict.Quote(nt.Mode))
	}
	if nt.HighestTierAllowed != nil && *nt.HighestTierAllowed < 0 {
		return d.errAt("spec.networkTopology.highestTierAllowed", "%d is below 0 (Volcano's CRD: minimum 0)", *nt.HighestTierAllowed)
	}
	if nt.HighestTierAllowed != nil && nt.HighestTierName != "" {
		return d.errAt("spec.networkTopology.highestTierName", "highestTierAllowed and highestTierName cannot be set together (Volcano's CRD)")
	}
	req := &cluster.TASRequest{Volcano: v}
	for i := range o.Groups {
		g := &o.Groups[i]
		if g.Constraints != nil && g.Constraints.TAS != nil {
			return d.errAt("spec.networkTopology", "task %s also asks for Kueue topology (kueue.x-k8s.io/podset-*-topology): give one or the other", strict.Quote(g.Name))
		}
		c := cluster.Constraints{}
		if g.Constraints != nil {
			c = *g.Constraints
		}
		c.TAS = req
		g.Constraints = &c
	}
	if o.tasAt == nil {
		o.tasAt = map[*cluster.TASRequest]strict.InputError{}
	}
	o.tasAt[req] = *d.errAt("spec.networkTopology", "").(*strict.InputError)
	return nil
}

func volcanoPolicies(d *doc, vp *cluster.VolcanoPolicies, ps []volcanoLifecyclePolicy, at string) error {
	if err := volcanoPolicyRules(d, ps, at); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, p := range ps {
		pat := fmt.Sprintf("%s[%d]", at, i)
		if p.ExitCode != nil {
			d.note(pat+".exitCode", "exit-code policies are not modelled: gpuplan's pods do not exit with codes")
			continue
		}
		if p.Timeout != nil {
			d.note(pat+".timeout", "policy timeouts are not modelled: the action is taken at once")
		}
		events := p.Events
		if p.Event != "" {
			events = append([]string{p.Event}, events...)
		}
		var modelled []string
		for _, e := range events {
			switch e {
			case "PodEvicted", "PodFailed", "*":
				modelled = append(modelled, e)
			default:
				d.note(pat+".event", "event %s does not happen in gpuplan (it produces PodEvicted and PodFailed)", strict.Quote(e))
			}
		}
		if len(modelled) == 0 {
			continue
		}
		a, err := cluster.ParseVolcanoAction(p.Action)
		if err != nil {
			return d.errAt(pat+".action", "%v", err)
		}
		events = modelled
		for _, e := range events {
			switch e {
			case "PodEvicted", "*":
				if !seen["PodEvicted"] {
					vp.OnEvicted = a
				}
				seen["PodEvicted"] = true
			case "PodFailed":
				if !seen["PodFailed"] {
					vp.OnFailed = a
				}
				seen["PodFailed"] = true
			}
			if e == "*" && !seen["PodFailed"] {
				vp.OnFailed = a
				seen["PodFailed"] = true
			}
		}
	}
	return nil
}

// jobSetObject reads a JobSet: each replicated job's Job, replicas times,
// together one gang.
func jobSetObject(d *doc, o *Object, x *jobSet) error {
	o.readMeta(x.ObjectMeta)
	if len(x.Spec.ReplicatedJobs) == 0 {
		return d.errAt("spec.replicatedJobs", "a JobSet needs at least one replicated job")
	}
	minBackoff := int32(cluster.DefaultBackoffLimit)
	for i, rj := range x.Spec.ReplicatedJobs {
		at := fmt.Sprintf("spec.replicatedJobs[%d]", i)
		reps := int32(1)
		if rj.Replicas != nil {
			reps = *rj.Replicas
		}
		if reps < 0 {
			return d.errAt(at+".replicas", "must not be negative")
		}
		if reps == 0 {
			continue
		}
		g, err := jobGroup(d, o, &rj.Template.Spec, at+".template.spec", rj.Name)
		if err != nil {
			return err
		}
		if int64(g.Pods)*int64(reps) > strict.MaxReplicas {
			return d.errAt(at+".replicas", "%d jobs of %d pods is more than %d pods, the most one job has", reps, g.Pods, strict.MaxReplicas)
		}
		key, keyAt, err := exclusiveTopology(d, x, &rj, at)
		if err != nil {
			return err
		}
		if key != "" {
			o.Groups = append(o.Groups, exclusiveJobs(d, x.Name, &rj, g, reps, key, keyAt)...)
		} else {
			g.Pods *= reps
			o.Groups = append(o.Groups, g)
		}
		if b := rj.Template.Spec.BackoffLimit; b != nil {
			if *b < 0 {
				return d.errAt(at+".template.spec.backoffLimit", "must not be negative")
			}
			minBackoff = min(minBackoff, *b)
		}
		if rj.Template.Spec.ActiveDeadlineSeconds != nil {
			d.note(at+".template.spec.activeDeadlineSeconds", "a child Job's deadline is not modelled")
		}
	}
	if len(o.Groups) == 0 {
		return d.errAt("spec.replicatedJobs", "every replicated job has 0 replicas")
	}
	// A child Job fails past its backoffLimit; the JobSet then restarts
	// every Job, up to failurePolicy.maxRestarts times.
	restarts := int32(0)
	if fp := x.Spec.FailurePolicy; fp != nil && fp.MaxRestarts != nil {
		restarts = *fp.MaxRestarts
		if restarts < 0 {
			return d.errAt("spec.failurePolicy.maxRestarts", "must not be negative")
		}
	}
	limit := (int64(minBackoff)+1)*(int64(restarts)+1) - 1
	limit = min(limit, 1<<30)
	b := int32(limit)
	o.Restart.BackoffLimit = &b
	if restarts > 0 {
		d.note("spec.failurePolicy", "modelled as a backoff limit of %d for the whole JobSet ((the smallest child backoffLimit %d + 1) x (maxRestarts %d + 1) - 1)", b, minBackoff, restarts)
	}
	if x.Spec.StartupPolicy != nil {
		d.note("spec.startupPolicy", "not modelled: the replicated jobs start together")
	}
	noteUnmodelled(d, "spec", &jobSetSpec{Network: x.Spec.Network, SuccessPolicy: x.Spec.SuccessPolicy, Coordinator: x.Spec.Coordinator, VolumeClaimPolicies: x.Spec.VolumeClaimPolicies})
	for i := range x.Spec.ReplicatedJobs {
		noteUnmodelled(d, fmt.Sprintf("spec.replicatedJobs[%d]", i), &x.Spec.ReplicatedJobs[i])
	}
	return o.readDuration(d, x.ObjectMeta)
}

// JobSet's exclusive placement: the annotation on the JobSet or
// on a replicated job's Job template names a node label; JobSet's pod
// webhook then keeps each child Job's pods in one domain of it and no two
// child Jobs in one domain. annotationNodeSelectorStrategy says nodes were
// labelled and tainted per Job beforehand (hack/label_nodes.py).
const (
	annotationExclusiveTopology    = "alpha.jobset.sigs.k8s.io/exclusive-topology"
	annotationNodeSelectorStrategy = "alpha.jobset.sigs.k8s.io/node-selector"
	labelJobSetJobKey              = "jobset.sigs.k8s.io/job-key"
)

// exclusiveTopology is the exclusive-placement topology key of replicated
// job rj ("" when none) and the field that gives it: the JobSet's own
// annotation, else the Job template's.
func exclusiveTopology(d *doc, x *jobSet, rj *replicatedJob, at string) (string, string, error) {
	for _, m := range []struct {
		ann map[string]string
		at  string
	}{{x.Annotations, "metadata.annotations"}, {rj.Template.Annotations, at + ".template.metadata.annotations"}} {
		if _, ok := m.ann[annotationNodeSelectorStrategy]; ok {
			return "", "", d.errAt(m.at, "%s (exclusive placement by node selectors on nodes labelled and tainted per child Job beforehand) is not modelled: gpuplan's nodes carry no per-Job labels or taints; use %s alone", annotationNodeSelectorStrategy, annotationExclusiveTopology)
		}
	}
	for _, m := range []struct {
		ann map[string]string
		at  string
	}{{x.Annotations, "metadata.annotations"}, {rj.Template.Annotations, at + ".template.metadata.annotations"}} {
		k, ok := m.ann[annotationExclusiveTopology]
		if !ok {
			continue
		}
		f := m.at + "." + annotationExclusiveTopology
		if k == "" {
			return "", "", d.errAt(f, "an empty topology key: name the node label whose domains each child Job takes exclusively")
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return "", "", d.errAt(f, "%s is not a node label key: %s", strict.Quote(k), strings.Join(errs, "; "))
		}
		return k, f, nil
	}
	return "", "", nil
}

// exclusiveJobs are replicated job rj's reps child Jobs under exclusive
// placement on key, one group each (a job of its own: its pods' labels
// carry its job key): as JobSet's pod webhook mutates the pods, each gets
// required pod affinity to its own Job's pods (job-key In) and required
// pod anti-affinity to any other Job's pods (job-key Exists and NotIn),
// both on key. The job key is the child Job's name (JobSet hashes the
// namespaced name; any key unique per Job places the same).
func exclusiveJobs(d *doc, set string, rj *replicatedJob, g Group, reps int32, key, at string) []Group {
	d.note(at, "each of the %d child Jobs of %s is a job of its own (a gang of its own), its pods kept in one domain of %s and no other child Job's pods in that domain (JobSet's pod webhook: required pod affinity and anti-affinity on %s); the webhook's follower pods waiting for the leader's node are not modelled (the Job's pods are placed together), nor the priority term newer JobSets add to the anti-affinity (Jobs of different priorities not excluding each other)", reps, rj.Name, key, labelJobSetJobKey)
	out := make([]Group, 0, reps)
	for i := range reps {
		name := fmt.Sprintf("%s-%s-%d", set, rj.Name, i)
		c := &cluster.Constraints{}
		if g.Constraints != nil {
			*c = *g.Constraints
		}
		c.PodAffinity = append(append([]cluster.PodAffinityTerm(nil), c.PodAffinity...),
			cluster.PodAffinityTerm{TopologyKey: key, Selector: []cluster.Requirement{{Key: labelJobSetJobKey, Op: cluster.OpIn, Values: []string{name}}}},
			cluster.PodAffinityTerm{Anti: true, TopologyKey: key, Selector: []cluster.Requirement{{Key: labelJobSetJobKey, Op: cluster.OpExists}, {Key: labelJobSetJobKey, Op: cluster.OpNotIn, Values: []string{name}}}})
		labels := map[string]string{}
		if g.Pod.Labels != nil {
			maps.Copy(labels, g.Pod.Labels.Labels)
		}
		labels[labelJobSetJobKey] = name
		j := g
		j.Name = fmt.Sprintf("%s-%d", rj.Name, i)
		j.Pod.Labels = podspread.Labels(labels)
		j.Constraints = c
		j.Alone = true
		out = append(out, j)
	}
	return out
}

// rayClusterGroups reads a RayCluster spec: the head pod and each worker
// group's replicas.
func rayClusterGroups(d *doc, o *Object, s *rayClusterSpec, at string) error {
	noteUnmodelled(d, at, s)
	noteUnmodelled(d, at+".headGroupSpec", &s.HeadGroupSpec)
	g := Group{Name: "head", Pods: 1, Waves: 1}
	var err error
	if g.Pod, g.Constraints, g.DRA, err = podOf(d, o, &s.HeadGroupSpec.Template, at+".headGroupSpec.template"); err != nil {
		return err
	}
	o.Groups = append(o.Groups, g)
	for i, w := range s.WorkerGroupSpecs {
		wat := fmt.Sprintf("%s.workerGroupSpecs[%d]", at, i)
		noteUnmodelled(d, wat, &w)
		lo, hi := int32(0), int32(strict.MaxReplicas)
		if w.MinReplicas != nil {
			lo = *w.MinReplicas
		}
		if w.MaxReplicas != nil {
			hi = *w.MaxReplicas
		}
		if lo < 0 || hi < lo || int64(hi) > strict.MaxReplicas && w.MaxReplicas != nil {
			return d.errAt(wat, "minReplicas %d and maxReplicas %d: want 0 <= minReplicas <= maxReplicas <= %d", lo, hi, strict.MaxReplicas)
		}
		reps := lo
		if w.Replicas != nil {
			reps = *w.Replicas
		}
		if reps < lo || reps > hi {
			d.note(wat+".replicas", "%d is outside [minReplicas %d, maxReplicas %d]: KubeRay clamps it to %d", reps, lo, hi, min(max(reps, lo), hi))
			reps = min(max(reps, lo), hi)
		}
		hosts := max(w.NumOfHosts, 1)
		if int64(reps)*int64(hosts) > strict.MaxReplicas {
			return d.errAt(wat+".replicas", "%d replicas of %d hosts is more than %d pods", reps, hosts, strict.MaxReplicas)
		}
		if w.Suspend != nil && *w.Suspend || reps == 0 {
			continue
		}
		wg := Group{Name: w.GroupName, Pods: reps * hosts, Waves: 1}
		if w.MinReplicas != nil && lo < reps {
			wg.MinAvailable = lo * hosts
		}
		if wg.Pod, wg.Constraints, wg.DRA, err = podOf(d, o, &w.Template, wat+".template"); err != nil {
			return err
		}
		if w.MaxReplicas != nil && hi > reps {
			d.note(wat+".maxReplicas", "Ray autoscaling up to %d workers is not modelled: the group runs %d", hi, reps)
		}
		o.Groups = append(o.Groups, wg)
	}
	return nil
}

// rayJobObject reads a RayJob: its RayCluster's pods (the submitter pod,
// a small Kubernetes Job, is not counted).
func rayJobObject(d *doc, o *Object, x *rayJob) error {
	o.readMeta(x.ObjectMeta)
	if x.Spec.RayClusterSpec == nil {
		return d.errAt("spec.rayClusterSpec", "a RayJob that runs on an existing cluster (clusterSelector) has no pods of its own to simulate; give rayClusterSpec")
	}
	if err := rayClusterGroups(d, o, x.Spec.RayClusterSpec, "spec.rayClusterSpec"); err != nil {
		return err
	}
	noteUnmodelled(d, "spec", &x.Spec)
	if x.Spec.ActiveDeadlineSeconds != nil {
		if err := o.activeDeadline(d, "spec.activeDeadlineSeconds", int64(*x.Spec.ActiveDeadlineSeconds)); err != nil {
			return err
		}
	}
	if b := x.Spec.BackoffLimit; b != nil {
		if *b < 0 {
			return d.errAt("spec.backoffLimit", "must not be negative")
		}
		o.Restart.BackoffLimit = b
	} else {
		zero := int32(0) // KubeRay's default: a failed RayJob is not retried
		o.Restart.BackoffLimit = &zero
	}
	return o.readDuration(d, x.ObjectMeta)
}

// noteUnmodelled names the free-form fields of a custom resource's spec
// struct (at field path at) that the manifest gives: gpuplan reads them
// but does not model them.
func noteUnmodelled(d *doc, at string, spec any) {
	v := reflect.ValueOf(spec)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type.Kind() != reflect.Interface || v.Field(i).IsNil() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		d.note(at+"."+name, "read but not modelled")
	}
}
