package workloads

import (
	"reflect"
	"slices"
	"sort"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// maxAffinityTerms bounds the terms of a conjunction of required node
// affinities (each term of one with each of the other).
const maxAffinityTerms = 64

// bothConstraints is where a pod of template a and a pod of template b may
// both go: the union of their node selectors, the cross product of their
// required affinity terms, the tolerations both have (a taint the result
// tolerates is tolerated by each), and every topology spread constraint
// and required pod (anti-)affinity term of either (each once: the gang's
// pods keep both templates' rules). ok is false when the affinity terms
// would pass maxAffinityTerms.
func bothConstraints(a, b *cluster.Constraints) (c *cluster.Constraints, ok bool) {
	if a == nil {
		a = &cluster.Constraints{}
	}
	if b == nil {
		b = &cluster.Constraints{}
	}
	out := &cluster.Constraints{}
	var conflict []cluster.Requirement
	if len(a.NodeSelector)+len(b.NodeSelector) > 0 {
		out.NodeSelector = map[string]string{}
		for k, v := range a.NodeSelector {
			out.NodeSelector[k] = v
		}
		keys := make([]string, 0, len(b.NodeSelector))
		for k := range b.NodeSelector {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := b.NodeSelector[k]
			if prev, has := out.NodeSelector[k]; has && prev != v {
				// Two values for one label: no node has both. Kept as a
				// requirement every term carries, so nothing matches.
				conflict = append(conflict, cluster.Requirement{Key: k, Op: cluster.OpIn, Values: []string{v}})
				continue
			}
			out.NodeSelector[k] = v
		}
	}
	switch {
	case len(a.Affinity) == 0:
		out.Affinity = append(out.Affinity, b.Affinity...)
	case len(b.Affinity) == 0:
		out.Affinity = append(out.Affinity, a.Affinity...)
	default:
		if len(a.Affinity)*len(b.Affinity) > maxAffinityTerms {
			return nil, false
		}
		for _, ta := range a.Affinity {
			for _, tb := range b.Affinity {
				t := append(append(cluster.NodeSelectorTerm{}, ta...), tb...)
				out.Affinity = append(out.Affinity, t)
			}
		}
	}
	if len(conflict) > 0 {
		if len(out.Affinity) == 0 {
			out.Affinity = []cluster.NodeSelectorTerm{nil}
		}
		for i := range out.Affinity {
			out.Affinity[i] = append(append(cluster.NodeSelectorTerm{}, out.Affinity[i]...), conflict...)
		}
	}
	seen := map[cluster.Toleration]bool{}
	keep := func(from, other []cluster.Toleration) {
		for _, t := range from {
			if seen[t] {
				continue
			}
			for _, u := range other {
				if covers(u, t) {
					out.Tolerations = append(out.Tolerations, t)
					seen[t] = true
					break
				}
			}
		}
	}
	keep(a.Tolerations, b.Tolerations)
	keep(b.Tolerations, a.Tolerations)
	out.Spread = union(a.Spread, b.Spread)
	out.PodAffinity = union(a.PodAffinity, b.PodAffinity)
	// Kueue assigns each PodSet's topology on its own; as one gang here,
	// the first template's request (else the second's) places them all.
	out.TAS = a.TAS
	if out.TAS == nil {
		out.TAS = b.TAS
	}
	if out.NodeSelector == nil && out.Affinity == nil && out.Tolerations == nil && out.TAS == nil && out.Spread == nil && out.PodAffinity == nil {
		return nil, true
	}
	return out, true
}

// union is a's items, then those of b that a lacks (nil: neither has any).
func union[T any](a, b []T) []T {
	var out []T
	for _, x := range append(append([]T(nil), a...), b...) {
		if !slices.ContainsFunc(out, func(y T) bool { return reflect.DeepEqual(x, y) }) {
			out = append(out, x)
		}
	}
	return out
}

// covers reports whether toleration u tolerates every taint t does.
func covers(u, t cluster.Toleration) bool {
	if u.Effect != "" && u.Effect != t.Effect {
		return false
	}
	if u.Operator == "Exists" && u.Key == "" {
		return true
	}
	if u.Key != t.Key {
		return false
	}
	return u.Operator == "Exists" || t.Operator != "Exists" && u.Value == t.Value
}
