package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// stdCSV is what encoding/csv writes for one record.
func stdCSV(t testing.TB, fields []string) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	require.NoError(t, w.Write(fields))
	w.Flush()
	require.NoError(t, w.Error())
	return b.String()
}

func rowOf(t testing.TB, fields []string) string {
	var r csvRow
	var b bytes.Buffer
	for _, f := range fields {
		r.str(f)
	}
	require.NoError(t, r.end(&b))
	require.NoError(t, r.flush(&b))
	return b.String()
}

var csvSeeds = []string{"", "plain", "a,b", `say "hi"`, "two\nlines", "cr\rhere", " leading space", "\tleading tab",
	`\.`, `\.x`, "\u00a0nbsp first", "trailing ", "ünïcode", "\xff\xfe bad utf-8", `"`, `""`, ",", "0/4 nodes are available: 4 Insufficient cpu."}

func TestCSVRowMatchesEncodingCSV(t *testing.T) {
	for _, s := range csvSeeds {
		require.Equal(t, stdCSV(t, []string{s}), rowOf(t, []string{s}), "field %q", s)
	}
	require.Equal(t, stdCSV(t, csvSeeds), rowOf(t, csvSeeds))
}

// FuzzCSVRow holds the row builder to encoding/csv on any text.
func FuzzCSVRow(f *testing.F) {
	for _, s := range csvSeeds {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		fields := []string{a, b, a + b}
		require.Equal(t, stdCSV(t, fields), rowOf(t, fields))
	})
}

func TestMillisecondText(t *testing.T) {
	for ms, want := range map[sim.Time]string{-1: "", 0: "0.000", 7: "0.007", 45: "0.045", 999: "0.999", 1000: "1.000", 61_234: "61.234", 3_600_000_001: "3600000.001"} {
		require.Equal(t, want, msText(ms), "%d ms", ms)
	}
}

// jobsResult is a run of n jobs: even ones completed on pool gpu after a
// wait, odd ones never started, every fifth on half a GPU.
func jobsResult(n int) *sim.Result {
	res := &sim.Result{End: 10_000_000, Pools: []sim.PoolResult{{Spec: cluster.PoolSpec{Name: "gpu", Nodes: 2, GPUsPerNode: 8}}},
		Reasons: []string{"Insufficient nvidia.com/gpu"}}
	res.Jobs = make([]sim.JobRecord, n)
	for i := range res.Jobs {
		j := sim.JobRecord{ID: int32(i), Name: "job-" + strings.Repeat("x", i%3), Queue: "team-a", Replicas: 2, Pod: &cluster.PodSpec{GPUs: 4, MilliCPU: 8000, MemoryMiB: 65536},
			Submit: sim.Time(i) * 1000, Start: -1, End: -1, Duration: 3_600_000, Pool: -1, Reason: -1, Admitted: -1}
		if i%5 == 0 {
			j.Pod.GPUs, j.Pod.GPUMilli = 0, 500
		}
		if i%2 == 0 {
			j.Start, j.End, j.Outcome, j.Pool, j.PodsBound = j.Submit+1_500, j.Submit+1_500+3_600_000, sim.Completed, 0, 2
			j.HeldMilliMs = 2 * 4000 * 3_600_000
		} else {
			j.Outcome, j.Reason = sim.Pending, 0
			j.SetDiagnosis("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
		}
		res.Jobs[i] = j
	}
	return res
}

func TestJobsCSVFieldsByHand(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJobsCSV(&b, jobsResult(2), nil, nil))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	get := func(r int, name string) string { return rows[r][col[name]] }
	// Job 0: half a GPU, submitted at 0, started 1.5 s later, ran an hour;
	// 2 pods x 4 GPUs x 1 h held = 8 GPU-hours.
	require.Equal(t, "0.500", get(1, "gpus_per_pod"))
	require.Equal(t, "0.000", get(1, "submit_s"))
	require.Equal(t, "1.500", get(1, "start_s"))
	require.Equal(t, "3601.500", get(1, "end_s"))
	require.Equal(t, "1.500", get(1, "wait_s"))
	require.Equal(t, "3601.500", get(1, "jct_s"))
	require.Equal(t, "completed", get(1, "outcome"))
	require.Equal(t, "gpu", get(1, "pool"))
	require.Equal(t, "8.000", get(1, "gpu_hours"))
	require.Equal(t, "", get(1, "cost_usd"))
	// Job 1: never started, so no start, end or wait; its diagnosis, with
	// commas, read back whole.
	require.Equal(t, "4", get(2, "gpus_per_pod"))
	require.Equal(t, "1.000", get(2, "submit_s"))
	require.Equal(t, "", get(2, "start_s"))
	require.Equal(t, "", get(2, "wait_s"))
	require.Equal(t, "pending", get(2, "outcome"))
	require.Equal(t, "Insufficient nvidia.com/gpu", get(2, "wait_reason"))
	require.Equal(t, "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", get(2, "diagnosis"))
	require.Equal(t, "", get(2, "admitted_s"))
}

// A million-row jobs.csv must not allocate per row: ten times the jobs,
// the same allocations.
func TestJobsCSVAllocatesNothingPerRow(t *testing.T) {
	allocs := func(n int) float64 {
		res := jobsResult(n)
		var b bytes.Buffer
		b.Grow(400 * n)
		return testing.AllocsPerRun(3, func() {
			b.Reset()
			if err := WriteJobsCSV(&b, res, nil, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(1_000), allocs(10_000)
	require.LessOrEqual(t, large, small+2, "1,000 jobs: %.0f allocations; 10,000: %.0f", small, large)
}

// BenchmarkJobsCSV writes jobs.csv of 100,000 jobs (ns/op over 100,000:
// the cost of a row).
func BenchmarkJobsCSV(b *testing.B) {
	res := jobsResult(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := WriteJobsCSV(io.Discard, res, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// The digit writers against fmt and strconv: every boundary of a digit
// count, and random values up to the largest time.
func TestDigitsMatchFmt(t *testing.T) {
	vals := []uint64{0, 1, 9, 10, 99, 100, 999, 1000, 1001, math.MaxInt64}
	for p := uint64(10); p < math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 10_000 {
		vals = append(vals, r.Uint64N(math.MaxInt64), r.Uint64N(1<<32), r.Uint64N(100_000))
	}
	for _, v := range []uint64{1e19 - 1, 1e19, 1e19 + 1, math.MaxUint64} {
		require.Equal(t, strconv.FormatUint(v, 10), string(appendUint(nil, v)))
	}
	for _, v := range vals {
		require.Equal(t, strconv.FormatUint(v, 10), string(appendUint(nil, v)))
		require.Equal(t, fmt.Sprintf("%d.%03d", v/1000, v%1000), string(appendMs(nil, sim.Time(v))), "%d ms", v)
	}
}

// Rows are written in blocks: a jobs.csv of many blocks reads back with
// every row whole and in order.
func TestJobsCSVManyBlocks(t *testing.T) {
	const n = 5_000
	var b bytes.Buffer
	require.NoError(t, WriteJobsCSV(&b, jobsResult(n), nil, nil))
	require.Greater(t, b.Len(), 10*csvFlushAt)
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, n+1)
	for i, row := range rows[1:] {
		require.Equal(t, strconv.Itoa(i), row[0])
		require.Equal(t, "job-"+strings.Repeat("x", i%3), row[1])
	}
}
