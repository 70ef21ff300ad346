package seeds_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim"
)

// The slots of a scenario a file is given in (README: "The articles'
// manifests").
const (
	slotWorkload   = "workload.manifests"
	slotPolicy     = "policy.manifests"
	slotGPUConfigs = "cluster.gpuConfigs"
	slotService    = "workload.services[].manifests"
	slotAutoscaler = "workload.services[].autoscaler.manifests"
	slotTorchServe = "workload.services[].torchserve.path"
	slotNone       = "none"
)

// What gpuplan makes of a file.
const (
	runs       = "runs"    // loads, and every job it submits completes
	waits      = "waits"   // loads; a job never runs on the cluster the article gives
	loads      = "loads"   // read (a service's or autoscaler's manifest, a config)
	refused    = "refused" // an input error naming file:line:field
	notAnInput = "not an input"
)

// The clusters the articles give, as scenario pools.
const (
	// The AKS guide's GPU node pool (s2-cli-01: Standard_NC4as_T4_v3,
	// labels accelerator=nvidia workload=training, taint
	// sku=gpu:NoSchedule), four nodes (its --max-count).
	aksT4 = `    - {name: gpunp, count: 4, gpuModel: T4, gpusPerNode: 1, cpu: "4", memory: 28Gi,
       labels: {accelerator: nvidia, workload: training}, taints: [{key: sku, value: gpu, effect: NoSchedule}]}
`
	// The AKS guide's MIG nodes: A100 80GB (Standard_NC24ads_A100_v4, one
	// GPU) labelled for mig-parted's hptuning-1g10gb (s2-cli-03), which
	// the ConfigMap of s2-04 makes seven 1g.10gb instances.
	// The pool says no sharing: mig-parted's config (cluster.gpuConfigs)
	// resolves its label; GPU feature discovery labels the mixed strategy
	// the Job's nvidia.com/mig-1g.10gb needs.
	aksMIG = `    - {name: a100mig, count: 1, gpuModel: A100-80GB, gpusPerNode: 1, cpu: "24", memory: 220Gi,
       labels: {accelerator: nvidia, nvidia.com/mig.config: hptuning-1g10gb, nvidia.com/mig.config.state: success, nvidia.com/mig.strategy: mixed},
       taints: [{key: sku, value: gpu, effect: NoSchedule}]}
`
	// The first article's GPU nodes (s0-03's NodePool: label
	// accelerator, taint nvidia.com/gpu=true:NoSchedule) as p4d-like
	// nodes of 8 A100 80GB, labelled as s0-02 selects them.
	a100Tainted = `    - {name: a100, count: 4, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "96", memory: 1152Gi,
       labels: {accelerator: nvidia-a100-80gb}, taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]}
`
	// The first article's basic Pod's nodes (s0-01 selects
	// accelerator=nvidia-a100 and tolerates nvidia.com/gpu).
	a100Basic = `    - {name: a100, count: 1, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "96", memory: 1152Gi,
       labels: {accelerator: nvidia-a100}, taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]}
`
	// One GPU, time-sliced 4 ways by the first article's ConfigMap (s0-04,
	// given in cluster.gpuConfigs).
	timeSliced = `    - {name: shared, count: 1, gpuModel: A100-80GB, gpusPerNode: 1, cpu: "12", memory: 110Gi}
`
	// One A100 80GB as seven 1g.10gb instances (the first article's
	// nvidia-smi commands, mixed strategy), untainted.
	migPlain = `    - {name: a100mig, count: 1, gpuModel: A100-80GB, gpusPerNode: 1, cpu: "12", memory: 110Gi,
       sharing: {mig: {strategy: mixed, layout: all-1g.10gb}}}
`
	// A plain pool of CPU nodes for the CPU-only Jobs.
	cpuNodes = `    - {name: cpu, count: 2, cpu: "16", memory: 64Gi}
`
)

type row struct {
	file, slot, outcome string
	// pools is the cluster a workload file runs on.
	pools string
	// jobs and gpus: how many jobs the run has and the GPUs they hold
	// together (replicas x GPUs per pod, summed), worked out from the file.
	jobs, gpus int
	// want: key words of the refusal (file:line:field first), or of why
	// a job waits.
	want []string
	// configs are the cluster.gpuConfigs the pools need; workload, for a
	// file given in cluster.gpuConfigs, the workload run on its pools
	// (count times); sharing what the config makes of the first pool.
	configs  []string
	workload string
	count    int
	sharing  string
	// what gpuplan makes of it, in the README's words.
	what string
}

var table = []row{
	{file: "s0-01-pod-gpu-basic.yaml", slot: slotWorkload, outcome: runs, pools: a100Basic, jobs: 1, gpus: 1,
		what: "the Pod (1 GPU, 4 CPUs, 16Gi) runs on the A100 nodes it selects, tolerating their taint"},
	{file: "s0-02-pytorchjob-llm-finetuning.yaml", slot: slotWorkload, outcome: waits, pools: a100Tainted, jobs: 1, gpus: 32,
		want: []string{"llm-finetuning-job-0", "untolerated taint"},
		what: "one gang of 4 pods x 8 GPUs (Master and 3 Workers); the Worker template lacks the Master's toleration, so on the article's tainted nodes the whole gang waits (warning: the templates differ in placement)"},
	{file: "s0-03-karpenter-gpu-nodepool.yaml", slot: slotPolicy, outcome: refused,
		want: []string{"s0-03-karpenter-gpu-nodepool.yaml:13: NodePool: unknown field \"spec.template.spec.nodeClassRef.apiVersion\""},
		what: "refused at line 13: spec.template.spec.nodeClassRef.apiVersion is not a field of karpenter.sh/v1 (it wants group, which the CRD requires); with group, its EC2NodeClass is refused: spec.amiSelectorTerms is required in v1"},
	{file: "s0-04-time-slicing-configmap.yaml", slot: slotGPUConfigs, outcome: runs, pools: timeSliced, workload: "s0-05-pod-inference-small-timesliced.yaml", count: 4, jobs: 4, gpus: 4,
		sharing: "timeSlicing 4",
		what:    "the device plugin's config (key any, the only one, so every node's): each GPU of the pools without sharing is 4 time-slicing replicas; 4 of s0-05's Pods share one GPU"},
	{file: "s0-05-pod-inference-small-timesliced.yaml", slot: slotWorkload, outcome: runs, pools: timeSliced, configs: []string{"s0-04-time-slicing-configmap.yaml"}, jobs: 1, gpus: 1,
		what: "the Pod runs on one of 4 time-slicing replicas of a GPU (s0-04 in cluster.gpuConfigs; a quarter of it in the ledger; 4 such pods share it, each at a quarter of the speed)"},
	{file: "s0-06-pod-inference-mig.yaml", slot: slotWorkload, outcome: runs, pools: migPlain, jobs: 1, gpus: 1,
		what: "the Pod runs on a 1g.10gb MIG instance (mixed strategy)"},
	{file: "s0-07-torchserve-deployment-configmap-scaledobject.yaml", slot: slotService, outcome: loads,
		what: "the Deployment's replica pod (1 GPU) and 3 replicas; the ScaledObject in the autoscaler slot"},
	{file: "s0-07-torchserve-deployment-configmap-scaledobject.yaml", slot: slotAutoscaler, outcome: loads,
		what: "KEDA on torchserve_queue_latency_microseconds, 1..10 replicas"},
	{file: "s0-07a-config.properties", slot: slotTorchServe, outcome: loads,
		what: "read; it has no models key, so no batching (batch_size at the top level is ignored, as TorchServe ignores it)"},
	{file: "s0-08-alert-rule-fragment.yaml", slot: slotNone, outcome: notAnInput,
		what: "a PrometheusRule fragment: gpuplan writes its own alert rules (gpuplan manifests)"},
	{file: "s0-cli-01-helm-device-plugin-gpu-operator.sh", slot: slotNone, outcome: notAnInput,
		what: "installs the device plugin and GPU Operator; mig.strategy=single is cluster.pools[].sharing.mig.strategy"},
	{file: "s0-cli-02-timeslicing-mig-nvidia-smi-patch.sh", slot: slotNone, outcome: notAnInput,
		what: "enables MIG by hand (7 x 1g.10gb, mixed): cluster.pools[].sharing.mig {strategy: mixed, layout: all-1g.10gb}; its ClusterPolicy patch names s0-04's ConfigMap, which cluster.gpuConfigs reads"},
	{file: "s0-helm-device-plugin-values.yaml", slot: slotNone, outcome: notAnInput,
		what: "Helm values: nothing in them changes what is simulated"},
	{file: "s0-helm-gpu-operator-values.yaml", slot: slotNone, outcome: notAnInput,
		what: "Helm values: mig.strategy single is cluster.pools[].sharing.mig.strategy"},
	{file: "s2-01-pvc-job-checkpointed-batch.yaml", slot: slotWorkload, outcome: runs, pools: cpuNodes, jobs: 1,
		what: "the Job runs (CPU only); the PVC is skipped"},
	{file: "s2-02-pod-gpu-training.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 1,
		what: "the Pod runs on the T4 pool"},
	{file: "s2-03-daemonset-nvidia-device-plugin.yaml", slot: slotNone, outcome: notAnInput,
		what: "the device plugin itself: gpuplan's nodes advertise nvidia.com/gpu as if it runs"},
	{file: "s2-04-mig-parted-configmap-job-mig-trial.yaml", slot: slotGPUConfigs, outcome: runs, pools: aksMIG, workload: "s2-04-mig-parted-configmap-job-mig-trial.yaml", count: 8, jobs: 8, gpus: 8,
		sharing: "mig mixed 1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb",
		what:    "mig-parted's config: the pool labelled nvidia.com/mig.config: hptuning-1g10gb is 7 x 1g.10gb per GPU (the Namespaces and the Job are skipped, noted)"},
	{file: "s2-04-mig-parted-configmap-job-mig-trial.yaml", slot: slotWorkload, outcome: runs, pools: aksMIG, configs: []string{"s2-04-mig-parted-configmap-job-mig-trial.yaml"}, jobs: 1, gpus: 1,
		what: "the Job runs on a 1g.10gb instance of the A100 labelled hptuning-1g10gb (this file in cluster.gpuConfigs too); the ConfigMap is skipped as a workload"},
	{file: "s2-05-job-isolated-gpu-training.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 1,
		what: "runs on the T4 pool"},
	{file: "s2-06-pytorchjob-nccl.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 2,
		what: "Master and Worker (1 GPU each) run as one gang"},
	{file: "s2-07-tfjob-multiworker.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 2,
		what: "two Workers (1 GPU each) run as one gang"},
	{file: "s2-08-kaito-workspace.yaml", slot: slotWorkload, outcome: runs, pools: cpuNodes, jobs: 1, gpus: 1,
		what: "the KAITO Workspace: a pool kaito-workspace-tuning-phi-3-mini of one Standard_NC24ads_A100_v4 (one A100 80GB) labelled apps=phi-3-mini-tuning, and its qlora tuning job, one pod on all the node's GPUs"},
	{file: "s2-09-networkpolicy-nccl.yaml", slot: slotNone, outcome: notAnInput,
		what: "a NetworkPolicy: the network is not modelled"},
	{file: "s2-10-kueue-two-teams-and-job.yaml", slot: slotPolicy, outcome: refused,
		want: []string{"s2-10-kueue-two-teams-and-job.yaml:32:7: spec.resourceGroups[0].flavors[0].resources", "0 covered resources"},
		what: "refused: its ClusterQueues omit coveredResources, which Kueue requires"},
	{file: "s2-10-kueue-two-teams-and-job.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 2,
		what: "its Job (2 pods of 1 GPU) runs; the Kueue objects are skipped"},
	{file: "s2-11-volcano-job.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 2,
		what: "two workers (1 GPU each), minAvailable 2, RestartJob on PodEvicted and PodFailed"},
	{file: "s2-12-priorityclasses.yaml", slot: slotPolicy, outcome: loads,
		what: "training-batch (10000, Never) and inference-critical (100000): the priorities of workloads' `priorityClassName` and of the queues `spec.policy.priorityClasses` names; no queue policy (nothing admits)"},
	{file: "s2-13-job-shared-memory.yaml", slot: slotWorkload, outcome: waits, pools: aksT4, jobs: 1, gpus: 1,
		want: []string{"shared-memory-training-0", "Insufficient cpu"},
		what: "waits: its pod asks for 8 CPUs, and the guide's Standard_NC4as_T4_v3 nodes have 4"},
	{file: "s2-14-storageclass-pvc-job-blob.yaml", slot: slotWorkload, outcome: runs, pools: cpuNodes, jobs: 1,
		what: "the Job runs (CPU only); StorageClass and PVC skipped"},
	{file: "s2-15-storageclass-pvc-job-azurefile-indexed.yaml", slot: slotWorkload, outcome: runs, pools: cpuNodes, jobs: 1,
		what: "the Indexed Job (2 pods) runs; backoffLimitPerIndex noted"},
	{file: "s2-16-storageclass-pvc-job-checkpointed-pytorch.yaml", slot: slotWorkload, outcome: runs, pools: cpuNodes, jobs: 1,
		what: "the Job runs (CPU only); StorageClass and PVC skipped"},
	{file: "s2-17-podmonitor-dcgm.yaml", slot: slotNone, outcome: notAnInput,
		what: "a PodMonitor for DCGM: monitoring is not simulated"},
	{file: "s2-18-metrics-demo-configmap-deployment-podmonitor.yaml", slot: slotNone, outcome: notAnInput,
		what: "a metrics demo (Deployment without GPU, PodMonitor): monitoring is not simulated"},
	{file: "s2-cli-01-az-aks-nodepool-add-t4.sh", slot: slotNone, outcome: notAnInput,
		what: "an AKS node pool: give it as cluster.pools (T4, labels, taint, autoscaling 0..4)"},
	{file: "s2-cli-02-az-aks-autoscaler.sh", slot: slotNone, outcome: notAnInput,
		what: "the cluster autoscaler's bounds (0..8) and profile: cluster.pools[].autoscaling"},
	{file: "s2-cli-03-kubectl-label-mig-config.sh", slot: slotNone, outcome: notAnInput,
		what: "labels nodes for mig-parted: give the pool the label nvidia.com/mig.config: hptuning-1g10gb and s2-04's ConfigMap in cluster.gpuConfigs"},
}

// Every file of testdata is in the table, and the table holds what
// gpuplan makes of each in its slot.
func TestSeedManifests(t *testing.T) {
	files, err := filepath.Glob("testdata/s*")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, r := range table {
		seen[r.file] = true
	}
	for _, f := range files {
		require.True(t, seen[filepath.Base(f)], "%s is not in the table", f)
	}
	require.Len(t, files, 34)
	for _, r := range table {
		t.Run(r.file+"@"+r.slot, func(t *testing.T) {
			path := filepath.Join("testdata", r.file)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			switch r.slot {
			case slotWorkload, slotGPUConfigs:
				checkWorkload(t, r)
			case slotPolicy:
				_, err := scenarios.LoadPolicy([]string{path})
				if r.outcome == loads {
					require.NoError(t, err)
					break
				}
				require.Equal(t, refused, r.outcome)
				requireWords(t, err, r.want)
			case slotService:
				ws, _, err := services.ReadServing(path, data)
				require.NoError(t, err)
				require.Len(t, ws, 1)
				require.Equal(t, "Deployment", ws[0].Kind)
				require.Equal(t, 3, ws[0].Replicas)
				require.EqualValues(t, 1, ws[0].Pod.GPUs)
			case slotAutoscaler:
				set, err := services.Read(path, data)
				require.NoError(t, err)
				require.Len(t, set.ScaledObjects, 1)
			case slotTorchServe:
				ts, err := services.ParseTorchServe(path, data)
				require.NoError(t, err)
				require.Empty(t, ts.Models)
			case slotNone:
				require.Equal(t, notAnInput, r.outcome)
				// Given as a workload it is refused, never run.
				_, _, err := workloads.Parse(path, data)
				require.Error(t, err)
			default:
				t.Fatalf("slot %q", r.slot)
			}
		})
	}
}

func requireWords(t *testing.T, err error, words []string) {
	t.Helper()
	require.Error(t, err)
	for _, w := range words {
		require.Contains(t, err.Error(), w)
	}
}

// checkWorkload gives the file as the workload of a scenario on its pools,
// once, with a duration of 1 h for objects that say none.
func checkWorkload(t *testing.T, r row) {
	t.Helper()
	dir := t.TempDir()
	workload, configs, count := r.file, r.configs, max(r.count, 1)
	if r.slot == slotGPUConfigs {
		workload, configs = r.workload, []string{r.file}
	}
	for _, f := range append([]string{workload}, configs...) {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
	}
	pools := r.pools
	if pools == "" {
		pools = cpuNodes
	}
	body := "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: seed}\nspec:\n  cluster:\n    pools:\n" + pools
	if len(configs) > 0 {
		body += "    gpuConfigs: [" + strings.Join(configs, ", ") + "]\n"
	}
	body += "  horizon: 24h\n  workload:\n    manifests:\n    - {path: " + workload + ", count: " + strconv.Itoa(count) + ", duration: {distribution: constant, value: 1h}}\n"
	s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(body))
	if err == nil && r.sharing != "" {
		require.Equal(t, r.sharing, sharing(s.Spec.Cluster.Pools[0].Sharing))
	}
	if err == nil {
		var b *scenarios.Built
		if b, err = s.Build(scenarios.Options{}); err == nil {
			defer b.Close()
			var res *sim.Result
			if res, err = sim.Run(b.Config); err == nil {
				checkRun(t, r, res)
				return
			}
		}
	}
	require.Equal(t, refused, r.outcome, "%v", err)
	requireWords(t, err, r.want)
}

// sharing says what a pool's sharing is, in the table's words.
func sharing(sh *scenarios.SharingSpec) string {
	switch {
	case sh == nil:
		return "none"
	case sh.TimeSlicing != nil:
		return "timeSlicing " + strconv.Itoa(int(sh.TimeSlicing.Replicas))
	case sh.MIG != nil:
		return "mig " + sh.MIG.Strategy + " " + sh.MIG.Layout + strings.Join(sh.MIG.Profiles, ",")
	}
	return "?"
}

func checkRun(t *testing.T, r row, res *sim.Result) {
	t.Helper()
	require.Contains(t, []string{runs, waits}, r.outcome)
	require.Len(t, res.Jobs, r.jobs)
	gpus := 0
	var waiting []string
	for _, j := range res.Jobs {
		gpus += int(j.Replicas) * int(j.Pod.GPUs)
		if j.End < 0 {
			waiting = append(waiting, j.Name+": "+res.Reason(j.Reason)+j.Diagnosis())
		}
	}
	require.Equal(t, r.gpus, gpus)
	sort.Strings(waiting)
	if r.outcome == runs {
		require.Empty(t, waiting)
		return
	}
	require.NotEmpty(t, waiting)
	requireWords(t, errString(strings.Join(waiting, "; ")), r.want)
}

type errString string

func (e errString) Error() string { return string(e) }

// runScenario writes files into a folder and runs the scenario body
// there.
func runScenario(t *testing.T, files map[string]string, body string) *sim.Result {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(body))
	require.NoError(t, err)
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	return res
}

func readSeed(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// The AKS guide's Kueue file (s2-10): LocalQueue gpu-queue in team-a and
// in team-b, each pointing at its team's ClusterQueue (team-a 4 GPUs,
// team-b 2), with its ClusterQueues given the coveredResources Kueue
// requires. Its Job (2 pods of 1 GPU, in team-a) twice, and the same Job
// in team-b twice, on eight T4 nodes (room for all four at once): team-a's
// two fit its 4 GPUs and run 0-1 h; team-b's quota holds one, so the
// second waits for it and runs 1-2 h. Each job is in its own namespace's
// gpu-queue.
func TestAKSKueueTeamsEachToTheirOwnGPUQueue(t *testing.T) {
	kueue := strings.ReplaceAll(readSeed(t, "s2-10-kueue-two-teams-and-job.yaml"),
		"  resourceGroups:\n  - flavors:", "  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:")
	policy, jobA, ok := strings.Cut(kueue, "---\napiVersion: batch/v1\n")
	require.True(t, ok)
	jobA = "apiVersion: batch/v1\n" + jobA
	jobB := strings.ReplaceAll(strings.ReplaceAll(jobA, "namespace: team-a", "namespace: team-b"), "team-a-two-gpu-training", "team-b-two-gpu-training")
	res := runScenario(t, map[string]string{"kueue.yaml": policy, "team-a.yaml": jobA, "team-b.yaml": jobB}, `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: teams}
spec:
  cluster:
    pools:
    - {name: gpunp, count: 8, gpuModel: T4, gpusPerNode: 1, cpu: "4", memory: 28Gi,
       labels: {accelerator: nvidia, workload: training}, taints: [{key: sku, value: gpu, effect: NoSchedule}]}
  policy:
    manifests: [kueue.yaml]
  workload:
    manifests:
    - {path: team-a.yaml, count: 2, duration: {distribution: constant, value: 1h}}
    - {path: team-b.yaml, count: 2, duration: {distribution: constant, value: 1h}}
`)
	type run struct {
		name, queue string
		start, end  int64
	}
	var got []run
	for _, j := range res.Jobs {
		got = append(got, run{j.Name, j.Queue, j.Start, j.End})
	}
	sort.Slice(got, func(a, b int) bool { return got[a].name < got[b].name })
	const hour = 3_600_000
	require.Equal(t, []run{
		{"team-a-two-gpu-training-0", "team-a/gpu-queue", 0, hour},
		{"team-a-two-gpu-training-1", "team-a/gpu-queue", 0, hour},
		{"team-b-two-gpu-training-0", "team-b/gpu-queue", 0, hour},
		{"team-b-two-gpu-training-1", "team-b/gpu-queue", hour, 2 * hour},
	}, got)
}

// The first article's PyTorchJob (s0-02): a Master and 3 Workers of 8 GPUs
// each, one gang of 32 GPUs, though the Worker template leaves out the
// Master's nodeSelector and toleration. On four 8-GPU nodes labelled as
// the Master selects, untainted, it runs whole 0-1 h; tainted
// nvidia.com/gpu (as the article's NodePool taints them) no Worker may
// go, so the whole gang waits (no pod bound: the Master does not run and
// "complete" alone); on three nodes (24 GPUs) it waits whole too.
func TestFirstArticlePyTorchJobIsOneGang(t *testing.T) {
	job := readSeed(t, "s0-02-pytorchjob-llm-finetuning.yaml")
	scenario := func(pools string) string {
		return "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: gang}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n" + pools +
			"  workload:\n    manifests:\n    - {path: job.yaml, count: 1, duration: {distribution: constant, value: 1h}}\n"
	}
	untainted := func(n string) string {
		return "    - {name: a100, count: " + n + ", gpuModel: A100-80GB, gpusPerNode: 8, cpu: \"96\", memory: 1152Gi, labels: {accelerator: nvidia-a100-80gb}}\n"
	}
	for _, c := range []struct {
		name, pools string
		start, end  int64
	}{
		{"untainted", untainted("4"), 0, 3_600_000},
		{"tainted", a100Tainted, -1, -1},
		{"too-few-gpus", untainted("3"), -1, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runScenario(t, map[string]string{"job.yaml": job}, scenario(c.pools))
			require.Len(t, res.Jobs, 1)
			j := res.Jobs[0]
			require.Equal(t, "llm-finetuning-job-0", j.Name)
			require.EqualValues(t, 4, j.Replicas)
			require.EqualValues(t, 8, j.Pod.GPUs)
			require.Equal(t, c.start, j.Start)
			require.Equal(t, c.end, j.End)
			if c.start < 0 {
				require.Zero(t, j.PodsBound, "no pod of a waiting gang is bound")
			}
		})
	}
}

// The tutorials' first Pods as a workload, several at once: the
// time-sliced one (s0-05) four times on one GPU shared 4 ways (the
// article's ConfigMap, s0-04, in cluster.gpuConfigs): all four
// start at once, each on a replica, and share the GPU's compute, so 1 h
// of work takes each 4 h; the MIG one (s0-06) eight times on one A100 of
// seven 1g.10gb instances: seven run 0-1 h, the eighth waits for an
// instance and runs 1-2 h.
func TestTutorialPodsShareAGPU(t *testing.T) {
	const hour = 3_600_000
	scenario := func(pools, file string, n int) string {
		return "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: pods}\nspec:\n  cluster:\n    pools:\n" + pools +
			"  workload:\n    manifests:\n    - {path: " + file + ", count: " + strconv.Itoa(n) + ", duration: {distribution: constant, value: 1h}}\n"
	}
	ends := func(res *sim.Result) (out [][2]int64) {
		for _, j := range res.Jobs {
			out = append(out, [2]int64{j.Start, j.End})
		}
		sort.Slice(out, func(a, b int) bool { return out[a][0] < out[b][0] || out[a][0] == out[b][0] && out[a][1] < out[b][1] })
		return out
	}
	ts, cm := "s0-05-pod-inference-small-timesliced.yaml", "s0-04-time-slicing-configmap.yaml"
	res := runScenario(t, map[string]string{ts: readSeed(t, ts), cm: readSeed(t, cm)}, scenario(timeSliced+"    gpuConfigs: ["+cm+"]\n", ts, 4))
	require.Equal(t, [][2]int64{{0, 4 * hour}, {0, 4 * hour}, {0, 4 * hour}, {0, 4 * hour}}, ends(res))
	mig := "s0-06-pod-inference-mig.yaml"
	res = runScenario(t, map[string]string{mig: readSeed(t, mig)}, scenario(migPlain, mig, 8))
	want := [][2]int64{}
	for range 7 {
		want = append(want, [2]int64{0, hour})
	}
	want = append(want, [2]int64{hour, 2 * hour})
	require.Equal(t, want, ends(res))
	for _, j := range res.Jobs {
		require.Equal(t, "1g.10gb", j.Pod.MIG)
	}
}

// The README's table of the articles' manifests is this table.
func TestREADMETable(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "| file | slot | outcome | what gpuplan makes of it |\n|---|---|---|---|\n")
	require.True(t, ok, "the README has the table")
	got, _, _ := strings.Cut(after, "\n\n")
	var want []string
	for _, r := range table {
		slot, outcome := "none", r.outcome
		if r.slot != slotNone {
			slot = "`" + r.slot + "`"
		}
		if outcome == waits {
			outcome = "loads, waits"
		}
		want = append(want, "| `"+r.file+"` | "+slot+" | "+outcome+" | "+r.what+" |")
	}
	if out := os.Getenv("SEEDS_TABLE_OUT"); out != "" {
		// To rewrite the README's table by hand: the rows, in a file
		// outside the repository.
		require.NoError(t, os.WriteFile(out, []byte(strings.Join(want, "\n")), 0o644))
	}
	lines := strings.Split(got, "\n")
	for i, w := range want {
		require.Less(t, i, len(lines), "the README's table lacks %s", w)
		require.Equal(t, w, lines[i], "README table row %d", i+1)
	}
	require.Len(t, lines, len(want))
}

// The AKS guide's KAITO Workspace (s2-08) on an empty cluster: KAITO
// provisions one Standard_NC24ads_A100_v4 (1 A100 80GB, 24 vCPUs, 220 GiB
// in the Azure catalog) labelled apps=phi-3-mini-tuning, and its tuning
// job takes the node's one GPU. Submitted twice, the second tuning waits
// for the one node: 0-1 h, then 1-2 h.
func TestKAITOWorkspaceProvisionsItsNode(t *testing.T) {
	ws := "s2-08-kaito-workspace.yaml"
	res := runScenario(t, map[string]string{ws: readSeed(t, ws)}, `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: kaito}
spec:
  cluster:
    pools:
    - {name: system, count: 1, cpu: "4", memory: 16Gi}
  workload:
    manifests:
    - {path: `+ws+`, count: 2, duration: {distribution: constant, value: 1h}}
`)
	const hour = 3_600_000
	var got [][2]int64
	for _, j := range res.Jobs {
		require.EqualValues(t, 1, j.Replicas)
		require.EqualValues(t, 1, j.Pod.GPUs)
		got = append(got, [2]int64{j.Start, j.End})
	}
	sort.Slice(got, func(a, b int) bool { return got[a][0] < got[b][0] })
	require.Equal(t, [][2]int64{{0, hour}, {hour, 2 * hour}}, got)
}

// The first article's NodePool and EC2NodeClass (s0-03) as the API
// server checks them against Karpenter's v1 CRDs, one fix at a time: the
// unknown nodeClassRef.apiVersion at its own line (13) and full path;
// without it, the group the CRD requires; with the group, the
// EC2NodeClass's missing amiSelectorTerms (required in v1); with an AMI
// alias in place of amiFamily, it loads.
func TestFirstArticleKarpenterObjectsCheckedAsTheAPIServer(t *testing.T) {
	base := readSeed(t, "s0-03-karpenter-gpu-nodepool.yaml")
	const ref = "        apiVersion: karpenter.k8s.aws/v1\n"
	require.Contains(t, base, ref)
	noAPIVersion := strings.Replace(base, ref, "", 1)
	withGroup := strings.Replace(base, ref, "        group: karpenter.k8s.aws\n", 1)
	withAlias := strings.Replace(withGroup, "  amiFamily: AL2\n", "  amiSelectorTerms:\n  - alias: al2@latest\n", 1)
	for _, c := range []struct{ name, body, want string }{
		{"as-written", base, `np.yaml:13: NodePool: unknown field "spec.template.spec.nodeClassRef.apiVersion"`},
		{"no-apiVersion", noAPIVersion, `np.yaml:13:9: spec.template.spec.nodeClassRef.group: Required value`},
		{"group", withGroup, `np.yaml:50:3: spec.amiSelectorTerms: Required value`},
		{"empty-terms", strings.Replace(withGroup, "  amiFamily: AL2\n", "  amiFamily: AL2\n  amiSelectorTerms: []\n", 1), `np.yaml:51:21: spec.amiSelectorTerms: Invalid value: 0`},
		{"no-role", strings.Replace(withAlias, "  role: KarpenterNodeRole\n", "", 1), `np.yaml:50:3: spec: Invalid value: must specify exactly one of ['role', 'instanceProfile']`},
		{"ami-family", strings.Replace(withGroup, "  amiFamily: AL2\n", "  amiFamily: AL3\n  amiSelectorTerms: [{id: ami-1}]\n", 1), `np.yaml:50:14: spec.amiFamily: Unsupported value: "AL3"`},
		{"loads", withAlias, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "np.yaml")
			require.NoError(t, os.WriteFile(path, []byte(c.body), 0o644))
			_, err := scenarios.LoadPolicy([]string{path})
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.want)
		})
	}
}

// Two Volcano Jobs Volcano's admission webhook denies, made from the AKS
// guide's (s2-11): a second task named worker, and a second policy on
// PodFailed. Each is refused at its line with the webhook's reason, never
// run.
func TestVolcanoWebhookDenials(t *testing.T) {
	base := readSeed(t, "s2-11-volcano-job.yaml")
	_, tasks, ok := strings.Cut(base, "  tasks:\n")
	require.True(t, ok)
	for _, c := range []struct{ name, body, want string }{
		{"duplicate-task", base + tasks, `spec.tasks[1].name: duplicated task name worker (also spec.tasks[0])`},
		{"two-policies-one-event", strings.Replace(base, "  - event: PodFailed\n    action: RestartJob\n", "  - event: PodFailed\n    action: RestartJob\n  - event: PodFailed\n    action: AbortJob\n", 1),
			`v.yaml:14:12: spec.policies[2].event: duplicate event PodFailed across different policy (also spec.policies[1])`},
		{"any-and-another", strings.Replace(base, "event: PodEvicted", "event: \"*\"", 1), `v.yaml:10:3: spec.policies: if there's * here, no other policy should be here`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := workloads.Parse("v.yaml", []byte(c.body))
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, err, "Volcano's admission webhook denies the Job")
		})
	}
}

// Kueue's API up to v0.19.2 (the newest release): the concurrent
// admission documentation's ClusterQueue (spec.concurrentAdmissionPolicy,
// alpha since v0.18, refused before as a field of a later release) loads,
// the policy noted as not modelled, and is refused where Kueue's webhook
// refuses it (validateConcurrentAdmissionPolicy); a field of the other
// API version names what this one has instead (Kueue's conversion); a
// field no release has says which API it is not a field of.
func TestKueueFieldsAcrossVersions(t *testing.T) {
	dir := t.TempDir()
	cq := `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: reservation}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team-cluster-queue
spec:
  namespaceSelector: {}
  concurrentAdmissionPolicy:
    migration:
      mode: TryPreferredFlavors
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: reservation
      resources:
      - {name: cpu, nominalQuota: 4}
    - name: spot
      resources:
      - {name: cpu, nominalQuota: 9}
`
	load := func(body string) (*scenarios.Policy, error) {
		path := filepath.Join(dir, "cq.yaml")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		return scenarios.LoadPolicy([]string{path})
	}
	pol, err := load(cq)
	require.NoError(t, err)
	require.Contains(t, strings.Join(pol.Notes, "\n"), `cq.yaml:9: ClusterQueue team-cluster-queue: spec.concurrentAdmissionPolicy (Kueue v0.18, alpha: workloads pursue several flavors at once; gpuplan tries them in order, as without it, and never migrates a running workload to a more preferred flavor (TryPreferredFlavors)) is read but not modelled`)
	for _, c := range []struct{ name, from, to, want string }{
		{"v1beta1 has no concurrent admission", "kueue.x-k8s.io/v1beta2\nkind: ClusterQueue", "kueue.x-k8s.io/v1beta1\nkind: ClusterQueue",
			`cq.yaml:15: ClusterQueue: unknown field "spec.concurrentAdmissionPolicy": a field of kueue.x-k8s.io/v1beta2 only (since Kueue v0.18): write the ClusterQueue as v1beta2 (gpuplan reads Kueue v0.19.2's API)`},
		{"v1beta1's cohort", "  namespaceSelector: {}\n", "  namespaceSelector: {}\n  cohort: all\n",
			`cq.yaml:15: ClusterQueue: unknown field "spec.cohort": v1beta1's name of the field; in kueue.x-k8s.io/v1beta2 it is spec.cohortName`},
		{"v1beta1's admission checks", "  namespaceSelector: {}\n", "  namespaceSelector: {}\n  admissionChecks: [prov]\n",
			`unknown field "spec.admissionChecks": a v1beta1 field; kueue.x-k8s.io/v1beta2 lists admission checks in spec.admissionChecksStrategy.admissionChecks`},
		{"no release has it", "concurrentAdmissionPolicy", "flavorFallbackStrategy",
			`cq.yaml:15: ClusterQueue: unknown field "spec.flavorFallbackStrategy": not a field of Kueue v0.19.2's kueue.x-k8s.io/v1beta2 ClusterQueue`},
		{"StrictFIFO", "  namespaceSelector: {}\n", "  namespaceSelector: {}\n  queueingStrategy: StrictFIFO\n",
			`spec.queueingStrategy: Invalid value: "StrictFIFO": StrictFIFO queueing strategy cannot be used when ConcurrentAdmissionPolicy is defined`},
		{"last acceptable flavor", "      mode: TryPreferredFlavors\n", "      mode: TryPreferredFlavors\n      constraints: {lastAcceptableFlavorName: on-demand}\n",
			`spec.concurrentAdmissionPolicy.migration.constraints.lastAcceptableFlavorName: Invalid value: "on-demand": must be one of the flavors defined in the ClusterQueue: [reservation spot]`},
		{"constraints need TryPreferredFlavors", "      mode: TryPreferredFlavors\n", "      mode: RetainFirstAdmission\n      constraints: {lastAcceptableFlavorName: spot}\n",
			`spec.concurrentAdmissionPolicy.migration.constraints: Forbidden: may only be set when migration.mode is "TryPreferredFlavors" (got "RetainFirstAdmission")`},
	} {
		bad := strings.Replace(cq, c.from, c.to, 1)
		require.NotEqual(t, cq, bad, c.name)
		_, err := load(bad)
		require.ErrorContains(t, err, c.want, c.name)
	}
	// A v1beta1 ClusterQueue's admissionChecks become admission checks as
	// Kueue's conversion makes them (before, they were dropped unsaid).
	old := strings.Replace(strings.Replace(cq, "kueue.x-k8s.io/v1beta2\nkind: ClusterQueue", "kueue.x-k8s.io/v1beta1\nkind: ClusterQueue", 1),
		"  concurrentAdmissionPolicy:\n    migration:\n      mode: TryPreferredFlavors\n", "  admissionChecks: [prov]\n", 1)
	pol, err = load(old)
	require.NoError(t, err)
	require.Contains(t, strings.Join(pol.Notes, "\n"), `ClusterQueue team-cluster-queue: spec.admissionChecks is read but not modelled`)
	// The version named is the one compiled in.
	mod, err := os.ReadFile("../../../go.mod")
	require.NoError(t, err)
	require.Contains(t, string(mod), "\tsigs.k8s.io/kueue "+scenarios.KueueVersion+"\n")
}

// An MPIJob (the MPI operator's kubeflow.org/v2beta1, shaped as its
// tensorflow-benchmarks example: one CPU launcher, two workers of 4 GPUs)
// reads as 3 pods, 8 GPUs: one job of two pod groups, one gang, that runs
// 0-1 h on two 4-GPU nodes and on one waits whole, no pod bound, not even
// the launcher that fits (it was a job of its own, and ran 0-1 h alone).
// With runLauncherAsWorker and the launcher asking for the workers' pod,
// it is one gang of 3 x 4 GPUs: on three 4-GPU nodes it runs whole, on
// two it waits whole, no pod bound. A JAXJob of two 1-GPU workers is one
// gang the same way.
func TestMPIJobAndJAXJobAreOneGang(t *testing.T) {
	const mpi = `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: tensorflow-benchmarks
spec:
  slotsPerWorker: 4
  runPolicy:
    cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: mpioperator/tensorflow-benchmarks:latest
            name: tensorflow-benchmarks
            resources: {requests: {cpu: "1", memory: 2Gi}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - image: mpioperator/tensorflow-benchmarks:latest
            name: tensorflow-benchmarks
            resources:
              limits:
                nvidia.com/gpu: 4
`
	const jax = `apiVersion: kubeflow.org/v1
kind: JAXJob
metadata:
  name: jaxjob-simple
spec:
  jaxReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: jax
            image: docker.io/kubeflow/jaxjob-simple:latest
            resources: {limits: {nvidia.com/gpu: 1}}
`
	scenario := func(file, pools string) string {
		return "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: gang}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n" + pools +
			"  workload:\n    manifests:\n    - {path: " + file + ", count: 1, duration: {distribution: constant, value: 1h}}\n"
	}
	gpus := func(n, g string) string {
		return "    - {name: gpu, count: " + n + ", gpuModel: A100-80GB, gpusPerNode: " + g + ", cpu: \"32\", memory: 256Gi}\n"
	}
	asWorker := strings.NewReplacer("  slotsPerWorker: 4\n", "  slotsPerWorker: 4\n  runLauncherAsWorker: true\n",
		`resources: {requests: {cpu: "1", memory: 2Gi}}`, "resources: {limits: {nvidia.com/gpu: 4}}").Replace(mpi)
	for _, c := range []struct {
		name, file, body, pools string
		jobs, pods, gpus        int
		start, end              int64
	}{
		{"mpi", "mpi.yaml", mpi, gpus("2", "4") + cpuNodes, 1, 3, 8, 0, 3_600_000},
		{"mpi-too-few", "mpi.yaml", mpi, gpus("1", "4") + cpuNodes, 1, 3, 8, -1, -1},
		{"mpi-launcher-as-worker", "mpi.yaml", asWorker, gpus("3", "4"), 1, 3, 12, 0, 3_600_000},
		{"mpi-launcher-as-worker-too-few", "mpi.yaml", asWorker, gpus("2", "4"), 1, 3, 12, -1, -1},
		{"jax", "jax.yaml", jax, gpus("2", "1"), 1, 2, 2, 0, 3_600_000},
		{"jax-too-few", "jax.yaml", jax, gpus("1", "1"), 1, 2, 2, -1, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runScenario(t, map[string]string{c.file: c.body}, scenario(c.file, c.pools))
			require.Len(t, res.Jobs, c.jobs)
			for _, j := range res.Jobs {
				require.Equal(t, c.start, j.Start)
				require.Equal(t, c.end, j.End)
				if c.start < 0 {
					require.Zero(t, j.PodsBound)
				}
			}
			_, _, err := workloads.Parse(c.file, []byte(c.body))
			require.NoError(t, err)
			objs, _, _ := workloads.Parse(c.file, []byte(c.body))
			pods, g := 0, 0
			for _, gr := range objs[0].Groups {
				pods += int(gr.Pods)
				g += int(gr.Pods) * int(gr.Pod.GPUs)
			}
			require.Equal(t, c.pods, pods)
			require.Equal(t, c.gpus, g)
		})
	}
	// The MPI operator's validation: one launcher, known replica types.
	for _, c := range []struct{ from, to, want string }{
		{"    Launcher:\n      replicas: 1\n", "    Launcher:\n      replicas: 2\n", `mpi.yaml:11:17: spec.mpiReplicaSpecs["Launcher"].replicas: is 2; an MPIJob has exactly one launcher`},
		{"    Worker:\n", "    Workers:\n", `spec.mpiReplicaSpecs["Workers"]: "Workers" is not a replica type of a MPIJob (it takes Launcher, Worker)`},
	} {
		_, _, err := workloads.Parse("mpi.yaml", []byte(strings.Replace(mpi, c.from, c.to, 1)))
		require.ErrorContains(t, err, c.want)
	}
}

// A LeaderWorkerSet shaped as LWS's vLLM example (2 replicas, size 2,
// leader and worker 8 GPUs each): two groups, each one gang of 2 pods, 16
// GPUs. On four 8-GPU nodes both run 0-1 h; on three one runs 0-1 h and
// the other, whole, 1-2 h; on one node neither can, and no pod binds.
func TestLeaderWorkerSetGroupsAreGangs(t *testing.T) {
	const lws = `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    restartPolicy: RecreateGroupOnPodRestart
    leaderTemplate:
      metadata:
        labels: {role: leader}
      spec:
        containers:
        - name: vllm-leader
          image: vllm/vllm-openai:latest
          resources: {limits: {nvidia.com/gpu: "8"}}
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: vllm/vllm-openai:latest
          resources: {limits: {nvidia.com/gpu: "8"}}
`
	const hour = 3_600_000
	for _, c := range []struct {
		name  string
		nodes string
		want  [][2]int64
	}{
		{"room-for-both", "4", [][2]int64{{0, hour}, {0, hour}}},
		{"room-for-one", "3", [][2]int64{{0, hour}, {hour, 2 * hour}}},
		{"no-room", "1", [][2]int64{{-1, -1}, {-1, -1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runScenario(t, map[string]string{"lws.yaml": lws}, "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: lws}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n"+
				"    - {name: h100, count: "+c.nodes+", gpuModel: H100-80GB, gpusPerNode: 8, cpu: \"96\", memory: 1Ti}\n"+
				"  workload:\n    manifests:\n    - {path: lws.yaml, count: 1, duration: {distribution: constant, value: 1h}}\n")
			var got [][2]int64
			var names []string
			for _, j := range res.Jobs {
				require.EqualValues(t, 2, j.Replicas)
				require.EqualValues(t, 8, j.Pod.GPUs)
				if j.Start < 0 {
					require.Zero(t, j.PodsBound)
				}
				got = append(got, [2]int64{j.Start, j.End})
				names = append(names, j.Name)
			}
			sort.Slice(got, func(a, b int) bool { return got[a][0] < got[b][0] })
			sort.Strings(names)
			require.Equal(t, c.want, got)
			require.Equal(t, []string{"vllm-0-0", "vllm-1-0"}, names)
		})
	}
	_, _, err := workloads.Parse("lws.yaml", []byte(strings.Replace(lws, "size: 2", "size: 0", 1)))
	require.ErrorContains(t, err, "lws.yaml:8:11: spec.leaderWorkerTemplate.size: is 0")
}

// A LeaderWorkerSet whose leader asks for other pods than its workers (a
// 4-CPU leader without GPUs, 2 workers of 8 GPUs; size 3, 2 replicas): each
// group is one job of two pod groups, one gang of 3 pods and 16 GPUs. On
// three 8-GPU nodes (24 GPUs) one group runs 0-1 h and the other waits
// whole, its leader too, and runs 1-2 h.
func TestLeaderWorkerSetOfOtherLeaderIsOneGangPerGroup(t *testing.T) {
	const lws = `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    leaderTemplate:
      spec:
        containers:
        - name: vllm-leader
          image: vllm/vllm-openai:latest
          resources: {requests: {cpu: "4", memory: 16Gi}}
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: vllm/vllm-openai:latest
          resources: {limits: {nvidia.com/gpu: "8"}}
`
	const hour = 3_600_000
	res := runScenario(t, map[string]string{"lws.yaml": lws}, "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: lws}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n"+
		"    - {name: h100, count: 3, gpuModel: H100-80GB, gpusPerNode: 8, cpu: \"96\", memory: 1Ti}\n"+
		"  workload:\n    manifests:\n    - {path: lws.yaml, count: 1, duration: {distribution: constant, value: 1h}}\n")
	var got [][2]int64
	for _, j := range res.Jobs {
		require.EqualValues(t, 3, j.Replicas)
		require.EqualValues(t, 3, j.PodsBound)
		require.EqualValues(t, 16000, j.AllocMilli)
		got = append(got, [2]int64{j.Start, j.End})
	}
	sort.Slice(got, func(a, b int) bool { return got[a][0] < got[b][0] })
	require.Equal(t, [][2]int64{{0, hour}, {hour, 2 * hour}}, got)
}

// A RayService (KubeRay's ray-service.sample shape: a head of 2 CPUs and
// a GPU worker group of 2 replicas, min 1, max 5) reads as its RayCluster:
// the head and 2 workers of 1 GPU.
func TestRayServiceReadsItsCluster(t *testing.T) {
	const rs = `apiVersion: ray.io/v1
kind: RayService
metadata:
  name: rayservice-sample
spec:
  serveConfigV2: |
    applications:
    - name: app
      import_path: app:deployment
  rayClusterConfig:
    rayVersion: "2.46.0"
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.46.0
            resources: {requests: {cpu: "2", memory: 4Gi}}
    workerGroupSpecs:
    - groupName: gpu-group
      replicas: 2
      minReplicas: 1
      maxReplicas: 5
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.46.0-gpu
            resources: {limits: {nvidia.com/gpu: 1}}
`
	objs, _, err := workloads.Parse("rs.yaml", []byte(rs))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	pods, gpus := 0, 0
	for _, g := range objs[0].Groups {
		pods += int(g.Pods)
		gpus += int(g.Pods) * int(g.Pod.GPUs)
	}
	require.Equal(t, 3, pods)
	require.Equal(t, 2, gpus)
	require.Contains(t, strings.Join(objs[0].Notes, "\n"), "a RayService serves until it is deleted")
}

// The first article's NodePool lists p3.8xlarge, which Karpenter's
// embedded AWS reference does not have: the NodePool (fixed to load)
// resolves to the other three, and a note names p3.8xlarge at its
// requirement's line (18) rather than dropping it silently.
func TestNodePoolTypeMissingFromTheReferenceIsNoted(t *testing.T) {
	body := strings.Replace(readSeed(t, "s0-03-karpenter-gpu-nodepool.yaml"), "        apiVersion: karpenter.k8s.aws/v1\n", "        group: karpenter.k8s.aws\n", 1)
	body = strings.Replace(body, "  amiFamily: AL2\n", "  amiSelectorTerms:\n  - alias: al2@latest\n", 1)
	path := filepath.Join(t.TempDir(), "np.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	p, err := scenarios.LoadPolicy([]string{path})
	require.NoError(t, err)
	notes := strings.Join(p.Notes, "\n")
	require.Contains(t, notes, "np.yaml:18: NodePool gpu-spot: p3.8xlarge not in Karpenter's embedded AWS instance types")
	require.Contains(t, notes, "resolves to 3 instance types")
}

// cluster.gpuConfigs shares only GPUs: a CPU pool named by its instance
// type (c7i.4xlarge, no GPU) and a pool given by instance type alone
// (g5.12xlarge, 4 A10G from the catalog) take the lone device plugin
// config as the GPU Operator would: the CPU pool nothing, the g5 pool 4
// replicas.
func TestGPUConfigsShareOnlyGPUs(t *testing.T) {
	dir := t.TempDir()
	cm := "s0-04-time-slicing-configmap.yaml"
	require.NoError(t, os.WriteFile(filepath.Join(dir, cm), []byte(readSeed(t, cm)), 0o644))
	pod := "s0-05-pod-inference-small-timesliced.yaml"
	require.NoError(t, os.WriteFile(filepath.Join(dir, pod), []byte(readSeed(t, pod)), 0o644))
	s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: share}
spec:
  cluster:
    pools:
    - {name: cpu, count: 1, instanceType: c7i.4xlarge, cpu: "16", memory: 32Gi}
    - {name: g5, count: 1, instanceType: g5.12xlarge}
    gpuConfigs: [`+cm+`]
  workload:
    manifests:
    - {path: `+pod+`, count: 1, duration: {distribution: constant, value: 1h}}
`))
	require.NoError(t, err)
	require.Equal(t, "none", sharing(s.Spec.Cluster.Pools[0].Sharing))
	require.Equal(t, "timeSlicing 4", sharing(s.Spec.Cluster.Pools[1].Sharing))
}
