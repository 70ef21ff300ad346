package cluster

// GPUs is the cluster's physical GPUs as GPU sharing sees them: the physical
// GPU each device belongs to, how many devices of a GPU are taken, its
// time slices' speed and its declared memory. It is a view of the
// cluster's state: c.GPUs().
type GPUs struct{ c *Cluster }

// GPUs returns the physical-GPU view of the cluster.
func (c *Cluster) GPUs() GPUs { return GPUs{c} }

// PhysGPUs is the number of physical GPUs in the cluster.
func (s GPUs) PhysGPUs() int { return len(s.c.physBusy) }

// TimeSliced reports whether node n's GPUs are time-sliced.
func (s GPUs) TimeSliced(n int32) bool { return s.c.Pools[s.c.Nodes[n].Pool].dev.kind == devSlice }

// PhysGPU is the cluster-wide index of the physical GPU that device d of
// node n belongs to.
func (s GPUs) PhysGPU(n int32, d int) int32 {
	nd := &s.c.Nodes[n]
	return nd.physBase + int32(d)/s.c.Pools[nd.Pool].dev.perGPU
}

// SliceRate is the speed of each of k pods sharing a time-sliced GPU of
// node n's pool: 1/k, less the pool's context-switch overhead.
func (s GPUs) SliceRate(n int32, k int32) float64 {
	if k <= 1 {
		return 1
	}
	return (1 - s.c.Pools[s.c.Nodes[n].Pool].Spec.Sharing.SliceOverhead) / float64(k)
}

// Sharers is the number of devices taken on physical GPU g.
func (s GPUs) Sharers(g int32) int32 { return int32(s.c.physBusy[g]) }

// GPUMemory is physical GPU g's declared memory in use and its capacity
// (0 when the pool does not say).
func (s GPUs) GPUMemory(g int32, n int32) (used, capacity int64) {
	return s.c.physMem[g], s.c.Pools[s.c.Nodes[n].Pool].Spec.GPUMemoryMiB
}
