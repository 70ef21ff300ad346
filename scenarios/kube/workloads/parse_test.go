package workloads

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {kueue.x-k8s.io/queue-name: team-a}
spec:
  parallelism: 4
  completions: 10
  backoffLimit: 2
  activeDeadlineSeconds: 7200
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]
  template:
    metadata:
      annotations: {gpuplan.dev/duration: 1h30m}
    spec:
      priorityClassName: high
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      initContainers:
      - {name: fetch, image: x, resources: {requests: {cpu: "6", memory: 1Gi}}}
      containers:
      - name: main
        image: x
        resources:
          requests: {cpu: "2", memory: 16Gi}
          limits: {nvidia.com/mig-3g.40gb: 1}
      - {name: side, image: y, resources: {requests: {cpu: 500m, memory: 512Mi}}}
`

// A Job's fields as gpuplan reads them, worked by hand: 10 completions in
// rounds of 4 are 3 rounds; the pod asks for the containers' sum (2.5
// CPUs, 16.5 GiB) unless an init container asks for more (6 CPUs), its
// MIG slice as a limit; the annotation gives 90 minutes a round.
func TestJobFields(t *testing.T) {
	objs, _, err := Parse("j.yaml", []byte(job))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	o := objs[0]
	require.Equal(t, "train", o.Name)
	require.Equal(t, "team-a", o.Queue)
	require.Equal(t, "high", o.PriorityClass)
	require.Equal(t, int64(90*minute), o.Duration)
	require.Len(t, o.Groups, 1)
	g := o.Groups[0]
	require.Equal(t, int32(4), g.Pods)
	require.Equal(t, int32(3), g.Waves)
	require.Equal(t, cluster.PodSpec{MilliCPU: 6000, MemoryMiB: 16*1024 + 512, GPUs: 1, MIG: "3g.40gb"}, g.Pod)
	require.Equal(t, map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}, g.Constraints.NodeSelector)
	require.Len(t, g.Constraints.Tolerations, 1)
	rec := o.Recovery(nil)
	require.Equal(t, int32(2), rec.BackoffLimit)
	require.True(t, rec.IgnoreDisruptions)
	require.Equal(t, int64(2*hour), rec.ActiveDeadline)
	require.Contains(t, strings.Join(o.Notes, "\n"), "10 completions in rounds of 4 pods: modelled as 3 rounds of 4 pods (the last round holds 2 pods more than it needs)")

	src, err := NewSource([]Entry{{Name: "j", Objects: objs, Arrivals: &Once{Count: 1}}}, SourceOptions{Rng: rand.New(rand.NewPCG(1, 1))})
	require.NoError(t, err)
	var j cluster.JobSpec
	ok, err := src.Next(&j)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(3*90*minute), j.Duration)
	require.Equal(t, int32(4), j.Replicas)
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"  parallelism: 4", "  paralelism: 4", `j.yaml:7:3: spec.paralelism: unknown field "paralelism" (did you mean "parallelism"?)`},
		{"  completions: 10", "  completions: ten", `j.yaml:8:16: spec.completions: expected a whole number, got "ten"`},
		{"1h30m}", "90 minutes}", `j.yaml:17:43: spec.template.metadata.annotations["gpuplan.dev/duration"]: "90 minutes" is not a duration`},
		{"nvidia.com/mig-3g.40gb: 1}", "nvidia.com/gpu: 500m}", `j.yaml:29:36: spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"]: nvidia.com/gpu "500m": GPUs and MIG instances are whole`},
		{"cpu: \"2\",", "cpu: 2000000,", `j.yaml:28:27: spec.template.spec.containers[0].resources.requests["cpu"]: cpu "2000000500m" is more than any node holds (at most 4096 cores)`},
		{"operator: Exists", "operator: Maybe", `j.yaml:21:53: spec.template.spec.tolerations[0].operator: "Maybe" is not Equal or Exists`},
		{"  parallelism: 4", "  parallelism: 0", `j.yaml:7:16: spec.parallelism: a job with parallelism 0 runs no pods`},
		{"kind: Job", "kind: Deployment", `no workload in the file (1 other objects skipped)`},
		{"apiVersion: batch/v1\n", "", `a manifest needs apiVersion and kind`},
		{"  backoffLimit: 2", "  backoffLimit: [2]", `j.yaml:9:17: spec.backoffLimit: expected a whole number, got a list`},
	} {
		bad := strings.Replace(job, c.from, c.to, 1)
		require.NotEqual(t, job, bad, c.from)
		_, _, err := Parse("j.yaml", []byte(bad))
		require.ErrorContains(t, err, c.want)
		var ie *strict.InputError
		require.True(t, errors.As(err, &ie), "%v", err)
		require.Equal(t, 2, ie.ExitCode())
	}
	// An object that says no duration in a file that gives none.
	objs, _, err := Parse("k.yaml", []byte(strings.Replace(job, "      annotations: {gpuplan.dev/duration: 1h30m}\n", "", 1)))
	require.NoError(t, err)
	_, err = NewSource([]Entry{{Name: "k", Objects: objs, Arrivals: &Once{Count: 1}}}, SourceOptions{})
	require.ErrorContains(t, err, "k.yaml:1: Job train says no duration: give the file a duration (a distribution), or the object the gpuplan.dev/duration annotation")
}

// The parser never panics and refuses bad input with an InputError.
func FuzzParse(f *testing.F) {
	f.Add([]byte(job))
	fs, _ := filepath.Glob("testdata/*/*.yaml")
	for _, p := range fs {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("kind: Job\napiVersion: batch/v1\nspec: {parallelism: 100001, template: {spec: {containers: [{name: a}]}}}\n"))
	f.Add([]byte("apiVersion: ray.io/v1\nkind: RayCluster\nspec: {workerGroupSpecs: [{groupName: g, minReplicas: 3, maxReplicas: 1, rayStartParams: {}, template: {}}]}\n"))
	f.Add([]byte("apiVersion: batch/v1\nkind: CronJob\nspec: {schedule: '@every 1s', jobTemplate: {spec: {template: {spec: {containers: [{name: a}]}}}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _, err := Parse("f.yaml", data)
		if err != nil {
			var ie *strict.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
			return
		}
		for _, o := range objs {
			if len(o.Groups) == 0 {
				t.Fatalf("%s %s has no pods", o.Kind, o.Name)
			}
			for _, g := range o.Groups {
				if g.Pods < 1 || int64(g.Pods) > strict.MaxReplicas || g.Waves < 1 {
					t.Fatalf("group %+v out of bounds", g)
				}
				if err := g.Pod.Validate(); err != nil {
					t.Fatalf("pod %+v: %v", g.Pod, err)
				}
			}
		}
	})
}

// Fields of a custom resource that gpuplan reads but does not model are
// named with their lines: a JobSet's network and a Volcano task's
// dependsOn.
func TestUnmodelledFieldsNoted(t *testing.T) {
	objs, _, err := Load("testdata/kueue/sample-jobset.yaml")
	require.NoError(t, err)
	require.Contains(t, strings.Join(objs[0].Notes, "\n"), "testdata/kueue/sample-jobset.yaml:10: JobSet sleep-job: spec.network: read but not modelled")
	vj := `apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v}
spec:
  tasks:
  - name: a
    replicas: 1
    dependsOn: {name: [b]}
    template: {spec: {containers: [{name: c, image: i}]}}
`
	objs, _, err = Parse("v.yaml", []byte(vj))
	require.NoError(t, err)
	require.Equal(t, []string{"v.yaml:8: Job v: spec.tasks[0].dependsOn: read but not modelled"}, objs[0].Notes)
}

// Where a duration comes from: the object's annotation, else its first
// pod template's, else the longest `sleep` of its containers.
func TestDurationPrecedence(t *testing.T) {
	js := func(objAnn, podAnn string) string {
		return `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js` + objAnn + `}
spec:
  replicatedJobs:
  - name: a
    template: {spec: {template: {metadata: {` + podAnn + `}, spec: {containers: [{name: c, image: i, command: [sleep, "30"]}]}}}}
  - name: b
    template: {spec: {template: {spec: {containers: [{name: c, image: i, command: [sleep, 2m]}]}}}}
`
	}
	for _, c := range []struct {
		objAnn, podAnn string
		want           int64
		from           string
	}{
		{"", "", 2 * minute, "the sleep in its command"},
		{"", "annotations: {gpuplan.dev/duration: 10m}", 10 * minute, "annotation gpuplan.dev/duration"},
		{", annotations: {gpuplan.dev/duration: 1d}", "annotations: {gpuplan.dev/duration: 10m}", 24 * hour, "annotation gpuplan.dev/duration"},
	} {
		objs, _, err := Parse("d.yaml", []byte(js(c.objAnn, c.podAnn)))
		require.NoError(t, err)
		require.Equal(t, c.want, objs[0].Duration)
		require.Equal(t, c.from, objs[0].DurationFrom)
	}
	_, _, err := Parse("d.yaml", []byte(js("", "annotations: {gpuplan.dev/duration: soon}")))
	require.ErrorContains(t, err, `d.yaml:7:81: spec.replicatedJobs[0].template.spec.template.metadata.annotations["gpuplan.dev/duration"]: "soon" is not a duration`)
}
