package dra

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// ComputeDomainAPI is the API of NVIDIA's DRA driver's ComputeDomain
// (k8s-dra-driver-gpu, api/nvidia.com/resource/v1beta1).
const ComputeDomainAPI = "resource.nvidia.com/v1beta1"

// IsComputeDomain reports whether a document is a ComputeDomain.
func IsComputeDomain(apiVersion, kind string) bool {
	return apiVersion == ComputeDomainAPI && kind == "ComputeDomain"
}

// computeDomain is the driver's ComputeDomain as gpuplan reads it: the
// fields of its v1beta1 type (status is the driver's, read and ignored).
type computeDomain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		NumNodes int `json:"numNodes"`
		Channel  *struct {
			ResourceClaimTemplate struct {
				Name string `json:"name"`
			} `json:"resourceClaimTemplate"`
			AllocationMode string `json:"allocationMode,omitempty"`
		} `json:"channel"`
	} `json:"spec,omitempty"`
	Status struct {
		Status string `json:"status"`
		Nodes  []struct {
			Name      string `json:"name"`
			IPAddress string `json:"ipAddress"`
			CliqueID  string `json:"cliqueID"`
			Index     int    `json:"index"`
			Status    string `json:"status,omitempty"`
		} `json:"nodes,omitempty"`
	} `json:"status,omitempty"`
}

// domain is a ComputeDomain's channel: the ResourceClaimTemplate the
// driver creates for it, which pods name to join the domain.
type domain struct {
	name, namespace, template string
	// numNodes is the domain's spec.numNodes (0: not given).
	numNodes int
	file     string
	line     int
}

func (d *domain) what() string {
	return fmt.Sprintf("ComputeDomain %s (%s:%d)", strict.Quote(d.name), d.file, d.line)
}

// Channel is a pod's claim of a ComputeDomain's IMEX channel: not a GPU,
// but its job's pods must share one NVLink domain (node label
// nvidia.com/gpu.clique).
type Channel struct {
	// Domain is the ComputeDomain's namespace/name; What its kind, name
	// and place; Field the pod's field naming its template.
	Domain, What, Field string
}

func (s *Set) readComputeDomain(file string, m strict.Manifest) error {
	var cd computeDomain
	pos, err := m.Decode(file, &cd, strict.Options{What: "a ComputeDomain"})
	if err != nil {
		return err
	}
	errAt := func(field, format string, args ...any) error {
		e := &strict.InputError{File: file, Line: m.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
		if p, ok := pos[field]; ok {
			e.Line, e.Column = p[0], p[1]
		}
		return e
	}
	switch {
	case cd.Name == "":
		return errAt("metadata.name", "a ComputeDomain needs a name")
	case cd.Spec.NumNodes < 0:
		return errAt("spec.numNodes", "must be zero or greater")
	case cd.Spec.Channel == nil || cd.Spec.Channel.ResourceClaimTemplate.Name == "":
		return errAt("spec.channel.resourceClaimTemplate.name", "a ComputeDomain needs the name of its channel's ResourceClaimTemplate (the driver creates it; pods name it)")
	}
	switch cd.Spec.Channel.AllocationMode {
	case "", "Single", "All":
	default:
		return errAt("spec.channel.allocationMode", "%s is not Single or All", strict.Quote(cd.Spec.Channel.AllocationMode))
	}
	d := &domain{name: cd.Name, namespace: cd.Namespace, template: cd.Spec.Channel.ResourceClaimTemplate.Name, numNodes: cd.Spec.NumNodes, file: file, line: m.Line}
	k := key(d.namespace, d.template)
	if old, ok := s.channels[k]; ok {
		return errAt("spec.channel.resourceClaimTemplate.name", "ResourceClaimTemplate %s is the channel of %s too", strict.Quote(d.template), old.what())
	}
	if old, ok := s.templates[k]; ok {
		return errAt("spec.channel.resourceClaimTemplate.name", "ResourceClaimTemplate %s is also defined at %s:%d; the driver creates the channel's template itself", strict.Quote(d.template), old.file, old.line)
	}
	s.channels[k] = d
	s.Notes = append(s.Notes, fmt.Sprintf("%s:%d: %s: its channel's IMEX daemons and channel count (allocationMode) are not modelled; the pods naming ResourceClaimTemplate %s are kept in one NVLink domain (nvidia.com/gpu.clique)",
		file, m.Line, d.what(), strict.Quote(d.template)))
	return nil
}

// DomainNodes is the spec.numNodes of the ComputeDomain whose channel ch
// is (0: not given, or not of this set).
func (s *Set) DomainNodes(ch *Channel) int {
	for _, d := range s.channels {
		if key(d.namespace, d.name) == ch.Domain {
			return d.numNodes
		}
	}
	return 0
}

// channel finds the ComputeDomain whose channel template the pod names
// (by namespace as lookup does).
func (s *Set) channel(namespace, template string) *domain {
	if d := s.channels[key(namespace, template)]; d != nil {
		return d
	}
	if namespace != "" {
		return s.channels[key("", template)]
	}
	var found *domain
	for _, d := range s.channels {
		if d.template == template {
			if found != nil {
				return nil
			}
			found = d
		}
	}
	return found
}
