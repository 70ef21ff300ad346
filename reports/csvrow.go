package reports

import (
	"io"
	"math/bits"
	"slices"
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
	if s == `\.` {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\r', '\n':
			return true
		}
	}
	if c := s[0]; c < utf8.RuneSelf {
		// unicode.IsSpace's ASCII white space.
		return c == ' ' || c >= '\t' && c <= '\r'
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// empty appends an empty field.
func (r *csvRow) empty() { r.sep() }

func (r *csvRow) int(v int64) {
	r.sep()
	if v < 0 {
		r.b = strconv.AppendInt(r.b, v, 10)
		return
	}
	r.b = appendUint(r.b, uint64(v))
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

// csvFlushAt: end writes the rows built so far once they hold more than
// this many bytes, not every row: more than the buffer of the files'
// writers (fileBuffer), so that a bufio.Writer hands the rows straight
// to the file instead of copying them into its buffer first.
const csvFlushAt = fileBuffer

// end closes the row, and writes the rows built so far once they fill
// csvFlushAt bytes: call flush after the last row.
func (r *csvRow) end(w io.Writer) error {
	r.b = append(r.b, '\n')
	r.n = 0
	if len(r.b) <= csvFlushAt {
		return nil
	}
	return r.flush(w)
}

// flush writes the rows built and not yet written.
func (r *csvRow) flush(w io.Writer) error {
	_, err := w.Write(r.b)
	r.b = r.b[:0]
	return err
}

// appendMs appends non-negative milliseconds as seconds.milliseconds:
// the seconds, a point and the milliseconds zero-padded to three digits.
func appendMs(b []byte, ms sim.Time) []byte {
	b = appendUint(b, uint64(ms)/1000)
	f := uint64(ms) % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendUint appends v in decimal, as strconv.AppendUint does, the
// digits written in place, two at a time from the end.
func appendUint(b []byte, v uint64) []byte {
	n := decimalDigits(v)
	b = slices.Grow(b, n)
	b = b[:len(b)+n]
	i := len(b)
	for v >= 100 {
		q := v / 100
		d := 2 * (v - 100*q)
		i -= 2
		b[i], b[i+1] = digitPairs[d], digitPairs[d+1]
		v = q
	}
	if v >= 10 {
		b[i-2], b[i-1] = digitPairs[2*v], digitPairs[2*v+1]
	} else {
		b[i-1] = byte('0' + v)
	}
	return b
}

// digitPairs is "00" to "99", two bytes each.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// pow10s[k] is 10^k.
var pow10s = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decimalDigits is the number of decimal digits of v (1 for 0): from its
// bit length (times log10(2) as 1233/4096), one less when v is below
// the power of ten that estimate names.
func decimalDigits(v uint64) int {
	t := bits.Len64(v|1) * 1233 >> 12
	if v|1 < pow10s[t] {
		return t
	}
	return t + 1
}

// appendPad3 appends a non-negative v zero-padded to at least three digits
// (fmt's %03d).
func appendPad3(b []byte, v int64) []byte {
	if v >= 1000 {
		return appendUint(b, uint64(v))
	}
	return append(b, byte('0'+v/100), byte('0'+v/10%10), byte('0'+v%10))
}
