package cluster

import "fmt"

// A node slot's life: Absent -> Launch -> Booting -> SetReady -> Ready,
// Ready -> Cordon -> Cordoned, and any present state -> Remove -> Absent
// once its pods are gone. A node counts as supplied (and is paid for) from
// Launch to Remove; the scheduler sees only Ready nodes.

// Schedulable reports whether the scheduler may place pods on node n.
func (c *Cluster) Schedulable(n int32) bool { return c.Nodes[n].State == NodeReady }

// PresentNodes counts the nodes present in the cluster now.
func (c *Cluster) PresentNodes() int {
	k := 0
	for i := range c.Pools {
		k += int(c.Pools[i].Present)
	}
	return k
}

// FreeSlot is the lowest absent slot of pool i (-1 when the pool is full).
func (c *Cluster) FreeSlot(i int) int32 {
	pl := &c.Pools[i]
	if pl.Present == pl.Count {
		return -1
	}
	for n := pl.First; n < pl.First+pl.Count; n++ {
		if c.Nodes[n].State == NodeAbsent {
			return n
		}
	}
	return -1
}

// Launch brings a node into absent slot n, empty and with the pool's
// initial GPU layout. It is supplied from now on but takes pods only once
// SetReady.
func (c *Cluster) Launch(now Time, n int32) error {
	nd := &c.Nodes[n]
	if nd.State != NodeAbsent {
		return fmt.Errorf("invariant violated: launch into slot %d, which holds a %s node", n, nd.State)
	}
	pl := &c.Pools[nd.Pool]
	pl.advance(now)
	if nd.Pods != 0 {
		return fmt.Errorf("invariant violated: absent node %d holds %d pods", n, nd.Pods)
	}
	var capSum int64
	for k, x := range pl.dev.caps {
		i := nd.gpuBase + int32(k)
		c.devFree[i], c.devCap[i] = x, x
		if pl.dev.profiles != nil {
			c.devProfile[i] = pl.dev.profiles[k]
		}
		capSum += int64(x)
	}
	for g := int32(0); g < pl.Spec.GPUsPerNode; g++ {
		c.physBusy[nd.physBase+g], c.physMem[nd.physBase+g], c.physOut[nd.physBase+g] = 0, 0, false
	}
	nd.FreeCPU, nd.FreeMem, nd.FreeMilli, nd.CapMilli = pl.Spec.MilliCPU, pl.Spec.MemoryMiB, capSum, capSum
	nd.FreeWhole = int32(len(pl.FreeByWhole) - 1)
	c.refreshShare(nd)
	nd.State = NodeBooting
	nd.Version++
	pl.Present++
	pl.use.supplyMilli += int64(pl.Spec.GPUsPerNode) * MilliGPU
	return nil
}

// SetReady puts booting node n into service.
func (c *Cluster) SetReady(now Time, n int32) error {
	nd := &c.Nodes[n]
	if nd.State != NodeBooting {
		return fmt.Errorf("invariant violated: node %d made ready from %s", n, nd.State)
	}
	pl := &c.Pools[nd.Pool]
	pl.advance(now)
	nd.State = NodeReady
	pl.Ready++
	c.file(pl, n)
	nd.Version++
	c.reclass(n)
	return nil
}

// Cordon stops new pods going to ready node n; its pods keep running.
func (c *Cluster) Cordon(now Time, n int32) error {
	nd := &c.Nodes[n]
	if nd.State != NodeReady {
		return fmt.Errorf("invariant violated: node %d cordoned from %s", n, nd.State)
	}
	pl := &c.Pools[nd.Pool]
	pl.advance(now)
	c.unfile(pl, n, nd.FreeWhole)
	nd.State = NodeCordoned
	pl.Ready--
	nd.Version++
	c.reclass(n)
	return nil
}

// Remove takes node n out of the cluster; it must hold no pods.
func (c *Cluster) Remove(now Time, n int32) error {
	nd := &c.Nodes[n]
	if nd.State == NodeAbsent {
		return fmt.Errorf("invariant violated: removing absent node %d", n)
	}
	if nd.Pods != 0 {
		return fmt.Errorf("invariant violated: removing node %d, which still holds %d pods", n, nd.Pods)
	}
	pl := &c.Pools[nd.Pool]
	pl.advance(now)
	if nd.State == NodeReady {
		c.unfile(pl, n, nd.FreeWhole)
		pl.Ready--
	}
	nd.State = NodeAbsent
	nd.Version++
	c.reclass(n)
	pl.Present--
	pl.use.supplyMilli -= int64(pl.Spec.GPUsPerNode) * MilliGPU
	return nil
}

// file adds node n to its pool's free-GPU buckets.
func (c *Cluster) file(pl *Pool, n int32) {
	nd := &c.Nodes[n]
	pl.FreeByWhole[nd.FreeWhole]++
	nd.bucket = int32(len(pl.byFree[nd.FreeWhole]))
	pl.byFree[nd.FreeWhole] = append(pl.byFree[nd.FreeWhole], n)
}

// unfile takes node n out of its pool's bucket of nodes with k free GPUs.
func (c *Cluster) unfile(pl *Pool, n int32, k int32) {
	nd := &c.Nodes[n]
	pl.FreeByWhole[k]--
	old := pl.byFree[k]
	last := old[len(old)-1]
	old[nd.bucket] = last
	c.Nodes[last].bucket = nd.bucket
	pl.byFree[k] = old[:len(old)-1]
}
