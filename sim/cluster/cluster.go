package cluster

import (
	"fmt"
	"math/bits"

	"gpuplan.dev/gpuplan/models"
)

// Device kinds: what one advertised GPU device of a pool is.
type devKind uint8

const (
	devPlain devKind = iota // a whole GPU, which shares may split
	devSlice                // one time-slicing replica of a GPU
	devMIG                  // one MIG instance
)

// Pool is a pool's spec plus its live aggregates.
type Pool struct {
	Spec PoolSpec
	// Labels are the spec labels plus the well-known ones (pool name, GPU
	// model, instance type).
	Labels map[string]string
	// First and Count give the pool's node slots: Nodes[First :
	// First+Count]. A slot holds a node only while it is present (Booting,
	// Ready or Cordoned).
	First, Count int32
	// Present and Ready count the pool's nodes in those states.
	Present, Ready int32
	// FreeByWhole[k] is the number of nodes with exactly k generic devices
	// (nvidia.com/gpu) free.
	FreeByWhole []int32
	// AllocMilli is the milli-GPUs allocated on the pool right now.
	AllocMilli int64
	// DevicesPerNode is the GPU devices a node advertises: its GPUs, or
	// GPUs x replicas when time-sliced, or GPUs x instances under MIG.
	DevicesPerNode int32
	// byFree[k] lists the nodes with exactly k generic devices free (any order).
	byFree [][]int32
	// byClassFree[k] lists the state classes (classes.go) whose nodes have
	// exactly k whole GPUs free; nil for a pool that is not classed.
	byClassFree [][]int32

	dev poolDevices // what each node's devices are
	use poolUsage   // what the pool supplied and its pods held, over time
}

// poolDevices is what the devices of a pool's nodes are: their kind, the
// milli-GPU and MIG profile of each device of a new node, and what the
// node can hold of each profile.
type poolDevices struct {
	kind      devKind
	generic   bool    // devices answer nvidia.com/gpu requests
	perGPU    int32   // devices per physical GPU
	caps      []int32 // milli-GPU of each device of a new node
	profiles  []string
	relayout  bool
	migCounts map[string]int32 // instances of each profile a node can have
}

// poolUsage is a pool's time integrals, brought up to date by advance
// before anything they integrate changes.
type poolUsage struct {
	supplyMilli    int64 // milli-GPUs supplied right now
	allocIntegral  int64 // milli-GPU x ms allocated so far
	supplyIntegral int64
	// allocCPU and allocMem are the CPU (milli) and memory (MiB) pods hold;
	// their integrals, and that of the present nodes, are in x hours.
	allocCPU, allocMem         int64
	cpuHours, memHours, nodeMs float64
	last                       Time
}

// NodeState is where a node slot is in its life.
type NodeState uint8

const (
	// NodeAbsent: the slot holds no node (never launched, or removed).
	NodeAbsent NodeState = iota
	// NodeBooting: launched (and paid for) but not Ready yet.
	NodeBooting
	// NodeReady: in service; the scheduler places pods on it.
	NodeReady
	// NodeCordoned: still present and running its pods, but takes no new
	// ones (a spot notice, a drain).
	NodeCordoned
)

var nodeStateNames = [...]string{"absent", "booting", "ready", "cordoned"}

func (s NodeState) String() string { return nodeStateNames[s] }

// Node is one node's live free capacity.
type Node struct {
	Pool      int32
	State     NodeState
	FreeCPU   int64
	FreeMem   int64
	FreeWhole int32 // generic devices with nothing allocated on them
	// MaxShare is the largest free milli-GPU on any one GPU of the node
	// (whole GPUs only: time-sliced and MIG devices take no shares).
	MaxShare int32
	// FreeMilli is the free milli-GPU summed over the node's devices.
	FreeMilli int64
	// CapMilli is the milli-GPU the node's devices offer now: 1000 per
	// whole or time-sliced GPU, a MIG instance its compute slices of 7
	// (so a GPU whose layout leaves slices unused, 3g+3g, offers 857),
	// nothing for a GPU out of service for a re-layout. The pool's supply
	// still counts every GPU whole: what CapMilli leaves out is supplied,
	// paid for and idle, never allocatable.
	CapMilli int64
	Pods     int32
	gpuBase  int32 // first device in Cluster.devFree
	gpuN     int32 // devices
	physBase int32 // first physical GPU in Cluster.physBusy
	bucket   int32 // position of the node in its pool's byFree[FreeWhole]
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

// Placement records where one pod is bound: its node, the devices it
// holds (a bitmask over the node's devices) or the GPU it shares, and the
// milli-GPU it holds.
type Placement struct {
	Node  int32
	Share int8 // index of the shared GPU, -1 when the pod holds devices
	Milli int32
	GPUs  uint64
	At    Time // when the pod was bound
}

// Cluster is the live state of every node.
type Cluster struct {
	Pools      []Pool
	Nodes      []Node
	devFree    []int32 // free milli-GPU of each device, nodes' devices contiguous
	devCap     []int32
	devProfile []string // MIG profile of each device ("" for others)
	physBusy   []int16  // devices taken on each physical GPU
	physMem    []int64  // GPU memory declared by the pods on each physical GPU
	physOut    []bool   // a GPU out of service for a MIG re-layout
	cls        classIndex
	labels     labelTally // pods per label set and node (podlabels.go)
	tas        tasLevels  // Kueue TAS levels (tas.go)
}

// splitMilli divides one GPU's 1000 milli over devices with the given
// compute weights (of total), exactly: the parts add up to
// 1000 x sum(weights) / total.
func splitMilli(weights []int, total int) []int32 {
	out := make([]int32, len(weights))
	cum, prev := 0, 0
	for i, w := range weights {
		cum += w
		next := cum * MilliGPU / total
		out[i] = int32(next - prev)
		prev = next
	}
	return out
}

// New builds an empty cluster from pool specs (validated here).
func New(pools []PoolSpec) (*Cluster, error) {
	c := &Cluster{Pools: make([]Pool, len(pools))}
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
	}
	for i := range pools {
		p := pools[i]
		labels := p.NodeLabels()
		pl := Pool{
			Spec:    p,
			Labels:  labels,
			First:   int32(len(c.Nodes)),
			Count:   int32(p.Slots()),
			Present: int32(p.Nodes),
			Ready:   int32(p.Nodes),
			use:     poolUsage{supplyMilli: int64(p.Nodes) * int64(p.GPUsPerNode) * MilliGPU},
			dev:     poolDevices{generic: true, perGPU: 1, migCounts: map[string]int32{}},
		}
		var perGPUCaps []int32
		var perGPUProfiles []string
		switch sh := p.Sharing; {
		case sh.TimeSlicing > 1:
			pl.dev.kind, pl.dev.perGPU = devSlice, sh.TimeSlicing
			w := make([]int, sh.TimeSlicing)
			for k := range w {
				w[k] = 1
			}
			perGPUCaps = splitMilli(w, len(w))
		case sh.MIGStrategy != "":
			pl.dev.kind, pl.dev.perGPU = devMIG, int32(len(sh.MIGLayout))
			var err error
			perGPUCaps, perGPUProfiles, err = migDevices(p.GPUModel, sh.MIGLayout)
			if err != nil {
				return nil, fmt.Errorf("pool %q: %w", p.Name, err)
			}
			pl.dev.generic = sh.MIGStrategy == MIGSingle
			if sh.MIGRelayout {
				// Room for the largest layout (7 instances) on every GPU.
				pl.dev.relayout, pl.dev.perGPU = true, 7
				for len(perGPUCaps) < 7 {
					perGPUCaps = append(perGPUCaps, 0)
					perGPUProfiles = append(perGPUProfiles, "")
				}
			}
		default:
			perGPUCaps = []int32{MilliGPU}
			perGPUProfiles = nil
		}
		for g := int32(0); g < p.GPUsPerNode; g++ {
			pl.dev.caps = append(pl.dev.caps, perGPUCaps...)
			if perGPUProfiles != nil {
				pl.dev.profiles = append(pl.dev.profiles, perGPUProfiles...)
				for _, name := range perGPUProfiles {
					if name != "" {
						pl.dev.migCounts[name]++
					}
				}
			}
		}
		if pl.dev.relayout {
			for _, mp := range models.MIGProfiles(p.GPUModel) {
				pl.dev.migCounts[mp.Name] = max(pl.dev.migCounts[mp.Name], int32(mp.Max)*p.GPUsPerNode)
			}
		}
		pl.DevicesPerNode = int32(len(pl.dev.caps))
		genericFree := pl.DevicesPerNode
		if !pl.dev.generic {
			genericFree = 0
		}
		pl.FreeByWhole = make([]int32, genericFree+1)
		pl.FreeByWhole[genericFree] = int32(p.Nodes)
		pl.byFree = make([][]int32, genericFree+1)
		pl.byFree[genericFree] = make([]int32, 0, p.Slots())
		var capSum int64
		for _, x := range pl.dev.caps {
			capSum += int64(x)
		}
		for n := 0; n < p.Slots(); n++ {
			node := Node{
				Pool:      int32(i),
				State:     NodeAbsent,
				FreeCPU:   p.MilliCPU,
				FreeMem:   p.MemoryMiB,
				FreeWhole: genericFree,
				gpuBase:   int32(len(c.devFree)),
				gpuN:      pl.DevicesPerNode,
				physBase:  int32(len(c.physBusy)),
				FreeMilli: capSum,
				CapMilli:  capSum,
			}
			c.devFree = append(c.devFree, pl.dev.caps...)
			c.devCap = append(c.devCap, pl.dev.caps...)
			if pl.dev.profiles != nil {
				c.devProfile = append(c.devProfile, pl.dev.profiles...)
			} else {
				c.devProfile = append(c.devProfile, make([]string, len(pl.dev.caps))...)
			}
			for g := int32(0); g < p.GPUsPerNode; g++ {
				c.physBusy = append(c.physBusy, 0)
				c.physMem = append(c.physMem, 0)
				c.physOut = append(c.physOut, false)
			}
			c.refreshShare(&node)
			if n < p.Nodes {
				node.State = NodeReady
				node.bucket = int32(len(pl.byFree[genericFree]))
				pl.byFree[genericFree] = append(pl.byFree[genericFree], int32(len(c.Nodes)))
			}
			c.Nodes = append(c.Nodes, node)
		}
		c.Pools[i] = pl
	}
	c.initClasses()
	return c, nil
}

// migDevices lays out one GPU: each instance's milli-GPU and profile, in
// placement order.
func migDevices(model string, layout []string) ([]int32, []string, error) {
	placed, err := models.PlaceMIG(model, layout)
	if err != nil {
		return nil, nil, err
	}
	var w []int
	var names []string
	for _, x := range placed {
		w = append(w, x.Profile.Compute)
		names = append(names, x.Profile.Name)
	}
	return splitMilli(w, 7), names, nil
}

// FragState is node n as GPU fragmentation sees it (GPUFree is shared: read only).
func (c *Cluster) FragState(n int32) models.NodeState {
	nd := &c.Nodes[n]
	return models.NodeState{MilliCPU: nd.FreeCPU, GPUFree: c.GPUFree(n), Model: c.Pools[nd.Pool].Spec.GPUModel}
}

// GPUFree returns the free milli-GPU of each device of node n (read only).
func (c *Cluster) GPUFree(n int32) []int32 {
	nd := &c.Nodes[n]
	return c.devFree[nd.gpuBase : nd.gpuBase+nd.gpuN]
}

// freeMIG counts node n's free MIG instances of a profile.
func (c *Cluster) freeMIG(n int32, profile string) int32 {
	nd := &c.Nodes[n]
	pl := &c.Pools[nd.Pool]
	if pl.dev.kind != devMIG || pl.dev.generic {
		return 0
	}
	var k int32
	prof := c.devProfile[nd.gpuBase : nd.gpuBase+nd.gpuN]
	for d, f := range c.devFree[nd.gpuBase : nd.gpuBase+nd.gpuN] {
		if f > 0 && prof[d] == profile {
			k++
		}
	}
	return k
}

// FreeDevices is how many of the devices pod p asks for node n has free.
func (c *Cluster) FreeDevices(n int32, p *PodSpec) int32 {
	if p.MIG != "" {
		return c.freeMIG(n, p.MIG)
	}
	return c.Nodes[n].FreeWhole
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
	if p.GPUs == 0 {
		return true
	}
	return c.FreeDevices(n, p) >= p.GPUs
}

// FitsEmpty reports whether pod p fits an empty node of pool i.
func (c *Cluster) FitsEmpty(i int, p *PodSpec) bool {
	pl := &c.Pools[i]
	s := &pl.Spec
	if s.MilliCPU < p.MilliCPU || s.MemoryMiB < p.MemoryMiB {
		return false
	}
	switch {
	case p.GPUMilli > 0:
		return pl.dev.kind == devPlain && s.GPUsPerNode >= 1
	case p.MIG != "":
		return !pl.dev.generic && pl.dev.migCounts[p.MIG] >= p.GPUs
	case p.GPUs == 0:
		return true
	}
	return pl.dev.generic && pl.DevicesPerNode >= p.GPUs
}

// PodsPerEmptyNode is how many pods like p an empty node of pool i holds.
func (c *Cluster) PodsPerEmptyNode(i int, p *PodSpec) int64 {
	pl := &c.Pools[i]
	s := &pl.Spec
	n := int64(1 << 30)
	if p.MilliCPU > 0 {
		n = min(n, s.MilliCPU/p.MilliCPU)
	}
	if p.MemoryMiB > 0 {
		n = min(n, s.MemoryMiB/p.MemoryMiB)
	}
	switch {
	case p.GPUMilli > 0:
		n = min(n, int64(s.GPUsPerNode)*(MilliGPU/int64(p.GPUMilli)))
	case p.MIG != "":
		n = min(n, int64(pl.dev.migCounts[p.MIG]/p.GPUs))
	case p.GPUs > 0:
		n = min(n, int64(pl.DevicesPerNode/p.GPUs))
	}
	return n
}

// OverCommitError is an allocation the node cannot hold: a scheduler bug.
type OverCommitError struct {
	Node int32
	Pod  PodSpec
}

func (e *OverCommitError) Error() string {
	return fmt.Sprintf("invariant violated: pod %+v allocated on node %d beyond its free capacity", e.Pod, e.Node)
}

// advance brings the pool's time integrals up to now.
func (pl *Pool) advance(now Time) {
	if dt := now - pl.use.last; dt > 0 {
		pl.use.allocIntegral += pl.AllocMilli * dt
		pl.use.supplyIntegral += pl.use.supplyMilli * dt
		h := float64(dt) / 3.6e6
		pl.use.cpuHours += float64(pl.use.allocCPU) * h
		pl.use.memHours += float64(pl.use.allocMem) * h
		pl.use.nodeMs += float64(pl.Present) * float64(dt)
		pl.use.last = now
	}
}

// Usage is a pool's resource time up to the last Advance: node-hours
// present (billed), and CPU (milli-CPU-hours) and memory (MiB-hours) held
// by pods.
type Usage struct {
	NodeHours, MilliCPUHours, MemMiBHours float64
}

// Usage returns the pool's resource time so far.
func (pl *Pool) Usage() Usage {
	return Usage{NodeHours: pl.use.nodeMs / 3.6e6, MilliCPUHours: pl.use.cpuHours, MemMiBHours: pl.use.memHours}
}

// Advance brings every pool's time integrals up to now.
func (c *Cluster) Advance(now Time) {
	for i := range c.Pools {
		c.Pools[i].advance(now)
	}
}

// Integrals returns the pool's allocated and supplied milli-GPU x ms up to
// the last Advance (or allocation change).
func (pl *Pool) Integrals() (allocated, supplied int64) {
	return pl.use.allocIntegral, pl.use.supplyIntegral
}

// move re-files node n after its free whole GPUs changed from before.
func (c *Cluster) move(pool *Pool, n int32, before int32) {
	c.unfile(pool, n, before)
	c.file(pool, n)
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
			if c.Nodes[n].State == NodeReady {
				dst = append(dst, n)
			}
		}
		return dst
	}
	for k := minWhole; k < int32(len(pl.byFree)); k++ {
		dst = append(dst, pl.byFree[k]...)
	}
	return dst
}

func (c *Cluster) refreshShare(nd *Node) {
	if c.Pools[nd.Pool].dev.kind != devPlain {
		nd.MaxShare = 0
		return
	}
	m := int32(0)
	for _, f := range c.devFree[nd.gpuBase : nd.gpuBase+nd.gpuN] {
		if f > m {
			m = f
		}
	}
	nd.MaxShare = m
}

// takeDevices picks the devices for a pod asking for whole devices:
// the lowest-indexed free ones (of the pod's MIG profile, if any); on
// time-sliced GPUs, replicas of the least-shared GPUs first, one per GPU
// while they last.
func (c *Cluster) takeDevices(n int32, p *PodSpec) uint64 {
	nd := &c.Nodes[n]
	pool := &c.Pools[nd.Pool]
	gf := c.devFree[nd.gpuBase : nd.gpuBase+nd.gpuN]
	gc := c.devCap[nd.gpuBase : nd.gpuBase+nd.gpuN]
	var mask uint64
	need := p.GPUs
	if pool.dev.kind == devSlice {
		// Each replica goes to the GPU with the fewest taken replicas,
		// counting the ones this pod has taken (ties: lowest index).
		per := int(pool.dev.perGPU)
		for ; need > 0; need-- {
			best, bestBusy := -1, 0
			for d := range gf {
				if gf[d] != gc[d] || mask&(1<<uint(d)) != 0 {
					continue
				}
				g := d / per
				busy := int(c.physBusy[nd.physBase+int32(g)]) + bits.OnesCount64(mask>>uint(g*per)&(1<<uint(per)-1))
				if best < 0 || busy < bestBusy {
					best, bestBusy = d, busy
				}
			}
			mask |= 1 << uint(best)
		}
		return mask
	}
	for d := range gf {
		if need == 0 {
			break
		}
		if gf[d] != gc[d] || gc[d] == 0 {
			continue // taken, or an empty slot of a re-layout pool
		}
		if p.MIG != "" && c.devProfile[nd.gpuBase+int32(d)] != p.MIG {
			continue
		}
		mask |= 1 << uint(d)
		need--
	}
	return mask
}

// Allocate binds pod p to node n at time now and returns the placement.
// A share goes to GPU gpu when gpu >= 0, else to the GPU with the least free
// capacity that still holds it (ties: lowest index).
func (c *Cluster) Allocate(now Time, n int32, p *PodSpec, gpu int) (Placement, error) {
	if !c.Fits(n, p) {
		return Placement{}, &OverCommitError{Node: n, Pod: *p}
	}
	nd := &c.Nodes[n]
	pool := &c.Pools[nd.Pool]
	pool.advance(now)
	pl := Placement{Node: n, Share: -1, At: now}
	gf := c.devFree[nd.gpuBase : nd.gpuBase+nd.gpuN]
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
		pl.Milli = p.GPUMilli
		c.refreshShare(nd)
	} else if p.GPUs > 0 {
		pl.GPUs = c.takeDevices(n, p)
		for m := pl.GPUs; m != 0; m &= m - 1 {
			d := bits.TrailingZeros64(m)
			pl.Milli += gf[d]
			gf[d] = 0
			if pool.dev.kind == devSlice {
				g := c.GPUs().PhysGPU(n, d)
				c.physBusy[g]++
				c.physMem[g] += p.GPUMemMiB
			}
		}
		if pool.dev.generic {
			nd.FreeWhole -= p.GPUs
		}
		if nd.FreeWhole == 0 || nd.MaxShare == MilliGPU {
			c.refreshShare(nd)
		}
	}
	pool.AllocMilli += int64(pl.Milli)
	pool.use.allocCPU += p.MilliCPU
	pool.use.allocMem += p.MemoryMiB
	if wholeBefore != nd.FreeWhole && nd.State == NodeReady {
		c.move(pool, n, wholeBefore)
	}
	nd.FreeCPU -= p.MilliCPU
	nd.FreeMem -= p.MemoryMiB
	nd.FreeMilli -= int64(pl.Milli)
	nd.Pods++
	nd.Classes[ClassOf(p)]++
	nd.Version++
	c.reclass(n)
	c.tallyPod(n, p, +1)
	return pl, nil
}

// Release frees a placement made by Allocate for the same pod spec.
func (c *Cluster) Release(now Time, pl Placement, p *PodSpec) error {
	nd := &c.Nodes[pl.Node]
	pool := &c.Pools[nd.Pool]
	pool.advance(now)
	gf := c.devFree[nd.gpuBase : nd.gpuBase+nd.gpuN]
	gc := c.devCap[nd.gpuBase : nd.gpuBase+nd.gpuN]
	wholeBefore := nd.FreeWhole
	if p.GPUMilli > 0 {
		if pl.Share < 0 || int32(pl.Share) >= nd.gpuN || gf[pl.Share]+p.GPUMilli > gc[pl.Share] || pl.Milli != p.GPUMilli {
			return fmt.Errorf("invariant violated: releasing share %d of GPU %d on node %d frees more than it holds", p.GPUMilli, pl.Share, pl.Node)
		}
		gf[pl.Share] += p.GPUMilli
		if gf[pl.Share] == MilliGPU {
			nd.FreeWhole++
		}
	} else if p.GPUs > 0 {
		if int32(bits.OnesCount64(pl.GPUs)) != p.GPUs {
			return fmt.Errorf("invariant violated: placement on node %d holds %d GPUs, pod asked %d", pl.Node, bits.OnesCount64(pl.GPUs), p.GPUs)
		}
		var milli int32
		for m := pl.GPUs; m != 0; m &= m - 1 {
			d := bits.TrailingZeros64(m)
			if gf[d] != 0 {
				return fmt.Errorf("invariant violated: GPU device %d of node %d released but not fully held", d, pl.Node)
			}
			gf[d] = gc[d]
			milli += gc[d]
			if pool.dev.kind == devSlice {
				g := c.GPUs().PhysGPU(pl.Node, d)
				c.physBusy[g]--
				c.physMem[g] -= p.GPUMemMiB
			}
		}
		if milli != pl.Milli {
			return fmt.Errorf("invariant violated: placement on node %d records %d milli-GPU, its devices hold %d", pl.Node, pl.Milli, milli)
		}
		if pool.dev.generic {
			nd.FreeWhole += p.GPUs
		}
	}
	pool.AllocMilli -= int64(pl.Milli)
	pool.use.allocCPU -= p.MilliCPU
	pool.use.allocMem -= p.MemoryMiB
	c.refreshShare(nd)
	if wholeBefore != nd.FreeWhole && nd.State == NodeReady {
		c.move(pool, pl.Node, wholeBefore)
	}
	nd.FreeCPU += p.MilliCPU
	nd.FreeMem += p.MemoryMiB
	nd.FreeMilli += int64(pl.Milli)
	nd.Pods--
	nd.Classes[ClassOf(p)]--
	nd.Version++
	c.reclass(pl.Node)
	c.tallyPod(pl.Node, p, -1)
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

// CheckDevices recomputes every node's GPU capacity and free milli-GPU
// from its devices and compares them with the node's counters. Each GPU
// in service offers 1000 milli-GPU, or under MIG the compute slices of its
// instances' profiles (the models table) of 7; a GPU out of service for a
// re-layout offers none.
func (c *Cluster) CheckDevices() error {
	for n := range c.Nodes {
		nd := &c.Nodes[n]
		pl := &c.Pools[nd.Pool]
		per := int(pl.dev.perGPU)
		var capSum, freeSum int64
		for g := 0; g < int(pl.Spec.GPUsPerNode); g++ {
			var gcap int64
			compute := 0
			for d := g * per; d < (g+1)*per; d++ {
				i := nd.gpuBase + int32(d)
				if c.devFree[i] < 0 || c.devFree[i] > c.devCap[i] {
					return fmt.Errorf("device %d of node %d has %d milli-GPU free of %d", d, n, c.devFree[i], c.devCap[i])
				}
				gcap += int64(c.devCap[i])
				freeSum += int64(c.devFree[i])
				if pl.dev.kind == devMIG && c.devProfile[i] != "" {
					mp, ok := models.MIGProfileByName(pl.Spec.GPUModel, c.devProfile[i])
					if !ok {
						return fmt.Errorf("device %d of node %d is MIG profile %q, which %s does not have", d, n, c.devProfile[i], pl.Spec.GPUModel)
					}
					compute += mp.Compute
				}
			}
			want := int64(MilliGPU)
			switch {
			case c.physOut[nd.physBase+int32(g)]:
				want = 0
			case pl.dev.kind == devMIG:
				want = int64(compute) * MilliGPU / 7
			}
			if gcap != want {
				return fmt.Errorf("GPU %d of node %d offers %d milli-GPU, its layout %d", g, n, gcap, want)
			}
			capSum += gcap
		}
		if capSum != nd.CapMilli || freeSum != nd.FreeMilli {
			return fmt.Errorf("node %d counts %d of %d milli-GPU free, its devices %d of %d", n, nd.FreeMilli, nd.CapMilli, freeSum, capSum)
		}
	}
	return nil
}
