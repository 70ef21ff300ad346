package pipeline

import (
	"encoding/json"
	"sync"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// JobStreams shares synthetic job streams among runs (a sweep's points):
// a run whose workload section, seed and horizon an earlier run had
// replays that run's jobs instead of drawing them again. A synthetic
// stream is a function of those three alone (the classes, their recovery
// and Volcano settings, the seed's random streams, the horizon where it
// stops), so the replayed jobs are the ones the run would draw, field for
// field. The streams are kept for the life of the JobStreams, up to
// maxJobs jobs in all; past that, runs draw their own. Safe for
// concurrent use; the jobs are shared read-only (a run copies each one as
// it reads it).
type JobStreams struct {
	mu      sync.Mutex
	streams map[streamKey]*jobStream
	jobs    int
	maxJobs int
}

type streamKey struct {
	workload string
	seed     uint64
	horizon  int64
}

type jobStream struct {
	once sync.Once
	jobs []cluster.JobSpec
	err  error
}

// NewJobStreams keeps up to maxJobs jobs of streams.
func NewJobStreams(maxJobs int) *JobStreams {
	return &JobStreams{streams: map[streamKey]*jobStream{}, maxJobs: maxJobs}
}

// source is the workload b's run reads: the shared stream of sc's
// synthetic workload at b's seed and horizon (drawn now by b's own
// generator if no run had it), or b's own workload when it is no
// synthetic stream with a horizon, or the streams are full.
func (c *JobStreams) source(sc *scenarios.Scenario, b *scenarios.Built) sim.JobSource {
	g, ok := b.Config.Workload.(*scenarios.Generator)
	if !ok || b.Config.Horizon <= 0 {
		return b.Config.Workload
	}
	w, err := json.Marshal(sc.Spec.Workload)
	if err != nil {
		return g
	}
	key := streamKey{string(w), b.Config.Seed, b.Config.Horizon}
	c.mu.Lock()
	st := c.streams[key]
	if st == nil {
		if c.jobs >= c.maxJobs {
			c.mu.Unlock()
			return g
		}
		st = &jobStream{}
		c.streams[key] = st
	}
	c.mu.Unlock()
	st.once.Do(func() {
		for {
			var j cluster.JobSpec
			more, err := g.Next(&j)
			if err != nil {
				st.err = err
				return
			}
			if !more {
				break
			}
			st.jobs = append(st.jobs, j)
		}
		st.jobs = st.jobs[:len(st.jobs):len(st.jobs)]
		c.mu.Lock()
		c.jobs += len(st.jobs)
		c.mu.Unlock()
	})
	if st.err != nil {
		// Drawn by this run's generator or another's: the run reads a
		// generator that fails the same way.
		return &failing{st.err}
	}
	return &sim.SliceSource{Jobs: st.jobs}
}

// failing is a workload whose first read fails.
type failing struct{ err error }

func (f *failing) Next(*cluster.JobSpec) (bool, error) { return false, f.err }
