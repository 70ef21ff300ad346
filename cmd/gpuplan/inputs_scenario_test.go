package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bad scenario and policy input on the command line: scenario check and
// simulate exit 2 with the file, line, column and field, in bounded
// memory and at once.

const boundsScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: tiny
spec:
  horizon: 2h
  cluster:
    pools:
    - name: gpu
      count: 2
      gpuModel: A100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
  workload:
    synthetic:
      classes:
      - name: train
        queue: train
        arrival: {process: fixed, ratePerHour: 2}
        replicas: 2
        pod: {cpu: "8", memory: 64Gi, gpus: 4}
        duration: 30m
`

// boundsFile writes a file into dir (a new temporary folder when "").
func boundsFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// runMeasured runs gpuplan and says how many bytes it allocated and how
// long it took.
func runMeasured(t *testing.T, args ...string) (int, string, uint64, time.Duration) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	code, _, errOut := gpuplan(t, args...)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return code, errOut, after.TotalAlloc - before.TotalAlloc, took
}

func TestScenarioBadInputExits2(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"cpu-inf", `pod: {cpu: "8"`, `pod: {cpu: "1e9999"`,
			`:22:20: spec.workload.synthetic.classes[0].pod.cpu: cpu "1e9999" is not a finite quantity`},
		{"cpu-ei", `pod: {cpu: "8"`, `pod: {cpu: 8Ei`,
			`:22:20: spec.workload.synthetic.classes[0].pod.cpu: cpu "8Ei" is more than any node holds (at most 4096 cores)`},
		{"jobs", "    synthetic:\n", "    synthetic:\n      jobs: 1000000000000\n",
			`:17:13: spec.workload.synthetic.jobs: 1000000000000 jobs is more than 20000000, the most one run holds`},
		{"count", "      count: 2", "      count: 1000000000000",
			`:10:14: spec.cluster.pools[0].count: 1000000000000 nodes is more than 1000000, the most one cluster has`},
		{"timeline", "  horizon: 2h", "  horizon: 720h\n  output: {timelineInterval: 1ms}",
			`:7:30: spec.output.timelineInterval: an interval of 1ms over the 720h0m0s horizon makes 2592000000 timeline intervals, more than 1000000; use a timelineInterval of at least 3s`},
		{"rate", "ratePerHour: 2}", "ratePerHour: 1e12}",
			`:20:48: spec.workload.synthetic.classes[0].arrival.ratePerHour: fixed arrivals at 1e+12 per hour over the 2h0m0s horizon would submit about 2e+12 jobs (all classes: 2e+12), more than 20000000, the most one run holds`},
		{"sigma", "duration: 30m", "duration: {distribution: lognormal, median: 2h, sigma: 1000, max: 36h}",
			`:23:64: spec.workload.synthetic.classes[0].duration.sigma: lognormal with median 2h0m0s and sigma 1000 puts 49% of the durations outside 1 ms to 100 years`},
		{"nan", "ratePerHour: 2}", "ratePerHour: .nan}",
			`:20:48: spec.workload.synthetic.classes[0].arrival.ratePerHour: ".nan" is not a finite number`},
		{"days", "  horizon: 2h", "  horizon: 7days",
			`:6:12: spec.horizon: "7days" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)`},
		{"minutes", "duration: 30m", "duration: 30min",
			`:23:19: spec.workload.synthetic.classes[0].duration: "30min" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)`},
		{"description", "  name: tiny", "  name: tiny\n  description: \"" + strings.Repeat("x", 200<<10) + "\"",
			`:5:16: metadata.description: is 204800 bytes; a description, carried into every report, is at most 65536 (64 KiB)`},
	} {
		body := strings.Replace(boundsScenario, c.from, c.to, 1)
		require.NotEqual(t, boundsScenario, body, c.name)
		p := boundsFile(t, "", c.name+".yaml", body)
		for _, args := range [][]string{{"scenario", "check", p}, {"simulate", p}} {
			code, errOut, alloc, took := runMeasured(t, args...)
			require.Equal(t, 2, code, "%s %v: %s", c.name, args, errOut)
			require.Contains(t, errOut, "gpuplan: "+p+c.want, c.name)
			require.Less(t, len(errOut), len(p)+600, errOut)
			require.Less(t, alloc, uint64(50<<20), "%s %v allocated %d bytes", c.name, args, alloc)
			require.Less(t, took, 10*time.Second, c.name)
		}
	}
}

// Reproductions 3 and 4 with the horizon given on the command line, and
// a synthetic workload of more jobs than one run holds.
func TestSimulateHorizonOverrideBoundedExits2(t *testing.T) {
	p := boundsFile(t, "", "s.yaml", strings.Replace(boundsScenario, "  horizon: 2h", "  horizon: 2h\n  output: {timelineInterval: 10ms}", 1))
	code, errOut, alloc, _ := runMeasured(t, "simulate", p, "--horizon", "30d")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, p+`:7:30: spec.output.timelineInterval: an interval of 10ms over the 720h0m0s horizon (--horizon) makes 259200000 timeline intervals, more than 1000000; use a timelineInterval of at least 3s`)
	require.Less(t, alloc, uint64(50<<20))

	p = boundsFile(t, "", "r.yaml", strings.Replace(boundsScenario, "ratePerHour: 2}", "ratePerHour: 3e4}", 1))
	code, errOut, alloc, _ = runMeasured(t, "simulate", p, "--horizon", "30d")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, p+`:20:48: spec.workload.synthetic.classes[0].arrival.ratePerHour: fixed arrivals at 30000 per hour over the 720h0m0s horizon (--horizon) would submit about 2.16e+07 jobs`)
	require.Less(t, alloc, uint64(50<<20))

	code, errOut, alloc, _ = runMeasured(t, "simulate", "--horizon", "7days")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, `--horizon "7days" is not a duration`)
	require.Less(t, alloc, uint64(50<<20))
}

const boundsKueue = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: f
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: train}
spec: {clusterQueue: q}
`

func TestPolicyBadInputExits2(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"negative", "nominalQuota: 4}", "nominalQuota: -4}",
			`kueue.yaml:15:46: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: nvidia.com/gpu: "-4" is negative`},
		{"inf", "nominalQuota: 4}", "nominalQuota: .inf}",
			`kueue.yaml:15:46: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: ".inf" is not a finite number`},
		{"unknown-cq", "clusterQueue: q}", "clusterQueue: nope}",
			`kueue.yaml:20:22: spec.clusterQueue: LocalQueue train points at ClusterQueue "nope", which no ClusterQueue of the policy defines (ClusterQueues: q)`},
		{"api-version", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue", "apiVersion: kueue.x-k8s.io/v1\nkind: ClusterQueue",
			`kueue.yaml:5:13: apiVersion: "kueue.x-k8s.io/v1" is not an apiVersion gpuplan reads for a ClusterQueue`},
		{"timeout", "spec: {clusterQueue: q}\n", "spec: {clusterQueue: q}\n---\napiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady: {timeout: -5m}\n",
			`kueue.yaml:24:29: waitForPodsReady.timeout: -5m0s is negative`},
	} {
		dir := t.TempDir()
		boundsFile(t, dir, "kueue.yaml", strings.Replace(boundsKueue, c.from, c.to, 1))
		sc := boundsFile(t, dir, "s.yaml", strings.Replace(boundsScenario, "  workload:", "  policy: {manifests: [kueue.yaml]}\n  workload:", 1))
		for _, args := range [][]string{{"scenario", "check", sc}, {"simulate", sc}} {
			code, _, errOut := gpuplan(t, args...)
			require.Equal(t, 2, code, "%s %v: %s", c.name, args, errOut)
			require.Contains(t, errOut, "gpuplan: "+filepath.Join(dir, c.want), c.name)
		}
	}
	// The manifests as given to --policy.
	dir := t.TempDir()
	pol := boundsFile(t, dir, "kueue.yaml", strings.Replace(boundsKueue, "nominalQuota: 4}", "nominalQuota: -4}", 1))
	code, _, errOut := gpuplan(t, "simulate", "--policy", pol)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, pol+`:15:46: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: nvidia.com/gpu: "-4" is negative`)
}
