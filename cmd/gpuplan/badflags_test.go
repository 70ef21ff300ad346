package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every command refuses every bad flag value with exit status 2 and a
// message that names the flag, quotes the value (bounded) and says what
// it would take, before it does any work (issue 33: a flag error has no
// file:line, so the flag is its address).
func TestBadFlagValuesNameTheFlagAndTheValue(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	scenario := "testdata/cost-two-nodes.yaml"
	spec := "testdata/sweep-two-nodes.yaml"
	val := []string{"validate", "--baseline", "../../scenarios/examples/validate/baseline.yaml",
		"--candidate", "../../scenarios/examples/validate/candidate.yaml", "--assert", "../../scenarios/examples/validate/rules.yaml"}
	rec := []string{"recommend", "--vary", "cluster.pools[0].count=2..4"}
	nodes, pods := "../../testdata/openb/openb_node_list_gpu_node.csv", "../../testdata/openb/openb_pod_list_default.csv"
	inf := []string{"inflate", "--nodes", nodes, "--pods", pods}
	nccl := "../../testdata/nccl/a100_80gb_8gpu_nccltests_2.19.4_format.txt"
	adv := []string{"advise", "checkpoint", "--mtbf", "4h", "--checkpoint-cost", "5m"}
	man := []string{"manifests", scenario, "--out", out}
	conv := []string{"trace", "convert", pods, "--format", "openb", "--out", filepath.Join(tmp, "t.csv")}
	sortT := []string{"trace", "sort", pods, "--format", "openb", "--out", filepath.Join(tmp, "s.csv")}
	gen := []string{"trace", "generate", "--jobs", "10", "--out", filepath.Join(tmp, "g.csv")}
	job := []string{"sweep", spec, "--emit-job", "--shards", "2"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	long := strings.Repeat("x", 10000)

	for _, c := range []struct {
		args        []string
		flag, value string
		// accepts is what the message says the flag takes.
		accepts string
	}{
		// simulate
		{[]string{"simulate", "--output", "xml"}, "output", "xml", "want table, json, yaml or markdown"},
		{[]string{"simulate", "--output", long}, "output", "xxxxxxxx", "want table, json, yaml or markdown"},
		{[]string{"simulate", "--seed", "abc"}, "seed", "abc", "want a whole number, 0 or more"},
		{[]string{"simulate", "--seed", "-1"}, "seed", "-1", "want a whole number, 0 or more"},
		{[]string{"simulate", "--horizon", "5x"}, "horizon", "5x", "examples: 72h, 30d, 0"},
		{[]string{"simulate", "--horizon", "-3h"}, "horizon", "-3h", "examples: 72h, 30d, 0"},
		{[]string{"simulate", "--policy", "nosuch"}, "policy", "nosuch", "neither a placement policy (bestfit, dotprod, fgd"},
		{[]string{"simulate", "--tie-break", "weird"}, "tie-break", "weird", "is not one of lowestIndex, random, nodeOrder"},
		{[]string{"simulate", "--progress", "x"}, "progress", "x", "want auto, always or never"},
		{[]string{"simulate", "--workers", "-1"}, "workers", "-1", "want 0 (one per core) or more"},
		{[]string{"simulate", "--workers", "many"}, "workers", "many", "want a whole number"},
		{[]string{"simulate", "--spot-sensitivity", "maybe"}, "spot-sensitivity", "maybe", "want off or on"},
		{[]string{"simulate", "--cluster", "x"}, "cluster", "x", "want scenario or derive"},
		{[]string{"simulate", "--trace", "t.csv", "--trace-format", "foo"}, "trace-format", "foo", "want one of native, csv, jsonl, openb"},
		{[]string{"simulate", "--trace", "t.csv", "--trace-format", "openb", "--pending-pods", "x"}, "pending-pods", "x", "want replay or exclude"},
		{[]string{"simulate", "--max-events", "0"}, "max-events", "0", "want a positive number of events"},
		{[]string{"simulate", "--max-events", "1e9"}, "max-events", "1e9", "want a whole number"},
		{[]string{"simulate", "--restrict-paths=maybe"}, "restrict-paths", "maybe", "want true or false"},
		// scenario check
		{[]string{"scenario", "check", scenario, "--max-events", "0"}, "max-events", "0", "want a positive number of events"},
		{[]string{"scenario", "check", scenario, "--max-events", "-7"}, "max-events", "-7", "want a positive number of events"},
		// sweep
		{[]string{"sweep", spec, "--shard", "3"}, "shard", "3", "want INDEX/COUNT with 0 <= INDEX < COUNT"},
		{[]string{"sweep", spec, "--shard", "5/4"}, "shard", "5/4", "want INDEX/COUNT with 0 <= INDEX < COUNT"},
		{[]string{"sweep", spec, "--workers", "-2"}, "workers", "-2", "want 0 (one per core) or more"},
		{[]string{"sweep", spec, "--progress", "loud"}, "progress", "loud", "want auto, always or never"},
		{[]string{"sweep", spec, "--max-events", "0"}, "max-events", "0", "want a positive number of events"},
		{with(job[:3], "--shards", "0"), "shards", "0", "want 1..100000"},
		{with(job, "--cpus", "0"), "cpus", "0", "want at least 1"},
		{with(job, "--memory", "lots"), "memory", "lots", "is not a positive quantity such as 4Gi"},
		{with(job, "--parallelism", "-1"), "parallelism", "-1", "want 0 (every pod at once) or more"},
		{with(job, "--namespace", "BAD_NS"), "namespace", "BAD_NS", "want a namespace name"},
		{with(job, "--image", ""), "image", `""`, "want a container image"},
		// recommend
		{[]string{"recommend", "--vary", "nonsense"}, "vary", "nonsense", "want PATH=VALUES or spot:POOL=VALUES"},
		{[]string{"recommend", "--vary", "cluster.pools[0].count=5..2"}, "vary", "cluster.pools[0].count=5..2", "is empty: to (2) is below from (5)"},
		{[]string{"recommend", "--vary", "spot:nopool=0,0.5"}, "vary", "spot:nopool=0,0.5", `no pool "nopool" in spec.cluster.pools`},
		{with(rec, "--minimize", "bogus"), "minimize", "bogus", "unknown metric"},
		{with(rec, "--minimize", "wait.p95{queue="), "minimize", "wait.p95{queue=", "a selector reads {queue=NAME}"},
		{with(rec, "--subject-to", "cost.total"), "subject-to", "cost.total", "want METRIC <= BOUND or METRIC >= BOUND"},
		{with(rec, "--subject-to", "bogus <= 5"), "subject-to", "bogus <= 5", "unknown metric"},
		{with(rec, "--subject-to", "cost.total <= abc"), "subject-to", "cost.total <= abc", `the bound "abc" is not a number`},
		{with(rec, "--subject-to", "completed >= 0.9", "--subject-to", "completed <= 0.5"), "subject-to", "completed <= 0.5", "contradicts completed >= 0.9"},
		{with(rec, "--min-seeds", "1"), "min-seeds", "1", "want 2..1000"},
		{with(rec, "--min-seeds", "x"), "min-seeds", "x", "want a whole number"},
		{with(rec, "--max-seeds", "2"), "max-seeds", "2", "want --min-seeds (3)..1000"},
		{with(rec, "--coarse", "1"), "coarse", "1", "want 2..100"},
		{with(rec, "--workers", "-1"), "workers", "-1", "want 0 (one per core) or more"},
		{with(rec, "--max-events", "0"), "max-events", "0", "want a positive number of events"},
		// validate
		{with(val, "--replications", "-1"), "replications", "-1", "want 1..1000"},
		{with(val, "--replications", "5000"), "replications", "5000", "want 1..1000"},
		{with(val, "--workers", "-3"), "workers", "-3", "want 0 (one per core) or more"},
		{with(val, "--seed", "x"), "seed", "x", "want a whole number, 0 or more"},
		{with(val, "--max-events", "-1"), "max-events", "-1", "want a positive number of events"},
		// compare
		{[]string{"compare", "a/summary.json", "b/summary.json", "--output", "xml"}, "output", "xml", "want table, json, yaml or markdown"},
		// inflate
		{with(inf, "--policy", "x"), "policy", "x", "is not one of bestfit, dotprod, fgd"},
		{with(inf, "--target", "0"), "target", "0", "must be in (0, 100]"},
		{with(inf, "--target", "many"), "target", "many", "want a number"},
		{with(inf, "--tie-break", "x"), "tie-break", "x", "want lowestIndex, random or nodeOrder"},
		{with(inf, "--output", "xml"), "output", "xml", "want table, json or yaml"},
		{with(inf, "--seed", "-4"), "seed", "-4", "want a whole number, 0 or more"},
		// trace
		{[]string{"trace", "stats", pods, "--format", "x"}, "format", "x", "want one of native, csv, jsonl, openb"},
		{[]string{"trace", "stats", pods, "--format", "openb", "--gpus-per-node", "0"}, "gpus-per-node", "0", "must be in 1..64"},
		{[]string{"trace", "stats", pods, "--format", "openb", "--progress", "x"}, "progress", "x", "want auto, always or never"},
		{[]string{"trace", "stats", pods, "--format", "openb", "--output", "xml"}, "output", "xml", "want table, json or yaml"},
		{with(conv, "--from", "x"), "from", "x", "is not a duration from the trace start"},
		{with(conv, "--arrival-scale", "0"), "arrival-scale", "0", "want a positive number"},
		{with(conv, "--duration-scale", "-1"), "duration-scale", "-1", "want a positive number"},
		{with(conv, "--min-gpus", "-1"), "min-gpus", "-1", "want 0 or more"},
		{with(conv, "--max-jobs", "-1"), "max-jobs", "-1", "want 0 (all) or more"},
		{[]string{"trace", "convert", pods, "--format", "openb", "--out", "/nonexistent-gpuplan/t.csv"}, "out", "/nonexistent-gpuplan/t.csv", "does not exist; create it first"},
		{with(gen[:2], "--jobs", "0", "--out", filepath.Join(tmp, "g.csv")), "jobs", "0", "want a positive number of jobs"},
		{with(gen, "--gpus", "4"), "gpus", "4", "want at least 8 (one node)"},
		{with(gen, "--load", "11"), "load", "11", "want a number in (0, 10]"},
		{with(gen, "--progress", "x"), "progress", "x", "want auto, always or never"},
		{with(sortT, "--memory-rows", "0"), "memory-rows", "0", "want at least 1"},
		{with(sortT, "--progress", "x"), "progress", "x", "want auto, always or never"},
		{with(sortT, "--tmp-dir", "/nonexistent-gpuplan"), "tmp-dir", "/nonexistent-gpuplan", "want a folder that exists"},
		// calibrate (the flags are checked before NVML is asked)
		{[]string{"calibrate", "--output", "xml"}, "output", "xml", "want yaml or json"},
		{[]string{"calibrate", "--gpus", "-1"}, "gpus", "-1", "want 0 (every GPU found) or more"},
		{[]string{"calibrate", "--min-bytes", "x"}, "min-bytes", "x", "want a size in bytes"},
		{[]string{"calibrate", "--max-bytes", "4T"}, "max-bytes", "4T", "want a size in bytes"},
		{[]string{"calibrate", "--timeout", "x"}, "timeout", "x", "want a duration"},
		{[]string{"calibrate", "--timeout", "0s"}, "timeout", "0s", "want a positive duration"},
		{[]string{"calibrate", "parse", nccl, "--output", "xml"}, "output", "xml", "want yaml or json"},
		{[]string{"calibrate", "parse", nccl, "--out", "/nonexistent-gpuplan/p.yaml"}, "out", "/nonexistent-gpuplan/p.yaml", "does not exist; create it first"},
		// manifests
		{with(man, "--training-api", "x"), "training-api", "x", "is not one of job, pytorchjob, tfjob"},
		{with(man, "--fixed-pools", "x"), "fixed-pools", "x", "is not one of nodepool-static, managed-nodegroup"},
		{with(man, "--gpus", "x"), "gpus", "x", "is not one of device-plugin, dra"},
		{with(man, "--access-mode", "x"), "access-mode", "x", "is not one of ReadWriteOnce, ReadWriteMany"},
		{with(man, "--checkpoint-storage", "x"), "checkpoint-storage", "x", "quantities must match"},
		{with(man, "--namespace", "BAD_NS"), "namespace", "BAD_NS", "RFC 1123 label"},
		{with(man, "--prometheus-release", "bad release"), "prometheus-release", "bad release", "is not a label value"},
		{with(man, "--image", ""), "image", `""`, "want a value"},
		{with(man, "--serving-image", " "), "serving-image", `" "`, "want a value"},
		{with(man, "--entrypoint", ""), "entrypoint", `""`, "want a value"},
		// advise
		{[]string{"advise", "checkpoint", "--mtbf", "x", "--checkpoint-cost", "5m"}, "mtbf", "x", "is not a positive duration"},
		{with(adv, "--jobs", "0"), "jobs", "0", "must be in 1..1000000"},
		{with(adv, "--points", "2"), "points", "2", "must be in 3..200"},
		{with(adv, "--output", "xml"), "output", "xml", "want table, json or yaml"},
		{with(adv, "--restart", "-1m"), "restart", "-1m", "is not a positive duration"},
	} {
		name := strings.Join(c.args[:1], " ") + " --" + c.flag + " " + c.value
		t.Run(name, func(t *testing.T) {
			code, _, errOut := gpuplan(t, c.args...)
			require.Equal(t, 2, code, errOut)
			require.Contains(t, errOut, "--"+c.flag, "the message names the flag")
			require.Contains(t, errOut, c.value, "the message quotes the value")
			require.Contains(t, errOut, c.accepts, "the message says what the flag takes")
			require.Less(t, len(errOut), 1200, "the message quotes a bounded part of the value")
		})
	}
}
