package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Workers is the number of workers to use when the caller asks for 0:
// one per core the process may use.
func Workers(n int) int {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return n
}

// Pool runs n independent jobs on up to workers goroutines and returns
// their results in input order. Each job is a whole run (the engine stays
// single-threaded); job i must depend only on i, so the results do not
// depend on the number of workers.
//
// When jobs fail, the error returned is that of the failed job with the
// lowest index (not the first to fail in wall-clock time), so the same
// inputs give the same error whatever the number of workers. Once a job
// has failed, jobs after it that have not started are not started; jobs
// before it still run, since one of them may fail too and win. A
// cancelled ctx stops jobs from starting and Pool returns ctx's error
// unless a job failed first in index order.
//
// A job that panics is returned as an error naming its index rather than
// crashing the process from a worker goroutine.
//
// While it runs, the collector keeps a floor of free heap per worker (see
// gcFloor): runs that allocate a few MB each no longer collect every few
// MB.
func Pool[T any](ctx context.Context, n, workers int, job func(ctx context.Context, i int) (T, error)) ([]T, error) {
	if n < 0 {
		return nil, fmt.Errorf("pool: %d jobs", n)
	}
	results := make([]T, n)
	if n == 0 {
		return results, ctx.Err()
	}
	workers = min(Workers(workers), n)
	gc := startGCFloor(workers)
	defer gc.stop()
	errs := make([]error, n)
	started := make([]bool, n)

	var (
		mu     sync.Mutex
		next   int
		failed = n // lowest failed index so far
	)
	// take hands out the next index, or -1 when there is none to start.
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if next >= n || next > failed || ctx.Err() != nil {
			return -1
		}
		i := next
		next++
		started[i] = true
		return i
	}
	fail := func(i int) {
		mu.Lock()
		if i < failed {
			failed = i
		}
		mu.Unlock()
	}
	runOne := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				errs[i] = fmt.Errorf("job %d panicked: %v", i, r)
				fail(i)
			}
		}()
		r, err := job(ctx, i)
		if err != nil {
			errs[i] = err
			fail(i)
			return
		}
		results[i] = r
	}
	if workers == 1 {
		for i := take(); i >= 0; i = take() {
			runOne(i)
		}
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := take(); i >= 0; i = take() {
					runOne(i)
				}
			})
		}
		wg.Wait()
	}
	for i, err := range errs {
		if err != nil {
			return results, err
		}
		if !started[i] {
			break
		}
	}
	for i := range started {
		if !started[i] {
			if err := ctx.Err(); err != nil {
				return results, err
			}
			return results, errors.New("pool: a job was not started") // unreachable without an error above
		}
	}
	return results, nil
}
