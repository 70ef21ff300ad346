package strict

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// InputError is bad input: a file that cannot be read as what it claims to
// be. It names the file, the line (and column when known) and the field.
// Commands exit 2 on it.
type InputError struct {
	File   string
	Line   int
	Column int
	Field  string
	Msg    string
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ExitCode is 2: bad input.
func (e *InputError) ExitCode() int { return 2 }

// Errorf is an InputError at a file's line (0: none) and field.
func Errorf(file string, line int, field, format string, args ...any) *InputError {
	return &InputError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ReadErr is why a file could not be read, without the path the error
// repeats ("no such file" for one missing).
func ReadErr(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// APIVersion is the apiVersion of gpuplan's own documents: a scenario, a
// rules file (kind Assertions), a calibration profile.
const APIVersion = "gpuplan.dev/v1alpha1"
