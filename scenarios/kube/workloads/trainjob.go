package workloads

import (
	"fmt"
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
	RuntimePatches        any              `json:"runtimePatches,omitempty"`
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
			NumNodes *int32 `json:"numNodes,omitempty"`
			Torch    any    `json:"torch,omitempty"`
			MPI      any    `json:"mpi,omitempty"`
			Flux     any    `json:"flux,omitempty"`
			JAX      any    `json:"jax,omitempty"`
			XGBoost  any    `json:"xgboost,omitempty"`
		} `json:"mlPolicy,omitempty"`
		PodGroupPolicy any `json:"podGroupPolicy,omitempty"`
		Template       struct {
			metav1.ObjectMeta `json:"metadata,omitempty"`
			Spec              jobSetSpec `json:"spec,omitempty"`
		} `json:"template"`
	} `json:"spec"`
}

// runtimeDoc is a runtime read from the file, with where its fields are.
type runtimeDoc struct {
	x    trainingRuntime
	kind string
	line int
	pos  strict.Positions
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

// readRuntimes decodes the file's runtimes (strictly); each is listed as
// skipped: it is read only for the TrainJobs that name it.
func readRuntimes(file string, docs []strict.Manifest) (map[string]*runtimeDoc, []string, error) {
	var out map[string]*runtimeDoc
	var skipped []string
	for _, m := range docs {
		if !isRuntime(m) {
			continue
		}
		r := &runtimeDoc{kind: m.Kind, line: m.Line}
		pos, err := m.Decode(file, &r.x, strict.Options{What: "a manifest"})
		if err != nil {
			return nil, nil, err
		}
		r.pos = pos
		if out == nil {
			out = map[string]*runtimeDoc{}
		}
		key := runtimeKey(m.Kind, r.x.Namespace, r.x.Name)
		if _, dup := out[key]; dup {
			return nil, nil, strict.Errorf(file, m.Line, "metadata.name", "%s %s is defined twice in the file", m.Kind, strict.Quote(r.x.Name))
		}
		out[key] = r
		skipped = append(skipped, fmt.Sprintf("%s:%d: %s %s is a runtime, read for the file's TrainJobs that name it", file, m.Line, m.Kind, strict.Quote(r.x.Name)))
	}
	return out, skipped, nil
}

// trainJobObject reads a TrainJob as the JobSet the trainer makes of it:
// its runtime's template (which must be in the file), the trainer's
// replicated job (label trainjob-ancestor-step: trainer) run on
// trainer.numNodes pods (else the runtime's mlPolicy.numNodes, else 1),
// trainer.resourcesPerNode merged into their "node" container's resources,
// as the trainer's TrainingRuntime plugin does
// (pkg/runtime/core/trainingruntime.go).
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
	rt, ok := d.runtimes[runtimeKey(kind, x.Namespace, ref.Name)]
	if !ok {
		return d.errAt("spec.runtimeRef", "%s %s is not in the file: gpuplan reads a TrainJob from the runtime beside it (the trainer's installed runtimes are not embedded); add the runtime's manifest to the file", kind, strict.Quote(ref.Name))
	}
	numNodes, from := int32(0), ""
	if ml := rt.x.Spec.MLPolicy; ml != nil && ml.NumNodes != nil {
		numNodes, from = *ml.NumNodes, "mlPolicy.numNodes"
	}
	tr := x.Spec.Trainer
	if tr != nil && tr.NumNodes != nil {
		if *tr.NumNodes < 1 {
			return d.errAt("spec.trainer.numNodes", "is %d; must be at least 1", *tr.NumNodes)
		}
		numNodes, from = *tr.NumNodes, ""
	}
	// The runtime's template with the TrainJob's settings, read as a
	// JobSet of the TrainJob's name and metadata; its fields are the
	// runtime's (rename), the metadata the TrainJob's.
	js := &jobSet{ObjectMeta: x.ObjectMeta, Spec: rt.x.Spec.Template.Spec}
	js.Spec.ReplicatedJobs = append([]replicatedJob(nil), js.Spec.ReplicatedJobs...)
	trainers := 0
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		if rj.Template.Labels[labelAncestor] != "trainer" {
			continue
		}
		trainers++
		if numNodes > 0 {
			n := numNodes
			rj.Template.Spec.Parallelism, rj.Template.Spec.Completions = &n, &n
		}
		if tr == nil || tr.ResourcesPerNode == nil {
			continue
		}
		ps := &rj.Template.Spec.Template.Spec
		ps.Containers = append([]corev1.Container(nil), ps.Containers...)
		for k := range ps.Containers {
			if ps.Containers[k].Name == trainerNode {
				ps.Containers[k].Resources = mergeResources(ps.Containers[k].Resources, *tr.ResourcesPerNode)
			}
		}
	}
	if trainers == 0 && tr != nil && (tr.NumNodes != nil || tr.ResourcesPerNode != nil) {
		return d.errAt("spec.trainer", "%s %s has no replicated job labelled %s: trainer, so numNodes and resourcesPerNode have nowhere to go", kind, strict.Quote(ref.Name), labelAncestor)
	}
	if x.Spec.RuntimePatches != nil {
		d.note("spec.runtimePatches", "not modelled: the runtime's pod templates are read unpatched (node selectors and tolerations a patch adds are not applied)")
	}
	if x.Spec.Initializer != nil {
		d.note("spec.initializer", "the dataset and model initializers are not modelled apart from the runtime's replicated jobs")
	}
	if x.Spec.ActiveDeadlineSeconds != 0 {
		if err := o.activeDeadline(d, "spec.activeDeadlineSeconds", x.Spec.ActiveDeadlineSeconds); err != nil {
			return err
		}
	}
	own := d.pos
	rd := &doc{file: d.file, line: rt.line, kind: d.kind, pos: strict.Positions{}, notes: d.notes, objField: d.objField,
		dra: d.dra, pools: d.pools, namespace: d.namespace}
	for k, v := range own {
		if k == "metadata" || strings.HasPrefix(k, "metadata.") {
			rd.pos[k] = v
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
	if from != "" && trainers > 0 {
		d.note("spec.trainer", "the trainer's %d nodes are the runtime's %s", numNodes, from)
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
