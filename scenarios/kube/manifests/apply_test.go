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
	"NodePool": true, "EC2NodeClass": true, "Queue": true, "Topology": true,
	"HyperNode": true, "DeviceClass": true,
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
	"topology.volcano.sh": true, "resource.k8s.io": true,
}

// TestManifestsApplyInOneKubectlApply walks the folder gpuplan writes as
// `kubectl apply -R -f DIR/kubernetes` does (depth first, names in
// lexical order, only .yaml, .yml and .json files) for every shipped
// example and variant under three option sets (the third with GPUs by
// DRA claim), and checks that each object can be created when its turn
// comes on a cluster with the projects installed: it is an API object
// (eksctl's ClusterConfig is not, and sits beside the folder) with a name
// (kubectl apply refuses generateName), its namespace was created before
// it (or is one an install creates), and the PriorityClass, StorageClass,
// claim, subdomain Service, ResourceClaimTemplate and DeviceClass it names
// were created before it (or are built in, or given with --storage-class). Then the job templates beside the
// folder (jobs/, kubectl create once per job): each has a generateName
// and no name, and what it names exists. Before the layout (files named as
// they came, such as jobs/ before namespaces.yaml) every example with a
// Job failed here; before the templates, every class's Job had a fixed
// name, so a second submission of a class was refused as existing.
func TestManifestsApplyInOneKubectlApply(t *testing.T) {
	if testing.Short() {
		t.Skip("generates every shipped example three times")
	}
	opts := []Options{{}, {FixedPools: FixedNodeGroup, TrainingAPI: TrainingPyTorchJob}, {StorageClass: "efs-sc", AccessMode: AccessRWX, TrainingAPI: TrainingTFJob, GPUs: GPUsDRA}}
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
	// Everything outside the applied folder is not for kubectl apply.
	top, err := os.ReadDir(dir)
	require.NoError(t, err)
	templates := strings.TrimSuffix(DirJobTemplates, "/")
	for _, e := range top {
		require.True(t, e.Name() == Applied || e.Name() == PathEksctl || e.Name() == PathAKSAgentPools || e.Name() == templates, "%s: %s is outside %s/", name, e.Name(), Applied)
	}
	// walk reads the objects of a folder's .yaml, .yml and .json files in
	// lexical order (filepath.WalkDir, as kubectl's builder); template
	// says they are job templates (kubectl create, once per job).
	walk := func(folder string, template bool) {
		if _, err := os.Stat(folder); template && os.IsNotExist(err) {
			return
		}
		err := filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
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
					Metadata struct{ Name, GenerateName, Namespace string }
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
				id := obj.Metadata.Name
				if template {
					// kubectl create -f twice makes two jobs.
					require.Empty(t, obj.Metadata.Name, "%s: %s:%d: a job template has no fixed name", name, rel, m.Line)
					require.NotEmpty(t, obj.Metadata.GenerateName, "%s: %s:%d: a job template has a generateName", name, rel, m.Line)
					id = obj.Metadata.GenerateName
				} else {
					// A class's job is submitted again and again: not
					// an object applied once under a fixed name.
					require.False(t, m.Kind == "Job" || m.Kind == "PyTorchJob" || m.Kind == "TFJob", "%s: %s:%d: %s %s is a class's job applied under a fixed name; a second submission would be refused as existing", name, rel, m.Line, m.Kind, id)
					// kubectl apply refuses generateName.
					require.NotEmpty(t, obj.Metadata.Name, "%s: %s:%d: %s has no name: kubectl apply refuses it", name, rel, m.Line, m.Kind)
					require.Empty(t, obj.Metadata.GenerateName, "%s: %s:%d: kubectl apply refuses generateName", name, rel, m.Line)
				}
				if !clusterScoped[m.Kind] {
					ns := obj.Metadata.Namespace
					require.NotEmpty(t, ns, "%s: %s:%d: %s %s has no namespace", name, rel, m.Line, m.Kind, id)
					require.True(t, created["Namespace/"+ns], "%s: %s:%d: %s %s is in namespace %s, not created before it", name, rel, m.Line, m.Kind, id, ns)
				}
				for _, ref := range podRefs(obj.Spec) {
					if strings.HasPrefix(ref, "PriorityClass/system-") {
						continue
					}
					require.True(t, created[ref], "%s: %s:%d: %s %s names %s, not created before it", name, rel, m.Line, m.Kind, id, ref)
				}
				created[m.Kind+"/"+obj.Metadata.Name] = true
			}
			return nil
		})
		require.NoError(t, err)
	}
	walk(filepath.Join(dir, Applied), false)
	walk(filepath.Join(dir, templates), true)
}

// podRefs finds the PriorityClasses, StorageClasses, claims, subdomain
// Services, ResourceClaimTemplates and DeviceClasses a spec names, at any
// depth (pod templates of Jobs, PyTorchJobs, Deployments, volume claim
// templates, a claim template's device requests).
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
				case "claimName":
					out = append(out, "PersistentVolumeClaim/"+s)
				case "subdomain":
					out = append(out, "Service/"+s)
				case "resourceClaimTemplateName":
					out = append(out, "ResourceClaimTemplate/"+s)
				case "deviceClassName":
					out = append(out, "DeviceClass/"+s)
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
