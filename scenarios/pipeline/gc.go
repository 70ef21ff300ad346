package pipeline

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A pool of small runs (a sweep's points, validate's seeds, the spot
// curves) allocates a few MB per run over a live heap of a few MB. At the
// default GOGC=100 the collector then runs every few MB allocated: about
// 80 cycles for the 180 runs of the default-capacity sweep, each with a
// fixed cost and background marking that, with one worker, takes the
// second core (one worker used more CPU than wall time, and two workers
// gained 1.5x, not 2x).
//
// While a pool runs, gcFloor keeps at least gcFloorPerWorker bytes per
// worker between collections: after every collection it sets GOGC to
// 100*floor/live when the live heap is smaller than the floor, and to 100
// when it is larger. The heap may then grow to live + max(live, floor)
// instead of 2 x live: a big trace's runs keep the default behaviour and
// their memory, small runs collect 4-10 times less often, and the extra
// memory is at most the floor (gcFloorPerWorker x workers, at most
// gcFloorMax). A GOGC other than 100 when the pool starts (the GOGC
// environment variable, debug.SetGCPercent, or an enclosing pool's floor)
// is left alone: Scenario and Replications start the floor before they
// build anything, and their pool leaves it alone. Started only at the
// pool, the first allocations before it, with GOGC just put back to 100
// by an earlier pool over its heap of garbage, would start a collection
// that then runs beside the workers, one more each time (at -cpu 2,
// BenchmarkCoresSpotWhatIf collected 0.95 times an op when it built the
// variants before the pool, 0.55-0.7 times when it built them on the
// workers, 0.45 with the floor started first; BenchmarkCoresValidate8Seeds
// 0.55 when it primed the scenarios before the pool, 0.40 since). The
// setting is the process's: two pools started at once
// by one program share it, and the first to finish puts GOGC back to 100.
const (
	gcFloorPerWorker = 32 << 20
	gcFloorMax       = 512 << 20
	gcMaxPercent     = 1600
)

// gcFloor is the collector setting of one pool.
type gcFloor struct {
	mu      sync.Mutex
	floor   uint64
	percent int // current setting; 0: not tuning
	live    []metrics.Sample
}

// startGCFloor starts tuning for a pool of workers (nil: GOGC is not
// 100, left alone); stop puts GOGC back.
func startGCFloor(workers int) *gcFloor {
	if old := debug.SetGCPercent(100); old != 100 {
		debug.SetGCPercent(old)
		return nil
	}
	g := &gcFloor{floor: min(uint64(workers)*gcFloorPerWorker, gcFloorMax), percent: 100,
		live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	g.adjust()
	return g
}

// setWorkers sets the floor for workers (callers that start the floor
// before they know how many runs the pool gets); a nil g does nothing.
func (g *gcFloor) setWorkers(workers int) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.floor = min(uint64(workers)*gcFloorPerWorker, gcFloorMax)
	g.mu.Unlock()
	g.adjust()
}

// adjust sets GOGC from the live heap the last collection marked, and
// asks to be called again after the next collection.
func (g *gcFloor) adjust() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.percent == 0 {
		return
	}
	metrics.Read(g.live)
	var live uint64
	if g.live[0].Value.Kind() == metrics.KindUint64 {
		live = g.live[0].Value.Uint64()
	}
	if p := gcPercentFor(g.floor, live); p != g.percent {
		debug.SetGCPercent(p)
		g.percent = p
	}
	// The cleanup runs once a collection has found the sentinel
	// unreachable: right after the next cycle.
	runtime.AddCleanup(&gcSentinel{}, (*gcFloor).adjust, g)
}

// gcSentinel is allocated only to be collected; its pointer keeps it out
// of the tiny allocator, whose blocks are freed together.
type gcSentinel struct{ _ *byte }

// gcPercentFor is the GOGC that leaves floor bytes between collections
// over a live heap of live bytes: 100*floor/live, within [100,
// gcMaxPercent].
func gcPercentFor(floor, live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	return int(max(100, min(gcMaxPercent, 100*floor/live)))
}

// stop puts GOGC back to 100; a nil g does nothing.
func (g *gcFloor) stop() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.percent != 100 {
		debug.SetGCPercent(100)
	}
	g.percent = 0
}
