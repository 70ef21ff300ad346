package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports/outdir"
)

// Issue 33's inputs whose work grows without bound: each is refused before
// it runs, with exit status 2 and the file, line and field, by a gpuplan
// process whose CPU time and peak resident memory are measured.

// mainWritingPeakRSS runs gpuplan on the process's arguments and writes
// its peak resident memory (VmHWM, of this process's own address space
// since its exec: rusage's maxrss would count the test binary that
// started it) into the file at path.
func mainWritingPeakRSS(path string) int {
	code := runWith(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, &outdir.Tracker{})
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 3
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if err := os.WriteFile(path, []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))), 0o644); err != nil {
				return 3
			}
		}
	}
	return code
}

// runBounded runs gpuplan in a process of its own and returns its exit
// status, stderr, CPU time (user and system) and peak RSS in bytes.
func runBounded(t *testing.T, dir string, args ...string) (int, string, time.Duration, int64) {
	t.Helper()
	c := gpuplanProcess(t, args...)
	c.Dir = dir
	peakFile := filepath.Join(t.TempDir(), "peak-rss-kib")
	c.Env = append(c.Env, "GPUPLAN_TEST_PEAK_RSS="+peakFile)
	// Before the budget these ran for more than 10 minutes: a minute is
	// a failure, not a hang.
	var errOut bytes.Buffer
	c.Stderr = &errOut
	require.NoError(t, c.Start())
	timer := time.AfterFunc(time.Minute, func() { c.Process.Kill() })
	err := c.Wait()
	timer.Stop()
	code := 0
	if err != nil {
		require.NotNil(t, c.ProcessState, "%v", err)
		code = c.ProcessState.ExitCode()
	}
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	peak, err := os.ReadFile(peakFile)
	require.NoError(t, err)
	kib, err := strconv.ParseInt(string(peak), 10, 64)
	require.NoError(t, err)
	return code, errOut.String(), cpu, kib << 10
}

func TestUnboundedWorkRefusedBeforeTheRun(t *testing.T) {
	tmp := t.TempDir()
	// The rate file: 1,000,000 rows, the rate jumping between 1 and 51
	// every 2 s.
	var rows strings.Builder
	rows.WriteString("time,requests_per_second\n")
	for i := 0; i < 1_000_000; i++ {
		fmt.Fprintf(&rows, "%d,%d\n", 2*i, 1+50*(i%2))
	}
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "rates.csv"), []byte(rows.String()), 0o644))
	rateFile, err := os.ReadFile("testdata/budget/rate-file-year.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "rate-file-year.yaml"), rateFile, 0o644))
	// A chain of 10,000 Kueue Cohorts above one ClusterQueue.
	require.NoError(t, os.MkdirAll(filepath.Join(tmp, "policy"), 0o755))
	var kueue strings.Builder
	kueue.WriteString("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  cohortName: c0\n  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: 32}\n      - {name: memory, nominalQuota: 128Gi}\n      - {name: nvidia.com/gpu, nominalQuota: 4}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q}\nspec: {clusterQueue: q}\n")
	for i := 0; i < 10_000; i++ {
		parent := ""
		if i < 9_999 {
			parent = fmt.Sprintf("parentName: c%d", i+1)
		}
		fmt.Fprintf(&kueue, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: c%d}\nspec: {%s}\n", i, parent)
	}
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "policy", "kueue.yaml"), []byte(kueue.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "cohorts.yaml"), []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: cohorts}
spec:
  horizon: 24h
  cluster:
    pools:
    - {name: a, count: 4, gpuModel: A10G, gpusPerNode: 4, cpu: "48", memory: 192Gi}
  policy:
    manifests: [policy/]
  workload:
    synthetic:
      classes:
      - name: c
        queue: q
        arrival: {process: poisson, ratePerHour: 10}
        pod: {cpu: "1", memory: 1Gi, gpus: 1}
        duration: {distribution: exponential, mean: 1h}
`), 0o644))
	// A service whose load lists 100,000 spikes (5,289,180 bytes of YAML: 100,000 lines of 48 bytes plus 488,890 digits, and the header): refused
	// by its size before its YAML is decoded (it took 3.8 s and 412 MB).
	var many strings.Builder
	many.WriteString("apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: spikes}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n    - {name: a, count: 1, gpuModel: A10G, gpusPerNode: 1, cpu: \"8\", memory: 32Gi}\n  workload:\n    services:\n    - name: s\n      replicas: {fixed: 1}\n      load:\n        constant: 10\n        spikes:\n")
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&many, "        - {start: %ds, length: 1s, multiplier: 2}\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "spikes.yaml"), []byte(many.String()), 0o644))
	budget, err := filepath.Abs("testdata/budget")
	require.NoError(t, err)
	manifests, err := filepath.Abs("../../scenarios/examples/manifests/scenario.yaml")
	require.NoError(t, err)

	for _, c := range []struct {
		name string
		dir  string
		args []string
		want string
		cpu  time.Duration
	}{
		{"failures", budget, []string{"failures-mtbf-1ms.yaml"},
			"gpuplan: failures-mtbf-1ms.yaml:14:24: spec.cluster.pools[0].failures.mtbf: a failure MTBF of 1ms on 8 nodes over the 168h0m0s horizon (failures) makes about 4.8e+09 events", time.Second},
		{"interruptions", budget, []string{"spot-mtbf-1ms.yaml"},
			"gpuplan: spot-mtbf-1ms.yaml:15:29: spec.cluster.pools[0].interruptions.mtbf: a spot interruption MTBF of 1ms on 8 nodes over the 168h0m0s horizon (interruptions) makes about 4.8e+09 events", time.Second},
		{"kpa-tick", budget, []string{"kpa-tick-1ms.yaml"},
			"gpuplan: kpa-tick-1ms.yaml:21:40: spec.workload.services[0].autoscaler.kpa.tickInterval: a KPA tickInterval of 1ms over the 24h0m0s horizon (scaler periods of service s) makes about 8.6e+07 events", time.Second},
		{"service-century", budget, []string{"service-century.yaml"},
			"gpuplan: service-century.yaml:5:12: spec.horizon: fixed replicas' period of 1m0s over the 876000h0m0s horizon (scaler periods of service s) makes about 5.3e+07 events", time.Second},
		{"default-century", budget, []string{"--horizon", "876000h"},
			"gpuplan: <built-in default scenario>:69:24: spec.workload.synthetic.classes[2].arrival.ratePerHour: poisson arrivals at 15 per hour (with the other classes', about 1.7e+07 jobs) over the 876000h0m0s horizon (--horizon) makes about 3.4e+07 events", time.Second},
		// 31,536,000 samples over the year and 1,000,000 rows; reading
		// the 10 MB file costs about 0.3 s of CPU.
		{"rate-file", tmp, []string{"rate-file-year.yaml"},
			"gpuplan: rate-file-year.yaml:19:26: spec.workload.services[0].load.csv.path: a rate file of 1000000 rows sampled every second over the 8760h0m0s horizon makes about 3.3e+07 events", time.Second},
		// Parsing 10,000 policy documents costs about 0.3 s of CPU (their
		// depth is checked before any is decoded).
		{"cohort-chain", tmp, []string{"cohorts.yaml"},
			`gpuplan: policy/kueue.yaml:24: Cohort c0: Cohort "c0" is 10000 levels deep`, time.Second},
		{"spikes-100k", tmp, []string{"spikes.yaml"},
			"gpuplan: spikes.yaml:1: the scenario is 5165 KiB, over the 1024 KiB a scenario document may be", time.Second},
		{"manifests-horizon-0", tmp, []string{manifests, "--horizon", "0"},
			"gpuplan: --horizon: 0 runs until the workload drains, and spec.workload.manifests[0] (workloads/train-pytorchjob.yaml) submits by a rate without a count, so it never does: give a horizon (or a count)", time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, errOut, cpu, rss := runBounded(t, c.dir, append([]string{"simulate", "--workers", "1"}, c.args...)...)
			require.Equal(t, 2, code, errOut)
			require.Contains(t, errOut, c.want)
			require.Less(t, cpu, c.cpu, "CPU time")
			require.Less(t, rss, int64(200<<20), "peak RSS")
			t.Logf("%s: %v CPU, %d MiB peak RSS", c.name, cpu.Round(time.Millisecond), rss>>20)
		})
	}
}
