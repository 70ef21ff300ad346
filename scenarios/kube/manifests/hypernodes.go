package manifests

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// HyperNodeAPIVersion is Volcano's HyperNode API.
const HyperNodeAPIVersion = "topology.volcano.sh/v1alpha1"

// PathHyperNodes holds the policy's Volcano HyperNodes.
const PathHyperNodes = Applied + "/20-volcano-hypernodes.yaml"

// HyperNode is Volcano's HyperNode (topology.volcano.sh/v1alpha1): a
// network performance domain of a tier whose members are nodes or
// HyperNodes of lower tiers. The module proxy does not serve
// volcano.sh/apis, so this is the published schema's spec, decoded
// strictly.
type HyperNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              HyperNodeSpec `json:"spec"`
}

// HyperNodeSpec is a HyperNode's spec.
type HyperNodeSpec struct {
	Tier     int               `json:"tier"`
	TierName string            `json:"tierName,omitempty"`
	Members  []HyperNodeMember `json:"members,omitempty"`
}

// HyperNodeMember is one member: a Node or HyperNode selected by exactly
// one of its selectors.
type HyperNodeMember struct {
	Type     string            `json:"type"`
	Selector HyperNodeSelector `json:"selector"`
}

// HyperNodeSelector selects members by name, by a regular expression over
// names, or (nodes only) by labels.
type HyperNodeSelector struct {
	ExactMatch *HyperNodeExactMatch  `json:"exactMatch,omitempty"`
	RegexMatch *HyperNodeRegexMatch  `json:"regexMatch,omitempty"`
	LabelMatch *metav1.LabelSelector `json:"labelMatch,omitempty"`
}

// HyperNodeExactMatch selects the member of that name.
type HyperNodeExactMatch struct {
	Name string `json:"name"`
}

// HyperNodeRegexMatch selects the members whose names match.
type HyperNodeRegexMatch struct {
	Pattern string `json:"pattern"`
}

// hyperNodes writes the policy's Volcano HyperNodes back as read (a
// label selector normalised to matchExpressions): the network topology
// the run placed Volcano Jobs' spec.networkTopology over.
func (g *gen) hyperNodes() (File, error) {
	f := File{Path: PathHyperNodes}
	if g.pol == nil || len(g.pol.HyperNodes) == 0 {
		return f, nil
	}
	f.Comment = g.header(
		"Volcano HyperNodes: the network topology the simulation placed Volcano Jobs' spec.networkTopology over, read from "+strings.Join(g.policyFiles(), ", "),
		"and written back as read (tiers, tier names, members; a labelMatch as matchExpressions).",
	)
	for _, h := range g.pol.HyperNodes {
		hn := &HyperNode{
			TypeMeta:   metav1.TypeMeta{APIVersion: HyperNodeAPIVersion, Kind: "HyperNode"},
			ObjectMeta: metav1.ObjectMeta{Name: h.Name},
			Spec:       HyperNodeSpec{Tier: h.Tier, TierName: h.TierName},
		}
		for i, m := range h.Members {
			mm, err := hyperNodeMember(m)
			if err != nil {
				return f, fmt.Errorf("HyperNode %s: spec.members[%d]: %v", h.Name, i, err)
			}
			hn.Spec.Members = append(hn.Spec.Members, mm)
		}
		f.Objects = append(f.Objects, hn)
	}
	return f, nil
}

// hyperNodeMember is a member as Volcano's types write it.
func hyperNodeMember(m cluster.HyperNodeMember) (HyperNodeMember, error) {
	out := HyperNodeMember{Type: "Node"}
	if m.HyperNode {
		out.Type = "HyperNode"
	}
	switch {
	case m.Exact != "":
		out.Selector.ExactMatch = &HyperNodeExactMatch{Name: m.Exact}
	case m.Pattern != nil:
		out.Selector.RegexMatch = &HyperNodeRegexMatch{Pattern: m.Pattern.String()}
	case m.Labels != nil:
		reqs, _ := m.Labels.Requirements()
		ls := &metav1.LabelSelector{}
		for _, r := range reqs {
			var op metav1.LabelSelectorOperator
			switch r.Operator() {
			case selection.In, selection.Equals, selection.DoubleEquals:
				op = metav1.LabelSelectorOpIn
			case selection.NotIn, selection.NotEquals:
				op = metav1.LabelSelectorOpNotIn
			case selection.Exists:
				op = metav1.LabelSelectorOpExists
			case selection.DoesNotExist:
				op = metav1.LabelSelectorOpDoesNotExist
			default:
				return out, fmt.Errorf("label operator %q has no LabelSelector form", r.Operator())
			}
			e := metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op}
			if op == metav1.LabelSelectorOpIn || op == metav1.LabelSelectorOpNotIn {
				e.Values = r.ValuesUnsorted()
			}
			ls.MatchExpressions = append(ls.MatchExpressions, e)
		}
		out.Selector.LabelMatch = ls
	default:
		return out, fmt.Errorf("selects nothing")
	}
	return out, nil
}
