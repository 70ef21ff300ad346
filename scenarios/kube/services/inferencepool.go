package services

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// InferencePool is a Gateway API Inference Extension InferencePool
// (inference.networking.k8s.io/v1, the API's GA version): the model
// server pods an inference gateway routes to through an endpoint picker
// (llm-d's, or the extension's reference EPP), whose default scoring is
// the prefix-aware router of models/serving (queue and prefix-cache
// scores). The selector picks the pods by label; the endpoint picker is
// a Service named by endpointPickerRef.
type InferencePool struct {
	File            string
	Line            int
	Name, Namespace string
	// Selector is spec.selector.matchLabels.
	Selector map[string]string
	// TargetPort is the model servers' port (spec.targetPorts[0].number).
	TargetPort int32
	// EndpointPicker is the endpoint picker's Service, its port (9002
	// when unset, as the API says implementations infer) and the failure
	// mode (FailClose by default).
	EndpointPicker     string
	EndpointPickerPort int32
	FailureMode        string
}

// IsInferencePool says a manifest is an InferencePool of a version read.
func IsInferencePool(apiVersion, kind string) bool {
	return apiVersion == inferencePoolAPI && kind == "InferencePool"
}

// inferencePoolAPI is the InferencePool's group and version read.
const inferencePoolAPI = "inference.networking.k8s.io/v1"

// DefaultEndpointPickerPort is the endpoint picker's port when
// endpointPickerRef gives none.
const DefaultEndpointPickerPort = 9002

// inferencePool is inference.networking.k8s.io/v1 InferencePool as its
// published types give it (api/v1/inferencepool_types.go), every field,
// so that an unknown one is an error.
type inferencePool struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		TargetPorts []struct {
			Number int32 `json:"number"`
		} `json:"targetPorts"`
		EndpointPickerRef struct {
			Group       *string `json:"group"`
			Kind        string  `json:"kind"`
			Name        string  `json:"name"`
			PortNumber  *int32  `json:"portNumber"`
			FailureMode string  `json:"failureMode"`
		} `json:"endpointPickerRef"`
	} `json:"spec"`
	Status struct {
		Parents []struct {
			Conditions []metav1.Condition `json:"conditions"`
			ParentRef  struct {
				Group     *string `json:"group"`
				Kind      string  `json:"kind"`
				Name      string  `json:"name"`
				Namespace string  `json:"namespace"`
			} `json:"parentRef"`
		} `json:"parents"`
	} `json:"status"`
}

// ReadInferencePools reads a file's InferencePools strictly (other
// documents are left to ReadServing): unknown fields, a selector with no
// label, other than one target port, a port out of range, no endpoint
// picker, an endpoint picker that is not a Service or a failure mode
// that is not FailOpen or FailClose are InputErrors at their field.
// Other versions of the API (the x-k8s.io alphas) are refused with the
// version to use.
func ReadInferencePools(file string, data []byte) ([]InferencePool, error) {
	docs, err := strict.Manifests(file, data)
	if err != nil {
		return nil, err
	}
	var out []InferencePool
	for _, m := range docs {
		if m.Kind != "InferencePool" {
			continue
		}
		if m.APIVersion != inferencePoolAPI {
			return nil, strict.Errorf(file, m.Line, "apiVersion", "%s InferencePool: gpuplan reads %s, the API's GA version (the x-k8s.io alphas' selector, targetPortNumber and extensionRef became selector.matchLabels, targetPorts and endpointPickerRef)", strict.Quote(m.APIVersion), inferencePoolAPI)
		}
		var x inferencePool
		pos, err := m.Decode(file, &x, strict.Options{What: "an InferencePool"})
		if err != nil {
			return nil, err
		}
		at := func(field, format string, args ...any) error {
			return strict.At(file, m.Line, pos, field, format, args...)
		}
		sp := &x.Spec
		p := InferencePool{File: file, Line: m.Line, Name: x.Metadata.Name, Namespace: x.Metadata.Namespace, Selector: sp.Selector.MatchLabels,
			EndpointPicker: sp.EndpointPickerRef.Name, EndpointPickerPort: DefaultEndpointPickerPort, FailureMode: "FailClose"}
		switch {
		case p.Name == "":
			return nil, at("metadata.name", "is not given")
		case len(p.Selector) == 0:
			return nil, at("spec.selector.matchLabels", "selects no pod: give the model server pods' labels")
		case len(sp.TargetPorts) != 1:
			return nil, at("spec.targetPorts", "has %d ports; an InferencePool exposes exactly one", len(sp.TargetPorts))
		case sp.TargetPorts[0].Number < 1 || sp.TargetPorts[0].Number > 65535:
			return nil, at("spec.targetPorts[0].number", "%d is not a port (1 to 65535)", sp.TargetPorts[0].Number)
		case p.EndpointPicker == "":
			return nil, at("spec.endpointPickerRef.name", "is not given: the endpoint picker's Service")
		case sp.EndpointPickerRef.Kind != "" && sp.EndpointPickerRef.Kind != "Service":
			return nil, at("spec.endpointPickerRef.kind", "%s: gpuplan models an endpoint picker behind a Service", strict.Quote(sp.EndpointPickerRef.Kind))
		}
		p.TargetPort = sp.TargetPorts[0].Number
		if n := sp.EndpointPickerRef.PortNumber; n != nil {
			if *n < 1 || *n > 65535 {
				return nil, at("spec.endpointPickerRef.portNumber", "%d is not a port (1 to 65535)", *n)
			}
			p.EndpointPickerPort = *n
		}
		switch f := sp.EndpointPickerRef.FailureMode; f {
		case "":
		case "FailOpen", "FailClose":
			p.FailureMode = f
		default:
			return nil, at("spec.endpointPickerRef.failureMode", "%s is not FailOpen or FailClose", strict.Quote(f))
		}
		out = append(out, p)
	}
	return out, nil
}

// Selects says whether p routes to w's replica pods: the same namespace
// (both unset: the same) and every label of the selector on them.
func (p InferencePool) Selects(w *Workload) bool {
	if p.Namespace != w.Namespace || len(p.Selector) == 0 {
		return false
	}
	for k, v := range p.Selector {
		if got, ok := w.Pod.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Where is the pool's file, line and name, for notes and errors.
func (p InferencePool) Where() string {
	return fmt.Sprintf("InferencePool %s (%s:%d)", p.Name, p.File, p.Line)
}

// SelectorText is the selector as key=value pairs, sorted.
func (p InferencePool) SelectorText() string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(p.Selector)) {
		kv = append(kv, k+"="+p.Selector[k])
	}
	return strings.Join(kv, ",")
}
