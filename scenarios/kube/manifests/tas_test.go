package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim/cluster"
)

const kueueTAS = "../../examples/kueue-tas/scenario.yaml"

// loadRun is a shipped scenario, or one of its variants.
func loadRun(t *testing.T, file, variant string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.LoadFile(file)
	require.NoError(t, err)
	if variant != "" {
		s, err = s.Variant(variant)
		require.NoError(t, err)
	}
	return s
}

// TestKueueTASRoundTrip: the kueue-tas example (16 p5.48xlarge nodes,
// 4 a rack, 2 racks a block; class llm asks for one rack, required, or
// preferred in the variant) is written as Kueue's TAS objects: a Topology
// whose levels are block, rack and host (a p5's NVLink domain is its own
// 8 GPUs, so no NVLink-domain level), every ResourceFlavor naming it, and
// llm's pod template annotated with its rack level. Read back, the
// Topology is what the run places the jobs over (its assumptions say so)
// and the summary is the original's; the job template read as a workload
// asks for the class's topology.
func TestKueueTASRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the kueue-tas example four times")
	}
	for _, c := range []struct {
		variant, ann string
		mode         topology.TASMode
	}{
		{"", "kueue.x-k8s.io/podset-required-topology", topology.TASRequired},
		{"preferred", "kueue.x-k8s.io/podset-preferred-topology", topology.TASPreferred},
	} {
		t.Run("variant="+c.variant, func(t *testing.T) {
			s := loadRun(t, kueueTAS, c.variant)
			m, err := s.Cluster()
			require.NoError(t, err)
			files, _, err := Generate(s, m, Options{})
			require.NoError(t, err)

			topo := find[kueue.Topology](t, files, kubeName(s.Metadata.Name))
			var levels []string
			for _, l := range topo.Spec.Levels {
				levels = append(levels, l.NodeLabel)
			}
			require.Equal(t, []string{"cloud.provider.com/topology-block", "cloud.provider.com/topology-rack", "kubernetes.io/hostname"}, levels)
			rf := find[kueue.ResourceFlavor](t, files, "h100")
			require.NotNil(t, rf.Spec.TopologyName)
			require.Equal(t, kueue.TopologyReference(topo.Name), *rf.Spec.TopologyName)
			require.Equal(t, map[string]string{cluster.LabelPool: "h100"}, rf.Spec.NodeLabels, "a TAS flavor needs node labels (Kueue's CRD rule)")

			dir := t.TempDir()
			require.NoError(t, WriteDir(dir, files))
			raw, err := os.ReadFile(filepath.Join(dir, DirJobTemplates+"llm.yaml"))
			require.NoError(t, err)
			require.Contains(t, string(raw), c.ann+": cloud.provider.com/topology-rack")
			// The template as the workload reader reads it: its pods ask
			// for the class's level and mode; finetune asks for none.
			objs, _, err := workloads.LoadIn(filepath.Join(dir, DirJobTemplates+"llm.yaml"), m.Pools)
			require.NoError(t, err)
			require.Len(t, objs, 1)
			g := objs[0].Groups[0]
			require.Equal(t, int32(4), g.Pods)
			require.NotNil(t, g.Constraints)
			require.NotNil(t, g.Constraints.TAS)
			require.Equal(t, cluster.TASRequest{Mode: c.mode, Level: "cloud.provider.com/topology-rack"}, *g.Constraints.TAS)
			objs, _, err = workloads.LoadIn(filepath.Join(dir, DirJobTemplates+"finetune.yaml"), m.Pools)
			require.NoError(t, err)
			require.True(t, objs[0].Groups[0].Constraints == nil || objs[0].Groups[0].Constraints.TAS == nil)

			// The run with the written Kueue objects as its policy places
			// the jobs over the written Topology (its assumptions say so)
			// and gives the summary of the same run whose levels are the
			// pools' (the Kueue objects without the Topology): the
			// Topology is the one the run used. Its cluster is the written
			// NodePools (racks and blocks carried over by name).
			cl := []string{filepath.Join(dir, filepath.FromSlash(PathNodePools)), filepath.Join(dir, filepath.FromSlash(PathEC2NodeClass))}
			back := readBack(t, s, append(cl, filepath.Join(dir, filepath.FromSlash(PathKueue))))
			b, err := back.Build(scenarios.Options{})
			require.NoError(t, err)
			require.NoError(t, b.Close())
			require.Equal(t, levels, b.Config.TASLevels)
			require.True(t, slices.ContainsFunc(b.Assumptions, func(a string) bool {
				return strings.Contains(a, "of the policy's Kueue Topology")
			}), "the run's levels come from the written Topology: %q", b.Assumptions)
			plain := t.TempDir()
			require.NoError(t, WriteDir(plain, withoutTopology(files)))
			want := summaryJSON(t, readBack(t, s, append(cl, filepath.Join(plain, filepath.FromSlash(PathKueue)))), pipeline.Options{})
			got := summaryJSON(t, back, pipeline.Options{})
			require.Equal(t, want, got, "the written Topology read back")
		})
	}
}

// withoutTopology is files with the Kueue Topology left out and no
// ResourceFlavor naming one.
func withoutTopology(files []File) []File {
	var out []File
	for _, f := range files {
		g := f
		g.Objects = nil
		for _, o := range f.Objects {
			switch x := o.(type) {
			case *kueue.Topology:
				continue
			case *kueue.ResourceFlavor:
				y := x.DeepCopy()
				y.Spec.TopologyName = nil
				o = y
			}
			g.Objects = append(g.Objects, o)
		}
		out = append(out, g)
	}
	return out
}

// kueuePolicyTAS is a Kueue policy with a Topology of racks and hosts
// (no block level: not the pools' default levels) that the flavor names,
// and a Job of 4 8-GPU pods preferring one rack, on 16 H100 nodes in
// racks of 4.
const kueuePolicyTAS = `apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: racks}
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {gpuplan.dev/pool: h100}
  topologyName: racks
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: "3072"}
      - {name: memory, nominalQuota: 32Ti}
      - {name: nvidia.com/gpu, nominalQuota: "128"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: gpuplan}
spec: {clusterQueue: cq}
`

const kueueTASJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: gpuplan
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  parallelism: 4
  completions: 4
  completionMode: Indexed
  template:
    metadata:
      annotations: {kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/topology-rack}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 8, cpu: "96", memory: 1000Gi}}}
`

// TestKueuePolicyTopologyWrittenBack: a scenario whose Kueue policy has
// a Topology (racks and hosts) named by its flavor gets it written back,
// the flavor naming it; read back, the run's levels are the Topology's
// (not the pools' block, rack, host) and the summary is the original's.
func TestKueuePolicyTopologyWrittenBack(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	pol, job := write("policy.yaml", kueuePolicyTAS), write("job.yaml", kueueTASJob)
	body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: policy-tas}
spec:
  seed: 3
  horizon: 24h
  cluster:
    pools:
    - {name: h100, count: 16, instanceType: p5.48xlarge, topology: {nodesPerRack: 4, racksPerBlock: 2}}
  policy:
    manifests: [` + pol + `]
  workload:
    manifests:
    - {path: ` + job + `, arrival: {process: poisson, ratePerHour: 2}, duration: {distribution: lognormal, median: 2h, sigma: 0.5, max: 6h}}
`
	s, err := scenarios.Parse(write("scenario.yaml", body), dir, []byte(body))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	topo := find[kueue.Topology](t, files, "racks")
	require.Equal(t, []kueue.TopologyLevel{{NodeLabel: "cloud.provider.com/topology-rack"}, {NodeLabel: "kubernetes.io/hostname"}}, topo.Spec.Levels)
	rf := find[kueue.ResourceFlavor](t, files, "h100")
	require.NotNil(t, rf.Spec.TopologyName)
	require.Equal(t, kueue.TopologyReference("racks"), *rf.Spec.TopologyName)
	set := newSchemaSet()
	for _, o := range []any{topo, rf} {
		checked, err := set.validate(t, o)
		require.True(t, checked)
		require.NoError(t, err)
	}

	out := t.TempDir()
	require.NoError(t, WriteDir(out, files))
	var policy []string
	for _, p := range []string{PathKueue, PathKueueConfig, PathPriorityClasses} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(p))); err == nil {
			policy = append(policy, filepath.Join(out, filepath.FromSlash(p)))
		}
	}
	b, err := s.Build(scenarios.Options{PolicyManifests: policy})
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.Equal(t, []string{"cloud.provider.com/topology-rack", "kubernetes.io/hostname"}, b.Config.TASLevels)
	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: policy}})
	require.Equal(t, want, got, "the Kueue policy with its Topology read back")
	require.NotZero(t, want["jobs"].(map[string]any)["total"])
}

// A class asking for topology that runs as a Volcano Job gets no Kueue
// annotation (Volcano ignores it; Kueue does not admit Volcano Jobs) and
// no Topology is written for it: a warning says so.
func TestVolcanoClassTopologyIsAWarning(t *testing.T) {
	s := loadRun(t, kueueTAS, "")
	s.Spec.Workload.Synthetic.Classes[0].Volcano = &scenarios.VolcanoJobSpec{}
	m, err := s.Cluster()
	require.NoError(t, err)
	files, warnings, err := Generate(s, m, Options{})
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "class llm asks for topology (required cloud.provider.com/topology-rack) but runs as a Volcano Job")
	for _, f := range files {
		for _, o := range f.Objects {
			_, isTopology := o.(*kueue.Topology)
			require.False(t, isTopology, f.Path)
			b, err := marshal(o)
			require.NoError(t, err)
			require.NotContains(t, string(b), "podset-required-topology", f.Path)
		}
	}
}

// Written as a Kubeflow PyTorchJob, the kueue-tas gang is a Master and 3
// Workers, two PodSets: both templates carry the rack request and one
// PodSet group (kueue.x-k8s.io/podset-group-name), which Kueue fits in one
// domain together, as the simulation placed the gang; read back, the
// job's 4 pods are one gang asking for the rack.
func TestKueueTASPyTorchJobIsOnePodSetGroup(t *testing.T) {
	s := loadRun(t, kueueTAS, "")
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{TrainingAPI: TrainingPyTorchJob})
	require.NoError(t, err)
	job := find[PyTorchJob](t, files, "llm")
	require.Len(t, job.Spec.PyTorchReplicaSpecs, 2)
	checked, err := newSchemaSet().validate(t, job)
	require.True(t, checked)
	require.NoError(t, err)
	for role, r := range job.Spec.PyTorchReplicaSpecs {
		require.Equal(t, map[string]string{"kueue.x-k8s.io/podset-required-topology": "cloud.provider.com/topology-rack", AnnotationPodSetGroup: "llm"}, r.Template.Annotations, role)
	}
	dir := t.TempDir()
	require.NoError(t, WriteDir(dir, files))
	objs, _, err := workloads.LoadIn(filepath.Join(dir, DirJobTemplates+"llm.yaml"), m.Pools)
	require.NoError(t, err)
	require.Len(t, objs, 1)
	var pods int32
	for _, g := range objs[0].Groups {
		pods += g.Pods
		require.Equal(t, cluster.TASRequest{Mode: topology.TASRequired, Level: "cloud.provider.com/topology-rack"}, *g.Constraints.TAS, g.Name)
	}
	require.Equal(t, int32(4), pods)
	// The single-pod class is one PodSet: no group.
	fine := find[batchv1.Job](t, files, "finetune")
	require.NotContains(t, fine.Spec.Template.Annotations, AnnotationPodSetGroup)
}
