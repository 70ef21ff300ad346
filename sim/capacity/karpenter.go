package capacity

import (
	"math"
	"slices"
	"sort"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// The NodePools' scale-up mirrors Karpenter v1.13's provisioning
// scheduler (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling)
// for the inputs gpuplan has: the pending pods of one scale-up are solved
// as one batch into NodeClaims, each of which keeps every instance type
// (here: every pool, an instance type and capacity type) that can still
// hold all its pods, and each NodeClaim is launched on its cheapest
// offering. A NodePool's pools are its instance types x capacity types;
// a pool's price is its offering's.

// pendingJob is one waiting job's pods in a scale-up's dry run.
type pendingJob struct {
	job *scheduler.JobInfo
	// need is how many of its pods are not placed yet.
	need int32
	// elig is the job's eligible pools: k.eligBuf[elig0:elig1].
	elig0, elig1 int32
}

// nodeClaim is a node Karpenter's scheduler plans to launch: its
// NodePool, the pools (instance types with their offerings) still able to
// hold every pod on it, and the pods' summed requests.
type nodeClaim struct {
	group int32
	pools []int32
	pods  int32
	// milliCPU, memMiB and gpus are the requests of its pods (gpus: whole
	// devices of pods that are not MIG or shared).
	milliCPU, memMiB int64
	gpus             int32
	// spec is its first pod's; alike says every pod's spec is spec. A
	// MIG or shared-GPU pod joins only a NodeClaim of pods like it, whose
	// count an empty node bounds (gpuplan does not sum MIG profiles or
	// GPU shares across different pods).
	spec  *cluster.PodSpec
	alike bool
}

// limitsLeft is what a NodePool's limits leave for NodeClaims not yet
// launched; -1 where it sets no limit.
type limitsLeft struct {
	nodes, gpus, milliCPU, memMiB int64
}

// claimOrder sorts the NodeClaims by pods, fewest first, as
// Scheduler.add sorts s.newNodeClaims before each in-flight attempt
// (sort.Slice there, sort.Sort here: the same pdqsort, so the same order
// for the same sequence of NodeClaims).
type claimOrder struct {
	ord    []int32
	claims []nodeClaim
}

func (o *claimOrder) Len() int           { return len(o.ord) }
func (o *claimOrder) Less(i, j int) bool { return o.claims[o.ord[i]].pods < o.claims[o.ord[j]].pods }
func (o *claimOrder) Swap(i, j int)      { o.ord[i], o.ord[j] = o.ord[j], o.ord[i] }

// special reports whether pod asks for MIG instances or a GPU share.
func special(pod *cluster.PodSpec) bool { return pod.MIG != "" || pod.Shared() }

// collect lists the waiting jobs (at most maxScaleUpJobs) in queue order
// with their eligible pools.
func (k *Controller) collect() {
	clear(k.prov.pend)
	k.prov.pend = k.prov.pend[:0]
	k.prov.eligBuf = k.prov.eligBuf[:0]
	k.host.Waiting(func(job *scheduler.JobInfo) bool {
		if len(k.prov.pend) == maxScaleUpJobs {
			return false
		}
		if len(job.Spec.Groups) > 0 {
			k.collectGroups(job)
			return true
		}
		need := job.Remaining()
		if need <= 0 {
			return true
		}
		e0 := int32(len(k.prov.eligBuf))
		k.prov.eligBuf = k.host.EligiblePools(job, k.prov.eligBuf)
		k.prov.pend = append(k.prov.pend, pendingJob{job: job, need: need, elig0: e0, elig1: int32(len(k.prov.eligBuf))})
		return true
	})
}

// collectGroups lists a waiting job of several pod groups as one pending
// job per group with pods still to place, each of its own pod shape and
// eligible pools (its first Bound pods are bound, in group order).
func (k *Controller) collectGroups(job *scheduler.JobInfo) {
	left := job.Bound
	for g := 0; g <= len(job.Spec.Groups); g++ {
		part := job.Spec.Part(g)
		b := min(left, part.Replicas)
		left -= b
		if part.Replicas == b {
			continue
		}
		view := &scheduler.JobInfo{ID: job.ID, Spec: &part, Bound: b, Attempted: job.Attempted, FirstReason: -1, LastReason: -1}
		e0 := int32(len(k.prov.eligBuf))
		k.prov.eligBuf = k.host.EligiblePools(view, k.prov.eligBuf)
		k.prov.pend = append(k.prov.pend, pendingJob{job: view, need: view.Remaining(), elig0: e0, elig1: int32(len(k.prov.eligBuf))})
	}
}

func (pv *provisioner) eligibleOf(pe *pendingJob) []int32 { return pv.eligBuf[pe.elig0:pe.elig1] }

// placeExisting places as many of pe's pods as fit on nodes already there,
// as Scheduler.addToExistingNode does before anything new is planned,
// in the order of sortExistingNodes: initialized (Ready) nodes first, then
// those still booting. A job the queue tried already did not fit the
// Ready nodes, so only one it has not tried looks at them.
func (pv *provisioner) placeExisting(now Time, pe *pendingJob) error {
	c := pv.c
	pod := &pe.job.Spec.Pod
	for pass := 0; pass < 2 && pe.need > 0; pass++ {
		want := cluster.NodeBooting
		if pass == 0 {
			if pe.job.Attempted {
				continue
			}
			want = cluster.NodeReady
		}
		for _, p := range pv.eligibleOf(pe) {
			pl := &c.Pools[p]
			for n := pl.First; n < pl.First+pl.Count && pe.need > 0; n++ {
				for pe.need > 0 && c.Nodes[n].State == want && c.Fits(n, pod) {
					if err := pv.stmt.Allocate(now, n, pod, -1); err != nil {
						return err
					}
					pe.need--
				}
			}
		}
	}
	return nil
}

// solve is Scheduler.Solve over the NodePools: the waiting pods in the
// order of its Queue, each put on an existing node, else added to the
// first in-flight NodeClaim that can still hold it, else to a new
// NodeClaim of the first NodePool (by weight) that can; then each
// NodeClaim is launched on its cheapest offering.
func (k *Controller) solve(now Time) error {
	// NewQueue: byCPUAndMemoryDescending, CPU then memory, larger first;
	// ties in queue order (Karpenter: creation time, then the pod's UID).
	k.prov.kq = k.prov.kq[:0]
	for i := range k.prov.pend {
		k.prov.kq = append(k.prov.kq, int32(i))
	}
	slices.SortStableFunc(k.prov.kq, k.prov.byCPUAndMemoryDescending)
	for g := range k.spec.Groups {
		k.prov.left[g] = k.prov.limitsLeft(int32(g))
	}
	k.prov.claims = k.prov.claims[:0]
	k.prov.order.ord = k.prov.order.ord[:0]
	for _, i := range k.prov.kq {
		pe := &k.prov.pend[i]
		if err := k.prov.placeExisting(now, pe); err != nil {
			return err
		}
		if pe.need == 0 {
			continue
		}
		if k.prov.stamp++; k.prov.stamp == 0 { // wrapped: forget every mark
			clear(k.prov.mark)
			k.prov.stamp = 1
		}
		for _, p := range k.prov.eligibleOf(pe) {
			k.prov.mark[p] = k.prov.stamp
		}
		for pe.need > 0 {
			if k.prov.addToInflight(pe) || k.prov.addToNew(now, pe) {
				pe.need--
				continue
			}
			break // no NodeClaim can hold it: neither can its like
		}
	}
	for _, i := range k.prov.order.ord {
		p := k.offering(now, &k.prov.claims[i])
		if p < 0 {
			continue
		}
		if _, err := k.launch(now, p); err != nil {
			return err
		}
		k.Stats[p].PlannedPods += int64(k.prov.claims[i].pods)
	}
	return nil
}

func (pv *provisioner) byCPUAndMemoryDescending(a, b int32) int {
	pa, pb := &pv.pend[a].job.Spec.Pod, &pv.pend[b].job.Spec.Pod
	switch {
	case pa.MilliCPU != pb.MilliCPU:
		if pa.MilliCPU > pb.MilliCPU {
			return -1
		}
		return 1
	case pa.MemoryMiB != pb.MemoryMiB:
		if pa.MemoryMiB > pb.MemoryMiB {
			return -1
		}
		return 1
	}
	return 0
}

// limitsLeft is group g's limits less what its nodes present take
// (Scheduler.remainingResources, from the NodePool's usage).
func (pv *provisioner) limitsLeft(g int32) limitsLeft {
	gr := &pv.spec.Groups[g]
	l := limitsLeft{nodes: -1, gpus: -1, milliCPU: -1, memMiB: -1}
	if gr.Kind != NodePool {
		return l
	}
	nodes, gpus := pv.groupNodes(g)
	cpu, mem := pv.groupResources(g)
	if gr.MaxNodes > 0 {
		l.nodes = max(int64(gr.MaxNodes-nodes), 0)
	}
	if gr.MaxGPUs > 0 {
		l.gpus = max(gr.MaxGPUs-gpus, 0)
	}
	if gr.MaxMilliCPU > 0 {
		l.milliCPU = max(gr.MaxMilliCPU-cpu, 0)
	}
	if gr.MaxMemoryMiB > 0 {
		l.memMiB = max(gr.MaxMemoryMiB-mem, 0)
	}
	return l
}

// withinLimits is filterByRemainingResources for one pool: a node of it
// takes no limited resource past what is left.
func (pv *provisioner) withinLimits(p int32, l *limitsLeft) bool {
	s := &pv.c.Pools[p].Spec
	return (l.gpus < 0 || int64(s.GPUsPerNode) <= l.gpus) &&
		(l.milliCPU < 0 || s.MilliCPU <= l.milliCPU) &&
		(l.memMiB < 0 || s.MemoryMiB <= l.memMiB)
}

// holds reports whether an empty node of pool p holds the NodeClaim's
// pods and pod besides (NodeClaim.CanAdd's fits: the summed requests
// within the instance type's allocatable).
func (pv *provisioner) holds(p int32, cl *nodeClaim, pod *cluster.PodSpec) bool {
	pl := &pv.c.Pools[p]
	if cl.milliCPU+pod.MilliCPU > pl.Spec.MilliCPU || cl.memMiB+pod.MemoryMiB > pl.Spec.MemoryMiB {
		return false
	}
	if special(pod) {
		return int64(cl.pods)+1 <= pv.c.PodsPerEmptyNode(int(p), pod)
	}
	return cl.gpus+pod.GPUs <= pl.DevicesPerNode
}

func (cl *nodeClaim) add(pod *cluster.PodSpec) {
	if cl.pods == 0 {
		cl.spec, cl.alike = pod, true
	} else if cl.alike && *cl.spec != *pod {
		cl.alike = false
	}
	cl.pods++
	cl.milliCPU += pod.MilliCPU
	cl.memMiB += pod.MemoryMiB
	if !special(pod) {
		cl.gpus += pod.GPUs
	}
}

// addToInflight is Scheduler.addToInflightNode: the NodeClaims sorted by
// pods, fewest first, the pod joins the first whose instance types it is
// compatible with and that some of them can still hold with it (CanAdd);
// that NodeClaim keeps only those.
func (pv *provisioner) addToInflight(pe *pendingJob) bool {
	pod := &pe.job.Spec.Pod
	pv.order.claims = pv.claims
	sort.Sort(&pv.order)
	for _, ci := range pv.order.ord {
		cl := &pv.claims[ci]
		if (special(pod) || special(cl.spec)) && !(cl.alike && *cl.spec == *pod) {
			continue
		}
		pv.scratch = pv.scratch[:0]
		for _, p := range cl.pools {
			if pv.mark[p] == pv.stamp && pv.holds(p, cl, pod) {
				pv.scratch = append(pv.scratch, p)
			}
		}
		if len(pv.scratch) == 0 {
			continue
		}
		cl.pools = append(cl.pools[:0], pv.scratch...)
		cl.add(pod)
		return true
	}
	return false
}

// addToNew is Scheduler.addToNewNodeClaim: the first NodePool, in weight
// order, with instance types that hold the pod alone and stay within what
// its limits leave starts a NodeClaim with all of them; the limits left
// then lose the most any of them could take (subtractMax). Offerings
// refused for want of capacity lately are not available.
func (pv *provisioner) addToNew(now Time, pe *pendingJob) bool {
	pod := &pe.job.Spec.Pod
	for g := range pv.spec.Groups {
		gr := &pv.spec.Groups[g]
		l := &pv.left[g]
		if gr.Kind != NodePool || l.nodes == 0 {
			continue
		}
		pv.scratch = pv.scratch[:0]
		for _, p := range pv.eligibleOf(pe) {
			if pv.spec.Pools[p].Group == int32(g) && pv.iceUntil[p] <= now && pv.withinLimits(p, l) {
				pv.scratch = append(pv.scratch, p)
			}
		}
		if len(pv.scratch) == 0 {
			continue
		}
		var cl *nodeClaim
		if n := len(pv.claims); n < cap(pv.claims) {
			pv.claims = pv.claims[:n+1]
			cl = &pv.claims[n]
			*cl = nodeClaim{pools: cl.pools[:0]}
		} else {
			pv.claims = append(pv.claims, nodeClaim{})
			cl = &pv.claims[n]
		}
		cl.group = int32(g)
		cl.pools = append(cl.pools, pv.scratch...)
		cl.add(pod)
		pv.order.ord = append(pv.order.ord, int32(len(pv.claims)-1))
		var gpus, cpu, mem int64
		for _, p := range cl.pools {
			s := &pv.c.Pools[p].Spec
			gpus, cpu, mem = max(gpus, int64(s.GPUsPerNode)), max(cpu, s.MilliCPU), max(mem, s.MemoryMiB)
		}
		if l.nodes > 0 {
			l.nodes--
		}
		if l.gpus >= 0 {
			l.gpus = max(l.gpus-gpus, 0)
		}
		if l.milliCPU >= 0 {
			l.milliCPU = max(l.milliCPU-cpu, 0)
		}
		if l.memMiB >= 0 {
			l.memMiB = max(l.memMiB-mem, 0)
		}
		return true
	}
	return false
}

// offering picks the pool a NodeClaim launches into: of its pools with
// room now (the NodePool's limits, checked again at launch), the cheapest
// offering (OrderByPrice, and the fake provider's and EC2 fleet's lowest
// price); when both capacity types are open, spot offerings priced above
// the cheapest on-demand one are dropped first (the AWS provider's
// filterUnwantedSpot), and a spot offering is taken over an on-demand one
// of the same price (the AWS provider launches spot whenever a spot
// offering is left). A spot launch refused for want of capacity
// (SpotLaunchFailure) makes the offering unavailable for three minutes
// and the next cheapest is tried. -1 when none has room.
func (k *Controller) offering(now Time, cl *nodeClaim) int32 {
	gr := &k.spec.Groups[cl.group]
	// Reserved capacity first, while a reservation has room (the AWS
	// provider launches only reserved offerings when one is left, the
	// cheapest); it is paid for whether used or not.
	best := int32(-1)
	for _, p := range cl.pools {
		if ps := &k.spec.Pools[p]; ps.CapacityType == models.Reserved && k.prov.room(now, p) &&
			(best < 0 || ps.PricePerHour < k.spec.Pools[best].PricePerHour) {
			best = p
		}
	}
	if best >= 0 {
		return best
	}
	for {
		cheapestOD, anySpot := math.Inf(1), false
		for _, p := range cl.pools {
			if !k.prov.room(now, p) {
				continue
			}
			if ps := &k.spec.Pools[p]; ps.CapacityType == models.Spot {
				anySpot = true
			} else {
				cheapestOD = min(cheapestOD, ps.PricePerHour)
			}
		}
		mixed := anySpot && !math.IsInf(cheapestOD, 1)
		best, bestSpot, bestPrice := int32(-1), false, 0.0
		for _, p := range cl.pools {
			if !k.prov.room(now, p) {
				continue
			}
			ps := &k.spec.Pools[p]
			spot := ps.CapacityType == models.Spot
			if spot && mixed && ps.PricePerHour > cheapestOD {
				continue
			}
			if best < 0 || ps.PricePerHour < bestPrice || (ps.PricePerHour == bestPrice && spot && !bestSpot) {
				best, bestSpot, bestPrice = p, spot, ps.PricePerHour
			}
		}
		if best < 0 {
			return -1
		}
		if bestSpot && gr.SpotLaunchFailure > 0 && k.pick[best].Float64() < gr.SpotLaunchFailure {
			k.Stats[best].SpotFallbacks++
			k.prov.iceUntil[best] = now + iceTTL
			continue
		}
		return best
	}
}
