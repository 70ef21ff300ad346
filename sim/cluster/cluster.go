package cluster

import (
	"fmt"
	"math/bits"

	"gpuplan.dev/gpuplan/models"
)

// Pool is a pool's spec plus its live aggregates.
type Pool struct {
	Spec PoolSpec
	// Labels are the spec labels plus the well-known ones (pool name, GPU
	// model, instance type).
	Labels map[string]string
	// First and Count give the pool's nodes: Nodes[First : First+Count].
	First, Count int32
	// FreeByWhole[k] is the number of nodes with exactly k whole GPUs free.
	FreeByWhole []int32
	// AllocMilli is the milli-GPUs allocated on the pool right now.
	AllocMilli int64
	// byFree[k] lists the nodes with exactly k whole GPUs free (any order).
	byFree [][]int32

	supplyMilli    int64 // milli-GPUs supplied right now
	allocIntegral  int64 // milli-GPU x ms allocated so far
	supplyIntegral int64
	last           Time
}

// Node is one node's live free capacity.
type Node struct {
	Pool      int32
	FreeCPU   int64
	FreeMem   int64
	FreeWhole int32 // GPUs with nothing allocated on them
	// MaxShare is the largest free milli-GPU on any one GPU of the node.
	MaxShare int32
	// FreeMilli is the free milli-GPU summed over the node's GPUs.
	FreeMilli int64
	Pods      int32
	gpuBase   int32
	gpuN      int32
	bucket    int32 // position of the node in its pool's byFree[FreeWhole]
	// Version changes whenever the node's free capacity does.
	Version uint32
	// Classes counts the node's pods by GPU request class (ClassOf).
	Classes [NumClasses]int16
}

// GPU request classes of pods, as the FGD paper's GPU-clustering policy
// groups them.
const (
	ClassNoGPU = iota
	ClassShare
	ClassOne
	ClassTwo
	ClassFour
	ClassEight
	NumClasses
)

// ClassOf is a pod's GPU request class: none, a share, 1, 2, up to 4, or more.
func ClassOf(p *PodSpec) int {
	switch {
	case p.GPUMilli > 0:
		return ClassShare
	case p.GPUs == 0:
		return ClassNoGPU
	case p.GPUs == 1:
		return ClassOne
	case p.GPUs == 2:
		return ClassTwo
	case p.GPUs <= 4:
		return ClassFour
	}
	return ClassEight
}

// Placement records where one pod is bound: its node, the whole GPUs it
// holds (a bitmask over the node's GPUs) or the GPU it shares.
type Placement struct {
	Node  int32
	Share int8 // index of the shared GPU, -1 when the pod holds whole GPUs
	GPUs  uint64
	At    Time // when the pod was bound
}

// Cluster is the live state of every node.
type Cluster struct {
	Pools   []Pool
	Nodes   []Node
	gpuFree []int32 // free milli-GPU of each GPU, nodes' GPUs contiguous
}

// New builds an empty cluster from pool specs (validated by the caller).
func New(pools []PoolSpec) (*Cluster, error) {
	c := &Cluster{Pools: make([]Pool, len(pools))}
	total, gpus := 0, 0
	seen := map[string]bool{}
	for i := range pools {
		p := &pools[i]
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("pool %q: %w", p.Name, err)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("pool %q is defined twice", p.Name)
		}
		seen[p.Name] = true
		total += p.Nodes
		gpus += p.Nodes * int(p.GPUsPerNode)
	}
	c.Nodes = make([]Node, 0, total)
	c.gpuFree = make([]int32, 0, gpus)
	for i := range pools {
		p := pools[i]
		labels := make(map[string]string, len(p.Labels)+3)
		for k, v := range p.Labels {
			labels[k] = v
		}
		labels[LabelPool] = p.Name
		if p.GPUModel != "" {
			labels[LabelGPUModel] = p.GPUModel
		}
		if p.InstanceType != "" {
			labels[LabelInstanceType] = p.InstanceType
		}
		pl := Pool{
			Spec:        p,
			Labels:      labels,
			First:       int32(len(c.Nodes)),
			Count:       int32(p.Nodes),
			FreeByWhole: make([]int32, p.GPUsPerNode+1),
			supplyMilli: int64(p.Nodes) * int64(p.GPUsPerNode) * MilliGPU,
		}
		pl.FreeByWhole[p.GPUsPerNode] = int32(p.Nodes)
		pl.byFree = make([][]int32, p.GPUsPerNode+1)
		pl.byFree[p.GPUsPerNode] = make([]int32, 0, p.Nodes)
		for n := 0; n < p.Nodes; n++ {
			node := Node{
				Pool:      int32(i),
				FreeCPU:   p.MilliCPU,
				FreeMem:   p.MemoryMiB,
				FreeWhole: p.GPUsPerNode,
				gpuBase:   int32(len(c.gpuFree)),
				gpuN:      p.GPUsPerNode,
				FreeMilli: int64(p.GPUsPerNode) * MilliGPU,
			}
			if p.GPUsPerNode > 0 {
				node.MaxShare = MilliGPU
			}
			for g := int32(0); g < p.GPUsPerNode; g++ {
				c.gpuFree = append(c.gpuFree, MilliGPU)
			}
			node.bucket = int32(len(pl.byFree[p.GPUsPerNode]))
			pl.byFree[p.GPUsPerNode] = append(pl.byFree[p.GPUsPerNode], int32(len(c.Nodes)))
			c.Nodes = append(c.Nodes, node)
		}
		c.Pools[i] = pl
	}
	return c, nil
}

// FragState is node n as GPU fragmentation sees it (GPUFree is shared: read only).
func (c *Cluster) FragState(n int32) models.NodeState {
	nd := &c.Nodes[n]
	return models.NodeState{MilliCPU: nd.FreeCPU, GPUFree: c.GPUFree(n), Model: c.Pools[nd.Pool].Spec.GPUModel}
}

// GPUFree returns the free milli-GPU of each GPU of node n (read only).
func (c *Cluster) GPUFree(n int32) []int32 {
	nd := &c.Nodes[n]
	return c.gpuFree[nd.gpuBase : nd.gpuBase+nd.gpuN]
}

// Fits reports whether pod p fits node n's free capacity now.
func (c *Cluster) Fits(n int32, p *PodSpec) bool {
	nd := &c.Nodes[n]
	if nd.FreeCPU < p.MilliCPU || nd.FreeMem < p.MemoryMiB {
		return false
	}
	if p.GPUMilli > 0 {
		return nd.MaxShare >= p.GPUMilli
	}
	return nd.FreeWhole >= p.GPUs
}

// FitsEmpty reports whether pod p fits an empty node of pool i.
func (c *Cluster) FitsEmpty(i int, p *PodSpec) bool {
	s := &c.Pools[i].Spec
	if s.MilliCPU < p.MilliCPU || s.MemoryMiB < p.MemoryMiB {
		return false
	}
	if p.GPUMilli > 0 {
		return s.GPUsPerNode >= 1
	}
	return s.GPUsPerNode >= p.GPUs
}

// OverCommitError is an allocation the node cannot hold: a scheduler bug.
type OverCommitError struct {
	Node int32
	Pod  PodSpec
}

func (e *OverCommitError) Error() string {
	return fmt.Sprintf("invariant violated: pod %+v allocated on node %d beyond its free capacity", e.Pod, e.Node)
}

func (c *Cluster) advance(pl *Pool, now Time) {
	if dt := now - pl.last; dt > 0 {
		pl.allocIntegral += pl.AllocMilli * dt
		pl.supplyIntegral += pl.supplyMilli * dt
		pl.last = now
	}
}

// Advance brings every pool's time integrals up to now.
func (c *Cluster) Advance(now Time) {
	for i := range c.Pools {
		c.advance(&c.Pools[i], now)
	}
}

// Integrals returns pool i's allocated and supplied milli-GPU x ms up to the
// last Advance (or allocation change).
func (c *Cluster) Integrals(i int) (allocated, supplied int64) {
	return c.Pools[i].allocIntegral, c.Pools[i].supplyIntegral
}

// move re-files node n after its free whole GPUs changed from before.
func (c *Cluster) move(pool *Pool, n int32, before int32) {
	nd := &c.Nodes[n]
	pool.FreeByWhole[before]--
	pool.FreeByWhole[nd.FreeWhole]++
	old := pool.byFree[before]
	last := old[len(old)-1]
	old[nd.bucket] = last
	c.Nodes[last].bucket = nd.bucket
	pool.byFree[before] = old[:len(old)-1]
	nd.bucket = int32(len(pool.byFree[nd.FreeWhole]))
	pool.byFree[nd.FreeWhole] = append(pool.byFree[nd.FreeWhole], n)
}

// MaxFreeWhole is the most whole GPUs free on any one node.
func (c *Cluster) MaxFreeWhole() int32 {
	best := int32(0)
	for i := range c.Pools {
		h := c.Pools[i].FreeByWhole
		for k := int32(len(h)) - 1; k > best; k-- {
			if h[k] > 0 {
				best = k
				break
			}
		}
	}
	return best
}

// PodsPlaceable is how many pods of g whole GPUs the free GPUs of all
// nodes could hold, counting GPUs only.
func (c *Cluster) PodsPlaceable(g int32) int64 {
	var n int64
	for i := range c.Pools {
		h := c.Pools[i].FreeByWhole
		for k := g; k < int32(len(h)); k++ {
			n += int64(h[k]) * int64(k/g)
		}
	}
	return n
}

// AppendNodesWithFree appends to dst the nodes of pool i that have at least
// minWhole whole GPUs free, in no particular order, and returns it.
func (c *Cluster) AppendNodesWithFree(i int32, minWhole int32, dst []int32) []int32 {
	pl := &c.Pools[i]
	if minWhole <= 0 {
		for n := pl.First; n < pl.First+pl.Count; n++ {
			dst = append(dst, n)
		}
		return dst
	}
	for k := minWhole; k < int32(len(pl.byFree)); k++ {
		dst = append(dst, pl.byFree[k]...)
	}
	return dst
}

func (c *Cluster) refreshShare(nd *Node) {
	m := int32(0)
	for _, f := range c.gpuFree[nd.gpuBase : nd.gpuBase+nd.gpuN] {
		if f > m {
			m = f
		}
	}
	nd.MaxShare = m
}

// Allocate binds pod p to node n at time now and returns the placement.
// Whole GPUs are the lowest-indexed free ones; a share goes to GPU gpu when
// gpu >= 0, else to the GPU with the least free capacity that still holds
// it (ties: lowest index).
func (c *Cluster) Allocate(now Time, n int32, p *PodSpec, gpu int) (Placement, error) {
	if !c.Fits(n, p) {
		return Placement{}, &OverCommitError{Node: n, Pod: *p}
	}
	nd := &c.Nodes[n]
	pool := &c.Pools[nd.Pool]
	c.advance(pool, now)
	pl := Placement{Node: n, Share: -1, At: now}
	gf := c.gpuFree[nd.gpuBase : nd.gpuBase+nd.gpuN]
	wholeBefore := nd.FreeWhole
	if p.GPUMilli > 0 {
		best := -1
		if gpu >= 0 {
			if gpu >= len(gf) || gf[gpu] < p.GPUMilli {
				return Placement{}, &OverCommitError{Node: n, Pod: *p}
			}
			best = gpu
		}
		for g, f := range gf {
			if gpu < 0 && f >= p.GPUMilli && (best < 0 || f < gf[best]) {
				best = g
			}
		}
		if gf[best] == MilliGPU {
			nd.FreeWhole--
		}
		gf[best] -= p.GPUMilli
		pl.Share = int8(best)
		c.refreshShare(nd)
		pool.AllocMilli += int64(p.GPUMilli)
	} else if p.GPUs > 0 {
		need := p.GPUs
		for g := range gf {
			if need == 0 {
				break
			}
			if gf[g] == MilliGPU {
				gf[g] = 0
				pl.GPUs |= 1 << uint(g)
				need--
			}
		}
		nd.FreeWhole -= p.GPUs
		if nd.FreeWhole == 0 || nd.MaxShare == MilliGPU {
			c.refreshShare(nd)
		}
		pool.AllocMilli += int64(p.GPUs) * MilliGPU
	}
	if wholeBefore != nd.FreeWhole {
		c.move(pool, n, wholeBefore)
	}
	nd.FreeCPU -= p.MilliCPU
	nd.FreeMem -= p.MemoryMiB
	nd.FreeMilli -= p.MilliGPUs()
	nd.Pods++
	nd.Classes[ClassOf(p)]++
	nd.Version++
	return pl, nil
}

// Release frees a placement made by Allocate for the same pod spec.
func (c *Cluster) Release(now Time, pl Placement, p *PodSpec) error {
	nd := &c.Nodes[pl.Node]
	pool := &c.Pools[nd.Pool]
	c.advance(pool, now)
	gf := c.gpuFree[nd.gpuBase : nd.gpuBase+nd.gpuN]
	wholeBefore := nd.FreeWhole
	if p.GPUMilli > 0 {
		if pl.Share < 0 || int32(pl.Share) >= nd.gpuN || gf[pl.Share]+p.GPUMilli > MilliGPU {
			return fmt.Errorf("invariant violated: releasing share %d of GPU %d on node %d frees more than it holds", p.GPUMilli, pl.Share, pl.Node)
		}
		gf[pl.Share] += p.GPUMilli
		if gf[pl.Share] == MilliGPU {
			nd.FreeWhole++
		}
		pool.AllocMilli -= int64(p.GPUMilli)
	} else if p.GPUs > 0 {
		if int32(bits.OnesCount64(pl.GPUs)) != p.GPUs {
			return fmt.Errorf("invariant violated: placement on node %d holds %d GPUs, pod asked %d", pl.Node, bits.OnesCount64(pl.GPUs), p.GPUs)
		}
		for m := pl.GPUs; m != 0; m &= m - 1 {
			g := bits.TrailingZeros64(m)
			if gf[g] != 0 {
				return fmt.Errorf("invariant violated: GPU %d of node %d released but not fully held", g, pl.Node)
			}
			gf[g] = MilliGPU
		}
		nd.FreeWhole += p.GPUs
		pool.AllocMilli -= int64(p.GPUs) * MilliGPU
	}
	c.refreshShare(nd)
	if wholeBefore != nd.FreeWhole {
		c.move(pool, pl.Node, wholeBefore)
	}
	nd.FreeCPU += p.MilliCPU
	nd.FreeMem += p.MemoryMiB
	nd.FreeMilli += p.MilliGPUs()
	nd.Pods--
	nd.Classes[ClassOf(p)]--
	nd.Version++
	if nd.FreeCPU > pool.Spec.MilliCPU || nd.FreeMem > pool.Spec.MemoryMiB || nd.Pods < 0 {
		return fmt.Errorf("invariant violated: node %d has more free than its capacity after a release", pl.Node)
	}
	return nil
}

// Statement groups allocations so they are committed or discarded as a
// unit (Volcano's Statement): how a gang is all-or-nothing.
type Statement struct {
	c      *Cluster
	placed []Placement
	pods   []*PodSpec
}

// Begin starts a statement on c, reusing s's buffers.
func (s *Statement) Begin(c *Cluster) {
	s.c = c
	s.placed = s.placed[:0]
	s.pods = s.pods[:0]
}

// Allocate binds one pod inside the statement.
func (s *Statement) Allocate(now Time, n int32, p *PodSpec, gpu int) error {
	pl, err := s.c.Allocate(now, n, p, gpu)
	if err != nil {
		return err
	}
	s.placed = append(s.placed, pl)
	s.pods = append(s.pods, p)
	return nil
}

// Len is the number of pods allocated in the statement.
func (s *Statement) Len() int { return len(s.placed) }

// Placements are the statement's allocations so far (valid until Begin).
func (s *Statement) Placements() []Placement { return s.placed }

// Discard releases every allocation of the statement, newest first.
func (s *Statement) Discard(now Time) error {
	for i := len(s.placed) - 1; i >= 0; i-- {
		if err := s.c.Release(now, s.placed[i], s.pods[i]); err != nil {
			return err
		}
	}
	s.placed = s.placed[:0]
	s.pods = s.pods[:0]
	return nil
}
