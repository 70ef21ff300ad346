package cluster

import (
	"fmt"
	"slices"
	"strings"

	"gpuplan.dev/gpuplan/models/topology"
)

// The node labels that carry a pool topology's levels (models/topology)
// for Kueue's topology-aware scheduling: the block and rack keys of
// Kueue's documentation and samples, and the NVLink domain's key that
// NVIDIA's GPU feature discovery sets on GB200/GB300 nodes.
const (
	LabelTopologyBlock = "cloud.provider.com/topology-block"
	LabelTopologyRack  = "cloud.provider.com/topology-rack"
	LabelGPUClique     = "nvidia.com/gpu.clique"
)

// TASRequest is a job's Kueue topology-aware scheduling request: the
// pod template's kueue.x-k8s.io/podset-*-topology annotations. Level and
// SliceLevel are node label keys among the cluster's TAS levels
// (SetTASLevels); "" for Level: the lowest (unconstrained) or, for a
// slice request without a level, the highest; "" for SliceLevel: no
// slices.
type TASRequest struct {
	Mode              topology.TASMode
	Level, SliceLevel string
	SliceSize         int32
	// Volcano, when set, is a Volcano Job's spec.networkTopology instead
	// (over the levels of the cluster's HyperNodes; the fields above
	// unused).
	Volcano *VolcanoTopology
}

// VolcanoTopology is a Volcano Job's spec.networkTopology: hard keeps
// the job's pods in one HyperNode of tier at most HighestTier (given, or
// that of the HyperNodes whose tierName is HighestTierName), the
// tightest that holds them now, or the job waits; soft (Hard false)
// prefers the tightest and goes as wide as it must.
type VolcanoTopology struct {
	Hard            bool
	HighestTier     *int
	HighestTierName string
}

// tasLevels are the cluster's TAS levels: keys are node label keys,
// widest first; vals[l][n] is node n's domain at level l (-1: the node
// has no such label and is not a TAS node).
type tasLevels struct {
	keys []string
	vals [][]int64
	// tiers and tierNames: each level's Volcano HyperNode tier and
	// tierName when the levels come from HyperNodes (SetHyperNodes).
	tiers     []int
	tierNames []string
	// network: each HyperNode level's HyperNodes do not all lie within
	// one NVLink domain (a network tier: NetworkTierSpan).
	network []bool
}

// SetTASLevels sets the cluster's topology levels (a Kueue Topology's
// spec.levels[].nodeLabel, widest first). A key is resolved on each node
// as: kubernetes.io/hostname the node; topology.kubernetes.io/zone its
// zone; LabelTopologyBlock, LabelTopologyRack and LabelGPUClique its
// pool's block, rack and NVLink domain (a pool without a topology is one
// block and one rack, each node its own NVLink domain); any other key the
// pool's label of that name (a node without it is left out of TAS).
func (c *Cluster) SetTASLevels(keys []string) error {
	t := tasLevels{keys: append([]string(nil), keys...), vals: make([][]int64, len(keys))}
	// Kueue breaks ties between domains by their label values' text: a
	// node's hostname value is its hostname's rank among all of them
	// (gpu-10 before gpu-2).
	hostRank := make([]int64, len(c.Nodes))
	if slices.Contains(keys, LabelHostname) {
		order := make([]int32, len(c.Nodes))
		names := make([]string, len(c.Nodes))
		for n := range c.Nodes {
			order[n], names[n] = int32(n), c.Topology().HostnameOf(int32(n))
		}
		slices.SortFunc(order, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
		for r, n := range order {
			hostRank[n] = int64(r)
		}
	}
	seen := map[string]bool{}
	for l, k := range keys {
		if k == "" || seen[k] {
			return fmt.Errorf("topology level %d: %q is empty or listed twice", l, k)
		}
		seen[k] = true
		// Other labels: each value's rank among the level's values.
		var text []string
		vals := make([]int64, len(c.Nodes))
		for n := range c.Nodes {
			pl := c.Topology().PlaceOf(int32(n))
			pool := int64(c.Nodes[n].Pool) << 32
			switch k {
			case LabelHostname:
				vals[n] = hostRank[n]
			case LabelTopologyBlock:
				vals[n] = pool | int64(pl.Block)
			case LabelTopologyRack:
				vals[n] = pool | int64(pl.Rack)
			case LabelGPUClique:
				vals[n] = pool | int64(pl.Domain)
			default:
				v, ok := c.Topology().NodeLabel(int32(n), k)
				if !ok {
					vals[n] = -1
					continue
				}
				if text == nil {
					text = make([]string, len(c.Nodes))
				}
				text[n] = v
			}
		}
		if text != nil {
			var distinct []string
			for n, v := range text {
				if vals[n] >= 0 {
					distinct = append(distinct, v)
				}
			}
			slices.Sort(distinct)
			distinct = slices.Compact(distinct)
			for n, v := range text {
				if vals[n] >= 0 {
					r, _ := slices.BinarySearch(distinct, v)
					vals[n] = int64(r)
				}
			}
		}
		t.vals[l] = vals
	}
	c.tas = t
	return nil
}

// TASLevels are the cluster's topology levels (SetTASLevels), widest first.
func (c *Cluster) TASLevels() []string { return c.tas.keys }

// TASLevel is the index of level key among the TAS levels (-1: none).
func (c *Cluster) TASLevel(key string) int {
	for i, k := range c.tas.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// TASPath appends node n's domain at each TAS level to dst; false when
// the node lacks one of the levels' labels.
func (t Topology) TASPath(n int32, dst []int64) ([]int64, bool) {
	for _, vals := range t.c.tas.vals {
		v := vals[n]
		if v < 0 {
			return dst, false
		}
		dst = append(dst, v)
	}
	return dst, true
}

// PodsFitNow is how many more pods like p node n's free capacity holds.
func (c *Cluster) PodsFitNow(n int32, p *PodSpec) int32 {
	nd := &c.Nodes[n]
	k := int64(1 << 30)
	if p.MilliCPU > 0 {
		k = min(k, nd.FreeCPU/p.MilliCPU)
	}
	if p.MemoryMiB > 0 {
		k = min(k, nd.FreeMem/p.MemoryMiB)
	}
	switch {
	case p.GPUMilli > 0:
		var shares int64
		for _, f := range c.devFree[nd.gpuBase : nd.gpuBase+nd.gpuN] {
			shares += int64(f / p.GPUMilli)
		}
		k = min(k, shares)
	case p.GPUs > 0:
		k = min(k, int64(c.FreeDevices(n, p)/p.GPUs))
	}
	return int32(max(k, 0))
}
