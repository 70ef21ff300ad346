// Package fgd is Fragmentation Gradient Descent (Weng et al., "Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
// Gradient Descent", USENIX ATC'23): place a pod where it increases the
// expected GPU fragmentation (models.Fragmentation, for the workload's pod
// mix) the least. The score is 100 x sigmoid(decrease in fragmented GPUs),
// truncated to an integer as the paper's simulator does; a shared pod goes
// to the GPU of the node with the best score (ties: the GPU with the least
// free capacity).
//
// Fragmentation depends only on a node's free CPU, its multiset of free
// GPU capacities and its GPU model, so results are memoised per such
// state and per pod shape: most nodes of a large cluster share a state.
package fgd

import (
	"slices"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "FGD"

const memoLimit = 1 << 20

// stateKey identifies a node state up to the order of its GPUs (nodes of
// up to 8 GPUs; larger ones are not memoised).
type stateKey struct {
	cpu   int64
	model int32 // index into FGD.models
	n     int8
	gpus  [8]int16 // free milli-GPU, sorted descending
}

type entry struct {
	score int64
	free  int32 // free milli of the GPU a share should go to (-1: n/a)
}

// packed is an entry in 32 bits: score<<12 | (free+1); 0 means not computed.
type packed uint32

func pack(e entry) packed     { return packed(uint32(e.score)<<12|uint32(e.free+1)) | 1<<31 }
func (p packed) entry() entry { return entry{score: int64(p>>12) & 0x7ffff, free: int32(p&0xfff) - 1} }

// FGD is a Score and GPUSelect plugin.
type FGD struct {
	h       *scheduler.Handle
	version int

	models  map[string]int32
	stateID map[stateKey]int32
	states  []models.NodeState // by state id (GPUFree owned here)
	frag    []float64          // by state id; NaN until computed
	shapes  map[models.PodShape]int32
	scores  [][]packed // [shape id][state id]

	nodeVer   []uint32 // per node: version the cached state id is for (+1; 0 = none)
	nodeState []int32
	scratch   []int32
}

var (
	_ scheduler.ScorePlugin     = &FGD{}
	_ scheduler.GPUSelectPlugin = &FGD{}
)

// New returns the plugin; it asks the runner to keep the pod mix.
func New(_ scheduler.PluginConfig, h *scheduler.Handle) (scheduler.Plugin, error) {
	h.NeedsMix = true
	f := &FGD{h: h}
	f.reset()
	return f, nil
}

func (*FGD) Name() string { return Name }

// Shape is the fragmentation shape of a pod.
func Shape(p *cluster.PodSpec) models.PodShape {
	s := models.PodShape{MilliCPU: p.MilliCPU}
	switch {
	case p.GPUMilli > 0:
		s.GPUs, s.GPUMilli = 1, p.GPUMilli
	case p.GPUs > 0:
		s.GPUs, s.GPUMilli = p.GPUs, models.MilliGPU
	}
	return s
}

func (f *FGD) reset() {
	f.models = map[string]int32{}
	f.stateID = map[stateKey]int32{}
	f.states = f.states[:0]
	f.frag = f.frag[:0]
	f.shapes = map[models.PodShape]int32{}
	f.scores = f.scores[:0]
	clear(f.nodeVer)
	f.version = f.h.MixVersion
}

func (f *FGD) sync(c *cluster.Cluster) {
	if f.version != f.h.MixVersion || len(f.states) > memoLimit {
		f.reset()
	}
	if len(f.nodeVer) != len(c.Nodes) {
		f.nodeVer = make([]uint32, len(c.Nodes))
		f.nodeState = make([]int32, len(c.Nodes))
	}
}

// intern returns the id of a node state (-1 for nodes of more than 8 GPUs).
func (f *FGD) intern(s models.NodeState) int32 {
	if len(s.GPUFree) > 8 {
		return -1
	}
	m, ok := f.models[s.Model]
	if !ok {
		m = int32(len(f.models))
		f.models[s.Model] = m
	}
	k := stateKey{cpu: s.MilliCPU, model: m, n: int8(len(s.GPUFree))}
	for i, g := range s.GPUFree {
		k.gpus[i] = int16(g)
	}
	g := k.gpus[:k.n]
	slices.SortFunc(g, func(a, b int16) int { return int(b) - int(a) })
	if id, ok := f.stateID[k]; ok {
		return id
	}
	id := int32(len(f.states))
	f.stateID[k] = id
	own := models.NodeState{MilliCPU: s.MilliCPU, Model: s.Model, GPUFree: make([]int32, k.n)}
	for i := range own.GPUFree {
		own.GPUFree[i] = int32(g[i])
	}
	f.states = append(f.states, own)
	f.frag = append(f.frag, -1)
	return id
}

func (f *FGD) fragOf(s models.NodeState) float64 {
	id := f.intern(s)
	if id < 0 {
		return models.Fragmentation(s, f.h.Mix)
	}
	if f.frag[id] < 0 {
		f.frag[id] = models.Fragmentation(f.states[id], f.h.Mix)
	}
	return f.frag[id]
}

func score(before, after float64) int64 {
	return int64(models.Sigmoid((before-after)/models.MilliGPU) * float64(scheduler.MaxNodeScore))
}

// evaluate scores pod shape sh on node state s.
func (f *FGD) evaluate(s models.NodeState, sh models.PodShape) entry {
	before := f.fragOf(s)
	after := models.NodeState{MilliCPU: s.MilliCPU - sh.MilliCPU, Model: s.Model}
	f.scratch = append(f.scratch[:0], s.GPUFree...)
	after.GPUFree = f.scratch
	if sh.GPUs == 1 && sh.GPUMilli < models.MilliGPU {
		best := entry{score: -1, free: -1}
		for i, g := range s.GPUFree {
			if g < sh.GPUMilli {
				continue
			}
			after.GPUFree[i] -= sh.GPUMilli
			// Ties go to the GPU with the least free (states list GPUs
			// by decreasing free capacity), as a best fit would.
			if sc := score(before, f.fragOf(after)); sc >= best.score {
				best.score, best.free = sc, g
			}
			after.GPUFree[i] += sh.GPUMilli
		}
		if best.score < 0 {
			best.score = 0
		}
		return best
	}
	need := sh.GPUs
	for i := range after.GPUFree {
		if need == 0 {
			break
		}
		if after.GPUFree[i] == models.MilliGPU {
			after.GPUFree[i] = 0
			need--
		}
	}
	return entry{score: score(before, f.fragOf(after)), free: -1}
}

func (f *FGD) shapeID(sh models.PodShape) int32 {
	id, ok := f.shapes[sh]
	if !ok {
		id = int32(len(f.shapes))
		f.shapes[sh] = id
		f.scores = append(f.scores, nil)
	}
	return id
}

func (f *FGD) lookup(c *cluster.Cluster, n int32, sh models.PodShape, shape int32) entry {
	nd := &c.Nodes[n]
	if f.nodeVer[n] != nd.Version+1 {
		f.nodeState[n] = f.intern(c.FragState(n))
		f.nodeVer[n] = nd.Version + 1
	}
	st := f.nodeState[n]
	if st < 0 {
		return f.evaluate(c.FragState(n), sh)
	}
	row := f.scores[shape]
	if int(st) >= len(row) {
		row = append(row, make([]packed, int(st)+1-len(row)+len(row)/2)...)
		f.scores[shape] = row
	}
	if p := row[st]; p != 0 {
		return p.entry()
	}
	e := f.evaluate(f.states[st], sh)
	row[st] = pack(e)
	return e
}

func (f *FGD) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	f.sync(st.Cluster)
	sh := Shape(pod)
	id := f.shapeID(sh)
	for i, n := range nodes {
		out[i] = f.lookup(st.Cluster, n, sh, id).score
	}
}

// SelectGPU puts a share on the GPU that fragments the node least.
func (f *FGD) SelectGPU(st *scheduler.CycleState, pod *cluster.PodSpec, node int32) int {
	f.sync(st.Cluster)
	sh := Shape(pod)
	e := f.lookup(st.Cluster, node, sh, f.shapeID(sh))
	for i, g := range st.Cluster.GPUFree(node) {
		if g == e.free {
			return i
		}
	}
	return -1
}
