package workloads

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// The Kubeflow trainer's v2 API (trainer.kubeflow.org/v1alpha1,
// kubeflow/trainer pkg/apis/trainer/v1alpha1): a TrainJob names a
// TrainingRuntime or ClusterTrainingRuntime, a JobSet template with an ML
// policy, and sets the trainer's node count and resources.
const (
	trainerAPI = "trainer.kubeflow.org/v1alpha1"
	// trainerGroup is runtimeRef.apiGroup's only value.
	trainerGroup = "trainer.kubeflow.org"
	// labelAncestor marks a runtime's replicated job as the trainer's
	// (value "trainer") or an initializer's (constants.LabelTrainJobAncestor).
	labelAncestor = "trainer.kubeflow.org/trainjob-ancestor-step"
	// trainerNode is the container of the trainer's pods that
	// trainer.resourcesPerNode sets (constants.Node).
	trainerNode = "node"
)

// trainJob is a TrainJob.
type trainJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              trainJobSpec `json:"spec"`
	Status            any          `json:"status,omitempty"`
}

type trainJobSpec struct {
	RuntimeRef struct {
		Name     string  `json:"name"`
		APIGroup *string `json:"apiGroup,omitempty"`
		Kind     *string `json:"kind,omitempty"`
	} `json:"runtimeRef"`
	Initializer           any              `json:"initializer,omitempty"`
	Trainer               *trainJobTrainer `json:"trainer,omitempty"`
	RuntimePatches        []runtimePatch   `json:"runtimePatches,omitempty"`
	Suspend               *bool            `json:"suspend,omitempty"`
	ActiveDeadlineSeconds int64            `json:"activeDeadlineSeconds,omitempty"`
	ManagedBy             *string          `json:"managedBy,omitempty"`
}

type trainJobTrainer struct {
	Image            *string                      `json:"image,omitempty"`
	Command          []string                     `json:"command,omitempty"`
	Args             []string                     `json:"args,omitempty"`
	Env              []corev1.EnvVar              `json:"env,omitempty"`
	NumNodes         *int32                       `json:"numNodes,omitempty"`
	ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`
	NumProcPerNode   *int32                       `json:"numProcPerNode,omitempty"`
}

// trainingRuntime is a TrainingRuntime or ClusterTrainingRuntime.
type trainingRuntime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		MLPolicy *struct {
			NumNodes *int32       `json:"numNodes,omitempty"`
			Torch    any          `json:"torch,omitempty"`
			MPI      *mpiMLPolicy `json:"mpi,omitempty"`
			Flux     any          `json:"flux,omitempty"`
			JAX      any          `json:"jax,omitempty"`
			XGBoost  any          `json:"xgboost,omitempty"`
		} `json:"mlPolicy,omitempty"`
		PodGroupPolicy any `json:"podGroupPolicy,omitempty"`
		Template       struct {
			metav1.ObjectMeta `json:"metadata,omitempty"`
			Spec              jobSetSpec `json:"spec,omitempty"`
		} `json:"template"`
	} `json:"spec"`
}

// mpiMLPolicy is the trainer's MPIMLPolicySource.
type mpiMLPolicy struct {
	NumProcPerNode    *int32  `json:"numProcPerNode,omitempty"`
	MPIImplementation *string `json:"mpiImplementation,omitempty"`
	SSHAuthMountPath  *string `json:"sshAuthMountPath,omitempty"`
	RunLauncherAsNode *bool   `json:"runLauncherAsNode,omitempty"`
}

// runtimeDoc is a runtime read from an input file or built in, with where
// its fields are.
type runtimeDoc struct {
	x    trainingRuntime
	kind string
	file string
	line int
	pos  strict.Positions
	// builtin: one of the trainer's built-in runtimes (runtimes/).
	builtin bool
}

func isRuntime(m strict.Manifest) bool {
	return m.APIVersion == trainerAPI && (m.Kind == "TrainingRuntime" || m.Kind == "ClusterTrainingRuntime")
}

// runtimeKey is how a TrainJob finds its runtime: a ClusterTrainingRuntime
// by name, a TrainingRuntime by name in the TrainJob's namespace.
func runtimeKey(kind, namespace, name string) string {
	if kind == "ClusterTrainingRuntime" {
		namespace = ""
	}
	return kind + "/" + namespace + "/" + name
}

// readRuntimes decodes the file's runtimes (strictly) into into (made
// when nil); each is listed as skipped: it is read only for the TrainJobs
// that name it, those of the file, or of the folder (scope) when the
// input is a folder. A runtime defined twice in the input is refused at
// the second.
func readRuntimes(file string, docs []strict.Manifest, into map[string]*runtimeDoc, scope string) (map[string]*runtimeDoc, []string, error) {
	var skipped []string
	for _, m := range docs {
		if !isRuntime(m) {
			continue
		}
		r := &runtimeDoc{kind: m.Kind, file: file, line: m.Line, builtin: scope == "built in"}
		pos, err := m.Decode(file, &r.x, strict.Options{What: "a manifest"})
		if err != nil {
			return nil, nil, err
		}
		r.pos = pos
		if into == nil {
			into = map[string]*runtimeDoc{}
		}
		key := runtimeKey(m.Kind, r.x.Namespace, r.x.Name)
		if first, dup := into[key]; dup {
			where := "in the file"
			if first.file != file {
				where = fmt.Sprintf("in the folder (first in %s:%d)", first.file, first.line)
			}
			return nil, nil, strict.Errorf(file, m.Line, "metadata.name", "%s %s is defined twice %s", m.Kind, strict.Quote(r.x.Name), where)
		}
		into[key] = r
		skipped = append(skipped, fmt.Sprintf("%s:%d: %s %s is a runtime, read for the %s TrainJobs that name it", file, m.Line, m.Kind, strict.Quote(r.x.Name), scope))
	}
	return into, skipped, nil
}

// findRuntime is the runtime a TrainJob names: one of the input's (its
// file's, or its folder's), else for a ClusterTrainingRuntime one of the
// trainer's built-in runtimes, as a cluster with the trainer installed
// has them (a runtime of the input by the same name replaces it, as
// applying it would).
func findRuntime(d *doc, kind, namespace, name string) (*runtimeDoc, error) {
	key := runtimeKey(kind, namespace, name)
	if rt, ok := d.runtimes[key]; ok {
		return rt, nil
	}
	var builtins []string
	if kind == "ClusterTrainingRuntime" {
		rts, err := builtinRuntimes()
		if err != nil {
			return nil, err
		}
		if rt, ok := rts[key]; ok {
			return rt, nil
		}
		for _, r := range rts {
			builtins = append(builtins, r.x.Name)
		}
		sort.Strings(builtins)
	}
	where := "the file"
	if d.folder {
		where = "the folder's files"
	}
	if kind == "ClusterTrainingRuntime" {
		return nil, d.errAt("spec.runtimeRef", "%s %s is not in %s nor one of the trainer %s's built-in runtimes (%s); give the runtime's manifest in the file, or the folder holding both as the path", kind, strict.Quote(name), where, trainerRelease, strings.Join(builtins, ", "))
	}
	return nil, d.errAt("spec.runtimeRef", "%s %s is not in %s (a TrainingRuntime is the namespace's own: nothing is built in); give the runtime's manifest in the file, or the folder holding both as the path", kind, strict.Quote(name), where)
}

// trainJobObject reads a TrainJob as the JobSet the trainer makes of it
// (pkg/runtime/core/trainingruntime.go and the ML policy plugins): its
// runtime's template with the TrainJob's runtimePatches merged in (a
// strategic merge patch each, in order); each replicated job runs its
// parallelism's pods (default 1), the trainer's (label
// trainjob-ancestor-step: trainer) the runtime's mlPolicy.numNodes;
// trainer.numNodes then sets the trainer's count, or with an MPI policy
// the count of the job named node (numNodes-1, at least 1, when the
// launcher runs as a node); trainer.resourcesPerNode is merged into the
// "node" container of the trainer's job (and of the node job when the
// MPI launcher runs as a node).
func trainJobObject(d *doc, o *Object, x *trainJob) error {
	ref := x.Spec.RuntimeRef
	if ref.APIGroup != nil && *ref.APIGroup != trainerGroup {
		return d.errAt("spec.runtimeRef.apiGroup", "is %s; a TrainJob's runtime is in %s", strict.Quote(*ref.APIGroup), trainerGroup)
	}
	kind := "ClusterTrainingRuntime"
	if ref.Kind != nil {
		kind = *ref.Kind
	}
	if kind != "ClusterTrainingRuntime" && kind != "TrainingRuntime" {
		return d.errAt("spec.runtimeRef.kind", "is %s; want ClusterTrainingRuntime or TrainingRuntime", strict.Quote(kind))
	}
	if ref.Name == "" {
		return d.errAt("spec.runtimeRef.name", "is required")
	}
	rt, err := findRuntime(d, kind, x.Namespace, ref.Name)
	if err != nil {
		return err
	}
	tr := x.Spec.Trainer
	if tr != nil && tr.NumNodes != nil && *tr.NumNodes < 1 {
		return d.errAt("spec.trainer.numNodes", "is %d; must be at least 1", *tr.NumNodes)
	}
	ml := rt.x.Spec.MLPolicy
	runtimeNodes := int32(1)
	if ml != nil && ml.NumNodes != nil {
		runtimeNodes = *ml.NumNodes
	}
	mpi := ml != nil && ml.MPI != nil
	launcherAsNode := mpi && ml.MPI.RunLauncherAsNode != nil && *ml.MPI.RunLauncherAsNode
	// The runtime's template with the TrainJob's settings, read as a
	// JobSet of the TrainJob's name and metadata; its fields are the
	// runtime's (rename), the metadata the TrainJob's.
	js := &jobSet{ObjectMeta: x.ObjectMeta, Spec: rt.x.Spec.Template.Spec}
	js.Spec.ReplicatedJobs = append([]replicatedJob(nil), js.Spec.ReplicatedJobs...)
	if err := applyRuntimePatches(d, x, rt, &js.Spec); err != nil {
		return err
	}
	trainers, given := 0, false
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		count := int32(1)
		if p := rj.Template.Spec.Parallelism; p != nil {
			count = *p
		}
		isTrainer := ml != nil && rj.Template.Labels[labelAncestor] == "trainer"
		if isTrainer {
			count = runtimeNodes
			trainers++
		}
		if tr != nil && tr.NumNodes != nil {
			switch {
			case mpi && rj.Name == trainerNode && launcherAsNode:
				count, given = max(*tr.NumNodes-1, 1), true
			case mpi && rj.Name == trainerNode:
				count, given = *tr.NumNodes, true
			case !mpi && isTrainer:
				count, given = *tr.NumNodes, true
			}
		}
		c1, c2 := count, count
		rj.Template.Spec.Parallelism, rj.Template.Spec.Completions = &c1, &c2
		if tr == nil || tr.ResourcesPerNode == nil || !(isTrainer || launcherAsNode && rj.Name == trainerNode) {
			continue
		}
		given = true
		ps := &rj.Template.Spec.Template.Spec
		ps.Containers = append([]corev1.Container(nil), ps.Containers...)
		for k := range ps.Containers {
			if ps.Containers[k].Name == trainerNode {
				ps.Containers[k].Resources = mergeResources(ps.Containers[k].Resources, *tr.ResourcesPerNode)
				break
			}
		}
	}
	if !given && tr != nil && (tr.NumNodes != nil || tr.ResourcesPerNode != nil) {
		return d.errAt("spec.trainer", "%s %s has no replicated job labelled %s: trainer (with an mlPolicy), so numNodes and resourcesPerNode have nowhere to go", kind, strict.Quote(ref.Name), labelAncestor)
	}
	if x.Spec.Initializer != nil {
		d.note("spec.initializer", "the dataset and model initializers are not modelled apart from the runtime's replicated jobs")
	}
	if x.Spec.ActiveDeadlineSeconds != 0 {
		if err := o.activeDeadline(d, "spec.activeDeadlineSeconds", x.Spec.ActiveDeadlineSeconds); err != nil {
			return err
		}
	}
	if rt.builtin {
		d.note("spec.runtimeRef", "the trainer %s's built-in %s %s (%s)", trainerRelease, kind, ref.Name, rt.file)
	} else if rt.file != d.file {
		d.note("spec.runtimeRef", "%s %s from %s:%d", kind, ref.Name, rt.file, rt.line)
	}
	own := d.pos
	rd := &doc{file: rt.file, line: rt.line, kind: d.kind, pos: strict.Positions{}, notes: d.notes, objField: d.objField,
		dra: d.dra, pools: d.pools, namespace: d.namespace}
	if rt.file == d.file {
		for k, v := range own {
			if k == "metadata" || strings.HasPrefix(k, "metadata.") {
				rd.pos[k] = v
			}
		}
	}
	const tpl = "spec.template.spec"
	for k, v := range rt.pos {
		if rest, ok := strings.CutPrefix(k, tpl); ok {
			rd.pos["spec"+rest] = v
		}
	}
	rd.rename = func(field string) string {
		if rest, ok := strings.CutPrefix(field, "spec"); ok {
			return fmt.Sprintf("%s %s: %s%s", kind, ref.Name, tpl, rest)
		}
		return field
	}
	if tr == nil || tr.NumNodes == nil {
		if trainers > 0 && !mpi {
			d.note("spec.trainer", "the trainer's %d nodes are the runtime's mlPolicy.numNodes", runtimeNodes)
		}
	} else if mpi && launcherAsNode {
		d.note("spec.trainer.numNodes", "%d nodes with %s's MPI launcher as a node: the launcher and %d pods of the job %s", *tr.NumNodes, ref.Name, max(*tr.NumNodes-1, 1), trainerNode)
	}
	return jobSetObject(rd, o, js)
}

// mergeResources is base with over's requests and limits put in, key by
// key (trainingruntimeutil.MergeResourceRequirements).
func mergeResources(base, over corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := corev1.ResourceRequirements{Claims: base.Claims}
	merge := func(a, b corev1.ResourceList) corev1.ResourceList {
		if a == nil && b == nil {
			return nil
		}
		m := corev1.ResourceList{}
		for k, v := range a {
			m[k] = v
		}
		for k, v := range b {
			m[k] = v
		}
		return m
	}
	out.Requests = merge(base.Requests, over.Requests)
	out.Limits = merge(base.Limits, over.Limits)
	return out
}
