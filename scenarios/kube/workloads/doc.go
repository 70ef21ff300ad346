// Package workloads reads Kubernetes workload manifests as gpuplan jobs.
//
// A manifest file (one or more YAML documents) may hold batch/v1 Jobs and
// CronJobs, Kubeflow PyTorchJobs, TFJobs, JAXJobs, MPIJobs, PaddleJobs and
// XGBoostJobs (kubeflow.org/v1; MPIJob also v2beta1), the Kubeflow
// trainer's TrainJobs with their runtimes (trainer.kubeflow.org/v1alpha1),
// CodeFlare AppWrappers (workload.codeflare.dev/v1beta2), Volcano Jobs
// (batch.volcano.sh/v1alpha1), JobSets (jobset.x-k8s.io/v1alpha2) and
// KubeRay RayJobs and RayClusters (ray.io/v1). Each document is decoded
// strictly into its project's Go type (k8s.io/api for Job and CronJob) or
// a typed struct of the project's published schema (the others, whose
// modules carry their controllers): an unknown or mistyped field is an
// error naming the file, line, column and field. Load also takes a
// folder, its files read as one input. A TrainJob's runtime is its file's
// or folder's, else one of the trainer's built-in ClusterTrainingRuntimes
// (embedded in runtimes/, kubeflow/trainer v2.3.0), with the TrainJob's
// runtimePatches merged in as the trainer merges them.
//
// Parse turns each object into an Object: its pod groups (replica types,
// tasks, replicated jobs, head and worker groups) with their requests
// (CPU, memory, nvidia.com/gpu, nvidia.com/mig-<profile>, or the GPUs of
// its DRA claims: the file's ResourceClaims and ResourceClaimTemplates,
// resolved by scenarios/kube/dra), node selector
// and tolerations, its Kueue queue and priority class, its restart policy
// (backoffLimit, podFailurePolicy, activeDeadlineSeconds, Volcano
// policies), its duration when the manifest says it (the
// gpuplan.dev/duration annotation, or a `sleep N` command) and, for a
// CronJob, its schedule. A JobSet under exclusive placement
// (alpha.jobset.sigs.k8s.io/exclusive-topology) becomes one group per
// child Job, with the pod affinity and anti-affinity JobSet's pod webhook
// injects; Source keys each submission's child Jobs apart. What an object
// says that gpuplan does not model is listed in its Notes.
//
// Source submits the objects over virtual time: each time a file
// arrives (by a rate, a cron schedule or a count) every object in it is
// submitted once, and every CronJob on its own schedule in its time zone
// with its concurrencyPolicy. It is a sim.JobSource.
package workloads
