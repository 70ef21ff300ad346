package workloads

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The custom resources below are typed structs of each project's published
// API (field names and types as its Go API declares them). Fields gpuplan
// does not model are kept as free-form values so that a manifest using them
// still reads; each is named in the object's notes when given.

// kubeflowJob is a Kubeflow training-operator job (kubeflow.org/v1
// PyTorchJob, TFJob, JAXJob, MPIJob, PaddleJob, XGBoostJob; the MPI
// operator's kubeflow.org/v2beta1 MPIJob).
type kubeflowJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              kubeflowJobSpec `json:"spec"`
	Status            any             `json:"status,omitempty"`
}

type kubeflowJobSpec struct {
	RunPolicy kubeflowRunPolicy `json:"runPolicy,omitempty"`
	// PyTorchJob.
	PyTorchReplicaSpecs map[string]*kubeflowReplicaSpec `json:"pytorchReplicaSpecs,omitempty"`
	ElasticPolicy       any                             `json:"elasticPolicy,omitempty"`
	NprocPerNode        *string                         `json:"nprocPerNode,omitempty"`
	// TFJob.
	TFReplicaSpecs      map[string]*kubeflowReplicaSpec `json:"tfReplicaSpecs,omitempty"`
	SuccessPolicy       *string                         `json:"successPolicy,omitempty"`
	EnableDynamicWorker bool                            `json:"enableDynamicWorker,omitempty"`
	// JAXJob (kubeflow.org/v1).
	JAXReplicaSpecs map[string]*kubeflowReplicaSpec `json:"jaxReplicaSpecs,omitempty"`
	// MPIJob: the training operator's (kubeflow.org/v1: mainContainer,
	// cleanPodPolicy) and the MPI operator's (kubeflow.org/v2beta1:
	// sshAuthMountPath, launcherCreationPolicy, mpiImplementation).
	MPIReplicaSpecs        map[string]*kubeflowReplicaSpec `json:"mpiReplicaSpecs,omitempty"`
	SlotsPerWorker         *int32                          `json:"slotsPerWorker,omitempty"`
	MainContainer          string                          `json:"mainContainer,omitempty"`
	CleanPodPolicy         *string                         `json:"cleanPodPolicy,omitempty"`
	SSHAuthMountPath       string                          `json:"sshAuthMountPath,omitempty"`
	LauncherCreationPolicy string                          `json:"launcherCreationPolicy,omitempty"`
	MPIImplementation      string                          `json:"mpiImplementation,omitempty"`
	RunLauncherAsWorker    *bool                           `json:"runLauncherAsWorker,omitempty"`
	// PaddleJob (kubeflow.org/v1; its elasticPolicy is ElasticPolicy's).
	PaddleReplicaSpecs map[string]*kubeflowReplicaSpec `json:"paddleReplicaSpecs,omitempty"`
	// XGBoostJob (kubeflow.org/v1).
	XGBReplicaSpecs map[string]*kubeflowReplicaSpec `json:"xgbReplicaSpecs,omitempty"`
}

type kubeflowReplicaSpec struct {
	Replicas      *int32                 `json:"replicas,omitempty"`
	Template      corev1.PodTemplateSpec `json:"template,omitempty"`
	RestartPolicy string                 `json:"restartPolicy,omitempty"`
}

type kubeflowRunPolicy struct {
	CleanPodPolicy          *string                   `json:"cleanPodPolicy,omitempty"`
	TTLSecondsAfterFinished *int32                    `json:"ttlSecondsAfterFinished,omitempty"`
	ActiveDeadlineSeconds   *int64                    `json:"activeDeadlineSeconds,omitempty"`
	BackoffLimit            *int32                    `json:"backoffLimit,omitempty"`
	SchedulingPolicy        *kubeflowSchedulingPolicy `json:"schedulingPolicy,omitempty"`
	Suspend                 *bool                     `json:"suspend,omitempty"`
	ManagedBy               *string                   `json:"managedBy,omitempty"`
}

type kubeflowSchedulingPolicy struct {
	MinAvailable           *int32              `json:"minAvailable,omitempty"`
	Queue                  string              `json:"queue,omitempty"`
	MinResources           corev1.ResourceList `json:"minResources,omitempty"`
	PriorityClass          string              `json:"priorityClass,omitempty"`
	ScheduleTimeoutSeconds *int32              `json:"scheduleTimeoutSeconds,omitempty"`
}

// volcanoJob is a Volcano Job (batch.volcano.sh/v1alpha1).
type volcanoJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              volcanoJobSpec `json:"spec,omitempty"`
	Status            any            `json:"status,omitempty"`
}

type volcanoJobSpec struct {
	SchedulerName           string                   `json:"schedulerName,omitempty"`
	MinAvailable            int32                    `json:"minAvailable,omitempty"`
	Volumes                 any                      `json:"volumes,omitempty"`
	Tasks                   []volcanoTaskSpec        `json:"tasks,omitempty"`
	Policies                []volcanoLifecyclePolicy `json:"policies,omitempty"`
	Plugins                 map[string][]string      `json:"plugins,omitempty"`
	RunningEstimate         *metav1.Duration         `json:"runningEstimate,omitempty"`
	Queue                   string                   `json:"queue,omitempty"`
	MaxRetry                int32                    `json:"maxRetry,omitempty"`
	TTLSecondsAfterFinished *int32                   `json:"ttlSecondsAfterFinished,omitempty"`
	PriorityClassName       string                   `json:"priorityClassName,omitempty"`
	MinSuccess              *int32                   `json:"minSuccess,omitempty"`
	NetworkTopology         *volcanoNetworkTopology  `json:"networkTopology,omitempty"`
}

// volcanoNetworkTopology is a Volcano Job's spec.networkTopology
// (batch.volcano.sh/v1alpha1 NetworkTopologySpec).
type volcanoNetworkTopology struct {
	Mode               string `json:"mode,omitempty"`
	HighestTierAllowed *int   `json:"highestTierAllowed,omitempty"`
	HighestTierName    string `json:"highestTierName,omitempty"`
}

type volcanoTaskSpec struct {
	Name            string                   `json:"name,omitempty"`
	Replicas        int32                    `json:"replicas,omitempty"`
	MinAvailable    *int32                   `json:"minAvailable,omitempty"`
	Template        corev1.PodTemplateSpec   `json:"template,omitempty"`
	Policies        []volcanoLifecyclePolicy `json:"policies,omitempty"`
	TopologyPolicy  string                   `json:"topologyPolicy,omitempty"`
	MaxRetry        int32                    `json:"maxRetry,omitempty"`
	DependsOn       any                      `json:"dependsOn,omitempty"`
	PartitionPolicy any                      `json:"partitionPolicy,omitempty"`
}

type volcanoLifecyclePolicy struct {
	Action   string           `json:"action,omitempty"`
	Event    string           `json:"event,omitempty"`
	Events   []string         `json:"events,omitempty"`
	ExitCode *int32           `json:"exitCode,omitempty"`
	Timeout  *metav1.Duration `json:"timeout,omitempty"`
}

// jobSet is a JobSet (jobset.x-k8s.io/v1alpha2).
type jobSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              jobSetSpec `json:"spec,omitempty"`
	Status            any        `json:"status,omitempty"`
}

type jobSetSpec struct {
	ReplicatedJobs          []replicatedJob `json:"replicatedJobs,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Network                 any             `json:"network,omitempty"`
	SuccessPolicy           any             `json:"successPolicy,omitempty"`
	FailurePolicy           *jobSetFailure  `json:"failurePolicy,omitempty"`
	StartupPolicy           any             `json:"startupPolicy,omitempty"`
	Suspend                 *bool           `json:"suspend,omitempty"`
	Coordinator             any             `json:"coordinator,omitempty"`
	ManagedBy               *string         `json:"managedBy,omitempty"`
	TTLSecondsAfterFinished *int32          `json:"ttlSecondsAfterFinished,omitempty"`
	VolumeClaimPolicies     any             `json:"volumeClaimPolicies,omitempty"`
}

type replicatedJob struct {
	Name      string                  `json:"name"`
	GroupName string                  `json:"groupName,omitempty"`
	Template  batchv1.JobTemplateSpec `json:"template"`
	Replicas  *int32                  `json:"replicas,omitempty"`
	DependsOn any                     `json:"dependsOn,omitempty"`
}

type jobSetFailure struct {
	MaxRestarts     *int32 `json:"maxRestarts,omitempty"`
	RestartStrategy string `json:"restartStrategy,omitempty"`
	Rules           any    `json:"rules,omitempty"`
}

// rayCluster is a KubeRay RayCluster (ray.io/v1).
type rayCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              rayClusterSpec `json:"spec,omitempty"`
	Status            any            `json:"status,omitempty"`
}

type rayClusterSpec struct {
	UpgradeStrategy          any               `json:"upgradeStrategy,omitempty"`
	AuthOptions              any               `json:"authOptions,omitempty"`
	Suspend                  *bool             `json:"suspend,omitempty"`
	ManagedBy                *string           `json:"managedBy,omitempty"`
	AutoscalerOptions        any               `json:"autoscalerOptions,omitempty"`
	HeadServiceAnnotations   map[string]string `json:"headServiceAnnotations,omitempty"`
	EnableInTreeAutoscaling  *bool             `json:"enableInTreeAutoscaling,omitempty"`
	GcsFaultToleranceOptions any               `json:"gcsFaultToleranceOptions,omitempty"`
	HistoryServerOptions     any               `json:"historyServerOptions,omitempty"`
	NetworkPolicy            any               `json:"networkPolicy,omitempty"`
	TLSOptions               any               `json:"tlsOptions,omitempty"`
	HeadGroupSpec            rayHeadGroup      `json:"headGroupSpec"`
	RayVersion               string            `json:"rayVersion,omitempty"`
	WorkerGroupSpecs         []rayWorkerGroup  `json:"workerGroupSpecs,omitempty"`
}

type rayHeadGroup struct {
	Template       corev1.PodTemplateSpec `json:"template"`
	HeadService    any                    `json:"headService,omitempty"`
	EnableIngress  *bool                  `json:"enableIngress,omitempty"`
	IngressOptions any                    `json:"ingressOptions,omitempty"`
	Resources      map[string]string      `json:"resources,omitempty"`
	Labels         map[string]string      `json:"labels,omitempty"`
	RayStartParams map[string]string      `json:"rayStartParams"`
	ServiceType    string                 `json:"serviceType,omitempty"`
}

type rayWorkerGroup struct {
	Suspend            *bool                  `json:"suspend,omitempty"`
	GroupName          string                 `json:"groupName"`
	Replicas           *int32                 `json:"replicas,omitempty"`
	MinReplicas        *int32                 `json:"minReplicas"`
	MaxReplicas        *int32                 `json:"maxReplicas"`
	IdleTimeoutSeconds *int32                 `json:"idleTimeoutSeconds,omitempty"`
	Priority           *int32                 `json:"priority,omitempty"`
	Resources          map[string]string      `json:"resources,omitempty"`
	Labels             map[string]string      `json:"labels,omitempty"`
	RayStartParams     map[string]string      `json:"rayStartParams"`
	Template           corev1.PodTemplateSpec `json:"template"`
	ScaleStrategy      any                    `json:"scaleStrategy,omitempty"`
	NumOfHosts         int32                  `json:"numOfHosts,omitempty"`
}

// rayJob is a KubeRay RayJob (ray.io/v1).
type rayJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              rayJobSpec `json:"spec,omitempty"`
	Status            any        `json:"status,omitempty"`
}

type rayJobSpec struct {
	ActiveDeadlineSeconds     *int32                  `json:"activeDeadlineSeconds,omitempty"`
	BackoffLimit              *int32                  `json:"backoffLimit,omitempty"`
	RayClusterSpec            *rayClusterSpec         `json:"rayClusterSpec,omitempty"`
	SubmitterPodTemplate      *corev1.PodTemplateSpec `json:"submitterPodTemplate,omitempty"`
	Metadata                  map[string]string       `json:"metadata,omitempty"`
	ClusterSelector           map[string]string       `json:"clusterSelector,omitempty"`
	SubmitterConfig           any                     `json:"submitterConfig,omitempty"`
	ManagedBy                 *string                 `json:"managedBy,omitempty"`
	DeletionStrategy          any                     `json:"deletionStrategy,omitempty"`
	Entrypoint                string                  `json:"entrypoint,omitempty"`
	RuntimeEnvYAML            string                  `json:"runtimeEnvYAML,omitempty"`
	JobID                     string                  `json:"jobId,omitempty"`
	SubmissionMode            string                  `json:"submissionMode,omitempty"`
	EntrypointResources       string                  `json:"entrypointResources,omitempty"`
	EntrypointNumCpus         float32                 `json:"entrypointNumCpus,omitempty"`
	EntrypointNumGpus         float32                 `json:"entrypointNumGpus,omitempty"`
	TTLSecondsAfterFinished   int32                   `json:"ttlSecondsAfterFinished,omitempty"`
	PreRunningDeadlineSeconds *int32                  `json:"preRunningDeadlineSeconds,omitempty"`
	ShutdownAfterJobFinishes  bool                    `json:"shutdownAfterJobFinishes,omitempty"`
	Suspend                   bool                    `json:"suspend,omitempty"`
}
