package workloads

import (
	"fmt"
	"maps"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// kaitoWorkspace is KAITO's Workspace (kaito.sh/v1alpha1 and v1beta1, as
// kaito-project/kaito's api declares it): the node it provisions
// (resource) and the model it serves (inference) or tunes (tuning).
type kaitoWorkspace struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Resource          kaitoResource   `json:"resource"`
	Inference         *kaitoInference `json:"inference,omitempty"`
	Tuning            *kaitoTuning    `json:"tuning,omitempty"`
	Status            any             `json:"status,omitempty"`
}

type kaitoResource struct {
	Count          *int                  `json:"count,omitempty"`
	InstanceType   string                `json:"instanceType,omitempty"`
	LabelSelector  *metav1.LabelSelector `json:"labelSelector"`
	PreferredNodes []string              `json:"preferredNodes,omitempty"`
}

type kaitoPreset struct {
	Name          string `json:"name"`
	AccessMode    string `json:"accessMode,omitempty"`
	PresetOptions any    `json:"presetOptions,omitempty"`
}

type kaitoInference struct {
	Preset   *kaitoPreset            `json:"preset,omitempty"`
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
	Adapters any                     `json:"adapters,omitempty"`
	Config   string                  `json:"config,omitempty"`
}

type kaitoTuning struct {
	Preset *kaitoPreset `json:"preset,omitempty"`
	Method string       `json:"method,omitempty"`
	Config string       `json:"config,omitempty"`
	Input  any          `json:"input,omitempty"`
	Output any          `json:"output,omitempty"`
}

// Workspace is what a KAITO Workspace asks of the cluster: Count nodes of
// InstanceType, labelled Labels, provisioned for it alone. Its tuning
// job's one pod takes every GPU of one node: the scenario fills Pod.GPUs
// from the instance type.
type Workspace struct {
	InstanceType string
	Count        int
	Labels       map[string]string
}

var azureVMSize = regexp.MustCompile(`^Standard_[A-Za-z0-9_]+$`)

// kaitoObject reads a Workspace: its tuning job (one pod on a node of its
// own) and the nodes KAITO provisions for it.
func kaitoObject(d *doc, o *Object, x *kaitoWorkspace) error {
	o.readMeta(x.ObjectMeta)
	r := x.Resource
	// The CRD's rules (kaito-project/kaito api/v1beta1 workspace_validation.go).
	if (x.Inference == nil) == (x.Tuning == nil) {
		return d.errAt("", "a Workspace gives one of inference or tuning, as KAITO's webhook requires")
	}
	if r.LabelSelector == nil || len(r.LabelSelector.MatchLabels) == 0 {
		return d.errAt("resource.labelSelector", "is required: KAITO labels the nodes it provisions with its matchLabels")
	}
	if len(r.LabelSelector.MatchExpressions) > 0 {
		d.note("resource.labelSelector.matchExpressions", "not modelled: the nodes carry the matchLabels")
	}
	if r.InstanceType == "" {
		return d.errAt("resource", "gpuplan needs resource.instanceType: the VM size KAITO provisions (preferredNodes, nodes the cluster already has, are not modelled)")
	}
	if !azureVMSize.MatchString(r.InstanceType) {
		d.note("resource.instanceType", "%s is not an Azure VM size (Standard_...): KAITO's provisioner is Azure's", strict.Quote(r.InstanceType))
	}
	n := 1
	if r.Count != nil {
		n = *r.Count
	}
	if n < 1 || n > strict.MaxNodes {
		return d.errAt("resource.count", "is %d; want 1 to %d nodes", n, strict.MaxNodes)
	}
	if len(r.PreferredNodes) > 0 {
		d.note("resource.preferredNodes", "not modelled: KAITO's nodes are provisioned for the Workspace")
	}
	if x.Inference != nil {
		return d.errAt("inference", "an inference Workspace is a service that runs until it is deleted: give the model's Deployment in workload.services (a tuning Workspace is a job gpuplan runs)")
	}
	t := x.Tuning
	if t.Preset == nil || t.Preset.Name == "" {
		return d.errAt("tuning.preset.name", "is required: the model KAITO tunes")
	}
	switch t.Method {
	case "lora", "qlora":
	default:
		return d.errAt("tuning.method", "is %s; KAITO tunes by lora or qlora", strict.Quote(t.Method))
	}
	if t.Input == nil {
		return d.errAt("tuning", "tuning.input is required: the data KAITO tunes on")
	}
	labels := maps.Clone(r.LabelSelector.MatchLabels)
	o.Workspace = &Workspace{InstanceType: r.InstanceType, Count: n, Labels: labels}
	sel := maps.Clone(labels)
	sel[corev1.LabelInstanceTypeStable] = r.InstanceType
	// KAITO's tuning Job: one pod asking for every GPU of its node, on
	// the nodes it provisioned.
	o.Groups = append(o.Groups, Group{Name: "tuning", Pods: 1, Waves: 1,
		Pod: cluster.PodSpec{}, Constraints: &cluster.Constraints{NodeSelector: sel}})
	d.note("tuning", "the %s tuning of %s runs as one pod on all GPUs of a %s node KAITO provisions (labelled %v); its duration is the scenario's", t.Method, strict.Quote(t.Preset.Name), r.InstanceType, labels)
	return o.readDuration(d, x.ObjectMeta)
}

// String is the nodes a Workspace asks for, for notes.
func (w *Workspace) String() string {
	return fmt.Sprintf("%d x %s %v", w.Count, w.InstanceType, w.Labels)
}
