package scheduler

import (
	"fmt"

	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// TASName is the name failures of Kueue's topology-aware scheduling carry.
const TASName = "TopologyAwareScheduling"

// Kueue's topology-aware scheduling (TAS): a job whose pods carry a
// cluster.TASRequest is placed as Kueue assigns it (models/topology
// TASAssign) over the cluster's TAS levels: each node that passes the
// filters and has every level's label is a leaf holding as many of the
// job's pods as its free capacity does now; Kueue's assignment gives each
// node its pods, which are then reserved there. When no assignment fits
// now (a required level no domain of which holds the job), the job is
// unschedulable and waits, as Kueue keeps the workload pending. When the
// lowest level is not the hostname, the nodes are an implicit level below
// it (Kueue leaves the node to kube-scheduler; here the same best fit
// picks the nodes in the domain).

// tasRequest resolves a job's TAS request against the cluster's levels:
// the levels it is placed over (with the implicit host level when the
// lowest is not kubernetes.io/hostname) and the model's request.
func tasRequest(c *cluster.Cluster, r *cluster.TASRequest, count int32) (int, topology.TASRequest, bool, error) {
	keys := c.TASLevels()
	if len(keys) == 0 {
		return 0, topology.TASRequest{}, false, fmt.Errorf("the job asks for topology-aware scheduling and the cluster has no topology levels")
	}
	levels := len(keys)
	implicit := keys[levels-1] != cluster.LabelHostname
	lowest := levels - 1
	if implicit {
		levels++
	}
	req := topology.TASRequest{Mode: r.Mode, SliceSize: max(r.SliceSize, 1), Count: count, Level: lowest, SliceLevel: levels - 1}
	if r.Volcano != nil {
		req.Mode = topology.TASPreferred
		highest, bounded, err := VolcanoHighestLevel(c, r.Volcano)
		if err != nil {
			return 0, req, false, err
		}
		req.Bounded, req.Highest = bounded, highest
		return levels, req, implicit, nil
	}
	find := func(k string) (int, error) {
		if i := c.TASLevel(k); i >= 0 {
			return i, nil
		}
		return 0, fmt.Errorf("topology level %q is not one of the cluster's topology levels %q", k, keys)
	}
	var err error
	if r.SliceLevel != "" {
		if req.SliceLevel, err = find(r.SliceLevel); err != nil {
			return 0, req, false, err
		}
		req.Level = 0 // a slice request alone: Kueue's highest level
	}
	if r.Level != "" {
		if req.Level, err = find(r.Level); err != nil {
			return 0, req, false, err
		}
	}
	return levels, req, implicit, nil
}

// placeTAS reserves the job's pods (want of them) where Kueue's
// topology assignment puts them.
func (f *Framework) placeTAS(now cluster.Time, job *JobInfo, want int32) (int32, *Status, error) {
	pod := &job.Spec.Pod
	levels, req, implicit, err := tasRequest(f.c, job.Spec.Constraints.TAS, want)
	if err != nil {
		return 0, nil, err
	}
	nodes := f.filter(pod, f.candidates(pod))
	leaves, owners := f.tasLeaves(nodes, pod, implicit, func(n int32) int32 { return f.c.PodsFitNow(n, pod) })
	counts, reason := topology.TASAssign(levels, leaves, req)
	if reason != "" {
		return 0, f.cached(TASName, tasWho(job.Spec.Constraints.TAS)+": "+reason), nil
	}
	var placed int32
	for i, k := range counts {
		for ; k > 0; k-- {
			if refused, err := f.reserve(now, job, owners[i]); refused != nil || err != nil {
				return 0, refused, err
			}
			placed++
		}
	}
	return placed, nil, nil
}

// tasLeaves are the TAS leaves of nodes (those with every level's label),
// each holding pods(n) pods, and the node of each leaf.
func (f *Framework) tasLeaves(nodes []int32, pod *cluster.PodSpec, implicit bool, pods func(int32) int32) ([]topology.TASLeaf, []int32) {
	leaves := make([]topology.TASLeaf, 0, len(nodes))
	owners := make([]int32, 0, len(nodes))
	top := f.c.Topology()
	for _, n := range nodes {
		path, ok := top.TASPath(n, nil)
		if !ok {
			continue
		}
		if implicit {
			path = append(path, int64(n))
		}
		k := pods(n)
		if k <= 0 {
			continue
		}
		leaves = append(leaves, topology.TASLeaf{Path: path, Pods: k})
		owners = append(owners, n)
	}
	return leaves, owners
}

// tasFitsEmpty reports whether the job's TAS request can ever be met:
// Kueue's assignment on the eligible pools' nodes, all empty (a required
// level none of whose domains holds the job cannot).
func (f *Framework) tasFitsEmpty(job *JobInfo) (bool, string) {
	pod := &job.Spec.Pod
	levels, req, implicit, err := tasRequest(f.c, job.Spec.Constraints.TAS, job.Spec.Replicas)
	if err != nil {
		return false, err.Error()
	}
	var nodes []int32
	for _, p := range f.st.Pools {
		pl := &f.c.Pools[p]
		if !f.c.FitsEmpty(int(p), pod) {
			continue
		}
		for n := pl.First; n < pl.First+pl.Count; n++ {
			nodes = append(nodes, n)
		}
	}
	leaves, _ := f.tasLeaves(nodes, pod, implicit, func(n int32) int32 {
		return int32(min(f.c.PodsPerEmptyNode(int(f.c.Nodes[n].Pool), pod), 1<<30))
	})
	if _, reason := topology.TASAssign(levels, leaves, req); reason != "" {
		what := fmt.Sprintf("%s %s", req.Mode, tasLevelName(f.c, req.Level))
		if v := job.Spec.Constraints.TAS.Volcano; v != nil {
			what = "soft"
			if req.Bounded {
				what = "hard, within one HyperNode of " + tasLevelName(f.c, req.Highest)
			}
		}
		return false, fmt.Sprintf("%s (%s) can never place the job's %d pods, even on empty nodes: %s", tasWho(job.Spec.Constraints.TAS), what, job.Spec.Replicas, reason)
	}
	return true, ""
}

// VolcanoHighestLevel is the widest of the cluster's HyperNode levels a
// Volcano networkTopology lets the job's pods span (bounded: a hard one
// with a tier at or above some HyperNode's; above every tier, Volcano's
// cluster-wide root holds the job, unbounded as soft is).
func VolcanoHighestLevel(c *cluster.Cluster, v *cluster.VolcanoTopology) (int, bool, error) {
	tiers := c.HyperNodeTiers()
	if len(tiers) == 0 {
		return 0, false, fmt.Errorf("the job asks for Volcano network topology and the cluster has no HyperNodes")
	}
	if !v.Hard {
		return 0, false, nil
	}
	var h int
	switch {
	case v.HighestTier != nil:
		h = *v.HighestTier
	case v.HighestTierName != "":
		t, ok := c.HyperNodeTierNamed(v.HighestTierName)
		if !ok {
			return 0, false, fmt.Errorf("highestTierName %q is no HyperNode's tierName (Volcano: failed to find hypernode tier name)", v.HighestTierName)
		}
		h = t
	default:
		return 0, false, nil // Volcano: hard without a tier is no constraint
	}
	if h > tiers[0] {
		return 0, false, nil
	}
	for l, t := range tiers {
		if t <= h {
			return l, true, nil
		}
	}
	return 0, false, fmt.Errorf("highestTierAllowed %d is below every HyperNode's tier (the lowest is %d): no HyperNode can hold the job", h, tiers[len(tiers)-1])
}

// tasWho names the system whose topology placement r asks for.
func tasWho(r *cluster.TASRequest) string {
	if r.Volcano != nil {
		return "Volcano network-topology-aware scheduling"
	}
	return "Kueue topology-aware scheduling"
}

func tasLevelName(c *cluster.Cluster, l int) string {
	keys := c.TASLevels()
	if l < len(keys) {
		return keys[l]
	}
	return "node"
}
