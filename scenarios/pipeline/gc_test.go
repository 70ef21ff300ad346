package pipeline

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		floor, live uint64
		want        int
	}{
		{32 * mib, 8 * mib, 400},   // 8 MiB live + 4 x 8 MiB = 32 MiB between collections
		{64 * mib, 5 * mib, 1280},  // 64/5 = 12.8
		{32 * mib, 32 * mib, 100},  // the floor reached: the default
		{32 * mib, 500 * mib, 100}, // a big heap: the default, never less
		{32 * mib, 1 * mib, 1600},  // 3200 capped
		{32 * mib, 0, 1600},        // nothing known yet
	} {
		if got := gcPercentFor(c.floor, c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB, %d bytes) = %d, want %d", c.floor/mib, c.live, got, c.want)
		}
	}
}

func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// withGOGC runs the test at GOGC=percent and puts the caller's back.
func withGOGC(t *testing.T, percent int) {
	old := debug.SetGCPercent(percent)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

// waitGOGC polls until GOGC satisfies ok (the floor follows the heap
// after a collection, from the cleanup goroutine).
func waitGOGC(t *testing.T, what string, ok func(int64) bool) int64 {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		runtime.GC()
		if g := gogc(); ok(g) {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC = %d after 5 s, want %s (live heap %d bytes)", gogc(), what, liveHeap())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPoolKeepsAHeapFloorAndPutsGOGCBack(t *testing.T) {
	withGOGC(t, 100)
	var small, big int64
	_, err := Pool(context.Background(), 1, 1, func(context.Context, int) (int, error) {
		// A small live heap (the test binary's few MB): GOGC is raised so
		// that 32 MiB (one worker's floor) are allocated between cycles.
		small = waitGOGC(t, "above 100", func(g int64) bool { return g > 100 })
		// 48 MiB live, more than the floor: the default again.
		ballast := make([]byte, 48<<20)
		big = waitGOGC(t, "100", func(g int64) bool { return g == 100 })
		runtime.KeepAlive(ballast)
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if small <= 100 || big != 100 {
		t.Fatalf("GOGC %d over a small heap and %d over 48 MiB, want above 100 and 100", small, big)
	}
	if g := gogc(); g != 100 {
		t.Fatalf("GOGC = %d after the pool, want 100 back", g)
	}
}

func TestPoolLeavesTheUsersGOGCAlone(t *testing.T) {
	withGOGC(t, 50)
	inside, err := Pool(context.Background(), 2, 2, func(context.Context, int) (int64, error) {
		runtime.GC()
		return gogc(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := gogc(); inside[0] != 50 || inside[1] != 50 || g != 50 {
		t.Fatalf("GOGC %v inside the pool and %d after, want the user's 50 every time", inside, g)
	}
}

// Scenario and Replications start the floor before they know how many
// workers their pool gets, then set it: GOGC follows the floor of the
// workers set, and the pool inside leaves it alone.
func TestFloorStartedBeforeThePoolFollowsItsWorkers(t *testing.T) {
	withGOGC(t, 100)
	runtime.GC()
	g := startGCFloor(1)
	if want := int64(gcPercentFor(gcFloorPerWorker, liveHeap())); gogc() != want {
		t.Fatalf("GOGC = %d with one worker's floor, want %d", gogc(), want)
	}
	g.setWorkers(4)
	want := int64(gcPercentFor(4*gcFloorPerWorker, liveHeap()))
	if gogc() != want {
		t.Fatalf("GOGC = %d with four workers' floor, want %d", gogc(), want)
	}
	inside, err := Pool(context.Background(), 2, 2, func(context.Context, int) (int64, error) { return gogc(), nil })
	if err != nil {
		t.Fatal(err)
	}
	if want > 100 && (inside[0] != want || inside[1] != want || gogc() != want) {
		t.Fatalf("GOGC %v inside the pool and %d after it, want the enclosing floor's %d", inside, gogc(), want)
	}
	g.stop()
	if gogc() != 100 {
		t.Fatalf("GOGC = %d after stop, want 100 back", gogc())
	}
}
