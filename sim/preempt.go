package sim

import (
	"slices"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Scheduler preemption (Config.Preemption), after kube-scheduler's
// DefaultPreemption: a job still waiting after a pass may evict running
// jobs of lower priority when that lets every pod it has left fit. For
// each such pod, on each node its constraints allow, all lower-priority
// jobs on the node are candidate victims; those not needed are spared,
// highest priority first; the node chosen is the one whose victims have
// the lowest highest priority, then the lowest sum of priorities, then
// are fewest, then the lowest index. A victim job loses all its pods (as
// a Job whose pod is deleted restarts it): it is disrupted, with cause
// preemption, and resumes from its last checkpoint; a podFailurePolicy
// that ignores disruptions keeps it from counting as a failure. A victim
// whose checkpoint write fits in its termination grace period first
// writes what it computed, its pods on their nodes; the preemptor waits
// for it rather than preempting others. Pods on
// time-sliced, MIG or shared GPUs are not preempted for. A victim whose
// GPUs come by DRA claim (cluster.FlagDRAClaims) frees its CPU and memory
// but not its GPUs: kube-scheduler's dynamicresources plugin does not
// simulate releasing a victim's claims (it has no PreFilterExtensions,
// KEP-5690 "DRA preemption", open in 2026: "preemption of pods utilizing
// DRA resources is currently not supported"), so no pod is preempted for
// the GPUs such a job holds.

// schedSide is the run's side of the scheduler: the pod mix plugins read,
// the pending backoff pass, preemption, and the fabrics training jobs'
// step times are modelled on.
type schedSide struct {
	plug *scheduler.Handle
	// shapes counts the pod shapes arrived so far; the handle's mix (for
	// fragmentation-aware plugins) is refreshed from it as jobs arrive.
	shapes map[models.PodShape]int
	// backoffAt is the earliest evBackoff pending (-1: none).
	backoffAt Time
	// preemptOn: the scheduler preempts lower-priority jobs for pending
	// ones (kube-scheduler's DefaultPreemption).
	preemptOn bool
	fabrics   map[string]models.Fabric
	// found holds, within a preemption pass, the searches that found no
	// victims since the last eviction: victims is a function of the
	// search's key and the cluster's state, which only an eviction
	// changes in the pass, so a waiting job of the same key (a backlog of
	// like jobs, each searching every node) is passed over.
	found map[searchKey]bool
}

// searchKey is what a victim search for a waiting job depends on besides
// the cluster: its pod, its constraints (the same *Constraints: traces
// intern them), the pods it has left to place and its priority.
type searchKey struct {
	pod  cluster.PodSpec
	cons *cluster.Constraints
	left int32
	prio int32
	// groups: a job's further pod groups (nil for most).
	groups *cluster.PodGroup
}

type victimSet struct {
	jobs             []int32
	maxPrio, sumPrio int64
	node             int32
}

// preemptPass tries preemption for the jobs left waiting, in queue order,
// and runs another pass when it evicted.
//
// A job preempts only jobs of lower priority on nodes: the jobs at or
// below the lowest priority on any node are not looked at (victims would
// find none for them), so a pass costs the waiting jobs that could
// preempt, not a backlog that grows all run long.
func (r *runner) preemptPass(t Time) error {
	floor, any := r.disr.byPrio.lowest()
	if !any {
		return nil // no job on any node: none to preempt
	}
	var waiting []int32
	r.sched.WaitingAbove(floor, func(info *scheduler.JobInfo) bool {
		j := r.jobs.at(info.ID)
		if j.spec.Flags&cluster.FlagPreemptNever == 0 && !j.running && !j.finished && !j.awaitingAdmission() {
			waiting = append(waiting, info.ID)
		}
		return true
	})
	evicted := false
	clear(r.sc.found)
	for _, id := range waiting {
		p := r.jobs.at(id)
		key := searchKey{pod: p.spec.Pod, cons: p.spec.Constraints, left: p.spec.Replicas - p.info.Bound, prio: p.spec.Priority}
		if len(p.spec.Groups) > 0 {
			key.groups = &p.spec.Groups[0]
		}
		if r.sc.found[key] {
			continue // the same search found none, and nothing changed since
		}
		r.st.stats.PreemptSearches++
		victims := r.sc.victims(p, r.c, r.fw, &r.jobs, r.disr.onNode)
		if len(victims) == 0 {
			if r.sc.found == nil {
				r.sc.found = map[searchKey]bool{}
			}
			r.sc.found[key] = true
			continue
		}
		clear(r.sc.found) // the victims' nodes change
		for _, vid := range victims {
			v := r.jobs.at(vid)
			v.ext().preempted++
			p.ext().preempting++
			if r.beginExit(t, v, capacity.CausePreemption, -1, false) {
				continue // it checkpoints in its grace period, then goes
			}
			if err := r.disrupt(t, v, capacity.CausePreemption, false); err != nil {
				return err
			}
		}
		r.sched.Activate(&p.info)
		evicted = true
	}
	if evicted {
		r.st.stats.Passes++
		if err := r.sched.Pass(t, true, r); err != nil {
			return invariant(err)
		}
		r.st.dirty, r.st.freed = false, false
		r.sc.armBackoff(r.sched, r)
	}
	return nil
}

type res3 struct{ cpu, mem, gpu int64 }

func (a res3) add(b res3) res3 { return res3{a.cpu + b.cpu, a.mem + b.mem, a.gpu + b.gpu} }
func (a res3) sub(b res3) res3 { return res3{a.cpu - b.cpu, a.mem - b.mem, a.gpu - b.gpu} }

// heldOn is what job v's pods hold on node n that preempting v frees,
// whole GPUs counted (none when they come by DRA claim).
func heldOn(v *jobState, n int32) res3 {
	var h res3
	dra := v.spec.Flags&cluster.FlagDRAClaims != 0
	for k, pl := range v.placed {
		if pl.Node == n {
			g := int64(pl.Milli) / cluster.MilliGPU
			if dra {
				g = 0
			}
			pod := &v.spec.Pod
			if len(v.spec.Groups) > 0 {
				pod, _ = v.spec.PodAt(int32(k))
			}
			h = h.add(res3{pod.MilliCPU, pod.MemoryMiB, g})
		}
	}
	return h
}

// victims are the jobs p needs gone (in id order), if evicting
// lower-priority jobs would let all its remaining pods fit (nil: none
// would); jobs on node n are onNode[n]. It decides and changes nothing:
// preemptPass evicts them.
func (s *schedSide) victims(p *jobState, c *cluster.Cluster, fw *scheduler.Framework, jobs *jobTable, onNode [][]int32) []int32 {
	pod := &p.spec.Pod
	if pod.Shared() || pod.MIG != "" {
		return nil
	}
	want := res3{pod.MilliCPU, pod.MemoryMiB, int64(pod.GPUs)}
	fits := func(a res3) bool { return a.cpu >= want.cpu && a.mem >= want.mem && a.gpu >= want.gpu }
	pools := fw.EligiblePools(&p.info, nil)
	chosen := map[int32]bool{}
	used := map[int32]res3{}
	avail := func(n int32) res3 {
		nd := &c.Nodes[n]
		a := res3{nd.FreeCPU, nd.FreeMem, int64(c.FreeDevices(n, pod))}
		for _, id := range onNode[n] {
			// Chosen victims, and lower-priority jobs already stopping
			// (victims terminating: kube-scheduler waits for them rather
			// than preempting more).
			if v := jobs.at(id); chosen[id] || (v.isExiting() && v.spec.Priority < p.spec.Priority) {
				a = a.add(heldOn(v, n))
			}
		}
		return a.sub(used[n])
	}
	group := 0
	for k := p.info.Bound; k < p.spec.Replicas; k++ {
		if g := p.spec.GroupOf(k); len(p.spec.Groups) > 0 && (g != group || k == p.info.Bound) {
			// The job's next pod group: its own pod and pools.
			group = g
			part := p.spec.Part(g)
			pod, _ = p.spec.PodAt(k)
			if pod.Shared() || pod.MIG != "" {
				return nil
			}
			want = res3{pod.MilliCPU, pod.MemoryMiB, int64(pod.GPUs)}
			pools = fw.EligiblePools(&scheduler.JobInfo{ID: p.info.ID, Spec: &part}, pools[:0])
		}
		var best *victimSet
	search:
		for _, pi := range pools {
			pl := &c.Pools[pi]
			if sh := pl.Spec.Sharing; sh.TimeSlicing > 1 || sh.MIGStrategy != "" {
				continue
			}
			for n := pl.First; n < pl.First+pl.Count; n++ {
				if !c.Schedulable(n) {
					continue
				}
				a := avail(n)
				if fits(a) {
					best = &victimSet{node: n}
					break search
				}
				var cands []int32
				total := a
				for _, id := range onNode[n] {
					v := jobs.at(id)
					if chosen[id] || id == p.info.ID || !v.running || v.isExiting() || v.spec.Priority >= p.spec.Priority {
						continue
					}
					cands = append(cands, id)
					total = total.add(heldOn(v, n))
				}
				if len(cands) == 0 || !fits(total) {
					continue
				}
				// Spare the victims not needed, highest priority first and,
				// among equals, the latest started first.
				slices.SortStableFunc(cands, func(x, y int32) int {
					a, b := jobs.at(x), jobs.at(y)
					if a.spec.Priority != b.spec.Priority {
						return int(b.spec.Priority) - int(a.spec.Priority)
					}
					return int(b.att.start - a.att.start)
				})
				vs := &victimSet{node: n, maxPrio: -1 << 40}
				for _, id := range cands {
					h := heldOn(jobs.at(id), n)
					if fits(total.sub(h)) {
						total = total.sub(h)
						continue
					}
					pr := int64(jobs.at(id).spec.Priority)
					vs.jobs = append(vs.jobs, id)
					vs.maxPrio = max(vs.maxPrio, pr)
					vs.sumPrio += pr
				}
				if best == nil || better(vs, best) {
					best = vs
				}
			}
		}
		if best == nil {
			return nil
		}
		for _, id := range best.jobs {
			chosen[id] = true
		}
		used[best.node] = used[best.node].add(want)
	}
	if len(chosen) == 0 {
		return nil
	}
	ids := make([]int32, 0, len(chosen))
	for id := range chosen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// better orders candidate nodes as kube-scheduler does: the lowest
// highest victim priority, then the lowest sum, then fewest victims.
func better(a, b *victimSet) bool {
	switch {
	case len(a.jobs) == 0 || len(b.jobs) == 0:
		return len(a.jobs) == 0 && len(b.jobs) != 0
	case a.maxPrio != b.maxPrio:
		return a.maxPrio < b.maxPrio
	case a.sumPrio != b.sumPrio:
		return a.sumPrio < b.sumPrio
	case len(a.jobs) != len(b.jobs):
		return len(a.jobs) < len(b.jobs)
	}
	return a.node < b.node
}
