package capacity

import "gpuplan.dev/gpuplan/sim/cluster"

// fleet is the controller's state per node slot, beside the cluster's
// own: the slot's generation (how often it was launched: it stamps the
// node's events, so those of a node since removed are stale), whether the
// node is empty and when its pods last changed (scale-down and
// consolidation), and whether it is going away under notice, and why.
type fleet struct {
	gen        []uint32 // launches so far
	emptyEpoch []uint32 // bumped when the node empties or fills: stamps EvIdle
	empty      []bool
	lastChange []Time
	noticed    []bool
	cause      []Cause // why a noticed node goes
}

func newFleet(n int) fleet {
	return fleet{
		gen: make([]uint32, n), emptyEpoch: make([]uint32, n), empty: make([]bool, n),
		lastChange: make([]Time, n), noticed: make([]bool, n), cause: make([]Cause, n),
	}
}

// up starts a new generation of slot n, not under notice, and returns its
// stamp.
func (f *fleet) up(n int32) uint32 {
	f.gen[n]++
	f.noticed[n] = false
	return f.gen[n]
}

// launched marks slot n's newly launched node empty (a new empty epoch).
func (f *fleet) launched(n int32) {
	f.empty[n] = true
	f.emptyEpoch[n]++
}

// leave puts node n under notice: it goes, for cause.
func (f *fleet) leave(n int32, cause Cause) {
	f.noticed[n], f.cause[n] = true, cause
}

// podsChanged records that node n's pods changed at now, n now empty or
// not; it reports whether n has just become empty.
func (f *fleet) podsChanged(now Time, n int32, empty bool) bool {
	f.lastChange[n] = now
	if empty == f.empty[n] {
		return false
	}
	f.empty[n] = empty
	f.emptyEpoch[n]++
	return empty
}

// stale reports whether ev is for a node since removed, or for an earlier
// generation of its slot.
func (f *fleet) stale(c *cluster.Cluster, ev Event) bool {
	return c.Nodes[ev.Index].State == cluster.NodeAbsent || f.gen[ev.Index] != ev.Stamp
}

// standing appends pool p's nodes that are launched and not going away,
// in slot order.
func (f *fleet) standing(c *cluster.Cluster, p int32, dst []int32) []int32 {
	pl := &c.Pools[p]
	for n := pl.First; n < pl.First+pl.Count; n++ {
		if c.Nodes[n].State != cluster.NodeAbsent && !f.noticed[n] {
			dst = append(dst, n)
		}
	}
	return dst
}

// holding counts pool p's nodes that are launched and not going away.
func (f *fleet) holding(c *cluster.Cluster, p int32) int32 {
	pl := &c.Pools[p]
	var h int32
	for n := pl.First; n < pl.First+pl.Count; n++ {
		if c.Nodes[n].State != cluster.NodeAbsent && !f.noticed[n] {
			h++
		}
	}
	return h
}
