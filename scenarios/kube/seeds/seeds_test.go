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
	aksMIG = `    - {name: a100mig, count: 1, gpuModel: A100-80GB, gpusPerNode: 1, cpu: "24", memory: 220Gi,
       labels: {accelerator: nvidia, nvidia.com/mig.config: hptuning-1g10gb, nvidia.com/mig.config.state: success},
       taints: [{key: sku, value: gpu, effect: NoSchedule}],
       sharing: {mig: {strategy: mixed, layout: all-1g.10gb}}}
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
	// One GPU time-sliced 4 ways, as the first article's ConfigMap (s0-04)
	// sets it.
	timeSliced = `    - {name: shared, count: 1, gpuModel: A100-80GB, gpusPerNode: 1, cpu: "12", memory: 110Gi,
       sharing: {timeSlicing: {replicas: 4}}}
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
		want: []string{"s0-03-karpenter-gpu-nodepool.yaml:1:", `unknown field "apiVersion"`},
		what: "refused: nodeClassRef.apiVersion is not a field of karpenter.sh/v1 (it wants group)"},
	{file: "s0-04-time-slicing-configmap.yaml", slot: slotNone, outcome: notAnInput,
		what: "the device plugin's time-slicing config: give cluster.pools[].sharing.timeSlicing.replicas: 4"},
	{file: "s0-05-pod-inference-small-timesliced.yaml", slot: slotWorkload, outcome: runs, pools: timeSliced, jobs: 1, gpus: 1,
		what: "the Pod runs on one of 4 time-slicing replicas of a GPU (a quarter of it in the ledger; 4 such pods share it, each at a quarter of the speed)"},
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
		what: "enables MIG by hand (7 x 1g.10gb, mixed): cluster.pools[].sharing.mig {strategy: mixed, layout: all-1g.10gb}"},
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
	{file: "s2-04-mig-parted-configmap-job-mig-trial.yaml", slot: slotWorkload, outcome: runs, pools: aksMIG, jobs: 1, gpus: 1,
		what: "the Job runs on a 1g.10gb slice of a pool given as MIG all-1g.10gb; mig-parted's ConfigMap is skipped"},
	{file: "s2-05-job-isolated-gpu-training.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 1,
		what: "runs on the T4 pool"},
	{file: "s2-06-pytorchjob-nccl.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 2,
		what: "Master and Worker (1 GPU each) run as one gang"},
	{file: "s2-07-tfjob-multiworker.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 2,
		what: "two Workers (1 GPU each) run as one gang"},
	{file: "s2-08-kaito-workspace.yaml", slot: slotWorkload, outcome: refused,
		want: []string{"s2-08-kaito-workspace.yaml: no workload in the file"},
		what: "the KAITO Workspace is not read"},
	{file: "s2-09-networkpolicy-nccl.yaml", slot: slotNone, outcome: notAnInput,
		what: "a NetworkPolicy: the network is not modelled"},
	{file: "s2-10-kueue-two-teams-and-job.yaml", slot: slotPolicy, outcome: refused,
		want: []string{"s2-10-kueue-two-teams-and-job.yaml:32:7: spec.resourceGroups[0].flavors[0].resources", "0 covered resources"},
		what: "refused: its ClusterQueues omit coveredResources, which Kueue requires"},
	{file: "s2-10-kueue-two-teams-and-job.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 2,
		what: "its Job (2 pods of 1 GPU) runs; the Kueue objects are skipped"},
	{file: "s2-11-volcano-job.yaml", slot: slotWorkload, outcome: runs, pools: aksT4, jobs: 1, gpus: 2,
		what: "two workers (1 GPU each), minAvailable 2, RestartJob on PodEvicted and PodFailed"},
	{file: "s2-12-priorityclasses.yaml", slot: slotPolicy, outcome: refused,
		want: []string{"s2-12-priorityclasses.yaml: the policy has no ClusterQueue, Volcano Queue or NodePool"},
		what: "alone refused: PriorityClasses are read beside a queue policy, or give priority"},
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
		what: "labels nodes for mig-parted: give the pool the label and its MIG layout"},
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
			case slotWorkload:
				checkWorkload(t, r)
			case slotPolicy:
				_, err := scenarios.LoadPolicy([]string{path})
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
	data, err := os.ReadFile(filepath.Join("testdata", r.file))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, r.file), data, 0o644))
	pools := r.pools
	if pools == "" {
		pools = cpuNodes
	}
	body := "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: seed}\nspec:\n  cluster:\n    pools:\n" + pools +
		"  horizon: 24h\n  workload:\n    manifests:\n    - {path: " + r.file + ", count: 1, duration: {distribution: constant, value: 1h}}\n"
	s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(body))
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
// time-sliced one (s0-05) four times on one GPU shared 4 ways: all four
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
	ts := "s0-05-pod-inference-small-timesliced.yaml"
	res := runScenario(t, map[string]string{ts: readSeed(t, ts)}, scenario(timeSliced, ts, 4))
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
