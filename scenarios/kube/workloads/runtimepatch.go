package workloads

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"gpuplan.dev/gpuplan/validate/strict"
)

// A TrainJob's runtimePatches (the trainer's RuntimePatch and the types
// under it, trainer v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go):
// per manager, patches of the runtime's JobSet template restricted to
// metadata and a few pod spec fields. Resources and counts are not among
// them: a TrainJob sets those through spec.trainer.
type runtimePatch struct {
	Manager             string                `json:"manager"`
	Time                *metav1.Time          `json:"time,omitempty"`
	TrainingRuntimeSpec *trainingRuntimePatch `json:"trainingRuntimeSpec,omitempty"`
}

type trainingRuntimePatch struct {
	Template *struct {
		Metadata *patchMeta `json:"metadata,omitempty"`
		Spec     *struct {
			ReplicatedJobs []replicatedJobPatch `json:"replicatedJobs,omitempty"`
		} `json:"spec,omitempty"`
	} `json:"template,omitempty"`
}

// patchMeta is the metadata a patch may set (the CRD's embedded
// ObjectMeta); the trainer's docs allow labels and annotations.
type patchMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
}

type replicatedJobPatch struct {
	Name     string `json:"name"`
	Template *struct {
		Metadata *patchMeta `json:"metadata,omitempty"`
		Spec     *struct {
			Template *struct {
				Metadata *patchMeta    `json:"metadata,omitempty"`
				Spec     *podSpecPatch `json:"spec,omitempty"`
			} `json:"template,omitempty"`
		} `json:"spec,omitempty"`
	} `json:"template,omitempty"`
}

// podSpecPatch is the trainer's PodSpecPatch: the pod spec fields a patch
// may set.
type podSpecPatch struct {
	ServiceAccountName            *string                       `json:"serviceAccountName,omitempty"`
	Volumes                       []corev1.Volume               `json:"volumes,omitempty"`
	InitContainers                []containerPatch              `json:"initContainers,omitempty"`
	Containers                    []containerPatch              `json:"containers,omitempty"`
	ImagePullSecrets              []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	SecurityContext               *corev1.PodSecurityContext    `json:"securityContext,omitempty"`
	NodeSelector                  map[string]string             `json:"nodeSelector,omitempty"`
	Affinity                      *corev1.Affinity              `json:"affinity,omitempty"`
	Tolerations                   []corev1.Toleration           `json:"tolerations,omitempty"`
	SchedulingGates               []corev1.PodSchedulingGate    `json:"schedulingGates,omitempty"`
	TerminationGracePeriodSeconds *int64                        `json:"terminationGracePeriodSeconds,omitempty"`
}

// containerPatch is the trainer's ContainerPatch.
type containerPatch struct {
	Name            string                  `json:"name"`
	Env             []corev1.EnvVar         `json:"env,omitempty"`
	VolumeMounts    []corev1.VolumeMount    `json:"volumeMounts,omitempty"`
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// maxRuntimePatches is the CRD's maxItems of spec.runtimePatches.
const maxRuntimePatches = 16

// applyRuntimePatches merges the TrainJob's runtime patches into the
// runtime's JobSet spec as the trainer does (mergeRuntimePatches: each
// patch's template.spec a strategic merge patch of the spec, in order,
// replicated jobs merged by name and kept in the runtime's order). What
// gpuplan reads of the result: the pods' nodeSelector, affinity,
// tolerations, terminationGracePeriodSeconds, labels and annotations;
// schedulingGates are noted (the pods are taken as ungated). A patch is
// first checked as the CRD and the trainer's webhook check it, at its own
// fields.
func applyRuntimePatches(d *doc, x *trainJob, rt *runtimeDoc, spec *jobSetSpec) error {
	patches := x.Spec.RuntimePatches
	if len(patches) > maxRuntimePatches {
		return d.errAt(fmt.Sprintf("spec.runtimePatches[%d]", maxRuntimePatches), "Too many: %d: must have at most %d items (the TrainJob CRD's maxItems)", len(patches), maxRuntimePatches)
	}
	order := map[string]int{}
	containers := map[string]map[string]bool{}
	for i, rj := range spec.ReplicatedJobs {
		order[rj.Name] = i
		names := map[string]bool{}
		for _, c := range rj.Template.Spec.Template.Spec.InitContainers {
			names[c.Name] = true
		}
		for _, c := range rj.Template.Spec.Template.Spec.Containers {
			names[c.Name] = true
		}
		containers[rj.Name] = names
	}
	managers := map[string]bool{}
	for i := range patches {
		p := &patches[i]
		at := fmt.Sprintf("spec.runtimePatches[%d]", i)
		if p.Manager == "" || len(p.Manager) > 253 {
			return d.errAt(at+".manager", "must be 1 to 253 characters (the TrainJob CRD)")
		}
		if errs := validation.IsDomainPrefixedPath(field.NewPath(at, "manager"), p.Manager); len(errs) > 0 {
			return d.errAt(at+".manager", "%s: the trainer's webhook refuses it (%s)", strict.Quote(p.Manager), errs[0].Detail)
		}
		if managers[p.Manager] {
			return d.errAt(at+".manager", "Duplicate value: %s: runtimePatches is a list keyed by manager", strict.Quote(p.Manager))
		}
		managers[p.Manager] = true
		if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil || p.TrainingRuntimeSpec.Template.Spec == nil {
			continue
		}
		seen := map[string]bool{}
		for j, rp := range p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
			rat := fmt.Sprintf("%s.trainingRuntimeSpec.template.spec.replicatedJobs[%d]", at, j)
			names, ok := containers[rp.Name]
			if !ok {
				return d.errAt(rat+".name", "%s: must not have replicated job that doesn't exist in the runtime job template (the trainer's webhook; %s %s has %s)", strict.Quote(rp.Name), rt.kind, strict.Quote(rt.x.Name), jobNames(spec))
			}
			if seen[rp.Name] {
				return d.errAt(rat+".name", "Duplicate value: %s: replicatedJobs is a list keyed by name", strict.Quote(rp.Name))
			}
			seen[rp.Name] = true
			if rp.Template == nil || rp.Template.Spec == nil || rp.Template.Spec.Template == nil || rp.Template.Spec.Template.Spec == nil {
				continue
			}
			ps := rp.Template.Spec.Template.Spec
			pat := rat + ".template.spec.template.spec"
			for _, l := range []struct {
				name string
				cs   []containerPatch
			}{{"initContainers", ps.InitContainers}, {"containers", ps.Containers}} {
				for k, c := range l.cs {
					cat := fmt.Sprintf("%s.%s[%d]", pat, l.name, k)
					if !names[c.Name] {
						return d.errAt(cat+".name", "%s: must not have %s that doesn't exist in the runtime job %s (the trainer's webhook)", strict.Quote(c.Name), strings.TrimSuffix(l.name, "s"), rp.Name)
					}
					if len(c.Env) > 0 && (c.Name == trainerNode || c.Name == "dataset-initializer" || c.Name == "model-initializer") {
						return d.errAt(cat+".env", "must not have envs for the dataset-initializer, model-initializer, node containers (the trainer's webhook): set them in spec.trainer.env or spec.initializer")
					}
				}
			}
			// The placement fields, read at the patch's own lines
			// (their notes are said once, after the merge).
			scratch := *d
			scratch.notes = new([]string)
			if _, err := constraintsOf(&scratch, &corev1.PodSpec{NodeSelector: ps.NodeSelector, Affinity: ps.Affinity, Tolerations: ps.Tolerations}, pat); err != nil {
				return err
			}
			if len(ps.SchedulingGates) > 0 {
				d.note(pat+".schedulingGates", "not modelled: the pods are taken as ungated (a scheduling gate holds them until a controller removes it)")
			}
		}
		src, err := json.Marshal(spec)
		if err != nil {
			return d.errAt(at, "%v", err)
		}
		patch, err := json.Marshal(p.TrainingRuntimeSpec.Template.Spec)
		if err != nil {
			return d.errAt(at, "%v", err)
		}
		merged, err := strategicpatch.StrategicMergePatch(src, patch, jobSetSpec{})
		if err != nil {
			return d.errAt(at+".trainingRuntimeSpec.template.spec", "the patch does not merge: %v", err)
		}
		var out jobSetSpec
		if err := json.Unmarshal(merged, &out); err != nil {
			return d.errAt(at+".trainingRuntimeSpec.template.spec", "the patch does not merge: %v", err)
		}
		*spec = out
	}
	sort.SliceStable(spec.ReplicatedJobs, func(a, b int) bool {
		return order[spec.ReplicatedJobs[a].Name] < order[spec.ReplicatedJobs[b].Name]
	})
	return nil
}

// jobNames lists a JobSet spec's replicated jobs.
func jobNames(spec *jobSetSpec) string {
	var names []string
	for _, rj := range spec.ReplicatedJobs {
		names = append(names, strict.Quote(rj.Name))
	}
	return strings.Join(names, ", ")
}
