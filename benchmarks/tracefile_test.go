package benchmarks

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"gpuplan.dev/gpuplan/scenarios/traces"
)

// traceFile writes a trace with write to the file name in a temporary
// folder and returns its path.
func traceFile(b *testing.B, name string, write func(io.Writer) error) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := write(f); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// nativeTrace writes the jobs write gives a native CSV writer to the
// file name in a temporary folder and returns its path.
func nativeTrace(b *testing.B, name string, write func(*traces.NativeWriter) error) string {
	b.Helper()
	return traceFile(b, name, func(f io.Writer) error {
		w, err := traces.NewNativeWriter(f, false)
		if err != nil {
			return err
		}
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	})
}
