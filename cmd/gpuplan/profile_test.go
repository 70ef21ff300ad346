package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// unzipProfile reads a pprof file: gzip-compressed protocol buffers whose
// string table holds the sample types and function names.
func unzipProfile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err, "%s is not a gzip'd pprof profile", path)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return b
}

func TestSimulateProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	code, out, errOut := gpuplan(t, "simulate", "--cpuprofile", cpu, "--memprofile", mem)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "GPU", "the summary is printed as without profiles")
	c := unzipProfile(t, cpu)
	for _, s := range []string{"samples", "cpu", "nanoseconds"} {
		require.True(t, bytes.Contains(c, []byte(s)), "CPU profile lacks sample type %q", s)
	}
	m := unzipProfile(t, mem)
	for _, s := range []string{"alloc_space", "inuse_space", "gpuplan.dev/gpuplan/sim."} {
		require.True(t, bytes.Contains(m, []byte(s)), "heap profile lacks %q", s)
	}
}

func TestSimulateProfileUnwritable(t *testing.T) {
	// A folder that does not exist: a usage mistake, nothing run.
	code, out, errOut := gpuplan(t, "simulate", "--cpuprofile", filepath.Join(t.TempDir(), "no", "cpu.pprof"))
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "--cpuprofile")
	// A file where the folder should be: an I/O failure.
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	code, _, errOut = gpuplan(t, "simulate", "--memprofile", filepath.Join(file, "mem.pprof"))
	require.Equal(t, 3, code, errOut)
	require.Contains(t, errOut, "--memprofile")
}
