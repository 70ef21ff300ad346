package published_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
)

// Kueue's four DRA samples (site/static/examples/dra) simulated with
// their devices: each Job is submitted once, runs 10 minutes (the samples
// pause forever; spec.workload.manifests' duration says how long) on a
// cluster of one 8-GPU A100-80GB node, and holds what its claim asks:
//   - rct: one device of the example driver's gpu.example.com: 1 GPU,
//     10 min = 1/6 GPU-hour;
//   - counter: the same claim (Kueue's counter quota charges 80Gi of
//     gpu.memory for it; the device is one GPU): 1/6 GPU-hour;
//   - capacity: 4Gi of a simulated GPU's 80Gi: 50/1000 of a GPU, 10 min
//     = 0.05/6 = 0.008333 GPU-hour;
//   - extended-resource: example.com/gpu: 1, which the example driver's
//     DeviceClass backs (extendedResourceName): 1 GPU, 1/6 GPU-hour.
//
// Before DRA was read, each was refused ("DRA is not modelled").
func TestKueueDRASamplesSimulate(t *testing.T) {
	for _, c := range []struct {
		file     string
		gpuHours float64
	}{
		{"sample-dra-rct-job.yaml", 1.0 / 6},
		{"sample-dra-counter-job.yaml", 1.0 / 6},
		{"sample-dra-capacity-job.yaml", 0.05 / 6},
		{"sample-dra-extended-resource-job.yaml", 1.0 / 6},
	} {
		t.Run(c.file, func(t *testing.T) {
			job, err := filepath.Abs(filepath.Join("testdata/kueue/site/static/examples/dra", c.file))
			require.NoError(t, err)
			dir := t.TempDir()
			path := filepath.Join(dir, "scenario.yaml")
			require.NoError(t, os.WriteFile(path, []byte(strings.Replace(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: kueue-dra}
spec:
  seed: 1
  cluster:
    pools:
    - {name: a100, count: 1, instanceType: p4de.24xlarge, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "96", memory: 1152Gi}
  workload:
    manifests:
    - {path: JOB, count: 1, duration: 10m}
`, "JOB", job, 1)), 0o644))
			s, err := scenarios.LoadFile(path)
			require.NoError(t, err)
			b, err := s.Build(scenarios.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { b.Close() })
			res, err := sim.Run(b.Config)
			require.NoError(t, err)
			require.Len(t, res.Jobs, 1)
			require.Equal(t, sim.Completed, res.Jobs[0].Outcome)
			require.Equal(t, int32(0), res.Jobs[0].Pool)
			sum := reports.Summarize(res, reports.Meta{Scenario: "kueue-dra", Assumptions: b.Assumptions})
			// The summary rounds GPU-hours to 3 decimals.
			require.InDelta(t, c.gpuHours, sum.Cluster.GPUHoursAllocated, 5e-4)
			// What the claim was taken as is in the assumptions.
			require.Contains(t, strings.Join(b.Assumptions, "\n"), "taken as")
		})
	}
}

// Kueue's quota for DRA devices, as Kueue v0.19.2 charges it: the
// samples' ClusterQueue (sample-dra-queues.yaml) covers example.com/gpu
// with a nominal quota of 8. Ten copies of a one-GPU Job start together on
// 16 GPUs:
//   - the ResourceClaimTemplate sample with the Configuration's
//     deviceClassMappings (example.com/gpu <- gpu.example.com, as Kueue's
//     setup_dra page gives it): 8 run at once, 2 wait for quota;
//   - the same without a mapping: Kueue v0.19.2's KueueDRAIntegration (on
//     by default since v0.18) marks the workload inadmissible ("DeviceClass
//     gpu.example.com is not mapped in DRA configuration"), an input error
//     (v0.17, its gate off by default, counted nothing: all 10 at once);
//   - the extended-resource sample: example.com/gpu is charged as itself
//     (its class gpu.example.com unmapped), no mapping needed: 8 at once;
//     with the mapping, as the mapping's name, example.com/gpu too: 8.
func TestKueueDRAQuota(t *testing.T) {
	queues, err := filepath.Abs("testdata/kueue/site/static/examples/dra/sample-dra-queues.yaml")
	require.NoError(t, err)
	const mapping = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: example.com/gpu
    deviceClassNames: [gpu.example.com]
`
	for _, c := range []struct {
		name, file string
		mapped     bool
		atOnce     int // 0: refused
	}{
		{"template, mapped", "sample-dra-rct-job.yaml", true, 8},
		{"template, no mapping", "sample-dra-rct-job.yaml", false, 0},
		{"extended resource", "sample-dra-extended-resource-job.yaml", false, 8},
		{"extended resource, mapped", "sample-dra-extended-resource-job.yaml", true, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			job, err := filepath.Abs(filepath.Join("testdata/kueue/site/static/examples/dra", c.file))
			require.NoError(t, err)
			dir := t.TempDir()
			policy := "[" + queues + "]"
			if c.mapped {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(mapping), 0o644))
				policy = "[" + queues + ", config.yaml]"
			}
			path := filepath.Join(dir, "scenario.yaml")
			require.NoError(t, os.WriteFile(path, []byte(strings.NewReplacer("JOB", job, "POLICY", policy).Replace(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: kueue-dra-quota}
spec:
  seed: 1
  cluster:
    pools:
    - {name: a100, count: 2, instanceType: p4de.24xlarge, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "96", memory: 1152Gi}
  policy: {manifests: POLICY}
  workload:
    manifests:
    - {path: JOB, count: 10, duration: 10m}
`)), 0o644))
			s, err := scenarios.LoadFile(path)
			if c.atOnce == 0 {
				require.ErrorContains(t, err, `Kueue v0.19.2 would never admit it: DeviceClass "gpu.example.com" of its pods' ResourceClaimTemplates is not mapped`)
				return
			}
			require.NoError(t, err)
			b, err := s.Build(scenarios.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { b.Close() })
			res, err := sim.Run(b.Config)
			require.NoError(t, err)
			require.Len(t, res.Jobs, 10)
			atOnce := 0
			for _, j := range res.Jobs {
				require.Equal(t, sim.Completed, j.Outcome)
				if j.Start == 0 {
					atOnce++
				}
			}
			require.Equal(t, c.atOnce, atOnce)
		})
	}
}
