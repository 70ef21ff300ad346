package scenarios

import (
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/crds"
	"gpuplan.dev/gpuplan/validate/strict"
)

// The rules of the projects' published CRDs (OpenAPI required fields and
// their CEL x-kubernetes-validations) that creating an object can break,
// checked as the API server checks them: the first broken rule is an
// error at its field, with the CRD's own message.

// nodePoolRules are karpenter.sh/v1 NodePool's rules (sigs.k8s.io/karpenter
// pkg/apis/v1: NodeClassReference's +required group, kind and name and
// their "may not be empty" rules; the group's pattern ^[^/]*$).
func nodePoolRules(d policyDoc, np *karpv1.NodePool) error {
	const at = "spec.template.spec.nodeClassRef"
	ref := np.Spec.Template.Spec.NodeClassRef
	if ref == nil {
		return d.fieldErr(at, "Required value (the karpenter.sh/v1 NodePool CRD requires nodeClassRef: group, kind and name)")
	}
	// Which of the three the document leaves out (an empty string is the
	// CEL rule's "may not be empty").
	node, _ := nodeAtPath(d, at)
	for _, f := range []struct{ name, v string }{{"group", ref.Group}, {"kind", ref.Kind}, {"name", ref.Name}} {
		if !hasKey(node, f.name) {
			return d.fieldErr(at+"."+f.name, "Required value (the karpenter.sh/v1 NodePool CRD requires nodeClassRef.%s)", f.name)
		}
		if f.v == "" {
			return d.fieldErr(at+"."+f.name, "Invalid value: \"\": %s may not be empty", f.name)
		}
	}
	for _, c := range ref.Group {
		if c == '/' {
			return d.fieldErr(at+".group", "Invalid value: %s: should match '^[^/]*$' (a group such as karpenter.k8s.aws, not an apiVersion)", Quote(ref.Group))
		}
	}
	return nil
}

// ec2NodeClass is karpenter.k8s.aws/v1 EC2NodeClass as the published CRD
// (aws/karpenter-provider-aws pkg/apis/v1) declares its fields; the ones
// gpuplan does not read are free-form.
type ec2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ec2NodeClassSpec `json:"spec"`
	Status            any              `json:"status,omitempty"`
}

type ec2NodeClassSpec struct {
	SubnetSelectorTerms              []any             `json:"subnetSelectorTerms"`
	SecurityGroupSelectorTerms       []any             `json:"securityGroupSelectorTerms"`
	CapacityReservationSelectorTerms []any             `json:"capacityReservationSelectorTerms,omitempty"`
	AssociatePublicIPAddress         *bool             `json:"associatePublicIPAddress,omitempty"`
	AMISelectorTerms                 []ec2AMISelector  `json:"amiSelectorTerms"`
	AMIFamily                        *string           `json:"amiFamily,omitempty"`
	UserData                         *string           `json:"userData,omitempty"`
	Role                             string            `json:"role,omitempty"`
	InstanceProfile                  *string           `json:"instanceProfile,omitempty"`
	Tags                             map[string]string `json:"tags,omitempty"`
	Kubelet                          any               `json:"kubelet,omitempty"`
	BlockDeviceMappings              []any             `json:"blockDeviceMappings,omitempty"`
	InstanceStorePolicy              *string           `json:"instanceStorePolicy,omitempty"`
	DetailedMonitoring               *bool             `json:"detailedMonitoring,omitempty"`
	MetadataOptions                  any               `json:"metadataOptions,omitempty"`
	Context                          *string           `json:"context,omitempty"`
	IPPrefixCount                    *int32            `json:"ipPrefixCount,omitempty"`
}

type ec2AMISelector struct {
	Alias        string            `json:"alias,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	ID           string            `json:"id,omitempty"`
	Name         string            `json:"name,omitempty"`
	Owner        string            `json:"owner,omitempty"`
	SSMParameter string            `json:"ssmParameter,omitempty"`
}

// ec2NodeClassRules are the v1 EC2NodeClass CRD's rules: the required
// selector terms (at least one each), exactly one of role and
// instanceProfile, amiFamily where no term gives an alias, and the
// amiFamily and instanceStorePolicy enums.
func ec2NodeClassRules(d policyDoc, nc *ec2NodeClass) error {
	s := &nc.Spec
	for _, f := range []struct {
		name string
		n    int
	}{{"subnetSelectorTerms", len(s.SubnetSelectorTerms)}, {"securityGroupSelectorTerms", len(s.SecurityGroupSelectorTerms)}, {"amiSelectorTerms", len(s.AMISelectorTerms)}} {
		node, _ := nodeAtPath(d, "spec")
		if !hasKey(node, f.name) {
			return d.fieldErr("spec."+f.name, "Required value (the karpenter.k8s.aws/v1 EC2NodeClass CRD requires %s)", f.name)
		}
		if f.n == 0 {
			return d.fieldErr("spec."+f.name, "Invalid value: 0: spec.%s in body should have at least 1 items", f.name)
		}
	}
	alias := false
	for i, t := range s.AMISelectorTerms {
		if t.Alias == "" && len(t.Tags) == 0 && t.ID == "" && t.Name == "" && t.SSMParameter == "" {
			return d.fieldErr(fmt.Sprintf("spec.amiSelectorTerms[%d]", i), "Invalid value: expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']")
		}
		if t.Alias != "" {
			alias = true
		}
	}
	if (s.Role != "") == (s.InstanceProfile != nil) {
		return d.fieldErr("spec", "Invalid value: must specify exactly one of ['role', 'instanceProfile']")
	}
	if !alias && s.AMIFamily == nil {
		return d.fieldErr("spec", "Invalid value: amiFamily is required if amiSelectorTerms does not specify an alias")
	}
	if f := s.AMIFamily; f != nil {
		switch *f {
		case "AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025":
		default:
			return d.fieldErr("spec.amiFamily", "Unsupported value: %s: supported values: \"AL2\", \"AL2023\", \"Bottlerocket\", \"Custom\", \"Windows2019\", \"Windows2022\", \"Windows2025\"", Quote(*f))
		}
	}
	if p := s.InstanceStorePolicy; p != nil && *p != "RAID0" {
		return d.fieldErr("spec.instanceStorePolicy", "Unsupported value: %s: supported values: \"RAID0\"", Quote(*p))
	}
	return nil
}

// checkKarpenterCRD checks a NodePool or EC2NodeClass against its
// published CRD schema and every CEL rule in it that creation can break
// (scenarios/kube/crds/karpenter), as the API server does on create, after
// gpuplan's own checks above, whose words say more; a broken rule is an
// error at its field's line with the rule's message.
func (d policyDoc) checkKarpenterCRD() error {
	if d.root == nil {
		return nil
	}
	crd, err := crds.Karpenter(d.tm.APIVersion, d.tm.Kind)
	if err != nil || crd == nil {
		return err
	}
	return crd.Check(d.file, strict.Manifest{Root: d.root, APIVersion: d.tm.APIVersion, Kind: d.tm.Kind, Line: d.line})
}

// nodeAtPath is the document's node at a field path (nil where the
// document does not give it).
func nodeAtPath(d policyDoc, path string) (*yamlv3.Node, bool) {
	if d.root == nil {
		return nil, false
	}
	n, ok := strict.NodeAt(d.root, path)
	if !ok {
		return nil, false
	}
	return n, true
}

// hasKey reports whether a mapping node gives key.
func hasKey(n *yamlv3.Node, key string) bool {
	if n == nil || n.Kind != yamlv3.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
