package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTraceSort(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "shuffled.csv")
	require.NoError(t, os.WriteFile(in, []byte("name,submit,duration,gpus\nc,30,5,1\na,10,5,2\nd,30,5,4\nb,20,5,8\n"), 0o644))
	out := filepath.Join(dir, "sorted.csv")
	code, stdout, errOut := gpuplan(t, "trace", "sort", in, "--trace-format", "native", "--out", out)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "4 jobs in submit order (in memory)")
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	want := "name,queue,submit,duration,replicas,gpus,cpu,memory,priority,deadline,node_selector,tolerations,mig,gpu_memory,gpu_model\n" +
		"a,default,10,5,1,2,,,0,,,,,,\nb,default,20,5,1,8,,,0,,,,,,\nc,default,30,5,1,1,,,0,,,,,,\nd,default,30,5,1,4,,,0,,,,,,\n"
	require.Equal(t, want, string(got))

	// The external merge gives the same file; its runs are removed.
	tmp := t.TempDir()
	out2 := filepath.Join(dir, "sorted2.csv")
	code, stdout, errOut = gpuplan(t, "trace", "sort", in, "--format", "native", "--out", out2, "--memory-rows", "1", "--tmp-dir", tmp)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "merged from 4 sorted runs")
	got2, err := os.ReadFile(out2)
	require.NoError(t, err)
	require.Equal(t, string(got), string(got2))
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left)

	// Bad input: exit 2, and nothing written.
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("name,submit,duration\na,x,5\n"), 0o644))
	out3 := filepath.Join(dir, "never.csv")
	code, _, errOut = gpuplan(t, "trace", "sort", bad, "--format", "native", "--out", out3)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "bad.csv:2")
	_, err = os.Stat(out3)
	require.True(t, os.IsNotExist(err))

	code, _, errOut = gpuplan(t, "trace", "sort", in, "--format", "native")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--out is required")
	code, _, _ = gpuplan(t, "trace", "sort", filepath.Join(dir, "missing.csv"), "--format", "native", "--out", out3)
	require.Equal(t, 2, code)
}
