package traces

import "io"

// Table is a CSV file read by column name, as the trace readers read
// theirs, for the other CSV inputs of a scenario (price files, the Spot
// Advisor and interruption traces): bounded lines, a header row, errors
// at the row and column they are about.
type Table struct{ t *csvTable }

// OpenTable reads the header of a CSV file (lines starting with comment,
// when not 0, skipped). emptyMsg is the error for a file with no header.
func OpenTable(file string, r io.Reader, comment rune, emptyMsg string) (*Table, []string, error) {
	t, header, err := openCSVTable(file, r, comment, emptyMsg)
	if err != nil {
		return nil, nil, err
	}
	return &Table{t: t}, header, nil
}

// File is the file's name, as errors give it.
func (x *Table) File() string { return x.t.file }

// Has says whether the header has column c.
func (x *Table) Has(c string) bool { _, ok := x.t.col[c]; return ok }

// AnyFieldCount lets rows have more or fewer fields than the header.
func (x *Table) AnyFieldCount() { x.t.r.FieldsPerRecord = -1 }

// Require fails, with msg, unless every named column is in the header.
func (x *Table) Require(msg string, names ...string) error { return x.t.require(msg, names...) }

// Each calls row for every row in turn, stopping at the first error: the
// row loop of every reader of a whole table.
func (x *Table) Each(row func(rec []string) error) error { return x.t.each(row) }

// Line is the line the last row read starts on.
func (x *Table) Line() int { line, _ := x.t.r.FieldPos(0); return line }

// Get is the named column of rec, trimmed ("" when there is no such
// column).
func (x *Table) Get(rec []string, name string) string { return x.t.get(rec, name) }

// Bad is an InputError at the last row read and the field's column.
func (x *Table) Bad(field, format string, args ...any) error { return x.t.bad(field, format, args...) }
