package manifests

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/validate/strict"
)

// clusterScoped are the kinds written that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "PriorityClass": true, "StorageClass": true,
	"ResourceFlavor": true, "ClusterQueue": true, "Cohort": true, "WorkloadPriorityClass": true,
	"NodePool": true, "EC2NodeClass": true, "Queue": true,
}

// installed are the namespaces that exist before gpuplan's objects: the
// cluster's own, and those the projects' installs create (Kueue's and
// Volcano's controllers read their ConfigMaps there).
var installed = map[string]bool{"default": true, "kube-system": true, "kueue-system": true, "volcano-system": true}

// apiGroups are the groups of the objects the folder may hold: the
// cluster's own and the projects' whose CRDs a user installs.
var apiGroups = map[string]bool{
	"v1": true, "apps": true, "batch": true, "scheduling.k8s.io": true, "storage.k8s.io": true, "autoscaling": true,
	"kueue.x-k8s.io": true, "karpenter.sh": true, "karpenter.k8s.aws": true, "monitoring.coreos.com": true,
	"keda.sh": true, "serving.kserve.io": true, "kubeflow.org": true, "batch.volcano.sh": true, "scheduling.volcano.sh": true,
}

// TestManifestsApplyInOneKubectlApply walks the folder gpuplan writes as
// `kubectl apply -R -f DIR/kubernetes` does (depth first, names in
// lexical order, only .yaml, .yml and .json files) for every shipped
// example and variant under three option sets, and checks that each
// object can be created when its turn comes on a cluster with the
// projects installed: it is an API object (eksctl's ClusterConfig is not,
// and sits beside the folder), its namespace was created before it (or
// is one an install creates), and the PriorityClass and StorageClass its
// pods name were created before it (or are built in, or given with
// --storage-class). Before the layout (files named as they came, such as
// jobs/ before namespaces.yaml) every example with a Job failed here.
func TestManifestsApplyInOneKubectlApply(t *testing.T) {
	if testing.Short() {
		t.Skip("generates every shipped example three times")
	}
	opts := []Options{{}, {FixedPools: FixedNodeGroup, TrainingAPI: TrainingPyTorchJob}, {StorageClass: "efs-sc", AccessMode: AccessRWX, TrainingAPI: TrainingTFJob}}
	checked := 0
	for _, r := range shippedRuns(t) {
		s, err := scenarios.LoadFile(r[0])
		require.NoError(t, err)
		if r[1] != "" {
			s, err = s.Variant(r[1])
			require.NoError(t, err)
		}
		if s.Spec.Cluster.NodeList != nil {
			continue // refused: a node list names no instance types
		}
		m, err := s.Cluster()
		require.NoError(t, err)
		for _, o := range opts {
			files, _, err := Generate(s, m, o)
			require.NoError(t, err)
			dir := t.TempDir()
			require.NoError(t, WriteDir(dir, files))
			checkApplyOrder(t, r[0]+"@"+r[1], dir, o.StorageClass)
			checked++
		}
	}
	require.Greater(t, checked, 30)
}

func checkApplyOrder(t *testing.T, name, dir, storageClass string) {
	t.Helper()
	created := map[string]bool{}
	for ns := range installed {
		created["Namespace/"+ns] = true
	}
	if storageClass != "" {
		created["StorageClass/"+storageClass] = true
	}
	// Everything outside the applied folder is not for kubectl.
	top, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range top {
		require.True(t, e.Name() == Applied || e.Name() == PathEksctl || e.Name() == PathAKSAgentPools, "%s: %s is outside %s/", name, e.Name(), Applied)
	}
	// filepath.WalkDir visits in lexical order, as kubectl's builder.
	err = filepath.WalkDir(filepath.Join(dir, Applied), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
		default:
			return nil // kubectl skips it (a TorchServe config.properties)
		}
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		ms, err := strict.Manifests(p, data)
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		for _, m := range ms {
			var obj struct {
				Metadata struct{ Name, Namespace string }
				Spec     map[string]any
			}
			b, err := yamlv3.Marshal(m.Root)
			require.NoError(t, err)
			require.NoError(t, yaml.Unmarshal(b, &obj))
			group, _, _ := strings.Cut(m.APIVersion, "/")
			if !strings.Contains(m.APIVersion, "/") {
				group = "v1"
			}
			require.True(t, apiGroups[group], "%s: %s:%d: %s %s is not an object of an API the cluster serves", name, rel, m.Line, m.APIVersion, m.Kind)
			if !clusterScoped[m.Kind] {
				ns := obj.Metadata.Namespace
				require.NotEmpty(t, ns, "%s: %s:%d: %s %s has no namespace", name, rel, m.Line, m.Kind, obj.Metadata.Name)
				require.True(t, created["Namespace/"+ns], "%s: %s:%d: %s %s is in namespace %s, not created before it", name, rel, m.Line, m.Kind, obj.Metadata.Name, ns)
			}
			for _, ref := range podRefs(obj.Spec) {
				if strings.HasPrefix(ref, "PriorityClass/system-") {
					continue
				}
				require.True(t, created[ref], "%s: %s:%d: %s %s names %s, not created before it", name, rel, m.Line, m.Kind, obj.Metadata.Name, ref)
			}
			created[m.Kind+"/"+obj.Metadata.Name] = true
		}
		return nil
	})
	require.NoError(t, err)
}

// podRefs finds the PriorityClasses and StorageClasses a spec names, at
// any depth (pod templates of Jobs, PyTorchJobs, Deployments, volume
// claim templates).
func podRefs(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				switch k {
				case "priorityClassName":
					out = append(out, "PriorityClass/"+s)
				case "storageClassName":
					out = append(out, "StorageClass/"+s)
				}
			}
			out = append(out, podRefs(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, podRefs(e)...)
		}
	}
	return out
}
