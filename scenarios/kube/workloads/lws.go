package workloads

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// leaderWorkerSet is a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, as
// sigs.k8s.io/lws api/leaderworkerset/v1 declares it): replicas groups of
// a leader and size-1 workers, each group multi-host inference.
type leaderWorkerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              lwsSpec `json:"spec,omitempty"`
	Status            any     `json:"status,omitempty"`
}

type lwsSpec struct {
	Replicas             *int32      `json:"replicas,omitempty"`
	LeaderWorkerTemplate lwsTemplate `json:"leaderWorkerTemplate"`
	RolloutStrategy      any         `json:"rolloutStrategy,omitempty"`
	StartupPolicy        string      `json:"startupPolicy,omitempty"`
	NetworkConfig        any         `json:"networkConfig,omitempty"`
}

type lwsTemplate struct {
	LeaderTemplate                       *corev1.PodTemplateSpec `json:"leaderTemplate,omitempty"`
	WorkerTemplate                       corev1.PodTemplateSpec  `json:"workerTemplate"`
	Size                                 *int32                  `json:"size,omitempty"`
	RestartPolicy                        string                  `json:"restartPolicy,omitempty"`
	SubGroupPolicy                       any                     `json:"subGroupPolicy,omitempty"`
	VolumeClaimTemplates                 any                     `json:"volumeClaimTemplates,omitempty"`
	PersistentVolumeClaimRetentionPolicy any                     `json:"persistentVolumeClaimRetentionPolicy,omitempty"`
}

// lwsObject reads a LeaderWorkerSet: each of its replicas is a group of
// one leader and size-1 workers, one gang (as Kueue admits each group as
// one Workload), run for the object's duration; the replicas are
// submitted as that many objects (Parse copies them).
func lwsObject(d *doc, o *Object, x *leaderWorkerSet) error {
	o.readMeta(x.ObjectMeta)
	t := &x.Spec.LeaderWorkerTemplate
	size := int32(1)
	if t.Size != nil {
		size = *t.Size
	}
	// The CRD's minimum and the webhook's bounds.
	if size < 1 || int64(size) > strict.MaxReplicas {
		return d.errAt("spec.leaderWorkerTemplate.size", "is %d; a group is 1 to %d pods (the CRD's minimum is 1)", size, strict.MaxReplicas)
	}
	reps := int32(1)
	if x.Spec.Replicas != nil {
		reps = *x.Spec.Replicas
	}
	if reps < 0 || int64(reps)*int64(size) > strict.MaxReplicas {
		return d.errAt("spec.replicas", "%d groups of %d pods is not between 0 and %d pods", reps, size, strict.MaxReplicas)
	}
	if reps == 0 {
		return d.errAt("spec.replicas", "is 0: the LeaderWorkerSet runs no pods")
	}
	switch x.Spec.StartupPolicy {
	case "", "LeaderCreated":
	case "LeaderReady":
		d.note("spec.startupPolicy", "LeaderReady: the workers start with their leader (one gang), not after it is ready")
	default:
		return d.errAt("spec.startupPolicy", "is %s; want LeaderCreated or LeaderReady", strict.Quote(x.Spec.StartupPolicy))
	}
	switch t.RestartPolicy {
	case "", "RecreateGroupOnPodRestart", "None", "Default":
	default:
		return d.errAt("spec.leaderWorkerTemplate.restartPolicy", "is %s; want RecreateGroupOnPodRestart or None", strict.Quote(t.RestartPolicy))
	}
	leader := &t.WorkerTemplate
	leaderAt := "spec.leaderWorkerTemplate.workerTemplate"
	if t.LeaderTemplate != nil {
		leader, leaderAt = t.LeaderTemplate, "spec.leaderWorkerTemplate.leaderTemplate"
	}
	g := Group{Name: "leader", Pods: 1, Waves: 1}
	var err error
	if g.Pod, g.Constraints, g.DRA, err = podOf(d, o, leader, leaderAt); err != nil {
		return err
	}
	o.Groups = append(o.Groups, g)
	if size > 1 {
		w := Group{Name: "worker", Pods: size - 1, Waves: 1}
		if w.Pod, w.Constraints, w.DRA, err = podOf(d, o, &t.WorkerTemplate, "spec.leaderWorkerTemplate.workerTemplate"); err != nil {
			return err
		}
		o.Groups = append(o.Groups, w)
	}
	if t.SubGroupPolicy != nil {
		d.note("spec.leaderWorkerTemplate.subGroupPolicy", "sub-groups (exclusive topology per sub-group) are not modelled: the group is one gang")
	}
	d.note("spec", "a LeaderWorkerSet serves until it is deleted: each of its %d groups (a leader and %d workers) is run as one gang for the object's duration", reps, size-1)
	o.copies = reps
	return o.readDuration(d, x.ObjectMeta)
}

// rayService is a KubeRay RayService (ray.io/v1): a RayCluster serving
// Ray Serve applications.
type rayService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              rayServiceSpec `json:"spec,omitempty"`
	Status            any            `json:"status,omitempty"`
}

type rayServiceSpec struct {
	RayClusterSpec                     rayClusterSpec `json:"rayClusterConfig"`
	ServeConfigV2                      string         `json:"serveConfigV2,omitempty"`
	UpgradeStrategy                    any            `json:"upgradeStrategy,omitempty"`
	ServeService                       any            `json:"serveService,omitempty"`
	ServiceUnhealthySecondThreshold    *int32         `json:"serviceUnhealthySecondThreshold,omitempty"`
	DeploymentUnhealthySecondThreshold *int32         `json:"deploymentUnhealthySecondThreshold,omitempty"`
	ExcludeHeadPodFromServeSvc         bool           `json:"excludeHeadPodFromServeSvc,omitempty"`
	ManagedBy                          *string        `json:"managedBy,omitempty"`
}

// rayServiceObject reads a RayService: its RayCluster's head and worker
// groups, run for the object's duration.
func rayServiceObject(d *doc, o *Object, x *rayService) error {
	o.readMeta(x.ObjectMeta)
	if err := rayClusterGroups(d, o, &x.Spec.RayClusterSpec, "spec.rayClusterConfig"); err != nil {
		return err
	}
	d.note("spec", "a RayService serves until it is deleted: its RayCluster is run for the object's duration; its Serve applications' load is not modelled (give the model as a workload.services entry for that)")
	return o.readDuration(d, x.ObjectMeta)
}

// copyName names copy i of an object of several groups (LeaderWorkerSet
// replicas), as the LWS controller names its groups' leaders.
func copyName(name string, i int32) string { return fmt.Sprintf("%s-%d", name, i) }
