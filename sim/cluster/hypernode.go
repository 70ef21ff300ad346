package cluster

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// HyperNode is one Volcano HyperNode (topology.volcano.sh/v1alpha1): a
// network performance domain of tier Tier (1 the tightest) whose members
// are nodes or HyperNodes of lower tiers.
type HyperNode struct {
	Name     string
	Tier     int
	TierName string
	Members  []HyperNodeMember
}

// HyperNodeMember is one spec.members[] entry: a node or HyperNode
// (HyperNode true) selected by exact name, a regular expression over the
// names, or (nodes only) a label selector.
type HyperNodeMember struct {
	HyperNode bool
	Exact     string
	Pattern   *regexp.Regexp
	Labels    labels.Selector
}

func (m *HyperNodeMember) matches(name string, ls labels.Labels) bool {
	switch {
	case m.Exact != "":
		return name == m.Exact
	case m.Pattern != nil:
		return m.Pattern.MatchString(name)
	case m.Labels != nil && ls != nil:
		return m.Labels.Matches(ls)
	}
	return false
}

// nodeLabels are node n's labels as a labels.Labels.
type nodeLabels struct {
	t Topology
	n int32
}

func (l nodeLabels) Has(k string) bool              { _, ok := l.t.NodeLabel(l.n, k); return ok }
func (l nodeLabels) Get(k string) string            { v, _ := l.t.NodeLabel(l.n, k); return v }
func (l nodeLabels) Lookup(k string) (string, bool) { return l.t.NodeLabel(l.n, k) }

// hyperSynthetic marks a domain no HyperNode of the tier gives: a node
// whose HyperNodes stop below a tier is its lower domain's own domain
// there.
const hyperSynthetic = int64(1) << 40

// HyperNodeLevel is the key of the topology level of HyperNodes of tier t.
func HyperNodeLevel(t int) string { return fmt.Sprintf("hypernode tier %d", t) }

// SetHyperNodes sets the cluster's topology levels from Volcano
// HyperNodes: one level per tier present (the widest tier first), a
// node's domain at a tier the HyperNode of that tier holding it (through
// its member HyperNodes). A node in no HyperNode has no domain and is
// left out of topology placement; a node whose HyperNodes stop below a
// tier is its own domain there (with its lower domain's nodes). Refused:
// a member naming no HyperNode, a HyperNode member of a tier not below
// its parent's, a cycle, a node in two HyperNodes of one tier.
func (c *Cluster) SetHyperNodes(hns []HyperNode) error {
	byName := map[string]int{}
	names := make([]string, len(hns))
	for i, h := range hns {
		if _, dup := byName[h.Name]; dup {
			return fmt.Errorf("HyperNode %q is defined twice", h.Name)
		}
		byName[h.Name] = i
		names[i] = h.Name
	}
	// Each HyperNode's children (HyperNodes) and direct nodes.
	children := make([][]int, len(hns))
	nodes := make([][]int32, len(hns))
	top := c.Topology()
	for i, h := range hns {
		for j := range h.Members {
			m := &h.Members[j]
			if m.HyperNode {
				found := false
				for k, name := range names {
					if k != i && m.matches(name, nil) {
						if hns[k].Tier >= h.Tier {
							return fmt.Errorf("HyperNode %q (tier %d) has member HyperNode %q of tier %d: a member's tier must be below its parent's", h.Name, h.Tier, name, hns[k].Tier)
						}
						children[i] = append(children[i], k)
						found = true
					}
				}
				if !found && m.Exact != "" {
					return fmt.Errorf("HyperNode %q: member HyperNode %q is not defined", h.Name, m.Exact)
				}
				continue
			}
			for n := range c.Nodes {
				if m.matches(top.HostnameOf(int32(n)), nodeLabels{top, int32(n)}) {
					nodes[i] = append(nodes[i], int32(n))
				}
			}
		}
	}
	var tiers []int
	for _, h := range hns {
		tiers = append(tiers, h.Tier)
	}
	slices.Sort(tiers)
	tiers = slices.Compact(tiers)
	slices.Reverse(tiers)
	level := map[int]int{}
	t := tasLevels{vals: make([][]int64, len(tiers)), tiers: tiers, tierNames: make([]string, len(tiers))}
	for l, tier := range tiers {
		level[tier] = l
		t.keys = append(t.keys, HyperNodeLevel(tier))
		t.vals[l] = make([]int64, len(c.Nodes))
		for n := range t.vals[l] {
			t.vals[l][n] = -1
		}
	}
	// A HyperNode's domain value: its name's rank among its tier's.
	rank := make([]int64, len(hns))
	for i, h := range hns {
		for j, o := range hns {
			if o.Tier == h.Tier && strings.Compare(o.Name, h.Name) < 0 && j != i {
				rank[i]++
			}
		}
		if t.tierNames[level[h.Tier]] == "" {
			t.tierNames[level[h.Tier]] = h.TierName
		}
	}
	var mark func(i int, n int32) error
	mark = func(i int, n int32) error {
		l := level[hns[i].Tier]
		if v := t.vals[l][n]; v >= 0 && v != rank[i] {
			return fmt.Errorf("node %s is in two HyperNodes of tier %d (%q and another)", top.HostnameOf(n), hns[i].Tier, hns[i].Name)
		}
		t.vals[l][n] = rank[i]
		return nil
	}
	// Members are of lower tiers, so the walk ends (no cycle can form).
	var walk func(i, root int) error
	walk = func(i, root int) error {
		for _, n := range nodes[i] {
			if err := mark(root, n); err != nil {
				return err
			}
		}
		for _, k := range children[i] {
			if err := walk(k, root); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range hns {
		if err := walk(i, i); err != nil {
			return err
		}
	}
	for n := range c.Nodes {
		in := false
		for l := range tiers {
			in = in || t.vals[l][n] >= 0
		}
		if !in {
			continue
		}
		for l := len(tiers) - 1; l >= 0; l-- {
			if t.vals[l][n] >= 0 {
				continue
			}
			if l == len(tiers)-1 {
				t.vals[l][n] = hyperSynthetic + int64(n)
			} else {
				t.vals[l][n] = hyperSynthetic + t.vals[l+1][n]
			}
		}
	}
	t.network = networkTiers(top, t.vals)
	c.tas = t
	return nil
}

// networkTiers marks each HyperNode level (widest first) that is a
// network tier: some HyperNode of it holds nodes of two NVLink domains
// (two values of nvidia.com/gpu.clique: a pool's label, else its
// topology's domain, each node its own in a pool without one). A tier
// whose HyperNodes each lie within one NVLink domain (GB200 NVL72
// cliques, or single nodes) adds no network hop.
func networkTiers(top Topology, vals [][]int64) []bool {
	out := make([]bool, len(vals))
	for l, v := range vals {
		clique := map[int64]string{}
		for n, d := range v {
			if d < 0 || d >= hyperSynthetic {
				continue
			}
			c, _ := top.NodeLabel(int32(n), LabelGPUClique)
			if old, ok := clique[d]; !ok {
				clique[d] = c
			} else if old != c {
				out[l] = true
				break
			}
		}
	}
	return out
}

// NetworkTierSpan is how many network tiers (HyperNode tiers some of
// whose HyperNodes cross NVLink domains, networkTiers) lie below the
// narrowest HyperNode holding every one of nodes: 0 when one HyperNode
// of the first network tier (or of a tier below it) holds them, 1 when
// it takes the second, and so on; -1 when no HyperNode holds them all
// (only Volcano's cluster-wide root does). ok is false when the run's
// levels are not HyperNodes, none of its tiers is a network tier, or
// some node is in no HyperNode.
// HasNetworkTiers says whether the run's HyperNodes have a network tier
// (NetworkTierSpan can price a placement).
func (c *Cluster) HasNetworkTiers() bool {
	return c.tas.tiers != nil && slices.Contains(c.tas.network, true)
}

func (c *Cluster) NetworkTierSpan(nodes []int32) (k int, ok bool) {
	t := &c.tas
	if t.tiers == nil || !slices.Contains(t.network, true) || len(nodes) == 0 {
		return 0, false
	}
	for _, n := range nodes {
		in := false
		for l := range t.vals {
			v := t.vals[l][n]
			in = in || (v >= 0 && v < hyperSynthetic)
		}
		if !in {
			return 0, false
		}
	}
	// Narrowest level (the last) first.
	for l := len(t.vals) - 1; l >= 0; l-- {
		v := t.vals[l]
		same := v[nodes[0]] >= 0
		for _, n := range nodes[1:] {
			same = same && v[n] == v[nodes[0]]
		}
		if same {
			return k, true
		}
		if t.network[l] {
			k++
		}
	}
	return -1, true
}

// HyperNodeTiers are the tiers of the cluster's topology levels when they
// come from HyperNodes (SetHyperNodes), widest first; nil otherwise.
func (c *Cluster) HyperNodeTiers() []int { return c.tas.tiers }

// HyperNodeTierNamed is the tier of HyperNodes whose spec.tierName is
// name (false: none is).
func (c *Cluster) HyperNodeTierNamed(name string) (int, bool) {
	for l, n := range c.tas.tierNames {
		if n == name && name != "" {
			return c.tas.tiers[l], true
		}
	}
	return 0, false
}
