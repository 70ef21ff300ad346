package workloads_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// run loads a scenario written against testdata/ and runs it.
func run(t *testing.T, body string) *sim.Result {
	t.Helper()
	s, err := scenarios.Parse("s.yaml", "testdata", []byte(body))
	require.NoError(t, err)
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	return res
}

const (
	minute = int64(60_000)
	hour   = 60 * minute
)

type span struct {
	name               string
	submit, start, end int64
	replicas           int32
}

func spans(res *sim.Result) []span {
	var out []span
	for _, j := range res.Jobs {
		out = append(out, span{j.Name, j.Submit, j.Start, j.End, j.Replicas})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].name != out[b].name {
			return out[a].name < out[b].name
		}
		return out[a].end > out[b].end
	})
	return out
}

const cpuCluster = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: m}
spec:
  cluster:
    pools:
    - {name: cpu, count: 2, cpu: "8", memory: 32Gi}
`

// Kueue's quick-start: its own sample Job (3 pods of 1 CPU, `sleep 60`)
// submitted four times at once to its own quick-start queues (a
// ClusterQueue of 9 CPUs). The quota admits three (9 CPUs); the fourth
// waits for the first to finish at 60 s and ends at 120 s. The nodes (16
// CPUs) would hold four at once: the wait is the quota's.
func TestKueueSampleJobUnderQuickStartQuota(t *testing.T) {
	res := run(t, cpuCluster+`  policy:
    manifests: [kueue/quick-start-setup.yaml]
  workload:
    manifests:
    - {path: kueue/sample-job.yaml, count: 4}
`)
	got := spans(res)
	require.Len(t, got, 4)
	for i, s := range got[:3] {
		require.Equal(t, span{got[i].name, 0, 0, 60_000, 3}, s)
	}
	require.Equal(t, span{"sample-job-3", 0, 60_000, 120_000, 3}, got[3])
	require.Equal(t, []string{"sample-job-0", "sample-job-1", "sample-job-2", "sample-job-3"}, []string{got[0].name, got[1].name, got[2].name, got[3].name})
	for _, j := range res.Jobs {
		require.Equal(t, "user-queue", j.Queue)
		require.EqualValues(t, 1000, j.Pod.MilliCPU)
		require.EqualValues(t, 200, j.Pod.MemoryMiB)
	}
}

// Without the quota the same four Jobs (12 CPUs) fit the two 8-CPU nodes
// at once: every one runs 0-60 s.
func TestKueueSampleJobWithoutPolicy(t *testing.T) {
	res := run(t, cpuCluster+`  workload:
    manifests:
    - {path: kueue/sample-job.yaml, count: 4}
`)
	for _, s := range spans(res) {
		require.Equal(t, int64(0), s.start, s.name)
		require.Equal(t, int64(60_000), s.end, s.name)
	}
}

const gpuCluster = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: m}
spec:
  cluster:
    pools:
    - {name: gpu, count: 3, gpuModel: A100, gpusPerNode: 1, cpu: "8", memory: 64Gi}
`

// Kubeflow's published PyTorchJob (mnist over gloo): a Master and a Worker
// of one GPU each (given as limits, which stand for requests) are one gang
// of two pods. Two copies on three one-GPU nodes: the first runs 0-30 min;
// the second needs two GPUs with one free, so it waits whole until 30 min
// and ends at 60.
func TestKubeflowPyTorchJobIsOneGang(t *testing.T) {
	res := run(t, gpuCluster+`  workload:
    manifests:
    - {path: kubeflow/pytorch_job_mnist_gloo.yaml, count: 2, duration: 30m}
`)
	require.Equal(t, []span{
		{"pytorch-dist-mnist-gloo-0", 0, 0, 30 * minute, 2},
		{"pytorch-dist-mnist-gloo-1", 0, 30 * minute, 60 * minute, 2},
	}, spans(res))
	for _, j := range res.Jobs {
		require.EqualValues(t, 1, j.Pod.GPUs)
		require.Equal(t, "pytorch_job_mnist_gloo", j.Queue) // no queue label: the file's name
	}
}

// Kubernetes' own CronJob example ("hello", every minute, in the
// batch/v1beta1 of its time) with a 10 s duration for the file: over five
// minutes it runs at 0, 1, 2, 3 and 4 min, each for 10 s.
func TestKubernetesCronJobExample(t *testing.T) {
	res := run(t, gpuCluster+`  horizon: 5m
  workload:
    manifests:
    - {path: kubernetes/cronjob.yaml, duration: 10s}
`)
	var want []span
	for i := int64(0); i < 5; i++ {
		want = append(want, span{"hello-" + string(rune('0'+i)), i * minute, i * minute, i*minute + 10_000, 1})
	}
	require.Equal(t, want, spans(res))
}

// Kueue's sample CronJob (every minute, 3 pods of 1 CPU) under its
// quick-start quota of 9 CPUs, each run 3.5 min, five runs (count). Runs
// 0, 1 and 2 start at 0, 1 and 2 min and end at 3.5, 4.5, 5.5; run 3 (due
// at 3) waits for the quota until 3.5, ends at 7; run 4 (due at 4) waits
// until 4.5 and ends at 8.
func TestKueueSampleCronJobUnderQuota(t *testing.T) {
	res := run(t, cpuCluster+`  policy:
    manifests: [kueue/quick-start-setup.yaml]
  workload:
    manifests:
    - {path: kueue/sample-cronjob.yaml, count: 5, duration: 3m30s}
`)
	m := minute
	require.Equal(t, []span{
		{"sample-cronjob-0", 0, 0, 7 * m / 2, 3},
		{"sample-cronjob-1", m, m, 9 * m / 2, 3},
		{"sample-cronjob-2", 2 * m, 2 * m, 11 * m / 2, 3},
		{"sample-cronjob-3", 3 * m, 7 * m / 2, 7 * m, 3},
		{"sample-cronjob-4", 4 * m, 9 * m / 2, 8 * m, 3},
	}, spans(res))
}

// Kueue's other samples: a TFJob's PS and two Workers ask for the same
// pods, so they are one gang of three; a JobSet's workers (1 CPU) and
// driver (2 CPUs) differ, so they are one job of two pod groups, one gang
// of two pods, 100 s (their sleep); a RayJob's head and worker (1 CPU
// each) are one gang of two; a RayCluster's head (2G) and worker (1G)
// differ: one job of two pod groups, one gang of two.
// Volcano's TensorFlow example (a ps and two workers, minAvailable 3) is
// one gang of three with its PodEvicted policy. Kueue's quick-start Job
// (3 pods, sleep 30) and shared-quota Job (one 3-CPU pod, sleep 300) run
// their sleeps. All of it (16 CPUs) fits the two 8-CPU nodes at once.
func TestOtherSamplesRun(t *testing.T) {
	res := run(t, cpuCluster+`  workload:
    manifests:
    - {path: kueue/sample-tfjob.yaml, count: 1, duration: 5m}
    - {path: kueue/sample-jobset.yaml, count: 1}
    - {path: kueue/ray-job-sample.yaml, count: 1, duration: 2m}
    - {path: kueue/ray-cluster-sample.yaml, count: 1, duration: 1m}
    - {path: volcano/tf-dist-mnist-example.yaml, count: 1, duration: 4m}
    - {path: kueue/quick-start-job.yaml, count: 1}
    - {path: kueue/shared-quota-sample-job.yaml, count: 1}
`)
	require.Equal(t, []span{
		{"raycluster-complete-0", 0, 0, minute, 2},
		{"rayjob-sample-0", 0, 0, 2 * minute, 2},
		{"sample-job-0", 0, 0, 300_000, 1}, // shared-quota: 1 pod of 3 CPUs, sleep 300
		{"sample-job-0", 0, 0, 30_000, 3},  // quick-start: 3 pods, sleep 30
		{"sleep-job-0", 0, 0, 100_000, 2},
		{"tensorflow-dist-mnist-0", 0, 0, 5 * minute, 3},
		{"tensorflow-dist-mnist-0", 0, 0, 4 * minute, 3},
	}, spans(res))
	for _, j := range res.Jobs {
		if j.Name == "tensorflow-dist-mnist-0" && j.Duration == 4*minute {
			require.NotNil(t, j.Recovery())
			require.NotNil(t, j.Recovery().Volcano)
			require.Equal(t, "default", j.Queue)
		}
	}
}

// The example scenario: the nightly CronJob runs at 02:00 New York time,
// 07:00 UTC while New York is on EST: 7 h and 31 h after the start
// (2026-03-06T00:00Z); on Sunday 8 March 02:00 does not exist there and
// the night is skipped. Each run is 64 shards 8 at a time, 8 rounds of
// 20 min: 160 min. Training runs are one gang of four 8-GPU pods; a Ray
// Tune sweep is one job of two pod groups: its 8 one-GPU trials (the
// main group, the one asking for GPUs) and its CPU head (4 CPUs, 16 GiB),
// 9 pods whose gang is the head and the trials' minReplicas 4: 5.
func TestManifestsExample(t *testing.T) {
	s, err := scenarios.LoadFile("../../examples/manifests/scenario.yaml")
	require.NoError(t, err)
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	var nightly []int64
	trains, sweeps, whole := 0, 0, 0
	for _, j := range res.Jobs {
		switch {
		case j.Queue == "batch":
			nightly = append(nightly, j.Submit)
			require.Equal(t, 160*minute, j.Duration)
			require.EqualValues(t, 8, j.Replicas)
			require.EqualValues(t, 1000, j.Priority)
		case len(j.Name) > 9 && j.Name[:9] == "train-llm":
			trains++
			require.EqualValues(t, 4, j.Replicas)
			require.EqualValues(t, 8, j.Pod.GPUs)
			require.EqualValues(t, 100, j.Priority)
		case strings.HasPrefix(j.Name, "tune-sweep-"):
			sweeps++
			require.EqualValues(t, 9, j.Replicas)
			require.EqualValues(t, 5, j.MinAvailable)
			require.EqualValues(t, 1, j.Pod.GPUs, "the trials' pod")
			if j.Outcome == sim.Completed {
				require.EqualValues(t, 8000, j.AllocMilli, "8 trials of one GPU, the head none")
				var gpu, cpu int64
				for u := range j.Usage() {
					gpu += u.Held[sim.ResGPU]
					cpu += u.Held[sim.ResCPU]
				}
				if gpu == 8000*45*minute {
					// Bound at once and never disrupted: every pod, the
					// head's too, held its requests for the 45 min.
					whole++
					require.Equal(t, int64(8*8000+4000)*45*minute, cpu, "8 trials of 8 CPUs and the head's 4, 45 min")
				}
			}
		}
	}
	require.Equal(t, []int64{7 * hour, 31 * hour}, nightly)
	require.Positive(t, trains)
	require.Positive(t, sweeps)
	require.Positive(t, whole)
	require.Equal(t, len(res.Jobs), len(nightly)+trains+sweeps)
}

// Priorities: the Kueue WorkloadPriorityClass label wins over the pods'
// priorityClassName (scoring: nightly, 1000); without it the pods'
// PriorityClass counts, with its preemptionPolicy (urgent: high, 500,
// Never). A class the policy does not define is an error at the object.
func TestPriorityClasses(t *testing.T) {
	res := run(t, cpuCluster+`  policy:
    manifests: [kueue/quick-start-setup.yaml, gpuplan/priorities.yaml]
  workload:
    manifests:
    - {path: gpuplan/prioritized-jobs.yaml, count: 1}
`)
	byName := map[string]sim.JobRecord{}
	for _, j := range res.Jobs {
		byName[j.Name] = j
	}
	require.EqualValues(t, 1000, byName["scoring-0"].Priority)
	require.Zero(t, byName["scoring-0"].Flags&cluster.FlagPreemptNever)
	require.EqualValues(t, 500, byName["urgent-0"].Priority)
	require.NotZero(t, byName["urgent-0"].Flags&cluster.FlagPreemptNever)

	s, err := scenarios.Parse("s.yaml", "testdata", []byte(cpuCluster+`  policy:
    manifests: [kueue/quick-start-setup.yaml]
  workload:
    manifests:
    - {path: gpuplan/prioritized-jobs.yaml, count: 1}
`))
	if err == nil {
		_, err = s.Build(scenarios.Options{})
	}
	require.ErrorContains(t, err, `testdata/gpuplan/prioritized-jobs.yaml:1: Job scoring: priority class "nightly" is not a PriorityClass or WorkloadPriorityClass of spec.policy's manifests`)
}

// An MPIJob's Launcher (1 CPU) and Workers (2 x 8 GPUs) ask for different
// pods: one job of two pod groups, one gang of 3 pods (it was two jobs of
// their own, the Launcher's "completing" at 2 h while the Workers
// waited). On two 8-GPU nodes, one held by an 8-GPU Job for its hour, the
// Launcher and a Worker would fit at once but the second Worker not: the
// MPIJob waits whole, and at 1 h all three pods start together and run
// its 2 h, to 3 h. It holds 16 GPUs for 2 h: 32 GPU-hours.
func TestMPIJobLauncherAndWorkersAreOneGang(t *testing.T) {
	res := run(t, `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: m}
spec:
  cluster:
    pools:
    - {name: a100, count: 2, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "96", memory: 1024Gi}
  workload:
    manifests:
    - {path: gpuplan/mpijob-launcher-workers.yaml, count: 1}
`)
	require.Equal(t, []span{
		{"busy-0", 0, 0, hour, 1},
		{"mpi-0", 0, hour, 3 * hour, 3},
	}, spans(res))
	for _, j := range res.Jobs {
		if j.Name != "mpi-0" {
			continue
		}
		require.EqualValues(t, 3, j.PodsBound)
		require.EqualValues(t, 0, j.MinAvailable, "the whole job")
		var gpu int64
		for u := range j.Usage() {
			gpu += u.Held[sim.ResGPU]
		}
		require.Equal(t, int64(32), gpu/1000/hour, "16 GPUs x 2 h")
		require.Zero(t, gpu%(1000*hour))
	}
}
