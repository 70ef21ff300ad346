package topology

import (
	"cmp"
	"fmt"
	"slices"
)

// Kueue's topology-aware scheduling (TAS): how Kueue assigns a PodSet's
// pods to the domains of a Topology (levels such as block, rack, host,
// each a node label), as pkg/cache/scheduler/tas_flavor_snapshot.go's
// findTopologyAssignment does with Kueue's default feature gates (v0.15
// on: TASProfileMixed on, TASBalancedPlacement and
// TASRespectNodeAffinityPreferred off), for one PodSet without a leader:
//
//   - phase 1: each lowest-level domain (leaf) holds as many of the pods
//     as fit its free capacity; a domain's pods are its children's, its
//     slices (at the slice level) its pods / slice size, above it the
//     children's slices added up;
//   - phase 2a: at the requested level, domains are sorted (BestFit: most
//     slices first, then fewest pods, then by name); if the first holds
//     every slice, the one holding them with the fewest slices to spare is
//     taken ("the tightest domain that fits"). If none holds them: a
//     required request fails (the workload waits), a preferred one tries
//     the level above, and at the top level the pods are spread greedily
//     over the fewest domains;
//   - phase 2b: going down level by level, the chosen domains' children
//     are taken in the same order, greedily, the last one best-fitted,
//     until every slice (above the slice level) or pod (at and below it,
//     within each parent) has a leaf.
//
// Unconstrained requests (and a slice request without a level) use
// LeastFreeCapacity instead: domains sorted by fewest slices first, the
// first that holds them all taken, or the gaps filled smallest first.

// TASMode is how a PodSet asks for topology.
type TASMode uint8

const (
	// TASPreferred: kueue.x-k8s.io/podset-preferred-topology.
	TASPreferred TASMode = iota
	// TASRequired: kueue.x-k8s.io/podset-required-topology.
	TASRequired
	// TASUnconstrained: kueue.x-k8s.io/podset-unconstrained-topology, or
	// a slice request with no level (podset-slice-required-topology alone).
	TASUnconstrained
)

func (m TASMode) String() string {
	switch m {
	case TASRequired:
		return "required"
	case TASUnconstrained:
		return "unconstrained"
	}
	return "preferred"
}

// TASRequest is one PodSet's request against a topology of Levels levels
// (0 the widest).
type TASRequest struct {
	Mode TASMode
	// Level is the requested level (Unconstrained: Kueue takes the
	// lowest; a slice request without a level the highest).
	Level int
	// SliceLevel is the level each slice of SliceSize pods must fit in
	// (no slices: the lowest level, size 1).
	SliceLevel int
	SliceSize  int32
	// Count is the pods to place.
	Count int32
	// Bounded caps a preferred request's climb (Volcano's hard
	// networkTopology): when no domain at level Highest holds the pods,
	// the request fails (the job waits) rather than going wider.
	Bounded bool
	Highest int
}

// TASLeaf is one domain of the lowest level: Path its domain at every
// level (Path[l] identifies it among its parent's children; Path[len-1]
// the leaf itself), Pods how many of the PodSet's pods fit its free
// capacity now.
type TASLeaf struct {
	Path []int64
	Pods int32
}

type tasDomain struct {
	value    int64
	children []*tasDomain
	leaf     int // index into the leaves (-1 above the lowest level)
	pods     int32
	slices   int32
}

// TASAssign places req over leaves (every leaf's Path of length levels):
// the pods given to each leaf, in the leaves' order, or, when the request
// cannot be placed now, nil and Kueue's reason.
func TASAssign(levels int, leaves []TASLeaf, req TASRequest) ([]int32, string) {
	if levels <= 0 || req.Level < 0 || req.Level >= levels || req.SliceLevel < req.Level || req.SliceLevel >= levels {
		return nil, fmt.Sprintf("topology request at level %d (slices at %d) outside the topology's %d levels", req.Level, req.SliceLevel, levels)
	}
	size := max(req.SliceSize, 1)
	if req.Count <= 0 || req.Count%size != 0 {
		return nil, fmt.Sprintf("%d pods are not a whole number of slices of %d", req.Count, size)
	}
	perLevel := buildTASTree(levels, leaves)
	var fill func(d *tasDomain, l int)
	fill = func(d *tasDomain, l int) {
		if d.leaf >= 0 {
			d.pods = leaves[d.leaf].Pods
			if l == req.SliceLevel {
				d.slices = d.pods / size
			}
			return
		}
		d.pods, d.slices = 0, 0
		for _, c := range d.children {
			fill(c, l+1)
			d.pods += c.pods
			d.slices += c.slices
		}
		if l == req.SliceLevel {
			d.slices = d.pods / size
		}
	}
	for _, d := range perLevel[0] {
		fill(d, 0)
	}
	bestFit := req.Mode != TASUnconstrained
	need := req.Count / size
	highest := 0
	if req.Bounded {
		if req.Highest < 0 || req.Highest > req.Level {
			return nil, fmt.Sprintf("topology bound at level %d is below the request's level %d", req.Highest, req.Level)
		}
		highest = req.Highest
	}
	fit, lvl, reason := tasFitLevel(perLevel, req.Level, need, req.Mode, bestFit, size, highest, req.Bounded)
	if reason != "" {
		return nil, reason
	}
	fit = tasMinimum(fit, need, size, bestFit, true)
	for ; lvl < min(levels-1, req.SliceLevel); lvl++ {
		var lower []*tasDomain
		for _, d := range fit {
			lower = append(lower, d.children...)
		}
		fit = tasMinimum(tasSorted(lower, bestFit), need, size, bestFit, true)
	}
	for ; lvl < levels-1; lvl++ {
		var next []*tasDomain
		for _, d := range fit {
			next = append(next, tasMinimum(tasSorted(d.children, bestFit), d.pods, 1, bestFit, false)...)
		}
		fit = next
	}
	out := make([]int32, len(leaves))
	for _, d := range fit {
		out[d.leaf] += d.pods
	}
	return out, ""
}

// buildTASTree groups the leaves into domains level by level (a domain is
// its path from the top: values need not be unique across parents).
func buildTASTree(levels int, leaves []TASLeaf) [][]*tasDomain {
	perLevel := make([][]*tasDomain, levels)
	type key struct {
		parent *tasDomain
		value  int64
	}
	index := map[key]*tasDomain{}
	for i, lf := range leaves {
		var parent *tasDomain
		for l := 0; l < levels; l++ {
			k := key{parent, lf.Path[l]}
			d, ok := index[k]
			if !ok || l == levels-1 {
				d = &tasDomain{value: lf.Path[l], leaf: -1}
				if l == levels-1 {
					d.leaf = i
				}
				index[k] = d
				perLevel[l] = append(perLevel[l], d)
				if parent != nil {
					parent.children = append(parent.children, d)
				}
			}
			parent = d
		}
	}
	return perLevel
}

// tasSorted orders domains as Kueue's sortedDomains: BestFit most slices
// first, LeastFreeCapacity fewest first; then fewest pods, then by value.
func tasSorted(ds []*tasDomain, bestFit bool) []*tasDomain {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b *tasDomain) int {
		if a.slices != b.slices {
			if bestFit {
				return cmp.Compare(b.slices, a.slices)
			}
			return cmp.Compare(a.slices, b.slices)
		}
		if a.pods != b.pods {
			return cmp.Compare(a.pods, b.pods)
		}
		return cmp.Compare(a.value, b.value)
	})
	return out
}

// tasBestFit is the first domain holding need (slices, or pods when
// bySlices is false) with the fewest to spare; the first one when none
// holds them.
func tasBestFit(ds []*tasDomain, need int32, bySlices bool) *tasDomain {
	best, bestN := ds[0], int32(1<<31-1)
	for _, d := range ds {
		n := d.pods
		if bySlices {
			n = d.slices
		}
		if n >= need && n < bestN {
			best, bestN = d, n
		}
	}
	return best
}

// tasFitLevel is Kueue's findLevelWithFitDomains: the domains at level
// (or above, for a preferred request, up to level highest) that take the
// need slices; bounded: none at highest holding them fails.
func tasFitLevel(perLevel [][]*tasDomain, level int, need int32, mode TASMode, bestFit bool, size int32, highest int, bounded bool) ([]*tasDomain, int, string) {
	ds := perLevel[level]
	if len(ds) == 0 {
		return nil, 0, fmt.Sprintf("no topology domains at level %d", level)
	}
	sorted := tasSorted(ds, bestFit)
	top := sorted[0]
	if bestFit && top.slices >= need {
		top = tasBestFit(sorted, need, true)
	}
	if !bestFit {
		for _, d := range sorted {
			if d.slices >= need {
				return []*tasDomain{d}, level, ""
			}
		}
	}
	if top.slices < need {
		if mode == TASRequired || (bounded && level <= highest) {
			return nil, 0, tasNotFit(top.slices, need, size)
		}
		if level > highest && mode != TASUnconstrained {
			return tasFitLevel(perLevel, level-1, need, mode, bestFit, size, highest, bounded)
		}
		var out []*tasDomain
		left := need
		for i := 0; left > 0 && i < len(sorted); i++ {
			d := sorted[i]
			if bestFit && d.slices >= left {
				d = tasBestFit(sorted[i:], left, true)
			}
			out = append(out, d)
			left -= d.slices
		}
		if left > 0 {
			return nil, 0, tasNotFit(need-left, need, size)
		}
		return out, level, ""
	}
	return []*tasDomain{top}, level, ""
}

func tasNotFit(fit, need, size int32) string {
	unit := "slice"
	if size == 1 {
		unit = "pod"
	}
	if fit <= 0 {
		return fmt.Sprintf("the topology does not fit any of %d %s(s)", need, unit)
	}
	return fmt.Sprintf("the topology fits only %d out of %d %s(s)", fit, need, unit)
}

// tasMinimum is Kueue's updateCountsToMinimumGeneric without leaders:
// the domains, in order, take what they hold until need (slices of size,
// or pods when bySlices is false) is met, the last one best-fitted among
// those left; each domain's pods become what it was given.
func tasMinimum(ds []*tasDomain, need, size int32, bestFit, bySlices bool) []*tasDomain {
	var out []*tasDomain
	left := need
	for i, d := range ds {
		has := d.pods
		if bySlices {
			has = d.slices
		}
		if bestFit && has >= left {
			d = tasBestFit(ds[i:], left, bySlices)
			has = d.pods
			if bySlices {
				has = d.slices
			}
		}
		if has >= left {
			if bySlices {
				d.slices = left
			}
			d.pods = left * size
			return append(out, d)
		}
		d.pods = has * size
		left -= has
		out = append(out, d)
	}
	return out
}
