package sim

import (
	"math"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// timeline keeps the run's job counts and their integrals and cuts the
// Timeline into buckets: pending and running workload jobs (replica pods
// are not counted) integrated over time, each pool's allocation and supply
// integrals (the cluster's) as of the last bucket end, and the
// fragmentation tracker when fragmentation is sampled.
type timeline struct {
	// queue-length and running-job integrals, up to qLast
	pending, running int64
	qLast            Time
	pendInt, runInt  int64

	tl       Timeline
	lastTick Time
	tlAlloc  []int64 // pool allocation integrals at the last tick
	tlSup    []int64 // pool supply integrals at the last tick
	tlPend   int64
	tlRun    int64
	frag     *fragTracker // nil unless fragmentation is sampled
}

// closeBucket ends the timeline bucket at the last integration: the
// pools' allocation and supply, and the fragmentation sampled under the
// scheduler's pod mix (plug) when it is tracked.
func (l *timeline) closeBucket(c *cluster.Cluster, plug *scheduler.Handle) {
	l.close(c)
	if l.tl.Levels != nil {
		sampleLevels(c, l.tl.Levels)
	}
	if l.frag != nil {
		l.frag.sample(c, plug, l.tl.FragMilli)
	}
}

// addPending and addRunning change the pending and running job counts
// by d for job j (replica pods are not counted).
func (l *timeline) addPending(t Time, j *jobState, d int64) {
	if j.svc == 0 {
		l.integrate(t)
		l.pending += d
	}
}

func (l *timeline) addRunning(t Time, j *jobState, d int64) {
	if j.svc == 0 {
		l.integrate(t)
		l.running += d
	}
}

// started moves a workload job from pending to running at t.
func (l *timeline) started(t Time) {
	l.integrate(t)
	l.pending--
	l.running++
}

// integrate brings the integrals up to now.
func (l *timeline) integrate(now Time) {
	if dt := now - l.qLast; dt > 0 {
		l.pendInt += l.pending * dt
		l.runInt += l.running * dt
		l.qLast = now
	}
}

// close ends the bucket that ends now: each pool's allocation and supply
// since the last bucket end (c's integrals) and the job integrals.
func (l *timeline) close(c *cluster.Cluster) {
	for p := range c.Pools {
		a, sup := c.Pools[p].Integrals()
		l.tl.Allocated[p] = append(l.tl.Allocated[p], a-l.tlAlloc[p])
		l.tl.Supplied[p] = append(l.tl.Supplied[p], sup-l.tlSup[p])
		l.tlAlloc[p], l.tlSup[p] = a, sup
	}
	l.tl.PendingJobMs = append(l.tl.PendingJobMs, l.pendInt-l.tlPend)
	l.tl.RunningJobMs = append(l.tl.RunningJobMs, l.runInt-l.tlRun)
	l.tlPend, l.tlRun = l.pendInt, l.runInt
}

// fragTracker samples the FGD fragmentation of every pool at each bucket
// end, recomputing only the nodes that changed since the last sample.
// Time-sliced and MIG pools count 0: the measure is defined for whole GPUs
// and shares of them.
type fragTracker struct {
	version int
	nodeVer []uint32 // node version + 1 at the last computation
	node    []float64
}

// sample appends each pool's fragmentation (milli-GPUs) to fragMilli.
func (f *fragTracker) sample(c *cluster.Cluster, plug *scheduler.Handle, fragMilli [][]int64) {
	if f.node == nil {
		f.node = make([]float64, len(c.Nodes))
		f.nodeVer = make([]uint32, len(c.Nodes))
	}
	if f.version != plug.MixVersion {
		clear(f.nodeVer)
		f.version = plug.MixVersion
	}
	per := make([]int64, len(c.Pools))
	for n := range c.Nodes {
		nd := &c.Nodes[n]
		if sh := c.Pools[nd.Pool].Spec.Sharing; sh.TimeSlicing > 1 || sh.MIGStrategy != "" || nd.State == cluster.NodeAbsent {
			continue // the measure is for whole GPUs and their shares, of nodes present
		}
		if f.nodeVer[n] != nd.Version+1 {
			f.node[n] = models.Fragmentation(c.FragState(int32(n)), plug.Mix)
			f.nodeVer[n] = nd.Version + 1
		}
		per[nd.Pool] += int64(math.Round(f.node[n]))
	}
	for p := range per {
		fragMilli[p] = append(fragMilli[p], per[p])
	}
}
