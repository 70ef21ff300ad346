package scenarios

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Trace formats.
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
	FormatOpenb = "openb"
)

// What to do with openb pods that never ran in the source trace.
const (
	PendingReplay  = "replay"
	PendingExclude = "exclude"
)

// TraceFormats lists the trace formats OpenTrace reads.
func TraceFormats() []string { return []string{FormatCSV, FormatJSONL, FormatOpenb} }

func knownFormat(f string) bool {
	for _, k := range TraceFormats() {
		if k == f {
			return true
		}
	}
	return false
}

// TraceOptions tune how a trace is read.
type TraceOptions struct {
	// PendingPods is replay (default) or exclude, for openb.
	PendingPods string
}

// TraceSource streams a trace's jobs in submit order. Rows out of order,
// malformed or out of range are InputErrors naming the file and line.
type TraceSource interface {
	Next(j *cluster.JobSpec) (bool, error)
	// Notes says what the reader assumed or set aside, once it is done.
	Notes() []string
	Close() error
}

// OpenTrace opens a trace file of the given format (.gz read directly).
func OpenTrace(path, format string, opts TraceOptions) (TraceSource, error) {
	if !knownFormat(format) {
		return nil, &InputError{File: path, Msg: fmt.Sprintf("unknown trace format %q (known: %s)", format, strings.Join(TraceFormats(), ", "))}
	}
	r, closer, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	var src TraceSource
	switch format {
	case FormatCSV:
		src, err = newCSVSource(path, r, closer)
	case FormatJSONL:
		src, err = newJSONLSource(path, r, closer), nil
	case FormatOpenb:
		src, err = newOpenbSource(path, r, closer, opts)
	}
	if err != nil {
		closer()
		return nil, err
	}
	return src, nil
}

func openMaybeGzip(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, &InputError{File: path, Msg: readErr(err)}
	}
	br := bufio.NewReaderSize(f, 1<<16)
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, &InputError{File: path, Msg: "not a gzip file: " + err.Error()}
		}
		return zr, func() error { zr.Close(); return f.Close() }, nil
	}
	return br, f.Close, nil
}

// interner shares one *Constraints between jobs with the same text.
type interner map[string]*cluster.Constraints

func (in interner) get(key string, build func() (*cluster.Constraints, error)) (*cluster.Constraints, error) {
	if key == "" {
		return nil, nil
	}
	if c, ok := in[key]; ok {
		return c, nil
	}
	c, err := build()
	if err != nil {
		return nil, err
	}
	in[key] = c
	return c, nil
}

// orderCheck enforces non-decreasing submit times.
type orderCheck struct{ last int64 }

func (o *orderCheck) ok(t int64) bool {
	if t < o.last {
		return false
	}
	o.last = t
	return true
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
