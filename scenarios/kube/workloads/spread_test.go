package workloads_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
)

// zonedCluster: three one-node pools in zones z1 (4 GPUs), z2 and z3 (2
// GPUs each).
const zonedCluster = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: m}
spec:
  horizon: 1h
  cluster:
    pools:
    - {name: a, count: 1, gpuModel: A100, gpusPerNode: 4, cpu: "16", memory: 64Gi, topology: {zones: [z1]}}
    - {name: b, count: 1, gpuModel: A100, gpusPerNode: 2, cpu: "16", memory: 64Gi, topology: {zones: [z2]}}
    - {name: c, count: 1, gpuModel: A100, gpusPerNode: 2, cpu: "16", memory: 64Gi, topology: {zones: [z3]}}
  workload:
    manifests:
    - {path: gpuplan/%s.yaml, count: 1}
`

// A Job of 8 one-GPU pods, maxSkew 1 over the zones, on 8 GPUs in zones
// of 4, 2 and 2. DoNotSchedule: z2 and z3 fill at 2 pods, so z1 stops at
// 2+1 = 3; the eighth pod would make z1 4 against 2 (skew 2 > 1): 7 pods
// fit, and the Job, whose pods the default profile's Gang plugin binds
// all or none, never starts. ScheduleAnyway:
// the eighth goes to z1's free GPU and the Job runs 0-60 s.
func TestSpreadConstraintsFromAJobTemplate(t *testing.T) {
	res := run(t, strings.Replace(zonedCluster, "%s", "spread-donotschedule", 1))
	require.Len(t, res.Jobs, 1)
	require.Equal(t, int32(0), res.Jobs[0].PodsBound, "a Job's pods are a gang under the default profile: 7 of 8 bind none")
	require.Equal(t, int64(-1), res.Jobs[0].Start, "never ran")

	res = run(t, strings.Replace(zonedCluster, "%s", "spread-scheduleanyway", 1))
	require.Len(t, res.Jobs, 1)
	require.Equal(t, span{"web-0", 0, 0, 60_000, 8}, spans(res)[0])
}

// The constraints are checked as the API server checks them, at
// file:line:field.
func TestSpreadConstraintErrors(t *testing.T) {
	for _, c := range []struct{ old, new, field, msg string }{
		{"maxSkew: 1", "maxSkew: 0", "topologySpreadConstraints[0].maxSkew", "must be greater than zero"},
		{"whenUnsatisfiable: DoNotSchedule", "whenUnsatisfiable: Never", "topologySpreadConstraints[0].whenUnsatisfiable", "is not DoNotSchedule or ScheduleAnyway"},
		{"whenUnsatisfiable: DoNotSchedule", "whenUnsatisfiable: ScheduleAnyway\n        minDomains: 2", "topologySpreadConstraints[0].minDomains", "only with whenUnsatisfiable DoNotSchedule"},
		{"matchLabels: {app: web}", "matchExpressions: [{key: app, operator: In}]", "topologySpreadConstraints[0].labelSelector.matchExpressions[0].values", "In needs values"},
	} {
		data, err := os.ReadFile("testdata/gpuplan/spread-donotschedule.yaml")
		require.NoError(t, err)
		objs, _, err := workloads.Parse("j.yaml", []byte(strings.Replace(string(data), c.old, c.new, 1)))
		require.Error(t, err, c.new, objs)
		require.Regexp(t, `^j\.yaml:\d+(:\d+)?: spec\.template\.spec\.`+regexp.QuoteMeta(c.field)+": ", err.Error())
		require.Contains(t, err.Error(), c.msg, c.new)
	}
}

// A PyTorchJob whose Master and Worker templates ask for the same pods but
// differ in placement (the Master alone tolerates a taint) is one gang
// placed where both may go; the spread constraint both templates carry
// holds over the merged gang as over the Job above: 8 one-GPU pods, maxSkew
// 1 over zones of 4, 2 and 2 GPUs, DoNotSchedule, fit 2+2+3 = 7 and the
// gang never starts; ScheduleAnyway, it runs 0-60 s. (The merge dropped
// the spread constraints: all 8 fit and it ran at 0 under DoNotSchedule.)
func TestSpreadConstraintsSurviveMergedTemplates(t *testing.T) {
	res := run(t, strings.Replace(zonedCluster, "%s", "spread-pytorchjob-donotschedule", 1))
	require.Len(t, res.Jobs, 1)
	require.Equal(t, int64(-1), res.Jobs[0].Start, "7 of 8 pods fit under maxSkew 1: the gang never starts")

	res = run(t, strings.Replace(zonedCluster, "%s", "spread-pytorchjob-scheduleanyway", 1))
	require.Len(t, res.Jobs, 1)
	require.Equal(t, int64(0), res.Jobs[0].Start)
	require.Equal(t, int64(60_000), res.Jobs[0].End)
}
