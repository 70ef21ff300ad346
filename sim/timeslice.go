package sim

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Time-slicing: the device plugin advertises each GPU several times and
// the pods on one GPU take turns. A job on time-sliced GPUs progresses at
// 1/k of full speed (less the pool's context-switch overhead), where k is
// the most pods sharing any of its GPUs, so
// each change of sharers re-times the jobs on that GPU. Memory is not
// isolated: a job whose start takes a GPU's declared memory past its
// capacity is OOM-killed at once.

// slicedGPUs lists the time-sliced physical GPUs job j's pods are on.
func slicedGPUs(c *cluster.Cluster, j *jobState) []int32 {
	if !j.sliced {
		return nil
	}
	var out []int32
	for _, pl := range j.placed {
		if !c.TimeSliced(pl.Node) {
			continue
		}
		for m := pl.GPUs; m != 0; m &= m - 1 {
			g := c.PhysGPU(pl.Node, bits.TrailingZeros64(m))
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

// startSliced starts a job whose pods are on time-sliced GPUs.
func (r *runner) startSliced(t Time, j *jobState) error {
	gpus := slicedGPUs(r.c, j)
	node := j.placed[0].Node
	for _, g := range gpus {
		if used, capacity := r.c.GPUMemory(g, node); capacity > 0 && used > capacity {
			return r.oomKill(t, j, g, used, capacity)
		}
	}
	r.share.start(t, j, gpus, r)
	return nil
}

// start starts job j on time-sliced GPUs gpus at t: it and their other
// sharers are re-timed. The attempt restores its checkpoint first
// (complete books the restore as time lost, as it does off time-sliced
// GPUs), then does the work left; on time-sliced GPUs it writes no
// checkpoints.
func (g *gpuSharing) start(t Time, j *jobState, gpus []int32, ev eventSink) {
	x := j.ext()
	x.slice.work = float64(j.restoreTime() + j.spec.Duration - j.savedWork())
	x.slice.rate, x.slice.rated = 1, t
	for _, p := range gpus {
		g.onGPU[p] = append(g.onGPU[p], j.info.ID)
	}
	g.retime(t, gpus, ev)
}

// oomKill ends a job that would overfill a GPU's memory (or, under a
// Volcano PodFailed policy, acts as it says).
func (r *runner) oomKill(t Time, j *jobState, g int32, used, capacity int64) error {
	if err := r.releaseAll(t, j, 0, 0); err != nil {
		return err
	}
	r.tline.addRunning(t, j, -1)
	j.running = false
	if rec := j.spec.Recovery; rec != nil && rec.Volcano != nil && rec.Volcano.OnFailed != cluster.VolcanoSync {
		// Its pods stay counted bound until the pass ends (the scheduler
		// then lets it go); the requeue event resets them.
		j.sliced = false
		j.ext().disruptions++
		return r.volcanoEvent(t, j, rec.Volcano.OnFailed, "PodFailed", fmt.Sprintf("OOM on a time-sliced GPU: %d of %d MiB declared", used, capacity), true)
	}
	j.end = t
	j.finished = true
	j.outcome = OOMKilled
	j.diag = fmt.Sprintf("OOM: the pods sharing its time-sliced GPU declare %d MiB of the GPU's %d MiB", used, capacity)
	r.st.finished++
	r.adm.finish(t, j, r)
	return nil
}

// stop removes a job that stopped from its GPUs and re-times the rest.
func (g *gpuSharing) stop(t Time, j *jobState, gpus []int32, ev eventSink) {
	for _, p := range gpus {
		g.onGPU[p] = slices.DeleteFunc(g.onGPU[p], func(id int32) bool { return id == j.info.ID })
	}
	g.retime(t, gpus, ev)
}

// retime brings every running job on the given GPUs to its new rate and
// moves its finish event.
func (g *gpuSharing) retime(t Time, gpus []int32, ev eventSink) {
	c := g.c
	for _, p := range gpus {
		for _, id := range g.onGPU[p] {
			j := g.jobs.at(id)
			rate := 1.0
			node := j.placed[0].Node
			for _, h := range slicedGPUs(c, j) {
				rate = min(rate, c.SliceRate(node, c.Sharers(h)))
			}
			x := j.x
			x.slice.work -= float64(t-x.slice.rated) * x.slice.rate
			x.slice.work = max(x.slice.work, 0)
			x.slice.rate, x.slice.rated = rate, t
			if rate < 1 {
				j.slowed = true
			}
			end := t + Time(math.Ceil(x.slice.work/rate))
			if d := j.dl.at; d > 0 && d < end {
				end = d
			}
			if j.att.finish.Valid() {
				ev.cancel(j.att.finish)
			}
			j.att.finish = ev.push(end, event{kind: evFinish, job: id})
		}
	}
}
