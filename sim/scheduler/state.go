package scheduler

import "gpuplan.dev/gpuplan/sim/cluster"

// CycleState is the typed per-cycle scratch space the framework hands to
// plugins. It is reused between cycles; plugins must not keep references.
type CycleState struct {
	Cluster *cluster.Cluster
	Now     cluster.Time
	Job     *JobInfo
	// MinPods is how many pods must be placeable this cycle (gang size, or 1).
	MinPods int32
	// Pools are the indexes of the pools still eligible for the job's pods.
	// PreFilter plugins narrow it in place.
	Pools []int32
	// Diagnosing is set when the framework is explaining a failure rather
	// than placing: plugins skip shortcuts that would hide per-node reasons.
	Diagnosing bool

	nodes  []int32
	one    []int32
	scores []int64
	tmp    []int64
}

func (st *CycleState) reset(c *cluster.Cluster, now cluster.Time, job *JobInfo) {
	st.Cluster = c
	st.Now = now
	st.Job = job
	st.MinPods = 1
	st.Diagnosing = false
	st.Pools = st.Pools[:0]
	for i := range c.Pools {
		if c.Pools[i].Count > 0 {
			st.Pools = append(st.Pools, int32(i))
		}
	}
}

// KeepPools keeps the pools for which keep returns true, in order.
func (st *CycleState) KeepPools(keep func(pool int32) bool) {
	out := st.Pools[:0]
	for _, p := range st.Pools {
		if keep(p) {
			out = append(out, p)
		}
	}
	st.Pools = out
}
