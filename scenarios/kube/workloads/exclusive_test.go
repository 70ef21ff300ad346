package workloads_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

const racksScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: excl}
spec:
  cluster:
    pools:
    - {name: r1, count: 2, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "64", memory: 512Gi, labels: {cloud.provider.com/topology-rack: r1}}
    - {name: r2, count: 2, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "64", memory: 512Gi, labels: {cloud.provider.com/topology-rack: r2}}
  workload:
    manifests:
    - {path: gpuplan/exclusive-jobset.yaml, count: 1}
`

// JobSet's exclusive placement on racks: two racks of two 8-GPU nodes
// (pools r1 and r2), a JobSet of 3 child Jobs of 2 four-GPU pods, an
// hour each. The 24 GPUs fit the 32 at once, but each child Job must
// keep to one rack and no rack may hold two child Jobs: train-w-0 and
// train-w-1 run from 0 to 1 h, each on one rack only (2 pods x 4 GPUs x
// 1 h = 8 GPU-hours held there, none on the other), and train-w-2 waits
// for a rack to free, running 1 h to 2 h. Read without the annotation,
// the JobSet was one gang of 6 pods, all running from 0.
func TestJobSetExclusiveTopologyPerRack(t *testing.T) {
	res := run(t, racksScenario)
	got := spans(res)
	require.Len(t, got, 3)
	starts := map[int64]int{}
	for _, s := range got {
		require.Equal(t, int32(2), s.replicas, s.name)
		require.Equal(t, s.start+hour, s.end, s.name)
		starts[s.start]++
	}
	require.Equal(t, map[int64]int{0: 2, hour: 1}, starts)
	// The two that ran together held 8 GPU-hours each, in one rack each,
	// not the same one.
	racks := map[int32]bool{}
	for _, j := range res.Jobs {
		if j.Start != 0 {
			continue
		}
		held := map[int32]int64{}
		for u := range j.Usage() {
			held[u.Pool] += u.Held[0]
		}
		require.Len(t, held, 1, j.Name)
		for p, h := range held {
			require.Equal(t, int64(8*1000*hour), h, j.Name)
			racks[p] = true
		}
	}
	require.Len(t, racks, 2)

	// Submitted twice at once, the file is two JobSets whose child Jobs
	// exclude each other as well: 6 child Jobs, two racks, so two run at
	// a time, from 0, 1 h and 2 h. (Keyed alike, the second set's w-0
	// would join the first's rack, 8 GPUs free there, and start at 0.)
	res = run(t, strings.Replace(racksScenario, "count: 1", "count: 2", 1))
	starts = map[int64]int{}
	for _, s := range spans(res) {
		require.Equal(t, s.start+hour, s.end, s.name)
		starts[s.start]++
	}
	require.Equal(t, map[int64]int{0: 2, hour: 2, 2 * hour: 2}, starts)
}

// The reader gives each child Job the terms JobSet's pod webhook injects:
// pod affinity to its own job key and anti-affinity to any other, on the
// annotated key; the annotation is read on a replicated job's Job
// template too. The node-selector strategy, which needs nodes labelled
// per Job, is refused at its field.
func TestJobSetExclusiveTopologyTerms(t *testing.T) {
	js := func(setAnn, jobAnn string) string {
		return `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: s, annotations: {` + setAnn + `}}
spec:
  replicatedJobs:
  - name: a
    replicas: 2
    template:
      metadata: {annotations: {` + jobAnn + `}}
      spec: {parallelism: 2, template: {spec: {containers: [{name: c, image: i, command: [sleep, "30"], resources: {requests: {nvidia.com/gpu: "8"}}}]}}}
`
	}
	objs, _, err := workloads.Parse("j.yaml", []byte(js("", "alpha.jobset.sigs.k8s.io/exclusive-topology: rack")))
	require.NoError(t, err)
	gs := objs[0].Groups
	require.Len(t, gs, 2)
	for i, key := range []string{"s-a-0", "s-a-1"} {
		require.Equal(t, int32(2), gs[i].Pods)
		require.Equal(t, key, gs[i].Pod.Labels.Labels["jobset.sigs.k8s.io/job-key"])
		require.Equal(t, []cluster.PodAffinityTerm{
			{TopologyKey: "rack", Selector: []cluster.Requirement{{Key: "jobset.sigs.k8s.io/job-key", Op: cluster.OpIn, Values: []string{key}}}},
			{Anti: true, TopologyKey: "rack", Selector: []cluster.Requirement{{Key: "jobset.sigs.k8s.io/job-key", Op: cluster.OpExists}, {Key: "jobset.sigs.k8s.io/job-key", Op: cluster.OpNotIn, Values: []string{key}}}},
		}, gs[i].Constraints.PodAffinity)
	}
	require.Contains(t, strings.Join(objs[0].Notes, "\n"), "each of the 2 child Jobs of a is a job of its own")

	for _, c := range []struct{ set, job, want string }{
		{"alpha.jobset.sigs.k8s.io/exclusive-topology: rack, alpha.jobset.sigs.k8s.io/node-selector: \"true\"", "", "j.yaml:3:34: metadata.annotations: alpha.jobset.sigs.k8s.io/node-selector (exclusive placement by node selectors"},
		{"", "alpha.jobset.sigs.k8s.io/exclusive-topology: \"bad key!\"", "spec.replicatedJobs[0].template.metadata.annotations.alpha.jobset.sigs.k8s.io/exclusive-topology: \"bad key!\" is not a node label key"},
		{"alpha.jobset.sigs.k8s.io/exclusive-topology: \"\"", "", "metadata.annotations.alpha.jobset.sigs.k8s.io/exclusive-topology: an empty topology key"},
	} {
		_, _, err := workloads.Parse("j.yaml", []byte(js(c.set, c.job)))
		var ie *strict.InputError
		require.True(t, errors.As(err, &ie), "%v", err)
		require.Contains(t, err.Error(), c.want)
	}
}

// Where gpuplan cannot keep child Jobs apart, it says so: a JobSet under
// exclusive placement wrapped in an AppWrapper (one gang), and one in a
// scenario with Kueue ClusterQueues (Kueue admits the JobSet as one
// workload), are refused at the object.
func TestJobSetExclusiveTopologyRefusedAsOneGang(t *testing.T) {
	aw := `apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: aw}
spec:
  components:
  - template:
      apiVersion: jobset.x-k8s.io/v1alpha2
      kind: JobSet
      metadata: {name: s, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}}
      spec:
        replicatedJobs:
        - name: a
          replicas: 2
          template: {spec: {template: {spec: {containers: [{name: c, image: i, command: [sleep, "30"]}]}}}}
`
	_, _, err := workloads.Parse("aw.yaml", []byte(aw))
	var ie *strict.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Contains(t, err.Error(), "spec.components[0].template: a wrapped JobSet's exclusive placement")

	_, err = scenarios.Parse("s.yaml", "testdata", []byte(strings.Replace(racksScenario, "  workload:", "  policy:\n    manifests: [kueue/quick-start-setup.yaml]\n  workload:", 1)))
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Contains(t, err.Error(), "exclusive-jobset.yaml:3: JobSet train: JobSet exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology) under Kueue is not modelled")
}
