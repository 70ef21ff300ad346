package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// The kinds Parse reads, by apiVersion group.
const (
	groupBatch    = "batch"
	groupKubeflow = "kubeflow.org"
	groupVolcano  = "batch.volcano.sh"
	groupJobSet   = "jobset.x-k8s.io"
	groupRay      = "ray.io"
	groupKAITO    = "kaito.sh"
)

// Kinds lists the workload kinds Parse reads, as apiVersion kind.
func Kinds() []string {
	return []string{
		"v1 Pod", "batch/v1 Job", "batch/v1 CronJob", "kubeflow.org/v1 PyTorchJob", "kubeflow.org/v1 TFJob",
		"batch.volcano.sh/v1alpha1 Job", "jobset.x-k8s.io/v1alpha2 JobSet", "ray.io/v1 RayJob", "ray.io/v1 RayCluster",
		"kaito.sh/v1alpha1 Workspace", "kaito.sh/v1beta1 Workspace",
		"kubeflow.org/v1 JAXJob", "kubeflow.org/v1 MPIJob", "kubeflow.org/v2beta1 MPIJob",
		"leaderworkerset.x-k8s.io/v1 LeaderWorkerSet", "ray.io/v1 RayService",
		"kubeflow.org/v1 PaddleJob", "kubeflow.org/v1 XGBoostJob",
		"trainer.kubeflow.org/v1alpha1 TrainJob", "workload.codeflare.dev/v1beta2 AppWrapper",
		"batch.volcano.sh/v1alpha1 CronJob",
	}
}

// schemaFor is the Go type a document of apiVersion and kind decodes into
// (nil: not a workload gpuplan reads).
func schemaFor(apiVersion, kind string) any {
	switch apiVersion + " " + kind {
	case "v1 Pod":
		return &corev1.Pod{}
	case "batch/v1 Job":
		return &batchv1.Job{}
	case "batch/v1 CronJob", "batch/v1beta1 CronJob":
		// batch/v1beta1 (removed in Kubernetes 1.25) has the same fields
		// as batch/v1 for what gpuplan reads; older examples use it.
		return &batchv1.CronJob{}
	case "kubeflow.org/v1 PyTorchJob", "kubeflow.org/v1 TFJob", "kubeflow.org/v1 JAXJob", "kubeflow.org/v1 MPIJob", "kubeflow.org/v2beta1 MPIJob",
		"kubeflow.org/v1 PaddleJob", "kubeflow.org/v1 XGBoostJob":
		return &kubeflowJob{}
	case "batch.volcano.sh/v1alpha1 Job":
		return &volcanoJob{}
	case "jobset.x-k8s.io/v1alpha2 JobSet":
		return &jobSet{}
	case "ray.io/v1 RayJob":
		return &rayJob{}
	case "ray.io/v1 RayCluster":
		return &rayCluster{}
	case "kaito.sh/v1alpha1 Workspace", "kaito.sh/v1beta1 Workspace":
		return &kaitoWorkspace{}
	case "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet":
		return &leaderWorkerSet{}
	case "ray.io/v1 RayService":
		return &rayService{}
	case "trainer.kubeflow.org/v1alpha1 TrainJob":
		return &trainJob{}
	case "workload.codeflare.dev/v1beta2 AppWrapper":
		return &appWrapper{}
	case "batch.volcano.sh/v1alpha1 CronJob":
		return &volcanoCronJob{}
	}
	return nil
}

// doc is one decoded document with where its fields are.
type doc struct {
	file     string
	line     int
	kind     string
	pos      strict.Positions
	notes    *[]string
	objField string // the object's name, for notes
	// rename, when set, is the path errors and notes name for a field of
	// pos (a TrainJob's runtime: its template's fields where they are).
	rename func(string) string
	// runtimes are the input's TrainingRuntimes and
	// ClusterTrainingRuntimes (the file's, or the folder's), for its
	// TrainJobs.
	runtimes map[string]*runtimeDoc
	// folder: the file was given as one of a folder's.
	folder bool
	// root is the document's YAML (an AppWrapper's components are read
	// from it).
	root *yamlv3.Node
	// dra is the file's DRA objects, pools the cluster's node pools (nil:
	// unknown) and namespace the object's, for its pods' claims.
	dra *dra.Set
	// computeDomain: the pod template claims a ComputeDomain's channel;
	// its pods' labelComputeDomain value.
	computeDomain string
	pools         []cluster.PoolSpec
	namespace     string
}

// errAt is an InputError at a field path of the document.
func (d *doc) errAt(field, format string, args ...any) error {
	e := &strict.InputError{File: d.file, Line: d.line, Field: field, Msg: fmt.Sprintf(format, args...)}
	if p, ok := d.pos[field]; ok {
		e.Line, e.Column = p[0], p[1]
	}
	if d.rename != nil {
		e.Field = d.rename(field)
	}
	return e
}

// note records something the document says that gpuplan reads but does
// not model, with its line.
func (d *doc) note(field, format string, args ...any) {
	line := d.line
	if p, ok := d.pos[field]; ok {
		line = p[0]
	}
	if d.rename != nil {
		field = d.rename(field)
	}
	*d.notes = append(*d.notes, fmt.Sprintf("%s:%d: %s %s: %s: %s", d.file, line, d.kind, d.objField, field, fmt.Sprintf(format, args...)))
}

// Parse reads a file's workload manifests (YAML, one or more documents).
// Documents of other kinds (a ConfigMap beside a RayJob, Kueue's queues)
// are skipped, each named in skipped; a file with no workload is an error.
// A TrainJob's runtime is the file's, else one of the trainer's built-in
// ClusterTrainingRuntimes.
func Parse(file string, data []byte) (objs []Object, skipped []string, err error) {
	return ParseIn(file, data, nil)
}

// ParseIn is Parse for a cluster of the given node pools: a DRA claim's
// firstAvailable takes the first subrequest they serve, and
// allocationMode All the matching GPUs of their nodes (nil: pools
// unknown).
func ParseIn(file string, data []byte, pools []cluster.PoolSpec) (objs []Object, skipped []string, err error) {
	return ParseWith(file, data, pools, nil)
}

// ParseWith is ParseIn in a cluster whose DeviceClasses (a scenario's
// policy's, read with dra.Read; nil: none) the pods' claims may name
// (dra.Set.UseCluster).
func ParseWith(file string, data []byte, pools []cluster.PoolSpec, classes *dra.Set) (objs []Object, skipped []string, err error) {
	docs, err := strict.Manifests(file, data)
	if err != nil {
		return nil, nil, err
	}
	runtimes, skipped, err := readRuntimes(file, docs, nil, "file's")
	if err != nil {
		return nil, nil, err
	}
	devices, err := readDevices(file, docs, classes)
	if err != nil {
		return nil, nil, err
	}
	objs, more, err := parseDocs(file, docs, runtimes, false, devices, pools)
	if err != nil {
		return nil, nil, err
	}
	skipped = append(skipped, more...)
	if len(objs) == 0 {
		return nil, skipped, noWorkload(file, "the file", skipped)
	}
	return objs, skipped, nil
}

// readDevices reads a file's DRA objects, with the cluster's
// DeviceClasses beside them.
func readDevices(file string, docs []strict.Manifest, classes *dra.Set) (*dra.Set, error) {
	devices, err := dra.Read(file, docs)
	if err != nil {
		return nil, err
	}
	if err := devices.UseCluster(classes); err != nil {
		return nil, err
	}
	return devices, nil
}

// noWorkload is the error of an input without a workload.
func noWorkload(file, what string, skipped []string) error {
	msg := "no workload in " + what
	if len(skipped) > 0 {
		msg = fmt.Sprintf("no workload in %s (%d other objects skipped)", what, len(skipped))
	}
	return strict.Errorf(file, 0, "", "%s; gpuplan reads %s", msg, strings.Join(Kinds(), ", "))
}

// parseDocs reads a file's workload documents.
func parseDocs(file string, docs []strict.Manifest, runtimes map[string]*runtimeDoc, folder bool, devices *dra.Set, pools []cluster.PoolSpec) (objs []Object, skipped []string, err error) {
	for _, m := range docs {
		if isRuntime(m) || dra.IsDRA(m.APIVersion) || dra.IsComputeDomain(m.APIVersion, m.Kind) {
			continue
		}
		out := schemaFor(m.APIVersion, m.Kind)
		if out == nil {
			skipped = append(skipped, fmt.Sprintf("%s:%d: %s %s %s is not a workload gpuplan reads (it reads %s)", file, m.Line, strict.Quote(m.APIVersion), strict.Quote(m.Kind), strict.Quote(m.Name), strings.Join(Kinds(), ", ")))
			continue
		}
		pos, err := m.Decode(file, out, strict.Options{What: "a manifest"})
		if err != nil {
			return nil, nil, err
		}
		o := Object{File: file, Line: m.Line, Kind: m.Kind}
		d := &doc{file: file, line: m.Line, kind: m.Kind, pos: pos, notes: &o.Notes, runtimes: runtimes, folder: folder, root: m.Root,
			dra: devices, pools: pools, namespace: namespaceOf(m.Root)}
		if err := convert(d, &o, out); err != nil {
			return nil, nil, err
		}
		if err := domainFits(d, &o); err != nil {
			return nil, nil, err
		}
		if o.copies > 1 {
			// A LeaderWorkerSet's groups: one object each.
			base := o.Name
			for i := range o.copies {
				c := o
				c.Name = copyName(base, i)
				c.Groups = append([]Group(nil), o.Groups...)
				if i > 0 {
					c.Notes = nil // said once, with the first
				}
				objs = append(objs, c)
			}
			continue
		}
		objs = append(objs, o)
	}
	objs, err = podGroups(file, objs)
	if err != nil {
		return nil, nil, err
	}
	if err := shareClaims(file, objs); err != nil {
		return nil, nil, err
	}
	if len(objs) > 0 {
		objs[0].Notes = append(objs[0].Notes, devices.Notes...)
	}
	return objs, skipped, nil
}

// maxFolderFiles bounds the files of a workload folder.
const maxFolderFiles = 1000

// Load reads a manifest file (at most strict.MaxFileBytes), or a folder:
// its .yaml and .yml files (not its subfolders) in name order, as one
// input, so a TrainJob finds its runtime in another file of the folder.
// A folder's file without a workload is skipped; a folder without any is
// an error.
func Load(path string) ([]Object, []string, error) { return LoadIn(path, nil) }

// LoadIn is Load for a cluster of the given node pools (ParseIn).
func LoadIn(path string, pools []cluster.PoolSpec) ([]Object, []string, error) {
	return LoadWith(path, pools, nil)
}

// LoadWith is LoadIn in a cluster with the given DeviceClasses
// (ParseWith).
func LoadWith(path string, pools []cluster.PoolSpec, classes *dra.Set) ([]Object, []string, error) {
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		return loadFolder(path, pools, classes)
	}
	b, err := strict.ReadFileBounded(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseWith(path, b, pools, classes)
}

// loadFolder reads a folder's files as one input: a TrainJob finds its
// runtime in any of them; each file's DRA objects serve its own pods.
func loadFolder(dir string, pools []cluster.PoolSpec, classes *dra.Set) ([]Object, []string, error) {
	var files []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, nil, strict.Errorf(dir, 0, "", "the folder has no .yaml or .yml files")
	}
	if len(files) > maxFolderFiles {
		return nil, nil, strict.Errorf(dir, 0, "", "the folder has %d .yaml and .yml files; at most %d are read", len(files), maxFolderFiles)
	}
	all := make([][]strict.Manifest, len(files))
	var runtimes map[string]*runtimeDoc
	var skipped []string
	for i, f := range files {
		b, err := strict.ReadFileBounded(f)
		if err != nil {
			return nil, nil, err
		}
		if all[i], err = strict.Manifests(f, b); err != nil {
			return nil, nil, err
		}
		var sk []string
		if runtimes, sk, err = readRuntimes(f, all[i], runtimes, "folder's"); err != nil {
			return nil, nil, err
		}
		skipped = append(skipped, sk...)
	}
	var objs []Object
	for i, f := range files {
		devices, err := readDevices(f, all[i], classes)
		if err != nil {
			return nil, nil, err
		}
		o, sk, err := parseDocs(f, all[i], runtimes, true, devices, pools)
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, o...)
		skipped = append(skipped, sk...)
	}
	if len(objs) == 0 {
		return nil, skipped, noWorkload(dir, fmt.Sprintf("the folder's %d files", len(files)), skipped)
	}
	return objs, skipped, nil
}

// namespaceOf is a document's metadata.namespace ("" when not given).
func namespaceOf(root *yamlv3.Node) string {
	get := func(n *yamlv3.Node, k string) *yamlv3.Node {
		if n == nil || n.Kind != yamlv3.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				return n.Content[i+1]
			}
		}
		return nil
	}
	if ns := get(get(root, "metadata"), "namespace"); ns != nil && ns.Kind == yamlv3.ScalarNode {
		return ns.Value
	}
	return ""
}
