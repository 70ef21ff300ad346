package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// The Volcano Job example: the workload's volcano block becomes each job's
// lifecycle policies (RestartJob on PodEvicted, maxRetry 3) beside its
// checkpoints, a variant's minAvailable each job's gang size, and the
// batch-job variant drops it for Kubernetes Job semantics.
func TestVolcanoJobSpec(t *testing.T) {
	s, err := LoadFile("examples/volcano-jobs.yaml")
	require.NoError(t, err)
	first := func(sc *Scenario) cluster.JobSpec {
		b, err := sc.Build(Options{})
		require.NoError(t, err)
		defer b.Close()
		var j cluster.JobSpec
		ok, err := b.Config.Workload.Next(&j)
		require.NoError(t, err)
		require.True(t, ok)
		return j
	}
	j := first(s)
	require.Equal(t, &cluster.VolcanoPolicies{OnEvicted: cluster.VolcanoRestartJob, OnFailed: cluster.VolcanoSync, MaxRetry: 3}, j.Recovery.Volcano)
	require.Equal(t, cluster.Time(30*60*1000), j.Recovery.CheckpointInterval)
	require.Zero(t, j.MinAvailable)

	v, err := s.Variant("min-available-4")
	require.NoError(t, err)
	require.Equal(t, int32(4), first(v).MinAvailable)
	v, err = s.Variant("abort-on-eviction")
	require.NoError(t, err)
	require.Equal(t, cluster.VolcanoAbortJob, first(v).Recovery.Volcano.OnEvicted)
	v, err = s.Variant("batch-job")
	require.NoError(t, err)
	j = first(v)
	require.Nil(t, j.Recovery.Volcano)
	require.Equal(t, int32(cluster.DefaultBackoffLimit), j.Recovery.BackoffLimit)
}

// Bad Volcano fields are refused with the field named: an unknown action
// or event, exit-code policies and timeouts (not modelled), CompleteJob,
// two policies for one event, and a Kubernetes Job's backoffLimit beside
// Volcano's policies.
func TestVolcanoJobSpecErrors(t *testing.T) {
	body, err := os.ReadFile("examples/volcano-jobs.yaml")
	require.NoError(t, err)
	const from = "      - event: PodEvicted\n        action: RestartJob\n"
	for _, c := range []struct{ to, want string }{
		{"      - event: PodEvicted\n        action: Reboot\n", `spec.workload.volcano.policies[0].action: action "Reboot" is not one of RestartJob`},
		{"      - event: TaskCompleted\n        action: RestartJob\n", `spec.workload.volcano.policies[0].event: event "TaskCompleted" is not one gpuplan produces`},
		{"      - exitCode: 3\n        action: RestartJob\n", "spec.workload.volcano.policies[0].exitCode: exit-code policies are not modelled"},
		{"      - event: PodEvicted\n        action: RestartJob\n        timeout: 1m\n", "spec.workload.volcano.policies[0].timeout: policy timeouts are not modelled"},
		{"      - event: PodEvicted\n        action: CompleteJob\n", "CompleteJob on a pod event is not modelled"},
		{"      - events: [PodEvicted, PodFailed]\n        action: RestartJob\n      - event: \"*\"\n        action: AbortJob\n", "spec.workload.volcano.policies[1]: a second policy for PodEvicted"},
	} {
		_, err := Parse("v.yaml", "examples", []byte(strings.Replace(string(body), from, c.to, 1)))
		require.ErrorContains(t, err, c.want, c.to)
		require.ErrorContains(t, err, "v.yaml:")
	}
	bad := strings.Replace(string(body), "      checkpoint: {interval: 30m, cost: 2m, restore: 3m}\n", "      checkpoint: {interval: 30m, cost: 2m, restore: 3m}\n      backoffLimit: 2\n", 1)
	_, err = Parse("v.yaml", "examples", []byte(bad))
	require.ErrorContains(t, err, "spec.workload.volcano: recovery.backoffLimit and recovery.ignoreDisruptions are a Kubernetes Job's")
	bad = strings.Replace(string(body), "      maxRetry: 3\n", "      maxRetry: 0\n      minAvailable: 0\n", 1)
	_, err = Parse("v.yaml", "examples", []byte(bad))
	require.ErrorContains(t, err, "spec.workload.volcano.maxRetry: must be at least 1")
}

// Volcano's scheduler configuration, as its Helm chart ships it: the
// default actions (enqueue, allocate, backfill) leave queues without
// reclaim or preemption; the CI configuration's reclaim and preempt
// actions turn on reclaim between queues and priority preemption within
// one. Plugins gpuplan does not model are named.
func TestVolcanoSchedulerConf(t *testing.T) {
	s, err := LoadFile("examples/two-teams/scenario.yaml")
	require.NoError(t, err)
	build := func(conf string) (*admissionSpecView, string) {
		b, err := s.Build(Options{PolicyManifests: []string{"examples/two-teams/policy-volcano", conf}})
		require.NoError(t, err)
		defer b.Close()
		return &admissionSpecView{b.Config.Admission.ClusterQueues[0].Preempt.ReclaimWithinCohort, b.Config.Admission.ClusterQueues[0].Preempt.WithinClusterQueue}, strings.Join(b.Assumptions, "\n")
	}
	v, notes := build("testdata/volcano/scheduler-configmap.yaml")
	require.Equal(t, &admissionSpecView{admission.Never, admission.Never}, v)
	require.Contains(t, notes, "plugin overcommit, plugin drf, plugin nodeorder, plugin binpack read but not modelled")
	v, notes = build("testdata/volcano/scheduler-ci-configmap.yaml")
	require.Equal(t, &admissionSpecView{admission.Any, admission.LowerPriority}, v)
	require.Contains(t, notes, "action reclaim: a queue below its deserved share reclaims from queues above theirs")
	require.Contains(t, notes, "plugin sla")

	_, err = parseVolcanoScheduler("v.conf", []byte("actions: \"\"\n"))
	require.ErrorContains(t, err, "v.conf: actions: no scheduler actions listed")
	_, err = parseVolcanoScheduler("v.conf", []byte("actions: allocate\ntier: []\n"))
	require.ErrorContains(t, err, `unknown field "tier"`)
}

type admissionSpecView struct{ reclaim, within admission.Policy }
