package cluster

import "fmt"

// MIG is the cluster's MIG re-layout: pools that re-partition idle GPUs
// on demand take a GPU out of service and return it with a new layout.
// It is a view of the cluster's state: c.MIG().
type MIG struct{ c *Cluster }

// MIG returns the re-layout view of the cluster.
func (c *Cluster) MIG() MIG { return MIG{c} }

// CanRelayout reports whether pool i re-partitions idle GPUs on demand.
func (m MIG) CanRelayout(i int) bool { return m.c.Pools[i].dev.relayout }

// IdleGPU is a GPU of node n (a re-layout pool) whose instances are
// all free and that is in service, lowest index first; -1 if none.
func (m MIG) IdleGPU(n int32) int {
	nd := &m.c.Nodes[n]
	pl := &m.c.Pools[nd.Pool]
	if !pl.dev.relayout || nd.State != NodeReady {
		return -1
	}
	per := int(pl.dev.perGPU)
	for g := 0; g < int(pl.Spec.GPUsPerNode); g++ {
		if m.c.physOut[nd.physBase+int32(g)] || m.c.physBusy[nd.physBase+int32(g)] != 0 {
			continue
		}
		idle := true
		for d := g * per; d < (g+1)*per; d++ {
			if i := nd.gpuBase + int32(d); m.c.devFree[i] != m.c.devCap[i] {
				idle = false
				break
			}
		}
		if idle {
			return g
		}
	}
	return -1
}

// BeginRelayout takes idle GPU g of node n out of service: its instances
// go away until EndRelayout.
func (m MIG) BeginRelayout(now Time, n int32, g int) error {
	nd := &m.c.Nodes[n]
	pl := &m.c.Pools[nd.Pool]
	if m.IdleGPU(n) < 0 || g < 0 || g >= int(pl.Spec.GPUsPerNode) || m.c.physOut[nd.physBase+int32(g)] {
		return fmt.Errorf("invariant violated: re-layout of GPU %d of node %d, which is not idle", g, n)
	}
	pl.advance(now)
	per := int(pl.dev.perGPU)
	for d := g * per; d < (g+1)*per; d++ {
		i := nd.gpuBase + int32(d)
		if m.c.devFree[i] != m.c.devCap[i] {
			return fmt.Errorf("invariant violated: re-layout of GPU %d of node %d, which holds pods", g, n)
		}
		nd.FreeMilli -= int64(m.c.devCap[i])
		nd.CapMilli -= int64(m.c.devCap[i])
		m.c.devFree[i], m.c.devCap[i], m.c.devProfile[i] = 0, 0, ""
	}
	m.c.physOut[nd.physBase+int32(g)] = true
	nd.Version++
	return nil
}

// EndRelayout returns GPU g of node n to service with a new layout.
func (m MIG) EndRelayout(now Time, n int32, g int, layout []string) error {
	nd := &m.c.Nodes[n]
	pl := &m.c.Pools[nd.Pool]
	if !m.c.physOut[nd.physBase+int32(g)] {
		return fmt.Errorf("invariant violated: GPU %d of node %d ends a re-layout it did not begin", g, n)
	}
	caps, names, err := migDevices(pl.Spec.GPUModel, layout)
	if err != nil {
		return err
	}
	if len(caps) > int(pl.dev.perGPU) {
		return fmt.Errorf("layout %v has more instances than a GPU has room for", layout)
	}
	pl.advance(now)
	per := int(pl.dev.perGPU)
	for k := 0; k < per; k++ {
		i := nd.gpuBase + int32(g*per+k)
		if k < len(caps) {
			m.c.devFree[i], m.c.devCap[i], m.c.devProfile[i] = caps[k], caps[k], names[k]
			nd.FreeMilli += int64(caps[k])
			nd.CapMilli += int64(caps[k])
		}
	}
	m.c.physOut[nd.physBase+int32(g)] = false
	nd.Version++
	return nil
}
