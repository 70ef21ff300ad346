package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An inference service beside nothing else, and its rate file.
const servicesScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: svc
spec:
  horizon: 2h
  cluster:
    pools:
    - name: gpu
      count: 1
      gpuModel: A100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
  workload:
    services:
    - name: bert
      pod: {cpu: "4", memory: 16Gi, gpus: 1}
      replicas: {min: 1, max: 4}
      load: {constant: 100}
      batching: {batchSize: 8, maxBatchDelay: 50ms}
      autoscaler:
        hpa: {metric: requestsPerReplica, target: 50}
`

// Bad service definitions exit 2 with file:line:field from scenario check
// and from simulate, a rate file's at its own line.
func TestServiceBadInputExits2(t *testing.T) {
	for _, c := range []struct{ name, from, to, file, want string }{
		{"negative-rate", "{constant: 100}", "{constant: -100}", "s.yaml",
			":20:24: spec.workload.services[0].load.constant: -100 requests/s: a rate is from 0 to 1e+09"},
		{"batch-0", "batchSize: 8", "batchSize: 0", "s.yaml",
			":21:29: spec.workload.services[0].batching.batchSize: must be from 1 to 65536, got 0"},
		{"hpa-target-0", "target: 50}", "target: 0}", "s.yaml",
			":23:51: spec.workload.services[0].autoscaler.hpa.target: must be a positive number, got 0"},
		{"min-above-max", "{min: 1, max: 4}", "{min: 5, max: 4}", "s.yaml",
			":19:23: spec.workload.services[0].replicas.min: min 5 is above max 4"},
		{"csv-order", "{constant: 100}", "{csv: {path: rates.csv}}", "rates.csv",
			":4: time: \"30m\" is not after the row before (line 3, 3600 s): rows must be in time order"},
	} {
		dir := t.TempDir()
		boundsFile(t, dir, "rates.csv", "time,requests_per_second\n0,10\n1h,20\n30m,30\n")
		body := strings.Replace(servicesScenario, c.from, c.to, 1)
		require.NotEqual(t, servicesScenario, body, c.name)
		p := boundsFile(t, dir, "s.yaml", body)
		for _, args := range [][]string{{"scenario", "check", p}, {"simulate", p, "--out", filepath.Join(dir, "out")}} {
			code, _, errOut := gpuplan(t, args...)
			require.Equal(t, 2, code, "%s %v: %s", c.name, args, errOut)
			require.Contains(t, errOut, "gpuplan: "+filepath.Join(dir, c.file)+c.want, c.name)
		}
	}
	dir := t.TempDir()
	p := boundsFile(t, dir, "s.yaml", servicesScenario)
	code, _, errOut := gpuplan(t, "scenario", "check", p)
	require.Equal(t, 0, code, errOut)
}
