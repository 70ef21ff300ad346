package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad trace input on the command line: exit 2 with the file, line and
// field, quoting little of the input, in bounded memory.

func traceFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// gpuplanAlloc runs gpuplan and says how many bytes it allocated.
func gpuplanAlloc(t *testing.T, args ...string) (int, string, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, _, errOut := gpuplan(t, args...)
	runtime.ReadMemStats(&after)
	return code, errOut, after.TotalAlloc - before.TotalAlloc
}

func TestSimulateTraceBadInputExits2(t *testing.T) {
	for _, c := range []struct{ name, format, body, want string }{
		{"big.csv", "csv", "name,submit,duration,gpus,cpu,memory\na,0,10,1,1e16,1e20\n", `big.csv:2:10: cpu: cpu "1e16" is more than any node holds (at most 4096 cores)`},
		{"b15.csv", "csv", "name,submit,duration,gpus,cpu\na,0,10,1,1e15\n", `b15.csv:2:10: cpu: cpu "1e15" is more than any node holds`},
		{"ei.csv", "csv", "name,submit,duration,gpus,cpu\na,0,10,1,8Ei\n", `ei.csv:2:10: cpu: cpu "8Ei" is more than any node holds`},
		{"mem.csv", "csv", "name,submit,duration,gpus,memory\na,0,10,1,1e20\n", `mem.csv:2:10: memory: memory "1e20" is more than any node holds (at most 64 TiB)`},
		{"rep.csv", "csv", "name,submit,duration,replicas\na,0,10,1000000000\n", `rep.csv:2:8: replicas: "1000000000" is not a whole number in 1..100000`},
		{"rep.jsonl", "jsonl", `{"submit": 0, "duration": 10, "replicas": 1000000000}`, `rep.jsonl:1: replicas: 1000000000 is not a whole number in 1..100000`},
		{"ei.jsonl", "native", `{"submit": 0, "duration": 10, "cpu": "8Ei"}`, `ei.jsonl:1: cpu: cpu "8Ei" is more than any node holds`},
		{"header.csv", "csv", "name,submit,duration\n", "header.csv: the trace has a header row and no rows: no jobs to size a cluster for"},
		{"mig.csv", "csv", "name,submit,duration,gpus,mig\na,0,10,1,mig-9g.99gb\n", `mig.csv:2:10: mig: "mig-9g.99gb" is not a MIG profile (known: 1g.5gb, 1g.10gb,`},
		{"mig.jsonl", "jsonl", `{"submit": 0, "duration": 10, "gpus": 1, "mig": "9g.99gb"}`, `mig.jsonl:1: mig: "9g.99gb" is not a MIG profile (known: `},
		{"openb.csv", "openb", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np,99999999999,1,1,1000,0,1,0\n", `openb.csv:2:3: cpu_milli: 99999999999 is more than 4096000`},
		{"creds", "csv", "AKIA" + strings.Repeat("S", 300) + "\n", `creds:1:1: "AKIA`},
	} {
		p := traceFile(t, c.name, c.body)
		code, _, errOut := gpuplan(t, "simulate", "--trace", p, "--trace-format", c.format)
		require.Equal(t, 2, code, "%s: %s", c.name, errOut)
		require.Contains(t, errOut, c.want, c.name)
		require.Less(t, len(errOut), len(p)+600, errOut)
	}
}

func TestSimulateTraceDevicesAndLongLinesInBoundedMemory(t *testing.T) {
	long := traceFile(t, "long.csv", "submit,duration\n0,"+strings.Repeat("9", 2<<20)+"\n")
	longJSON := traceFile(t, "long.jsonl", `{"submit": 0, "duration": `+strings.Repeat("9", 2<<20)+"}\n")
	for _, c := range []struct{ path, format, want string }{
		{"/dev/zero", "csv", "/dev/zero: is a device, not a regular file"},
		{"/dev/zero", "jsonl", "/dev/zero: is a device, not a regular file"},
		{"/dev/zero", "philly-raw", "/dev/zero: is a device, not a regular file"},
		{t.TempDir(), "csv", "is a folder, not a regular file"},
		{long, "csv", "long.csv:2: the line is longer than 1 MiB"},
		{longJSON, "jsonl", "long.jsonl:1: the line is longer than 1 MiB"},
	} {
		if _, err := os.Stat(c.path); err != nil {
			continue
		}
		code, errOut, alloc := gpuplanAlloc(t, "simulate", "--trace", c.path, "--trace-format", c.format)
		require.Equal(t, 2, code, errOut)
		require.Contains(t, errOut, c.want)
		require.Less(t, alloc, uint64(50<<20), "%s as %s allocated %d bytes", c.path, c.format, alloc)
	}
	// The same through a scenario's workload.trace.
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(sc, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: zero}
spec:
  cluster:
    pools: [{name: a, count: 1, gpuModel: H100-80GB, gpusPerNode: 8, cpu: "96", memory: 1Ti}]
  workload:
    trace: {path: /dev/zero, format: csv}
`), 0o644))
	code, errOut, alloc := gpuplanAlloc(t, "simulate", sc)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "/dev/zero: is a device, not a regular file")
	require.Less(t, alloc, uint64(50<<20))
}

// A byte order mark and a row one place out of order replay as the clean,
// sorted trace does.
func TestSimulateTraceBOMAndReorder(t *testing.T) {
	sorted := traceFile(t, "sorted.csv", "name,submit,duration,gpus\na,0,600,1\nb,60,600,2\nc,120,600,1\nd,180,600,4\n")
	shuffled := traceFile(t, "shuffled.csv", "\xef\xbb\xbfname,submit,duration,gpus\nb,60,600,2\na,0,600,1\nd,180,600,4\nc,120,600,1\n")
	var jobs []string
	for _, p := range []string{sorted, shuffled} {
		out := t.TempDir()
		code, _, errOut := gpuplan(t, "simulate", "--trace", p, "--trace-format", "csv", "--out", out)
		require.Equal(t, 0, code, errOut)
		b, err := os.ReadFile(filepath.Join(out, "jobs.csv"))
		require.NoError(t, err)
		jobs = append(jobs, string(b))
	}
	require.Equal(t, jobs[0], jobs[1])
	require.Contains(t, jobs[0], "\n3,d,default,")
}

// A calibration profile that is not one (a secret named by mistake) is
// quoted to 80 bytes, and a rules file's .inf is placed.
func TestOtherInputsQuoteLittle(t *testing.T) {
	dir := t.TempDir()
	secret := strings.Repeat("supersecretpassword", 1000)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.txt"), []byte(secret+"\n"), 0o600))
	sc := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(sc, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: secret}
spec:
  calibration: secret.txt
  cluster:
    pools: [{name: a, count: 1, gpuModel: H100-80GB, gpusPerNode: 8, cpu: "96", memory: 1Ti}]
  workload:
    synthetic: {jobs: 1, classes: [{name: c, arrival: {process: poisson, ratePerHour: 1}, pod: {gpus: 1}, duration: {distribution: constant, value: 1h}}]}
`), 0o644))
	code, _, errOut := gpuplan(t, "simulate", sc)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "secret.txt:1:1: ")
	require.NotContains(t, errOut, secret[:200])
	require.Less(t, len(errOut), 400, errOut)

	rules := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte("apiVersion: gpuplan.dev/v1alpha1\nkind: Assertions\nrules:\n- {metric: allocation, op: '>=', value: .inf}\n"), 0o644))
	code, _, errOut = gpuplan(t, "validate", "--baseline", sc, "--candidate", sc, "--assert", rules)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, `rules.yaml:4:41: rules[0].value: ".inf" is not a finite number`)
}
