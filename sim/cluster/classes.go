package cluster

// State classes: the Ready nodes of a pool that the scheduler cannot tell
// apart. Two nodes of one pool are in one class when they have the same
// free CPU and memory, the same free capacity on their GPUs (as a
// multiset: which device is which does not matter), and the same count of
// pods of each GPU request class. A filter or score that depends only on
// the pod and on these gives every node of a class the same answer, so a
// scheduler can look at one node per class (the first in the tie order)
// instead of at every node: a cycle then costs in proportion to the
// classes, which stay few however many nodes there are.
//
// Only pools whose GPUs are whole devices (shares allowed) of at most
// classGPUs GPUs are classed; the nodes of other pools (MIG, time-slicing,
// larger nodes) are each their own candidate.

// classGPUs is the most GPUs a node of a classed pool may have.
const classGPUs = 8

// classKey is what puts a node in a class.
type classKey struct {
	cpu, mem int64
	pool     int32
	n        int32
	classes  [NumClasses]int16
	free     [classGPUs]int16 // free milli-GPU of each GPU (at most 1000), descending
}

// stateClass is one class: its key and its nodes, a min-heap by tie order.
type stateClass struct {
	key   classKey
	heap  []int32
	whole int32 // free whole GPUs of its nodes
	slot  int32 // position in its pool's byClassFree[whole]
}

// classIndex is the cluster's classes; nodes of unclassed pools and nodes
// not Ready have class -1.
type classIndex struct {
	ids     map[classKey]int32
	classes []stateClass
	// Emptied classes stay in ids (a map that forgets and relearns keys
	// on every move would reallocate as it goes) until there are many:
	// then they are forgotten and their ids kept in spare for reuse.
	empty     int
	spare     []int32
	nodeClass []int32
	heapPos   []int32
	// order is the tie order: the class's first node is the one with the
	// least order (nil: the lowest index).
	order []int32
}

func (p *Pool) classed() bool { return p.dev.kind == devPlain && p.DevicesPerNode <= classGPUs }

func (c *Cluster) initClasses() {
	x := &c.cls
	x.ids = map[classKey]int32{}
	x.nodeClass = make([]int32, len(c.Nodes))
	x.heapPos = make([]int32, len(c.Nodes))
	for n := range c.Nodes {
		x.nodeClass[n] = -1
	}
	for i := range c.Pools {
		pl := &c.Pools[i]
		if pl.classed() {
			pl.byClassFree = make([][]int32, len(pl.FreeByWhole))
		}
	}
	for n := range c.Nodes {
		c.reclass(int32(n))
	}
}

func (x *classIndex) before(a, b int32) bool {
	if x.order != nil {
		return x.order[a] < x.order[b]
	}
	return a < b
}

func (c *Cluster) keyOf(n int32) classKey {
	nd := &c.Nodes[n]
	k := classKey{pool: nd.Pool, n: nd.gpuN, cpu: nd.FreeCPU, mem: nd.FreeMem, classes: nd.Classes}
	for i, f32 := range c.devFree[nd.gpuBase : nd.gpuBase+nd.gpuN] {
		// Insertion into the descending prefix k.free[:i].
		f := int16(f32)
		j := i
		for j > 0 && k.free[j-1] < f {
			k.free[j] = k.free[j-1]
			j--
		}
		k.free[j] = f
	}
	return k
}

// reclass files node n in the class of its state now (none when it is
// not Ready or its pool is not classed). Every change to a node's state
// or to its readiness calls it.
func (c *Cluster) reclass(n int32) {
	x := &c.cls
	nd := &c.Nodes[n]
	pl := &c.Pools[nd.Pool]
	if !pl.classed() {
		return
	}
	old := x.nodeClass[n]
	if nd.State != NodeReady {
		if old >= 0 {
			c.leaveClass(n, old)
		}
		return
	}
	k := c.keyOf(n)
	if old >= 0 && x.classes[old].key == k {
		return
	}
	if old >= 0 {
		c.leaveClass(n, old)
	}
	id, ok := x.ids[k]
	if !ok {
		if m := len(x.spare); m > 0 {
			id = x.spare[m-1]
			x.spare = x.spare[:m-1]
		} else {
			id = int32(len(x.classes))
			x.classes = append(x.classes, stateClass{})
		}
		x.ids[k] = id
		cl := &x.classes[id]
		cl.key, cl.heap, cl.whole = k, cl.heap[:0], nd.FreeWhole
	} else if len(x.classes[id].heap) == 0 {
		x.empty--
	}
	cl := &x.classes[id]
	if len(cl.heap) == 0 {
		cl.slot = int32(len(pl.byClassFree[cl.whole]))
		pl.byClassFree[cl.whole] = append(pl.byClassFree[cl.whole], id)
	}
	x.nodeClass[n] = id
	x.heapPos[n] = int32(len(cl.heap))
	cl.heap = append(cl.heap, n)
	x.up(cl, len(cl.heap)-1)
}

func (c *Cluster) leaveClass(n int32, id int32) {
	x := &c.cls
	cl := &x.classes[id]
	i := int(x.heapPos[n])
	last := len(cl.heap) - 1
	if i != last {
		cl.heap[i] = cl.heap[last]
		x.heapPos[cl.heap[i]] = int32(i)
	}
	cl.heap = cl.heap[:last]
	if i != last {
		x.down(cl, i)
		x.up(cl, i)
	}
	x.nodeClass[n] = -1
	if len(cl.heap) > 0 {
		return
	}
	// The class is empty: out of its pool's list.
	pl := &c.Pools[cl.key.pool]
	list := pl.byClassFree[cl.whole]
	moved := list[len(list)-1]
	list[cl.slot] = moved
	x.classes[moved].slot = cl.slot
	pl.byClassFree[cl.whole] = list[:len(list)-1]
	x.empty++
	if x.empty > 4096 && x.empty > 2*(len(x.classes)-len(x.spare)-x.empty) {
		for id := range x.classes {
			if cl := &x.classes[id]; len(cl.heap) == 0 {
				if got, ok := x.ids[cl.key]; ok && got == int32(id) {
					delete(x.ids, cl.key)
					x.spare = append(x.spare, int32(id))
				}
			}
		}
		x.empty = 0
	}
}

func (x *classIndex) up(cl *stateClass, i int) {
	h := cl.heap
	for i > 0 {
		p := (i - 1) / 2
		if !x.before(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		x.heapPos[h[i]], x.heapPos[h[p]] = int32(i), int32(p)
		i = p
	}
}

func (x *classIndex) down(cl *stateClass, i int) {
	h := cl.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && x.before(h[r], h[l]) {
			m = r
		}
		if !x.before(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		x.heapPos[h[i]], x.heapPos[h[m]] = int32(i), int32(m)
		i = m
	}
}

// SetTieOrder makes the first node of each class the one with the least
// order[n] (nil: the lowest index), the order a scheduler breaks ties in.
func (c *Cluster) SetTieOrder(order []int32) {
	x := &c.cls
	x.order = order
	for id := range x.classes {
		cl := &x.classes[id]
		for i := len(cl.heap)/2 - 1; i >= 0; i-- {
			x.down(cl, i)
		}
	}
}

// Classed reports whether the nodes of pool i are grouped in classes.
func (c *Cluster) Classed(i int32) bool { return c.Pools[i].classed() }

// AppendClassFirsts appends to dst, for each class of pool i (a classed
// pool) whose nodes have at least minWhole whole GPUs free, its first node
// in the tie order, and returns it.
func (c *Cluster) AppendClassFirsts(i int32, minWhole int32, dst []int32) []int32 {
	pl := &c.Pools[i]
	x := &c.cls
	for k := max(minWhole, 0); k < int32(len(pl.byClassFree)); k++ {
		for _, id := range pl.byClassFree[k] {
			dst = append(dst, x.classes[id].heap[0])
		}
	}
	return dst
}

// ClassSize is the number of Ready nodes in node n's class (1 for a node
// of an unclassed pool, 0 for a node that is not Ready).
func (c *Cluster) ClassSize(n int32) int {
	if !c.Pools[c.Nodes[n].Pool].classed() {
		if c.Nodes[n].State == NodeReady {
			return 1
		}
		return 0
	}
	id := c.cls.nodeClass[n]
	if id < 0 {
		return 0
	}
	return len(c.cls.classes[id].heap)
}
