package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

func generateWith(t *testing.T, file, variant string, o Options) ([]File, []string, error) {
	t.Helper()
	s, err := scenarios.LoadFile(file)
	require.NoError(t, err)
	if variant != "" {
		s, err = s.Variant(variant)
		require.NoError(t, err)
	}
	m, err := s.Cluster()
	require.NoError(t, err)
	return Generate(s, m, o)
}

const twoTeams = "../../examples/two-teams/scenario.yaml"

// TestTwoTeamsPolicyIsWrittenBack checks the two-teams policy against its
// manifests by hand: team-a 4 GPUs, 32 CPUs, 128Gi; team-b 2, 16, 64Gi;
// both BestEffortFIFO; LocalQueues in namespaces team-a and team-b, and
// the Jobs there.
func TestTwoTeamsPolicyIsWrittenBack(t *testing.T) {
	files, _, err := generateWith(t, twoTeams, "", Options{})
	require.NoError(t, err)
	for q, want := range map[string][3]string{"team-a": {"4", "32", "128Gi"}, "team-b": {"2", "16", "64Gi"}} {
		cq := find[kueue.ClusterQueue](t, files, q)
		require.Equal(t, kueue.BestEffortFIFO, cq.Spec.QueueingStrategy)
		require.Empty(t, cq.Spec.CohortName)
		gpu, cpu, mem := nominal(t, cq, "l4", ResourceGPU), nominal(t, cq, "l4", corev1.ResourceCPU), nominal(t, cq, "l4", corev1.ResourceMemory)
		require.Equal(t, want, [3]string{gpu.String(), cpu.String(), mem.String()}, q)
		require.Equal(t, []string{q}, cq.Spec.NamespaceSelector.MatchExpressions[0].Values)
		lq := find[kueue.LocalQueue](t, files, q)
		require.Equal(t, q, lq.Namespace)
	}
	job := find[batchv1.Job](t, files, "b-pair")
	require.Equal(t, "team-b", job.Namespace)
	require.Equal(t, "team-b", job.Labels[LabelQueueName])

	// The strict variant is StrictFIFO; the cohort variant shares cohort
	// research and reclaims.
	files, _, err = generateWith(t, twoTeams, "strict-fifo", Options{})
	require.NoError(t, err)
	require.Equal(t, kueue.StrictFIFO, find[kueue.ClusterQueue](t, files, "team-a").Spec.QueueingStrategy)
	files, _, err = generateWith(t, twoTeams, "cohort-reclaim", Options{})
	require.NoError(t, err)
	cq := find[kueue.ClusterQueue](t, files, "team-b")
	require.Equal(t, kueue.CohortReference("research"), cq.Spec.CohortName)
	require.Equal(t, kueue.PreemptionPolicy("Any"), cq.Spec.Preemption.ReclaimWithinCohort)

	// The volcano variant writes Volcano Queues (weights 2:1) and the
	// scheduler's configuration, no Kueue objects.
	files, _, err = generateWith(t, twoTeams, "volcano", Options{})
	require.NoError(t, err)
	qa := find[scenarios.VolcanoQueue](t, files, "team-a")
	require.Equal(t, int32(2), qa.Spec.Weight)
	require.Equal(t, int32(1), find[scenarios.VolcanoQueue](t, files, "team-b").Spec.Weight)
	cm := find[corev1.ConfigMap](t, files, VolcanoSchedulerConfigMap)
	require.Contains(t, cm.Data[VolcanoSchedulerConfKey], "enqueue, allocate, backfill")
	for _, f := range files {
		require.NotEqual(t, PathKueue, f.Path)
	}
	bp := find[batchv1.Job](t, files, "b-pair")
	require.Equal(t, "volcano", bp.Spec.Template.Spec.SchedulerName)
	require.Equal(t, "team-b", bp.Spec.Template.Annotations[AnnotationVolcanoQueue])
	require.Equal(t, "2", bp.Annotations[AnnotationVolcanoMinMember])
	require.Nil(t, bp.Spec.Suspend, "no Kueue to unsuspend it")
	require.NotContains(t, bp.Labels, LabelQueueName)
}

// TestFairSharingConfiguration: the fair-sharing variant's Cohort holds
// the 8 shared GPUs, team-c weighs 2, and Kueue's configuration turns
// fair sharing on with the two strategies the policy gives.
func TestFairSharingConfiguration(t *testing.T) {
	files, _, err := generateWith(t, "../../examples/fair-sharing/scenario.yaml", "fair-sharing", Options{})
	require.NoError(t, err)
	co := find[kueue.Cohort](t, files, "research")
	gpus := co.Spec.ResourceGroups[0].Flavors[0].Resources[2]
	require.Equal(t, ResourceGPU, gpus.Name)
	require.Equal(t, int64(8), gpus.NominalQuota.Value())
	c := find[kueue.ClusterQueue](t, files, "team-c")
	require.Equal(t, "2", c.Spec.FairSharing.Weight.String())
	require.Nil(t, find[kueue.ClusterQueue](t, files, "team-a").Spec.FairSharing, "weight 1 is the default")
	cm := find[corev1.ConfigMap](t, files, KueueConfigMap)
	require.Contains(t, cm.Data[KueueConfigKey], "preemptionStrategies:\n  - LessThanOrEqualToFinalShare\n  - LessThanInitialShare")
}

// TestRoundTripCanFail: a policy changed after writing (team-b's GPUs 2
// to 1) gives another summary, so the round trip compares something.
func TestRoundTripCanFail(t *testing.T) {
	s, err := scenarios.LoadFile(twoTeams)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, WriteDir(dir, files))
	p := filepath.Join(dir, filepath.FromSlash(PathKueue))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	i := strings.Index(string(b), "name: team-b\nspec:")
	require.Positive(t, i)
	changed := string(b[:i]) + strings.Replace(string(b[i:]), `nominalQuota: "2"`, `nominalQuota: "1"`, 1)
	require.NoError(t, os.WriteFile(p, []byte(changed), 0o644))
	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: []string{p}}})
	require.NotEqual(t, want, got)
}

// A share of a GPU needs time-slicing that gives it; without, the class
// is refused naming the pool.
func TestFractionalGPUs(t *testing.T) {
	dir := t.TempDir()
	write := func(sharing string) string {
		p := filepath.Join(dir, "s.yaml")
		require.NoError(t, os.WriteFile(p, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: halves}
spec:
  horizon: 4h
  cluster:
    pools:
    - name: l4
      count: 2
      instanceType: g6.2xlarge
`+sharing+`
  workload:
    synthetic:
      classes:
      - name: half
        arrival: {process: poisson, ratePerHour: 2}
        pod: {cpu: "2", memory: 8Gi, gpus: 0.5}
        duration: {distribution: lognormal, median: 30m, sigma: 0.5, max: 2h}
`), 0o644))
		return p
	}
	_, _, err := generateWith(t, write(""), "", Options{})
	require.ErrorContains(t, err, "classes[0] (half): asks for 0.5 of a GPU")
	require.ErrorContains(t, err, "l4 has no sharing configured")
	require.ErrorContains(t, err, "replicas: 2")
	_, _, err = generateWith(t, write("      sharing: {timeSlicing: {replicas: 4}}"), "", Options{})
	require.ErrorContains(t, err, "l4 time-slices 4 ways (one replica is 0.25 GPU)")
	files, _, err := generateWith(t, write("      sharing: {timeSlicing: {replicas: 2}}"), "", Options{})
	require.NoError(t, err)
	job := find[batchv1.Job](t, files, "half")
	q := job.Spec.Template.Spec.Containers[0].Resources.Limits[ResourceGPU]
	require.Equal(t, int64(1), q.Value(), "one of the two replicas of a GPU")
}

const elastic = "testdata/scenarios/elastic.yaml"

func TestStorageAndGrace(t *testing.T) {
	files, warnings, err := generateWith(t, elastic, "", Options{})
	require.NoError(t, err)
	job := find[batchv1.Job](t, files, "pretrain")
	var eph *corev1.EphemeralVolumeSource
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Name == "checkpoints" {
			eph = v.Ephemeral
		}
	}
	require.NotNil(t, eph, "per-pod volumes by default")
	require.Equal(t, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, eph.VolumeClaimTemplate.Spec.AccessModes)
	require.Equal(t, DefaultStorageClass, *eph.VolumeClaimTemplate.Spec.StorageClassName)
	sc := find[storagev1.StorageClass](t, files, DefaultStorageClass)
	require.Equal(t, "ebs.csi.aws.com", sc.Provisioner)
	require.Equal(t, "gp3", sc.Parameters["type"])
	joined := strings.Join(warnings, "\n")
	require.Contains(t, joined, "class pretrain: its 4m0s checkpoint write is longer than EC2's 2-minute spot interruption notice")
	require.Contains(t, joined, "per-pod ReadWriteOnce volumes")

	files, _, err = generateWith(t, elastic, "", Options{AccessMode: "ReadWriteMany", StorageClass: "efs-sc"})
	require.NoError(t, err)
	pvc := find[corev1.PersistentVolumeClaim](t, files, "pretrain-checkpoints")
	require.Equal(t, "efs-sc", *pvc.Spec.StorageClassName)
	require.Equal(t, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, pvc.Spec.AccessModes)

	_, _, err = generateWith(t, elastic, "", Options{AccessMode: "ReadOnlyMany"})
	require.ErrorContains(t, err, `access mode "ReadOnlyMany" is not one of ReadWriteOnce, ReadWriteMany`)
}

func TestTrainingAPIs(t *testing.T) {
	files, _, err := generateWith(t, elastic, "", Options{TrainingAPI: TrainingPyTorchJob})
	require.NoError(t, err)
	pj := find[PyTorchJob](t, files, "pretrain")
	// replicas 2 to 4: the largest, one Master and three Workers of 8 GPUs.
	require.Equal(t, int32(1), *pj.Spec.PyTorchReplicaSpecs["Master"].Replicas)
	require.Equal(t, int32(3), *pj.Spec.PyTorchReplicaSpecs["Worker"].Replicas)
	require.Equal(t, "8", *pj.Spec.NprocPerNode)
	require.True(t, *pj.Spec.RunPolicy.Suspend)
	require.Equal(t, "pytorch", pj.Spec.PyTorchReplicaSpecs["Worker"].Template.Spec.Containers[0].Name)
	require.Equal(t, "research", pj.Labels[LabelQueueName])

	files, _, err = generateWith(t, elastic, "", Options{TrainingAPI: TrainingTFJob})
	require.NoError(t, err)
	tj := find[TFJob](t, files, "pretrain")
	require.Equal(t, int32(3), *tj.Spec.TFReplicaSpecs["Worker"].Replicas)
	require.Equal(t, int32(1), *tj.Spec.TFReplicaSpecs["Chief"].Replicas)

	files, _, err = generateWith(t, elastic, "", Options{})
	require.NoError(t, err)
	job := find[batchv1.Job](t, files, "pretrain")
	c := job.Spec.Template.Spec.Containers[0]
	// A template (generateName pretrain-): the rendezvous is pod 0 of the
	// job the API server named, host $(JOB_NAME)-0 in the class's
	// headless Service pretrain.
	require.Equal(t, "pretrain-", job.GenerateName)
	require.Empty(t, job.Name)
	require.Equal(t, []string{"torchrun", "--nnodes=4", "--nproc-per-node=8", "--node-rank=$(NODE_RANK)", "--master-addr=$(JOB_NAME)-0.pretrain", "--master-port=29500", DefaultEntrypoint}, c.Command)
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	require.Equal(t, "metadata.annotations['batch.kubernetes.io/job-completion-index']", env["NODE_RANK"])
	require.Equal(t, "metadata.labels['batch.kubernetes.io/job-name']", env["JOB_NAME"])
	require.Equal(t, "pretrain", job.Spec.Template.Spec.Subdomain)
	svc := find[corev1.Service](t, files, "pretrain")
	require.NotNil(t, svc)
	for _, f := range files {
		for _, o := range f.Objects {
			switch o.(type) {
			case *corev1.Service:
				require.True(t, strings.HasPrefix(f.Path, DirJobs), "%s: the Service is applied once, in the folder", f.Path)
			case *batchv1.Job:
				require.True(t, strings.HasPrefix(f.Path, DirJobTemplates), "%s: the Job is a template beside the folder", f.Path)
			}
		}
	}
}

func TestFixedPoolsAndAlerts(t *testing.T) {
	files, _, err := generateWith(t, elastic, "", Options{FixedPools: FixedNodeGroup, PrometheusRelease: "prom"})
	require.NoError(t, err)
	cc := find[ClusterConfig](t, files, "elastic")
	require.Len(t, cc.ManagedNodeGroups, 1)
	ng := cc.ManagedNodeGroups[0]
	require.Equal(t, "a100-mig", ng.Name)
	require.Equal(t, [3]int{2, 2, 2}, [3]int{ng.MinSize, ng.DesiredCapacity, ng.MaxSize})
	require.Equal(t, "p4d.24xlarge", ng.InstanceType)
	for _, f := range files {
		for _, o := range f.Objects {
			if np, ok := o.(*karpv1.NodePool); ok {
				require.NotEqual(t, "a100-mig", np.Name, "a node group, not a NodePool")
				require.Nil(t, np.Spec.Template.Spec.ExpireAfter.Duration, "expireAfter: Never")
			}
		}
	}
	pr := find[monitoringv1.PrometheusRule](t, files, "gpuplan-gpu-utilisation")
	require.Equal(t, "prom", pr.Labels["release"])
	require.Contains(t, pr.Spec.Groups[0].Rules[0].Expr.String(), `exported_pod!=""`)
}

// A grace period the scenario gives that is shorter than the checkpoint
// write is kept, with a warning naming the class.
func TestShortGracePeriodWarns(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(p, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: grace}
spec:
  horizon: 4h
  cluster:
    pools:
    - {name: a100, count: 1, instanceType: p4d.24xlarge}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: poisson, ratePerHour: 1}
        pod: {cpu: "8", memory: 64Gi, gpus: 8}
        duration: {distribution: lognormal, median: 1h, sigma: 0.5, max: 3h}
        recovery:
          checkpoint: {interval: 20m, cost: 3m}
          terminationGracePeriod: 1m
`), 0o644))
	files, warnings, err := generateWith(t, p, "", Options{})
	require.NoError(t, err)
	job := find[batchv1.Job](t, files, "train")
	require.Equal(t, int64(60), *job.Spec.Template.Spec.TerminationGracePeriodSeconds, "as the scenario gives it")
	require.Len(t, warnings, 2)
	require.Contains(t, warnings[0], "class train: terminationGracePeriodSeconds 60, as the scenario gives it, is shorter than its 3m0s checkpoint write")
	require.Contains(t, warnings[1], "per-pod ReadWriteOnce volumes")
	// No spot pool: no spot-notice warning; without the scenario's grace
	// period, 3 min + 30 s.
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(mustRead(t, p), "          terminationGracePeriod: 1m\n", "", 1)), 0o644))
	files, warnings, err = generateWith(t, p, "", Options{AccessMode: AccessRWX})
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.Equal(t, int64(210), *find[batchv1.Job](t, files, "train").Spec.Template.Spec.TerminationGracePeriodSeconds)
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
