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

// The trainer's built-in ClusterTrainingRuntimes are the eight that
// kubeflow/trainer v2.3.0's manifests/base/runtimes/kustomization.yaml
// installs (five frameworks and torchtune's three models), by their
// metadata.name.
func TestBuiltinRuntimes(t *testing.T) {
	got, err := workloads.BuiltinRuntimes()
	require.NoError(t, err)
	require.Equal(t, []string{"deepspeed-distributed", "jax-distributed", "mlx-distributed", "torch-distributed",
		"torchtune-llama3.2-1b", "torchtune-llama3.2-3b", "torchtune-qwen2.5-1.5b", "xgboost-distributed"}, got)
}

type tjGroup struct {
	name               string
	pods               int32
	milliCPU, memoryMi int64
	gpus               int32
}

func groupsOf(o workloads.Object) []tjGroup {
	var got []tjGroup
	for _, g := range o.Groups {
		got = append(got, tjGroup{g.Name, g.Pods, g.Pod.MilliCPU, g.Pod.MemoryMiB, g.Pod.GPUs})
	}
	return got
}

// The trainer's examples that name the built-in torch-distributed load
// through the embedded runtime (one replicated job "node", labelled the
// trainer's, mlPolicy.numNodes 1, a "node" container without requests):
//   - 01-multi-node: numNodes 3, no resourcesPerNode: 3 pods asking for
//     nothing;
//   - 03-kueue-integration: numNodes 3, requests cpu 2, memory 4Gi: 3 pods
//     of 2000m, 4096 MiB, queued to its LocalQueue training-queue.
//
// Before, each was refused at spec.runtimeRef (the runtime not in the file).
func TestTrainJobOnBuiltinRuntime(t *testing.T) {
	for _, c := range []struct {
		file, queue string
		want        []tjGroup
	}{
		{"01-multi-node.yaml", "", []tjGroup{{"node", 3, 0, 0, 0}}},
		{"03-kueue-integration.yaml", "training-queue", []tjGroup{{"node", 3, 2000, 4096, 0}}},
	} {
		objs, _, err := workloads.Load(filepath.Join("testdata/trainer/examples/yaml", c.file))
		require.NoError(t, err, c.file)
		require.Len(t, objs, 1)
		require.Equal(t, c.want, groupsOf(objs[0]), c.file)
		require.Equal(t, c.queue, objs[0].Queue)
		require.Contains(t, strings.Join(objs[0].Notes, "\n"),
			"spec.runtimeRef: the trainer v2.3.0's built-in ClusterTrainingRuntime torch-distributed (kubeflow/trainer@v2.3.0:manifests/base/runtimes/torch_distributed.yaml)")
	}
}

// The MPI runtimes run their launcher as a node (deepspeed-distributed:
// mpi.runLauncherAsNode true, a "launcher" job labelled the trainer's and
// a "node" job): the trainer's MPI plugin gives the node job numNodes-1
// pods and the launcher stays at the runtime's mlPolicy.numNodes (1);
// resourcesPerNode goes to the "node" container of both. numNodes 4 with
// 8 GPUs a node: node 3 pods + launcher 1 pod, 4 x 8 = 32 GPUs. A torch
// runtime with the same TrainJob runs one job of 4 pods (also 32 GPUs).
func TestTrainJobMPIBuiltinRuntime(t *testing.T) {
	tj := func(runtime string) string {
		return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: ds}\nspec:\n  runtimeRef: {name: " + runtime + "}\n" +
			"  trainer:\n    numNodes: 4\n    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}\n"
	}
	objs, _, err := workloads.Parse("ds.yaml", []byte(tj("deepspeed-distributed")))
	require.NoError(t, err)
	require.Equal(t, []tjGroup{{"node", 3, 0, 0, 8}, {"launcher", 1, 0, 0, 8}}, groupsOf(objs[0]))
	require.Contains(t, strings.Join(objs[0].Notes, "\n"), "4 nodes with deepspeed-distributed's MPI launcher as a node: the launcher and 3 pods of the job node")
	objs, _, err = workloads.Parse("ds.yaml", []byte(tj("torch-distributed")))
	require.NoError(t, err)
	require.Equal(t, []tjGroup{{"node", 4, 0, 0, 8}}, groupsOf(objs[0]))
}

// 02-runtime-patches patches torch-distributed's node job with
// nodeSelector node-type: training and a toleration of
// training-workload=true:NoSchedule; the trainer merges it into the pod
// template. Its 2 pods (2 CPUs, 4Gi each) run on two nodes labelled
// node-type: training and tainted training-workload=true:NoSchedule; on
// the same nodes without the label they wait (the selector); without the
// patch they wait on the labelled nodes (the taint). Before, the patch
// was noted and not applied (and the runtime not found).
func TestTrainJobRuntimePatchesPlace(t *testing.T) {
	data, err := os.ReadFile("testdata/trainer/examples/yaml/02-runtime-patches.yaml")
	require.NoError(t, err)
	in := string(data)
	i := strings.Index(in, "  runtimePatches:")
	require.Positive(t, i)
	unpatched := in[:i]
	for _, c := range []struct {
		name, file, labels string
		start              int64
	}{
		{"patched, labelled nodes", in, "{node-type: training}", 0},
		{"patched, unlabelled nodes", in, "{}", -1},
		{"unpatched, labelled nodes", unpatched, "{node-type: training}", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tj.yaml"), []byte(c.file), 0o644))
			body := "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: tj}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n" +
				"    - {name: train, count: 2, gpuModel: A100-80GB, gpusPerNode: 8, cpu: \"8\", memory: 64Gi, labels: " + c.labels +
				", taints: [{key: training-workload, value: \"true\", effect: NoSchedule}]}\n" +
				"  workload:\n    manifests:\n    - {path: tj.yaml, count: 1, duration: {distribution: constant, value: 1h}}\n"
			s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(body))
			require.NoError(t, err)
			b, err := s.Build(scenarios.Options{})
			require.NoError(t, err)
			defer b.Close()
			res, err := sim.Run(b.Config)
			require.NoError(t, err)
			require.Len(t, res.Jobs, 1)
			require.EqualValues(t, 2, res.Jobs[0].Replicas)
			require.Equal(t, c.start, res.Jobs[0].Start)
		})
	}
}

// A folder given as the path reads its files as one input: the flux
// TrainJobs find flux-distributed in flux-runtime.yaml beside them
// (in name order: flux-interactive, lammps-train-gpus and
// lammps-train-job, the last two both named lammps-flux; lammps-train-gpus:
// numNodes 2, 1 GPU a node). Given alone, each file is
// refused at spec.runtimeRef.
func TestTrainJobRuntimeInTheFolder(t *testing.T) {
	const dir = "testdata/trainer/examples/flux"
	objs, skipped, err := workloads.Load(dir)
	require.NoError(t, err)
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
	}
	require.Equal(t, []string{"lammps-flux-interactive", "lammps-flux", "lammps-flux"}, names)
	require.Contains(t, skipped[0], `flux-runtime.yaml:15: ClusterTrainingRuntime "flux-distributed" is a runtime, read for the folder's TrainJobs that name it`)
	require.Equal(t, []tjGroup{{"node", 2, 0, 0, 1}}, groupsOf(objs[1]))
	require.Contains(t, strings.Join(objs[1].Notes, "\n"), "spec.runtimeRef: ClusterTrainingRuntime flux-distributed from "+dir+"/flux-runtime.yaml:15")
	_, _, err = workloads.Load(filepath.Join(dir, "lammps-train-gpus.yaml"))
	require.ErrorContains(t, err, `spec.runtimeRef: ClusterTrainingRuntime "flux-distributed" is not in the file nor one of the trainer v2.3.0's built-in runtimes`)
}

// A patch is checked as the TrainJob CRD and the trainer's webhook check
// it, at the patch's own line and field.
func TestTrainJobRuntimePatchRefusals(t *testing.T) {
	data, err := os.ReadFile("testdata/trainer/examples/yaml/02-runtime-patches.yaml")
	require.NoError(t, err)
	in := string(data)
	for _, c := range []struct{ name, from, to, want string }{
		{"unknown job", "              - name: node\n", "              - name: worker\n",
			`tj.yaml:94:23: spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].name: "worker": must not have replicated job that doesn't exist in the runtime job template (the trainer's webhook; ClusterTrainingRuntime "torch-distributed" has "node")`},
		{"resources are not patchable", "                        serviceAccountName: training-sa\n",
			"                        containers: [{name: node, resources: {limits: {nvidia.com/gpu: 8}}}]\n",
			`spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources: unknown field "resources"`},
		{"env of node", "                        serviceAccountName: training-sa\n",
			"                        containers: [{name: node, env: [{name: A, value: b}]}]\n",
			`containers[0].env: must not have envs for the dataset-initializer, model-initializer, node containers`},
		{"unknown container", "                        serviceAccountName: training-sa\n",
			"                        containers: [{name: sidecar}]\n",
			`containers[0].name: "sidecar": must not have container that doesn't exist in the runtime job node`},
		{"manager", "    - manager: example.io/platform-team\n", "    - manager: platform-team\n",
			`tj.yaml:82:16: spec.runtimePatches[0].manager: "platform-team": the trainer's webhook refuses it`},
		{"operator", "                            operator: Equal\n", "                            operator: Is\n",
			`tj.yaml:104:39: spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec.tolerations[0].operator: "Is" is not Equal or Exists`},
	} {
		bad := strings.Replace(in, c.from, c.to, 1)
		require.NotEqual(t, in, bad, c.name)
		_, _, err := workloads.Parse("tj.yaml", []byte(bad))
		require.ErrorContains(t, err, c.want, c.name)
	}
	dup := strings.Replace(in, "  runtimePatches:\n", "  runtimePatches:\n    - manager: example.io/platform-team\n", 1)
	_, _, err = workloads.Parse("tj.yaml", []byte(dup))
	require.ErrorContains(t, err, `spec.runtimePatches[1].manager: Duplicate value: "example.io/platform-team"`)
}

// A scenario's workload.manifests[].path may name the folder: its three
// TrainJobs are submitted together (count 1) and run at once on two
// 8-GPU nodes: flux-interactive's numNodes 4 and the lammps examples' 2
// each (lammps-train-gpus with 1 GPU a pod): 4 + 2 + 2 = 8 pods.
func TestScenarioManifestsFolder(t *testing.T) {
	dir := t.TempDir()
	src := "testdata/trainer/examples/flux"
	require.NoError(t, os.CopyFS(filepath.Join(dir, "flux"), os.DirFS(src)))
	body := "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: tj}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n" +
		"    - {name: gpu, count: 2, gpuModel: A100-80GB, gpusPerNode: 8, cpu: \"96\", memory: 1152Gi}\n" +
		"  workload:\n    manifests:\n    - {path: flux, count: 1, duration: {distribution: constant, value: 1h}}\n"
	s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(body))
	require.NoError(t, err)
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.Len(t, res.Jobs, 3)
	pods := int32(0)
	for _, j := range res.Jobs {
		require.Zero(t, j.Start, j.Name)
		pods += j.Replicas
	}
	require.EqualValues(t, 8, pods)
}
