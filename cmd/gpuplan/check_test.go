package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The lines the cases below point at are counted in boundsScenario:
// line 19 is the class's queue (its value at column 16), 22 its pod, 23
// its duration; what a case inserts shifts the lines after it.

// Issue 16's duration typos, wherever a duration is written, name the
// file, line, column and field, from check and from simulate alike.
func TestDurationTyposNameLineAndField(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		// The issue's `interval: 30min`: a checkpoint interval on a new line 24,
		// its value after 8 spaces and `recovery: {checkpoint: {interval: `.
		{"interval", "        duration: 30m\n", "        duration: 30m\n        recovery: {checkpoint: {interval: 30min}}\n",
			`:24:43: spec.workload.synthetic.classes[0].recovery.checkpoint.interval: "30min" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)`},
		// The issue's `horizon: 7days`, written in a variant's patch.
		{"variant-horizon", "        duration: 30m\n", "        duration: 30m\n  variants:\n  - name: week\n    patch: {horizon: 7days}\n",
			`:26:22: spec.variants[0].patch.horizon: "7days" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)`},
	} {
		body := strings.Replace(boundsScenario, c.from, c.to, 1)
		require.NotEqual(t, boundsScenario, body, c.name)
		p := boundsFile(t, "", c.name+".yaml", body)
		for _, args := range [][]string{{"scenario", "check", p}, {"simulate", p}} {
			code, _, errOut := gpuplan(t, args...)
			require.Equal(t, 2, code, "%s %v: %s", c.name, args, errOut)
			require.Contains(t, errOut, "gpuplan: "+p+c.want, c.name)
		}
	}
	// A policy's duration (Kueue's waitForPodsReady.timeout).
	dir := t.TempDir()
	boundsFile(t, dir, "kueue.yaml", boundsKueue+"---\napiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady: {timeout: 5min}\n")
	sc := boundsFile(t, dir, "s.yaml", strings.Replace(boundsScenario, "  workload:", "  policy: {manifests: [kueue.yaml]}\n  workload:", 1))
	for _, args := range [][]string{{"scenario", "check", sc}, {"simulate", sc}} {
		code, _, errOut := gpuplan(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.Contains(t, errOut, "gpuplan: "+filepath.Join(dir, "kueue.yaml")+":24:", args)
		require.Contains(t, errOut, "waitForPodsReady.timeout", args)
		require.Contains(t, errOut, `"5min"`, args)
	}
}

// scenario check refuses what simulate would refuse or run to nonsense,
// naming the class and its line: a MIG profile of another GPU model (the
// issue's 1g.5gb on H100, an A100-40GB profile) and a class queue the
// admission policy does not have.
func TestScenarioCheckMakesSimulatesChecks(t *testing.T) {
	migPool := `    - name: gpu
      count: 2
      gpuModel: H100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
      sharing:
        mig: {strategy: mixed, layout: all-1g.10gb}
`
	withMIG := func(profile string) string {
		body := strings.Replace(boundsScenario, "    - name: gpu\n      count: 2\n      gpuModel: A100-80GB\n      gpusPerNode: 8\n      cpu: \"96\"\n      memory: 1152Gi\n", migPool, 1)
		return strings.Replace(body, "pod: {cpu: \"8\", memory: 64Gi, gpus: 4}", "pod: {cpu: \"8\", memory: 64Gi, gpus: 1, mig: "+profile+"}", 1)
	}
	// 1g.10gb is what the pool's layout has: both commands accept it.
	ok := boundsFile(t, "", "ok.yaml", withMIG("1g.10gb"))
	code, out, errOut := gpuplan(t, "scenario", "check", ok)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ok (scenario tiny)")

	for _, c := range []struct{ name, body, want string }{
		{"h100-1g.5gb", withMIG("1g.5gb"),
			`:24:53: spec.workload.synthetic.classes[0].pod.mig: class train asks for MIG profile "1g.5gb", which is not a profile of the pools' GPU models: gpu (H100-80GB) offers 1g.10gb`},
		// A real H100 profile the static layout does not have.
		{"h100-3g.40gb", withMIG("3g.40gb"),
			`:24:53: spec.workload.synthetic.classes[0].pod.mig: class train asks for MIG profile "3g.40gb", which no pool's layout has: gpu (H100-80GB) offers 1g.10gb`},
		{"no-mig-pool", strings.Replace(boundsScenario, "gpus: 4}", "gpus: 1, mig: 1g.10gb}", 1),
			`:22:53: spec.workload.synthetic.classes[0].pod.mig: class train asks for MIG profile "1g.10gb", but no pool shares its GPUs by MIG`},
	} {
		p := boundsFile(t, "", c.name+".yaml", c.body)
		for _, args := range [][]string{{"scenario", "check", p}, {"simulate", p}} {
			code, _, errOut := gpuplan(t, args...)
			require.Equal(t, 2, code, "%s %v: %s", c.name, args, errOut)
			require.Contains(t, errOut, "gpuplan: "+p+c.want, c.name)
		}
	}

	// The policy has one LocalQueue, train; the class asks for research.
	dir := t.TempDir()
	boundsFile(t, dir, "kueue.yaml", boundsKueue)
	body := strings.Replace(boundsScenario, "  workload:", "  policy: {manifests: [kueue.yaml]}\n  workload:", 1)
	good := boundsFile(t, dir, "good.yaml", body)
	code, _, errOut = gpuplan(t, "scenario", "check", good)
	require.Equal(t, 0, code, errOut)
	bad := boundsFile(t, dir, "bad.yaml", strings.Replace(body, "queue: train", "queue: research", 1))
	for _, args := range [][]string{{"scenario", "check", bad}, {"simulate", bad}} {
		code, _, errOut := gpuplan(t, args...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.Contains(t, errOut, "gpuplan: "+bad+`:20:16: spec.workload.synthetic.classes[0].queue: class train: queue "research" is not a LocalQueue of the admission policy (train)`, args)
	}
	// A default queue takes it: no error.
	mapped := boundsFile(t, dir, "mapped.yaml", strings.Replace(strings.Replace(body, "queue: train", "queue: research", 1), "manifests: [kueue.yaml]}", "manifests: [kueue.yaml], defaultQueue: train}", 1))
	code, _, errOut = gpuplan(t, "scenario", "check", mapped)
	require.Equal(t, 0, code, errOut)

	// Several files: the first problem is the error, every later one is
	// printed, and each good file says ok (before, a build problem after
	// the first was never printed: its file said neither).
	mig := boundsFile(t, dir, "mig.yaml", withMIG("1g.5gb"))
	code, out, errOut = gpuplan(t, "scenario", "check", bad, good, mig)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "gpuplan: "+bad+":20:16:")
	require.Contains(t, out, good+": ok (scenario tiny)")
	require.Contains(t, out, mig+`:24:53: spec.workload.synthetic.classes[0].pod.mig: class train asks for MIG profile "1g.5gb"`)
}

// A live cluster's node list and a SkyPilot spot trace are read when the
// scenario is checked: bad input in either is exit 2 at its own file,
// line and field.
func TestScenarioCheckReadsNodesAndSpotTraces(t *testing.T) {
	dir := t.TempDir()
	boundsFile(t, dir, "nodes.yaml", "apiVersion: v1\nkind: List\nitems:\n- metadata:\n    name: n1\n    labels: {karpenter.sh/capacity-type: cheap}\n  status: {allocatable: {cpu: '8', memory: 64Gi}}\n")
	sc := boundsFile(t, dir, "live.yaml", strings.Replace(boundsScenario, "  cluster:\n", "  cluster:\n    nodes: {path: nodes.yaml}\n", 1))
	code, _, errOut := gpuplan(t, "scenario", "check", sc)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, filepath.Join(dir, "nodes.yaml")+`:6:42: items[0].metadata.labels["karpenter.sh/capacity-type"]: karpenter.sh/capacity-type is "cheap"`)

	boundsFile(t, dir, "trace.json", `{"metadata": {"gap_seconds": 300}, "data": [1, -2]}`)
	spot := strings.Replace(boundsScenario, "      memory: 1152Gi\n", "      memory: 1152Gi\n      capacityType: spot\n      interruptions: {skypilot: trace.json}\n", 1)
	sc = boundsFile(t, dir, "spot.yaml", spot)
	code, _, errOut = gpuplan(t, "scenario", "check", sc)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, filepath.Join(dir, "trace.json")+`:1:48: data[1]: is -2; a count of instances is from 0 to 1000000`)
	boundsFile(t, dir, "trace.json", `{"metadata": {"gap_seconds": 300}, "data": [2, 1, 2]}`)
	code, out, errOut := gpuplan(t, "scenario", "check", sc)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ok (scenario tiny)")
}
