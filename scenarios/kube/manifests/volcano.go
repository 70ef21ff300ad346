package manifests

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// VolcanoAPIVersion is Volcano's Job API.
const VolcanoAPIVersion = "batch.volcano.sh/v1alpha1"

// VolcanoJob is Volcano's Job. The module proxy does not serve
// volcano.sh/apis, so this is the part of the published schema gpuplan
// writes, decoded strictly.
type VolcanoJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VolcanoJobSpec `json:"spec"`
}

// VolcanoJobSpec is a Volcano Job's spec.
type VolcanoJobSpec struct {
	SchedulerName     string                   `json:"schedulerName,omitempty"`
	MinAvailable      int32                    `json:"minAvailable,omitempty"`
	Queue             string                   `json:"queue,omitempty"`
	MaxRetry          int32                    `json:"maxRetry,omitempty"`
	PriorityClassName string                   `json:"priorityClassName,omitempty"`
	Policies          []VolcanoLifecyclePolicy `json:"policies,omitempty"`
	// Plugins are the job plugins: env (task index variables) and svc
	// (a headless Service and host names for every pod).
	Plugins map[string][]string `json:"plugins,omitempty"`
	// NetworkTopology keeps the job's pods within HyperNodes.
	NetworkTopology *VolcanoNetworkTopology `json:"networkTopology,omitempty"`
	Tasks           []VolcanoTask           `json:"tasks"`
}

// VolcanoNetworkTopology is a Volcano Job's spec.networkTopology: hard
// keeps the pods within one HyperNode of tier at most highestTierAllowed;
// soft prefers the tightest.
type VolcanoNetworkTopology struct {
	Mode               string `json:"mode,omitempty"`
	HighestTierAllowed *int   `json:"highestTierAllowed,omitempty"`
}

// VolcanoLifecyclePolicy is an action taken on pod events.
type VolcanoLifecyclePolicy struct {
	Event  string   `json:"event,omitempty"`
	Events []string `json:"events,omitempty"`
	Action string   `json:"action"`
}

// VolcanoTask is one task of a Volcano Job: replicas of a pod template.
type VolcanoTask struct {
	Name     string                 `json:"name"`
	Replicas int32                  `json:"replicas"`
	Template corev1.PodTemplateSpec `json:"template"`
}

// volcanoSpec is the class's Volcano Job settings, or the workload's.
func (g *gen) volcanoSpec(c scenarios.ClassSpec) *scenarios.VolcanoJobSpec {
	if c.Volcano != nil {
		return c.Volcano
	}
	return g.s.Spec.Workload.Volcano
}

// volcanoJob writes a class's jobs as a Volcano Job of one task.
func volcanoJob(c scenarios.ClassSpec, v *scenarios.VolcanoJobSpec, meta metav1.ObjectMeta, pod corev1.PodTemplateSpec, replicas int32) *VolcanoJob {
	j := &VolcanoJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: VolcanoAPIVersion, Kind: "Job"},
		ObjectMeta: meta,
		Spec: VolcanoJobSpec{
			SchedulerName: "volcano",
			MinAvailable:  replicas,
			Queue:         queueOf(c),
			MaxRetry:      cluster.DefaultMaxRetry,
			Plugins:       map[string][]string{"env": {}, "svc": {}},
			Tasks:         []VolcanoTask{{Name: "worker", Replicas: replicas, Template: pod}},
		},
	}
	if v.MinAvailable != nil {
		j.Spec.MinAvailable = min(*v.MinAvailable, replicas)
	}
	if v.MaxRetry != nil {
		j.Spec.MaxRetry = *v.MaxRetry
	}
	for _, p := range v.Policies {
		j.Spec.Policies = append(j.Spec.Policies, VolcanoLifecyclePolicy{Event: p.Event, Events: p.Events, Action: p.Action})
	}
	j.Spec.PriorityClassName = pod.Spec.PriorityClassName
	return j
}

// allVolcano says whether every class runs as a Volcano Job: the queues
// are then Volcano Queues, not Kueue's.
func (g *gen) allVolcano() bool {
	cs := g.classes()
	for _, c := range cs {
		if g.volcanoSpec(c) == nil {
			return false
		}
	}
	return len(cs) > 0
}

// volcanoQueues writes a Volcano Queue per queue, of equal weight and
// reclaimable.
func (g *gen) volcanoQueues() (File, error) {
	var objs []any
	for _, q := range g.queues() {
		objs = append(objs, &scenarios.VolcanoQueue{
			TypeMeta:   metav1.TypeMeta{APIVersion: VolcanoQueueAPIVersion, Kind: "Queue"},
			ObjectMeta: managedMeta(q),
			Spec:       scenarios.VolcanoQueueSpec{Weight: 1, Reclaimable: ptr(true)},
		})
	}
	return File{Path: PathVolcano, Objects: objs, Comment: g.header(
		"Volcano Queues, one per workload queue, of equal weight: each deserves an equal share of the cluster and may use more while the others leave theirs idle.")}, nil
}

// VolcanoQueueAPIVersion is Volcano's Queue API.
const VolcanoQueueAPIVersion = "scheduling.volcano.sh/v1beta1"

// labelVolcanoJobName is the label Volcano's job controller puts on a
// Job's pods with the Job's name (batch.JobNameKey).
const labelVolcanoJobName = "volcano.sh/job-name"
