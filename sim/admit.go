package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/engine"
)

// Admission in front of the scheduler (Config.Admission): a job arrives as
// a Kueue workload in its queue's LocalQueue; once admitted it holds its
// quota, its pods are steered to the admitted flavor's nodes and it joins
// the scheduler's queue. A job preempted by admission stops (keeping what
// its checkpoints saved, as after a disruption, but with no failure
// counted and no backoff) and is a pending workload again.

// AdmissionResult is what admission did, per ClusterQueue.
type AdmissionResult struct {
	Queues []QueueAdmission
	// LocalQueues maps each LocalQueue to its ClusterQueue.
	LocalQueues map[string]string
	// FairSharing lists the fair-sharing preemption strategies (nil:
	// fair sharing is off).
	FairSharing []string
}

// QueueAdmission is one ClusterQueue's record over the run.
type QueueAdmission struct {
	Name, Cohort, Strategy string
	// NominalGPUs is the queue's GPU quota (GPUs and MIG instances of every
	// flavor); the rest are integrals over the run in GPU x ms.
	NominalGPUs                         int64
	UsedGPUMs, BorrowedGPUMs, LentGPUMs float64
	// FairGPUMs integrates the GPUs a weighted max-min division of the
	// cohort among the queues' demands would give the queue
	// (admission.Controller.FairShares); Weight is its fair-sharing weight.
	FairGPUMs float64
	Weight    float64
	// Admissions counts admissions (a preempted job readmitted counts
	// again); PreemptionsCaused the evictions its workloads caused, of
	// which Reclaims took back quota another queue had borrowed.
	Admissions, PreemptionsCaused, Reclaims int
	// PodsReadyTimeouts counts its workloads evicted by waitForPodsReady,
	// Deactivated those it then gave up on.
	PodsReadyTimeouts, Deactivated int
}

type admState struct {
	ctl   *admission.Controller
	dirty bool
	// wfpr is waitForPodsReady (nil: off); blocking counts admitted jobs
	// not yet running while it blocks admission.
	wfpr     *admission.WaitForPodsReady
	blocking int
	last     Time
	acc      []QueueAdmission
	cons     map[consKey]*cluster.Constraints
	// base maps each of cons's constraints back to the job's own ones it
	// was made from (an admitted job's pods carry the former); lastKey
	// and lastCons are the last looked up (most runs have one).
	base     map[*cluster.Constraints]*cluster.Constraints
	lastKey  consKey
	lastCons *cluster.Constraints
	// consHash caches constraintsHash by pointer (jobs share them).
	consHash map[*cluster.Constraints]uint64
	// view is admission's usage view as of the controller's version
	// viewVer (0: never read); req is scratch reused at every submission.
	view    *admission.UsageView
	viewVer uint64
	req     []admission.Request
}

// consKey is a job's own constraints and the flavors admitted to: up to
// four in flavors, more in rest.
type consKey struct {
	base    *cluster.Constraints
	n       int
	flavors [4]int
	rest    string
}

func newAdmState(spec *admission.Spec) (*admState, error) {
	ctl, err := admission.New(*spec)
	if err != nil {
		return nil, fmt.Errorf("admission policy: %w", err)
	}
	a := &admState{ctl: ctl, cons: map[consKey]*cluster.Constraints{}, base: map[*cluster.Constraints]*cluster.Constraints{}, wfpr: spec.WaitForPodsReady}
	for _, q := range ctl.Queues() {
		w := 1.0
		switch q.FairWeight {
		case admission.ZeroWeight:
			w = 0
		case 0:
		default:
			w = float64(q.FairWeight) / 1000
		}
		a.acc = append(a.acc, QueueAdmission{Name: q.Name, Cohort: q.Cohort, Strategy: q.Strategy.String(), Weight: w})
	}
	for i, s := range ctl.Standings() {
		a.acc[i].NominalGPUs = s.Nominal
	}
	return a, nil
}

// integrate adds the queues' standings since the last change.
func (a *admState) integrate(t Time) {
	dt := float64(t - a.last)
	if dt > 0 {
		// The standings change only with the controller's state; the
		// view brings up to date only the queues that changed, and lists
		// the rows that may be non-zero (any other adds 0).
		if v := a.ctl.Version(); v != a.viewVer {
			a.view = a.ctl.Usage()
			a.viewVer = v
		}
		rows, fair := a.view.Rows, a.view.Fair
		for _, i := range a.view.Active {
			s, q := &rows[i], &a.acc[i]
			q.UsedGPUMs += float64(s.Used) * dt
			q.BorrowedGPUMs += s.Borrowed * dt
			q.LentGPUMs += s.Lent * dt
			q.FairGPUMs += fair[i] * dt
		}
	}
	a.last = t
}

// requests are a job's resources as Kueue counts them: every pod's
// requests together, GPUs as the device plugin's resources (or as the
// job's GPUQuota: a DRA claim's quota resource), in a.req's
// array (Submit keeps none of it).
func (a *admState) requests(j *cluster.JobSpec) []admission.Request {
	if len(j.Groups) == 0 {
		a.req = a.podRequests(a.req[:0], j, j.Replicas, &j.Pod)
		return a.req
	}
	// Every PodSet's requests, one after another: Submit sums them.
	out := a.podRequests(a.req[:0], j, j.MainReplicas(), &j.Pod)
	for i := range j.Groups {
		g := &j.Groups[i]
		out = a.podRequests(out, j, g.Replicas, &g.Pod)
	}
	a.req = out
	return out
}

// podSets are a job of several pod groups' PodSets for Kueue, one per
// group, each with its requests and constraints, in the object's order
// (setGroup).
func (a *admState) podSets(j *cluster.JobSpec) []admission.PodSet {
	sets := make([]admission.PodSet, 0, len(j.Groups)+1)
	for s := range len(j.Groups) + 1 {
		if g := setGroup(j, s); g < 0 {
			sets = append(sets, admission.PodSet{Requests: a.podRequests(nil, j, j.MainReplicas(), &j.Pod), Constraints: j.Constraints})
		} else {
			pg := &j.Groups[g]
			sets = append(sets, admission.PodSet{Requests: a.podRequests(nil, j, pg.Replicas, &pg.Pod), Constraints: pg.Constraints})
		}
	}
	return sets
}

// setGroup is the pod group of a job's PodSet s: -1 the main Pod, else
// its index in Groups (the PodSets are Groups[:MainAt], the main Pod,
// then Groups[MainAt:], the object's order).
func setGroup(j *cluster.JobSpec, s int) int {
	at := min(int(j.MainAt), len(j.Groups))
	switch {
	case s < at:
		return s
	case s == at:
		return -1
	}
	return s - 1
}

// podRequests appends to out the requests of replicas pods p of job j.
func (a *admState) podRequests(out []admission.Request, j *cluster.JobSpec, replicas int32, p *cluster.PodSpec) []admission.Request {
	n := int64(replicas)
	out = append(out, admission.Request{Resource: "cpu", Amount: n * p.MilliCPU}, admission.Request{Resource: "memory", Amount: n * p.MemoryMiB})
	gpus := int64(p.GPUs)
	if p.Shared() {
		gpus = 1 // one time-slice replica or share
	}
	if gpus > 0 && j.GPUQuota != cluster.NoGPUQuota {
		res := "nvidia.com/gpu"
		switch {
		case j.GPUQuota != "":
			res = j.GPUQuota
		case p.MIG != "" && a.ctl.Covers(j.Queue, "nvidia.com/mig-"+p.MIG):
			res = "nvidia.com/mig-" + p.MIG
		}
		out = append(out, admission.Request{Resource: res, Amount: n * gpus})
	}
	return out
}

// equiv is what Kueue's scheduling hash (pkg/workload
// computeSchedulingHash) sees of job j's PodSets beyond what admission
// reads (their summed requests, priority and the flavors their pods may
// go to): each PodSet's pod count and per-pod requests, node selector,
// affinity, tolerations, topology spread and topology request, in order
// (admission.Workload.Equiv). FNV-1a.
func (a *admState) equiv(j *cluster.JobSpec) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	for s := range len(j.Groups) + 1 {
		p, n, c := &j.Pod, j.MainReplicas(), j.Constraints
		if g := setGroup(j, s); g >= 0 {
			p, n, c = &j.Groups[g].Pod, j.Groups[g].Replicas, j.Groups[g].Constraints
		}
		mix(uint64(n))
		mix(uint64(p.MilliCPU))
		mix(uint64(p.MemoryMiB))
		mix(uint64(p.GPUs))
		mix(uint64(p.GPUMilli))
		mix(hashString(p.MIG))
		mix(a.constraintsHash(c))
	}
	return h
}

// constraintsHash hashes what of a pod's constraints Kueue's scheduling
// hash reads (utilpod.SpecShape), the same for equal constraints.
func (a *admState) constraintsHash(c *cluster.Constraints) uint64 {
	if c == nil {
		return 0
	}
	if v, ok := a.consHash[c]; ok {
		return v
	}
	var b strings.Builder
	keys := make([]string, 0, len(c.NodeSelector))
	for k := range c.NodeSelector {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q,", k, c.NodeSelector[k])
	}
	fmt.Fprintf(&b, "|%v|%v|%v|%v|", c.Affinity, c.Tolerations, c.Spread, c.PodAffinity)
	if t := c.TAS; t != nil {
		fmt.Fprintf(&b, "%v %q %q %d", t.Mode, t.Level, t.SliceLevel, t.SliceSize)
		if v := t.Volcano; v != nil {
			fmt.Fprintf(&b, " %v %q", v.Hard, v.HighestTierName)
			if v.HighestTier != nil {
				fmt.Fprintf(&b, " %d", *v.HighestTier)
			}
		}
	}
	v := hashString(b.String()) | 1 // 0 is no constraints
	if a.consHash == nil {
		a.consHash = map[*cluster.Constraints]uint64{}
	}
	a.consHash[c] = v
	return v
}

// hashString is FNV-1a of s.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// submit hands an arrived job to admission.
func (a *admState) submit(t Time, j *jobState) error {
	a.integrate(t)
	w := admission.Workload{ID: j.info.ID, Queue: j.spec.Queue, Priority: j.spec.Priority, Created: j.spec.Submit, Requests: a.requests(&j.spec),
		Constraints: j.spec.Constraints, Equiv: a.equiv(&j.spec)}
	if len(j.spec.Groups) > 0 {
		w.PodSets = a.podSets(&j.spec)
	}
	if err := a.ctl.Submit(w); err != nil {
		return &WorkloadError{Job: int(j.info.ID), Name: j.spec.Name, Err: fmt.Errorf("queue %q: %w (every job's queue must be a LocalQueue of the admission policy)", j.spec.Queue, err)}
	}
	j.awaiting = true
	a.dirty = true
	return nil
}

// admitCycle runs admission and applies its decisions.
func (r *runner) admitCycle(t Time) error {
	a := r.adm
	a.dirty = false
	if a.blocking > 0 {
		return nil // blockAdmission: an admitted job is not running yet
	}
	a.integrate(t)
	a.ctl.SetClock(int64(t))
	for {
		if err := r.applyCycle(t, a.ctl.Cycle()); err != nil {
			return err
		}
		// Preemptions were issued: their victims have stopped (or
		// are stopping, withdrawn), and the preemptors are tried in
		// the next cycle, at the same instant.
		if !a.ctl.Again() || a.blocking > 0 {
			return nil
		}
	}
}

// applyCycle applies one admission cycle's decisions.
func (r *runner) applyCycle(t Time, decisions []admission.Decision) error {
	a := r.adm
	for _, d := range decisions {
		j := r.jobs.at(d.ID)
		switch {
		case d.Waiting:
			id := r.fw.InternReason(d.Reason)
			if j.info.FirstReason < 0 {
				j.info.FirstReason = id
			}
			j.info.LastReason = id
		case d.Preempted:
			by := r.jobs.at(d.By)
			q := &a.acc[a.ctl.QueueIndex(by.spec.Queue)]
			q.PreemptionsCaused++
			if d.Reclaim {
				q.Reclaims++
			}
			if err := r.evict(t, j); err != nil {
				return err
			}
		default:
			if d.Reason != "" && j.info.FirstReason < 0 && t > j.spec.Submit {
				// It waited behind a workload of its shape that did not fit.
				j.info.FirstReason = r.fw.InternReason(d.Reason)
				j.info.LastReason = j.info.FirstReason
			}
			a.acc[a.ctl.QueueIndex(j.spec.Queue)].Admissions++
			r.admitted(t, j, d.Flavors, d.PodSetFlavors)
		}
	}
	return nil
}

// admitted sends an admitted job to the scheduler, its pods steered to
// the flavors' nodes (a job waiting for admission carries its own
// constraints): a job of several pod groups, each group to its own
// PodSet's flavors (sets, Kueue's PodSetAssignments; a group that asks
// nothing of a resource group gets none of its flavors' labels).
func (r *runner) admitted(t Time, j *jobState, flavors []int, sets [][]int) {
	j.awaiting = false
	first := j.admitAt < 0
	if first {
		j.admitAt = t
	}
	// Each PodSet's flavors, by pod group (setGroup).
	main, byGroup := flavors, [][]int(nil)
	if len(sets) == len(j.spec.Groups)+1 {
		byGroup = make([][]int, len(j.spec.Groups))
		for s, fl := range sets {
			if g := setGroup(&j.spec, s); g < 0 {
				main = fl
			} else {
				byGroup[g] = fl
			}
		}
	}
	flavors = main
	j.spec.Constraints = r.adm.constraints(j.spec.Constraints, flavors)
	if len(j.spec.Groups) > 0 {
		// Each PodSet's pods go to its flavors' nodes too (a copy: the
		// job's groups may be shared with other submissions).
		gs := slices.Clone(j.spec.Groups)
		for i := range gs {
			fl := flavors
			if byGroup != nil {
				fl = byGroup[i]
			}
			gs[i].Constraints = r.adm.constraints(gs[i].Constraints, fl)
		}
		j.spec.Groups = gs
	}
	if w := r.adm.wfpr; w != nil {
		x := j.ext()
		x.notReady = true
		x.readyStamp++
		if w.BlockAdmission {
			r.adm.blocking++
		}
		r.push(t+w.Timeout, event{kind: evPodsReady, job: j.info.ID, stamp: x.readyStamp})
	}
	if x := j.x; x != nil && x.backoffUntil > t {
		// Evicted while it waited out the restart backoff of a disruption
		// and admitted again before the backoff ends: the Job controller
		// recreates its pods only then (the evRequeue already on the
		// clock, which requeues it and watches its deadline again), so it
		// is back in backoff: not pending and no deadline event of its own.
		r.tline.addPending(t, j, -1)
		if j.dl.h.Valid() && r.q.Cancel(j.dl.h) {
			r.st.live--
		}
		j.dl.h = engine.Handle{}
		return
	}
	if first {
		fr, lr := j.info.FirstReason, j.info.LastReason
		r.sched.Enqueue(&j.info)
		// Enqueue clears the reasons; keep admission's.
		j.info.FirstReason, j.info.LastReason = fr, lr
	} else {
		r.sched.Requeue(&j.info)
	}
	r.st.dirty = true
}

// constraints adds the flavors' node labels and tolerations to a job's own
// constraints, which it keeps whole (selector, affinity, tolerations,
// topology spread, pod affinity, topology request), shared by every job
// with the same base and flavors.
func (a *admState) constraints(base *cluster.Constraints, flavors []int) *cluster.Constraints {
	k := consKey{base: base, n: len(flavors)}
	if copy(k.flavors[:], flavors) < len(flavors) {
		var sb strings.Builder
		for _, f := range flavors[len(k.flavors):] {
			sb.WriteString(strconv.Itoa(f))
			sb.WriteByte(',')
		}
		k.rest = sb.String()
	}
	if a.lastCons != nil && k == a.lastKey {
		return a.lastCons
	}
	if c, ok := a.cons[k]; ok {
		a.lastKey, a.lastCons = k, c
		return c
	}
	c := &cluster.Constraints{NodeSelector: map[string]string{}}
	if base != nil {
		for k, v := range base.NodeSelector {
			c.NodeSelector[k] = v
		}
		c.Affinity = base.Affinity
		c.Tolerations = append(c.Tolerations, base.Tolerations...)
		c.TAS = base.TAS
		c.Spread, c.PodAffinity = base.Spread, base.PodAffinity
	}
	for _, fi := range flavors {
		f := &a.ctl.Spec().Flavors[fi]
		for k, v := range f.NodeLabels {
			c.NodeSelector[k] = v
		}
		for _, t := range f.Tolerations {
			c.Tolerations = append(c.Tolerations, cluster.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: cluster.TaintEffect(t.Effect)})
		}
	}
	a.cons[k] = c
	a.base[c] = base
	a.lastKey, a.lastCons = k, c
	return c
}

// evict stops a job admission preempted: a running attempt ends, keeping
// what its checkpoints saved; a queued job leaves the scheduler's queue;
// the job waits for admission again.
func (r *runner) evict(t Time, j *jobState) error {
	x := j.ext()
	x.preempted++
	if x.notReady {
		r.adm.podsReady(j, r.st.now, r)
	}
	if j.running && r.beginExit(t, j, capacity.CausePreemption, -1, true) {
		// It writes a last checkpoint in its grace period, its pods on
		// their nodes: out of admission's queue until it has stopped.
		r.adm.ctl.Withdraw(j.info.ID)
		return nil
	}
	return r.unadmit(t, j, false)
}

// endEvict finishes the graceful stop of a job admission evicted: the
// attempt ends keeping what it saved (everything, when the write was done:
// done), and the job is pending in admission again.
func (r *runner) endEvict(t Time, j *jobState, done bool) error {
	j.x.exit.evict = false
	if err := r.unadmit(t, j, done); err != nil {
		return err
	}
	r.adm.integrate(t)
	r.adm.ctl.Requeue(j.info.ID, j.spec.Submit)
	r.adm.dirty = true
	return nil
}

// unadmit takes a job out of the scheduler's hands (a running attempt
// ends, keeping what its checkpoints saved; a queued job leaves the
// queue) to wait for admission again; exited says a running job has just
// written its last checkpoint (its exit figures stand) rather than
// stopping as it is.
func (r *runner) unadmit(t Time, j *jobState, exited bool) error {
	switch {
	case j.running:
		x := j.ext()
		work, writes, lost := progress(j, t)
		if exited {
			work, writes, lost = x.exit.work, x.exit.writes, x.exit.lost
		}
		gpus := slicedGPUs(r.c, j)
		if j.att.finish.Valid() && r.q.Cancel(j.att.finish) {
			r.st.live--
		}
		j.att.finish = engine.Handle{}
		x.saved += work
		if err := r.endAttempt(t, j, gpus, lost, writes); err != nil {
			return err
		}
		j.sliced, x.exit.on = false, false
		j.info.Bound = 0
		r.tline.addPending(t, j, 1)
		if j.dl.at > t {
			j.dl.h = r.push(j.dl.at, event{kind: evDeadline, job: j.info.ID})
		}
	case j.info.Done:
		// Waiting out a backoff after a disruption: requeue will find it
		// awaiting admission.
		r.tline.addPending(t, j, 1)
		if j.dl.at > t && !j.dl.h.Valid() {
			j.dl.h = r.push(j.dl.at, event{kind: evDeadline, job: j.info.ID})
		}
	default:
		if len(j.placed) > 0 {
			if err := r.releasePending(t, j); err != nil {
				return err
			}
		}
		r.sched.Remove(&j.info)
	}
	j.awaiting = true
	if base, ok := r.adm.base[j.spec.Constraints]; ok {
		j.spec.Constraints = base
	}
	for i := range j.spec.Groups {
		if base, ok := r.adm.base[j.spec.Groups[i].Constraints]; ok {
			j.spec.Groups[i].Constraints = base
		}
	}
	return nil
}

// finish releases a job's quota once it has ended (a is nil in a run
// without admission: nothing to release).
func (a *admState) finish(t Time, j *jobState, ev eventSink) {
	if a == nil {
		return
	}
	if j.x != nil && j.x.notReady {
		a.podsReady(j, t, ev)
	}
	a.integrate(t)
	a.ctl.Finish(j.info.ID)
	a.dirty = true
}

func (j *jobState) awaitingAdmission() bool { return j.awaiting }

// result is the admission record at the end of the run.
func (a *admState) result(end Time) *AdmissionResult {
	a.integrate(end)
	res := &AdmissionResult{Queues: append([]QueueAdmission(nil), a.acc...), LocalQueues: map[string]string{}}
	for _, l := range a.ctl.Spec().LocalQueues {
		res.LocalQueues[l.Name] = l.ClusterQueue
	}
	if fs := a.ctl.Spec().FairSharing; fs != nil {
		for _, s := range fs.Strategies {
			res.FairSharing = append(res.FairSharing, s.String())
		}
	}
	return res
}

// podsReady ends a job's wait for its pods at now (they all run, or it
// left).
func (a *admState) podsReady(j *jobState, now Time, ev eventSink) {
	j.x.notReady = false
	if a.wfpr.BlockAdmission {
		a.blocking--
		// Bound in a pass, after this instant's admission cycle: another
		// cycle now.
		ev.push(now, event{kind: evAdmitCycle})
	}
}

// podsReadyTimeout evicts an admitted job whose pods are not all running
// waitForPodsReady's timeout after its admission, and requeues it after
// the backoff, or deactivates it past the backoff limit.
func (r *runner) podsReadyTimeout(t Time, j *jobState, stamp uint32) error {
	x := j.x
	if j.finished || x == nil || !x.notReady || x.readyStamp != stamp {
		return nil
	}
	a := r.adm
	r.adm.podsReady(j, r.st.now, r)
	if err := r.unadmit(t, j, false); err != nil {
		return err
	}
	a.integrate(t)
	a.ctl.Evict(j.info.ID)
	a.dirty = true
	q := &a.acc[a.ctl.QueueIndex(j.spec.Queue)]
	q.PodsReadyTimeouts++
	x.requeues++
	x.evictedAt = t
	w := a.wfpr
	// A replica pod is never given up on: its ReplicaSet keeps it, and it
	// waits for admission again after each backoff.
	if w.BackoffLimit >= 0 && x.requeues > w.BackoffLimit && j.svc == 0 {
		q.Deactivated++
		r.tline.addPending(t, j, -1)
		j.finished = true
		j.outcome = Failed
		j.end = t
		j.diag = fmt.Sprintf("Deactivated by Kueue: not PodsReady within %s %d times (waitForPodsReady backoffLimitCount %d)", durationText(w.Timeout), x.requeues, w.BackoffLimit)
		r.st.finished++
		a.ctl.Finish(j.info.ID)
		if j.dl.h.Valid() && r.q.Cancel(j.dl.h) {
			r.st.live--
		}
		j.dl.h = engine.Handle{}
		return nil
	}
	r.push(t+w.Backoff(x.requeues), event{kind: evAdmitRequeue, job: j.info.ID})
	return nil
}

// requeue makes a job evicted by waitForPodsReady pending again.
func (a *admState) requeue(t Time, j *jobState) {
	if j.finished {
		return
	}
	at := j.x.evictedAt
	if a.wfpr.RequeueAtCreation {
		at = j.spec.Submit
	}
	a.integrate(t)
	a.ctl.Requeue(j.info.ID, at)
	a.dirty = true
}

// durationText writes a duration in ms the way Go does.
func durationText(ms Time) string { return (time.Duration(ms) * time.Millisecond).String() }
