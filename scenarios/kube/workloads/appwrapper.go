package workloads

import (
	"errors"
	"fmt"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// appWrapper is a CodeFlare AppWrapper (workload.codeflare.dev/v1beta2,
// project-codeflare/appwrapper api/v1beta2): Kubernetes objects wrapped as
// one Kueue workload, whose PodSets are the components' declared podSets
// (a path to a PodTemplateSpec in the component and a replica count) or,
// for kinds it knows, inferred from the wrapped object.
type appWrapper struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Components []appWrapperComponent `json:"components"`
		Suspend    bool                  `json:"suspend,omitempty"`
		ManagedBy  *string               `json:"managedBy,omitempty"`
	} `json:"spec"`
	Status any `json:"status,omitempty"`
}

type appWrapperComponent struct {
	Annotations     map[string]string `json:"annotations,omitempty"`
	DeclaredPodSets []struct {
		Replicas    *int32            `json:"replicas,omitempty"`
		Path        string            `json:"path"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"podSets,omitempty"`
	PodSetInfos any            `json:"podSetInfos,omitempty"`
	Template    map[string]any `json:"template"`
}

// appWrapperObject reads an AppWrapper as one gang of every component's
// pods (Kueue admits it as one workload): a component's declared podSets,
// each the PodTemplateSpec at its path with its replicas (default 1);
// else, for a workload kind gpuplan reads, the wrapped object's pod
// groups. Errors and notes name the wrapped fields by their path in the
// AppWrapper.
func appWrapperObject(d *doc, o *Object, x *appWrapper) error {
	o.readMeta(x.ObjectMeta)
	if len(x.Spec.Components) == 0 {
		return d.errAt("spec.components", "an AppWrapper needs at least one component")
	}
	for i, c := range x.Spec.Components {
		at := fmt.Sprintf("spec.components[%d]", i)
		tn, ok := strict.NodeAt(d.root, at+".template")
		if !ok || tn.Kind != yamlv3.MappingNode {
			return d.errAt(at+".template", "a component needs a template: the object it wraps")
		}
		api, _ := c.Template["apiVersion"].(string)
		kind, _ := c.Template["kind"].(string)
		if api == "" || kind == "" {
			return d.errAt(at+".template", "the wrapped object needs apiVersion and kind (an embedded resource)")
		}
		if len(c.DeclaredPodSets) > 0 {
			for j, ps := range c.DeclaredPodSets {
				pat := fmt.Sprintf("%s.podSets[%d]", at, j)
				rest, ok := strings.CutPrefix(ps.Path, "template.")
				if !ok {
					return d.errAt(pat+".path", "%s is not in the component's template (a path starts template.)", strict.Quote(ps.Path))
				}
				n, ok := strict.NodeAt(tn, rest)
				if !ok || n.Kind != yamlv3.MappingNode {
					return d.errAt(pat+".path", "%s names no PodTemplateSpec in the wrapped %s", strict.Quote(ps.Path), kind)
				}
				reps := int32(1)
				if ps.Replicas != nil {
					reps = *ps.Replicas
				}
				if reps < 0 || int64(reps) > strict.MaxReplicas {
					return d.errAt(pat+".replicas", "%d is not between 0 and %d", reps, strict.MaxReplicas)
				}
				if reps == 0 {
					continue
				}
				var t corev1.PodTemplateSpec
				pos, err := strict.Manifest{Root: n, Line: n.Line}.Decode(d.file, &t, strict.Options{What: "a pod template"})
				if err != nil {
					return under(err, at+"."+ps.Path)
				}
				sub := wrapped(d, pos, at+"."+ps.Path)
				g := Group{Name: fmt.Sprintf("%s-%d", strings.ToLower(kind), j), Pods: reps, Waves: 1}
				if g.Pod, g.Constraints, g.DRA, err = podOf(sub, o, &t, ""); err != nil {
					return err
				}
				o.Groups = append(o.Groups, g)
			}
			continue
		}
		out := schemaFor(api, kind)
		if out == nil {
			return d.errAt(at+".podSets", "gpuplan cannot infer the pods of a wrapped %s %s: declare the component's podSets (path and replicas)", strict.Quote(api), strict.Quote(kind))
		}
		pos, err := strict.Manifest{Root: tn, APIVersion: api, Kind: kind, Line: tn.Line}.Decode(d.file, out, strict.Options{What: "a manifest"})
		if err != nil {
			return under(err, at+".template")
		}
		inner := Object{File: d.file, Line: tn.Line, Kind: kind}
		sub := wrapped(d, pos, at+".template")
		sub.kind = kind
		if err := convert(sub, &inner, out); err != nil {
			return err
		}
		for _, g := range inner.Groups {
			if g.Alone {
				return d.errAt(at+".template", "a wrapped JobSet's exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology) is not modelled: the AppWrapper runs its pods as one gang, and gpuplan keeps child Jobs apart only as jobs of their own")
			}
		}
		for k := range max(inner.copies, 1) {
			for _, g := range inner.Groups {
				if inner.copies > 1 {
					g.Name = fmt.Sprintf("%s-%d", g.Name, k)
				}
				o.Groups = append(o.Groups, g)
			}
		}
		if o.Duration == 0 && inner.Duration > 0 {
			o.Duration, o.DurationFrom = inner.Duration, inner.DurationFrom
		}
		if inner.Restart != (Restart{}) || inner.MinAvailable > 0 || inner.Cron != nil {
			d.note(at+".template", "the wrapped %s's own restart, gang and schedule settings are not carried: the AppWrapper runs its pods as one gang", kind)
		}
	}
	if len(o.Groups) == 0 {
		return d.errAt("spec.components", "every component has 0 pods")
	}
	return o.readDuration(d, x.ObjectMeta)
}

// under names a decoding error's field by its path in the AppWrapper.
func under(err error, prefix string) error {
	var ie *strict.InputError
	if errors.As(err, &ie) && ie.Field != "" && !strings.HasPrefix(ie.Field, prefix) {
		e := *ie
		e.Field = prefix + "." + ie.Field
		return &e
	}
	return err
}

// wrapped is a doc for a wrapped object's fields: positions pos (its own
// paths), named in errors and notes under prefix.
func wrapped(d *doc, pos strict.Positions, prefix string) *doc {
	sub := *d
	sub.pos = pos
	sub.rename = func(field string) string {
		if field == "" {
			return prefix
		}
		return prefix + "." + field
	}
	return &sub
}
