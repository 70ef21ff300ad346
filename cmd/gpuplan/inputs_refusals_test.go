package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Issue 33: a scenario whose trace or rate file is /proc/self/environ
// (directly, through a link, or a copy) is refused by name and reason,
// and no message quotes the environment, which in a CI gate holds its
// secrets.
func TestProcEnvironNeverQuoted(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc here")
	}
	// gpuplan runs as a process of its own whose environment (what its
	// /proc/self/environ holds) has the secret.
	const secret = "s3cr3t-9f2c1e"
	env := append(os.Environ(), "SECRET_TOKEN="+secret)
	dir := t.TempDir()
	require.NoError(t, os.Symlink("/proc/self/environ", filepath.Join(dir, "env-link")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "env-copy"), []byte(strings.Join(env, "\x00")+"\x00"), 0o644))
	trace := strings.Replace(boundsScenario, "    synthetic:\n", "    trace: {path: PATH, format: csv}\n    xsynthetic:\n", 1)
	trace = trace[:strings.Index(trace, "    xsynthetic:\n")]
	rates := strings.Replace(servicesScenario, "{constant: 100}", "{csv: {path: PATH}}", 1)
	for _, sc := range []struct{ name, body string }{{"trace", trace}, {"rates", rates}} {
		for _, c := range []struct{ path, want string }{
			{"/proc/self/environ", "/proc/self/environ: is under /proc, a special file system: gpuplan reads a user's files, not the kernel's"},
			{"env-link", filepath.Join(dir, "env-link") + ": is under /proc, a special file system"},
			{"env-copy", filepath.Join(dir, "env-copy") + ": is not a text file: it has a NUL byte at byte "},
		} {
			p := boundsFile(t, dir, "s.yaml", strings.Replace(sc.body, "PATH", c.path, 1))
			for _, args := range [][]string{{"scenario", "check", p}, {"simulate", p}, {"simulate", "--restrict-paths", p}} {
				cmd := gpuplanProcess(t, args...)
				cmd.Env = append(cmd.Env, "SECRET_TOKEN="+secret)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				start := time.Now()
				err := cmd.Run()
				took := time.Since(start)
				errOut := stderr.String()
				require.Error(t, err)
				require.Equal(t, 2, cmd.ProcessState.ExitCode(), "%s %s %v: %s", sc.name, c.path, args, errOut)
				want := c.want
				if args[1] == "--restrict-paths" && c.path != "env-copy" {
					// Restricted, it is refused first for where it is.
					want = "outside the scenario's folder"
				}
				require.Contains(t, errOut, want, "%s %v", sc.name, args)
				require.NotContains(t, errOut, secret)
				require.NotContains(t, errOut, "SECRET_TOKEN")
				for _, kv := range env {
					if _, v, ok := strings.Cut(kv, "="); ok && len(v) >= 8 {
						require.NotContains(t, errOut, v, "%s %v quotes the environment", sc.name, args)
					}
				}
				// Refused without reading on: no hang (not a speed bound;
				// a loaded machine takes seconds to start a process).
				require.Less(t, took, 60*time.Second)
			}
		}
	}
}

// validate, the CI gate, restricts paths by default: a scenario naming a
// file outside its folder is refused before any run; other commands
// restrict with --restrict-paths.
func TestRestrictPathsFlag(t *testing.T) {
	outside := t.TempDir()
	boundsFile(t, outside, "jobs.csv", "name,submit,duration,gpus\nx,0,600,1\n")
	dir := t.TempDir()
	trace := strings.Replace(boundsScenario, "    synthetic:\n", "    trace: {path: "+filepath.Join(outside, "jobs.csv")+", format: csv}\n    xsynthetic:\n", 1)
	trace = trace[:strings.Index(trace, "    xsynthetic:\n")]
	p := boundsFile(t, dir, "s.yaml", trace)
	rules := boundsFile(t, dir, "rules.yaml", "apiVersion: gpuplan.dev/v1alpha1\nkind: Assertions\nreplications: 2\nrules:\n- {name: done, metric: jobs.completed, op: \">=\", value: 1}\n")
	want := p + ":16:19: spec.workload.trace.path: path "
	code, _, errOut := gpuplan(t, "validate", "--baseline", p, "--candidate", p, "--assert", rules)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, want)
	require.Contains(t, errOut, "outside the scenario's folder")
	code, _, errOut = gpuplan(t, "validate", "--restrict-paths=false", "--baseline", p, "--candidate", p, "--assert", rules)
	require.Equal(t, 0, code, errOut)
	for _, args := range [][]string{{"scenario", "check", "--restrict-paths", p}, {"simulate", "--restrict-paths", p}, {"manifests", "--restrict-paths", "--out", filepath.Join(dir, "m"), p}} {
		code, _, errOut = gpuplan(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.Contains(t, errOut, want, "%v", args)
	}
	code, _, errOut = gpuplan(t, "scenario", "check", p)
	require.Equal(t, 0, code, errOut)
}

// Flag errors name the flag and the value and say what is accepted; an
// output folder that is not there is the environment's failure (exit 3),
// said before any run.
func TestFlagErrorsNameFlagAndValue(t *testing.T) {
	dir := t.TempDir()
	sc := boundsFile(t, dir, "s.yaml", boundsScenario)
	rules := boundsFile(t, dir, "rules.yaml", "apiVersion: gpuplan.dev/v1alpha1\nkind: Assertions\nrules:\n- {name: done, metric: jobs.completed, op: \">=\", value: 1}\n")
	trace := boundsFile(t, dir, "t.csv", "name,submit,duration\nx,0,10\n")
	missing := filepath.Join(dir, "no", "such", "folder", "report.xml")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"trace", "sort", trace, "--format", "csv", "--out", filepath.Join(dir, "o.csv"), "--memory-rows", "0"}, 2,
			"--memory-rows 0: want at least 1 (rows sorted in memory at once; default 2000000)"},
		{[]string{"validate", "--baseline", sc, "--candidate", sc, "--assert", rules, "--junit", missing}, 3,
			`--junit "` + missing + `": the folder "` + filepath.Dir(missing) + `" does not exist; create it first (nothing was run)`},
		{[]string{"validate", "--baseline", sc, "--candidate", sc, "--assert", rules, "--markdown", missing}, 3, `--markdown "` + missing + `": the folder`},
		{[]string{"validate", "--baseline", sc, "--candidate", sc, "--assert", rules, "--replications", "-3"}, 2,
			"--replications -3: want 1..1000 (or 0: the rules file's, else 5)"},
		{[]string{"recommend", sc, "--vary", "cluster.pools[0].count=1,2", "--coarse", "1"}, 2, "--coarse 1: want 2..100 values of each parameter in the first grid"},
		{[]string{"recommend", sc, "--vary", "cluster.pools[0].count=1,2", "--workers", "-1"}, 2, "--workers -1: want 0 (one per core) or more"},
		{[]string{"recommend", sc, "--vary", "cluster.pools[0].count=1,2", "--min-seeds", "1"}, 2, "--min-seeds 1: want 2..1000 (an interval needs two seeds)"},
		{[]string{"recommend", sc, "--vary", "cluster.pools[0].count=1,2", "--max-seeds", "2"}, 2, "--max-seeds 2: want --min-seeds (3)..1000"},
		{[]string{"trace", "generate", "--out", filepath.Join(dir, "g.csv"), "--jobs", "0"}, 2, "--jobs 0: want a positive number of jobs"},
		{[]string{"trace", "generate", "--out", filepath.Join(dir, "g.csv"), "--jobs", "10", "--gpus", "4"}, 2, "--gpus 4: want at least 8 (one node)"},
		{[]string{"trace", "generate", "--out", filepath.Join(dir, "g.csv"), "--jobs", "10", "--load", "11"}, 2, "--load 11: want a number in (0, 10]"},
		{[]string{"trace", "convert", trace, "--format", "csv", "--out", filepath.Join(dir, "c.csv"), "--arrival-scale", "-1"}, 2, "--arrival-scale -1: want a positive number (1 keeps the trace's)"},
		{[]string{"trace", "convert", trace, "--format", "csv", "--out", filepath.Join(dir, "c.csv"), "--max-jobs", "-1"}, 2, "--max-jobs -1: want 0 (all) or more"},
		{[]string{"advise", "checkpoint", "--checkpoint-cost", "5m"}, 2, "--mtbf is required: a positive duration (examples: 5m, 4h, 1d)"},
		{[]string{"compare", filepath.Join(dir, "none.json"), sc}, 2, "gpuplan: " + filepath.Join(dir, "none.json") + ": no such file\n"},
		{[]string{"sweep", filepath.Join(dir, "none.yaml")}, 2, "gpuplan: " + filepath.Join(dir, "none.yaml") + ": no such file\n"},
		{[]string{"calibrate", "parse", filepath.Join(dir, "none.txt")}, 2, "gpuplan: " + filepath.Join(dir, "none.txt") + ": no such file\n"},
		{[]string{"simulate", "--trace", trace, "--trace-format", "nope"}, 2, `--trace-format "nope": want one of native, csv, jsonl, openb, philly, philly-raw, helios, pai`},
		{[]string{"manifests", sc, "--out", filepath.Join(dir, "m"), "--training-api", "mpi"}, 2, `--training-api "mpi" is not one of job, pytorchjob, tfjob`},
		{[]string{"manifests", sc, "--out", filepath.Join(dir, "m"), "--access-mode", "ReadOnlyMany"}, 2, `--access-mode "ReadOnlyMany" is not one of ReadWriteOnce, ReadWriteMany`},
	} {
		code, errOut, _, took := runMeasured(t, c.args...)
		require.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		require.Contains(t, errOut, "gpuplan: ", c.args)
		require.Contains(t, errOut, c.want, "%v", c.args)
		require.Less(t, took, time.Second, "%v", c.args)
	}
	_, err := os.Stat(filepath.Dir(missing))
	require.True(t, os.IsNotExist(err), "no folder is made")
}
