package capacity

import (
	"math/rand/v2"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// provisioner is the scale-up's state: when the last decision was and the
// next is due, when each group last grew, the offerings refused lately,
// and the dry run of a decision (the waiting jobs, the NodeClaims of the
// NodePools, what their limits leave; karpenter.go), kept between
// scale-ups so that a decision allocates nothing once warm. It reads the
// spec and the cluster; the controller launches what it plans.
type provisioner struct {
	spec *Spec
	c    *cluster.Cluster

	iceUntil   []Time // per pool: an offering refused for want of capacity is avoided until then
	lastAdd    []Time // per group
	scaleUpAt  Time   // the EvScaleUp due, -1 when none
	lastScale  Time
	nodePools  bool // some group is a NodePool
	autoscaler bool // some group is a cluster-autoscaler group

	// The dry run, kept between scale-ups.
	stmt     cluster.Statement
	eligible []int32
	cands    []int32
	pend     []pendingJob
	eligBuf  []int32
	kq       []int32 // pend in Karpenter's queue order
	claims   []nodeClaim
	order    claimOrder
	scratch  []int32
	left     []limitsLeft // per group
	mark     []uint32     // per pool: stamp when eligible for the pod at hand
	stamp    uint32
}

func newProvisioner(spec *Spec, c *cluster.Cluster) provisioner {
	pv := provisioner{
		spec: spec, c: c,
		iceUntil: make([]Time, len(c.Pools)), lastAdd: make([]Time, len(spec.Groups)),
		scaleUpAt: -1, lastScale: -1 << 62,
		left: make([]limitsLeft, len(spec.Groups)), mark: make([]uint32, len(c.Pools)),
	}
	for p := range spec.Pools {
		if spec.Pools[p].OverMaxPrice {
			pv.iceUntil[p] = 1 << 62 // never launched into
		}
	}
	for g := range spec.Groups {
		pv.nodePools = pv.nodePools || spec.Groups[g].Kind == NodePool
		pv.autoscaler = pv.autoscaler || spec.Groups[g].Kind == Autoscaler
		pv.lastAdd[g] = -1 << 62
	}
	return pv
}

func (pv *provisioner) groupNodes(g int32) (nodes int, gpus int64) {
	for _, p := range pv.spec.Groups[g].Pools {
		pl := &pv.c.Pools[p]
		nodes += int(pl.Present)
		gpus += int64(pl.Present) * int64(pl.Spec.GPUsPerNode)
	}
	return
}

// groupResources is the CPU and memory of a group's nodes present.
func (pv *provisioner) groupResources(g int32) (milliCPU, memMiB int64) {
	for _, p := range pv.spec.Groups[g].Pools {
		pl := &pv.c.Pools[p]
		milliCPU += int64(pl.Present) * pl.Spec.MilliCPU
		memMiB += int64(pl.Present) * pl.Spec.MemoryMiB
	}
	return
}

// room reports whether group pool p can take one more node.
func (pv *provisioner) room(now Time, p int32) bool {
	ps := &pv.spec.Pools[p]
	pl := &pv.c.Pools[p]
	if ps.Group < 0 || pl.Present >= pl.Count || pv.iceUntil[p] > now {
		return false
	}
	gr := &pv.spec.Groups[ps.Group]
	nodes, gpus := pv.groupNodes(ps.Group)
	if gr.MaxNodes > 0 && nodes >= gr.MaxNodes {
		return false
	}
	if gr.MaxMilliCPU > 0 || gr.MaxMemoryMiB > 0 {
		cpu, mem := pv.groupResources(ps.Group)
		if (gr.MaxMilliCPU > 0 && cpu+pl.Spec.MilliCPU > gr.MaxMilliCPU) || (gr.MaxMemoryMiB > 0 && mem+pl.Spec.MemoryMiB > gr.MaxMemoryMiB) {
			return false
		}
	}
	return gr.MaxGPUs == 0 || gpus+int64(pl.Spec.GPUsPerNode) <= gr.MaxGPUs
}

// choose picks the cluster-autoscaler pool to grow for a pod of which
// need are still unplaced: the first group (in order) with room in an
// eligible pool, and within it the pool its expander prefers. -1 when
// none can grow.
func (pv *provisioner) choose(now Time, pod *cluster.PodSpec, need int32, pick []*rand.Rand) int32 {
	g := int32(-1)
	pv.cands = pv.cands[:0]
	for _, p := range pv.eligible {
		if !pv.room(now, p) {
			continue
		}
		pg := pv.spec.Pools[p].Group
		if pv.spec.Groups[pg].Kind != Autoscaler {
			continue
		}
		if g < 0 || pg < g {
			g, pv.cands = pg, pv.cands[:0]
		}
		if pg == g {
			pv.cands = append(pv.cands, p)
		}
	}
	if g < 0 {
		return -1
	}
	return pv.rank(&pv.spec.Groups[g], pod, need, pick)
}

// rank applies a group's rule to the candidate pools.
func (pv *provisioner) rank(gr *Group, pod *cluster.PodSpec, need int32, pick []*rand.Rand) int32 {
	c := pv.c
	perPod := func(p int32) float64 {
		fit := min(c.PodsPerEmptyNode(int(p), pod), int64(need))
		return pv.spec.Pools[p].PricePerHour / float64(max(fit, 1))
	}
	best := pv.cands[0]
	switch {
	case gr.Expander == ExpanderPrice:
		for _, p := range pv.cands[1:] {
			if perPod(p) < perPod(best) {
				best = p
			}
		}
	case gr.Expander == ExpanderLeastWaste:
		waste := func(p int32) float64 {
			s := &c.Pools[p].Spec
			fit := float64(min(c.PodsPerEmptyNode(int(p), pod), int64(need)))
			if s.GPUsPerNode > 0 {
				return 1 - fit*float64(pod.MilliGPUs())/float64(int64(s.GPUsPerNode)*cluster.MilliGPU)
			}
			return 1 - fit*float64(pod.MilliCPU)/float64(s.MilliCPU)
		}
		for _, p := range pv.cands[1:] {
			if waste(p) < waste(best) {
				best = p
			}
		}
	default:
		best = pv.cands[pick[pv.cands[0]].IntN(len(pv.cands))]
	}
	return best
}
