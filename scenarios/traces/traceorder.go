package traces

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// traceOrder is what OpenTrace's check finds of a trace's order.
type traceOrder int

const (
	// orderSorted: no row is earlier than the row before it; the replay
	// hands rows out as it reads them.
	orderSorted traceOrder = iota
	// orderWindow: rows out of order, but never by more than the reorder
	// buffer puts right (or a row the check could not read: the replay
	// reports it).
	orderWindow
	// orderLate: a row comes too late for the buffer; the trace is sorted
	// before it is replayed.
	orderLate
)

// timeWindow is the reorder buffer of the replay for times alone: it says
// whether a sequence of times is sorted, within the window, or has a time
// too late for it.
type timeWindow struct {
	q      []int64 // times in order, q[qh:] waiting
	qh     int
	late   []lateKey // min-heap of times that came after a later one
	seq    int
	last   int64
	popped bool
	prev   int64
	sorted bool
	bad    bool // a time came too late
}

func newTimeWindow() *timeWindow { return &timeWindow{sorted: true} }

// unreadable notes a row whose time the check could not read.
func (w *timeWindow) unreadable() { w.sorted = false }

// add takes the next row's time; false once a time is too late.
func (w *timeWindow) add(at int64) bool {
	if w.seq > 0 && at < w.prev {
		w.sorted = false
	}
	w.prev = at
	k := lateKey{at: at, seq: w.seq}
	w.seq++
	n := len(w.q)
	if n > w.qh && at < w.q[n-1] {
		w.late = append(w.late, k)
		for i := len(w.late) - 1; i > 0; {
			p := (i - 1) / 2
			if !w.late[i].before(w.late[p]) {
				break
			}
			w.late[i], w.late[p] = w.late[p], w.late[i]
			i = p
		}
	} else {
		if w.qh > 0 && n == cap(w.q) {
			m := copy(w.q, w.q[w.qh:])
			w.q, w.qh = w.q[:m], 0
		}
		w.q = append(w.q, at)
	}
	for len(w.q)-w.qh+len(w.late) > ReorderWindow {
		if !w.pop() {
			return false
		}
	}
	return true
}

// pop takes the earliest waiting time out; false if it is earlier than
// one taken before.
func (w *timeWindow) pop() bool {
	var at int64
	if w.qh < len(w.q) && (len(w.late) == 0 || w.q[w.qh] <= w.late[0].at) {
		at = w.q[w.qh]
		if w.qh++; w.qh == len(w.q) {
			w.q, w.qh = w.q[:0], 0
		}
	} else {
		at = w.late[0].at
		n := len(w.late) - 1
		w.late[0] = w.late[n]
		w.late = w.late[:n]
		for i := 0; ; {
			c := 2*i + 1
			if c >= n {
				break
			}
			if c+1 < n && w.late[c+1].before(w.late[c]) {
				c++
			}
			if !w.late[c].before(w.late[i]) {
				break
			}
			w.late[i], w.late[c] = w.late[c], w.late[i]
			i = c
		}
	}
	if w.popped && at < w.last {
		w.bad = true
		return false
	}
	w.last, w.popped = at, true
	return true
}

// order drains the window and says what it found.
func (w *timeWindow) order() traceOrder {
	if w.bad {
		return orderLate
	}
	if w.sorted {
		return orderSorted
	}
	for len(w.q)-w.qh+len(w.late) > 0 {
		if !w.pop() {
			return orderLate
		}
	}
	return orderWindow
}

// submitColumn is the submit time column of a CSV trace format, its
// comment character and how its times read (ok false for another format).
func submitColumn(format string) (col string, comment rune, parse func(string) (int64, error), ok bool) {
	secs := func(v string) (int64, error) { return Seconds(v, true) }
	switch format {
	case FormatCSV:
		return "submit", '#', secs, true
	case FormatOpenb:
		return "creation_time", 0, secs, true
	case FormatPhilly:
		return "timestamp", '#', parseWallTime, true
	case FormatHelios:
		return "submit_time", '#', parseWallTime, true
	}
	return "", 0, nil, false
}

// csvOrder is traceOrderOf for the CSV formats, reading only the submit
// column (ok false for another format). It counts every row, even one
// the reader would set aside: at worst a trace is sorted that would have
// replayed as it was. A trace that fails to read is taken as in order
// within the window: its replay reports the error.
func csvOrder(path, format string) (order traceOrder, ok bool) {
	col, comment, parse, ok := submitColumn(format)
	if !ok {
		return orderWindow, false
	}
	if order, ok := scanOrder(path, comment, col, parse); ok {
		return order, true
	}
	r, closer, err := OpenMaybeGzip(path)
	if err != nil {
		return orderWindow, true
	}
	defer closer()
	t, _, err := openCSVTable(path, r, comment, "")
	if err != nil {
		return orderWindow, true
	}
	t.viewRows()
	i, found := t.col[col]
	if !found {
		return orderWindow, true
	}
	w := newTimeWindow()
	err = t.each(func(rec []string) error {
		at, err := parse(strings.TrimSpace(rec[i]))
		if err != nil {
			w.unreadable()
		} else if !w.add(at) {
			return errLate
		}
		return nil
	})
	switch {
	case err == errLate:
		return orderLate, true
	case err != nil:
		return orderWindow, true
	}
	return w.order(), true
}

// errLate stops csvOrder's reading at a row too late for the window.
var errLate = errors.New("a row too late for the reorder buffer")

// sourceOrder reads a streamed trace's rows and says how they are
// ordered. A trace that fails to read is taken as in order within the
// window: its replay reports the error.
func sourceOrder(src TraceSource) traceOrder {
	s, ok := src.(*streamTrace)
	if !ok {
		return orderWindow
	}
	read, _ := rawReader(s)
	w := newTimeWindow()
	var a absJob
	for {
		ok, err := read(&a)
		if err != nil {
			return orderWindow
		}
		if !ok {
			return w.order()
		}
		if !w.add(a.at) {
			return orderLate
		}
	}
}

// scanOrder is csvOrder's fast path: lines split at commas, with no CSV
// parser. It gives up (ok false) on a quote or a line over 64 KiB, which
// only a CSV parser reads right.
func scanOrder(path string, comment rune, col string, parse func(string) (int64, error)) (order traceOrder, ok bool) {
	r, closer, err := OpenMaybeGzip(path)
	if err != nil {
		return orderWindow, true
	}
	defer closer()
	br := bufio.NewReaderSize(r, 1<<16)
	w := newTimeWindow()
	idx, fields, first := -1, 0, true
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return orderWindow, false
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return orderWindow, true
		}
		more := err == nil
		if first {
			line = bytes.TrimPrefix(line, utf8BOM)
			first = false
		}
		for n := len(line); n > 0 && (line[n-1] == '\n' || line[n-1] == '\r'); n-- {
			line = line[:n-1]
		}
		if bytes.IndexByte(line, '"') >= 0 {
			return orderWindow, false
		}
		switch {
		case len(line) == 0 || (comment != 0 && line[0] == byte(comment)):
		case idx < 0:
			for i, h := range bytes.Split(line, []byte{','}) {
				if string(bytes.TrimSpace(h)) == col {
					idx = i
				}
				fields = i + 1
			}
			if idx < 0 {
				return orderWindow, true
			}
		default:
			if bytes.Count(line, []byte{','})+1 != fields {
				return orderWindow, true // the replay reports the row
			}
			v := line
			for range idx {
				v = v[bytes.IndexByte(v, ',')+1:]
			}
			if k := bytes.IndexByte(v, ','); k >= 0 {
				v = v[:k]
			}
			at, err := parse(view(bytes.TrimSpace(v)))
			if err != nil {
				w.unreadable()
			} else if !w.add(at) {
				return orderLate, true
			}
		}
		if !more {
			return w.order(), true
		}
	}
}
