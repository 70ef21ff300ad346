package sim

import (
	"sync"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Prefetch reads src ahead of the run on a goroutine of its own, in
// batches, so that parsing a trace overlaps the simulation on another
// core. The engine stays single-threaded: it takes the same jobs in the
// same order, and src sees the same calls to Next as when the run reads
// it itself (each into the previous job's copy), the reader stopping
// where the run does: at the end, at an error, or at the first job
// submitted at or after horizon (when positive); only a job the run
// itself refuses (out of order, invalid) ends the run with the reader up
// to a few batches ahead, which matters to nothing but src's row count
// behind that error. The caller must call
// Stop once the run is over; src is then the caller's again (its notes,
// its file).
func Prefetch(src JobSource, horizon Time) *Prefetcher {
	p := &Prefetcher{
		src:     src,
		horizon: horizon,
		full:    make(chan *jobBatch, prefetchBatches),
		free:    make(chan *jobBatch, prefetchBatches),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	for range prefetchBatches {
		p.free <- &jobBatch{jobs: make([]cluster.JobSpec, prefetchBatch)}
	}
	go p.read()
	return p
}

// Prefetcher is a JobSource that Prefetch fills.
type Prefetcher struct {
	src        JobSource
	horizon    Time
	full, free chan *jobBatch
	stop, done chan struct{}
	once       sync.Once
	cur        *jobBatch
	i          int
}

// A jobBatch holds n jobs, then the end of the source (end) or its error.
type jobBatch struct {
	jobs []cluster.JobSpec
	n    int
	end  bool
	err  error
}

const (
	prefetchBatch   = 256
	prefetchBatches = 4
)

func (p *Prefetcher) read() {
	defer close(p.done)
	var prev cluster.JobSpec
	for {
		var b *jobBatch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		b.n, b.end, b.err = 0, false, nil
		for b.n < len(b.jobs) && !b.end && b.err == nil {
			j := &b.jobs[b.n]
			*j = prev
			ok, err := p.src.Next(j)
			switch {
			case err != nil:
				b.err = err
			case !ok:
				b.end = true
			default:
				prev = *j
				b.n++
				// The run reads no further than the first job past its horizon.
				b.end = p.horizon > 0 && j.Submit >= p.horizon
			}
		}
		select {
		case p.full <- b:
		case <-p.stop:
			return
		}
		if b.end || b.err != nil {
			return
		}
	}
}

// Next implements JobSource.
func (p *Prefetcher) Next(j *cluster.JobSpec) (bool, error) {
	for p.cur == nil || p.i >= p.cur.n {
		if c := p.cur; c != nil {
			switch {
			case c.err != nil:
				return false, c.err
			case c.end:
				return false, nil
			}
			p.free <- c
		}
		p.cur, p.i = <-p.full, 0
	}
	*j = p.cur.jobs[p.i]
	p.i++
	return true, nil
}

// Stop ends the reading and waits for the reader to be done with src.
func (p *Prefetcher) Stop() {
	p.once.Do(func() {
		close(p.stop)
		<-p.done
	})
}
