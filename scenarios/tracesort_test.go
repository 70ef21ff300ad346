package scenarios

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// generatedTrace writes a generated native CSV trace of n jobs and a copy
// with its rows shuffled (seeded); it returns both paths.
func generatedTrace(tb testing.TB, dir string, n int) (sorted, shuffled string) {
	tb.Helper()
	var b bytes.Buffer
	w, err := NewNativeWriter(&b, false)
	require.NoError(tb, err)
	require.NoError(tb, GenerateTrace(GenerateOptions{Jobs: n, Seed: 7, GPUs: 1000, Load: 0.8}, w))
	require.NoError(tb, w.Flush())
	sorted = filepath.Join(dir, "sorted.csv")
	require.NoError(tb, os.WriteFile(sorted, b.Bytes(), 0o644))
	shuffled = filepath.Join(dir, "shuffled.csv")
	require.NoError(tb, os.WriteFile(shuffled, shuffleRows(b.String()), 0o644))
	return sorted, shuffled
}

// shuffleRows shuffles the rows after the header, seeded.
func shuffleRows(text string) []byte {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	rows := lines[1:]
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return []byte(strings.Join(lines, "\n") + "\n")
}

// byTimeThenName orders jobs by submit time, jobs submitted together by
// name (a shuffle changes their order, which a stable sort keeps).
func byTimeThenName(jobs []cluster.JobSpec) {
	slices.SortStableFunc(jobs, func(a, b cluster.JobSpec) int {
		if a.Submit != b.Submit {
			return int(a.Submit - b.Submit)
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func sortToBytes(t *testing.T, path, format string, opts SortOptions) ([]byte, SortResult) {
	t.Helper()
	var b bytes.Buffer
	w, err := NewNativeWriter(&b, false)
	require.NoError(t, err)
	res, err := SortTrace(path, format, TraceOptions{}, w, opts)
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	return b.Bytes(), res
}

func TestShuffledTraceReplaysAsSorted(t *testing.T) {
	sorted, shuffled := generatedTrace(t, t.TempDir(), 20000)
	want, src := readAll(t, sorted, FormatNative, TraceOptions{})
	for _, n := range src.Notes() {
		require.NotContains(t, n, "not in time order")
	}
	got, src := readAll(t, shuffled, FormatNative, TraceOptions{})
	require.Contains(t, src.Notes(), "the trace was not in time order: sorted before replay (20000 rows)")
	require.Equal(t, shuffled, src.Info().File)
	require.Len(t, got, len(want))
	byTimeThenName(want)
	byTimeThenName(got)
	require.Equal(t, want, got)
}

func TestExternalSortMatchesInMemory(t *testing.T) {
	sorted, shuffled := generatedTrace(t, t.TempDir(), 20000)
	mem, res := sortToBytes(t, shuffled, FormatNative, SortOptions{})
	require.Equal(t, 0, res.Runs)
	require.Equal(t, 20000, res.Rows)
	tmp := t.TempDir()
	ext, res := sortToBytes(t, shuffled, FormatNative, SortOptions{MemoryRows: 777, TempDir: tmp})
	require.Equal(t, 26, res.Runs)
	require.Equal(t, 20000, res.Rows)
	require.Equal(t, mem, ext)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "the runs' folder is removed")

	// Sorting the sorted trace gives the same jobs in the same order.
	again, _ := sortToBytes(t, sorted, FormatNative, SortOptions{MemoryRows: 1000, TempDir: tmp})
	want, err := os.ReadFile(sorted)
	require.NoError(t, err)
	require.Equal(t, string(want), string(again))
}

func TestExternalSortRemovesRunsOnError(t *testing.T) {
	var b strings.Builder
	b.WriteString("submit,duration\n")
	for i := 0; i < 100; i++ {
		b.WriteString("5,1\n")
	}
	b.WriteString("x,1\n")
	p := filepath.Join(t.TempDir(), "bad.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	tmp := t.TempDir()
	w, err := NewNativeWriter(&bytes.Buffer{}, false)
	require.NoError(t, err)
	_, err = SortTrace(p, FormatCSV, TraceOptions{}, w, SortOptions{MemoryRows: 10, TempDir: tmp})
	requireBadInput(t, err, p, p+`:102:1: submit: "x" is not a number of seconds`)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left)
}

func TestSortedReplayRemovesItsTempFile(t *testing.T) {
	_, shuffled := generatedTrace(t, t.TempDir(), 6000)
	src, err := OpenTrace(shuffled, FormatCSV, TraceOptions{})
	require.NoError(t, err)
	st, ok := src.(*sortedTrace)
	require.True(t, ok, "a shuffled trace is sorted first")
	_, err = os.Stat(st.dir)
	require.NoError(t, err)
	require.NoError(t, src.Close())
	_, err = os.Stat(st.dir)
	require.True(t, os.IsNotExist(err), "the sorted runs' folder is removed on Close")
}

func TestShuffledOpenbReplays(t *testing.T) {
	path := filepath.Join("..", "testdata", "openb", "openb_pod_list_default.csv")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "shuffled_openb.csv")
	require.NoError(t, os.WriteFile(p, shuffleRows(string(data)), 0o644))
	want, _ := readAll(t, path, FormatOpenb, TraceOptions{})
	got, src := readAll(t, p, FormatOpenb, TraceOptions{})
	require.Len(t, got, len(want))
	require.Contains(t, src.Notes(), sortedNote(len(want)))
	require.True(t, slices.IsSortedFunc(got, func(a, b cluster.JobSpec) int { return int(a.Submit - b.Submit) }))
	byTimeThenName(want)
	byTimeThenName(got)
	// Openb's "never ran in the source" flag, which the native format has
	// no column for, is kept through the sort.
	flagged := 0
	for _, j := range want {
		if j.Flags&cluster.FlagNoRecordedRun != 0 {
			flagged++
		}
	}
	require.Positive(t, flagged)
	require.Equal(t, want, got)
}

func TestSortPhillyAbsoluteTimes(t *testing.T) {
	// Absolute times: the sorted trace starts at its earliest row, in
	// memory and through runs alike.
	body := "timestamp,duration,num_gpus,gpu_time,cluster\n"
	rows := []string{"2017-10-03 05:00:00,60,8,1,a", "2017-10-03 04:00:00,60,1,1,b", "2017-10-03 04:30:00,60,16,1,c", "2017-10-03 04:00:00,30,2,1,d"}
	p := filepath.Join(t.TempDir(), "philly.csv")
	require.NoError(t, os.WriteFile(p, []byte(body+strings.Join(rows, "\n")+"\n"), 0o644))
	mem, _ := sortToBytes(t, p, FormatPhilly, SortOptions{})
	ext, res := sortToBytes(t, p, FormatPhilly, SortOptions{MemoryRows: 1, TempDir: t.TempDir()})
	require.Equal(t, 4, res.Runs)
	require.Equal(t, string(mem), string(ext))
	lines := strings.Split(strings.TrimSpace(string(mem)), "\n")
	require.Len(t, lines, 5)
	require.Contains(t, lines[1], "philly-2,b,0,")
	require.Contains(t, lines[2], "philly-4,d,0,")
	require.Contains(t, lines[3], "philly-3,c,1800,")
	require.Contains(t, lines[4], "philly-1,a,3600,")
}

// BenchmarkTraceSort reads a generated trace (the mix of
// GenerateTrace), sorted, against sorting a shuffled copy of it, at 200k
// and 3M rows (generated here, not kept): read-sorted is OpenTrace (the
// order check, then rows handed out as read), read-window the replay
// through the reorder buffer alone, sort-shuffled SortTrace in memory,
// sort-shuffled-external SortTrace in runs of a tenth of the rows (at 3M
// rows the default, 2M rows a run, sorts in two runs), replay-shuffled
// OpenTrace of the shuffled copy (sort, then replay the merge). It
// reports wall and CPU ns, allocations and bytes per row. The 3M case is skipped with
// -short.
func BenchmarkTraceSort(b *testing.B) {
	for _, n := range []int{200_000, 3_000_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			if n > 200_000 && testing.Short() {
				b.Skip("3M rows: not with -short")
			}
			benchTraceSort(b, n)
		})
	}
}

func benchTraceSort(b *testing.B, n int) {
	sorted, shuffled := generatedTrace(b, b.TempDir(), n)
	perRow := func(b *testing.B, f func()) {
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
		rows := float64(b.N) * float64(n)
		cpu := func(r *syscall.Rusage) float64 {
			return float64(r.Utime.Nano() + r.Stime.Nano())
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
		// CPU time (user and system, every thread) is steadier than the
		// wall clock on a shared machine.
		b.ReportMetric((cpu(&ru1)-cpu(&ru0))/rows, "cpu-ns/row")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/rows, "allocs/row")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/rows, "B/row")
	}
	drain := func(b *testing.B, src TraceSource, err error) {
		require.NoError(b, err)
		var j cluster.JobSpec
		rows := 0
		for {
			// Not require.NoError here: it costs more a row than some of
			// what is measured.
			ok, err := src.Next(&j)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			rows++
		}
		require.Equal(b, n, rows)
		require.NoError(b, src.Close())
	}
	b.Run("read-sorted", func(b *testing.B) {
		perRow(b, func() {
			src, err := OpenTrace(sorted, FormatNative, TraceOptions{})
			drain(b, src, err)
		})
	})
	b.Run("read-window", func(b *testing.B) {
		perRow(b, func() {
			src, err := openTraceRaw(sorted, FormatNative, TraceOptions{})
			drain(b, src, err)
		})
	})
	sortRuns := func(rows int) func(b *testing.B) {
		return func(b *testing.B) {
			perRow(b, func() {
				w, err := NewNativeWriter(discard{}, false)
				require.NoError(b, err)
				res, err := SortTrace(shuffled, FormatNative, TraceOptions{}, w, SortOptions{MemoryRows: rows, TempDir: b.TempDir()})
				require.NoError(b, err)
				require.NoError(b, w.Flush())
				require.Equal(b, n, res.Rows)
			})
		}
	}
	if n <= SortMemoryRows {
		b.Run("sort-shuffled", sortRuns(0))
		b.Run("sort-shuffled-external", sortRuns(n/10))
	} else {
		b.Run("sort-shuffled-external", sortRuns(0))
	}
	b.Run("replay-shuffled", func(b *testing.B) {
		perRow(b, func() {
			src, err := OpenTrace(shuffled, FormatNative, TraceOptions{})
			drain(b, src, err)
		})
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestExternalSortKeepsFlags(t *testing.T) {
	path := filepath.Join("..", "testdata", "openb", "openb_pod_list_default.csv")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "shuffled_openb.csv")
	require.NoError(t, os.WriteFile(p, shuffleRows(string(data)), 0o644))
	sorted := func(rows int) []cluster.JobSpec {
		src, err := openTraceRaw(p, FormatOpenb, TraceOptions{})
		require.NoError(t, err)
		defer src.Close()
		s, err := sortRows(src, SortOptions{MemoryRows: rows, TempDir: t.TempDir()})
		require.NoError(t, err)
		defer s.close()
		var jobs []cluster.JobSpec
		for {
			var j cluster.JobSpec
			ok, err := s.next(&j)
			require.NoError(t, err)
			if !ok {
				return jobs
			}
			jobs = append(jobs, j)
		}
	}
	mem, ext := sorted(0), sorted(500)
	require.Equal(t, mem, ext)
	flagged := 0
	for _, j := range ext {
		if j.Flags&cluster.FlagNoRecordedRun != 0 {
			flagged++
		}
	}
	require.Positive(t, flagged)
}

func TestOrderCheck(t *testing.T) {
	write := func(name, body string) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	late := func(head, row string, n int) string {
		var b strings.Builder
		b.WriteString(head)
		b.WriteString("a,100,1\n")
		for i := 0; i < n; i++ {
			b.WriteString(row)
		}
		b.WriteString("z,50,1\n")
		return b.String()
	}
	for _, c := range []struct {
		name, body string
		sorted     bool
	}{
		{"within the window", late("name,submit,duration\n", "b,200,1\n", ReorderWindow-1), false},
		{"past the window", late("name,submit,duration\n", "b,200,1\n", ReorderWindow+1), true},
		{"past the window, quoted (csv path)", late("name,submit,duration\n", "\"b,\",200,1\n", ReorderWindow+1), true},
		{"past the window, comments and CRLF", late("# c\r\nname,submit,duration\r\n", "b,200,1\r\n# x\r\n", ReorderWindow+1), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write("t.csv", c.body)
			jobs, src := readAll(t, p, FormatCSV, TraceOptions{})
			require.Equal(t, strings.Count(c.body, ",1\n")+strings.Count(c.body, ",1\r\n"), len(jobs))
			_, isSorted := src.(*sortedTrace)
			require.Equal(t, c.sorted, isSorted)
			require.Equal(t, "z", jobs[0].Name)
			require.Equal(t, int64(50000), jobs[0].Submit)
		})
	}
	// A bad row in a trace out of order is found as it is sorted, and
	// named as the replay would.
	p := write("bad.csv", late("name,submit,duration\n", "b,200,1\n", ReorderWindow+1)+"q,x,1\n")
	_, err := OpenTrace(p, FormatCSV, TraceOptions{})
	requireBadInput(t, err, p, p+`:4101:3: submit: "x" is not a number of seconds`)
	// In order, it is the replay's to report, as before.
	p = write("bad2.csv", "name,submit,duration\na,1,1\nq,x,1\n")
	src, err := OpenTrace(p, FormatCSV, TraceOptions{})
	require.NoError(t, err)
	require.NoError(t, src.Close())
}

func TestShuffledJSONLAndGzipReplay(t *testing.T) {
	dir := t.TempDir()
	var js bytes.Buffer
	w, err := NewNativeWriter(&js, true)
	require.NoError(t, err)
	require.NoError(t, GenerateTrace(GenerateOptions{Jobs: 9000, Seed: 3, GPUs: 1000, Load: 0.8}, w))
	sorted := filepath.Join(dir, "sorted.jsonl")
	require.NoError(t, os.WriteFile(sorted, js.Bytes(), 0o644))
	lines := strings.Split(strings.TrimSuffix(js.String(), "\n"), "\n")
	rand.New(rand.NewPCG(5, 6)).Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	shuffled := filepath.Join(dir, "shuffled.jsonl")
	require.NoError(t, os.WriteFile(shuffled, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	want, _ := readAll(t, sorted, FormatNative, TraceOptions{})
	got, src := readAll(t, shuffled, FormatNative, TraceOptions{})
	require.Contains(t, src.Notes(), sortedNote(9000))
	byTimeThenName(want)
	byTimeThenName(got)
	require.Equal(t, want, got)

	// A gzip-compressed shuffled CSV.
	sortedCSV, shuffledCSV := generatedTrace(t, dir, 9000)
	data, err := os.ReadFile(shuffledCSV)
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	gzPath := filepath.Join(dir, "shuffled.csv.gz")
	require.NoError(t, os.WriteFile(gzPath, gz.Bytes(), 0o644))
	want, _ = readAll(t, sortedCSV, FormatNative, TraceOptions{})
	got, src = readAll(t, gzPath, FormatNative, TraceOptions{})
	require.Contains(t, src.Notes(), sortedNote(9000))
	byTimeThenName(want)
	byTimeThenName(got)
	require.Equal(t, want, got)
}

// TestSortKeysIsAStableSortByTime: the radix sort orders keys as a
// stable sort by time does, negative times, times that differ in one
// byte alone and ties included.
func TestSortKeysIsAStableSortByTime(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		n    int
		time func() int64
	}{
		{0, nil},
		{1, func() int64 { return 5 }},
		{1000, func() int64 { return r.Int64N(50) }},
		{5000, func() int64 { return r.Int64() - r.Int64() }},
		{5000, func() int64 { return 1_500_000_000_000 + r.Int64N(1<<20)<<16 }},
		{3000, func() int64 { return -r.Int64N(300) }},
		{2000, func() int64 { return 42 }},
	} {
		keys := make([]sortKey, c.n)
		for i := range keys {
			keys[i] = sortKey{at: c.time(), ref: uint64(i)}
		}
		want := slices.Clone(keys)
		slices.SortStableFunc(want, func(a, b sortKey) int { return cmp.Compare(a.at, b.at) })
		got, _ := sortKeys(keys, nil)
		require.Equal(t, want, got, "%d keys", c.n)
	}
}
