package workloads

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// checkGPUFields reads the pod template's Kueue topology-aware scheduling
// annotations (the request, nil for none) and refuses or notes its
// GPU-bearing fields gpuplan does not model (DRA claims, HAMi shares:
// scenarios/kube/gpufields); dot prefixes the template's fields.
func checkGPUFields(d *doc, t *corev1.PodTemplateSpec, dot string) (*cluster.TASRequest, error) {
	tas, fs := gpufields.KueueTopology(t.Annotations, dot+"metadata")
	for _, f := range append(fs, gpufields.PodFields(&t.Spec, dot+"spec")...) {
		if f.Err {
			return nil, d.errAt(f.Field, "%s", f.Msg)
		}
		d.note(f.Field, "%s", f.Msg)
	}
	return tas, nil
}

// tasField is the path (under a template's metadata) of the annotation
// that names a topology request's level: required, preferred, the slice
// level, or unconstrained.
func tasField(ann map[string]string) string {
	for _, k := range []string{gpufields.KueueRequiredTopology, gpufields.KueuePreferredTopology, gpufields.KueueSliceRequiredTopology} {
		if _, ok := ann[k]; ok {
			return fmt.Sprintf(".annotations[%q]", k)
		}
	}
	return fmt.Sprintf(".annotations[%q]", gpufields.KueueUnconstrainedTopology)
}

// TASUse is a group of pods asking for Kueue topology-aware scheduling
// and where its request is written (Msg empty).
type TASUse struct {
	Group Group
	At    strict.InputError
}

// DropVolcanoTopology takes every Volcano Job's spec.networkTopology off
// its tasks (a run without HyperNodes) and reports whether there was one.
func (s *Source) DropVolcanoTopology() bool {
	dropped := false
	for _, st := range s.streams {
		for _, i := range st.objs {
			o := &st.e.Objects[i]
			for _, g := range o.Groups {
				if c := g.Constraints; c != nil && c.TAS != nil && c.TAS.Volcano != nil {
					c.TAS, dropped = nil, true
				}
			}
		}
	}
	return dropped
}

// TASUses are the groups of every object the source submits that ask for
// topology, in the objects' order.
func (s *Source) TASUses() []TASUse {
	var out []TASUse
	for _, st := range s.streams {
		for _, i := range st.objs {
			o := &st.e.Objects[i]
			for _, g := range o.Groups {
				if c := g.Constraints; c != nil && c.TAS != nil {
					out = append(out, TASUse{Group: g, At: o.tasAt[c.TAS]})
				}
			}
		}
	}
	return out
}
