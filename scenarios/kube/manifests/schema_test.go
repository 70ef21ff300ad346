package manifests

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/validate/strict"
)

// crdSchemas maps the custom resources gpuplan writes to the published
// CRD schemas in testdata/crd-schemas (see PROVENANCE.md there). Volcano's
// Queue and eksctl's ClusterConfig have no schema there: their types are
// decoded strictly instead (TestGoldenManifests).
var crdSchemas = map[string]string{
	"karpenter.sh/v1 NodePool":                     "karpenter.sh/nodepool_v1.json",
	"karpenter.k8s.aws/v1 EC2NodeClass":            "karpenter.k8s.aws/ec2nodeclass_v1.json",
	"kueue.x-k8s.io/v1beta2 ClusterQueue":          "kueue.x-k8s.io/clusterqueue_v1beta2.json",
	"kueue.x-k8s.io/v1beta2 Cohort":                "kueue.x-k8s.io/cohort_v1beta2.json",
	"kueue.x-k8s.io/v1beta2 LocalQueue":            "kueue.x-k8s.io/localqueue_v1beta2.json",
	"kueue.x-k8s.io/v1beta2 ResourceFlavor":        "kueue.x-k8s.io/resourceflavor_v1beta2.json",
	"kueue.x-k8s.io/v1beta2 Topology":              "kueue.x-k8s.io/topology_v1beta2.json",
	HyperNodeAPIVersion + " HyperNode":             "topology.volcano.sh/hypernode_v1alpha1.json",
	VolcanoAPIVersion + " Job":                     "batch.volcano.sh/job_v1alpha1.json.gz",
	"kueue.x-k8s.io/v1beta2 WorkloadPriorityClass": "kueue.x-k8s.io/workloadpriorityclass_v1beta2.json",
	"monitoring.coreos.com/v1 PrometheusRule":      "monitoring.coreos.com/prometheusrule_v1.json",
	KubeflowAPIVersion + " PyTorchJob":             "kubeflow.org/pytorchjob_v1.json",
	KubeflowAPIVersion + " TFJob":                  "kubeflow.org/tfjob_v1.json",
	KEDAAPIVersion + " ScaledObject":               "keda.sh/scaledobject_v1alpha1.json.gz",
	KServeAPIVersion + " InferenceService":         "serving.kserve.io/inferenceservice_v1beta1.json.gz",
	LWSAPIVersion + " LeaderWorkerSet":             "leaderworkerset.x-k8s.io/leaderworkerset_v1.json.gz",
}

type schemaSet struct {
	cache map[string]*strict.CRD
}

func newSchemaSet() *schemaSet {
	return &schemaSet{cache: map[string]*strict.CRD{}}
}

// schema compiles a published CRD schema as strict as the API server is
// with strict field validation (strict.CompileCRD: unknown fields refused,
// int-or-string fields either).
func (s *schemaSet) schema(t *testing.T, file string) *strict.CRD {
	t.Helper()
	if sch, ok := s.cache[file]; ok {
		return sch
	}
	data, err := os.ReadFile(filepath.Join("testdata", "crd-schemas", file))
	require.NoError(t, err)
	sch, err := strict.CompileCRD(file, data)
	require.NoError(t, err)
	s.cache[file] = sch
	return sch
}

// validate checks one object against its CRD schema; it returns false
// for a kind that has none.
func (s *schemaSet) validate(t *testing.T, obj any) (bool, error) {
	t.Helper()
	b, err := marshal(obj)
	require.NoError(t, err)
	var tm struct{ APIVersion, Kind string }
	require.NoError(t, yaml.Unmarshal(b, &tm))
	file, ok := crdSchemas[tm.APIVersion+" "+tm.Kind]
	if !ok {
		return false, nil
	}
	j, err := yaml.YAMLToJSON(b)
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	require.NoError(t, err)
	return true, s.schema(t, file).Validate(inst)
}

// TestCustomResourcesMatchTheirCRDs validates every custom resource of
// the golden cases, the shipped examples with policies, and the
// training-API and storage options against the projects' published CRD
// schemas.
func TestCustomResourcesMatchTheirCRDs(t *testing.T) {
	set := newSchemaSet()
	checked := map[string]int{}
	check := func(what string, files []File) {
		for _, f := range files {
			for i, o := range f.Objects {
				ok, err := set.validate(t, o)
				require.NoError(t, err, "%s %s document %d", what, f.Path, i+1)
				if ok {
					b, _ := marshal(o)
					var tm struct{ Kind string }
					_ = yaml.Unmarshal(b, &tm)
					checked[tm.Kind]++
				}
			}
		}
	}
	for _, c := range goldenCases {
		check(c.name, generate(t, c))
	}
	for _, r := range [][2]string{
		{twoTeams, ""}, {twoTeams, "cohort-reclaim"}, {twoTeams, "strict-fifo"},
		{"../../examples/fair-sharing/scenario.yaml", ""},
		{"../../examples/fair-sharing/scenario.yaml", "fair-sharing"},
		{"../../examples/manifests/scenario.yaml", ""},
		{"../../examples/inference/torchserve-bert/scenario.yaml", ""},
		{"../../examples/inference/kserve-flash-sale/scenario.yaml", ""},
		{"../../examples/inference/priority-training/scenario.yaml", ""},
		{"../../examples/inference/zone-spread/scenario.yaml", ""},
		{kueueTAS, ""}, {kueueTAS, "preferred"},
	} {
		files, _, err := generateWith(t, r[0], r[1], Options{})
		require.NoError(t, err)
		check(r[0]+"@"+r[1], files)
	}
	for _, api := range []string{TrainingPyTorchJob, TrainingTFJob} {
		files, _, err := generateWith(t, elastic, "", Options{TrainingAPI: api, FixedPools: FixedNodeGroup})
		require.NoError(t, err)
		check(api, files)
	}
	for _, kind := range []string{"NodePool", "EC2NodeClass", "ClusterQueue", "Cohort", "LocalQueue", "ResourceFlavor", "Topology", "PrometheusRule", "PyTorchJob", "TFJob", "WorkloadPriorityClass", "ScaledObject", "InferenceService"} {
		require.Positive(t, checked[kind], "no %s was checked", kind)
	}
}

// TestSchemaCheckCanFail: a misspelt field and a value the schema does not
// allow are caught.
func TestSchemaCheckCanFail(t *testing.T) {
	set := newSchemaSet()
	files, _, err := generateWith(t, twoTeams, "", Options{TrainingAPI: TrainingPyTorchJob})
	require.NoError(t, err)
	for _, c := range []struct{ kind, from, to, want string }{
		{"ClusterQueue", "queueingStrategy: BestEffortFIFO", "queueingStrategy: Fastest", "queueingStrategy"},
		{"NodePool", "consolidationPolicy:", "consolidationPolcy:", "consolidationPolcy"},
		{"PyTorchJob", "pytorchReplicaSpecs:", "pytorchReplicaSpec:", "pytorchReplicaSpec"},
	} {
		var obj map[string]any
		for _, f := range files {
			for _, o := range f.Objects {
				b, err := marshal(o)
				require.NoError(t, err)
				if strings.Contains(string(b), "kind: "+c.kind+"\n") && strings.Contains(string(b), c.from) {
					bad := strings.Replace(string(b), c.from, c.to, 1)
					require.NoError(t, yaml.Unmarshal([]byte(bad), &obj))
				}
			}
		}
		require.NotNil(t, obj, c.kind)
		_, err := set.validate(t, obj)
		require.Error(t, err, c.kind)
		msg, _ := json.Marshal(err.Error())
		require.Contains(t, string(msg), c.want)
	}
}
