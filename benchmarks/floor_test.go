package benchmarks

import (
	"io"
	"runtime"
	"runtime/debug"
	"testing"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/engine"
)

// Issue 34's floor: the least work a job costs on this machine, against
// which the 1M replay is measured. The floor reads a native CSV trace
// (parsing each row into a job), pushes each job's end event on an engine
// queue at submit + duration and pops the events due before the next
// submit (one push and one pop a job, the queue holding the jobs that
// would be running on a cluster that never makes one wait), and writes
// each popped job's jobs.csv record (to io.Discard, 4,096 records at a
// time). No scheduling, no summary, no output file.

// floorRecords is how many records the floor formats at a time.
const floorRecords = 4096

// floorEvent is the floor's engine event: the job whose end it is.
type floorEvent struct{ rec int32 }

// nativeOfPhilly writes the jobs of a Philly trace as a native CSV trace
// (the same jobs, so the floor and the replay see the same work).
func nativeOfPhilly(b *testing.B, philly string) string {
	b.Helper()
	src, err := traces.OpenTrace(philly, traces.FormatPhilly, traces.TraceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	return nativeTrace(b, "native.csv", func(w *traces.NativeWriter) error {
		var j cluster.JobSpec
		for {
			ok, err := src.Next(&j)
			if err != nil || !ok {
				return err
			}
			if err := w.Write(&j); err != nil {
				return err
			}
		}
	})
}

// floor does the floor's work over the native trace and returns the
// jobs it recorded.
func floor(b *testing.B, native string) int {
	src, err := traces.OpenTrace(native, traces.FormatNative, traces.TraceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	q := engine.New[floorEvent](1 << 12)
	// specs holds the running jobs' specs by slot; free lists the slots
	// that are free.
	var specs []cluster.JobSpec
	var free []int32
	res := &sim.Result{Jobs: make([]sim.JobRecord, 0, floorRecords)}
	pods := make([]cluster.PodSpec, floorRecords)
	recorded := 0
	flush := func() {
		if err := reports.WriteJobsCSV(io.Discard, res, nil, nil); err != nil {
			b.Fatal(err)
		}
		recorded += len(res.Jobs)
		res.Jobs = res.Jobs[:0]
	}
	record := func(at engine.Time, slot int32) {
		if len(res.Jobs) == floorRecords {
			flush()
		}
		j := &specs[slot]
		k := len(res.Jobs)
		pods[k] = j.Pod
		res.Jobs = append(res.Jobs, sim.JobRecord{
			ID: int32(recorded + k), Reason: -1, Name: j.Name, Queue: j.Queue, Priority: j.Priority,
			Replicas: j.Replicas, PodsBound: j.Replicas, Pod: &pods[k], Submit: j.Submit, Start: j.Submit,
			End: at, Duration: j.Duration, Outcome: sim.Completed, Pool: -1, Admitted: -1,
			Attempts: 1, AllocMilli: int64(j.Replicas) * int64(j.Pod.GPUs) * 1000,
			HeldMilliMs: int64(j.Replicas) * int64(j.Pod.GPUs) * 1000 * j.Duration,
		})
		free = append(free, slot)
	}
	popUntil := func(t engine.Time) {
		for {
			at, ok := q.PeekTime()
			if !ok || at > t {
				return
			}
			at, ev, _ := q.Pop()
			record(at, ev.rec)
		}
	}
	var j cluster.JobSpec
	for {
		ok, err := src.Next(&j)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			break
		}
		popUntil(j.Submit)
		var slot int32
		if n := len(free); n > 0 {
			slot, free = free[n-1], free[:n-1]
		} else {
			slot = int32(len(specs))
			specs = append(specs, cluster.JobSpec{})
		}
		specs[slot] = j
		q.Push(j.Submit+j.Duration, floorEvent{rec: slot})
	}
	popUntil(1<<62 - 1)
	flush()
	return recorded
}

// BenchmarkFloorAndReplay measures, in each iteration, the floor over
// 1M jobs (the trace of BenchmarkScale1250Nodes as native CSV) and then
// the 1M replay of that trace on 1,250 x 8 GPUs as simulate does without
// --out (BenchmarkScale1250Nodes/jobs=1M less the output folder), and
// reports each one's CPU seconds and the replay as a multiple of the
// floor (issue 34's target: at most 4). Run it with -benchtime 1x
// -count 3 and take the medians: the ratio is of one process on the
// same machine, which a loaded machine disturbs less than either time.
func BenchmarkFloorAndReplay(b *testing.B) {
	const jobs = 1_000_000
	c := scaleCase{jobs: jobs, offered: 1000, nodes: 1250}
	philly := phillyTrace(b, jobs, c.offered)
	native := nativeOfPhilly(b, philly)
	runtime.GC()
	debug.FreeOSMemory()
	b.ResetTimer()
	var floorCPU, replayCPU float64
	for i := 0; i < b.N; i++ {
		cpu := cpuTime()
		if n := floor(b, native); n != jobs {
			b.Fatalf("floor: %d jobs recorded, want %d", n, jobs)
		}
		runtime.GC() // each side pays for collecting its own garbage
		mid := cpuTime()
		if n := c.replay(b, philly, ""); n != jobs {
			b.Fatalf("replay: %d jobs simulated, want %d", n, jobs)
		}
		runtime.GC()
		floorCPU += (mid - cpu).Seconds()
		replayCPU += (cpuTime() - mid).Seconds()
	}
	b.StopTimer()
	b.ReportMetric(floorCPU/float64(b.N), "floor-cpu-s/op")
	b.ReportMetric(replayCPU/float64(b.N), "replay-cpu-s/op")
	b.ReportMetric(replayCPU/floorCPU, "replay/floor")
}
