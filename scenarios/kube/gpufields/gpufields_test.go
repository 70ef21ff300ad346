package gpufields_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/validate/strict"
)

// A pod template in flow style: ANN its annotations, RC its pod-level
// resourceClaims entry, LIM its container's limits, CL its container's
// claims entry.
const tmpl = `{metadata: {labels: {app: a}, annotations: {ANN}}, spec: {restartPolicy: Never, RC containers: [{name: c, image: x, command: [sleep, "60"], resources: {limits: {cpu: "1", memory: 1Gi, LIM} CL}}]}}`

// kinds are every workload kind the readers take, each with its pod
// template's path (meta is where the template's metadata is; for a Pod,
// its own).
var kinds = []struct {
	kind, doc, spec, meta string
	serving               bool
}{
	{"Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {ANN}}\nspec: {restartPolicy: Never, RC containers: [{name: c, image: x, command: [sleep, \"60\"], resources: {limits: {cpu: \"1\", memory: 1Gi, LIM} CL}}]}\n",
		"spec", "metadata", false},
	{"Job", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: TMPL}\n", "spec.template.spec", "spec.template.metadata", false},
	{"CronJob", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: cj}\nspec: {schedule: \"@hourly\", jobTemplate: {spec: {template: TMPL}}}\n",
		"spec.jobTemplate.spec.template.spec", "spec.jobTemplate.spec.template.metadata", false},
	{"PyTorchJob", "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: pt}\nspec: {pytorchReplicaSpecs: {Master: {replicas: 1, template: TMPL}}}\n",
		`spec.pytorchReplicaSpecs["Master"].template.spec`, `spec.pytorchReplicaSpecs["Master"].template.metadata`, false},
	{"TFJob", "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: tf}\nspec: {tfReplicaSpecs: {Worker: {replicas: 2, template: TMPL}}}\n",
		`spec.tfReplicaSpecs["Worker"].template.spec`, `spec.tfReplicaSpecs["Worker"].template.metadata`, false},
	{"Volcano Job", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec: {minAvailable: 1, schedulerName: volcano, tasks: [{name: t, replicas: 1, template: TMPL}]}\n",
		"spec.tasks[0].template.spec", "spec.tasks[0].template.metadata", false},
	{"JobSet", "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec: {replicatedJobs: [{name: w, replicas: 1, template: {spec: {template: TMPL}}}]}\n",
		"spec.replicatedJobs[0].template.spec.template.spec", "spec.replicatedJobs[0].template.spec.template.metadata", false},
	{"RayCluster", "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: rc}\nspec: {headGroupSpec: {rayStartParams: {}, template: TMPL}}\n",
		"spec.headGroupSpec.template.spec", "spec.headGroupSpec.template.metadata", false},
	{"RayJob", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec: {entrypoint: python x.py, rayClusterSpec: {headGroupSpec: {rayStartParams: {}, template: TMPL}}}\n",
		"spec.rayClusterSpec.headGroupSpec.template.spec", "spec.rayClusterSpec.headGroupSpec.template.metadata", false},
	{"Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1, selector: {matchLabels: {app: a}}, template: TMPL}\n",
		"spec.template.spec", "spec.template.metadata", true},
	{"InferenceService", "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: is, annotations: {ANN}}\nspec: {predictor: {RC containers: [{name: c, image: x, resources: {limits: {cpu: \"1\", memory: 1Gi, LIM} CL}}]}}\n",
		"spec.predictor", "metadata", true},
}

// fields are the GPU-bearing fields gpuplan does not model, each refused
// (an input error) or noted (with what it was taken as).
var fields = []struct {
	name, ann, rc, lim, cl string
	field                  func(spec, meta string) string
	refused                bool
	says                   string
	// servingSays is the note on a service's template when it differs
	// (Kueue's topology is modelled for jobs only); jobsOnly: the field
	// is read for jobs only.
	servingSays string
	jobsOnly    bool
	// gpus, when positive, is the GPUs each pod is taken as.
	gpus int64
}{
	// DRA claims are read (scenarios/kube/dra): a claim whose template is
	// not in the file, or a container claim naming no pod claim, is
	// refused at its field.
	{name: "pod resourceClaims", rc: "resourceClaims: [{name: gpu, resourceClaimTemplateName: single-gpu}],", cl: ", claims: [{name: gpu}]",
		field: func(s, _ string) string { return s + ".resourceClaims[0].resourceClaimTemplateName" }, refused: true, says: `ResourceClaimTemplate "single-gpu" is not in the file`},
	{name: "container resources.claims", cl: ", claims: [{name: gpu}]",
		field: func(s, _ string) string { return s + ".containers[0].resources.claims[0].name" }, refused: true, says: `"gpu" is not a claim of the pod's spec.resourceClaims`},
	{name: "HAMi gpucores alone", lim: "nvidia.com/gpucores: 30",
		field: func(s, _ string) string { return s + `.containers[0].resources.limits["nvidia.com/gpucores"]` }, refused: true, says: "write nvidia.com/gpu: N beside it"},
	{name: "HAMi gpumem alone", lim: "nvidia.com/gpumem: 3000",
		field: func(s, _ string) string { return s + `.containers[0].resources.limits["nvidia.com/gpumem"]` }, refused: true, says: "without nvidia.com/gpu"},
	{name: "HAMi gpumem-percentage alone", lim: "nvidia.com/gpumem-percentage: 50",
		field: func(s, _ string) string { return s + `.containers[0].resources.limits["nvidia.com/gpumem-percentage"]` }, refused: true, says: "without nvidia.com/gpu"},
	{name: "HAMi gpucores with a GPU", lim: "nvidia.com/gpu: 1, nvidia.com/gpucores: 30",
		field: func(s, _ string) string { return s + `.containers[0].resources.limits["nvidia.com/gpucores"]` }, says: "taken as 1 whole GPU(s)"},
	{name: "HAMi gpumem with GPUs", lim: "nvidia.com/gpu: 2, nvidia.com/gpumem: 3000",
		field: func(s, _ string) string { return s + `.containers[0].resources.limits["nvidia.com/gpumem"]` }, says: "taken as 2 whole GPU(s)"},
	// The example driver's DeviceClass (built in, as Kueue's setup_dra
	// page gives it) backs example.com/gpu: one whole GPU.
	{name: "DRA-backed extended resource", lim: "example.com/gpu: 1",
		field: func(s, _ string) string { return s + `.containers[0].resources.limits["example.com/gpu"]` }, says: `a DRA-backed extended resource of DeviceClass "gpu.example.com"`, gpus: 1},
	{name: "another vendor's GPU", lim: "amd.com/gpu: 1",
		field: func(s, _ string) string { return s + `.containers[0].resources.limits["amd.com/gpu"]` }, refused: true, says: "another vendor's device plugin, or a DRA-backed extended resource no DeviceClass of the file maps"},
	{name: "Kueue required topology", ann: `kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack`,
		field: func(_, m string) string { return m + `.annotations["kueue.x-k8s.io/podset-required-topology"]` }, says: "every pod in one \"cloud.provider.com/topology-rack\" domain", servingSays: "placed as if unconstrained"},
	{name: "Kueue preferred topology", ann: `kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/topology-block`,
		field: func(_, m string) string { return m + `.annotations["kueue.x-k8s.io/podset-preferred-topology"]` }, says: "the fewest \"cloud.provider.com/topology-block\" domains", servingSays: "placed as if unconstrained"},
	{name: "Kueue unconstrained topology", ann: `kueue.x-k8s.io/podset-unconstrained-topology: "true"`,
		field: func(_, m string) string { return m + `.annotations["kueue.x-k8s.io/podset-unconstrained-topology"]` }, says: "smallest gaps filled first", servingSays: "placed as if unconstrained"},
	{name: "Kueue slice topology", ann: `kueue.x-k8s.io/podset-slice-required-topology: cloud.provider.com/topology-rack, kueue.x-k8s.io/podset-slice-size: "2"`,
		field: func(_, m string) string { return m + `.annotations["kueue.x-k8s.io/podset-slice-required-topology"]` }, says: "each slice of 2 pods in one", servingSays: "placed as if unconstrained"},
	{name: "Kueue slice size", ann: `kueue.x-k8s.io/podset-slice-required-topology: cloud.provider.com/topology-rack, kueue.x-k8s.io/podset-slice-size: "2"`,
		field: func(_, m string) string { return m + `.annotations["kueue.x-k8s.io/podset-slice-size"]` }, says: "slices of \"2\" pods, each in one", servingSays: "placed as if unconstrained"},
	{name: "Kueue slice size alone", ann: `kueue.x-k8s.io/podset-slice-size: "2"`, refused: true, jobsOnly: true,
		field: func(_, m string) string { return m + `.annotations["kueue.x-k8s.io/podset-slice-size"]` }, says: "may not be set when"},
	{name: "Kueue multi-layer slices", ann: `kueue.x-k8s.io/podset-slice-required-topology-constraints: "[]"`, refused: true, jobsOnly: true,
		field: func(_, m string) string {
			return m + `.annotations["kueue.x-k8s.io/podset-slice-required-topology-constraints"]`
		}, says: "not modelled yet"},
}

func render(doc string, ann, rc, lim, cl string) string {
	r := strings.NewReplacer("TMPL", tmpl)
	doc = r.Replace(doc)
	if lim != "" {
		lim = lim + ","
	}
	return strings.NewReplacer("ANN", ann, "RC ", rc+" ", "LIM", lim, " CL", cl).Replace(doc)
}

// read reads doc with the reader of its kind: the notes it made, or its error.
func read(t *testing.T, serving bool, doc string) ([]string, []int64, error) {
	t.Helper()
	if serving {
		ws, _, err := services.ReadServing("w.yaml", []byte(doc))
		if err != nil {
			return nil, nil, err
		}
		require.Len(t, ws, 1)
		return ws[0].Notes, []int64{ws[0].Pod.GPUs}, nil
	}
	objs, _, err := workloads.Parse("w.yaml", []byte(doc))
	if err != nil {
		return nil, nil, err
	}
	require.Len(t, objs, 1)
	var gpus []int64
	for _, g := range objs[0].Groups {
		gpus = append(gpus, int64(g.Pod.GPUs))
	}
	return objs[0].Notes, gpus, nil
}

// Every GPU-bearing field gpuplan does not model, in every workload kind
// it reads, is refused at its field (exit 2, saying what to write) or
// noted with what it was taken as; none is dropped without a word.
func TestNothingGPUBearingDroppedSilently(t *testing.T) {
	for _, k := range kinds {
		// The plain template reads, with no note about GPUs.
		notes, _, err := read(t, k.serving, render(k.doc, "", "", "", ""))
		require.NoError(t, err, k.kind)
		for _, n := range notes {
			require.NotContains(t, n, "not modelled yet", k.kind)
		}
		for _, f := range fields {
			name := k.kind + ": " + f.name
			if f.jobsOnly && k.serving {
				continue
			}
			says := f.says
			if k.serving && f.servingSays != "" {
				says = f.servingSays
			}
			doc := render(k.doc, f.ann, f.rc, f.lim, f.cl)
			notes, gpus, err := read(t, k.serving, doc)
			want := f.field(k.spec, k.meta)
			refused := f.refused
			if refused {
				var ie *strict.InputError
				require.True(t, errors.As(err, &ie), "%s: want a refusal, got %v (notes %v)", name, err, notes)
				require.Equal(t, 2, ie.ExitCode(), name)
				require.Equal(t, want, ie.Field, name)
				require.Positive(t, ie.Line, name)
				require.Contains(t, err.Error(), says, name)
				continue
			}
			require.NoError(t, err, name)
			var hit string
			for _, n := range notes {
				if strings.Contains(n, ": "+want+": ") {
					hit = n
				}
			}
			require.NotEmpty(t, hit, "%s: no note at %s in %v", name, want, notes)
			require.Contains(t, hit, says, name)
			require.True(t, strings.HasPrefix(hit, "w.yaml:"), name)
			if f.gpus > 0 {
				for _, g := range gpus {
					require.Equal(t, f.gpus, g, name)
				}
			}
			if strings.HasPrefix(f.name, "HAMi") {
				// Taken as whole GPUs, not run GPU-less.
				for _, g := range gpus {
					require.Equal(t, strings.Fields(f.says)[2], fmt.Sprint(g), name)
				}
			}
		}
	}
}
