package kubescheduler

import (
	"fmt"
	"slices"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/balancedallocation"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/leastallocated"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/mostallocated"
)

// profileKind is a scheduling profile both schedulers can express.
type profileKind int

const (
	// mostAllocated: gpuplan's default profile (MostAllocated over cpu,
	// memory and nvidia.com/gpu, weight 1 each); the real default profile
	// with NodeResourcesFit's scoringStrategy MostAllocated over the same
	// three resources and NodeResourcesBalancedAllocation disabled.
	mostAllocated profileKind = iota
	// leastAllocated: the same with LeastAllocated.
	leastAllocated
	// kubeDefault: the real default profile unchanged (LeastAllocated on
	// cpu and memory, NodeResourcesBalancedAllocation on cpu and memory);
	// in gpuplan LeastAllocated {cpu: 1, memory: 1} and
	// NodeResourcesBalancedAllocation, both weight 1.
	kubeDefault
)

func (p profileKind) String() string {
	return [...]string{"MostAllocated", "LeastAllocated", "default"}[p]
}

// gpuplanProfile is the profile's plugin list in gpuplan.
func gpuplanProfile(p profileKind) []scheduler.PluginConfig {
	var out []scheduler.PluginConfig
	for _, c := range plugins.Default() {
		if c.Name != mostallocated.Name {
			out = append(out, c)
			continue
		}
		three := map[string]int64{"cpu": 1, "memory": 1, "nvidia.com/gpu": 1}
		switch p {
		case mostAllocated:
			out = append(out, scheduler.PluginConfig{Name: mostallocated.Name, Weight: 1, Resources: three})
		case leastAllocated:
			out = append(out, scheduler.PluginConfig{Name: leastallocated.Name, Weight: 1, Resources: three})
		case kubeDefault:
			out = append(out,
				scheduler.PluginConfig{Name: leastallocated.Name, Weight: 1, Resources: map[string]int64{"cpu": 1, "memory": 1}},
				scheduler.PluginConfig{Name: balancedallocation.Name, Weight: 1})
		}
	}
	return out
}

// gpSide is gpuplan's scheduler over the case's cluster: one pool per
// node type, in order, so node j of type k is pool k's j-th node.
type gpSide struct {
	c      *cluster.Cluster
	fw     *scheduler.Framework
	prof   *scheduler.Profile
	first  []int32 // first node index of each type
	placed []cluster.Placement
	ok     bool
}

func (s *gpSide) Bind(_ *scheduler.JobInfo, pls []cluster.Placement) error {
	s.placed, s.ok = append(s.placed[:0], pls...), true
	return nil
}

// newGpuplan builds the cluster and framework; random > 0 breaks ties at
// random with that seed, else by lowest node index (gpuplan's default).
func newGpuplan(cc *clusterCase, p profileKind, random uint64) (*gpSide, error) {
	var pools []cluster.PoolSpec
	for k, t := range cc.types {
		pools = append(pools, cluster.PoolSpec{Name: fmt.Sprint("t", k), Nodes: t.count, GPUsPerNode: t.gpus,
			MilliCPU: t.milliCPU, MemoryMiB: t.memMiB, Labels: t.labels, Taints: t.taints})
	}
	c, err := cluster.New(pools)
	if err != nil {
		return nil, err
	}
	h := &scheduler.Handle{Rand: models.NewStream(random, 1)}
	prof, err := plugins.NewProfile(gpuplanProfile(p), h)
	if err != nil {
		return nil, err
	}
	fw, err := scheduler.NewFramework(prof, c)
	if err != nil {
		return nil, err
	}
	if random > 0 {
		fw.SetRandomTieBreak(models.NewStream(random, 2))
	}
	s := &gpSide{c: c, fw: fw, prof: prof}
	for i := range c.Nodes {
		if i == 0 || c.Nodes[i].Pool != c.Nodes[i-1].Pool {
			s.first = append(s.first, int32(i))
		}
	}
	if len(s.first) != len(cc.types) {
		return nil, fmt.Errorf("%d node types became %d pools", len(cc.types), len(s.first))
	}
	return s, nil
}

// spec is pod i as a one-pod job.
func (cc *clusterCase) spec(i int) *cluster.JobSpec {
	p := cc.pods[i]
	j := &cluster.JobSpec{Name: fmt.Sprint("p", i), Replicas: 1, Duration: 1,
		Pod: cluster.PodSpec{GPUs: p.gpus, MilliCPU: p.milliCPU, MemoryMiB: p.memMiB}}
	if p.selector != nil || p.tolerations != nil {
		j.Constraints = &cluster.Constraints{NodeSelector: p.selector, Tolerations: p.tolerations}
	}
	return j
}

// place schedules pod i and returns its node (-1: not bound).
func (s *gpSide) place(cc *clusterCase, i int) (int32, error) {
	s.ok = false
	job := &scheduler.JobInfo{ID: int32(i), Spec: cc.spec(i), FirstReason: -1, LastReason: -1}
	if _, _, err := s.fw.Attempt(0, job, s); err != nil {
		return -1, err
	}
	if !s.ok {
		return -1, nil
	}
	if len(s.placed) != 1 {
		return -1, fmt.Errorf("pod %d: %d placements", i, len(s.placed))
	}
	return s.placed[0].Node, nil
}

// release takes pod i off the node place put it on.
func (s *gpSide) release(cc *clusterCase, i int) error {
	p := cc.spec(i).Pod
	return s.c.Release(0, s.placed[0], &p)
}

// bind binds pod i to node n, to follow the real scheduler's choice.
func (s *gpSide) bind(cc *clusterCase, i int, n int32) error {
	p := cc.spec(i).Pod
	_, err := s.c.Allocate(0, n, &p, -1)
	return err
}

// feasible reports whether gpuplan's PreFilter and Filter plugins let
// pod i onto node n in the cluster's current state.
func (s *gpSide) feasible(cc *clusterCase, i int, n int32) bool {
	job := &scheduler.JobInfo{ID: int32(i), Spec: cc.spec(i), FirstReason: -1, LastReason: -1}
	st := &scheduler.CycleState{Cluster: s.c, Job: job, MinPods: 1}
	for k := range s.c.Pools {
		st.Pools = append(st.Pools, int32(k))
	}
	for _, p := range s.prof.PreFilter {
		if !p.PreFilter(st, job).IsSuccess() {
			return false
		}
	}
	if !slices.Contains(st.Pools, s.c.Nodes[n].Pool) {
		return false
	}
	nodes := []int32{n}
	for _, p := range s.prof.Filter {
		if nodes = p.FilterBatch(st, &job.Spec.Pod, nodes); len(nodes) == 0 {
			return false
		}
	}
	return true
}

// score is gpuplan's total score of node n for pod i, from the profile's
// score plugins and weights, in the cluster's current state.
func (s *gpSide) score(cc *clusterCase, i int, n int32) int64 {
	p := cc.spec(i).Pod
	st := &scheduler.CycleState{Cluster: s.c}
	var total int64
	out := []int64{0}
	for _, w := range s.prof.Score {
		w.Plugin.ScoreBatch(st, &p, []int32{n}, out)
		total += w.Weight * out[0]
	}
	return total
}
