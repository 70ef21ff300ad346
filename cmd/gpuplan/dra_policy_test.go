package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// `gpuplan simulate --policy DIR` gives the run DIR's policy, and with it
// the cluster's DeviceClasses: a claim naming a class only DIR defines
// resolves to it when the scenario is read and when it runs. By hand: two
// copies of a one-pod Job claiming 4 devices of class a100 (the A100 80GB's
// whole GPUs) for an hour, on one H100 node and one A100 node: both on the
// A100 node (8 GPUs), 8 GPU-hours there, none on the H100. Without --policy the class
// is defined nowhere: exit 2 naming the request's deviceClassName. Before,
// the scenario was read with its own (no) policy first: exit 2 both ways.
func TestSimulatePolicyFolderDeviceClasses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	for name, from := range map[string]string{"cluster/classes.yaml": "classes.yaml", "jobs.yaml": "jobs.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "testdata", "dra-a100-class", from))
		require.NoError(t, err)
		write(name, string(b))
	}
	scenario := write("scenario.yaml", `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: policy-classes}
spec:
  seed: 1
  cluster:
    pools:
    - {name: h100, count: 1, instanceType: p5.48xlarge}
    - {name: a100, count: 1, instanceType: p4de.24xlarge}
  workload:
    manifests:
    - {path: jobs.yaml, count: 2}
`)
	out := filepath.Join(dir, "out")
	code, _, errOut := gpuplan(t, "simulate", scenario, "--restrict-paths=false", "--policy", filepath.Join(dir, "cluster"), "--workers", "1", "--out", out)
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	var sum struct {
		Pools []struct {
			Name     string  `json:"name"`
			GPUHours float64 `json:"gpuHoursAllocated"`
		} `json:"pools"`
	}
	require.NoError(t, json.Unmarshal(b, &sum))
	got := map[string]float64{}
	for _, p := range sum.Pools {
		got[p.Name] = p.GPUHours
	}
	require.Equal(t, map[string]float64{"h100": 0, "a100": 8}, got)

	code, _, errOut = gpuplan(t, "simulate", scenario, "--restrict-paths=false", "--workers", "1", "--out", filepath.Join(dir, "out2"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `spec.spec.devices.requests[0].exactly.deviceClassName: ResourceClaimTemplate "four"`)
	require.Contains(t, errOut, `DeviceClass "a100" is defined neither in the file, nor in the scenario's policy files`)
}
