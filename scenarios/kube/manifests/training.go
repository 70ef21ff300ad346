package manifests

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/scenarios"
)

// KubeflowAPIVersion is the training operator's API (PyTorchJob, TFJob).
const KubeflowAPIVersion = "kubeflow.org/v1"

// PyTorchJob is the Kubeflow training operator's PyTorchJob
// (kubeflow.org/v1). The operator's Go module pulls in its controllers'
// dependencies, so this is the part of the published CRD gpuplan writes;
// the tests check it against the CRD's schema.
type PyTorchJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PyTorchJobSpec `json:"spec"`
}

// PyTorchJobSpec is a PyTorchJob's spec: its replica specs by type
// (Master, Worker) and the processes per node torchrun starts.
type PyTorchJobSpec struct {
	RunPolicy           RunPolicy               `json:"runPolicy"`
	PyTorchReplicaSpecs map[string]*ReplicaSpec `json:"pytorchReplicaSpecs"`
	NprocPerNode        *string                 `json:"nprocPerNode,omitempty"`
}

// TFJob is the training operator's TFJob (kubeflow.org/v1).
type TFJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              TFJobSpec `json:"spec"`
}

// TFJobSpec is a TFJob's spec: replica specs by type (Chief, Worker).
type TFJobSpec struct {
	RunPolicy      RunPolicy               `json:"runPolicy"`
	TFReplicaSpecs map[string]*ReplicaSpec `json:"tfReplicaSpecs"`
}

// RunPolicy is the training operator's run policy.
type RunPolicy struct {
	CleanPodPolicy        string `json:"cleanPodPolicy,omitempty"`
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	BackoffLimit          *int32 `json:"backoffLimit,omitempty"`
	// Suspend: Kueue creates the job suspended and resumes it when
	// admitted.
	Suspend *bool `json:"suspend,omitempty"`
}

// ReplicaSpec is one replica type's count, pod template and restart
// policy.
type ReplicaSpec struct {
	Replicas      *int32                 `json:"replicas,omitempty"`
	Template      corev1.PodTemplateSpec `json:"template"`
	RestartPolicy string                 `json:"restartPolicy,omitempty"`
}

// kubeflowJob writes a training class as a PyTorchJob or TFJob: one
// master (chief) and the rest workers; the operator sets each pod's
// rendezvous (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and torchrun's
// PET_* variables; TF_CONFIG for TensorFlow).
func (g *gen) kubeflowJob(c scenarios.ClassSpec, om metav1.ObjectMeta, pod corev1.PodTemplateSpec, replicas int32, nproc int64, rec *scenarios.RecoverySpec) (any, string) {
	rp := RunPolicy{CleanPodPolicy: "None", Suspend: ptr(true)}
	if rec != nil && rec.BackoffLimit != nil {
		rp.BackoffLimit = ptr(*rec.BackoffLimit)
	}
	if rec != nil && rec.ActiveDeadline != nil {
		rp.ActiveDeadlineSeconds = ptr(int64(rec.ActiveDeadline.Seconds()))
	}
	spec := func(name string, n int32, cmd []string) *ReplicaSpec {
		p := *pod.DeepCopy()
		p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		p.Spec.Containers[0].Name = name
		p.Spec.Containers[0].Command = cmd
		return &ReplicaSpec{Replicas: ptr(n), Template: p, RestartPolicy: "OnFailure"}
	}
	if g.o.TrainingAPI == TrainingTFJob {
		cmd := []string{"python", g.o.Entrypoint}
		specs := map[string]*ReplicaSpec{"Chief": spec("tensorflow", 1, cmd)}
		if replicas > 1 {
			specs["Worker"] = spec("tensorflow", replicas-1, cmd)
		}
		return &TFJob{
				TypeMeta:   metav1.TypeMeta{APIVersion: KubeflowAPIVersion, Kind: "TFJob"},
				ObjectMeta: om,
				Spec:       TFJobSpec{RunPolicy: rp, TFReplicaSpecs: specs},
			}, fmt.Sprintf("A Kubeflow TFJob of one Chief and %d Workers (%d pods, as the simulation's gang); the training operator gives each pod its TF_CONFIG (cluster and task index), and Kueue admits the job suspended, all pods or none.",
				replicas-1, replicas)
	}
	// The operator sets PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR and
	// PET_MASTER_PORT, which torchrun reads.
	cmd := []string{"torchrun", g.o.Entrypoint}
	specs := map[string]*ReplicaSpec{"Master": spec("pytorch", 1, cmd)}
	if replicas > 1 {
		specs["Worker"] = spec("pytorch", replicas-1, cmd)
	}
	return &PyTorchJob{
			TypeMeta:   metav1.TypeMeta{APIVersion: KubeflowAPIVersion, Kind: "PyTorchJob"},
			ObjectMeta: om,
			Spec:       PyTorchJobSpec{RunPolicy: rp, PyTorchReplicaSpecs: specs, NprocPerNode: ptr(fmt.Sprint(nproc))},
		}, fmt.Sprintf("A Kubeflow PyTorchJob of one Master and %d Workers (%d pods of %d processes, as the simulation's gang); the training operator sets each pod's rendezvous (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and torchrun's PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR), and Kueue admits the job suspended, all pods or none.",
			replicas-1, replicas, nproc)
}

// DefaultStorageClass is the EBS gp3 class gpuplan writes for per-pod
// checkpoint volumes when no --storage-class is given.
const DefaultStorageClass = "gpuplan-checkpoints-gp3"

// checkpointVolume is a class's checkpoint volume: one shared
// ReadWriteMany claim, or a ReadWriteOnce volume per pod (a generic
// ephemeral volume, which EBS provides).
func (g *gen) checkpointVolume(c scenarios.ClassSpec, ns string) (corev1.Volume, string, any) {
	class := g.o.StorageClass
	if g.o.AccessMode == AccessRWX {
		name := c.Name + "-checkpoints"
		pvc := &corev1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": c.Name}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: g.ckpt}},
			},
		}
		words := "the ReadWriteMany claim " + name + ", which every pod of the class shares and which outlives them"
		if class != "" {
			pvc.Spec.StorageClassName = ptr(class)
			words += " (storage class " + class + ")"
		} else {
			words += " (the cluster's default storage class, which must provide ReadWriteMany)"
		}
		return corev1.Volume{Name: "checkpoints", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}, words, pvc
	}
	if class == "" {
		class = DefaultStorageClass
	}
	g.perPodVolumes = append(g.perPodVolumes, c.Name)
	return corev1.Volume{Name: "checkpoints", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": c.Name}},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr(class),
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: g.ckpt}},
				},
			},
		}}},
		"a ReadWriteOnce volume per pod (a generic ephemeral volume of storage class " + class + "), deleted with its pod",
		nil
}

// storage writes the EBS gp3 StorageClass of per-pod checkpoint volumes
// (when no class was named) and says what per-pod volumes mean.
func (g *gen) storage() (File, error) {
	f := File{Path: PathStorage}
	if len(g.perPodVolumes) == 0 {
		return f, nil
	}
	f.Comment = g.header(
		"Checkpoint storage: --access-mode ReadWriteOnce (the default on EKS, whose EBS volumes attach to one node) gives every pod of",
		strings.Join(g.perPodVolumes, ", ")+" its own volume, created with the pod and deleted with it.",
		g.warn("classes %s checkpoint to per-pod ReadWriteOnce volumes, which are deleted with their pod: a job restarted after losing a node (spot reclaim, failure, preemption) resumes from its last checkpoint, as simulated, only if the job copies checkpoints to durable storage (S3); give --access-mode ReadWriteMany --storage-class CLASS (EFS, FSx for Lustre) for one claim that outlives the pods", strings.Join(g.perPodVolumes, ", ")),
	)
	if g.o.StorageClass != "" {
		f.Comment = append(f.Comment, "They use storage class "+g.o.StorageClass+" as --storage-class gives it.")
		return f, nil
	}
	f.Comment = append(f.Comment, "StorageClass "+DefaultStorageClass+": EBS gp3 through the EBS CSI driver (the aws-ebs-csi-driver add-on), created in the pod's zone (WaitForFirstConsumer), deleted with the claim.")
	f.Objects = append(f.Objects, &storagev1.StorageClass{
		TypeMeta:          metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
		ObjectMeta:        metav1.ObjectMeta{Name: DefaultStorageClass},
		Provisioner:       "ebs.csi.aws.com",
		Parameters:        map[string]string{"type": "gp3", "encrypted": "true"},
		ReclaimPolicy:     ptr(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr(storagev1.VolumeBindingWaitForFirstConsumer),
	})
	return f, nil
}
