package services

import (
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// gpuFields turns a serving workload's gpufields findings into the first
// refusal (an input error at its field) or notes, each with its line.
func gpuFields(file string, line int, pos strict.Positions, w *Workload, fs []gpufields.Finding) ([]string, error) {
	var notes []string
	for _, f := range fs {
		if f.Err {
			return nil, strict.At(file, line, pos, f.Field, "%s", f.Msg)
		}
		l := line
		if p, ok := pos[f.Field]; ok {
			l = p[0]
		}
		notes = append(notes, fmt.Sprintf("%s:%d: %s %s: %s: %s", file, l, w.Kind, w.Name, f.Field, f.Msg))
	}
	return notes, nil
}

// draClaims gives the replicas' pod (spec ps at specAt) the GPUs its DRA
// claims and DRA-backed extended resources ask for (scenarios/kube/dra),
// with the GPU models they allow in its node affinity. A replica is
// whole GPUs or one MIG slice: a share of a GPU (consumable capacity) and
// a ResourceClaim the replicas name together (one device for all of
// them) are refused.
func draClaims(file string, line int, pos strict.Positions, w *Workload, devices *dra.Set, ps *corev1.PodSpec, specAt string) error {
	backed := devices.ExtendedResources()
	totals := map[string]int64{}
	where := map[string]string{}
	for i, c := range ps.Containers {
		merged := map[corev1.ResourceName]string{} // the list each name is read from
		for n := range c.Resources.Limits {
			merged[n] = "limits"
		}
		for n := range c.Resources.Requests {
			merged[n] = "requests" // a request overrides its limit
		}
		for n, list := range merged {
			if backed[string(n)] == "" || n == corev1.ResourceCPU || n == corev1.ResourceMemory {
				continue
			}
			q := c.Resources.Limits[n]
			if list == "requests" {
				q = c.Resources.Requests[n]
			}
			if _, ok := where[string(n)]; !ok {
				where[string(n)] = fmt.Sprintf("%s.containers[%d].resources.%s[%q]", specAt, i, list, string(n))
			}
			totals[string(n)] += q.Value()
		}
	}
	var ext []dra.ExtRequest
	for n, v := range totals {
		ext = append(ext, dra.ExtRequest{Name: n, Count: v, Field: where[n]})
	}
	sort.Slice(ext, func(a, b int) bool { return ext[a].Name < ext[b].Name })
	claims := len(ps.ResourceClaims) > 0 || len(ext) > 0
	for _, c := range ps.Containers {
		claims = claims || len(c.Resources.Claims) > 0
	}
	if !claims {
		return nil
	}
	req, err := devices.Pod(w.Namespace, ps, specAt, ext, nil)
	var fe *dra.FieldError
	if errors.As(err, &fe) {
		return strict.At(file, line, pos, fe.Field, "%s", fe.Msg)
	}
	if err != nil {
		return err
	}
	if len(req.Named) > 0 {
		n := req.Named[0]
		return strict.At(file, line, pos, n.Field, "%s is one set of devices shared by every replica; gpuplan models a service's replicas each with its own GPUs: use a resourceClaimTemplateName", n.What)
	}
	for _, n := range req.Notes {
		l := line
		if p, ok := pos[n.Field]; ok {
			l = p[0]
		}
		w.Notes = append(w.Notes, fmt.Sprintf("%s:%d: %s %s: %s: %s", file, l, w.Kind, w.Name, n.Field, n.Msg))
	}
	if req.Empty() {
		return nil
	}
	if req.GPUMilli > 0 {
		return strict.At(file, line, pos, specAt+".resourceClaims", "the claims ask for a share of a GPU (%d/1000); gpuplan models a service replica's whole GPUs or one MIG slice", req.GPUMilli)
	}
	if w.Pod.GPUs > 0 || w.Pod.MIG != "" {
		return strict.At(file, line, pos, specAt+".resourceClaims", "the replicas ask for GPUs by DRA claim and by the device plugin's resources; gpuplan gives a pod one kind of GPU")
	}
	if req.MIG != "" {
		if req.GPUs > 1 {
			return strict.At(file, line, pos, specAt+".resourceClaims", "the claims ask for %d MIG instances %s; gpuplan models one MIG slice a service replica", req.GPUs, req.MIG)
		}
		w.Pod.MIG = req.MIG
	} else {
		w.Pod.GPUs = int64(req.GPUs)
	}
	if req.Models != nil {
		r := cluster.Requirement{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: req.Models}
		if len(w.Pod.NodeAffinity) == 0 {
			w.Pod.NodeAffinity = []cluster.NodeSelectorTerm{{r}}
		} else {
			for i := range w.Pod.NodeAffinity {
				w.Pod.NodeAffinity[i] = append(w.Pod.NodeAffinity[i], r)
			}
		}
	}
	return nil
}
