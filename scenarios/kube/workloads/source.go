package workloads

import (
	"container/heap"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Arrivals are the times (ms of virtual time, non-decreasing) a file of
// manifests is submitted.
type Arrivals interface {
	// Next is the next arrival time; ok is false when there are no more.
	Next() (t int64, ok bool)
}

// Rate is a Poisson (exponential gaps) or fixed (constant gaps) arrival
// process from Start, with an optional daily cycle of a Poisson rate:
// rate x (1 + Amplitude cos(2 pi (h - PeakHour)/24)).
type Rate struct {
	Fixed               bool
	RatePerHour         float64
	Amplitude, PeakHour float64
	Start               int64
	Rng                 *rand.Rand
	next                float64
	started             bool
}

// Next implements Arrivals.
func (r *Rate) Next() (int64, bool) {
	perMs := r.RatePerHour / 3.6e6
	if !r.started {
		r.started = true
		r.next = float64(r.Start)
		if r.Fixed {
			return r.Start, true
		}
	} else if r.Fixed {
		r.next += 1 / perMs
		return int64(r.next), true
	}
	peak := perMs * (1 + r.Amplitude)
	for {
		r.next += r.Rng.ExpFloat64() / peak
		if r.Amplitude == 0 {
			return int64(r.next), true
		}
		h := math.Mod(r.next/3.6e6, 24)
		rate := perMs * (1 + r.Amplitude*math.Cos(2*math.Pi*(h-r.PeakHour)/24))
		if r.Rng.Float64()*peak <= rate {
			return int64(r.next), true
		}
	}
}

// Schedule arrives at a cron schedule's times; virtual time 0 is Origin
// (wall clock). A schedule time at Origin itself counts.
type Schedule struct {
	Cron   *Cron
	Origin time.Time
	last   time.Time
	begun  bool
}

// Next implements Arrivals.
func (s *Schedule) Next() (int64, bool) {
	if !s.begun {
		s.begun = true
		s.last = s.Origin.Add(-time.Nanosecond)
	}
	t := s.Cron.Next(s.last)
	if t.IsZero() {
		return 0, false
	}
	s.last = t
	ms := t.Sub(s.Origin).Milliseconds()
	if ms > maxDurationMs {
		return 0, false
	}
	return ms, true
}

// Once arrives Count times at At.
type Once struct {
	At    int64
	Count int
	n     int
}

// Next implements Arrivals.
func (o *Once) Next() (int64, bool) {
	if o.n >= o.Count {
		return 0, false
	}
	o.n++
	return o.At, true
}

// Entry is one file of manifests and when it is submitted.
type Entry struct {
	// Name prefixes the jobs' names.
	Name    string
	Objects []Object
	// Arrivals submit the file's objects other than CronJobs (nil: none
	// are; the file's CronJobs run on their own schedules).
	Arrivals Arrivals
	// Limit caps each arrival stream (the file's, and each CronJob's) at
	// that many arrivals (0: no cap).
	Limit int
	// Duration samples a run's duration (ms) for objects that do not say
	// their own (nil: every object must).
	Duration models.Sampler
	// Queue is the queue of objects without one (default: the entry's
	// name).
	Queue string
	// SharedQueues are the LocalQueue names the admission policy defines
	// in more than one namespace: an object's queue of such a name is
	// "namespace/name" (Kueue looks a job's queue up in its namespace).
	SharedQueues map[string]bool
	// Recovery is the scenario's recovery, which objects' own settings
	// refine.
	Recovery *cluster.Recovery
	// Priority gives each object's priority and PriorityClass flags (by
	// index in Objects; nil: 0).
	Priority []int32
	Flags    []cluster.JobFlag
}

// SourceOptions are the run's: random stream, clock origin, horizon.
type SourceOptions struct {
	// Rng draws durations.
	Rng *rand.Rand
	// Origin is the wall-clock time of virtual time 0 (CronJobs'
	// schedules are read in it).
	Origin time.Time
	// Horizon (ms, 0: none) ends the source.
	Horizon int64
}

// plan is one job an object becomes per run: its groups of one pod shape
// and, when its groups ask for different pods, the further pod groups
// (cluster.JobSpec.Groups) of the same gang.
type plan struct {
	suffix       string
	replicas     int32
	minAvailable int32
	waves        int32
	pod          cluster.PodSpec
	constraints  *cluster.Constraints
	gpuQuota     string
	// dra: the pods' GPUs come by DRA claim (cluster.FlagDRAClaims).
	dra bool
	// alone: a group that is a job of its own (Group.Alone).
	alone bool
	// groups are the further pod groups; replicas counts their pods too.
	// mainAt is the main one's place among them all in the object's order.
	groups []cluster.PodGroup
	mainAt int32
}

// plans makes an object one job, one gang: its groups of identical pods
// merged into one pod group each, and when its groups ask for different
// pods (an MPIJob's CPU Launcher and GPU Workers, a TFJob's PS and
// Workers, a Ray head beside its GPU workers) those pod groups are the
// job's (cluster.JobSpec.Groups), admitted and started together as the
// operator's PodGroup or Kueue's Workload of several PodSets makes them.
// Groups that ask for the same pods but whose templates differ in
// placement (node selector, required affinity, tolerations: a Worker
// template without the Master's toleration) are one pod group all the
// same: its pods go only where every such template may go, and a warning
// says so. A gang size across groups (a Volcano Job's minAvailable, a
// PodGroup's minMember) applies to the job's pods together. Only a JobSet
// child Job under exclusive placement (Group.Alone) is a job of its own,
// as are groups that cannot share one job's run (other waves of a Job's
// completions, another GPU quota resource or DRA use): those are noted.
func plans(o *Object) ([]plan, []string) {
	var out []plan
	var notes []string
	alone := 0
	for _, g := range o.Groups {
		merged := false
		if g.Alone {
			alone++
		}
		for i := range out {
			p := &out[i]
			if g.Alone || p.alone || !samePod(p.pod, g.Pod) || p.waves != g.Waves || p.gpuQuota != g.GPUQuota || p.dra != (g.DRA != nil) {
				continue
			}
			if p.constraints.Key() != g.Constraints.Key() {
				c, ok := bothConstraints(p.constraints, g.Constraints)
				if !ok {
					continue
				}
				notes = append(notes, fmt.Sprintf("warning: %s:%d: %s %s: replica templates %s and %s ask for the same pods but differ in placement (%s against %s): they are one gang, placed only where both may go (a node selector of either, a taint both tolerate)", o.File, o.Line, o.Kind, o.Name, p.suffix, g.Name, describe(p.constraints), describe(g.Constraints)))
				p.constraints = c
			}
			p.minAvailable += minOr(g.MinAvailable, g.Pods)
			p.replicas += g.Pods
			p.suffix += "+" + g.Name
			merged = true
			break
		}
		if !merged {
			out = append(out, plan{alone: g.Alone, suffix: g.Name, replicas: g.Pods, minAvailable: minOr(g.MinAvailable, g.Pods), waves: g.Waves, pod: g.Pod, constraints: g.Constraints, gpuQuota: g.GPUQuota, dra: g.DRA != nil})
		}
	}
	out = gangOf(out)
	for i := range out {
		if out[i].minAvailable >= out[i].replicas {
			out[i].minAvailable = 0
		}
	}
	if len(out) == 1 {
		if o.MinAvailable > 0 && o.MinAvailable < out[0].replicas {
			out[0].minAvailable = o.MinAvailable
		}
		out[0].suffix = ""
		return out, notes
	}
	if alone > 0 {
		notes = append(notes, fmt.Sprintf("%s:%d: %s %s: its %d jobs (%d of them child Jobs under exclusive placement) are each submitted as a job of its own (a gang of its own), all at once, not held to start together", o.File, o.Line, o.Kind, o.Name, len(out), alone))
	} else {
		notes = append(notes, fmt.Sprintf("%s:%d: %s %s: its %d pod groups differ in their waves of completions, GPU quota resource or DRA use: each is submitted as a job of its own (a gang of its own), all at once, not held to start together", o.File, o.Line, o.Kind, o.Name, len(out)))
	}
	if o.MinAvailable > 0 {
		notes = append(notes, fmt.Sprintf("%s:%d: %s %s: minAvailable %d across jobs of their own is not modelled: each is a gang of its own", o.File, o.Line, o.Kind, o.Name, o.MinAvailable))
	}
	return out, notes
}

// gangOf joins plans of different pods that can share one job's run (not
// a job of its own, the same waves, GPU quota resource and DRA use) into
// one plan of several pod groups: the plan whose pods ask for the most
// GPUs is the job's main pod group (what its record shows), the others
// follow in the object's order; the gang size is the sum of theirs.
func gangOf(in []plan) []plan {
	if len(in) < 2 {
		return in
	}
	var out []plan
	used := make([]bool, len(in))
	for i := range in {
		if used[i] || in[i].alone {
			continue
		}
		// The members of i's gang, and its main one.
		members := []int{i}
		for k := i + 1; k < len(in); k++ {
			q := &in[k]
			if !used[k] && !q.alone && q.waves == in[i].waves && q.gpuQuota == in[i].gpuQuota && q.dra == in[i].dra {
				members = append(members, k)
			}
		}
		if len(members) == 1 {
			continue
		}
		main := members[0]
		for _, k := range members[1:] {
			if in[k].pod.MilliGPUs() > in[main].pod.MilliGPUs() {
				main = k
			}
		}
		p := in[main]
		p.minAvailable = in[main].minAvailable
		for n, k := range members {
			used[k] = true
			if k == main {
				p.mainAt = int32(n)
				continue
			}
			q := &in[k]
			p.groups = append(p.groups, cluster.PodGroup{Name: q.suffix, Pod: q.pod, Replicas: q.replicas, Constraints: q.constraints})
			p.replicas += q.replicas
			p.minAvailable += q.minAvailable
			p.suffix += "+" + q.suffix
		}
		out = append(out, p)
	}
	for i := range in {
		if !used[i] {
			out = append(out, in[i])
		}
	}
	return out
}

// describe is a pod template's placement constraints in a few words.
func describe(c *cluster.Constraints) string {
	if k := c.Key(); k != "" {
		return "{" + k + "}"
	}
	return "none"
}

func minOr(v, def int32) int32 {
	if v > 0 {
		return v
	}
	return def
}

// stream is one arrival process: a file's objects, or one CronJob.
type stream struct {
	e        *Entry
	objs     []int // indexes in e.Objects
	plans    [][]plan
	recs     []*cluster.Recovery
	arr      Arrivals
	next     int64
	n        int
	done     bool
	cron     *Cron
	cronNext int64 // the schedule time after next (-1: none), for Replace
	lastEnd  int64 // when the previous run is expected to end, for Forbid
}

// Source submits entries' objects over time. It is a sim.JobSource.
type Source struct {
	opts    SourceOptions
	streams []*stream
	h       []int
	buf     []cluster.JobSpec
	bi      int
	notes   []string
}

// NewSource builds the source; Notes then says what it approximates.
func NewSource(entries []Entry, opts SourceOptions) (*Source, error) {
	s := &Source{opts: opts}
	for ei := range entries {
		e := &entries[ei]
		var plain []int
		for i := range e.Objects {
			o := &e.Objects[i]
			if o.Cron == nil {
				plain = append(plain, i)
				continue
			}
			if o.Cron.Suspend {
				continue
			}
			st := &stream{e: e, objs: []int{i}, cron: o.Cron, arr: &Schedule{Cron: o.Cron, Origin: opts.Origin}}
			s.add(st)
		}
		if len(plain) > 0 && e.Arrivals != nil {
			s.add(&stream{e: e, objs: plain, arr: e.Arrivals})
		}
	}
	for _, st := range s.streams {
		for _, i := range st.objs {
			o := &st.e.Objects[i]
			if o.Duration == 0 && st.e.Duration == nil {
				return nil, fmt.Errorf("%s:%d: %s %s says no duration: give the file a duration (a distribution), or the object the %s annotation", o.File, o.Line, o.Kind, o.Name, AnnotationDuration)
			}
			p, notes := plans(o)
			st.plans = append(st.plans, p)
			s.notes = append(s.notes, notes...)
			st.recs = append(st.recs, o.Recovery(st.e.Recovery))
		}
		st.advance(s.opts.Horizon)
		if st.cron != nil {
			st.cronNext = st.peekCron()
		}
	}
	for i := range s.streams {
		s.h = append(s.h, i)
	}
	heap.Init((*streamHeap)(s))
	return s, nil
}

func (s *Source) add(st *stream) {
	st.lastEnd = -1
	s.streams = append(s.streams, st)
}

// Notes says what the source approximates.
func (s *Source) Notes() []string { return s.notes }

// advance moves the stream to its next arrival (done past the horizon or
// its limit). A CronJob with Forbid whose previous run is expected to be
// running at its next schedule time misses it: when that run ends, the
// controller starts the most recent missed run at once, unless even that
// one is later than startingDeadlineSeconds; then every missed run is
// skipped and the schedule goes on after it.
func (st *stream) advance(horizon int64) {
	if st.e.Limit > 0 && st.n >= st.e.Limit {
		st.done = true
		return
	}
	t, ok := st.arr.Next()
	if ok && st.cron != nil && st.cron.Policy == batchv1.ForbidConcurrent && t < st.lastEnd {
		sch := st.arr.(*Schedule)
		end := sch.Origin.Add(time.Duration(st.lastEnd) * time.Millisecond)
		inTime := true
		if sd := st.cron.StartingDeadline; sd >= 0 {
			// A missed time no earlier than lastEnd - deadline.
			from := max(t, st.lastEnd-sd)
			u := st.cron.Next(sch.Origin.Add(time.Duration(from)*time.Millisecond - time.Nanosecond))
			inTime = !u.IsZero() && !u.After(end)
		}
		sch.last = end // the schedule goes on after the run ends
		if inTime {
			t = st.lastEnd
		} else {
			t, ok = st.arr.Next()
		}
	}
	if !ok || horizon > 0 && t >= horizon {
		st.done = true
		return
	}
	st.next = t
}

// peekCron is the CronJob's schedule time after st.next (-1: none).
func (st *stream) peekCron() int64 {
	sch := st.arr.(*Schedule)
	t := st.cron.Next(sch.last)
	if t.IsZero() {
		return -1
	}
	return t.Sub(sch.Origin).Milliseconds()
}

// Next implements sim.JobSource.
func (s *Source) Next(j *cluster.JobSpec) (bool, error) {
	for s.bi >= len(s.buf) {
		if len(s.h) == 0 {
			return false, nil
		}
		st := s.streams[s.h[0]]
		s.buf, s.bi = s.buf[:0], 0
		s.fire(st)
		st.n++
		st.advance(s.opts.Horizon)
		if st.cron != nil && !st.done {
			st.cronNext = st.peekCron()
		}
		if st.done {
			heap.Pop((*streamHeap)(s))
		} else {
			heap.Fix((*streamHeap)(s), 0)
		}
	}
	*j = s.buf[s.bi]
	s.bi++
	return true, nil
}

// fire submits the stream's objects at its arrival time. With Replace
// each run of a CronJob is deleted when the next is due.
func (s *Source) fire(st *stream) {
	at := st.next
	for k, oi := range st.objs {
		o := &st.e.Objects[oi]
		d := o.Duration
		if d == 0 {
			d = max(1, int64(math.Round(st.e.Duration.Sample(s.opts.Rng))))
		}
		queue := o.Queue
		if queue != "" && o.Namespace != "" && st.e.SharedQueues[queue] {
			queue = o.Namespace + "/" + queue
		}
		if queue == "" {
			queue = st.e.Queue
		}
		if queue == "" {
			queue = st.e.Name
		}
		var prio int32
		var flags cluster.JobFlag
		if oi < len(st.e.Priority) {
			prio = st.e.Priority[oi]
		}
		if oi < len(st.e.Flags) {
			flags = st.e.Flags[oi]
		}
		end := at
		for _, p := range st.plans[k] {
			name := o.Name + "-" + strconv.Itoa(st.n)
			if p.suffix != "" {
				name += "-" + p.suffix
			}
			dur := d * int64(p.waves)
			jf := flags
			if p.dra {
				jf |= cluster.FlagDRAClaims
			}
			j := cluster.JobSpec{
				Name: name, Queue: queue, Submit: at, Duration: dur,
				Replicas: p.replicas, MinAvailable: p.minAvailable, Priority: prio, Flags: jf,
				Pod: p.pod, Constraints: p.constraints, Recovery: st.recs[k], GPUQuota: p.gpuQuota,
				Groups: p.groups, MainAt: p.mainAt,
			}
			if p.alone {
				relabel(&j, labelJobSetJobKey, j.Name)
			}
			relabel(&j, labelComputeDomain, o.Name+"-"+strconv.Itoa(st.n))
			if st.cron != nil && st.cron.Policy == batchv1.ReplaceConcurrent && st.cronNext >= 0 {
				j.Deadline = st.cronNext
			}
			end = max(end, at+dur)
			s.buf = append(s.buf, j)
		}
		if st.cron != nil {
			st.lastEnd = end
		}
	}
}

// streamHeap orders the source's streams by next arrival, ties by order.
type streamHeap Source

func (h *streamHeap) Len() int { return len(h.h) }
func (h *streamHeap) Less(a, b int) bool {
	sa, sb := h.streams[h.h[a]], h.streams[h.h[b]]
	if sa.next != sb.next {
		return sa.next < sb.next
	}
	return h.h[a] < h.h[b]
}
func (h *streamHeap) Swap(a, b int) { h.h[a], h.h[b] = h.h[b], h.h[a] }
func (h *streamHeap) Push(x any)    { h.h = append(h.h, x.(int)) }
func (h *streamHeap) Pop() any {
	n := len(h.h)
	x := h.h[n-1]
	h.h = h.h[:n-1]
	return x
}

// relabel keys a submission apart: job j's pods get value for pod label
// key, and its pod affinity terms that selected the label's value as read
// select value instead (nothing when the pods have no such label). A JobSet
// child Job under exclusive placement gets its own name as its job key
// (JobSet keys every JobSet's child Jobs apart; the key read from the
// manifest is the same on every submission), a job claiming a
// ComputeDomain's channel its submission's own labelComputeDomain value,
// so that each submission's pods share one NVLink domain apart from the
// others'.
func relabel(j *cluster.JobSpec, key, value string) {
	relabelPods(&j.Pod, &j.Constraints, key, value)
	if len(j.Groups) == 0 {
		return
	}
	// The groups are the plan's, shared by every submission: a copy.
	j.Groups = slices.Clone(j.Groups)
	for i := range j.Groups {
		relabelPods(&j.Groups[i].Pod, &j.Groups[i].Constraints, key, value)
	}
}

// relabelPods is relabel for one pod group's pod and constraints.
func relabelPods(pod *cluster.PodSpec, cons **cluster.Constraints, key, value string) {
	if pod.Labels == nil || *cons == nil {
		return
	}
	old, ok := pod.Labels.Labels[key]
	if !ok {
		return
	}
	labels := maps.Clone(pod.Labels.Labels)
	labels[key] = value
	pod.Labels = &cluster.PodLabels{Labels: labels}
	c := **cons
	c.PodAffinity = make([]cluster.PodAffinityTerm, len((*cons).PodAffinity))
	for i, t := range (*cons).PodAffinity {
		t.Selector = slices.Clone(t.Selector)
		for r := range t.Selector {
			q := &t.Selector[r]
			if q.Key == key && len(q.Values) == 1 && q.Values[0] == old {
				q.Values = []string{value}
			}
		}
		c.PodAffinity[i] = t
	}
	*cons = &c
}
