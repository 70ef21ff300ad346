package reports

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gpuplan.dev/gpuplan/sim"
)

// csvRow builds one CSV row at a time in a buffer it reuses, with the
// bytes encoding/csv's Writer (comma, "\n" line ends) writes for the same
// fields: a large file costs no allocation per row.
type csvRow struct {
	b []byte
	n int // fields in the row so far
}

func (r *csvRow) sep() {
	if r.n > 0 {
		r.b = append(r.b, ',')
	}
	r.n++
}

// str appends a text field, quoted as encoding/csv quotes it: when it
// holds a comma, quote, CR or LF, starts with white space or is `\.`.
func (r *csvRow) str(s string) {
	r.sep()
	if !needsQuotes(s) {
		r.b = append(r.b, s...)
		return
	}
	r.b = append(r.b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		r.b = append(r.b, s[:i+1]...)
		r.b = append(r.b, '"')
		s = s[i+1:]
	}
	r.b = append(r.b, s...)
	r.b = append(r.b, '"')
}

func needsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` || strings.ContainsAny(s, ",\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// empty appends an empty field.
func (r *csvRow) empty() { r.sep() }

func (r *csvRow) int(v int64) {
	r.sep()
	r.b = strconv.AppendInt(r.b, v, 10)
}

// float appends v with prec digits after the point.
func (r *csvRow) float(v float64, prec int) {
	r.sep()
	r.b = strconv.AppendFloat(r.b, v, 'f', prec, 64)
}

// ms appends milliseconds as seconds with three decimals, as msText
// writes them: empty when negative (never, or not yet).
func (r *csvRow) ms(v sim.Time) {
	r.sep()
	if v >= 0 {
		r.b = appendMs(r.b, v)
	}
}

// thousandths appends "0." and v zero-padded to three digits, a share of
// a GPU in milli-GPU (v in 0..999).
func (r *csvRow) thousandths(v int64) {
	r.sep()
	r.b = append(r.b, "0."...)
	r.b = appendPad3(r.b, v)
}

// end closes the row and writes it.
func (r *csvRow) end(w io.Writer) error {
	r.b = append(r.b, '\n')
	_, err := w.Write(r.b)
	r.b, r.n = r.b[:0], 0
	return err
}

// appendMs appends non-negative milliseconds as seconds.milliseconds.
func appendMs(b []byte, ms sim.Time) []byte {
	b = strconv.AppendInt(b, int64(ms/1000), 10)
	b = append(b, '.')
	return appendPad3(b, int64(ms%1000))
}

// appendPad3 appends a non-negative v zero-padded to at least three digits
// (fmt's %03d).
func appendPad3(b []byte, v int64) []byte {
	switch {
	case v < 10:
		b = append(b, '0', '0')
	case v < 100:
		b = append(b, '0')
	}
	return strconv.AppendInt(b, v, 10)
}
