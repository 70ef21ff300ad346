package strict

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// LineTooLong is the InputError for a line (record: a CSV record, a quoted
// field running over several lines) longer than MaxLineBytes.
func LineTooLong(file string, line int, record bool) *InputError {
	msg := fmt.Sprintf("the line is longer than %d MiB: is this a text file of the format given?", MaxLineBytes>>20)
	if record {
		msg = fmt.Sprintf("a record (a quoted field running over several lines) is longer than %d MiB: is a quote left open?", MaxLineBytes>>20)
	}
	return &InputError{File: file, Line: line, Msg: msg}
}

// CheckLines refuses data (a file read whole) with a line longer than
// MaxLineBytes, as an InputError naming the file and line.
func CheckLines(file string, data []byte) error {
	line := 1
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > MaxLineBytes {
			return LineTooLong(file, line, false)
		}
		if i == len(data) {
			break
		}
		data = data[i+1:]
		line++
	}
	return nil
}

// maxMessageBytes bounds an error message built from a decoder's text.
const maxMessageBytes = 4 * MaxQuote

// BoundMessage rewrites a decoder's error text so that it quotes at most
// MaxQuote bytes of input: each Go-quoted string in it longer than that is
// re-quoted with Quote, and the whole is cut to a few hundred bytes.
func BoundMessage(msg string) string {
	if len(msg) <= MaxQuote {
		return msg
	}
	var b strings.Builder
	for rest := msg; rest != ""; {
		i := strings.IndexByte(rest, '"')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		q, err := strconv.QuotedPrefix(rest[i:])
		if err != nil {
			b.WriteString(rest[i:])
			break
		}
		if s, err := strconv.Unquote(q); err == nil && len(s) > MaxQuote {
			b.WriteString(Quote(s))
		} else {
			b.WriteString(q)
		}
		rest = rest[i+len(q):]
	}
	out := b.String()
	if len(out) > maxMessageBytes {
		return strings.ToValidUTF8(out[:maxMessageBytes], "") + fmt.Sprintf("... (%d bytes of message cut)", len(out)-maxMessageBytes)
	}
	return out
}

// BoundError returns err with its message bounded as BoundMessage does
// (an InputError keeps its file, line and field).
func BoundError(err error) error {
	if err == nil {
		return nil
	}
	var ie *InputError
	if errors.As(err, &ie) {
		if len(ie.Msg) <= MaxQuote && len(ie.Field) <= MaxQuote {
			return err
		}
		out := *ie
		out.Msg = BoundMessage(ie.Msg)
		if len(out.Field) > MaxQuote {
			out.Field = Quote(out.Field)
		}
		return &out
	}
	if msg := err.Error(); len(msg) > MaxQuote {
		if b := BoundMessage(msg); b != msg {
			return errors.New(b)
		}
	}
	return err
}
