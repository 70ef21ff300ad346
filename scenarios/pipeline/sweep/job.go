package sweep

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// JobOptions shape the Kubernetes Job that runs a sweep's shards.
type JobOptions struct {
	// SpecPath is the sweep spec's path as the pods see it, relative to
	// the work volume's root (the same relative paths as here: copy the
	// folder holding the spec and its scenario onto the volume).
	SpecPath string
	// Shards is how many pods (completions); Parallelism how many run at
	// once (0: all).
	Shards, Parallelism int
	// Image is the container image holding gpuplan at /gpuplan.
	Image string
	// CPUs and Memory are each pod's requests and limits; CPUs is also
	// the pod's number of workers.
	CPUs   int
	Memory string
	// Claim is the PersistentVolumeClaim mounted at /work: the inputs,
	// and the results under /work/results/shard-INDEX.
	Claim string
	// Namespace, when set, is the Job's namespace.
	Namespace string
}

// Where the pods find their work.
const (
	jobWorkDir    = "/work"
	jobResultsDir = "results"
	// BackoffLimitPerIndex is how often one shard's pod is retried before
	// that index is failed; the other shards go on.
	BackoffLimitPerIndex = 2
)

// ShardDir is where shard i writes its points, relative to the work folder.
func ShardDir(i string) string { return jobResultsDir + "/shard-" + i }

// Job is a batch/v1 Indexed Job whose pod INDEX runs
// gpuplan sweep SPEC --shard INDEX/SHARDS --out results/shard-INDEX.
// A pod that exits 2 (bad input) or 4 (a bug) fails the whole Job: running
// it again gives the same answer. A pod evicted or preempted is not
// counted against its index's retries; any other failure (an I/O error, a
// lost node) retries that index alone, up to BackoffLimitPerIndex times.
func (sw *Sweep) Job(o JobOptions) (*batchv1.Job, error) {
	if o.Shards < 1 || o.Shards > MaxPoints {
		return nil, fmt.Errorf("--shards %d: want 1..%d", o.Shards, MaxPoints)
	}
	if o.Shards > sw.NumPoints() {
		return nil, fmt.Errorf("--shards %d: the sweep has only %d points", o.Shards, sw.NumPoints())
	}
	if o.Parallelism <= 0 || o.Parallelism > o.Shards {
		o.Parallelism = o.Shards
	}
	if o.CPUs < 1 {
		return nil, fmt.Errorf("--cpus %d: want at least 1", o.CPUs)
	}
	mem, err := resource.ParseQuantity(o.Memory)
	if err != nil || mem.Sign() <= 0 {
		return nil, fmt.Errorf("--memory %q is not a positive quantity such as 4Gi", o.Memory)
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(o.CPUs), resource.DecimalSI),
		corev1.ResourceMemory: mem,
	}
	i32 := func(v int) *int32 { x := int32(v); return &x }
	indexed := batchv1.IndexedCompletion
	name := dnsName("gpuplan-sweep-" + sw.Doc.Metadata.Name)
	idx := "$(JOB_COMPLETION_INDEX)"
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: map[string]string{
			"app.kubernetes.io/name": "gpuplan-sweep", "gpuplan.dev/sweep-digest": sw.Digest()}},
		Spec: batchv1.JobSpec{
			CompletionMode:       &indexed,
			Completions:          i32(o.Shards),
			Parallelism:          i32(o.Parallelism),
			BackoffLimitPerIndex: i32(BackoffLimitPerIndex),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr("sweep"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{2, 4}}},
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "gpuplan-sweep"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					// The image's user (distroless nonroot); the
					// volume's files group-writable by it.
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)),
						RunAsGroup: ptr(int64(65532)), FSGroup: ptr(int64(65532))},
					Containers: []corev1.Container{{
						Name:       "sweep",
						Image:      o.Image,
						WorkingDir: jobWorkDir,
						Command:    []string{"/gpuplan"},
						Args: []string{"sweep", o.SpecPath, "--shard", idx + "/" + strconv.Itoa(o.Shards),
							"--out", ShardDir(idx), "--workers", strconv.Itoa(o.CPUs), "--progress", "never"},
						// Set by the Job controller too; named here so
						// $(JOB_COMPLETION_INDEX) in args always expands.
						Env: []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
						Resources:    corev1.ResourceRequirements{Requests: res, Limits: res},
						VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: jobWorkDir}},
					}},
					Volumes: []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.Claim}}}},
				},
			},
		},
	}
	return job, nil
}

// JobYAML is the Job as YAML.
func JobYAML(j *batchv1.Job) ([]byte, error) { return yaml.Marshal(j) }

func ptr[T any](v T) *T { return &v }

// dnsName makes s a DNS-1123 label of at most 52 characters (room for the
// controller's pod suffixes).
func dnsName(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 52 {
		out = strings.TrimRight(out[:52], "-")
	}
	return out
}
