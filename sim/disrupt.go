package sim

import (
	"cmp"
	"fmt"
	"slices"

	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/engine"
)

// Jobs under disruption. A job with a checkpoint interval tau and cost
// delta runs tau of work, writes for delta, runs tau, ... and needs no
// write at the very end. An attempt that restarts from a checkpoint first
// restores it. When a node the job runs on is lost, the work since the
// last completed checkpoint is lost; on a notice long enough for a write
// (delta <= notice) the job checkpoints everything it has done and stops.
// The job then goes back to the queue, after the Job controller's backoff
// (10 s doubling to 6 min) unless its podFailurePolicy ignores
// disruptions, and fails once its failures pass its backoff limit.

// checkpoints is how many checkpoints a run of work w writes: one per
// tau of work except at the end.
func checkpoints(w, tau Time) Time {
	if tau <= 0 || w <= 0 {
		return 0
	}
	return (w+tau-1)/tau - 1
}

// wallTime is how long work w takes with the job's checkpoints.
func wallTime(w Time, rec *cluster.Recovery) Time {
	if rec == nil {
		return w
	}
	return w + checkpoints(w, rec.CheckpointInterval)*rec.CheckpointCost
}

// progress splits job j's current attempt up to t into work committed by
// checkpoints, time spent writing them, and time lost (the restore and
// everything since the last completed checkpoint).
func progress(j *jobState, t Time) (work, writes, lost Time) {
	if j.svc != 0 {
		return 0, 0, 0 // a replica pod serves: it computes nothing to lose
	}
	d := t - j.att.start
	rec := j.spec.Recovery
	if rec == nil || rec.CheckpointInterval <= 0 || j.sliced {
		return 0, 0, d
	}
	tau, delta := rec.CheckpointInterval, rec.CheckpointCost
	e := d - min(j.restoreTime(), d)
	k := e / (tau + delta)
	// The job never commits its last segment by a checkpoint: it ends.
	k = min(k, checkpoints(j.spec.Duration-j.savedWork(), tau))
	work, writes = k*tau, k*delta
	return work, writes, d - work - writes
}

// disruptionStats counts disruptions by cause.
type disruptionStats struct {
	byCause [capacity.NumCauses]int64
	failed  int64
}

// disruption is the run's link to node supply: the capacity controller
// (nil: nodes never come or go), the jobs with a pod on each node (for
// capacity and scheduler preemption; nil when neither runs) and the
// disruptions counted by cause.
type disruption struct {
	capacity *capacity.Controller
	onNode   [][]int32
	// byPrio counts onNode's entries by their jobs' priority: the lowest
	// priority of a job on a node, below which no job can preempt.
	byPrio prioCounts
	dstats disruptionStats
}

// placedOn records the nodes of newly bound pods at now.
func (d *disruption) placedOn(now Time, j *jobState, pls []cluster.Placement) {
	for _, pl := range pls {
		if l := d.onNode[pl.Node]; !slices.Contains(l, j.info.ID) {
			d.onNode[pl.Node] = append(l, j.info.ID)
			d.byPrio.add(j.spec.Priority, 1)
		}
		if d.capacity != nil {
			d.capacity.PodsChanged(now, pl.Node)
		}
	}
}

// releasedFrom forgets the nodes of job j's pods, just released at now.
func (d *disruption) releasedFrom(now Time, j *jobState) {
	for _, pl := range j.placed {
		id := j.info.ID
		l := d.onNode[pl.Node]
		d.onNode[pl.Node] = slices.DeleteFunc(l, func(x int32) bool { return x == id })
		d.byPrio.add(j.spec.Priority, int32(len(d.onNode[pl.Node])-len(l)))
		if d.capacity != nil {
			d.capacity.PodsChanged(now, pl.Node)
		}
	}
}

// beginExit starts a running job's graceful stop: when it checkpoints and
// a write fits both in its pods' termination grace period and in window
// (a notice; -1 for none), it writes everything it computed and stops
// when the write ends (an evExit); its pods hold their nodes meanwhile.
// evict marks a stop admission asked for. It reports whether it began.
func (r *runner) beginExit(now Time, j *jobState, cause capacity.Cause, window Time, evict bool) bool {
	rec := j.spec.Recovery
	if rec == nil || rec.CheckpointInterval <= 0 || j.sliced || j.isExiting() ||
		(rec.TerminationGrace > 0 && rec.CheckpointCost > rec.TerminationGrace) || (window >= 0 && rec.CheckpointCost > window) {
		return false
	}
	work, writes, lost := progress(j, now)
	restore := min(j.restoreTime(), now-j.att.start)
	// Everything computed since the last checkpoint is saved; a periodic
	// write cut short is lost.
	computed := min(lost-restore, rec.CheckpointInterval)
	x := j.ext()
	x.exit.work = work + computed
	x.exit.writes = writes + rec.CheckpointCost
	x.exit.lost = lost - computed
	x.exit.on, x.exit.cause, x.exit.evict = true, cause, evict
	if j.att.finish.Valid() && r.q.Cancel(j.att.finish) {
		r.st.live--
	}
	j.att.finish = r.push(now+rec.CheckpointCost, event{kind: evExit, job: j.info.ID, stamp: j.attempts})
	return true
}

// releasePending frees the pods a queued job has bound so far; it stays
// in the queue.
func (r *runner) releasePending(now Time, j *jobState) error {
	if err := r.releaseAll(now, j, 0, 0); err != nil {
		return err
	}
	j.info.Bound = 0
	return nil
}

// disrupt stops job j's running attempt at t: it keeps what its
// checkpoints saved (all it computed, when it checkpointed on notice) and
// goes back to the queue, or fails past its backoff limit.
func (r *runner) disrupt(t Time, j *jobState, cause capacity.Cause, onNotice bool) error {
	if j.svc != 0 {
		return r.svc.replicaLost(t, j, cause)
	}
	if j.x != nil && j.x.exit.evict {
		// Admission evicted it and it was writing its last checkpoint: it
		// goes back to admission, with the write if it was done.
		return r.endEvict(t, j, onNotice)
	}
	var work, writes, lost Time
	if onNotice {
		work, writes, lost = j.x.exit.work, j.x.exit.writes, j.x.exit.lost
	} else {
		work, writes, lost = progress(j, t)
	}
	gpus := slicedGPUs(r.c, j)
	if j.att.finish.Valid() && r.q.Cancel(j.att.finish) {
		r.st.live--
	}
	j.att.finish = engine.Handle{}
	x := j.ext()
	x.saved += work
	if err := r.endAttempt(t, j, gpus, lost, writes); err != nil {
		return err
	}
	j.sliced, x.exit.on = false, false
	j.info.Bound = 0
	x.disruptions++
	r.disr.dstats.byCause[cause]++
	rec := j.spec.Recovery
	if rec != nil && rec.Volcano != nil {
		return r.volcanoEvent(t, j, rec.Volcano.OnEvicted, "PodEvicted", cause.String(), false)
	}
	limit := int32(cluster.DefaultBackoffLimit)
	ignore := false
	if rec != nil {
		limit, ignore = rec.BackoffLimit, rec.IgnoreDisruptions
	}
	if ignore {
		return r.requeue(t, j)
	}
	x.failures++
	if x.failures > limit {
		j.finished = true
		j.outcome = Failed
		j.end = t
		j.diag = fmt.Sprintf("BackoffLimitExceeded: %d failures (the last a %s) with a backoff limit of %d", x.failures, cause, limit)
		r.st.finished++
		r.disr.dstats.failed++
		r.adm.finish(t, j, r)
		return nil
	}
	delay := min(10*Second<<min(x.failures-1, 10), 6*Minute)
	x.backoffUntil = t + delay
	r.push(t+delay, event{kind: evRequeue, job: j.info.ID})
	return nil
}

// requeue puts a disrupted job back in the queue, unless its deadline
// passed meanwhile.
func (r *runner) requeue(t Time, j *jobState) error {
	if j.running {
		// Only a stopped job waits out a backoff (see admitted).
		return invariant(fmt.Errorf("job %d is requeued after its restart backoff while it runs", j.info.ID))
	}
	if j.finished || j.awaitingAdmission() {
		return nil // admission preempted it meanwhile: it waits there
	}
	if j.dl.at > 0 && t >= j.dl.at {
		j.finished = true
		j.end = t
		j.outcome = Deleted
		if j.failOnDeadline {
			j.outcome = Failed
			j.diag = "DeadlineExceeded: the job was active longer than its activeDeadlineSeconds"
		}
		r.st.finished++
		r.adm.finish(t, j, r)
		return nil
	}
	r.tline.addPending(t, j, 1)
	r.sched.Requeue(&j.info)
	r.st.dirty, r.st.freed = true, true
	if j.dl.at > 0 {
		j.dl.h = r.push(j.dl.at, event{kind: evDeadline, job: j.info.ID})
	}
	return nil
}

// volcanoEvent applies a Volcano Job's lifecycle policy for a pod event
// to job j, whose attempt has just ended (what it saved kept): it
// restarts, counting a retry for RestartJob and failing when its retries
// reach maxRetry, or ends as the action says. inPass (the event came
// while the scheduler was binding) requeues it by an event at t, so that
// another pass tries it.
func (r *runner) volcanoEvent(t Time, j *jobState, a cluster.VolcanoAction, podEvent, what string, inPass bool) error {
	x := j.ext()
	end := func(o Outcome, diag string) error {
		j.finished = true
		j.outcome = o
		j.end = t
		j.diag = diag
		r.st.finished++
		r.disr.dstats.failed++
		r.adm.finish(t, j, r)
		return nil
	}
	switch a {
	case cluster.VolcanoRestartJob:
		x.failures++
		if limit := j.spec.Recovery.Volcano.MaxRetry; x.failures >= limit {
			return end(Failed, fmt.Sprintf("Volcano Job Failed: %s (%s) with policy RestartJob reached maxRetry %d", podEvent, what, limit))
		}
	case cluster.VolcanoAbortJob:
		return end(Failed, fmt.Sprintf("Volcano Job Aborted: %s (%s) with policy AbortJob", podEvent, what))
	case cluster.VolcanoTerminateJob:
		return end(Failed, fmt.Sprintf("Volcano Job Terminated: %s (%s) with policy TerminateJob", podEvent, what))
	}
	if inPass {
		x.backoffUntil = t
		r.push(t, event{kind: evRequeue, job: j.info.ID})
		return nil
	}
	return r.requeue(t, j)
}

// prioCounts counts entries by priority, in increasing priority, those
// with no entry left dropped.
type prioCounts []prioCount

type prioCount struct{ prio, n int32 }

// add counts n more entries (n < 0: fewer) of priority p.
func (c *prioCounts) add(p, n int32) {
	if n == 0 {
		return
	}
	i, found := slices.BinarySearchFunc(*c, p, func(e prioCount, p int32) int { return cmp.Compare(e.prio, p) })
	if !found {
		*c = slices.Insert(*c, i, prioCount{p, 0})
	}
	if (*c)[i].n += n; (*c)[i].n == 0 {
		*c = slices.Delete(*c, i, i+1)
	}
}

// lowest is the lowest priority counted (ok false: none is).
func (c prioCounts) lowest() (p int32, ok bool) {
	if len(c) == 0 {
		return 0, false
	}
	return c[0].prio, true
}
