package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
)

var update = flag.Bool("update", false, "rewrite golden files")

func gpuplan(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(p, []byte(got), 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "golden %s (rerun with -update after checking the change)", p)
}

func readSummary(t *testing.T, dir string) reports.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	require.NoError(t, err)
	var s reports.Summary
	require.NoError(t, json.Unmarshal(b, &s))
	return s
}

func TestDefaultScenarioTableGolden(t *testing.T) {
	code, out, errOut := gpuplan(t, "simulate")
	require.Equal(t, 0, code, errOut)
	golden(t, "simulate-default.txt", out)
}

func TestSameSeedSameBytes(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		code, _, errOut := gpuplan(t, "simulate", "--seed", "9", "--out", dir, "--output", "json")
		require.Equal(t, 0, code, errOut)
	}
	for _, f := range []string{"summary.json", "jobs.csv", "timeline.csv", "report.md", "report.html", "metrics.prom", "metrics.csv", "plots/allocation.png", "plots/allocation.svg", "plots/cost.png", "plots/wait-cdf.svg"} {
		x, err := os.ReadFile(filepath.Join(a, f))
		require.NoError(t, err)
		y, err := os.ReadFile(filepath.Join(b, f))
		require.NoError(t, err)
		require.True(t, bytes.Equal(x, y), "%s differs between two runs with seed 9", f)
	}
	// A different seed gives a different workload.
	c := t.TempDir()
	code, _, _ := gpuplan(t, "simulate", "--seed", "10", "--out", c)
	require.Equal(t, 0, code)
	x, _ := os.ReadFile(filepath.Join(a, "jobs.csv"))
	y, _ := os.ReadFile(filepath.Join(c, "jobs.csv"))
	require.False(t, bytes.Equal(x, y))
	// No temporary files are left behind.
	var names []string
	require.NoError(t, filepath.WalkDir(a, func(path string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(a, path)
		names = append(names, rel)
		return err
	}))
	require.Equal(t, []string{".", "focus.csv", "jobs.csv", "metrics.csv", "metrics.om.txt", "metrics.prom", "plots", "plots/allocation.png", "plots/allocation.svg", "plots/cost-time.png", "plots/cost-time.svg", "plots/cost.png", "plots/cost.svg",
		"plots/jct-cdf.png", "plots/jct-cdf.svg", "plots/queue.png", "plots/queue.svg", "plots/team-cost.png", "plots/team-cost.svg", "plots/wait-cdf.png", "plots/wait-cdf.svg",
		"report.html", "report.md", "summary.json", "timeline.csv"}, names)
}

// The jobs table and the summary agree with each other and with the ledger.
func TestJobsCSVMatchesSummary(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "--out", dir)
	require.Equal(t, 0, code, errOut)
	s := readSummary(t, dir)
	f, err := os.Open(filepath.Join(dir, "jobs.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, reports.JobsHeader(), rows[0])
	require.Len(t, rows[1:], s.Jobs.Total)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var gpuh float64
	outcomes := map[string]int{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[col["gpu_hours"]], 64)
		require.NoError(t, err)
		gpuh += v
		outcomes[r[col["outcome"]]]++
	}
	require.InDelta(t, s.Cluster.GPUHoursAllocated, gpuh, 0.001*float64(len(rows)))
	for k, v := range s.Jobs.ByOutcome {
		require.Equal(t, v, outcomes[k], k)
	}
	require.InDelta(t, s.Cluster.GPUHoursSupplied, s.Cluster.GPUHoursAllocated+s.Cluster.GPUHoursIdle, 0.002)
	// 6 x 8 H100 + 8 x 4 A10G over 72 h.
	require.Equal(t, 80, s.Cluster.GPUs)
	require.InDelta(t, 80*72.0, s.Cluster.GPUHoursSupplied, 1e-9)
}

// The openb production trace on its own 1,213 GPU nodes. The expected
// counts come from the CSV files directly (testdata/openb/PROVENANCE.md).
func TestOpenbReplay(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := gpuplan(t, "simulate", "../../scenarios/examples/openb-replay.yaml", "--out", dir)
	require.Equal(t, 0, code, errOut)
	s := readSummary(t, dir)
	require.Equal(t, 1213, s.Cluster.Nodes)
	require.Equal(t, 6212, s.Cluster.GPUs)
	require.Equal(t, 8152, s.Jobs.Total, "every pod is a job")
	require.Equal(t, 7064, s.Jobs.GPUJobs)
	require.Equal(t, 0, s.Jobs.ByOutcome["unschedulable"], "every pod fits an empty openb node")
	// Sum over pods of GPUs x (deletion - scheduled), or x (deletion -
	// creation) for the 897 that never ran: 51,498.736 GPU-hours.
	require.InDelta(t, 51498.736, s.Cluster.GPUHoursAllocated, 0.01)
	// The one pending pod deleted at the instant it was created is abandoned.
	require.Equal(t, 1, s.Jobs.ByOutcome["abandoned"])
	require.Equal(t, 8151, s.Jobs.ByOutcome["completed"])
	require.Contains(t, strings.Join(s.Assumptions, "\n"), "897 pods never ran in the source trace")
	require.Contains(t, out, "openb: 8152 pods read, 7064 of them ask for GPUs")
	// The trace peaks at 65.6 GPUs in use: this cluster never makes a pod wait.
	require.Zero(t, s.QueueWait.Max)

	// Excluding the pods that never ran leaves 7,255.
	code, _, errOut = gpuplan(t, "simulate", "--trace", "../../testdata/openb/openb_pod_list_default.csv",
		"--trace-format", "openb", "--pending-pods", "exclude", "--output", "json", "--out", dir)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 8152-897, readSummary(t, dir).Jobs.Total)
}

// The same trace on the default cluster, whose only untainted pool is 8
// A10G nodes of 48 CPUs, 192 GiB and 4 GPUs: 47 pods exceed it (all by CPU
// and memory; 44 also by GPUs), counted from the CSV.
func TestOpenbOnSmallClusterReportsPodsThatNeverFit(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "--trace", "../../testdata/openb/openb_pod_list_default.csv", "--trace-format", "openb", "--cluster", "scenario", "--out", dir)
	require.Equal(t, 0, code, errOut)
	s := readSummary(t, dir)
	require.Equal(t, 47, s.Jobs.ByOutcome["unschedulable"])
	total := 0
	for _, r := range s.Unschedulable {
		total += r.Jobs
		require.Contains(t, r.Reason, "node(s) had untolerated taint {gpuplan.dev/dedicated: training}")
	}
	require.Equal(t, 47, total)
	require.NotZero(t, s.QueueWait.Max, "32 GPUs make the trace queue")
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	code, def, _ := gpuplan(t, "scenario", "default")
	require.Equal(t, 0, code)
	require.NoError(t, os.WriteFile(typo, []byte(strings.Replace(def, "gpusPerNode: 4", "gpusPerNod: 4", 1)), 0o644))
	code, _, errOut := gpuplan(t, "simulate", typo)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, typo+":32:7: spec.cluster.pools[1].gpusPerNod: unknown field")

	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("submit,duration,gpus\n0,10,1\n5,1\n"), 0o644))
	code, _, errOut = gpuplan(t, "simulate", "--trace", bad, "--trace-format", "csv")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, bad+":3:1: wrong number of fields")
	require.NoError(t, os.WriteFile(bad, []byte("submit,duration,gpus\n0,10,1\nx,1,1\n"), 0o644))
	code, _, errOut = gpuplan(t, "simulate", "--trace", bad, "--trace-format", "csv")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, bad+`:3:1: submit: "x" is not a number of seconds`)

	for _, args := range [][]string{
		{"simulate", "--bogus"},
		{"simulate", "a.yaml", "b.yaml"},
		{"simulate", "--output", "xml"},
		{"simulate", "--trace", bad},
		{"simulate", "--trace", bad, "--trace-format", "philly"},
		{"simulate", filepath.Join(dir, "missing.yaml")},
		{"scenario", "check"},
	} {
		code, _, errOut := gpuplan(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
	}
	code, out, _ := gpuplan(t, "scenario", "check", "../../scenarios/examples/openb-replay.yaml")
	require.Equal(t, 0, code)
	require.Contains(t, out, "ok (scenario openb-replay)")
}
