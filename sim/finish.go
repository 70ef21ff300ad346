package sim

import (
	"fmt"
	"math"
	"runtime"

	"gpuplan.dev/gpuplan/models"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// finish closes the books at the end of the run and builds the Result.
func (r *runner) finish() (res *Result, err error) {
	end := r.lastEvent
	if r.cfg.Horizon > 0 {
		end = r.cfg.Horizon
	}
	// Remaining whole buckets, then the partial last one.
	for b := r.lastTick + r.tl.Interval; b <= end; b += r.tl.Interval {
		r.c.Advance(b)
		r.integrate(b)
		r.closeBucket(b)
		r.lastTick = b
	}
	r.c.Advance(end)
	r.integrate(end)
	if end > r.lastTick {
		r.closeBucket(end)
	}
	if err := r.checkBooks(); err != nil {
		return nil, invariant(err)
	}
	res = &Result{
		Seed:      r.cfg.Seed,
		Horizon:   r.cfg.Horizon,
		End:       end,
		Reasons:   nil,
		Timeline:  r.tl,
		Truncated: r.truncated || r.hasNext,
		Dynamic:   r.capacity != nil,
	}
	res.Queue.Policy = r.cfg.Queue.Policy
	res.Queue.Backfill = r.cfg.Queue.Backfill
	res.Queue.BackfillDepth = r.cfg.Queue.BackfillDepth
	for i := range r.c.Pools {
		a, s := r.c.Integrals(i)
		pr := PoolResult{Spec: r.c.Pools[i].Spec, AllocatedMilliMs: a, SuppliedMilliMs: s, Usage: r.c.Usage(i)}
		if r.capacity != nil {
			pr.Capacity = r.capacity.Stats[i]
		}
		res.Pools = append(res.Pools, pr)
	}
	// One pass over the jobs: the records not built as their jobs
	// finished, with the usage of pods still held up to the end. Replica
	// pods are entries of the job table but not jobs: records are numbered
	// without them.
	diag := map[string]string{}
	out := int32(-1)
	for id := int32(0); id < r.njobs; id++ {
		if r.chunks[chunkOf(id)] == nil {
			// Every job of the chunk was recorded as it finished (a plain
			// run: no replica pods, out is id).
			id = chunkEnd(chunkOf(id)) - 1
			out = id
			continue
		}
		j := r.job(id)
		if !j.finished {
			p := &j.spec.Pod
			for _, pl := range j.placed {
				r.book(j, r.c.Nodes[pl.Node].Pool, [3]int64{int64(pl.Milli), p.MilliCPU, p.MemoryMiB}, end-pl.At, 0, 0)
			}
		}
		if j.svc != 0 {
			continue
		}
		out++
		if j.recorded {
			continue
		}
		rec := r.record(j, out)
		if j.finished {
			continue
		}
		// Running only while an attempt runs: a job that started once and
		// was disrupted or preempted since waits again (in its restart
		// backoff, or in the queue) and is pending.
		if j.running && !j.awaitingAdmission() {
			rec.Outcome = Running
			continue
		}
		rec.Outcome = Pending
		if x := j.x; x != nil && x.backoffUntil > 0 {
			r.recs.diagnose(rec, fmt.Sprintf("BackOff: disrupted %d time(s); its pods are recreated after the restart backoff, at %s", x.disruptions, durationText(x.backoffUntil)))
			continue
		}
		if j.awaitingAdmission() {
			msg := r.adm.ctl.Reason(id)
			if msg == "" {
				msg = "waiting for admission: ClusterQueue " + r.adm.ctl.ClusterQueueOf(j.spec.Queue) + " is StrictFIFO and its head does not fit"
			}
			r.recs.diagnose(rec, msg)
			continue
		}
		key := fmt.Sprintf("%p|%+v|%d", j.spec.Constraints, j.spec.Pod, j.info.Remaining())
		msg, ok := diag[key]
		if !ok {
			d, err := r.fw.Diagnose(end, &j.info, false)
			if err != nil {
				return nil, invariant(err)
			}
			msg = d.Message()
			diag[key] = msg
		}
		r.recs.diagnose(rec, msg)
	}
	if r.frag != nil {
		res.Nodes = r.nodeStates()
	}
	res.Reasons = r.fw.Reasons()
	res.Stats = r.stats
	if r.adm != nil {
		res.Admission = r.adm.result(end)
	}
	res.Stats.Disruptions = r.dstats.byCause
	res.Stats.JobsFailed = r.dstats.failed
	res.Stats.Attempts = r.sched.Attempts
	res.Stats.Skipped = r.sched.Skipped
	if res.Services, err = r.serviceResults(end, int(r.recs.n)); err != nil {
		return nil, err
	}
	r.release()
	res.Jobs = r.recs.result()
	return res, nil
}

// bigRun is the size of job table past which the run's end collects its
// engine state at once (when a quarter of it or more is garbage).
const bigRun = 1 << 18

// release drops the job table, whose state is now in the records. A big
// run's heap may hold much garbage by now: every job's state (333 MB at
// 1M) in a run that is not plain, or the job-table chunks a plain run
// dropped and could not reuse (its queue kept finished jobs). One
// collection then frees it before the outputs allocate, and they reuse
// its memory rather than grow the heap. A run whose garbage is small (a
// small run, or a plain run that reused its chunks) skips the collection,
// which would cost a mark of every record for little.
func (r *runner) release() {
	r.chunks, r.spare = nil, nil
	garbage := int64(r.njobs)
	if r.plain {
		garbage = int64(r.discarded) << chunkBits
	}
	if r.njobs >= bigRun && garbage >= bigRun/4 {
		runtime.GC()
	}
}

// checkBooks recomputes every node's usage from the live placements and
// compares it with the cluster's free counters.
func (r *runner) checkBooks() error {
	type use struct {
		cpu, mem, milli int64
		pods            int32
	}
	used := make([]use, len(r.c.Nodes))
	poolMilli := make([]int64, len(r.c.Pools))
	for id := int32(0); id < r.njobs; id++ {
		if r.chunks[chunkOf(id)] == nil {
			id = chunkEnd(chunkOf(id)) - 1
			continue // finished jobs, recorded: nothing placed
		}
		j := r.job(id)
		if j.finished && len(j.placed) > 0 {
			return fmt.Errorf("finished job %d still holds %d placements", id, len(j.placed))
		}
		p := &j.spec.Pod
		for _, pl := range j.placed {
			u := &used[pl.Node]
			u.cpu += p.MilliCPU
			u.mem += p.MemoryMiB
			u.milli += int64(pl.Milli)
			u.pods++
			poolMilli[r.c.Nodes[pl.Node].Pool] += int64(pl.Milli)
		}
		if j.running && int32(len(j.placed)) != j.spec.Replicas {
			return fmt.Errorf("running job %d has %d of %d pods placed", id, len(j.placed), j.spec.Replicas)
		}
	}
	for n := range r.c.Nodes {
		nd := &r.c.Nodes[n]
		spec := &r.c.Pools[nd.Pool].Spec
		u := used[n]
		if nd.FreeCPU+u.cpu != spec.MilliCPU || nd.FreeMem+u.mem != spec.MemoryMiB ||
			nd.FreeMilli+u.milli != nd.CapMilli || nd.Pods != u.pods {
			return fmt.Errorf("node %d of pool %s: free counters do not match its live pods", n, spec.Name)
		}
		if nd.FreeCPU < 0 || nd.FreeMem < 0 || nd.FreeMilli < 0 {
			return fmt.Errorf("node %d of pool %s is over capacity", n, spec.Name)
		}
	}
	// A node offers what its devices hold: a GPU whose MIG layout leaves
	// compute slices unused offers less than 1000 (checked per device).
	if err := r.c.CheckDevices(); err != nil {
		return err
	}
	for p := range r.c.Pools {
		if r.c.Pools[p].AllocMilli != poolMilli[p] {
			return fmt.Errorf("pool %s counts %d milli-GPU allocated, its pods hold %d", r.c.Pools[p].Spec.Name, r.c.Pools[p].AllocMilli, poolMilli[p])
		}
	}
	return nil
}

// nodeStates is every node's free capacity and fragmentation at the end.
func (r *runner) nodeStates() []NodeState {
	out := make([]NodeState, len(r.c.Nodes))
	for n := range r.c.Nodes {
		nd := &r.c.Nodes[n]
		out[n] = NodeState{Pool: nd.Pool, FreeMilliCPU: nd.FreeCPU, FreeMemoryMiB: nd.FreeMem, FreeMilliGPU: nd.FreeMilli, Pods: nd.Pods}
		if sh := r.c.Pools[nd.Pool].Spec.Sharing; sh.TimeSlicing <= 1 && sh.MIGStrategy == "" {
			out[n].FragMilliGPU = int64(math.Round(models.Fragmentation(r.c.FragState(int32(n)), r.plug.Mix)))
		}
	}
	return out
}

// minAvailable is a job's gang size when it is below the job's (0: all).
func minAvailable(j *cluster.JobSpec) int32 {
	if j.MinAvailable > 0 && j.MinAvailable < j.Replicas {
		return j.MinAvailable
	}
	return 0
}
