package manifests

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
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
	if levels := g.volcanoLevels(); levels != nil {
		return g.poolHyperNodes(levels), nil
	}
	if g.pol == nil || len(g.pol.HyperNodes) == 0 {
		return f, nil
	}
	f.Comment = g.header(
		"Volcano HyperNodes: the network topology the simulation placed Volcano Jobs' spec.networkTopology over, read from "+strings.Join(g.policyFiles(), ", "),
		"and written back as read (tiers, tier names, members; a labelMatch as matchExpressions).",
	)
	for _, h := range g.pol.HyperNodes {
		hn := hyperNode(metav1.ObjectMeta{Name: h.Name}, h.Tier, h.TierName)
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

// hyperNode is a HyperNode of that tier, without members.
func hyperNode(om metav1.ObjectMeta, tier int, tierName string) *HyperNode {
	return &HyperNode{
		TypeMeta:   metav1.TypeMeta{APIVersion: HyperNodeAPIVersion, Kind: "HyperNode"},
		ObjectMeta: om,
		Spec:       HyperNodeSpec{Tier: tier, TierName: tierName},
	}
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

// HyperNodes from the pools' topology: when the policy gives none and a
// class that runs as a Volcano Job asks for topology, the run placed its
// jobs over the pools' levels as Kueue would (sim.TASLevels: block, rack,
// the NVLink domain where one spans nodes, host). Volcano places a Job's
// spec.networkTopology over HyperNodes, so gpuplan writes those levels as
// HyperNodes, the tightest level a class asks for tier 1 and each wider
// one a tier up (the host is left to the scheduler, as Volcano does
// below tier 1): a tier-1 HyperNode selects its nodes by the level's node
// label (cluster.PoolSpec.LevelLabel's value), a wider one its member
// HyperNodes by name; the class's Job asks for its level's tier
// (volcanoNetworkTopology).

// levelTierNames are the tierNames of the HyperNodes of each level.
var levelTierNames = map[string]string{cluster.LabelGPUClique: "nvlink-domain", cluster.LabelTopologyRack: "rack", cluster.LabelTopologyBlock: "block"}

// classLevel is the level a class's topology request names.
func classLevel(c scenarios.ClassSpec) string {
	if t := c.Topology; t != nil && t.Required != "" {
		return t.Required
	} else if t != nil {
		return t.Preferred
	}
	return ""
}

// volcanoLevels are the node label keys of the HyperNode tiers gpuplan
// writes from the pools' topology, tier 1 first; nil when the policy
// gives HyperNodes or a Kueue Topology, or no class running as a Volcano
// Job asks for a level of the pools' topology wider than the host.
func (g *gen) volcanoLevels() []string {
	if g.pol != nil && (len(g.pol.HyperNodes) > 0 || len(g.pol.TASFlavors()) > 0) {
		return nil
	}
	levels := sim.TASLevels(nil, g.m.Pools)
	tight := -1
	for _, c := range g.classes() {
		if c.Topology == nil || g.volcanoSpec(c) == nil {
			continue
		}
		if l := slices.Index(levels, classLevel(c)); l >= 0 && levels[l] != cluster.LabelHostname {
			tight = max(tight, l)
		}
	}
	if tight < 0 {
		return nil
	}
	out := slices.Clone(levels[:tight+1])
	slices.Reverse(out)
	return out
}

// levelValue is the value of level key's label on the pool's node slot:
// the pool's own label, else the slot's place in its topology.
func levelValue(p *cluster.PoolSpec, slot int32, key string) string {
	if v, ok := p.Labels[key]; ok {
		return v
	}
	v, _ := p.LevelLabel(slot, key)
	return v
}

// poolHyperNodes is the HyperNodes file of the pools' levels (tier 1
// first): one HyperNode per domain of each level, over every node slot
// of every pool.
func (g *gen) poolHyperNodes(levels []string) File {
	f := File{Path: PathHyperNodes}
	var tiers, labels []string
	for i, l := range levels {
		tiers = append(tiers, fmt.Sprintf("tier %d %s", i+1, levelTierNames[l]))
		labels = append(labels, l)
	}
	f.Comment = g.header(
		"Volcano HyperNodes of the pools' topology ("+strings.Join(tiers, ", ")+"): the domains the run kept the gangs of the classes that ask for topology within, as their Jobs' spec.networkTopology asks Volcano to.",
		"A tier-1 HyperNode selects its nodes by label ("+strings.Join(labels[:1], "")+"), a wider one its member HyperNodes by name. Each node must carry its labels ("+strings.Join(labels, ", ")+"), values as written here (POOL-rack-R: the pool's node slots fill racks and blocks in order); label the nodes as they are racked.",
	)
	index := map[string]*HyperNode{}
	for tier, key := range levels {
		for i := range g.m.Pools {
			p := &g.m.Pools[i]
			for slot := int32(0); slot < int32(p.Slots()); slot++ {
				v := levelValue(p, slot, key)
				hn, ok := index[key+"="+v]
				if !ok {
					hn = hyperNode(managedMeta(kubeName(v)), tier+1, levelTierNames[key])
					if tier == 0 {
						hn.Spec.Members = []HyperNodeMember{{Type: "Node", Selector: HyperNodeSelector{LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{key: v}}}}}
					}
					index[key+"="+v] = hn
					f.Objects = append(f.Objects, hn)
				}
				if tier == 0 {
					continue
				}
				child := kubeName(levelValue(p, slot, levels[tier-1]))
				if !slices.ContainsFunc(hn.Spec.Members, func(m HyperNodeMember) bool { return m.Selector.ExactMatch.Name == child }) {
					hn.Spec.Members = append(hn.Spec.Members, HyperNodeMember{Type: "HyperNode", Selector: HyperNodeSelector{ExactMatch: &HyperNodeExactMatch{Name: child}}})
				}
			}
		}
	}
	return f
}

// volcanoNetworkTopology is the spec.networkTopology of class c's Volcano
// Job over the HyperNodes of levels (tier 1 first) and the words for its
// comment: a required level is hard within one HyperNode of its tier; a
// preferred one soft (Volcano's soft mode tries the tightest tier first,
// so a preferred level above tier 1 is a warning). nil, with a warning,
// when the class's level is not a tier (the host; HyperNodes or a Kueue
// Topology of the policy's).
func (j *jobFile) volcanoNetworkTopology(levels []string) (*VolcanoNetworkTopology, string) {
	c := j.c
	key := classLevel(c)
	tier := slices.Index(levels, key) + 1
	if tier == 0 {
		return nil, j.warn("class %s asks for topology (%s) but runs as a Volcano Job, which Kueue does not admit: Volcano places by spec.networkTopology over HyperNodes, and the level is not a tier of the HyperNodes gpuplan writes from the pools' racks and blocks (the host, or the policy's own topology), so no topology request is written; the simulation kept the class's pods within one domain as Kueue would", c.Name, classTopologyWords(c))
	}
	where := fmt.Sprintf("the HyperNodes of %s (tier %d: %s)", PathHyperNodes, tier, levelTierNames[key])
	if c.Topology.Required != "" {
		return &VolcanoNetworkTopology{Mode: "hard", HighestTierAllowed: ptr(tier)},
			fmt.Sprintf("Volcano keeps each job's pods within one HyperNode of tier %d (spec.networkTopology hard, highestTierAllowed %d) over %s, and the job waits while none holds it: the class's required %s.", tier, tier, where, key)
	}
	nt := &VolcanoNetworkTopology{Mode: "soft"}
	if tier > 1 {
		return nt, j.warn("class %s prefers %s, tier %d of the HyperNodes written; Volcano's soft network topology tries the tightest tier (tier 1, %s) first, where the simulation tried %s first as Kueue would", c.Name, key, tier, levelTierNames[levels[0]], key)
	}
	return nt, fmt.Sprintf("Volcano tries to keep each job's pods within one HyperNode of the tightest tier (spec.networkTopology soft) over %s and goes wider as it must: the class's preferred %s.", where, key)
}
