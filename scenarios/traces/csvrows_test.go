package traces

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// csvReadAll reads every record with its field positions, or the first
// error, as one text to compare.
func csvReadAll(read func() ([]string, error), pos func(int) (int, int), offset func() int64) string {
	var b strings.Builder
	for range 1000 {
		rec, err := read()
		if errors.Is(err, io.EOF) {
			b.WriteString("EOF")
			return b.String()
		}
		for i, f := range rec {
			l, c := pos(i)
			fmt.Fprintf(&b, "%q@%d:%d ", f, l, c)
		}
		fmt.Fprintf(&b, "off %d", offset())
		if err != nil {
			fmt.Fprintf(&b, " err %v", err)
			var pe *csv.ParseError
			if !errors.As(err, &pe) || pe.Err != csv.ErrFieldCount {
				return b.String()
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkRowReader compares rowReader with encoding/csv on data: the same
// records, field positions, offsets and errors.
func checkRowReader(t *testing.T, data string, comment rune, fields int, views bool) {
	t.Helper()
	cr := csv.NewReader(strings.NewReader(data))
	cr.Comment, cr.FieldsPerRecord = comment, fields
	want := csvReadAll(cr.Read, cr.FieldPos, cr.InputOffset)
	rr := newRowReader(strings.NewReader(data), 16)
	rr.Comment, rr.FieldsPerRecord, rr.views = comment, fields, views
	got := csvReadAll(rr.Read, rr.FieldPos, rr.InputOffset)
	if got != want {
		t.Fatalf("input %q (comment %q, fields %d):\nencoding/csv: %s\nrowReader:    %s", data, comment, fields, want, got)
	}
}

func TestRowReaderAsEncodingCSV(t *testing.T) {
	for _, data := range []string{
		"", "\n", "a,b\n1,2\n", "a,b\r\n1,2\r\n", "a,b\n1,2", "a,b\n1,2\r", "a,b\n\n\r\n1,2\n",
		"# c\na,b\n#x,y,z\n1,2\n", "a,b\n1,2,3\n4,5\n", "a,b\n1\n",
		"a,b\n\"x,y\",2\n3,4\n", "a,b\n\"x\ny\",2\n3,4\n", "a,b\n1,\"open\n", "a,b\nx\"y,2\n", "a,b\n\"x\"y,2\n",
		"a,b\n\"\"\"q\"\"\",2\n", "a,b\n1,2\r\r\n", "a,\r b\n 1 ,2\n", "h\n" + strings.Repeat("x", 40) + "\n" + strings.Repeat("y", 17) + "\n",
		"a,b\n#\"c\",d\n1,2\n", "a,b\n\"1\",\"2\"\n3,4\n5,\"6\n7\"\n8,9", ",\n,\n", "a\n\"\"\n",
	} {
		for _, views := range []bool{false, true} {
			checkRowReader(t, data, '#', 0, views)
			checkRowReader(t, data, 0, -1, views)
		}
	}
}

// FuzzRowReader holds rowReader to encoding/csv on any input.
func FuzzRowReader(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a,b\n\"x\ny\",2\n", "# c\r\na,b\r\n1,2", "a\n\"q\"\"\n"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, data string, comments bool) {
		comment := rune(0)
		if comments {
			comment = '#'
		}
		checkRowReader(t, data, comment, 0, true)
	})
}

// TestTimeWindowAsReorderer holds the order check's time-only window to
// the replay's reorder buffer: on random times, a little or much out of
// order, both find the same late row or none, and sorted is exactly "no
// time below the one before it".
func TestTimeWindowAsReorderer(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[traceOrder]int{}
	for trial := range 60 {
		n := 1 + rng.IntN(3*ReorderWindow)
		times := make([]int64, n)
		for i := range times {
			times[i] = int64(i) * 10
		}
		switch trial % 3 {
		case 1: // local swaps, within the window
			for range 1 + rng.IntN(50) {
				i := rng.IntN(n)
				j := min(n-1, i+rng.IntN(ReorderWindow/2))
				times[i], times[j] = times[j], times[i]
			}
		case 2: // one row moved far
			i, j := rng.IntN(n), rng.IntN(n)
			times[i], times[j] = times[j], times[i]
		}
		sorted := slices.IsSorted(times)
		ro := reorderer{window: ReorderWindow, keepTimes: true}
		late := false
		var j cluster.JobSpec
		for i, at := range times {
			ro.push(&absJob{at: at})
			for !late && ro.ready(i == n-1) {
				late = ro.pop(&j) != nil
			}
		}
		want := orderWindow
		switch {
		case late:
			want = orderLate
		case sorted:
			want = orderSorted
		}
		w := newTimeWindow()
		got := orderWindow
		for _, at := range times {
			if !w.add(at) {
				got = orderLate
				break
			}
		}
		if got != orderLate {
			got = w.order()
		}
		if got != want {
			t.Fatalf("trial %d (%d rows): order %d, the reorder buffer says %d", trial, n, got, want)
		}
		seen[got]++
	}
	if seen[orderSorted] == 0 || seen[orderWindow] == 0 || seen[orderLate] == 0 {
		t.Fatalf("the trials should give every order: %v", seen)
	}
}

// TestNativeWriterQuotesAsEncodingCSV: the native writer quotes a text
// field exactly where encoding/csv's writer does.
func TestNativeWriterQuotesAsEncodingCSV(t *testing.T) {
	for _, f := range []string{"", "plain", "a,b", `say "hi"`, " lead", "\tlead", "trail ", "line\nbreak", "cr\rhere", `\.`, `\.x`, "\u00a0nbsp", "ü,"} {
		var want strings.Builder
		cw := csv.NewWriter(&want)
		if err := cw.Write([]string{f}); err != nil {
			t.Fatal(err)
		}
		cw.Flush()
		if got := string(appendCSVField(nil, f)) + "\n"; got != want.String() {
			t.Errorf("field %q: wrote %q, encoding/csv writes %q", f, got, want.String())
		}
	}
}

// TestRunRowRoundTrip: a row written to a sorted run reads back whole,
// node affinity, tolerations and flags included.
func TestRunRowRoundTrip(t *testing.T) {
	in := absJob{at: -5, seq: 7, line: 12, job: cluster.JobSpec{Name: "a,\"b", Queue: "q", Submit: -5, Duration: 60_000, Deadline: 90_000, Replicas: 4, Priority: -3,
		Flags: cluster.FlagNoRecordedRun, Pod: cluster.PodSpec{MilliCPU: 8000, MemoryMiB: 65536, GPUs: 2, GPUMemMiB: 1024, MIG: "1g.10gb"},
		Constraints: &cluster.Constraints{NodeSelector: map[string]string{"b": "2", "a": "1"},
			Affinity:    []cluster.NodeSelectorTerm{{{Key: "k", Op: cluster.OpIn, Values: []string{"x", "y"}}}, {{Key: "z", Op: cluster.OpExists}}},
			Tolerations: []cluster.Toleration{{Key: "spot", Operator: "Exists", Effect: cluster.NoSchedule}}}}}
	plain := absJob{at: 3, seq: 8, job: cluster.JobSpec{Name: "p", Queue: "default", Submit: 3, Duration: 1, Replicas: 1}}
	var d rowDecoder
	for _, want := range []absJob{in, plain} {
		rec, err := appendRow(nil, &want)
		if err != nil {
			t.Fatal(err)
		}
		var got absJob
		if err := d.decodeRow(rec, &got); err != nil {
			t.Fatalf("read: %v", err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("read back %+v, wrote %+v", got, want)
		}
		// A record cut short, or with bytes after it, is an error.
		for _, bad := range [][]byte{rec[:len(rec)-1], rec[:3], append(rec[:len(rec):len(rec)], 0)} {
			if err := d.decodeRow(bad, &got); err == nil {
				t.Fatalf("a record of %d bytes (of %d) read back", len(bad), len(rec))
			}
		}
	}
}

// TestThousandthsAsAppendFloat: times and GPU shares are written as
// strconv.AppendFloat writes n/1000 to three places, at the bounds of the
// integer path and at random.
func TestThousandthsAsAppendFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	ns := []int64{0, 1, -1, 5, 999, -999, 1000, 1001, -1001, 123456789, exactThousandths - 1, -(exactThousandths - 1), exactThousandths, -exactThousandths, math.MaxInt64, math.MinInt64 + 1}
	for range 100000 {
		ns = append(ns, r.Int64N(2*exactThousandths)-exactThousandths, r.Int64N(1<<40), -r.Int64N(5000))
	}
	for _, n := range ns {
		want := string(strconv.AppendFloat(nil, float64(n)/1000, 'f', 3, 64))
		if got := string(appendThousandths(nil, n)); got != want {
			t.Fatalf("%d: wrote %s, AppendFloat writes %s", n, got, want)
		}
	}
}

// FuzzRunRecord: a sorted run's record that reads back is one a row
// writes again the same way; any other bytes are an error, never a panic.
func FuzzRunRecord(f *testing.F) {
	for _, a := range []absJob{{at: -5, seq: 7, job: cluster.JobSpec{Name: "n", Queue: "q", Replicas: 1,
		Constraints: &cluster.Constraints{NodeSelector: map[string]string{"a": "1"}, Affinity: []cluster.NodeSelectorTerm{{{Key: "k", Op: cluster.OpIn, Values: []string{"x"}}}},
			Tolerations: []cluster.Toleration{{Key: "spot", Operator: "Exists"}}}}}, {at: 3, seq: 8}} {
		rec, err := appendRow(nil, &a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		var d rowDecoder
		var a, b absJob
		if d.decodeRow(rec, &a) != nil {
			return
		}
		again, err := appendRow(nil, &a)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.decodeRow(again, &b); err != nil {
			t.Fatalf("a record written again does not read back: %v", err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("read back %+v, then %+v", a, b)
		}
	})
}
