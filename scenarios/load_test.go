package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

const minimal = `apiVersion: gpuplan.dev/v1alpha1
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
        arrival: {process: fixed, ratePerHour: 2}
        replicas: 2
        pod: {cpu: "8", memory: 64Gi, gpus: 4}
        duration: 30m
`

func TestMinimalScenarioBuildsWhatItSays(t *testing.T) {
	s, err := LoadFile(writeFile(t, "tiny.yaml", minimal))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	require.Equal(t, uint64(1), b.Config.Seed, "default seed")
	require.Equal(t, 2*sim.Hour, b.Config.Horizon)
	require.Equal(t, []cluster.PoolSpec{{Name: "gpu", GPUModel: "A100-80GB", Nodes: 2, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1152 * 1024, GPUMemoryMiB: 80 * 1024,
		Labels: map[string]string{"gpuplan.dev/capacity-type": "on-demand"}}}, b.Config.Pools)
	// fixed arrivals at 2/h from t=0 over a 2 h horizon: 0, 30m, 60m, 90m.
	var jobs []cluster.JobSpec
	for {
		var j cluster.JobSpec
		ok, err := b.Config.Workload.Next(&j)
		require.NoError(t, err)
		if !ok {
			break
		}
		jobs = append(jobs, j)
	}
	require.Len(t, jobs, 4)
	for i, j := range jobs {
		require.Equal(t, int64(i)*30*sim.Minute, j.Submit)
		require.Equal(t, 30*sim.Minute, j.Duration)
		require.Equal(t, int32(2), j.Replicas)
		require.Equal(t, cluster.PodSpec{MilliCPU: 8000, MemoryMiB: 64 * 1024, GPUs: 4}, j.Pod)
		require.Equal(t, "train", j.Queue)
	}
	require.Equal(t, "train-0", jobs[0].Name)
}

func TestDefaultScenarioLoads(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	require.Equal(t, "default-mixed-cluster", s.Metadata.Name)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	require.Len(t, b.Config.Pools, 2)
	require.Equal(t, 72*sim.Hour, b.Config.Horizon)
}

func TestExampleScenariosLoad(t *testing.T) {
	files, err := filepath.Glob("examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		s, err := LoadFile(f)
		require.NoError(t, err, f)
		_, err = s.Pools()
		require.NoError(t, err, f)
	}
}

// Each bad scenario must fail with the file, the line and the field path.
func TestStrictLoadingNamesFileLineAndField(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"typo in a field name", "      gpusPerNode: 8", "      gpusPerNod: 8",
			`:12:7: spec.cluster.pools[0].gpusPerNod: unknown field "gpusPerNod" (did you mean "gpusPerNode"?)`},
		{"number as text", "      count: 2", "      count: two",
			`:10:14: spec.cluster.pools[0].count: expected a whole number, got "two"`},
		{"bad quantity", `      memory: 1152Gi`, `      memory: lots`,
			`:14:15: spec.cluster.pools[0].memory: "lots" is not a quantity`},
		{"unknown field in a nested mapping", "arrival: {process: fixed, ratePerHour: 2}", "arrival: {process: fixed, rate: 2}",
			`:19:35: spec.workload.synthetic.classes[0].arrival.rate: unknown field "rate"`},
		{"semantic error keeps the line", "        replicas: 2", "        replicas: 0",
			`:20:19: spec.workload.synthetic.classes[0].replicas: a job has at least one pod, got 0`},
		{"bad kind", "kind: Scenario", "kind: Scenaro", `:2:7: kind: is "Scenaro", want "Scenario"`},
		{"start time not RFC 3339", "  horizon: 2h\n", "  horizon: 2h\n  output: {startTime: 2026-13-01}\n",
			`:7:23: spec.output.startTime: "2026-13-01" is not an RFC 3339 time`},
		{"spot sensitivity neither off nor on", "  horizon: 2h\n", "  horizon: 2h\n  output: {spotSensitivity: sometimes}\n",
			`:7:29: spec.output.spotSensitivity: is "sometimes"; want off or on`},
		{"spot sensitivity seeds past the bound", "  horizon: 2h\n", "  horizon: 2h\n  output: {spotSensitivitySeeds: 101}\n",
			`:7:34: spec.output.spotSensitivitySeeds: is 101; want 1 to 100`},
		{"list where a mapping goes", "  cluster:\n", "  cluster: [1, 2]\n  clusterx:\n", `:7:12: spec.cluster: expected a mapping, got a list`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := strings.Replace(minimal, c.from, c.to, 1)
			require.NotEqual(t, minimal, body)
			p := writeFile(t, "bad.yaml", body)
			_, err := LoadFile(p)
			require.Error(t, err)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, p, ie.File)
			require.Contains(t, err.Error(), p+c.want)
		})
	}
}

func TestSyntaxErrorsAndEmptyFiles(t *testing.T) {
	_, err := LoadFile(writeFile(t, "e.yaml", ""))
	require.ErrorContains(t, err, "e.yaml: the file is empty")
	_, err = LoadFile(writeFile(t, "s.yaml", "apiVersion: x\n  kind: : y\n"))
	require.ErrorContains(t, err, "s.yaml:2: invalid YAML")
	_, err = LoadFile(writeFile(t, "two.yaml", minimal+"---\n"+minimal))
	require.ErrorContains(t, err, "more than one YAML document")
	_, err = LoadFile(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorContains(t, err, "missing.yaml: no such file")
}

func TestDurations(t *testing.T) {
	for in, want := range map[string]string{"90s": "1m30s", "3d": "72h0m0s", "1d12h": "36h0m0s", "0.5d": "12h0m0s"} {
		d, err := ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, d.String(), in)
	}
	_, err := ParseDuration("soon")
	require.Error(t, err)
}

func TestSharingPools(t *testing.T) {
	s, err := LoadFile("examples/gpu-sharing.yaml")
	require.NoError(t, err)
	pools, err := s.Pools()
	require.NoError(t, err)
	require.Equal(t, cluster.Sharing{MIGStrategy: cluster.MIGMixed, MIGLayout: []string{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"},
		MIGRelayout: true, MIGDrain: 30 * 1000, MIGReconfigure: 120 * 1000}, pools[0].Sharing)
	require.Equal(t, int64(80<<10), pools[0].GPUMemoryMiB)
	require.Equal(t, int32(4), pools[1].Sharing.TimeSlicing)
	require.Equal(t, int64(24<<10), pools[1].GPUMemoryMiB)

	mixed := strings.Replace(minimal, "      memory: 1152Gi\n", "      memory: 1152Gi\n      sharing:\n        mig: {strategy: mixed, layout: all-3g.40gb}\n", 1)
	p := writeFile(t, "mig.yaml", mixed)
	s, err = LoadFile(p)
	require.NoError(t, err)
	pools, err = s.Pools()
	require.NoError(t, err)
	require.Equal(t, []string{"3g.40gb", "3g.40gb"}, pools[0].Sharing.MIGLayout)

	for body, want := range map[string]string{
		"mig: {strategy: mixed, layout: all-9g.90gb}":           `spec.cluster.pools[0].sharing.mig.layout: A100-80GB has no MIG profile "9g.90gb"`,
		"mig: {strategy: both, layout: all-3g.40gb}":            `spec.cluster.pools[0].sharing.mig.strategy: is "both"`,
		"timeSlicing: {replicas: 1}":                            "spec.cluster.pools[0].sharing.timeSlicing.replicas: must be at least 2",
		"mig: {strategy: single, profiles: [1g.10gb, 3g.40gb]}": "single MIG strategy needs one profile",
	} {
		bad := strings.Replace(minimal, "      memory: 1152Gi\n", "      memory: 1152Gi\n      sharing:\n        "+body+"\n", 1)
		p := writeFile(t, "bad.yaml", bad)
		s, err := LoadFile(p)
		if err == nil {
			_, err = s.Pools()
		}
		require.ErrorContains(t, err, want, body)
	}
}

// spec.output.spotSensitivity reads off and on as written, though the YAML
// 1.1 reader underneath takes them for booleans; absent is "" (on).
func TestSpotSensitivityField(t *testing.T) {
	for _, c := range []struct {
		line string
		want Switch
	}{{"", ""}, {"  output: {spotSensitivity: off}\n", Off}, {"  output: {spotSensitivity: on}\n", On},
		{"  output: {spotSensitivity: \"off\"}\n", Off}} {
		body := strings.Replace(minimal, "  horizon: 2h\n", "  horizon: 2h\n"+c.line, 1)
		sc, err := LoadFile(writeFile(t, "s.yaml", body))
		require.NoError(t, err, c.line)
		require.Equal(t, c.want, sc.Spec.Output.SpotSensitivity, c.line)
		// A copy (variants, the all-on-demand twin) keeps it.
		od, err := sc.OnDemandOnly()
		require.NoError(t, err)
		require.Equal(t, c.want, od.Spec.Output.SpotSensitivity, c.line)
	}
}
