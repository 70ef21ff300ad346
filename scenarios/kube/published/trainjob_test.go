package published_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim"
)

// A Kubeflow trainer v2 TrainJob reads as the JobSet the trainer makes of
// its runtime (the runtime in the same file), as the trainer's
// TrainingRuntime plugin does: the replicated job labelled
// trainjob-ancestor-step: trainer runs trainer.numNodes pods (else the
// runtime's mlPolicy.numNodes), its "node" container's resources merged
// with trainer.resourcesPerNode key by key. The trainer's examples:
//   - 04-volcano-integration: numNodes 4, resourcesPerNode requests cpu 1,
//     memory 2Gi (limits 2, 4Gi): 4 pods of 1000m CPU, 2048 MiB;
//   - 05-multi-step: a dataset-initializer job of one pod (no requests)
//     and numNodes 2 of requests cpu 2, memory 4Gi: 2 pods of 2000m,
//     4096 MiB.
//
// Before, a TrainJob was not a workload ("no workload in the file").
func TestTrainJobFromItsRuntime(t *testing.T) {
	type group struct {
		name               string
		pods               int32
		milliCPU, memoryMi int64
		gpus               int32
	}
	for _, c := range []struct {
		file, name string
		want       []group
	}{
		{"04-volcano-integration.yaml", "volcano-example", []group{{"node", 4, 1000, 2048, 0}}},
		{"05-multi-step.yaml", "multi-step-example", []group{{"dataset-initializer", 1, 0, 0, 0}, {"node", 2, 2000, 4096, 0}}},
	} {
		objs, skipped, err := workloads.Load(filepath.Join("testdata/trainer/examples/yaml", c.file))
		require.NoError(t, err, c.file)
		require.Len(t, skipped, 1, "the runtime, listed as read for the TrainJob")
		require.Len(t, objs, 1)
		o := objs[0]
		require.Equal(t, "TrainJob", o.Kind)
		require.Equal(t, c.name, o.Name)
		var got []group
		for _, g := range o.Groups {
			got = append(got, group{g.Name, g.Pods, g.Pod.MilliCPU, g.Pod.MemoryMiB, g.Pod.GPUs})
		}
		require.Equal(t, c.want, got, c.file)
	}
}

// The same TrainJob asking for 8 GPUs a node: 4 pods x 8 GPUs, one gang
// of 32 GPUs. On four 8-GPU nodes it runs 0-1 h; on three it waits whole,
// no pod bound. Without numNodes it takes the runtime's mlPolicy.numNodes
// (1), noted.
func TestTrainJobGPUGang(t *testing.T) {
	data, err := os.ReadFile("testdata/trainer/examples/yaml/04-volcano-integration.yaml")
	require.NoError(t, err)
	gpu := strings.Replace(string(data), "      limits:\n        cpu: \"2\"\n", "      limits:\n        nvidia.com/gpu: 8\n        cpu: \"2\"\n", 1)
	require.NotEqual(t, string(data), gpu)
	for _, c := range []struct {
		name       string
		nodes      string
		start, end int64
	}{
		{"fits", "4", 0, 3_600_000},
		{"too-few", "3", -1, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tj.yaml"), []byte(gpu), 0o644))
			body := "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: tj}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n" +
				"    - {name: gpu, count: " + c.nodes + ", gpuModel: A100-80GB, gpusPerNode: 8, cpu: \"96\", memory: 1152Gi}\n" +
				"  workload:\n    manifests:\n    - {path: tj.yaml, count: 1, duration: {distribution: constant, value: 1h}}\n"
			s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(body))
			require.NoError(t, err)
			b, err := s.Build(scenarios.Options{})
			require.NoError(t, err)
			defer b.Close()
			res, err := sim.Run(b.Config)
			require.NoError(t, err)
			require.Len(t, res.Jobs, 1)
			j := res.Jobs[0]
			require.EqualValues(t, 4, j.Replicas)
			require.EqualValues(t, 8, j.Pod.GPUs)
			require.Equal(t, c.start, j.Start)
			require.Equal(t, c.end, j.End)
			if c.start < 0 {
				require.Zero(t, j.PodsBound)
			}
		})
	}
	objs, _, err := workloads.Parse("tj.yaml", []byte(strings.Replace(gpu, "    numNodes: 4\n", "", 1)))
	require.NoError(t, err)
	require.EqualValues(t, 1, objs[0].Groups[0].Pods)
	require.Contains(t, strings.Join(objs[0].Notes, "\n"), "the trainer's 1 nodes are the runtime's mlPolicy.numNodes")
}

// Refused at the TrainJob's field, as the trainer's webhook or the API
// server refuses it, or where gpuplan cannot find the runtime.
func TestTrainJobRefusals(t *testing.T) {
	data, err := os.ReadFile("testdata/trainer/examples/yaml/04-volcano-integration.yaml")
	require.NoError(t, err)
	in := string(data)
	for _, c := range []struct{ name, from, to, want string }{
		{"no runtime", "    name: torch-distributed-volcano\n", "    name: torch-distributed-nccl\n",
			`tj.yaml:71:5: spec.runtimeRef: ClusterTrainingRuntime "torch-distributed-nccl" is not in the file nor one of the trainer v2.3.0's built-in runtimes (deepspeed-distributed, jax-distributed, mlx-distributed, torch-distributed, torchtune-llama3.2-1b, torchtune-llama3.2-3b, torchtune-qwen2.5-1.5b, xgboost-distributed)`},
		{"namespaced kind", "    kind: ClusterTrainingRuntime\n    name: torch-distributed-volcano\n", "    kind: TrainingRuntime\n    name: torch-distributed-volcano\n",
			`spec.runtimeRef: TrainingRuntime "torch-distributed-volcano" is not in the file (a TrainingRuntime is the namespace's own: nothing is built in)`},
		{"kind", "    kind: ClusterTrainingRuntime\n    name: torch-distributed-volcano\n", "    kind: JobSet\n    name: torch-distributed-volcano\n",
			`tj.yaml:72:11: spec.runtimeRef.kind: is "JobSet"; want ClusterTrainingRuntime or TrainingRuntime`},
		{"zero nodes", "    numNodes: 4\n", "    numNodes: 0\n", `tj.yaml:76:15: spec.trainer.numNodes: is 0; must be at least 1`},
		{"unknown field", "    numNodes: 4\n", "    numNodes: 4\n    nodes: 4\n", `spec.trainer.nodes: unknown field "nodes"`},
		{"bad runtime template", "                    - name: node\n", "                    - name: node\n                      resources: {limits: {amd.com/gpu: 1}}\n",
			`ClusterTrainingRuntime torch-distributed-volcano: spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits["amd.com/gpu"]`},
	} {
		bad := strings.Replace(in, c.from, c.to, 1)
		require.NotEqual(t, in, bad, c.name)
		_, _, err := workloads.Parse("tj.yaml", []byte(bad))
		require.ErrorContains(t, err, c.want, c.name)
	}
}
