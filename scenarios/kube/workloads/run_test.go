package workloads_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
)

// run loads a scenario written against testdata/ and runs it.
func run(t *testing.T, body string) *sim.Result {
	t.Helper()
	s, err := scenarios.Parse("s.yaml", "testdata", []byte(body))
	require.NoError(t, err)
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	return res
}

type span struct {
	name               string
	submit, start, end int64
	replicas           int32
}

func spans(res *sim.Result) []span {
	var out []span
	for _, j := range res.Jobs {
		out = append(out, span{j.Name, j.Submit, j.Start, j.End, j.Replicas})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

const cpuCluster = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: m}
spec:
  cluster:
    pools:
    - {name: cpu, count: 2, cpu: "8", memory: 32Gi}
`

// Kueue's quick-start: its own sample Job (3 pods of 1 CPU, `sleep 60`)
// submitted four times at once to its own quick-start queues (a
// ClusterQueue of 9 CPUs). The quota admits three (9 CPUs); the fourth
// waits for the first to finish at 60 s and ends at 120 s. The nodes (16
// CPUs) would hold four at once: the wait is the quota's.
func TestKueueSampleJobUnderQuickStartQuota(t *testing.T) {
	res := run(t, cpuCluster+`  policy:
    manifests: [kueue/quick-start-setup.yaml]
  workload:
    manifests:
    - {path: kueue/sample-job.yaml, count: 4}
`)
	got := spans(res)
	require.Len(t, got, 4)
	for i, s := range got[:3] {
		require.Equal(t, span{got[i].name, 0, 0, 60_000, 3}, s)
	}
	require.Equal(t, span{"sample-job-3", 0, 60_000, 120_000, 3}, got[3])
	require.Equal(t, []string{"sample-job-0", "sample-job-1", "sample-job-2", "sample-job-3"}, []string{got[0].name, got[1].name, got[2].name, got[3].name})
	for _, j := range res.Jobs {
		require.Equal(t, "user-queue", j.Queue)
		require.EqualValues(t, 1000, j.Pod.MilliCPU)
		require.EqualValues(t, 200, j.Pod.MemoryMiB)
	}
}

// Without the quota the same four Jobs (12 CPUs) fit the two 8-CPU nodes
// at once: every one runs 0-60 s.
func TestKueueSampleJobWithoutPolicy(t *testing.T) {
	res := run(t, cpuCluster+`  workload:
    manifests:
    - {path: kueue/sample-job.yaml, count: 4}
`)
	for _, s := range spans(res) {
		require.Equal(t, int64(0), s.start, s.name)
		require.Equal(t, int64(60_000), s.end, s.name)
	}
}
