package traces

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"maps"
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Trace formats.
const (
	FormatCSV       = "csv"
	FormatJSONL     = "jsonl"
	FormatNative    = "native" // csv, or jsonl for a .jsonl file
	FormatOpenb     = "openb"
	FormatPhilly    = "philly"
	FormatPhillyRaw = "philly-raw"
	FormatHelios    = "helios"
	FormatPAI       = "pai"
)

// What to do with openb pods that never ran in the source trace.
const (
	PendingReplay  = "replay"
	PendingExclude = "exclude"
)

// TraceFormats lists the trace formats OpenTrace reads.
func TraceFormats() []string {
	return []string{FormatNative, FormatCSV, FormatJSONL, FormatOpenb, FormatPhilly, FormatPhillyRaw, FormatHelios, FormatPAI}
}

// KnownFormat says whether f is one of TraceFormats.
func KnownFormat(f string) bool {
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
	// GPUsPerNode splits jobs given as a GPU total (Philly, Helios) into
	// pods of at most this many GPUs (default 8).
	GPUsPerNode int64
	// JobTable is the PAI job table (for users as queues), optional.
	JobTable string
	// Scan is what a light pass over the trace learned (SizeTrace): when
	// it found the order of this file's rows, OpenTrace does not read its
	// submit column again.
	Scan  *TraceScan
	users map[string]string
}

func (o TraceOptions) gpusPerNode() int64 {
	if o.GPUsPerNode > 0 {
		return o.GPUsPerNode
	}
	return 8
}

// TraceSource streams a trace's jobs in submit order. Rows out of order,
// malformed or out of range are InputErrors naming the file and line.
type TraceSource interface {
	Next(j *cluster.JobSpec) (bool, error)
	// Notes says what the reader assumed or set aside, once it is done.
	Notes() []string
	// Info says which file this is and how much of it was read so far.
	Info() TraceInfo
	Close() error
}

// MaxGPUsPerNode bounds the GPUs of one node a trace or a flag may give.
const MaxGPUsPerNode = cluster.MaxGPUsPerNode

// Counting wraps a trace so that every jobs read (every > 0) it calls
// tick with the count so far: for a progress display.
func Counting(src TraceSource, every int, tick func(n int)) TraceSource {
	return &countingTrace{TraceSource: src, every: every, tick: tick}
}

type countingTrace struct {
	TraceSource
	every, n int
	tick     func(int)
}

func (c *countingTrace) Next(j *cluster.JobSpec) (bool, error) {
	ok, err := c.TraceSource.Next(j)
	if ok {
		if c.n++; c.n%c.every == 0 {
			c.tick(c.n)
		}
	}
	return ok, err
}

// TraceInfo describes a trace being read.
type TraceInfo struct {
	File   string
	Format string
	// Rows is the rows (lines, or jobs of a JSON log) read so far, those
	// set aside included; Header whether the file began with a header row.
	Rows   int
	Header bool
}

// emptyTrace is the error for a trace that gave no job: it names the file
// and says whether it had rows at all.
func emptyTrace(info TraceInfo, what string) error {
	switch {
	case info.Rows == 0 && info.Header:
		return &strict.InputError{File: info.File, Msg: fmt.Sprintf("the trace has a header row and no rows: no jobs %s", what)}
	case info.Rows == 0:
		return &strict.InputError{File: info.File, Msg: fmt.Sprintf("the trace has no rows: no jobs %s", what)}
	}
	return &strict.InputError{File: info.File, Msg: fmt.Sprintf("all %d rows of the trace were set aside (see the reader's notes): no jobs %s", info.Rows, what)}
}

// OpenTrace opens a trace file of the given format (.gz read directly).
// A streamed trace is first read once to check its order (only the
// submit column of a CSV format; not at all when opts.Scan already found
// it): one with a row too late for the reorder
// buffer (ReorderWindow rows) is read whole into sorted runs as
// SortTrace does (those beyond memory in a temporary folder, removed on
// Close), and their merge is replayed instead, with a note saying so.
func OpenTrace(path, format string, opts TraceOptions) (TraceSource, error) {
	src, err := openTraceRaw(path, format, opts)
	if err != nil {
		return nil, err
	}
	st, ok := src.(*streamTrace)
	if !ok {
		return src, nil
	}
	order, checked := opts.Scan.orderOf(path, format)
	if !checked {
		order, checked = csvOrder(path, st.info.Format)
	}
	if !checked {
		check, err := openTraceRaw(path, format, opts)
		if err != nil {
			return src, nil
		}
		order = sourceOrder(check)
		check.Close()
	}
	switch order {
	case orderSorted:
		st.ro.passThrough = true
		return src, nil
	case orderWindow:
		return src, nil
	}
	src.Close()
	return openSorted(path, format, opts)
}

// OpenTraceSizing opens a trace for one light pass that sizes a cluster
// (DeriveCluster): its rows in the file's order, as read, with no order
// check, no reorder buffer and no job names. Its jobs' times are relative
// to the first row's, and may be negative: only the spans between them
// mean anything.
func OpenTraceSizing(path, format string, opts TraceOptions) (TraceSource, error) {
	src, err := openTraceRaw(path, format, opts)
	if err != nil {
		return nil, err
	}
	return forSizing(src), nil
}

// forSizing makes an opened trace read as OpenTraceSizing's.
func forSizing(src TraceSource) TraceSource {
	if st, ok := src.(*streamTrace); ok {
		st.ro.passThrough, st.ro.anyOrder = true, true
		if st.table != nil {
			st.table.sizing = true
		}
	}
	return src
}

// openTraceRaw opens a trace as it is, in the order of its rows.
func openTraceRaw(path, format string, opts TraceOptions) (TraceSource, error) {
	if !KnownFormat(format) {
		return nil, &strict.InputError{File: path, Msg: fmt.Sprintf("unknown trace format %s (known: %s)", strict.Quote(format), strings.Join(TraceFormats(), ", "))}
	}
	if format == FormatNative {
		format = FormatCSV
		if p := strings.TrimSuffix(path, ".gz"); strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json") {
			format = FormatJSONL
		}
	}
	if format == FormatPAI && opts.JobTable != "" {
		r, closer, err := OpenMaybeGzip(opts.JobTable)
		if err != nil {
			return nil, err
		}
		opts.users, err = ReadPAIUsers(opts.JobTable, r)
		closer()
		if err != nil {
			return nil, err
		}
	}
	r, closer, err := OpenMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	src, err := newTraceSource(path, format, r, closer, opts)
	if err != nil {
		if format != FormatPAI && format != FormatPhillyRaw {
			closer()
		}
		return nil, err
	}
	return src, nil
}

// openTraceReader reads a trace from r (file names it in errors).
func openTraceReader(file, format string, r io.Reader, opts TraceOptions) (TraceSource, error) {
	return newTraceSource(file, format, r, func() error { return nil }, opts)
}

func newTraceSource(path, format string, r io.Reader, closer func() error, opts TraceOptions) (TraceSource, error) {
	switch format {
	case FormatCSV:
		return newCSVSource(path, r, closer)
	case FormatJSONL:
		return newJSONLSource(path, r, closer), nil
	case FormatOpenb:
		return newOpenbSource(path, r, closer, opts)
	case FormatPhilly:
		return newPhillySource(path, r, closer, opts)
	case FormatHelios:
		return newHeliosSource(path, r, closer, opts)
	case FormatPhillyRaw, FormatPAI:
		// Read whole and sorted: the file is done with at once.
		var b *batchSource
		var err error
		if format == FormatPAI {
			b, err = readPAITasks(path, r, opts.users)
		} else {
			b, err = readPhillyRaw(path, r)
		}
		if cerr := closer(); err == nil && cerr != nil {
			err = &strict.InputError{File: path, Msg: cerr.Error()}
		}
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, &strict.InputError{File: path, Msg: fmt.Sprintf("unknown trace format %s (known: %s)", strict.Quote(format), strings.Join(TraceFormats(), ", "))}
}

// OpenMaybeGzip opens a file to read, through gzip when its name ends in
// .gz; the function returned closes it.
func OpenMaybeGzip(path string) (io.Reader, func() error, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, &strict.InputError{File: path, Msg: "not a gzip file: " + boundMessage(err.Error())}
		}
		zb := bufio.NewReaderSize(zr, 1<<16)
		if err := refuseBinary(path, zb); err != nil {
			zr.Close()
			f.Close()
			return nil, nil, err
		}
		return zb, func() error { zr.Close(); return f.Close() }, nil
	}
	if err := refuseBinary(path, br); err != nil {
		f.Close()
		return nil, nil, err
	}
	return br, f.Close, nil
}

// refuseBinary refuses a trace whose first 64 KiB hold a NUL byte: it is
// not text (a binary file, or UTF-16 without a byte-order mark), and no
// message quotes any of it.
func refuseBinary(path string, br *bufio.Reader) error {
	head, _ := br.Peek(br.Size())
	if len(head) >= 2 && (head[0] == 0xff && head[1] == 0xfe || head[0] == 0xfe && head[1] == 0xff) {
		return &strict.InputError{File: path, Msg: "is UTF-16 (it starts with a UTF-16 byte-order mark); a trace is UTF-8 text: save it as UTF-8"}
	}
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return &strict.InputError{File: path, Msg: strict.NotText(i)}
	}
	return nil
}

// interner shares one *Constraints between jobs with the same text (the
// first 65,536 texts; later ones are built for each job).
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
	if len(in) < 1<<16 {
		in[strings.Clone(key)] = c
	}
	return c, nil
}

// texts shares one string per distinct text (queue names, states): the
// first 65,536 are kept, later ones copied for each use. A text from a
// row (a view of the read buffer) is always copied before it is kept.
type texts map[string]string

func (m texts) get(v string) string {
	if s, ok := m[v]; ok {
		return s
	}
	s := strings.Clone(v)
	if len(m) < 1<<16 {
		m[s] = s
	}
	return s
}

// textCounts counts texts read from rows (states, phases). Its keys are
// always copies: a text from a row is a view of the read buffer, and a Go
// map assignment to a key already present stores the key it is given, so
// counting with m[view]++ would leave the key pointing into a buffer that
// the next row overwrites. Counts are behind pointers so that a text seen
// again is counted by a lookup alone.
type textCounts map[string]*int

// add counts k, copying it the first time it is seen.
func (m textCounts) add(k string) {
	if n, ok := m[k]; ok {
		*n++
		return
	}
	n := 1
	m[strings.Clone(k)] = &n
}

// String lists the counts in key order: "Failed 3, Running 5".
func (m textCounts) String() string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, *m[k]))
	}
	return strings.Join(parts, ", ")
}

// csvTable reads a CSV file with a header row, by column name, and places
// errors at the row and column they are about.
type csvTable struct {
	file string
	lr   *boundedReader
	r    *rowReader
	col  map[string]int
	done bool
	rows int // records read after the header
	// sizing: the rows are read to size a cluster, so jobs need no names.
	sizing bool
	// borrowNames: the rows are read to be sorted, which copies each job
	// into a record before the next row is read, so a job's name may be
	// a view of its row.
	borrowNames bool
	// names holds the jobs' names, copied from rows or made up.
	names nameArena
}

// name is a job name from a row, copied (the row is a view), or "" when
// the rows are read only to size a cluster.
func (t *csvTable) name(v string) string {
	switch {
	case t.sizing:
		return ""
	case t.borrowNames:
		return v
	}
	return t.names.clone(v)
}

// numbered is a made-up job name, prefix and a row number ("" when the
// rows are read only to size a cluster).
func (t *csvTable) numbered(prefix string, n int) string {
	if t.sizing {
		return ""
	}
	return t.names.numbered(prefix, n)
}

// openCSVTable reads the header. emptyMsg is the error for a file with no
// header row.
func openCSVTable(file string, r io.Reader, comment rune, emptyMsg string) (*csvTable, []string, error) {
	// encoding/csv has no bound of its own on a line: the bounded reader
	// under it fails a line, or a record, over MaxLineBytes, and drops a
	// byte order mark before the header.
	lr := newBoundedReader(r)
	lr.slack = csvReadAhead
	lr.markRecord(0)
	cr := newRowReader(lr, csvReadAhead)
	cr.Comment = comment
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, strict.Errorf(file, 1, "", "%s", emptyMsg)
		}
		return nil, nil, csvErr(file, err)
	}
	header = append([]string(nil), header...)
	t := &csvTable{file: file, lr: lr, r: cr, col: map[string]int{}}
	line, _ := cr.FieldPos(0)
	for i, h := range header {
		header[i] = strings.TrimSpace(h)
		if _, dup := t.col[header[i]]; dup {
			_, col := cr.FieldPos(i)
			return nil, nil, &strict.InputError{File: file, Line: line, Column: col, Field: colName(header[i]), Msg: "column is given twice"}
		}
		t.col[header[i]] = i
	}
	cr.FieldsPerRecord = len(header)
	return t, header, nil
}

// viewRows makes the table's rows views of its read buffer (see
// rowReader): a row's fields are valid until the next row, and a reader
// keeps one only by copying it.
func (t *csvTable) viewRows() { t.r.views = true }

// require fails unless every named column is in the header.
func (t *csvTable) require(msg string, names ...string) error {
	for _, c := range names {
		if _, ok := t.col[c]; !ok {
			return strict.Errorf(t.file, 1, c, "%s", msg)
		}
	}
	return nil
}

// next returns the next row (ok false at the end).
func (t *csvTable) next() (rec []string, ok bool, err error) {
	if t.done {
		return nil, false, nil
	}
	t.lr.markRecord(t.r.InputOffset())
	rec, err = t.r.Read()
	if errors.Is(err, io.EOF) {
		t.done = true
		return nil, false, nil
	}
	if err != nil {
		t.done = true
		return nil, false, csvErr(t.file, err)
	}
	t.rows++
	return rec, true, nil
}

// each calls row for every row in turn, stopping at the first error
// (the row loop of the readers that read a table whole).
func (t *csvTable) each(row func(rec []string) error) error {
	for {
		rec, ok, err := t.next()
		if err != nil || !ok {
			return err
		}
		if err := row(rec); err != nil {
			return err
		}
	}
}

// poolShape is what makes nodes identical: their GPU model as the list
// gives it, GPUs, CPU and memory (in the list's units).
type poolShape struct {
	model         string
	gpu, cpu, mem int64
}

// poolsByShape groups a node list's identical nodes into pools, in order
// of first appearance.
type poolsByShape struct {
	index map[poolShape]int
	pools []cluster.PoolSpec
}

// add counts a node of shape s; newPool makes the pool (the i-th) the
// first time the shape is seen (its node count is set here).
func (p *poolsByShape) add(s poolShape, newPool func(i int) cluster.PoolSpec) {
	if p.index == nil {
		p.index = map[poolShape]int{}
	}
	i, seen := p.index[s]
	if !seen {
		i = len(p.pools)
		p.index[s] = i
		p.pools = append(p.pools, newPool(i))
	}
	p.pools[i].Nodes++
}

// get is the trimmed value of a column of the current row ("" if absent).
func (t *csvTable) get(rec []string, name string) string {
	if i, ok := t.col[name]; ok {
		return strings.TrimSpace(rec[i])
	}
	return ""
}

// index is the index of a named column in a row (-1 if absent), for a
// reader that looks a column up once rather than on every row.
func (t *csvTable) index(name string) int {
	if i, ok := t.col[name]; ok {
		return i
	}
	return -1
}

// at is the trimmed value of column i (index) of the row ("" if absent).
func (t *csvTable) at(rec []string, i int) string {
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// bad is an InputError at the current row and the field's column.
func (t *csvTable) bad(field, format string, args ...any) error {
	line, _ := t.r.FieldPos(0)
	col := 0
	if i, ok := t.col[field]; ok {
		_, col = t.r.FieldPos(i)
	}
	return &strict.InputError{File: t.file, Line: line, Column: col, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func csvErr(file string, err error) error {
	var long *lineTooLong
	if errors.As(err, &long) {
		return long.inputError(file)
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			msg = "wrong number of fields (the header has a different count)"
		}
		return &strict.InputError{File: file, Line: pe.Line, Column: pe.Column, Msg: msg}
	}
	return &strict.InputError{File: file, Msg: boundMessage(strict.ReadErr(err))}
}
