package manifests

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/scenarios"
)

var update = flag.Bool("update", false, "rewrite the golden manifests")

type goldenCase struct {
	name, scenario, variant string
	opts                    Options
}

var goldenCases = []goldenCase{
	{name: "default"},
	{name: "gpu-sharing", scenario: "../../examples/gpu-sharing.yaml"},
	{name: "spot-mix", scenario: "../../examples/spot-what-if.yaml", variant: "mix-tight"},
	{name: "elastic", scenario: "testdata/scenarios/elastic.yaml"},
	{name: "volcano", scenario: "../../examples/volcano-jobs.yaml", variant: "min-available-4"},
	{name: "kueue-tas", scenario: "../../examples/kueue-tas/scenario.yaml"},
	{name: "dra", scenario: "testdata/scenarios/dra.yaml", opts: Options{GPUs: GPUsDRA}},
}

func generate(t *testing.T, c goldenCase) []File {
	t.Helper()
	var s *scenarios.Scenario
	var err error
	if c.scenario == "" {
		s, err = scenarios.Default()
	} else {
		s, err = scenarios.LoadFile(c.scenario)
	}
	require.NoError(t, err)
	if c.variant != "" {
		s, err = s.Variant(c.variant)
		require.NoError(t, err)
	}
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, c.opts)
	require.NoError(t, err)
	return files
}

func encode(t *testing.T, f File) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, f.Encode(&b))
	return b.Bytes()
}

// TestGoldenManifests compares every generated file with its golden copy
// (checked by hand when written: rerun with -update after reading the
// diff), decodes it strictly into its API types and re-encodes what was
// decoded, which must give the same objects: no field is written that the
// type does not hold.
func TestGoldenManifests(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "golden", c.name)
			files := generate(t, c)
			var paths []string
			for _, f := range files {
				paths = append(paths, f.Path)
				got := encode(t, f)
				p := filepath.Join(dir, filepath.FromSlash(f.Path))
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
					require.NoError(t, os.WriteFile(p, got, 0o644))
				}
				want, err := os.ReadFile(p)
				require.NoError(t, err, "golden %s (rerun with -update)", p)
				require.Equal(t, string(want), string(got), "golden %s (rerun with -update after checking the change)", p)

				objs, err := Decode(p, want)
				require.NoError(t, err)
				require.Len(t, objs, len(f.Objects), p)
				for i, o := range objs {
					a, err := marshal(f.Objects[i])
					require.NoError(t, err)
					b, err := marshal(o)
					require.NoError(t, err)
					require.Equal(t, string(a), string(b), "%s document %d does not survive a strict round trip", p, i+1)
				}
			}
			// No stale golden files.
			var onDisk []string
			require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					onDisk = append(onDisk, filepath.ToSlash(rel))
				}
				return err
			}))
			sort.Strings(paths)
			require.Equal(t, paths, onDisk)
		})
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	for _, c := range goldenCases {
		a, b := generate(t, c), generate(t, c)
		require.Equal(t, len(a), len(b))
		for i := range a {
			require.Equal(t, encode(t, a[i]), encode(t, b[i]), "%s %s", c.name, a[i].Path)
		}
	}
}

func find[T any](t *testing.T, files []File, name string) *T {
	t.Helper()
	for _, f := range files {
		for _, o := range f.Objects {
			if x, ok := o.(*T); ok && objectName(o) == name {
				return x
			}
		}
	}
	t.Fatalf("no %T named %s", new(T), name)
	return nil
}

// objectName is an object's name, or for a job template (generateName
// CLASS-) its class.
func objectName(o any) string {
	b, _ := yaml.Marshal(o)
	var m struct {
		Metadata struct{ Name, GenerateName string } `json:"metadata"`
	}
	_ = yaml.Unmarshal(b, &m)
	if m.Metadata.Name == "" {
		return strings.TrimSuffix(m.Metadata.GenerateName, "-")
	}
	return m.Metadata.Name
}

func nominal(t *testing.T, cq *kueue.ClusterQueue, flavor string, r corev1.ResourceName) resource.Quantity {
	t.Helper()
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			if string(f.Name) != flavor {
				continue
			}
			for _, q := range f.Resources {
				if q.Name == r {
					return q.NominalQuota
				}
			}
		}
	}
	t.Fatalf("no quota for %s in flavor %s", r, flavor)
	return resource.Quantity{}
}

// TestQuotasFollowThePools checks the ClusterQueue quotas against the
// pools, worked out by hand from the scenarios and the instance catalog.
func TestQuotasFollowThePools(t *testing.T) {
	sharing := generate(t, goldenCases[1])
	cq := find[kueue.ClusterQueue](t, sharing, "gpu-sharing")
	// h100-mig: 2 p5.48xlarge x 8 H100s, all-balanced = 2 x 1g.10gb +
	// 1 x 2g.20gb + 1 x 3g.40gb per GPU, mixed strategy.
	for r, want := range map[corev1.ResourceName]int64{"nvidia.com/mig-1g.10gb": 32, "nvidia.com/mig-2g.20gb": 16, "nvidia.com/mig-3g.40gb": 16, ResourceGPU: 0} {
		q := nominal(t, cq, "h100-mig", r)
		require.Equal(t, want, q.Value(), r)
	}
	// l4-timesliced: 4 g6.12xlarge x 4 L4s x 4 replicas.
	q := nominal(t, cq, "l4-timesliced", ResourceGPU)
	require.Equal(t, int64(64), q.Value())
	q = nominal(t, cq, "l4-timesliced", corev1.ResourceCPU)
	require.Equal(t, int64(4*48), q.Value())
	q = nominal(t, cq, "l4-timesliced", corev1.ResourceMemory)
	require.Equal(t, int64(4*192)<<30, q.Value())
	require.Equal(t, kueue.BestEffortFIFO, cq.Spec.QueueingStrategy, "the scenario backfills")

	elastic := generate(t, goldenCases[3])
	cq = find[kueue.ClusterQueue](t, elastic, "elastic")
	require.Equal(t, kueue.StrictFIFO, cq.Spec.QueueingStrategy, "FIFO without backfill")
	// a100-mig: 2 p4d.24xlarge x 8 A100-40GB x 7 1g.5gb (single strategy:
	// advertised as nvidia.com/gpu).
	q = nominal(t, cq, "a100-mig", ResourceGPU)
	require.Equal(t, int64(112), q.Value())
	// burst: 32 GPUs over instance types of 8 GPUs = 4 nodes, each at most
	// p5.48xlarge's 192 vCPUs and 2048 GiB.
	q = nominal(t, cq, "burst", corev1.ResourceCPU)
	require.Equal(t, int64(4*192), q.Value())
	q = nominal(t, cq, "burst", corev1.ResourceMemory)
	require.Equal(t, int64(4*2048)<<30, q.Value())
	// g5-ca: autoscaling up to 6 g5.12xlarge of 4 A10Gs.
	q = nominal(t, cq, "g5-ca", ResourceGPU)
	require.Equal(t, int64(24), q.Value())
}

func TestNodePoolsAndJobs(t *testing.T) {
	files := generate(t, goldenCases[3])
	mig := find[karpv1.NodePool](t, files, "a100-mig")
	require.NotNil(t, mig.Spec.Replicas, "a fixed pool is a static NodePool")
	require.Equal(t, int64(2), *mig.Spec.Replicas)
	require.Equal(t, "gpuplan-a100-mig", mig.Spec.Template.Labels[LabelMigConfig])
	burst := find[karpv1.NodePool](t, files, "burst")
	require.Nil(t, burst.Spec.Replicas)
	require.Equal(t, karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized, burst.Spec.Disruption.ConsolidationPolicy)
	require.Equal(t, "5m0s", burst.Spec.Disruption.ConsolidateAfter.String())
	gpus := burst.Spec.Limits[ResourceGPU]
	require.Equal(t, int64(32), gpus.Value())
	ca := find[karpv1.NodePool](t, files, "g5-ca")
	require.Equal(t, "15m0s", ca.Spec.Disruption.ConsolidateAfter.String(), "the autoscaler's scale-down unneeded time")

	job := find[batchv1.Job](t, files, "pretrain")
	c := job.Spec.Template.Spec.Containers[0]
	require.Equal(t, c.Resources.Requests, c.Resources.Limits, "GPU requests equal limits")
	g := c.Resources.Limits[ResourceGPU]
	require.Equal(t, int64(8), g.Value())
	require.Equal(t, int32(4), *job.Spec.Parallelism, "replicas 2 to 4: the template fits the largest")
	require.Equal(t, batchv1.IndexedCompletion, *job.Spec.CompletionMode)
	// Checkpoint cost 4 min + 30 s = 270 s: long enough for the write,
	// not cut to the two-minute spot notice (a warning says so).
	require.Equal(t, int64(270), *job.Spec.Template.Spec.TerminationGracePeriodSeconds)
	require.Equal(t, "research", job.Labels[LabelQueueName])
	require.Equal(t, "karpenter.sh/capacity-type", job.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key)
	require.Equal(t, batchv1.PodFailurePolicyActionIgnore, job.Spec.PodFailurePolicy.Rules[0].Action)

	serve := find[batchv1.Job](t, files, "serve")
	require.Equal(t, "true", serve.Spec.Template.Annotations[AnnotationDoNotDisrupt])
	terms := serve.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	require.Equal(t, []string{"a100-mig"}, terms[0].MatchExpressions[0].Values, "single-strategy MIG: only the pool with 1g.5gb")

	sharing := generate(t, goldenCases[1])
	small := find[batchv1.Job](t, sharing, "inference-small")
	q := small.Spec.Template.Spec.Containers[0].Resources.Limits["nvidia.com/mig-1g.10gb"]
	require.Equal(t, int64(1), q.Value(), "mixed strategy: the profile's own resource")
	cm := find[corev1.ConfigMap](t, sharing, DevicePluginConfigMap)
	var dp DevicePluginConfig
	require.NoError(t, yaml.UnmarshalStrict([]byte(cm.Data["l4-timesliced"]), &dp))
	require.Equal(t, int32(4), dp.Sharing.TimeSlicing.Resources[0].Replicas)
	migCM := find[corev1.ConfigMap](t, sharing, MigConfigMap)
	var mp MigPartedConfig
	require.NoError(t, yaml.UnmarshalStrict([]byte(migCM.Data["config.yaml"]), &mp))
	require.Equal(t, map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}, mp.MigConfigs["gpuplan-h100-mig"][0].MigDevices)
}

// TestDecodeIsStrict shows the round trip can fail: a misspelt field, an
// unknown kind and a bad device-plugin config inside a ConfigMap are each
// reported with the file and document.
func TestDecodeIsStrict(t *testing.T) {
	files := generate(t, goldenCases[1])
	var pools, gpuOp []byte
	for _, f := range files {
		switch f.Path {
		case PathNodePools:
			pools = encode(t, f)
		case PathGPUOperator:
			gpuOp = encode(t, f)
		}
	}
	_, err := Decode("nodepools.yaml", pools)
	require.NoError(t, err)
	bad := strings.Replace(string(pools), "consolidationPolicy:", "consolidationPolcy:", 1)
	_, err = Decode("nodepools.yaml", []byte(bad))
	require.ErrorContains(t, err, "nodepools.yaml: document 1 (NodePool)")
	require.ErrorContains(t, err, "consolidationPolcy")
	_, err = Decode("x.yaml", []byte("apiVersion: v9\nkind: Gadget\n"))
	require.ErrorContains(t, err, `x.yaml: document 1: apiVersion "v9" kind "Gadget" is not one gpuplan writes`)
	bad = strings.Replace(string(gpuOp), "replicas: 4", "replica: 4", 1)
	_, err = Decode("gpu-operator.yaml", []byte(bad))
	require.ErrorContains(t, err, "ConfigMap device-plugin-config): data[l4-timesliced]")

	// A file edited by hand reads as Kubernetes reads it (YAML 1.2): a
	// label value yes and a name no are strings, not the booleans YAML 1.1
	// made of them (which a string field then refused).
	objs, err := Decode("ns.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: no\n  labels: {gpu: yes, team: on}\n"))
	require.NoError(t, err)
	ns := objs[0].(*corev1.Namespace)
	require.Equal(t, "no", ns.Name)
	require.Equal(t, map[string]string{"gpu": "yes", "team": "on"}, ns.Labels)
}

func TestGenerateRefusesWhatItCannotRender(t *testing.T) {
	s, err := scenarios.LoadFile("../../examples/openb-replay.yaml")
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	_, _, err = Generate(s, m, Options{})
	require.ErrorContains(t, err, "spec.cluster.nodeList")

	s, err = scenarios.Default()
	require.NoError(t, err)
	m, err = s.Cluster()
	require.NoError(t, err)
	_, _, err = Generate(s, m, Options{Namespace: "Not_A_Name"})
	require.ErrorContains(t, err, `namespace "Not_A_Name"`)
}

func FuzzDecode(f *testing.F) {
	for _, c := range goldenCases[:2] {
		dir := filepath.Join("testdata", "golden", c.name)
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, err := os.ReadFile(p); err == nil {
					f.Add(b)
				}
			}
			return nil
		})
	}
	f.Add([]byte("---\n---\n# only a comment\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: device-plugin-config}\ndata: {a: '{'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Decode("fuzz.yaml", data)
	})
}
