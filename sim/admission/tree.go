package admission

import (
	"fmt"
	"slices"
)

// Cohorts form trees (Kueue's hierarchical cohorts): ClusterQueues are the
// leaves, Cohorts the inner nodes, and a Cohort may hold quota of its own.
// Every node has, per flavor and resource, a subtree quota (its own nominal
// quota and what its children lend up to it), a guaranteed part it keeps
// from its parent (subtree quota less its lendingLimit; none without one)
// and a usage (for a Cohort, what its children use beyond their
// guaranteed parts). What a node may still use is its unused guaranteed
// part plus what its parent has available, capped by its borrowingLimit;
// a root has its subtree quota less its usage. A flat cohort is the tree
// of depth one.

// Cohort is an inner node of a cohort tree.
type Cohort struct {
	Name string
	// Parent is the parent Cohort ("" for a root).
	Parent string
	// Groups is quota the Cohort holds itself, with limits towards its
	// parent; Covered lists resources, Flavors their quotas.
	Groups []ResourceGroup
	// FairWeight is the Cohort's fair-sharing weight against its
	// siblings, as a ClusterQueue's.
	FairWeight int64
}

// cnode is a node of a cohort tree: a ClusterQueue (cq >= 0) or a Cohort.
type cnode struct {
	name    string
	parent  int // node index, -1 for a root
	cq      int // ClusterQueue index, -1 for a Cohort
	depth   int
	own     []Quota // per flavor-resource key; Nominal 0 and no limits where unset
	subtree []int64
	usage   []int64
	// potential is, per key, the most the node could use with nothing in
	// use (fixed by the quotas: filled once the tree is built).
	potential []int64
	hasQuota  bool // a Cohort holding quota of its own
	// height is a Cohort's height in its tree as Kueue's getNodeHeight
	// counts it: 1 with children, one more than its highest child Cohort.
	height int
	groups []ResourceGroup
	weight int64 // a Cohort's fair-sharing weight in thousandths
}

// tree is the cohort trees' nodes, ClusterQueues and Cohorts alike, as
// Kueue's snapshot keeps them (one resource-node type for both; what a
// node may borrow worked out up the tree). A node's quota and usage are
// slices indexed by flavor-resource key (frKey).
type tree struct {
	nodes []*cnode
	// nres is the number of resources: a key's stride per flavor.
	nres int
}

// frKey is a flavor and resource's index into a node's slices.
func (t *tree) frKey(flavor, res int) int { return flavor*t.nres + res }

func (n *cnode) guaranteed(k int) int64 {
	if l := n.own[k].LendingLimit; l != NoLimit {
		return max(0, n.subtree[k]-l)
	}
	return 0
}

func (n *cnode) contrib(k int) int64 { return max(0, n.usage[k]-n.guaranteed(k)) }

// addUsage changes a node's usage and passes the change in what it uses
// of its parent up the tree.
func (t *tree) addUsage(i, k int, d int64) {
	for i >= 0 && d != 0 {
		n := t.nodes[i]
		before := n.contrib(k)
		n.usage[k] += d
		d = n.contrib(k) - before
		i = n.parent
	}
}

// available is what node i may still use of a flavor-resource.
func (t *tree) available(i, k int) int64 {
	n := t.nodes[i]
	if n.parent < 0 {
		return n.subtree[k] - n.usage[k]
	}
	g := n.guaranteed(k)
	local := max(0, g-n.usage[k])
	fromParent := t.available(n.parent, k)
	if bl := n.own[k].BorrowingLimit; bl != NoLimit {
		stored := n.subtree[k] - g
		usedInParent := max(0, n.usage[k]-g)
		fromParent = min(fromParent, stored-usedInParent+bl)
	}
	return local + max(0, fromParent)
}

// potentialOf is the most node i could use of a flavor-resource with
// nothing in use: its guaranteed part plus what its ancestors could give
// it within its borrowing limit.
func (t *tree) potentialOf(i, k int) int64 {
	n := t.nodes[i]
	if n.parent < 0 {
		return n.subtree[k]
	}
	g := n.guaranteed(k)
	fromParent := t.potentialOf(n.parent, k)
	if bl := n.own[k].BorrowingLimit; bl != NoLimit {
		fromParent = min(fromParent, n.subtree[k]-g+bl)
	}
	return g + fromParent
}

// buildTree makes the cohort tree's nodes: one per ClusterQueue, one per
// Cohort defined or named by a queue or as a parent; it fills each
// queue's root (st.cohort) and each root's members (s.cohorts).
func (s *snapshot) buildTree(spec *Spec) error {
	byName := map[string]int{}
	defined := map[string]*Cohort{}
	for i := range spec.Cohorts {
		ch := &spec.Cohorts[i]
		if ch.Name == "" || defined[ch.Name] != nil {
			return fmt.Errorf("Cohort %q: missing or duplicate name", ch.Name)
		}
		defined[ch.Name] = ch
		for _, g := range ch.Groups {
			for _, r := range g.Covered {
				if _, ok := s.res[r]; !ok {
					s.res[r] = len(s.resName)
					s.resName = append(s.resName, r)
				}
			}
		}
	}
	s.nres = len(s.resName)
	nk := len(spec.Flavors) * s.nres
	newNode := func(name string, cq int) int {
		n := &cnode{name: name, parent: -1, cq: cq, own: make([]Quota, nk), subtree: make([]int64, nk), usage: make([]int64, nk)}
		for k := range n.own {
			n.own[k] = Quota{BorrowingLimit: NoLimit, LendingLimit: NoLimit}
		}
		s.nodes = append(s.nodes, n)
		return len(s.nodes) - 1
	}
	var cohortNode func(name string, trail []string) (int, error)
	cohortNode = func(name string, trail []string) (int, error) {
		if i, ok := byName[name]; ok {
			return i, nil
		}
		if slices.Contains(trail, name) {
			return 0, fmt.Errorf("Cohort %s is in a cycle of parents (%v)", name, append(trail, name))
		}
		i := newNode(name, -1)
		byName[name] = i
		s.nodes[i].weight = 1000
		ch := defined[name]
		if ch == nil {
			return i, nil
		}
		n := s.nodes[i]
		n.groups = ch.Groups
		n.weight = (&ClusterQueue{FairWeight: ch.FairWeight}).weight()
		for gi, g := range ch.Groups {
			for _, f := range g.Flavors {
				fi, ok := s.flavor[f.Flavor]
				if !ok {
					return 0, fmt.Errorf("Cohort %s: resourceGroups[%d] names flavor %q, which no ResourceFlavor defines", name, gi, f.Flavor)
				}
				if len(f.Resources) != len(g.Covered) {
					return 0, fmt.Errorf("Cohort %s: flavor %s lists %d resources, the group covers %d", name, f.Flavor, len(f.Resources), len(g.Covered))
				}
				for ri, q := range f.Resources {
					if q.Nominal < 0 || q.BorrowingLimit < NoLimit || q.LendingLimit < NoLimit {
						return 0, fmt.Errorf("Cohort %s: flavor %s resource %s: negative quota", name, f.Flavor, g.Covered[ri])
					}
					if ch.Parent == "" && (q.BorrowingLimit != NoLimit || q.LendingLimit != NoLimit) {
						return 0, fmt.Errorf("Cohort %s: borrowingLimit and lendingLimit need a parent Cohort", name)
					}
					n.own[s.frKey(fi, s.res[g.Covered[ri]])] = q
					n.hasQuota = n.hasQuota || q.Nominal > 0
				}
			}
		}
		if ch.Parent != "" {
			p, err := cohortNode(ch.Parent, append(trail, name))
			if err != nil {
				return 0, err
			}
			s.nodes[i].parent = p
		}
		return i, nil
	}
	for _, ch := range spec.Cohorts {
		if _, err := cohortNode(ch.Name, nil); err != nil {
			return err
		}
	}
	for qi, st := range s.cqs {
		i := newNode(st.Name, qi)
		st.node = i
		n := s.nodes[i]
		for g, grp := range st.Groups {
			for f, fl := range st.flavors[g] {
				for r, name := range grp.Covered {
					n.own[s.frKey(fl, s.res[name])] = st.quota[g][f][r]
				}
			}
		}
		if st.Cohort != "" {
			p, err := cohortNode(st.Cohort, nil)
			if err != nil {
				return err
			}
			n.parent = p
		}
	}
	s.sumSubtrees(nk)
	s.findRoots()
	s.buildFairDivision()
	return nil
}

// sumSubtrees works out each node's depth, its subtree quota (bottom-up,
// deepest first: its own nominal quota and what its children lend up to
// it) and its potential (nk flavor-resource keys).
func (s *snapshot) sumSubtrees(nk int) {
	order := make([]int, len(s.nodes))
	for i, n := range s.nodes {
		order[i] = i
		for p := n.parent; p >= 0; p = s.nodes[p].parent {
			n.depth++
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return s.nodes[b].depth - s.nodes[a].depth })
	for _, i := range order {
		n := s.nodes[i]
		for k := range n.subtree {
			n.subtree[k] += n.own[k].Nominal
		}
		if n.parent >= 0 {
			p := s.nodes[n.parent]
			for k := range n.subtree {
				p.subtree[k] += n.subtree[k] - n.guaranteed(k)
			}
			p.height = max(p.height, 1)
			if n.cq < 0 {
				p.height = max(p.height, n.height+1)
			}
		}
	}
	for i, n := range s.nodes {
		n.potential = make([]int64, nk)
		for k := range n.potential {
			n.potential[k] = s.potentialOf(i, k)
		}
	}
}

// findRoots lists the cohort trees (their roots and member queues, each
// queue's tree in st.cohort) and the Cohorts that hold quota of their own.
func (s *snapshot) findRoots() {
	rootOf := func(i int) int {
		for s.nodes[i].parent >= 0 {
			i = s.nodes[i].parent
		}
		return i
	}
	roots := map[int]int{}
	for i, n := range s.nodes {
		if n.cq < 0 && n.parent < 0 {
			roots[i] = len(s.cohorts)
			s.rootNode = append(s.rootNode, i)
			s.cohorts = append(s.cohorts, nil)
		}
	}
	for qi, st := range s.cqs {
		if st.Cohort == "" {
			st.cohort = -1
			continue
		}
		k := roots[rootOf(st.node)]
		st.cohort = k
		s.cohorts[k] = append(s.cohorts[k], qi)
	}
	for i, n := range s.nodes {
		if n.cq < 0 && n.hasQuota {
			s.lenders = append(s.lenders, i)
		}
	}
}

// root is the tree (index into s.cohorts) a Cohort node belongs to.
func (s *snapshot) rootIndex(i int) int {
	for s.nodes[i].parent >= 0 {
		i = s.nodes[i].parent
	}
	return slices.Index(s.rootNode, i)
}

// ownGPUs is a Cohort's own quota of GPUs, over flavors.
func (s *snapshot) ownGPUs(i int) int64 {
	n := s.nodes[i]
	var nominal int64
	for fi := range s.flavors {
		for ri, name := range s.resName {
			if IsGPU(name) {
				nominal += n.own[s.frKey(fi, ri)].Nominal
			}
		}
	}
	return nominal
}
