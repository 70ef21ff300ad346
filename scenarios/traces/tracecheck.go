package traces

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Checks shared by the trace, price and profile readers: every input file
// is a regular file, every line (and every CSV record) is bounded, a
// leading byte order mark is dropped, and error messages quote at most
// MaxQuote bytes of what they were given.

// maxTraceSeconds bounds a time or duration in a trace, in seconds
// (about 285,000 years): far below where milliseconds overflow.
const maxTraceSeconds = 9e12

// maxTraceMillis is maxTraceSeconds in milliseconds.
const maxTraceMillis = int64(maxTraceSeconds * 1000)

// maxTextBytes bounds a text field a job keeps (a name, a queue, a node
// selector or toleration list, GPU models): the reorder buffer holds
// thousands of jobs, and none needs more.
const maxTextBytes = 4096

// checkText refuses a text field longer than maxTextBytes.
func checkText(v string) error {
	if len(v) > maxTextBytes {
		return fmt.Errorf("%s is longer than %d bytes", strict.Quote(v), maxTextBytes)
	}
	return nil
}

// maxJSONValueBytes bounds one job of a JSON document read as a stream
// (the Philly job log), which has no lines to bound.
const maxJSONValueBytes = 16 << 20

// csvReadAhead is the buffer between the bounded reader and encoding/csv:
// how far the CSV reader may have read past the record it is on.
const csvReadAhead = 64 << 10

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// openInput opens a file for reading, refusing devices, FIFOs, sockets and
// folders, as an InputError naming it.
func openInput(path string) (io.ReadCloser, error) {
	if err := statInput(path); err != nil {
		return nil, err
	}
	f, err := strict.Open(path)
	if err != nil {
		var ie *strict.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		msg := strict.ReadErr(err)
		// strict.Open's own errors start with the path, which the
		// InputError already names.
		msg = strings.TrimPrefix(msg, path+" ")
		return nil, &strict.InputError{File: path, Msg: msg}
	}
	return f, nil
}

// statInput refuses a path that is there but not a regular file, before
// it is opened: opening a FIFO blocks until something writes to it.
func statInput(path string) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return &strict.InputError{File: path, Msg: fmt.Sprintf("is %s, not a regular file: gpuplan reads files, not devices, pipes or folders", fileKind(st.Mode()))}
	}
	return nil
}

// readInput reads a whole regular file of at most MaxFileBytes whose
// lines are at most MaxLineBytes, as InputErrors naming it.
func readInput(path string) ([]byte, error) {
	if err := statInput(path); err != nil {
		return nil, err
	}
	data, err := strict.ReadFileBounded(path)
	if err != nil {
		return nil, &strict.InputError{File: path, Msg: boundMessage(strings.TrimPrefix(strict.ReadErr(err), path+" "))}
	}
	if err := checkLines(path, data); err != nil {
		return nil, err
	}
	return data, nil
}

// ReadInput reads a whole input file (a rules file, a profile) as
// readInput does: a regular file of at most MaxFileBytes, lines of at most
// MaxLineBytes, errors naming the file.
func ReadInput(path string) ([]byte, error) { return readInput(path) }

// fileKind names what a path that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file (" + m.Type().String() + ")"
}

// lineTooLong is a line (or CSV record) over MaxLineBytes.
type lineTooLong struct {
	line   int
	record bool
}

func (e *lineTooLong) Error() string {
	if e.record {
		return fmt.Sprintf("line %d: a record (a quoted field over several lines) is longer than %d MiB", e.line, strict.MaxLineBytes>>20)
	}
	return fmt.Sprintf("line %d is longer than %d MiB", e.line, strict.MaxLineBytes>>20)
}

func (e *lineTooLong) inputError(file string) *strict.InputError {
	return strict.LineTooLong(file, e.line, e.record)
}

// boundedReader drops a leading UTF-8 byte order mark and fails, with the
// line number, once a line is longer than MaxLineBytes or (after mark) a
// record runs over more than MaxLineBytes plus the reader's read-ahead.
// It never holds more than the caller's buffer.
type boundedReader struct {
	r       io.Reader
	noLines bool // only drop the byte order mark
	started bool
	line    int   // the line the next byte is on, from 1
	lineLen int   // bytes of the current line so far
	off     int64 // bytes handed out
	mark    int64 // where the current record starts; -1 when not marking
	slack   int64 // read-ahead allowed past a record
	err     error
}

func newBoundedReader(r io.Reader) *boundedReader {
	return &boundedReader{r: r, line: 1, mark: -1}
}

// newBoundedReaderNoLines only drops a leading byte order mark (for JSON
// documents that may be one long line, bounded otherwise).
func newBoundedReaderNoLines(r io.Reader) *boundedReader {
	return &boundedReader{r: r, line: 1, mark: -1, noLines: true}
}

// markRecord says a record starts at offset off of what was handed out.
func (b *boundedReader) markRecord(off int64) { b.mark = off }

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if !b.started {
		var head [3]byte
		n, err := io.ReadFull(b.r, head[:])
		b.started = true
		rest := head[:n]
		if n == 3 && bytes.Equal(head[:], utf8BOM) {
			rest = nil
		}
		if len(rest) > 0 {
			b.r = io.MultiReader(bytes.NewReader(append([]byte(nil), rest...)), b.r)
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			b.err = err
			return 0, err
		}
	}
	n, err := b.r.Read(p)
	if b.noLines {
		return n, err
	}
	for i := 0; i < n; {
		nl := bytes.IndexByte(p[i:n], '\n')
		end := n
		if nl >= 0 {
			end = i + nl
		}
		if b.lineLen+(end-i) > strict.MaxLineBytes {
			cut := i + strict.MaxLineBytes - b.lineLen
			b.err = &lineTooLong{line: b.line}
			b.off += int64(cut)
			return cut, b.err
		}
		if b.mark >= 0 && b.off+int64(end)-b.mark > strict.MaxLineBytes+b.slack {
			cut := max(i, int(b.mark+strict.MaxLineBytes+b.slack-b.off))
			b.err = &lineTooLong{line: b.line, record: true}
			b.off += int64(cut)
			return cut, b.err
		}
		if nl < 0 {
			b.lineLen += end - i
			break
		}
		b.line++
		b.lineLen = 0
		i = end + 1
	}
	b.off += int64(n)
	return n, err
}

// DropBOM removes a leading UTF-8 byte order mark.
func DropBOM(b []byte) []byte { return bytes.TrimPrefix(b, utf8BOM) }

// checkLines refuses a whole file read into memory whose lines are longer
// than MaxLineBytes, naming the line (strict.CheckLines).
func checkLines(file string, data []byte) error { return strict.CheckLines(file, data) }

// CheckLines refuses data (a file read whole) with a line longer than
// MaxLineBytes, as an InputError naming the file and line.
func CheckLines(file string, data []byte) error { return strict.CheckLines(file, data) }

// boundMessage bounds a decoder's error text (strict.BoundMessage).
func boundMessage(msg string) string { return strict.BoundMessage(msg) }

// BoundError returns err with its message bounded (strict.BoundError).
func BoundError(err error) error { return strict.BoundError(err) }

// MIGProfileNames lists every MIG profile of the MIG-capable GPU models,
// sorted (a trace may ask for any of them).
func MIGProfileNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range models.MIGModels() {
		for _, p := range models.MIGProfiles(m) {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p.Name)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		return migMemGB(a) < migMemGB(b)
	})
	return out
}

// migMemGB is the memory of a profile name such as 3g.40gb (40).
func migMemGB(name string) int {
	_, m, _ := strings.Cut(name, ".")
	n, _ := strconv.Atoi(strings.TrimSuffix(m, "gb"))
	return n
}

// checkMIG refuses a MIG profile no MIG-capable GPU model has.
func checkMIG(v string) error {
	names := MIGProfileNames()
	for _, n := range names {
		if n == v {
			return nil
		}
	}
	hint := ""
	for _, prefix := range []string{"nvidia.com/mig-", "mig-"} {
		if s, ok := strings.CutPrefix(v, prefix); ok {
			for _, n := range names {
				if n == s {
					hint = fmt.Sprintf(" (write it as %s)", s)
				}
			}
		}
	}
	return fmt.Errorf("%s is not a MIG profile%s (known: %s)", strict.Quote(v), hint, strings.Join(names, ", "))
}

// colName is a column name from a header as an error names it: as it is
// when short and printable, else quoted (and cut).
func colName(h string) string {
	if len(h) > strict.MaxQuote || strconv.Quote(h) != `"`+h+`"` {
		return strict.Quote(h)
	}
	return h
}

// tooManyJobs is the error for a trace of more than MaxJobs jobs.
func tooManyJobs(file string, line int) error {
	return &strict.InputError{File: file, Line: line, Msg: fmt.Sprintf("the trace has more than %d jobs, the most gpuplan runs; cut it with gpuplan trace convert --max-jobs or --from/--to", sim.MaxJobs)}
}
