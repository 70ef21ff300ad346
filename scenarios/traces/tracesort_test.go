package traces

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

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

func TestShuffledOpenbReplays(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "openb", "openb_pod_list_default.csv")
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

func TestExternalSortKeepsFlags(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "openb", "openb_pod_list_default.csv")
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
