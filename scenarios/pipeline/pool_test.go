package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestPoolResultsInInputOrderWhateverTheWorkers(t *testing.T) {
	// Job i sleeps longer the lower its index, so with several workers the
	// jobs finish in reverse order; the results must still be in input
	// order and equal the one-worker results.
	const n = 24
	job := func(_ context.Context, i int) (string, error) {
		time.Sleep(time.Duration(n-i) * 100 * time.Microsecond)
		return fmt.Sprintf("r%d=%d", i, i*i), nil
	}
	one, err := Pool(context.Background(), n, 1, job)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2, 3, 8, 100} {
		got, err := Pool(context.Background(), n, w, job)
		if err != nil {
			t.Fatal(err)
		}
		for i := range one {
			if want := fmt.Sprintf("r%d=%d", i, i*i); got[i] != want || one[i] != want {
				t.Fatalf("workers %d: result %d = %q (one worker %q), want %q", w, i, got[i], one[i], want)
			}
		}
	}
}

func TestPoolRunsJobsConcurrently(t *testing.T) {
	var now, peak atomic.Int32
	_, err := Pool(context.Background(), 8, 4, func(_ context.Context, i int) (int, error) {
		c := now.Add(1)
		for {
			p := peak.Load()
			if c <= p || peak.CompareAndSwap(p, c) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		now.Add(-1)
		return i, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p < 2 || p > 4 {
		t.Fatalf("peak concurrency %d, want between 2 and 4 on 4 workers", p)
	}
}

func TestPoolLowestIndexErrorWins(t *testing.T) {
	// Jobs 5 and 9 fail; job 9 fails at once, job 5 only after a delay, so
	// in wall-clock time 9 fails first. The error must be job 5's for
	// every worker count.
	for _, w := range []int{1, 2, 4, 16} {
		var ran atomic.Int32
		_, err := Pool(context.Background(), 20, w, func(_ context.Context, i int) (int, error) {
			ran.Add(1)
			switch i {
			case 5:
				time.Sleep(10 * time.Millisecond)
				return 0, errors.New("job 5 failed")
			case 9:
				return 0, errors.New("job 9 failed")
			}
			return i, nil
		})
		if err == nil || err.Error() != "job 5 failed" {
			t.Fatalf("workers %d: error %v, want job 5's", w, err)
		}
		if w == 1 && ran.Load() != 6 {
			t.Fatalf("one worker ran %d jobs, want 6 (0..5, then stop)", ran.Load())
		}
	}
}

func TestPoolCancelStopsStartingJobs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	_, err := Pool(ctx, 100, 2, func(_ context.Context, i int) (int, error) {
		if ran.Add(1) == 3 {
			cancel()
		}
		return i, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if r := ran.Load(); r > 4 {
		t.Fatalf("%d jobs ran after cancelling at the third, want at most 4 (one per worker in flight)", r)
	}
}

func TestPoolPanicIsAnError(t *testing.T) {
	_, err := Pool(context.Background(), 3, 2, func(_ context.Context, i int) (int, error) {
		if i == 1 {
			panic("boom")
		}
		return i, nil
	})
	if err == nil || err.Error() != "job 1 panicked: boom" {
		t.Fatalf("error %v, want job 1's panic", err)
	}
}

func TestPoolNoJobs(t *testing.T) {
	got, err := Pool(context.Background(), 0, 4, func(context.Context, int) (int, error) { return 1, nil })
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want no results and no error", got, err)
	}
}
