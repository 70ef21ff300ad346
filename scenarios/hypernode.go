package scenarios

import (
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Volcano HyperNodes (topology.volcano.sh/v1alpha1) in a policy: the
// network topology Volcano Jobs' spec.networkTopology is placed over
// (sim.Config.HyperNodes; cluster.Cluster.SetHyperNodes gives the nodes
// their levels). The fields are those of Volcano's CRD and types
// (staging/src/volcano.sh/apis/pkg/apis/topology/v1alpha1/hypernode_types.go).

const hyperNodeAPI = "topology.volcano.sh/v1alpha1"

type hyperNodeObj struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              hyperNodeSpec `json:"spec"`
	Status            any           `json:"status,omitempty"`
}

type hyperNodeSpec struct {
	Tier     *int              `json:"tier,omitempty"`
	TierName string            `json:"tierName,omitempty"`
	Members  []hyperNodeMember `json:"members,omitempty"`
}

type hyperNodeMember struct {
	Type     string            `json:"type,omitempty"`
	Selector hyperNodeSelector `json:"selector,omitempty"`
}

type hyperNodeSelector struct {
	ExactMatch *struct {
		Name string `json:"name"`
	} `json:"exactMatch,omitempty"`
	RegexMatch *struct {
		Pattern string `json:"pattern"`
	} `json:"regexMatch,omitempty"`
	LabelMatch *metav1.LabelSelector `json:"labelMatch,omitempty"`
}

// hyperNode reads one HyperNode, checked as Volcano's CRD and admission
// webhook do (a tier of at least 0; members of type Node or HyperNode,
// each with exactly one of exactMatch, regexMatch and labelMatch; a name
// a DNS subdomain; a pattern that
// compiles); a labelMatch on a HyperNode member, which Volcano ignores,
// is refused rather than selecting nothing.
func (p *Policy) hyperNode(d policyDoc) error {
	var h hyperNodeObj
	if err := d.strict(&h); err != nil {
		return err
	}
	if err := p.define(d, h.Name); err != nil {
		return err
	}
	s := &h.Spec
	if s.Tier == nil {
		return d.fieldErr("spec.tier", "a HyperNode needs a tier (Volcano's CRD: required)")
	}
	if *s.Tier < 0 {
		return d.fieldErr("spec.tier", "%d is below 0 (Volcano's CRD: minimum 0)", *s.Tier)
	}
	hn := cluster.HyperNode{Name: h.Name, Tier: *s.Tier, TierName: s.TierName}
	if d.has("spec.members") && len(s.Members) == 0 {
		return d.fieldErr("spec.members", "a HyperNode's members list has at least 1 item (Volcano's CRD)")
	}
	for i, m := range s.Members {
		at := fmt.Sprintf("spec.members[%d]", i)
		var mm cluster.HyperNodeMember
		switch m.Type {
		case "Node":
		case "HyperNode":
			mm.HyperNode = true
		default:
			return d.fieldErr(at+".type", "%s is not Node or HyperNode (Volcano's CRD)", Quote(m.Type))
		}
		sel := &m.Selector
		n := 0
		if sel.ExactMatch != nil {
			n++
			if errs := validation.IsDNS1123Subdomain(sel.ExactMatch.Name); len(errs) > 0 {
				return d.fieldErr(at+".selector.exactMatch.name", "%s is not a name: %s", Quote(sel.ExactMatch.Name), errs[0])
			}
			mm.Exact = sel.ExactMatch.Name
		}
		if sel.RegexMatch != nil {
			n++
			re, err := regexp.Compile(sel.RegexMatch.Pattern)
			if err != nil || sel.RegexMatch.Pattern == "" {
				return d.fieldErr(at+".selector.regexMatch.pattern", "%s is not a regular expression: %v", Quote(sel.RegexMatch.Pattern), err)
			}
			mm.Pattern = re
		}
		if sel.LabelMatch != nil {
			n++
			if mm.HyperNode {
				return d.fieldErr(at+".selector.labelMatch", "labelMatch takes effect only for members of type Node (Volcano's types): on a HyperNode member it selects nothing")
			}
			ls, err := metav1.LabelSelectorAsSelector(sel.LabelMatch)
			if err != nil {
				return d.fieldErr(at+".selector.labelMatch", "%v", err)
			}
			mm.Labels = ls
		}
		if n != 1 {
			return d.fieldErr(at+".selector", "give exactly one of exactMatch, regexMatch and labelMatch (Volcano's CRD), not %d", n)
		}
		hn.Members = append(hn.Members, mm)
	}
	p.HyperNodes = append(p.HyperNodes, hn)
	return nil
}

// hyperNodeNotes are the assumptions of a run placing Volcano Jobs over
// HyperNodes.
func hyperNodeNotes(n int, tiers []int) []string {
	return []string{fmt.Sprintf("Volcano network topology: Volcano Jobs' spec.networkTopology is placed over the %d HyperNodes' tiers %v: "+
		"hard keeps the job's pods in one HyperNode of tier at most highestTierAllowed, the tightest tier first, and the job waits while none holds it; "+
		"soft tries the tightest tier first and goes as wide as it must; within a tier the HyperNode with the fewest free pod slots that holds the job is taken "+
		"(Kueue's BestFit, where Volcano's network-topology-aware plugin scores by resource binpacking); nodes in no HyperNode take no job asking for topology; "+
		"a training gang's all-reduce across NVLink domains, unless inside one pool that gives racks or blocks (its levels price it), is priced by the narrowest HyperNode holding its nodes: "+
		"counting out tiers whose HyperNodes each lie within one NVLink domain, the first tier as a rack (the rails), the second as a block (the spine), a wider one or none (Volcano's root) as the datacentre core "+
		"(README: Volcano HyperNodes)", n, tiers)}
}
