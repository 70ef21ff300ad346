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

// dra is the advice of a refused DRA claim.
const dra = "Dynamic Resource Allocation (resource.k8s.io) is not modelled yet: gpuplan cannot tell which devices the claim holds and would run the pod without them; " +
	"to simulate it, ask for the GPUs in the container's resources.limits as nvidia.com/gpu: N (or nvidia.com/mig-<profile>: N)"

// Pod checks one pod template: its annotations (at metaAt, the path of
// its metadata) and its spec (at specAt). Findings come in field order:
// annotations, then claims, then containers.
func Pod(annotations map[string]string, spec *corev1.PodSpec, metaAt, specAt string) []Finding {
	return PodWithDRA(annotations, spec, metaAt, specAt, nil)
}

// PodWithDRA is Pod for a reader that resolves DRA itself
// (scenarios/kube/dra): with backed non-nil, claims are not refused here,
// nor extended resources backed(name) says a DeviceClass maps.
func PodWithDRA(annotations map[string]string, spec *corev1.PodSpec, metaAt, specAt string, backed func(string) bool) []Finding {
	var out []Finding
	out = append(out, kueueTopology(annotations, metaAt)...)
	for i, c := range spec.ResourceClaims {
		if backed != nil {
			break
		}
		out = append(out, Finding{Field: fmt.Sprintf("%s.resourceClaims[%d]", specAt, i), Err: true,
			Msg: fmt.Sprintf("pod resource claim %s: %s", strict.Quote(c.Name), dra)})
	}
	for _, list := range []struct {
		name string
		cs   []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i := range list.cs {
			out = append(out, container(&list.cs[i], fmt.Sprintf("%s.%s[%d]", specAt, list.name, i), backed)...)
		}
	}
	return out
}

// Container checks one container (at its path) for DRA claims and HAMi
// shares; Pod calls it for each of a pod's containers.
func Container(c *corev1.Container, at string) []Finding { return container(c, at, nil) }

func container(c *corev1.Container, at string, backed func(string) bool) []Finding {
	var out []Finding
	for j, cl := range c.Resources.Claims {
		if backed != nil {
			break
		}
		out = append(out, Finding{Field: fmt.Sprintf("%s.resources.claims[%d]", at, j), Err: true,
			Msg: fmt.Sprintf("container claim %s: %s", strict.Quote(cl.Name), dra)})
	}
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
// gpuplan does not read: a name part with "gpu" in it (example.com/gpu,
// the DRA-backed extended resource of Kueue's samples; amd.com/gpu;
// gpu.intel.com/i915 is not caught), other than nvidia.com/gpu,
// nvidia.com/mig-<profile> and HAMi's shares.
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
				Msg: fmt.Sprintf("resource %s asks for a GPU under a name gpuplan does not model (a DRA-backed extended resource or another vendor's device plugin) and would run the pod without it; write nvidia.com/gpu: N (or nvidia.com/mig-<profile>: N) to simulate it", strict.Quote(n))})
		}
	}
	return out
}
