package traces

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// writePhilly writes n rows of a Philly processed trace (the mix of
// benchmarks/scale_test.go: Poisson arrivals, 1, 2, 4 or 8 GPUs, lognormal
// durations, two virtual clusters), in time order; with shuffle, every
// 1000th row is moved far later (a trace the replay must sort first).
func writePhilly(tb testing.TB, path string, n int, shuffle bool) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	w.WriteString("timestamp,duration,num_gpus,gpu_time,cluster\n")
	r := rand.New(rand.NewPCG(17, uint64(n)))
	t0 := time.Date(2017, 10, 1, 0, 0, 0, 0, time.UTC)
	at := 0.0
	var line []byte
	rows := make([][]byte, 0, n)
	for range n {
		at += r.ExpFloat64() * 5
		d := int64(max(1, math.Round(1200*math.Exp(1.5*r.NormFloat64()))))
		g := int64(1) << r.IntN(4)
		vc := "vc1"
		if r.Float64() < 0.3 {
			vc = "vc2"
		}
		line = t0.Add(time.Duration(at)*time.Second).AppendFormat(line[:0], TraceTimeLayout)
		line = append(line, ',')
		line = strconv.AppendInt(line, d, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, g, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, d*g, 10)
		line = append(line, ',')
		line = append(line, vc...)
		line = append(line, '\n')
		rows = append(rows, append([]byte(nil), line...))
	}
	if shuffle {
		for i := 0; i+10000 < n; i += 1000 {
			rows[i], rows[i+10000] = rows[i+10000], rows[i]
		}
	}
	for _, l := range rows {
		w.Write(l)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkReadPhilly reads a 1M-row Philly trace (generated here, not
// kept) as the replay does: open is OpenTrace then every job (the order
// check included), window the rows through the reorder buffer alone with
// no order check, order the order check alone, sizing OpenTraceSizing and
// DeriveCluster, size-trace SizeTrace (its light pass: the cluster and the
// order), derived SizeTrace then OpenTrace taking its order and every job
// (simulate --cluster derive), late a trace with rows too
// late for the buffer (OpenTrace sorts it first). It reports CPU ns (user
// and system), allocations and bytes a row.
func BenchmarkReadPhilly(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	sorted, late := filepath.Join(dir, "philly.csv"), filepath.Join(dir, "late.csv")
	writePhilly(b, sorted, n, false)
	perRow := func(b *testing.B, f func()) { benchPerRow(b, n, f) }
	drain := func(b *testing.B, src TraceSource, err error) { benchDrain(b, src, err, n) }
	b.Run("open", func(b *testing.B) {
		perRow(b, func() {
			src, err := OpenTrace(sorted, FormatPhilly, TraceOptions{})
			drain(b, src, err)
		})
	})
	b.Run("window", func(b *testing.B) {
		perRow(b, func() {
			src, err := openTraceRaw(sorted, FormatPhilly, TraceOptions{})
			drain(b, src, err)
		})
	})
	b.Run("order", func(b *testing.B) {
		perRow(b, func() {
			if o, ok := csvOrder(sorted, FormatPhilly); !ok || o != orderSorted {
				b.Fatalf("order %v %v, want sorted", o, ok)
			}
		})
	})
	b.Run("sizing", func(b *testing.B) {
		perRow(b, func() {
			src, err := OpenTraceSizing(sorted, FormatPhilly, TraceOptions{})
			if err != nil {
				b.Fatal(err)
			}
			pools, _, err := DeriveCluster(src)
			if err != nil || len(pools) != 1 {
				b.Fatal(pools, err)
			}
			src.Close()
		})
	})
	b.Run("size-trace", func(b *testing.B) {
		perRow(b, func() {
			sc, err := SizeTrace(sorted, FormatPhilly, TraceOptions{}, nil)
			if err != nil || len(sc.Pools) != 1 || !sc.known {
				b.Fatal(sc, err)
			}
		})
	})
	b.Run("derived", func(b *testing.B) {
		perRow(b, func() {
			sc, err := SizeTrace(sorted, FormatPhilly, TraceOptions{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			src, err := OpenTrace(sorted, FormatPhilly, TraceOptions{Scan: sc})
			drain(b, src, err)
		})
	})
	writePhilly(b, late, n, true)
	b.Run("late", func(b *testing.B) {
		perRow(b, func() {
			src, err := OpenTrace(late, FormatPhilly, TraceOptions{})
			drain(b, src, err)
		})
	})
}

// benchPerRow runs f b.N times and reports per row of the rows f reads:
// the wall and CPU time (user and system, every thread: steadier than the
// wall clock on a shared machine), the allocations and the bytes.
func benchPerRow(b *testing.B, rows int, f func()) {
	var before, after runtime.MemStats
	var ru0, ru1 syscall.Rusage
	runtime.GC()
	runtime.ReadMemStats(&before)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for range b.N {
		f()
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	runtime.ReadMemStats(&after)
	n := float64(b.N) * float64(rows)
	cpu := func(r *syscall.Rusage) float64 { return float64(r.Utime.Nano() + r.Stime.Nano()) }
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/row")
	b.ReportMetric((cpu(&ru1)-cpu(&ru0))/n, "cpu-ns/row")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/row")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/row")
}

// benchDrain reads every job of src (opened with err) and closes it,
// failing unless it read rows jobs (b.Fatal, not require: that costs more
// a row than some of what is measured).
func benchDrain(b *testing.B, src TraceSource, err error, rows int) {
	if err != nil {
		b.Fatal(err)
	}
	var j cluster.JobSpec
	read := 0
	for {
		ok, err := src.Next(&j)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			break
		}
		read++
	}
	if read != rows {
		b.Fatalf("%d rows read, want %d", read, rows)
	}
	if err := src.Close(); err != nil {
		b.Fatal(err)
	}
}
