package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
	"gpuplan.dev/gpuplan/validate/strict"
)

// kueueTAS is Kueue's TAS samples (kube/published/testdata/kueue, as
// published: site/static/examples/tas and jobs) on the cluster of their
// kind-cluster.yaml: 8 workers of node-group tas-group, blocks b1 and b2
// of racks r1 and r2 of 2 nodes each (nodesPerRack 2, racksPerBlock 2),
// here with CPU per node.
const kueueTAS = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: kueue-tas}
spec:
  horizon: 2h
  cluster:
    pools:
    - {name: tas, count: 8, gpuModel: A100-80GB, gpusPerNode: 0, cpu: "CPU", memory: 32Gi, labels: {cloud.provider.com/node-group: tas-group}, topology: {nodesPerRack: 2, racksPerBlock: 2}}
  policy:
    manifests: [tas/sample-queues.yaml]
    queues: {user-queue: tas-user-queue}
  workload:
    manifests:
    - {path: tas/sample-job-required.yaml, count: 1, duration: 30m}
    - {path: tas/sample-job-preferred.yaml, count: 1, duration: 30m}
    - {path: tas/sample-job-unconstrained.yaml, count: 1, duration: 30m}
    - {path: jobs/sample-jobset-tas-sliced.yaml, count: 1}
    - {path: jobs/sample-jobset-tas-combined.yaml, count: 1}
`

func buildTAS(t *testing.T, cpu string) (*Built, error) {
	t.Helper()
	s, err := Parse("tas.yaml", "kube/published/testdata/kueue/site/static/examples", []byte(strings.Replace(kueueTAS, "CPU", cpu, 1)))
	if err != nil {
		return nil, err
	}
	b, err := s.Build(Options{})
	if b != nil {
		t.Cleanup(func() { b.Close() })
	}
	return b, err
}

// Kueue's TAS samples load with their topology (the Topology "default"
// of sample-queues.yaml, named by ResourceFlavor tas-flavor) and
// simulate, each job placed as Kueue assigns it. 8 CPUs a node, 1-CPU
// pods: 8 a node, 16 a rack, 32 a block, 64 in all; the files arrive in
// order at 0 (quota 100 CPUs admits all five):
//
//   - required rack, 10 pods: every rack holds 16, a tie broken by name:
//     rack r1 of b1 (nodes 0, 1), node 0 takes 8, node 1 2 (6 left);
//   - preferred block, 40 pods: blocks hold 22 and 32, none 40, and the
//     block is the top level, so spread: b2 takes 32, b1 8; going down,
//     Kueue fills racks greedily across both blocks (16 + 16 + 8) and
//     nodes the same way: nodes 2-6 full, node 7 empty, node 1 6 free;
//   - unconstrained, 6 pods: LeastFreeCapacity takes the smallest gap that
//     holds them, node 1 (6), not node 7 (8);
//   - JobSet sliced (slices of 4 in a rack, no level: the top level,
//     LeastFreeCapacity), 8 pods: node 7's 8 make 2 slices in its rack:
//     starts at 0, ends at 100 s (its sleep);
//   - JobSet combined (required block, slices of 4 in a rack): no room
//     until the sliced one ends: starts at 100 s.
//
// With 4 CPUs a node a rack holds 8 pods, and the required Job's 10 can
// never be in one: an input error at its annotation (line 14).
func TestKueueTASSamplesSimulate(t *testing.T) {
	b, err := buildTAS(t, "8")
	require.NoError(t, err)
	require.Equal(t, []string{"cloud.provider.com/topology-block", "cloud.provider.com/topology-rack", "kubernetes.io/hostname"}, b.Config.TASLevels)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "Kueue topology-aware scheduling: jobs asking for topology are placed over the levels cloud.provider.com/topology-block, cloud.provider.com/topology-rack, kubernetes.io/hostname of the policy's Kueue Topology")
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	starts := map[string]sim.Time{}
	for _, j := range res.Jobs {
		require.Equal(t, sim.Completed, j.Outcome, j.Name)
		starts[j.Name] = j.Start
	}
	require.Equal(t, map[string]sim.Time{"tas-sample-required-0": 0, "tas-sample-preferred-0": 0, "tas-sample-unconstrained-0": 0,
		"jobset-tas-sliced-0": 0, "jobset-tas-combined-0": 100 * sim.Second}, starts)

	_, err = buildTAS(t, "4")
	var ie *strict.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, 2, ie.ExitCode())
	require.Contains(t, ie.File, "sample-job-required.yaml")
	require.Equal(t, 14, ie.Line)
	require.Equal(t, `spec.template.metadata.annotations["kueue.x-k8s.io/podset-required-topology"]`, ie.Field)
	require.Contains(t, ie.Msg, "can never place the job's 10 pods")
}

// A level the run's topology lacks is refused at the job's annotation,
// as is a ResourceFlavor naming a Topology the policy does not define.
func TestKueueTASLevelsChecked(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	job := write("job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, labels: {kueue.x-k8s.io/queue-name: tas-user-queue}}\nspec:\n  parallelism: 2\n  template:\n    metadata:\n      annotations: {kueue.x-k8s.io/podset-required-topology: example.com/pod}\n    spec: {restartPolicy: Never, containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}\n")
	src, err := os.ReadFile("kube/published/testdata/kueue/site/static/examples/tas/sample-queues.yaml")
	require.NoError(t, err)
	queues := write("queues.yaml", string(src))
	scen := func(q string) string {
		return strings.NewReplacer("tas/sample-queues.yaml", q, "    - {path: tas/sample-job-required.yaml, count: 1, duration: 30m}\n", "    - {path: "+job+", count: 1, duration: 30m}\n").Replace(
			strings.Split(strings.Replace(kueueTAS, "CPU", "8", 1), "    - {path: tas/sample-job-preferred.yaml")[0])
	}
	s, err := Parse("tas.yaml", dir, []byte(scen(queues)))
	require.NoError(t, err)
	_, err = s.Build(Options{})
	var ie *strict.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, 8, ie.Line)
	require.Contains(t, ie.Msg, `topology level "example.com/pod" is not a level of the run's topology`)

	noTopo := write("notopo.yaml", strings.SplitN(string(src), "---\n", 2)[1])
	s, err = Parse("tas.yaml", dir, []byte(scen(noTopo)))
	require.NoError(t, err)
	_, err = s.Build(Options{})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "spec.topologyName", ie.Field)
	require.Contains(t, ie.Msg, `Topology "default" is not in the policy's manifests`)
}
