package sim

import (
	"fmt"
	"slices"

	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// capacityHost is the run as the capacity controller sees it
// (capacity.Host): it queues the controller's events on the run's clock,
// shows it the waiting jobs, and carries out what a node's notice or loss
// means for the jobs on it (job lifecycle, disrupt.go).
type capacityHost struct{ r *runner }

var _ capacity.Host = capacityHost{}

// Schedule implements capacity.Host.
func (h capacityHost) Schedule(at Time, ev capacity.Event) {
	h.r.push(at, event{kind: evCapacity, sub: uint8(ev.Kind), job: ev.Index, stamp: ev.Stamp})
}

// CapacityChanged implements capacity.Host.
func (h capacityHost) CapacityChanged() { h.r.st.dirty, h.r.st.freed = true, true }

// Waiting implements capacity.Host: every pending job, tried or not.
func (h capacityHost) Waiting(fn func(*scheduler.JobInfo) bool) { h.r.sched.Pending(fn) }

// EligiblePools implements capacity.Host.
func (h capacityHost) EligiblePools(job *scheduler.JobInfo, dst []int32) []int32 {
	return h.r.fw.EligiblePools(job, dst)
}

// Notice implements capacity.Host: node n is drained now and goes at
// reclaim. A running job that would not finish by then checkpoints and
// stops if a write fits in the notice, and stops at once otherwise; pods
// of jobs not yet started are released.
func (h capacityHost) Notice(now Time, n int32, reclaim Time, cause capacity.Cause) error {
	r := h.r
	for _, id := range slices.Clone(r.disr.onNode[n]) {
		j := r.jobs.at(id)
		switch {
		case j.finished:
		case !j.running:
			if err := r.releasePending(now, j); err != nil {
				return err
			}
		case j.isExiting() || (!j.sliced && j.att.plannedEnd <= reclaim):
			// Checkpointing already, or done before the reclaim.
		default:
			if r.beginExit(now, j, cause, reclaim-now, false) {
				continue
			}
			if err := r.disrupt(now, j, cause, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// Evict implements capacity.Host: every job with a pod on node n stops now.
func (h capacityHost) Evict(now Time, n int32, cause capacity.Cause) error {
	r := h.r
	for _, id := range slices.Clone(r.disr.onNode[n]) {
		j := r.jobs.at(id)
		switch {
		case j.finished:
		case !j.running:
			if err := r.releasePending(now, j); err != nil {
				return err
			}
		default:
			if err := r.disrupt(now, j, cause, false); err != nil {
				return err
			}
		}
	}
	if len(r.disr.onNode[n]) > 0 {
		return fmt.Errorf("invariant violated: node %d still lists jobs after its eviction", n)
	}
	return nil
}

// Movable implements capacity.Host: every job on node n may be disrupted
// (not do-not-disrupt, all its pods on n) and its pods fit on the other
// Ready nodes of their eligible pools now.
func (h capacityHost) Movable(now Time, n int32) bool {
	r := h.r
	c := r.c
	var stmt cluster.Statement
	stmt.Begin(c)
	ok := true
	var pools []int32
jobs:
	for _, id := range r.disr.onNode[n] {
		j := r.jobs.at(id)
		if !j.running || j.isExiting() || (j.spec.Recovery != nil && j.spec.Recovery.DoNotDisrupt) {
			ok = false
			break
		}
		for _, pl := range j.placed {
			if pl.Node != n {
				ok = false
				break jobs
			}
		}
		pools = r.fw.EligiblePools(&j.info, pools[:0])
		pod := &j.spec.Pod
		group := 0
		for k := range j.spec.Replicas {
			if g := j.spec.GroupOf(k); g != group {
				// The job's next pod group: its pod, its pools.
				group = g
				part := j.spec.Part(g)
				pod, _ = j.spec.PodAt(k)
				pools = r.fw.EligiblePools(&scheduler.JobInfo{ID: j.info.ID, Spec: &part}, pools[:0])
			}
			placed := false
			for _, p := range pools {
				pl := &c.Pools[p]
				for m := pl.First; m < pl.First+pl.Count && !placed; m++ {
					if m != n && c.Schedulable(m) && c.Fits(m, pod) {
						if stmt.Allocate(now, m, pod, -1) != nil {
							ok = false
							break jobs
						}
						placed = true
					}
				}
			}
			if !placed {
				ok = false
				break jobs
			}
		}
	}
	if err := stmt.Discard(now); err != nil {
		return false
	}
	return ok
}
