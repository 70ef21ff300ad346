package gpufields

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// HAMi's resource names (Project-HAMi/HAMi, its device plugin for NVIDIA
// GPUs): a share of each GPU's cores (percent) and memory (MiB or percent).
const (
	HAMiCores      = "nvidia.com/gpucores"
	HAMiMem        = "nvidia.com/gpumem"
	HAMiMemPercent = "nvidia.com/gpumem-percentage"
)

// Kueue's topology-aware scheduling annotations on a pod template.
const (
	KueueRequiredTopology      = "kueue.x-k8s.io/podset-required-topology"
	KueuePreferredTopology     = "kueue.x-k8s.io/podset-preferred-topology"
	KueueUnconstrainedTopology = "kueue.x-k8s.io/podset-unconstrained-topology"
	KueueSliceRequiredTopology = "kueue.x-k8s.io/podset-slice-required-topology"
	KueueSliceSize             = "kueue.x-k8s.io/podset-slice-size"
)

// IsHAMi reports whether a resource name is one of HAMi's GPU shares.
func IsHAMi(name string) bool {
	return name == HAMiCores || name == HAMiMem || name == HAMiMemPercent
}

// Finding is one field: refused (Err) or noted.
type Finding struct {
	// Field is the field's path from the document's root.
	Field string
	Msg   string
	Err   bool
}

// Pod checks one pod template: its annotations (at metaAt, the path of
// its metadata) and its spec (at specAt). Findings come in field order:
// annotations, then containers. DRA claims are not checked here: the
// readers resolve them (scenarios/kube/dra), and backed reports the
// extended resources a DeviceClass maps (DRA-backed, resolved there too).
//
// Pod is the check of a service's pod template: its Kueue topology
// annotations are noted (TAS is modelled for jobs only); a job's reader
// calls KueueTopology and PodFields instead.
func Pod(annotations map[string]string, spec *corev1.PodSpec, metaAt, specAt string, backed func(string) bool) []Finding {
	return append(kueueTopology(annotations, metaAt), PodFields(spec, specAt, backed)...)
}

// PodFields checks a pod spec (at specAt): its containers.
func PodFields(spec *corev1.PodSpec, specAt string, backed func(string) bool) []Finding {
	var out []Finding
	for _, list := range []struct {
		name string
		cs   []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i := range list.cs {
			out = append(out, Container(&list.cs[i], fmt.Sprintf("%s.%s[%d]", specAt, list.name, i), backed)...)
		}
	}
	return out
}

// Container checks one container (at its path) for HAMi shares and GPUs
// under names gpuplan does not read (other than those backed reports);
// Pod calls it for each of a pod's containers.
func Container(c *corev1.Container, at string, backed func(string) bool) []Finding {
	var out []Finding
	out = append(out, otherGPUs(c, at, backed)...)
	gpus := int64(0)
	for _, rl := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
		if q, ok := rl["nvidia.com/gpu"]; ok {
			gpus = q.Value()
		}
	}
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"limits", c.Resources.Limits}, {"requests", c.Resources.Requests}} {
		var names []string
		for n := range list.rl {
			if IsHAMi(string(n)) {
				names = append(names, string(n))
			}
		}
		sort.Strings(names)
		for _, n := range names {
			q := list.rl[corev1.ResourceName(n)]
			f := Finding{Field: fmt.Sprintf("%s.resources.%s[%q]", at, list.name, n)}
			if gpus <= 0 {
				f.Err = true
				f.Msg = fmt.Sprintf("HAMi's %s %s without nvidia.com/gpu: HAMi's GPU sharing is not modelled yet; write nvidia.com/gpu: N beside it (gpuplan then takes each as a whole GPU), or use a time-sliced or MIG pool", n, strict.Quote(q.String()))
			} else {
				f.Msg = fmt.Sprintf("HAMi's share %s %s is not modelled: taken as %d whole GPU(s), held whole (cost and utilisation as for whole GPUs)", n, strict.Quote(q.String()), gpus)
			}
			out = append(out, f)
		}
	}
	return out
}

// kueueTopology notes a service's Kueue topology annotations: TAS is
// modelled for jobs (KueueTopology), not for a service's replicas.
func kueueTopology(ann map[string]string, metaAt string) []Finding {
	var out []Finding
	for _, k := range tasKeys {
		if _, ok := ann[k]; ok {
			out = append(out, Finding{Field: tasField(metaAt, k),
				Msg: "Kueue topology-aware scheduling is modelled for jobs, not for a service's replicas: they are placed as if unconstrained"})
		}
	}
	return out
}

var tasKeys = []string{KueueRequiredTopology, KueuePreferredTopology, KueueUnconstrainedTopology, KueueSliceRequiredTopology, KueueSliceSize, KueueSliceConstraints}

// KueueSliceConstraints is Kueue's multi-layer slice annotation
// (TASMultiLayerTopology), not modelled.
const KueueSliceConstraints = "kueue.x-k8s.io/podset-slice-required-topology-constraints"

func tasField(metaAt, k string) string { return fmt.Sprintf("%s.annotations[%q]", metaAt, k) }

// KueueTopology reads a job's pod template's Kueue topology-aware
// scheduling annotations (at metaAt, the template's metadata) as Kueue's
// webhook checks them (pkg/controller/jobframework/tas_validation.go):
// at most one of required, preferred and unconstrained; levels are label
// keys; a slice level needs a slice size of at least 1 and a size needs
// a level. The request (nil: none) and, for each annotation, a note of
// what it is taken as, or the first refusal (Err).
func KueueTopology(ann map[string]string, metaAt string) (*cluster.TASRequest, []Finding) {
	refuse := func(k, msg string, args ...any) (*cluster.TASRequest, []Finding) {
		return nil, []Finding{{Field: tasField(metaAt, k), Err: true, Msg: fmt.Sprintf(msg, args...)}}
	}
	req, pref, unc := ann[KueueRequiredTopology], ann[KueuePreferredTopology], ann[KueueUnconstrainedTopology]
	_, hasReq := ann[KueueRequiredTopology]
	_, hasPref := ann[KueuePreferredTopology]
	_, hasUnc := ann[KueueUnconstrainedTopology]
	slice, hasSlice := ann[KueueSliceRequiredTopology]
	size, hasSize := ann[KueueSliceSize]
	if _, ok := ann[KueueSliceConstraints]; ok {
		return refuse(KueueSliceConstraints, "Kueue's multi-layer slice constraints are not modelled yet: give one slice level with %s and %s", KueueSliceRequiredTopology, KueueSliceSize)
	}
	n := 0
	for _, b := range []bool{hasReq, hasPref, hasUnc} {
		if b {
			n++
		}
	}
	if n > 1 {
		k := KueuePreferredTopology
		if hasUnc {
			k = KueueUnconstrainedTopology
		}
		return refuse(k, "must not contain more than one topology annotation: [%q, %q, %q] (Kueue's webhook refuses the job)", KueueRequiredTopology, KueuePreferredTopology, KueueUnconstrainedTopology)
	}
	for _, lv := range []struct {
		k, v string
		ok   bool
	}{{KueueRequiredTopology, req, hasReq}, {KueuePreferredTopology, pref, hasPref}, {KueueSliceRequiredTopology, slice, hasSlice}} {
		if lv.ok {
			if errs := validation.IsQualifiedName(lv.v); len(errs) > 0 {
				return refuse(lv.k, "%s is not a node label key: %s", strict.Quote(lv.v), errs[0])
			}
		}
	}
	r := &cluster.TASRequest{}
	if hasUnc {
		b, err := strconv.ParseBool(unc)
		if err != nil {
			return refuse(KueueUnconstrainedTopology, "%s must be a boolean value", strict.Quote(unc))
		}
		if !b && !hasSlice {
			return nil, []Finding{{Field: tasField(metaAt, KueueUnconstrainedTopology), Msg: "\"false\": no topology request (placed as any job)"}}
		}
	}
	switch {
	case hasSlice && !hasSize:
		return refuse(KueueSliceSize, "must be set when %q is specified", KueueSliceRequiredTopology)
	case hasSize && !hasSlice:
		return refuse(KueueSliceSize, "may not be set when %q is not specified", KueueSliceRequiredTopology)
	case hasSize:
		v, err := strconv.ParseInt(size, 10, 32)
		if err != nil {
			return refuse(KueueSliceSize, "%s must be a numeric value", strict.Quote(size))
		}
		if v < 1 {
			return refuse(KueueSliceSize, "%s must be greater than or equal to 1", strict.Quote(size))
		}
		r.SliceLevel, r.SliceSize = slice, int32(v)
	}
	var out []Finding
	note := func(k, msg string, args ...any) {
		out = append(out, Finding{Field: tasField(metaAt, k), Msg: "Kueue topology-aware scheduling: " + fmt.Sprintf(msg, args...)})
	}
	switch {
	case hasReq:
		r.Mode, r.Level = topology.TASRequired, req
		note(KueueRequiredTopology, "every pod in one %s domain, the tightest that holds them (BestFit); the job waits while none does", strict.Quote(req))
	case hasPref:
		r.Mode, r.Level = topology.TASPreferred, pref
		note(KueuePreferredTopology, "the pods in the fewest %s domains (BestFit), going up a level while none holds them all", strict.Quote(pref))
	case hasUnc || hasSlice:
		r.Mode = topology.TASUnconstrained
		if hasUnc {
			note(KueueUnconstrainedTopology, "the pods on any nodes, the smallest gaps filled first (LeastFreeCapacity)")
		}
	default:
		return nil, nil
	}
	if hasSlice {
		note(KueueSliceRequiredTopology, "each slice of %d pods in one %s domain", r.SliceSize, strict.Quote(slice))
		note(KueueSliceSize, "slices of %s pods, each in one %s domain", strict.Quote(size), strict.Quote(slice))
	}
	return r, out
}

// IsOtherGPU reports whether an extended resource name asks for a GPU
// gpuplan does not read: a name part with "gpu" in it (amd.com/gpu;
// gpu.intel.com/i915 is not caught), other than nvidia.com/gpu,
// nvidia.com/mig-<profile> and HAMi's shares. Pod and Container skip the
// names a DeviceClass backs (example.com/gpu, as the example driver's
// class gives it).
func IsOtherGPU(name string) bool {
	domain, part, ok := strings.Cut(name, "/")
	if !ok || name == "nvidia.com/gpu" || IsHAMi(name) || (domain == "nvidia.com" && strings.HasPrefix(part, "mig-")) {
		return false
	}
	return strings.Contains(strings.ToLower(part), "gpu")
}

// otherGPUs refuses a container's requests for GPUs under another name.
func otherGPUs(c *corev1.Container, at string, backed func(string) bool) []Finding {
	var out []Finding
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"limits", c.Resources.Limits}, {"requests", c.Resources.Requests}} {
		var names []string
		for n := range list.rl {
			if IsOtherGPU(string(n)) && (backed == nil || !backed(string(n))) {
				names = append(names, string(n))
			}
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, Finding{Field: fmt.Sprintf("%s.resources.%s[%q]", at, list.name, n), Err: true,
				Msg: fmt.Sprintf("resource %s asks for a GPU under a name gpuplan does not model (another vendor's device plugin, or a DRA-backed extended resource no DeviceClass of the file maps by spec.extendedResourceName) and would run the pod without it; write nvidia.com/gpu: N (or nvidia.com/mig-<profile>: N), or give the DeviceClass in the file", strict.Quote(n))})
		}
	}
	return out
}
