package gpufields

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

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
func Pod(annotations map[string]string, spec *corev1.PodSpec, metaAt, specAt string, backed func(string) bool) []Finding {
	var out []Finding
	out = append(out, kueueTopology(annotations, metaAt)...)
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

func kueueTopology(ann map[string]string, metaAt string) []Finding {
	field := func(k string) string { return fmt.Sprintf("%s.annotations[%q]", metaAt, k) }
	var out []Finding
	for _, k := range []string{KueueRequiredTopology, KueuePreferredTopology, KueueUnconstrainedTopology, KueueSliceRequiredTopology, KueueSliceSize} {
		v, ok := ann[k]
		if !ok {
			continue
		}
		var msg string
		switch k {
		case KueueRequiredTopology:
			msg = fmt.Sprintf("Kueue topology-aware scheduling is not modelled yet: the pods are placed as if unconstrained, not all in one %s domain; Kueue would hold the job until one such domain fits it, so waits here can be shorter", strict.Quote(v))
		case KueuePreferredTopology:
			msg = fmt.Sprintf("Kueue topology-aware scheduling is not modelled yet: the pods are placed as if unconstrained, not packed into the fewest %s domains", strict.Quote(v))
		case KueueUnconstrainedTopology:
			msg = "Kueue topology-aware scheduling is not modelled yet: the pods are placed as if unconstrained (as asked)"
		case KueueSliceRequiredTopology:
			msg = fmt.Sprintf("Kueue topology-aware scheduling is not modelled yet: slices are not kept within one %s domain; the pods are placed as if unconstrained", strict.Quote(v))
		case KueueSliceSize:
			msg = fmt.Sprintf("Kueue topology-aware scheduling is not modelled yet: slices of %s pods are not kept together; the pods are placed as if unconstrained", strict.Quote(v))
		}
		out = append(out, Finding{Field: field(k), Msg: msg})
	}
	return out
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
