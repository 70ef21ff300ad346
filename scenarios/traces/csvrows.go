package traces

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"unsafe"
)

// rowReader reads CSV records as encoding/csv does (RFC 4180, comma
// separated, no lazy quotes, leading spaces kept), with the same errors
// and field positions, but without a string per record: a line without a
// quote is split where it lies in the read buffer. Quoted records, which
// may run over several lines, are handed to an encoding/csv reader fed
// one line at a time, so they read exactly as before.
//
// With views set, the fields of a line without quotes are views of the
// read buffer, valid until the next Read: a caller keeps a field only by
// copying it (strings.Clone). Without views each record is one string,
// as encoding/csv gives it.
type rowReader struct {
	br *bufio.Reader
	// Comment starts a line that is skipped (0: none).
	Comment rune
	// FieldsPerRecord is as encoding/csv's: 0 takes the first record's
	// count, a negative number checks nothing.
	FieldsPerRecord int
	views           bool

	line   int   // lines read
	offset int64 // bytes read
	long   []byte
	fields []string
	// Where each field starts: a line without quotes keeps each field's
	// byte offset in it (starts, quoted false: the line is r.line); a
	// quoted record the line and column of each (pos, quoted true).
	starts []int
	pos    [][2]int
	quoted bool
	feed   lineFeeder
}

func newRowReader(r io.Reader, size int) *rowReader {
	rr := &rowReader{br: bufio.NewReaderSize(r, size)}
	rr.feed.br = rr.br
	return rr
}

// InputOffset is the byte offset just past the last record read.
func (r *rowReader) InputOffset() int64 { return r.offset }

// FieldPos is the line and 1-based byte column where field i of the last
// record starts.
func (r *rowReader) FieldPos(i int) (line, column int) {
	if i < 0 || i >= len(r.fields) {
		panic("out of range index passed to FieldPos")
	}
	if r.quoted {
		return r.pos[i][0], r.pos[i][1]
	}
	return r.line, r.starts[i] + 1
}

// readLine reads one line with its newline, as encoding/csv does.
func (r *rowReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	return line, err
}

// Read returns the next record; io.EOF at the end. A record with the wrong
// number of fields is returned with a *csv.ParseError, as encoding/csv does.
func (r *rowReader) Read() ([]string, error) {
	var line []byte
	var err error
	for {
		line, err = r.readLine()
		n := len(line)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				r.line++
				return nil, io.EOF
			}
			return nil, err
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if bytes.IndexByte(line, '"') >= 0 {
			if r.Comment == 0 || rune(line[0]) != r.Comment || r.Comment >= 0x80 {
				return r.readQuoted(line)
			}
		}
		r.line++
		r.offset += int64(n)
		content := line
		switch {
		case n >= 2 && line[n-2] == '\r' && line[n-1] == '\n':
			content = line[:n-2]
		case line[n-1] == '\n':
			content = line[:n-1]
		case err != nil && line[n-1] == '\r': // at the end of the file
			content = line[:n-1]
		}
		if r.Comment != 0 && r.Comment < 0x80 && len(line) > 0 && rune(line[0]) == r.Comment {
			if err != nil {
				return nil, io.EOF
			}
			continue
		}
		if r.Comment >= 0x80 && bytes.HasPrefix(line, []byte(string(r.Comment))) {
			if err != nil {
				return nil, io.EOF
			}
			continue
		}
		if len(content) == 0 {
			if err != nil {
				return nil, io.EOF
			}
			continue
		}
		return r.split(content)
	}
}

// split cuts a line without quotes at its commas.
func (r *rowReader) split(content []byte) ([]string, error) {
	var s string
	if r.views {
		s = view(content)
	} else {
		s = string(content)
	}
	r.fields, r.starts, r.quoted = r.fields[:0], r.starts[:0], false
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			r.fields = append(r.fields, s[start:i])
			r.starts = append(r.starts, start)
			start = i + 1
		}
	}
	r.fields = append(r.fields, s[start:])
	r.starts = append(r.starts, start)
	return r.fields, r.checkCount()
}

func (r *rowReader) checkCount() error {
	switch {
	case r.FieldsPerRecord == 0:
		r.FieldsPerRecord = len(r.fields)
	case r.FieldsPerRecord > 0 && len(r.fields) != r.FieldsPerRecord:
		return &csv.ParseError{StartLine: r.line, Line: r.line, Column: 1, Err: csv.ErrFieldCount}
	}
	return nil
}

// readQuoted reads a record that starts with line, which has a quote,
// through encoding/csv, fed line by line so it reads nothing past the
// record; its line numbers are moved to the file's.
func (r *rowReader) readQuoted(line []byte) ([]string, error) {
	base := r.line
	f := &r.feed
	f.pending = append(f.pending[:0], line...)
	f.lines, f.bytes, f.partial = 0, 0, false
	cr := csv.NewReader(f)
	cr.Comment = r.Comment
	cr.FieldsPerRecord = r.FieldsPerRecord
	rec, err := cr.Read()
	r.line = base + f.lines
	if f.partial {
		r.line++
	}
	r.offset += f.bytes
	r.FieldsPerRecord = cr.FieldsPerRecord
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		moved := *pe
		moved.StartLine += base
		moved.Line += base
		err = &moved
	}
	r.fields = append(r.fields[:0], rec...)
	r.pos, r.quoted = r.pos[:0], true
	for i := range rec {
		l, c := cr.FieldPos(i)
		r.pos = append(r.pos, [2]int{l + base, c})
	}
	return r.fields, err
}

// view is b as a string without a copy, valid while b is: for parsing a
// field of a row, never for keeping it.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// lineFeeder hands encoding/csv the pending line, then the file one line
// at a time, counting what it handed out.
type lineFeeder struct {
	br      *bufio.Reader
	pending []byte
	lines   int
	bytes   int64
	partial bool // the last byte handed out ended no line
}

func (f *lineFeeder) Read(p []byte) (int, error) {
	if len(f.pending) == 0 {
		line, err := f.br.ReadSlice('\n')
		if len(line) == 0 {
			if err == nil || errors.Is(err, bufio.ErrBufferFull) {
				err = io.ErrNoProgress
			}
			return 0, err
		}
		f.pending = append(f.pending[:0], line...)
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	f.bytes += int64(n)
	f.lines += bytes.Count(p[:n], []byte{'\n'})
	f.partial = p[n-1] != '\n'
	return n, nil
}
