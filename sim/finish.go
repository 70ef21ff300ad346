package sim

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// finish closes the books at the end of the run and builds the Result.
func (r *runner) finish() (res *Result, err error) {
	end := r.st.lastEvent
	if r.cfg.Horizon > 0 {
		end = r.cfg.Horizon
	}
	// Remaining whole buckets, then the partial last one.
	for b := r.tline.lastTick + r.tline.tl.Interval; b <= end; b += r.tline.tl.Interval {
		r.c.Advance(b)
		r.tline.integrate(b)
		r.tline.closeBucket(r.c, r.sc.plug)
		r.svc.close(b)
		r.tline.lastTick = b
	}
	r.c.Advance(end)
	r.tline.integrate(end)
	if end > r.tline.lastTick {
		r.tline.closeBucket(r.c, r.sc.plug)
		r.svc.close(end)
	}
	if err := r.jobs.checkBooks(r.c); err != nil {
		return nil, invariant(err)
	}
	res = &Result{
		Seed:      r.cfg.Seed,
		Horizon:   r.cfg.Horizon,
		End:       end,
		Reasons:   nil,
		Timeline:  r.tline.tl,
		Truncated: r.feed.truncated || r.feed.hasNext,
		Dynamic:   r.disr.capacity != nil,
	}
	res.Queue.Policy = r.cfg.Queue.Policy
	res.Queue.Backfill = r.cfg.Queue.Backfill
	res.Queue.BackfillDepth = r.cfg.Queue.BackfillDepth
	for i := range r.c.Pools {
		a, s := r.c.Pools[i].Integrals()
		pr := PoolResult{Spec: r.c.Pools[i].Spec, AllocatedMilliMs: a, SuppliedMilliMs: s, Usage: r.c.Pools[i].Usage()}
		if r.disr.capacity != nil {
			pr.Capacity = r.disr.capacity.StatsAt(int32(i), end)
		}
		res.Pools = append(res.Pools, pr)
	}
	// One pass over the jobs: the records not built as their jobs
	// finished, with the usage of pods still held up to the end. Replica
	// pods are entries of the job table but not jobs: records are numbered
	// without them.
	diag := map[string]string{}
	out := int32(-1)
	// built is the record built last, counted once its diagnosis is in
	// (-1: none).
	built := int32(-1)
	for id := int32(0); id < r.jobs.njobs; id++ {
		if built >= 0 {
			r.jobs.recs.built(built)
			built = -1
		}
		if r.jobs.gone(id) {
			// A job recorded as it finished (a plain run).
			out++
			continue
		}
		j := r.jobs.at(id)
		if !j.finished {
			p := &j.spec.Pod
			for k, pl := range j.placed {
				if len(j.spec.Groups) > 0 {
					p, _ = j.spec.PodAt(int32(k))
				}
				j.book(r.c.Nodes[pl.Node].Pool, [3]int64{int64(pl.Milli), p.MilliCPU, p.MemoryMiB}, end-pl.At, 0, 0)
			}
		}
		if j.svc != 0 {
			continue
		}
		out++
		if j.recorded {
			continue
		}
		rec := r.jobs.record(j, out, r.adm != nil)
		built = out
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
			r.jobs.recs.diagnose(rec, fmt.Sprintf("BackOff: disrupted %d time(s); its pods are recreated after the restart backoff, at %s", x.disruptions, durationText(x.backoffUntil)))
			continue
		}
		if j.awaitingAdmission() {
			msg := r.adm.ctl.Reason(id)
			if msg == "" {
				msg = "waiting for admission: ClusterQueue " + r.adm.ctl.ClusterQueueOf(j.spec.Queue) + " is StrictFIFO and its head does not fit"
			}
			if j.diag != "" {
				msg = j.diag + "; " + msg
			}
			r.jobs.recs.diagnose(rec, msg)
			continue
		}
		if j.diag != "" {
			// Admitted (it fit its quota) but no node could ever hold it.
			r.jobs.recs.diagnose(rec, j.diag+"; admitted, it holds its quota while its pods stay pending")
			continue
		}
		key := fmt.Sprintf("%p|%+v|%d|%p", j.spec.Constraints, j.spec.Pod, j.info.Remaining(), j.spec.Groups)
		msg, ok := diag[key]
		if !ok {
			d, err := r.fw.Diagnose(end, &j.info, false)
			if err != nil {
				return nil, invariant(err)
			}
			msg = d.Message()
			diag[key] = msg
		}
		r.jobs.recs.diagnose(rec, msg)
	}
	if built >= 0 {
		r.jobs.recs.built(built)
	}
	if r.tline.frag != nil {
		res.Nodes = nodeStates(r.c, r.sc.plug.Mix)
	}
	res.Reasons = r.fw.Reasons()
	res.Stats = r.st.stats
	if r.adm != nil {
		res.Admission = r.adm.result(end)
	}
	res.Stats.Disruptions = r.disr.dstats.byCause
	res.Stats.JobsFailed = r.disr.dstats.failed
	res.Stats.Attempts = r.sched.Attempts
	res.Stats.Skipped = r.sched.Skipped
	if res.Services, err = r.svc.results(end, int(r.jobs.recs.n)); err != nil {
		return nil, err
	}
	r.jobs.release()
	if res.Jobs, res.recs, err = r.jobs.recs.result(); err != nil {
		return nil, err
	}
	return res, nil
}

// checkBooks recomputes every node's usage from the live placements of
// the table's jobs and compares it with the cluster's free counters.
func (jt *jobTable) checkBooks(c *cluster.Cluster) error {
	type use struct {
		cpu, mem, milli int64
		pods            int32
	}
	used := make([]use, len(c.Nodes))
	poolMilli := make([]int64, len(c.Pools))
	for id := int32(0); id < jt.njobs; id++ {
		if jt.gone(id) {
			continue // finished, recorded: nothing placed
		}
		j := jt.at(id)
		if j.finished && len(j.placed) > 0 {
			return fmt.Errorf("finished job %d still holds %d placements", id, len(j.placed))
		}
		p := &j.spec.Pod
		for k, pl := range j.placed {
			if len(j.spec.Groups) > 0 {
				p, _ = j.spec.PodAt(int32(k))
			}
			u := &used[pl.Node]
			u.cpu += p.MilliCPU
			u.mem += p.MemoryMiB
			u.milli += int64(pl.Milli)
			u.pods++
			poolMilli[c.Nodes[pl.Node].Pool] += int64(pl.Milli)
		}
		if j.running && int32(len(j.placed)) != j.spec.Replicas {
			return fmt.Errorf("running job %d has %d of %d pods placed", id, len(j.placed), j.spec.Replicas)
		}
	}
	for n := range c.Nodes {
		nd := &c.Nodes[n]
		spec := &c.Pools[nd.Pool].Spec
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
	if err := c.CheckDevices(); err != nil {
		return err
	}
	for p := range c.Pools {
		if c.Pools[p].AllocMilli != poolMilli[p] {
			return fmt.Errorf("pool %s counts %d milli-GPU allocated, its pods hold %d", c.Pools[p].Spec.Name, c.Pools[p].AllocMilli, poolMilli[p])
		}
	}
	return nil
}

// nodeStates is every node's free capacity and fragmentation (under the
// pod mix) at the end.
func nodeStates(c *cluster.Cluster, mix *models.PodMix) []NodeState {
	out := make([]NodeState, len(c.Nodes))
	for n := range c.Nodes {
		nd := &c.Nodes[n]
		out[n] = NodeState{Pool: nd.Pool, FreeMilliCPU: nd.FreeCPU, FreeMemoryMiB: nd.FreeMem, FreeMilliGPU: nd.FreeMilli, Pods: nd.Pods}
		if sh := c.Pools[nd.Pool].Spec.Sharing; sh.TimeSlicing <= 1 && sh.MIGStrategy == "" {
			out[n].FragMilliGPU = int64(math.Round(models.Fragmentation(c.FragState(int32(n)), mix)))
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
