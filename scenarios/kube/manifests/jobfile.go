package manifests

import (
	"fmt"
	"math"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// jobFile is one workload class's files as they are written (gen.jobs):
// jobs/CLASS.yaml, the class's job as a template (generateName), and
// kubernetes/40-jobs/CLASS.yaml, the named objects its jobs share (a
// gang's headless Service, a shared checkpoint claim), when it has any;
// the class, its recovery settings, the LocalQueue (or Volcano Queue) and
// namespace its jobs go to, and the comment lines and objects gathered so
// far. It records its warnings on the generator.
type jobFile struct {
	*gen
	c   scenarios.ClassSpec
	rec *scenarios.RecoverySpec
	// spot says whether any pool offers spot capacity.
	spot    bool
	lq, ns  string
	comment []string
	objects []any
	// shared are the named objects the class's jobs share.
	shared []any
}

// write is the class's files: the pod template, in the object that runs
// it (a Volcano Job, a Kubeflow training job, or a batch/v1 Job) named by
// generateName, and the objects its jobs share.
func (j *jobFile) write() ([]File, error) {
	c := j.c
	replicas := int32(largest(c.Replicas, 1))
	req, err := j.gpuRequest()
	if err != nil {
		return nil, err
	}
	labels := map[string]string{
		"app.kubernetes.io/name":       c.Name,
		"app.kubernetes.io/managed-by": "gpuplan",
		LabelQueueName:                 j.lq,
	}
	ann := map[string]string{
		generatedBy: j.s.Metadata.Name,
		"gpuplan.dev/sizes": fmt.Sprintf("replicas %s; gpus per pod %s (the template asks for the largest)",
			describe(c.Replicas), describe(c.Pod.GPUs)),
	}
	j.comment = []string{fmt.Sprintf("Workload class %s: %s.", c.Name, ann["gpuplan.dev/sizes"]),
		"Simulation only, with no Kubernetes object: the class's arrival process, durations (or training steps) and checkpoint write and restore times, the scenario's model of the workload."}
	if req.shareWords != "" {
		j.comment = append(j.comment, req.shareWords)
	}
	pod := j.podTemplate(req.res, req.pin)
	if err := j.draGPUs(&pod, req); err != nil {
		return nil, err
	}
	nproc := max(req.gpus, 1)
	if req.shared || c.Pod.MIG != "" {
		nproc = 1
	}
	// Each submission is a new job: generateName, CLASS-xxxxx.
	om := metav1.ObjectMeta{GenerateName: c.Name + "-", Namespace: j.ns, Labels: labels, Annotations: ann}
	if v := j.volcanoSpec(c); v != nil {
		j.volcano(v, om, pod, replicas, nproc)
		return j.file(), nil
	}
	if j.o.TrainingAPI != TrainingJob && (replicas > 1 || c.Training != nil) {
		if c.Topology != nil && replicas > 1 {
			// The Master (Chief) and the Workers are two PodSets, which
			// Kueue would place each in its own domain; the simulation's
			// gang is one: one PodSet group fits them in one domain.
			pod.Annotations[AnnotationPodSetGroup] = c.Name
		}
		obj, words := j.kubeflowJob(c, om, pod, replicas, nproc, j.rec)
		j.comment = append(j.comment, words)
		j.objects = append(j.objects, obj)
		return j.file(), nil
	}
	j.batchJob(om, pod, replicas, nproc)
	return j.file(), nil
}

func (j *jobFile) file() []File {
	name := j.c.Name
	submit := fmt.Sprintf("A template: submit one job with `kubectl create -f %s%s.yaml` (generateName gives each a new name, %s-xxxxx; kubectl apply refuses it).", DirJobTemplates, name, name)
	files := []File{{Path: DirJobTemplates + name + ".yaml", Objects: j.objects, Comment: j.header(append(j.comment, submit)...)}}
	if len(j.shared) > 0 {
		files = append(files, File{Path: DirJobs + name + ".yaml", Objects: j.shared,
			Comment: j.header(fmt.Sprintf("What the jobs of class %s (%s%s.yaml) share, applied once before them.", name, DirJobTemplates, name))})
	}
	return files
}

// gpuRequest is what a class's container asks for: its requests (equal
// to its limits) of CPU, memory and the GPU resource (whole GPUs, a MIG
// profile, or a time-sliced share of one GPU).
type gpuRequest struct {
	res corev1.ResourceList
	// pin are the pools the GPU resource pins the pod to: those with the
	// MIG profile under the single strategy, or those sharing GPUs by
	// time-slicing.
	pin []string
	// shared says the pod asks for a time-sliced share of one GPU.
	shared bool
	// shareWords is the sentence describing a share.
	shareWords string
	// gpus is the count of the GPU resource asked for.
	gpus int64
}

// gpuRequest is the class's container request.
func (j *jobFile) gpuRequest() (gpuRequest, error) {
	c := j.c
	r := gpuRequest{gpus: largest(c.Pod.GPUs, 0),
		res: corev1.ResourceList{corev1.ResourceCPU: c.Pod.CPU, corev1.ResourceMemory: c.Pod.Memory}}
	if frac, ok := fraction(c.Pod.GPUs); ok {
		// A share of one GPU: the device plugin's time-slicing replicas
		// make one request of nvidia.com/gpu that share of a GPU.
		var err error
		r.pin, r.shareWords, r.gpus, err = j.shares(c, frac)
		if err != nil {
			return gpuRequest{}, err
		}
		r.shared = len(r.pin) > 0
	}
	if r.shared {
		r.res[ResourceGPU] = *resource.NewQuantity(r.gpus, resource.DecimalSI)
		return r, nil
	}
	r.pin = nil
	if r.gpus == 0 {
		return r, nil
	}
	name := ResourceGPU
	if c.Pod.MIG != "" {
		mixed := false
		for _, q := range j.pools {
			if slices.Contains(q.sharing.MIGLayout, c.Pod.MIG) || q.sharing.MIGRelayout {
				r.pin = append(r.pin, q.name)
				mixed = mixed || q.sharing.MIGStrategy == cluster.MIGMixed
			}
		}
		if len(r.pin) == 0 {
			return gpuRequest{}, fmt.Errorf("no pool offers MIG profile %s", c.Pod.MIG)
		}
		if mixed {
			name = corev1.ResourceName("nvidia.com/mig-" + c.Pod.MIG)
			r.pin = nil
		}
	}
	r.res[name] = *resource.NewQuantity(r.gpus, resource.DecimalSI)
	return r, nil
}

// classPlacement is a class's node selector, required node affinity (each of
// the class's terms, also pinned to the pools in pin when there are any)
// and tolerations, with the scenario's capacity keys written as the
// cloud's labels.
func classPlacement(c scenarios.ClassSpec, pin []string) (map[string]string, *corev1.Affinity, []corev1.Toleration) {
	sel := map[string]string{}
	for k, v := range c.NodeSelector {
		sel[capacityKey(k)] = v
	}
	if len(sel) == 0 {
		sel = nil
	}
	var terms []corev1.NodeSelectorTerm
	for _, t := range c.Affinity {
		var term corev1.NodeSelectorTerm
		for _, r := range t.MatchExpressions {
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{
				Key: capacityKey(r.Key), Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values,
			})
		}
		terms = append(terms, term)
	}
	if len(pin) > 0 {
		req := corev1.NodeSelectorRequirement{Key: cluster.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: pin}
		if len(terms) == 0 {
			terms = []corev1.NodeSelectorTerm{{}}
		}
		for k := range terms {
			terms[k].MatchExpressions = append(terms[k].MatchExpressions, req)
		}
	}
	var aff *corev1.Affinity
	if len(terms) > 0 {
		aff = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	var tols []corev1.Toleration
	for _, t := range c.Tolerations {
		tols = append(tols, corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect),
		})
	}
	return sel, aff, tols
}

// podTemplate is the class's pod: one container of the job image with the
// requests res, placed by classPlacement, a memory-backed /dev/shm, the
// checkpoint volume when the class checkpoints, the grace period and the
// priority class.
func (j *jobFile) podTemplate(res corev1.ResourceList, pin []string) corev1.PodTemplateSpec {
	c, rec := j.c, j.rec
	podAnn := map[string]string{}
	if rec != nil && rec.DoNotDisrupt {
		podAnn[AnnotationDoNotDisrupt] = "true"
	}
	tasAnnotations(c, podAnn)
	if len(podAnn) == 0 {
		podAnn = nil
	}
	sel, aff, tols := classPlacement(c, pin)
	// /dev/shm: PyTorch's data loaders and NCCL's shared-memory transport
	// outgrow the runtime's 64 MiB default; half the pod's memory, as
	// memory-backed emptyDir counts against the pod's limit.
	shm := resource.NewQuantity(c.Pod.Memory.Value()/2, resource.BinarySI)
	shm = roundGi(shm)
	vols := []corev1.Volume{{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: shm}}}}
	mounts := []corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}}
	env := []corev1.EnvVar{{Name: "GPUPLAN_CLASS", Value: c.Name}}
	grace := int64(30)
	if rec != nil && rec.Checkpoint != nil {
		vol, ckEnv, ckGrace := j.checkpoint(rec.Checkpoint)
		vols = append(vols, vol)
		mounts = append(mounts, corev1.VolumeMount{Name: "checkpoints", MountPath: "/checkpoints"})
		env = append(env, ckEnv...)
		grace = ckGrace
	}
	if rec != nil && rec.TerminationGracePeriod != nil {
		grace = int64(rec.TerminationGracePeriod.Seconds())
	}
	container := corev1.Container{
		Name:         "main",
		Image:        j.o.Image,
		Env:          env,
		Resources:    corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()},
		VolumeMounts: mounts,
	}
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": c.Name}, Annotations: podAnn},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			NodeSelector:                  sel,
			Affinity:                      aff,
			Tolerations:                   tols,
			Containers:                    []corev1.Container{container},
			Volumes:                       vols,
		},
	}
	if pc := j.policyPriorityClass(c); pc != "" {
		pod.Spec.PriorityClassName = pc
	} else if j.hasPriorities() {
		pod.Spec.PriorityClassName = priorityClassName(c.Priority)
	}
	return pod
}

// checkpoint is the class's checkpoint volume (its shared claim, when it
// has one, goes in the file first), the environment that tells the
// training script where and how often to checkpoint, and the grace period
// a checkpoint write after SIGTERM needs (30 s when the write's cost is not
// given), with the comment lines and warnings that explain them.
func (j *jobFile) checkpoint(ck *scenarios.CheckpointSpec) (corev1.Volume, []corev1.EnvVar, int64) {
	c, rec := j.c, j.rec
	grace := int64(30)
	vol, words, claim := j.checkpointVolume(c, j.ns)
	if claim != nil {
		j.shared = append(j.shared, claim)
	}
	env := []corev1.EnvVar{
		{Name: "CHECKPOINT_DIR", Value: "/checkpoints"},
		{Name: "CHECKPOINT_INTERVAL_SECONDS", Value: fmt.Sprint(int64(ck.Interval.Seconds()))},
	}
	j.comment = append(j.comment, fmt.Sprintf("Checkpoints every %s to %s.", ck.Interval.Duration, words))
	if ck.Cost == nil {
		return vol, env, grace
	}
	// The grace period lets a pod write one checkpoint after SIGTERM,
	// as the simulation does when the write fits in it (and, on spot,
	// in the two minutes of an EC2 interruption notice).
	write := int64(math.Ceil(ck.Cost.Seconds()))
	grace = max(grace, write+30)
	given := rec.TerminationGracePeriod
	switch {
	case given != nil && given.Duration < ck.Cost.Duration:
		j.comment = append(j.comment, j.warn("class %s: terminationGracePeriodSeconds %d, as the scenario gives it, is shorter than its %s checkpoint write: a preempted or drained pod is killed before the write ends and loses the work since its last checkpoint (as the simulation modelled)",
			c.Name, int64(given.Seconds()), ck.Cost.Duration))
	case given != nil:
		j.comment = append(j.comment, fmt.Sprintf("terminationGracePeriodSeconds %d, as the scenario gives it, covers the %s checkpoint write.", int64(given.Seconds()), ck.Cost.Duration))
	default:
		j.comment = append(j.comment, fmt.Sprintf("terminationGracePeriodSeconds %d: the %s checkpoint write plus 30 s.", grace, ck.Cost.Duration))
	}
	if j.spot && ck.Cost.Duration > 2*time.Minute {
		j.comment = append(j.comment, j.warn("class %s: its %s checkpoint write is longer than EC2's 2-minute spot interruption notice: a spot reclaim kills the pod before the write ends and the work since the last checkpoint is lost (as the simulation modelled)", c.Name, ck.Cost.Duration))
	}
	return vol, env, grace
}

// volcano writes the class as a Volcano Job: the Volcano scheduler gangs
// it (minAvailable), its svc plugin gives the pods host names
// <job>-worker-<i>.<job>, and its env plugin each pod's index
// (VC_TASK_INDEX).
func (j *jobFile) volcano(v *scenarios.VolcanoJobSpec, om metav1.ObjectMeta, pod corev1.PodTemplateSpec, replicas int32, nproc int64) {
	c := j.c
	delete(om.Labels, LabelQueueName)
	pod.Spec.SchedulerName = "volcano"
	if c.Topology != nil {
		// Kueue's annotations mean nothing to Volcano, which reads a
		// Job's spec.networkTopology over HyperNodes instead.
		delete(pod.Annotations, gpufields.KueueRequiredTopology)
		delete(pod.Annotations, gpufields.KueuePreferredTopology)
		if len(pod.Annotations) == 0 {
			pod.Annotations = nil
		}
		j.comment = append(j.comment, j.warn("class %s asks for topology (%s) but runs as a Volcano Job, which Kueue does not admit: Volcano places by spec.networkTopology over HyperNodes, which need each node's rack and block (its own labels, which gpuplan does not know), so no topology request is written; the simulation kept the class's pods within one domain as Kueue would", c.Name, classTopologyWords(c)))
	}
	// The job's name is the API server's (generateName): each pod reads
	// it from the label Volcano's controller sets, for the rendezvous
	// host the svc plugin names <job>-worker-0.<job>.
	ctr := &pod.Spec.Containers[0]
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "JOB_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + labelVolcanoJobName + "']"},
	}})
	ctr.Command = torchrun(j.o.Entrypoint, replicas, nproc, "$(VC_TASK_INDEX)", "$(JOB_NAME)-worker-0.$(JOB_NAME)")
	vj := volcanoJob(c, v, om, pod, replicas)
	vj.Spec.Queue = j.lq
	j.comment = append(j.comment, fmt.Sprintf("A Volcano Job in queue %s: the scheduler binds its pods once %d of %d fit; maxRetry %d. Each pod runs torchrun with its rank from the env plugin's VC_TASK_INDEX and the job's name from its %s label.", vj.Spec.Queue, vj.Spec.MinAvailable, replicas, vj.Spec.MaxRetry, labelVolcanoJobName))
	j.objects = append(j.objects, vj)
}

// batchJob writes the class as a batch/v1 Job that Kueue admits suspended
// (or, under a Volcano policy without Kueue, that Volcano schedules), with
// the class's retry, disruption and deadline rules; a class of more than
// one replica as a gang (gang).
func (j *jobFile) batchJob(om metav1.ObjectMeta, pod corev1.PodTemplateSpec, replicas int32, nproc int64) {
	rec := j.rec
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: om,
		Spec: batchv1.JobSpec{
			Parallelism: &replicas,
			Completions: &replicas,
			// Kueue admits the Job suspended and unsuspends it when the
			// whole workload fits.
			Suspend:  ptr(true),
			Template: pod,
		},
	}
	if rec != nil && rec.BackoffLimit != nil {
		job.Spec.BackoffLimit = ptr(*rec.BackoffLimit)
	}
	if rec != nil && rec.IgnoreDisruptions {
		// A pod lost to a disruption (spot reclaim, drain, preemption) does
		// not count against the backoff limit, as in the simulation.
		job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:          batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		}}}
	}
	if rec != nil && rec.ActiveDeadline != nil {
		job.Spec.ActiveDeadlineSeconds = ptr(int64(rec.ActiveDeadline.Seconds()))
	}
	if j.pol != nil && len(j.pol.Volcano) > 0 {
		// A Volcano policy without Kueue: the Volcano scheduler takes the
		// Job's pods into the queue its annotation names, as one group of
		// all of them; nothing would unsuspend a suspended Job.
		delete(job.Labels, LabelQueueName)
		job.Spec.Suspend = nil
		job.Annotations[AnnotationVolcanoMinMember] = fmt.Sprint(replicas)
		job.Spec.Template.Spec.SchedulerName = "volcano"
		if job.Spec.Template.Annotations == nil {
			job.Spec.Template.Annotations = map[string]string{}
		}
		job.Spec.Template.Annotations[AnnotationVolcanoQueue] = j.lq
		j.comment = append(j.comment, fmt.Sprintf("Scheduled by Volcano in queue %s (schedulerName volcano, annotation %s), its %d pods as one group.", j.lq, AnnotationVolcanoQueue, replicas))
	}
	if replicas > 1 {
		j.gang(job, replicas, nproc)
	} else {
		job.Spec.Template.Spec.Containers[0].Command = torchrun(j.o.Entrypoint, 1, nproc, "", "")
	}
	j.objects = append(j.objects, job)
}

// gang makes job a gang: indexed pods with stable host names behind a
// headless Service for the rendezvous; each pod's rank is its completion
// index.
func (j *jobFile) gang(job *batchv1.Job, replicas int32, nproc int64) {
	c := j.c
	jctr := &job.Spec.Template.Spec.Containers[0]
	job.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
	job.Spec.Template.Spec.Subdomain = c.Name
	// An Indexed Job's pod is host <job>-<index> in the subdomain; the
	// job's name is the API server's (generateName), read from the label
	// the Job controller sets on its pods.
	jctr.Env = append(jctr.Env, corev1.EnvVar{Name: "NODE_RANK", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"},
	}}, corev1.EnvVar{Name: "JOB_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + batchv1.JobNameLabel + "']"},
	}})
	jctr.Command = torchrun(j.o.Entrypoint, replicas, nproc, "$(NODE_RANK)", "$(JOB_NAME)-0."+c.Name)
	j.shared = append(j.shared, &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: j.ns, Labels: map[string]string{"app.kubernetes.io/name": c.Name}},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{"app.kubernetes.io/name": c.Name},
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: "rendezvous", Port: 29500, TargetPort: intstr.FromInt32(29500)}},
		},
	})
	who := "Kueue admits"
	if j.pol != nil && len(j.pol.Volcano) > 0 {
		who = "Volcano binds"
	}
	j.comment = append(j.comment, fmt.Sprintf("A gang of %d indexed pods behind the headless Service %s (%s%s.yaml, shared by the class's jobs); %s all of them or none. Each pod runs torchrun with --node-rank from its completion index and its job's pod 0 as the rendezvous ($(JOB_NAME)-0.%s:29500, the job's name from its %s label).", replicas, c.Name, DirJobs, c.Name, who, c.Name, batchv1.JobNameLabel))
}
