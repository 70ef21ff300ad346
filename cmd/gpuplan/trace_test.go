package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/traces"
)

const fixtures = "../../scenarios/testdata/"

func TestTraceStats(t *testing.T) {
	code, out, errOut := gpuplan(t, "trace", "stats", fixtures+"helios.csv", "--format", "helios", "--output", "json")
	require.Equal(t, 0, code, errOut)
	var st traces.TraceStats
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	// By hand from the rows: 8 x 1 h + 16 x 0.5 h + 12 x 2 h.
	require.Equal(t, 4, st.Jobs)
	require.Equal(t, 3, st.GPUJobs)
	require.Equal(t, int64(7), st.Pods)
	require.Equal(t, 40.0, st.GPUHours)
	require.Equal(t, 173.0, st.SpanSeconds)
	require.Equal(t, 16.0, st.GPUsPerJob.Max)
	require.Equal(t, []traces.QueueCount{{Name: "vcA", Jobs: 2, GPUJobs: 1, GPUHours: 8}, {Name: "vcB", Jobs: 2, GPUJobs: 2, GPUHours: 32}}, st.Queues)
	// 1001 (8) runs 0-1 h, 1002 (16) 53 s-31 min, 1004 (12) from 173 s: 36 at once.
	require.Equal(t, 36.0, st.PeakGPUs)

	code, out, _ = gpuplan(t, "trace", "stats", fixtures+"philly_raw.json", "--format", "philly-raw")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Jobs 2 (2 ask for GPUs), 3 pods, 10.0 GPU-hours")

	code, _, errOut = gpuplan(t, "trace", "stats", fixtures+"helios.csv")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--format is required")
}

func TestTraceConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"philly.csv", "philly.jsonl.gz"} {
		out := filepath.Join(dir, name)
		code, msg, errOut := gpuplan(t, "trace", "convert", fixtures+"philly.csv", "--format", "philly", "--out", out)
		require.Equal(t, 0, code, errOut)
		require.Contains(t, msg, "4 of 4 jobs read")
		src, err := traces.OpenTrace(fixtures+"philly.csv", traces.FormatPhilly, traces.TraceOptions{})
		require.NoError(t, err)
		back, err := traces.OpenTrace(out, traces.FormatNative, traces.TraceOptions{})
		require.NoError(t, err)
		a, err := traces.ComputeTraceStats(src)
		require.NoError(t, err)
		b, err := traces.ComputeTraceStats(back)
		require.NoError(t, err)
		a.Notes, b.Notes = nil, nil
		require.Equal(t, a, b, name)
	}
	// Filters and transforms: at least 8 GPUs keeps the 12- and 16-GPU
	// jobs, submitted at 2 s and 14 s; twice the rate halves that.
	out := filepath.Join(dir, "big.csv")
	code, msg, errOut := gpuplan(t, "trace", "convert", fixtures+"philly.csv", "--format", "philly", "--out", out, "--min-gpus", "8", "--arrival-scale", "2", "--duration-scale", "0.5")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, msg, "2 of 4 jobs read")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Equal(t, strings.Join(traces.NativeColumns(), ","), lines[0])
	require.Equal(t, "philly-3,vc1,1,30,2,6,,,0,,,,,,", lines[1])
	require.Equal(t, "philly-2,vc2,7,3600,2,8,,,0,,,,,,", lines[2])
	// A window: [10 s, 1 h) keeps philly-2 (14 s) and the 7 min job, shifted.
	code, msg, _ = gpuplan(t, "trace", "convert", fixtures+"philly.csv", "--format", "philly", "--out", out, "--from", "10s", "--to", "1h")
	require.Equal(t, 0, code)
	require.Contains(t, msg, "2 of 4 jobs read")
}

func TestTraceGenerateIsReproducible(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	for _, p := range []string{a, b} {
		code, _, errOut := gpuplan(t, "trace", "generate", "--jobs", "2000", "--seed", "3", "--gpus", "800", "--out", p)
		require.Equal(t, 0, code, errOut)
	}
	x, err := os.ReadFile(a)
	require.NoError(t, err)
	y, err := os.ReadFile(b)
	require.NoError(t, err)
	require.Equal(t, x, y)
	code, out, _ := gpuplan(t, "trace", "stats", a, "--format", "native", "--output", "json")
	require.Equal(t, 0, code)
	var st traces.TraceStats
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Equal(t, 2000, st.Jobs)
	require.Equal(t, 512.0, st.GPUsPerJob.Max, "gangs reach 64 pods of 8 GPUs")
	// Offered load: GPU-hours over the span should be near 85% of 800 GPUs.
	load := st.GPUHours / (st.SpanSeconds / 3600) / 800
	require.InDelta(t, 0.85, load, 0.2)
}

// A trace with no cluster gets one sized from it, and the report says so.
func TestDerivedCluster(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "--trace", fixtures+"helios.csv", "--trace-format", "helios", "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	s := readSummary(t, dir)
	require.Equal(t, 4, s.Jobs.ByOutcome["completed"])
	require.Len(t, s.Pools, 1)
	// 36 GPUs at once -> 5 nodes of 8.
	require.Equal(t, 5, s.Pools[0].Nodes)
	require.Contains(t, strings.Join(s.Assumptions, "\n"), "cluster derived from the trace: pool derived-generic, 5 nodes of 8 generic GPUs")

	// PAI with its machine list and job table, through a scenario.
	sc := filepath.Join(dir, "pai.yaml")
	abs, err := filepath.Abs(fixtures)
	require.NoError(t, err)
	fx := abs + "/"
	require.NoError(t, os.WriteFile(sc, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: pai}
spec:
  cluster:
    nodeList: {path: `+fx+`pai_machine_spec.csv, format: pai}
  workload:
    trace: {path: `+fx+`pai_task_table.csv, format: pai, jobTable: `+fx+`pai_job_table.csv}
`), 0o644))
	code, _, errOut = gpuplan(t, "simulate", sc, "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	s = readSummary(t, dir)
	require.Equal(t, 4, s.Jobs.Total)
	require.Equal(t, 4, s.Jobs.ByOutcome["completed"])
	queues := []string{}
	for _, q := range s.Queues {
		queues = append(queues, q.Name)
	}
	require.Equal(t, []string{"pai", "userA", "userB"}, queues)
}
